package conformance

import (
	"strings"
	"testing"
	"time"
)

// Helpers for the STOMP tests that need broker internals and so stay here
// (restart, spill, LSM); the black-box STOMP cases moved to wharf/conform,
// which has its own copies of these helpers.

// header returns a header's value, "" when absent.
func header(f *rawFrame, name string) string {
	v, _ := f.Get(name)
	return v
}

// expectHeader checks a header's value.
func expectHeader(t *testing.T, f *rawFrame, name, want string) {
	t.Helper()
	if got, ok := f.Get(name); !ok || got != want {
		t.Fatalf("%s header: got %q (present %v), want %q in %s", name, got, ok, want, f)
	}
}

// advisoryTopic is the STOMP name of an advisory topic: kind is e.g.
// "Consumer.Queue", "Expired.Queue", "MessageDLQd.Queue"; dest the bare
// destination name ("" for topics without one, such as Connection).
func advisoryTopic(kind, dest string) string {
	if dest == "" {
		return "/topic/ActiveMQ.Advisory." + kind
	}
	return "/topic/ActiveMQ.Advisory." + kind + "." + dest
}

// expectAdvisory reads frames from c until an advisory MESSAGE whose body
// contains every string of want; others are skipped (an advisory topic may
// carry the state of the whole broker, and an external broker is shared
// with earlier tests).
func expectAdvisory(t *testing.T, c *rawConn, want ...string) *rawFrame {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("no advisory with %q within %v", want, wait)
		}
		var f *rawFrame
		if len(c.pending) > 0 {
			f, c.pending = c.pending[0], c.pending[1:]
		} else {
			var err error
			if f, err = c.readWithin(left); err != nil {
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
