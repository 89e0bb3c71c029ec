package conform

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// T is what a case runs with: the target's addresses and credentials, a
// unique name prefix, a clean-up registry and an observation recorder. Its
// failure methods behave as testing.T's do: Fatalf and Skipf end the case's
// goroutine (runtime.Goexit), Errorf marks it failed and carries on. A T is
// safe for use from several goroutines, but, as with testing.T, Fatalf and
// Skipf must be called from the goroutine that runs the case (or subtest).
type T struct {
	name   string
	run    *runState
	parent *T
	ctx    context.Context

	mu       sync.Mutex
	failed   bool
	skipped  bool
	reasons  []string
	cleanups []func()
	seq      int64
}

// runState is shared by a case's T and its subtests.
type runState struct {
	target *Target
	mu     sync.Mutex
	obs    []Observation
	devs   []string
	// deviation is the case's Deviation text.
	deviation string
}

// maxObservations caps what one case records; maxObservationBytes caps one
// entry. A report stays readable and bounded whatever the broker sends.
const (
	maxObservations     = 200
	maxObservationBytes = 600
)

// An Observation is something the case saw or did: a frame, a header, an
// error text, a log line.
type Observation struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

var (
	nextSeq atomic.Int64
	uniqRe  = regexp.MustCompile(`conf_[0-9a-f]+_[0-9]+_`)
)

// Name is the case's name, with the subtests' names after it.
func (t *T) Name() string { return t.name }

// Helper is accepted for symmetry with testing.T; it does nothing.
func (t *T) Helper() {}

// Context is cancelled when the case exceeds its time bound.
func (t *T) Context() context.Context { return t.ctx }

// Addr is the host:port of an endpoint (STOMP, OpenWire, ...), "" when the
// target has none.
func (t *T) Addr(endpoint string) string { return t.run.target.Endpoints[endpoint] }

// STOMPHost is the host header to send in STOMP CONNECT frames.
func (t *T) STOMPHost() string { return t.run.target.stompHost() }

// User and Password are the credentials given for the target.
func (t *T) User() string     { return t.run.target.User }
func (t *T) Password() string { return t.run.target.Password }

// Wharf reports whether the target identified itself as Wharf (the STOMP
// CONNECTED server header). Cases with a documented deviation use it to
// choose which of the two behaviours to expect; any other broker is held
// to ActiveMQ's.
func (t *T) Wharf() bool { return strings.HasPrefix(t.run.target.Server, "Wharf/") }

// Restart runs the target's restart command (sh -c) and waits until
// every endpoint of the target accepts connections again, within the
// case's time bound. Only cases with Restart set call it.
func (t *T) Restart() {
	tg := t.run.target
	switch {
	case tg.Restarter != nil:
		t.Observe("restart", "in process")
		if err := tg.Restarter(t.ctx); err != nil {
			t.Fatalf("restart: %v", err)
		}
	case tg.RestartCmd != "":
		t.Observe("restart", "%s", tg.RestartCmd)
		out, err := exec.CommandContext(t.ctx, "sh", "-c", tg.RestartCmd).CombinedOutput()
		if err != nil {
			t.Fatalf("restart command %q: %v\n%s", tg.RestartCmd, err, out)
		}
	default:
		t.Fatalf("no restart command (--restart-cmd)")
	}
	for ep, addr := range t.run.target.Endpoints {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-t.ctx.Done():
				t.Fatalf("after the restart, %s %s does not accept connections: %v", ep, addr, err)
			case <-time.After(100 * time.Millisecond): // poll interval
			}
		}
	}
}

// Deviation records that the broker showed Wharf's documented deviation
// from ActiveMQ rather than ActiveMQ's behaviour.
func (t *T) Deviation(text string) {
	t.run.mu.Lock()
	defer t.run.mu.Unlock()
	t.run.devs = append(t.run.devs, text)
}

// ActiveMQBehaviour reports whether to expect ActiveMQ's behaviour where
// the case's Deviation says that Wharf differs: true for every broker but
// Wharf. Against Wharf it returns false and records the deviation as seen.
func (t *T) ActiveMQBehaviour() bool {
	if !t.Wharf() {
		return true
	}
	t.run.mu.Lock()
	defer t.run.mu.Unlock()
	if len(t.run.devs) == 0 {
		t.run.devs = append(t.run.devs, t.run.deviation)
	}
	return false
}

// Observe records an observation.
func (t *T) Observe(kind, format string, args ...any) {
	// Destination names carry the run prefix and a sequence number,
	// which differ between two brokers' runs of one case.
	text := uniqRe.ReplaceAllString(fmt.Sprintf(format, args...), "conf_…_")
	if len(text) > maxObservationBytes {
		text = text[:maxObservationBytes] + "…"
	}
	t.run.mu.Lock()
	defer t.run.mu.Unlock()
	if len(t.run.obs) < maxObservations {
		t.run.obs = append(t.run.obs, Observation{Kind: kind, Text: text})
	}
}

// Logf records a log observation.
func (t *T) Logf(format string, args ...any) { t.Observe("log", format, args...) }

// Log records a log observation.
func (t *T) Log(args ...any) { t.Observe("log", "%s", fmt.Sprintln(args...)) }

// Errorf marks the case failed and carries on.
func (t *T) Errorf(format string, args ...any) { t.fail(fmt.Sprintf(format, args...)) }

// Error marks the case failed and carries on.
func (t *T) Error(args ...any) { t.fail(strings.TrimSuffix(fmt.Sprintln(args...), "\n")) }

// Fatalf marks the case failed and ends it.
func (t *T) Fatalf(format string, args ...any) {
	t.fail(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

// Fatal marks the case failed and ends it.
func (t *T) Fatal(args ...any) {
	t.fail(strings.TrimSuffix(fmt.Sprintln(args...), "\n"))
	runtime.Goexit()
}

// FailNow ends a case that is already marked failed.
func (t *T) FailNow() {
	t.fail("")
	runtime.Goexit()
}

// Skipf ends the case as skipped, with a reason.
func (t *T) Skipf(format string, args ...any) {
	t.mu.Lock()
	t.skipped = true
	t.reasons = append(t.reasons, fmt.Sprintf(format, args...))
	t.mu.Unlock()
	runtime.Goexit()
}

// Failed reports whether the case (or one of its subtests) failed.
func (t *T) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *T) fail(msg string) {
	t.Observe("fail", "%s", msg)
	for x := t; x != nil; x = x.parent {
		x.mu.Lock()
		x.failed = true
		if msg != "" {
			r := msg
			if x != t {
				r = strings.TrimPrefix(t.name, x.name+"/") + ": " + msg
			}
			x.reasons = append(x.reasons, r)
		}
		x.mu.Unlock()
	}
}

// Cleanup registers f to run when the case (or subtest) ends, after those
// registered later.
func (t *T) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

// runCleanups runs the registered functions, last first. Each runs once,
// even when the runner's time bound and the case's own end race; a panic
// in one is recorded, not propagated.
func (t *T) runCleanups() {
	for {
		t.mu.Lock()
		n := len(t.cleanups)
		if n == 0 {
			t.mu.Unlock()
			return
		}
		f := t.cleanups[n-1]
		t.cleanups = t.cleanups[:n-1]
		t.mu.Unlock()
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Observe("cleanup", "panic: %v", r)
				}
			}()
			f()
		}()
	}
}

// Run runs f as a subtest called name and waits for it; it reports
// whether the subtest passed (or was skipped).
func (t *T) Run(name string, f func(t *T)) bool {
	sub := &T{name: t.name + "/" + name, run: t.run, parent: t, ctx: t.ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer sub.runCleanups()
		defer sub.recoverPanic()
		f(sub)
	}()
	select {
	case <-done:
	case <-t.ctx.Done():
		// The case's bound passed: release the subtest's connections so
		// that it ends, and give up on it.
		sub.runCleanups()
		t.Fatalf("%s: %v", name, t.ctx.Err())
	}
	if s, reasons := sub.skipState(); s {
		t.Observe("skip", "%s: %s", name, strings.Join(reasons, "; "))
	}
	return !sub.Failed()
}

func (t *T) recoverPanic() {
	if r := recover(); r != nil {
		buf := make([]byte, 4096)
		buf = buf[:runtime.Stack(buf, false)]
		t.fail(fmt.Sprintf("panic: %v\n%s", r, buf))
	}
}

func (t *T) skipState() (bool, []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.skipped, append([]string(nil), t.reasons...)
}

// Uniq is a destination base name unique to this case (or subtest) and
// run, without the characters that are wildcards or separators in
// ActiveMQ names.
func (t *T) Uniq() string {
	t.mu.Lock()
	if t.seq == 0 {
		t.seq = nextSeq.Add(1)
	}
	seq := t.seq
	t.mu.Unlock()
	r := strings.NewReplacer("/", "_", ".", "_", " ", "_", "*", "_", ">", "_", ",", "_", ":", "_", "-", "_", "#", "_", "+", "_")
	return "conf_" + t.run.target.Prefix + "_" + strconv.FormatInt(seq, 10) + "_" + r.Replace(t.name)
}
