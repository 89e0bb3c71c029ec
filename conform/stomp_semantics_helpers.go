package conform

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Helpers for the stomp_semantics_* tests (issue 3: policies, flow control,
// ordering and routing, advisories, slow consumers). They run against the
// broker configured by activemq/activemq.xml on both sides; the policy
// entries there key on the suffix of a destination's name (".prio",
// ".small", ".slow", ".idlq", ".watched", ".lonely", ".composite").

// tagged is a frame and the name of the connection it came from.
type tagged struct {
	from string
	f    *RawFrame
}

// inbox merges the frames of several connections, read by one goroutine
// each, so a test can wait for messages that may go to any of them (queue
// dispatch among competing consumers is the broker's choice). A connection
// handed to an inbox must not be read any other way afterwards; writing to
// it stays fine.
type inbox struct {
	t  *T
	ch chan tagged
}

func newInbox(t *T) *inbox {
	// Large enough that a reader never blocks on a test that stopped
	// reading: the tests here see a few hundred frames at most.
	return &inbox{t: t, ch: make(chan tagged, 4096)}
}

// watch starts reading c's frames (those it already holds first) into the
// inbox under name, until the connection closes.
func (in *inbox) watch(c *RawConn, name string) {
	pending := c.Pending
	c.Pending = nil
	go func() {
		for _, f := range pending {
			in.ch <- tagged{name, f}
		}
		for {
			// The connection is closed by the test's cleanup, which ends
			// this read.
			f, err := c.ReadWithin(time.Hour)
			if err != nil {
				return
			}
			in.ch <- tagged{name, f}
		}
	}()
}

// next returns the next frame from any watched connection, failing after
// wait.
func (in *inbox) Next() tagged {
	in.t.Helper()
	select {
	case m := <-in.ch:
		return m
	case <-time.After(wait):
		in.t.Fatalf("no frame within %v", wait)
	}
	return tagged{}
}

// messages returns the next n frames, which must be MESSAGEs.
func (in *inbox) messages(n int) []tagged {
	in.t.Helper()
	out := make([]tagged, 0, n)
	for len(out) < n {
		m := in.Next()
		if m.f.Command != "MESSAGE" {
			in.t.Fatalf("%s: got %s, want a MESSAGE (%d of %d so far)", m.from, m.f, len(out), n)
		}
		out = append(out, m)
	}
	return out
}

// name is the bare destination name of queue(t, suffix) / topic(t, suffix).
func name(t *T, suffix string) string { return t.Uniq() + suffix }

// Header returns a Header's value, "" when absent.
func Header(f *RawFrame, name string) string {
	v, _ := f.Get(name)
	return v
}

// ExpectHeader checks a header's value.
func ExpectHeader(t TB, f *RawFrame, name, want string) {
	t.Helper()
	if got, ok := f.Get(name); !ok || got != want {
		t.Fatalf("%s header: got %q (present %v), want %q in %s", name, got, ok, want, f)
	}
}

// expectNoHeader checks that a header is absent.
func expectNoHeader(t *T, f *RawFrame, name string) {
	t.Helper()
	if got, ok := f.Get(name); ok {
		t.Fatalf("%s header: got %q, want none in %s", name, got, f)
	}
}

// bodyNumber is n for a body "m<n>".
func bodyNumber(t *T, f *RawFrame) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(string(f.Body), "m"))
	if err != nil {
		t.Fatalf("body %q is not m<n>", f.Body)
	}
	return n
}

// AdvisoryTopic is the STOMP name of an advisory topic: kind is e.g.
// "Consumer.Queue", "Expired.Queue", "MessageDLQd.Queue"; dest the bare
// destination name ("" for topics without one, such as Connection).
func AdvisoryTopic(kind, dest string) string {
	if dest == "" {
		return "/topic/ActiveMQ.Advisory." + kind
	}
	return "/topic/ActiveMQ.Advisory." + kind + "." + dest
}

// ExpectAdvisory reads frames from c until an advisory MESSAGE whose body
// contains every string of want; others are skipped (an advisory topic may
// carry the state of the whole broker, and an external broker is shared
// with earlier tests).
func ExpectAdvisory(t TB, c *RawConn, want ...string) *RawFrame {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no advisory with %q within %v", want, wait)
		}
		var f *RawFrame
		if len(c.Pending) > 0 {
			f, c.Pending = c.Pending[0], c.Pending[1:]
		} else {
			var err error
			if f, err = c.ReadWithin(left); err != nil {
				t.Fatalf("waiting for an advisory with %q: %v", want, err)
			}
		}
		if f.Command != "MESSAGE" {
			t.Fatalf("got %s, want an advisory MESSAGE", f)
		}
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(string(f.Body), w)
		}
		if ok {
			t.Logf("advisory: %s", f)
			return f
		}
	}
}

// connectionIDRe finds the connection id in a ConnectionInfo or RemoveInfo
// advisory body. ActiveMQ nests it ("connectionId":{"value":"ID:…"}),
// Wharf writes it flat ("connectionId":"…").
var connectionIDRe = regexp.MustCompile(`"(?:connectionId|objectId)":\s*(?:\{[^}]*?"value":\s*)?"([^"]+)"`)
