package inactivity

import (
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not happen", what)
	}
}

// A period in which input was read is not judged; a paused connection is
// not cut; a period with neither expires the connection, once.
func TestReadCheck(t *testing.T) {
	const period = 20 * time.Millisecond
	var m Monitor
	var asked []time.Time // when the check asked whether reading was paused
	var expired atomic.Int32
	cut := make(chan struct{})
	m.ReadCheck(period, func() bool {
		asked = append(asked, time.Now())
		switch len(asked) {
		case 1:
			m.Read() // input arrives during the next period
			return true
		case 2:
			return true // paused: not judged
		}
		return false
	}, func() {
		expired.Add(1)
		close(cut)
	})
	await(t, cut, "the expiry")
	if len(asked) != 3 {
		t.Fatalf("asked %d times before the expiry, want 3", len(asked))
	}
	// Timers never fire early: the period with input was skipped only if
	// the second question came two periods after the first.
	if d := asked[1].Sub(asked[0]); d < 2*period {
		t.Fatalf("asked again %v after input was read, want a skipped period (>= %v)", d, 2*period)
	}
	if n := expired.Load(); n != 1 {
		t.Fatalf("expired %d times", n)
	}
	if n := m.timers.Len(); n != 0 {
		t.Fatalf("%d timers armed after the expiry, want none", n)
	}
}

// A heart-beat goes out each period with nothing written, and none once
// the monitor is closed.
func TestHeartbeatStopsOnClose(t *testing.T) {
	var m Monitor
	beats := make(chan struct{}, 100)
	m.Heartbeat(time.Millisecond, func() { beats <- struct{}{} })
	for i := 0; i < 3; i++ {
		await(t, beats, "a heart-beat")
	}
	m.Close()
	if n := m.timers.Len(); n != 0 {
		t.Fatalf("%d timers armed after Close, want none", n)
	}
	m.After(0, func() { beats <- struct{}{} })
	if n := m.timers.Len(); n != 0 {
		t.Fatalf("After armed a timer on a closed monitor")
	}
	if !m.Closed() {
		t.Fatal("Closed false after Close")
	}
}

// A heart-beat is not sent for a period in which something was written.
func TestHeartbeatSkipsAfterWrite(t *testing.T) {
	var m Monitor
	m.Wrote()
	beat := make(chan time.Time, 1)
	start := time.Now()
	m.Heartbeat(50*time.Millisecond, func() {
		select {
		case beat <- time.Now():
		default:
		}
	})
	defer m.Close()
	var at time.Time
	select {
	case at = <-beat:
	case <-time.After(5 * time.Second):
		t.Fatal("no heart-beat")
	}
	// The first tick found a write and skipped; the beat is the second.
	if d := at.Sub(start); d < 100*time.Millisecond {
		t.Fatalf("first heart-beat after %v, want the second period (>= 100ms): the write did not count", d)
	}
}

// closer records Close calls.
type closer struct{ n atomic.Int32 }

func (c *closer) Close() error { c.n.Add(1); return nil }

// The connect deadline closes a connection that did not complete its
// handshake, and leaves one that did.
func TestConnectDeadline(t *testing.T) {
	for _, connected := range []bool{false, true} {
		var m Monitor
		var c closer
		if connected {
			m.SetConnected()
		}
		var expired atomic.Int32
		m.ConnectDeadline(time.Millisecond, &c, slog.New(slog.DiscardHandler), func() { expired.Add(1) })
		// A later timer of the same monitor: the deadline has run when it
		// fires, 49 ms after.
		later := make(chan struct{})
		m.After(50*time.Millisecond, func() { close(later) })
		await(t, later, "the later timer")
		if got, want := expired.Load(), map[bool]int32{false: 1, true: 0}[connected]; got != want {
			t.Errorf("connected %v: expired called %d times, want %d", connected, got, want)
		}
		if got, want := c.n.Load(), map[bool]int32{false: 1, true: 0}[connected]; got != want {
			t.Fatalf("connected %v: closed %d times, want %d", connected, got, want)
		}
		if m.Connected() != connected {
			t.Fatalf("Connected() %v, want %v", m.Connected(), connected)
		}
	}
}

type closeCounter struct {
	n      atomic.Int32
	closed chan struct{} // when not nil, closed by the first Close
}

func (c *closeCounter) Close() error {
	if c.n.Add(1) == 1 && c.closed != nil {
		close(c.closed)
	}
	return nil
}

// The connect deadline is cancelled by SetConnected, whether it came
// before or after the deadline was armed: an idle connection holds no
// timer it will never need. One never connected is closed at its deadline.
func TestConnectDeadlineCancelledByConnect(t *testing.T) {
	var m Monitor
	var c closeCounter
	m.ConnectDeadline(time.Hour, &c, slog.Default(), nil)
	if n := m.timers.Len(); n != 1 {
		t.Fatalf("%d timers armed by ConnectDeadline, want 1", n)
	}
	m.SetConnected()
	if n := m.timers.Len(); n != 0 {
		t.Fatalf("%d timers armed after SetConnected, want 0", n)
	}

	var early Monitor
	early.SetConnected()
	early.ConnectDeadline(time.Hour, &c, slog.Default(), nil)
	if n := early.timers.Len(); n != 0 {
		t.Fatalf("%d timers armed by a deadline set after SetConnected, want 0", n)
	}

	var late Monitor
	lc := closeCounter{closed: make(chan struct{})}
	var expired atomic.Int32
	late.ConnectDeadline(time.Millisecond, &lc, slog.Default(), func() { expired.Add(1) })
	await(t, lc.closed, "the close at the connect deadline")
	if n := expired.Load(); n != 1 {
		t.Fatalf("expired called %d times, want 1", n)
	}
	if n := lc.n.Load(); n != 1 {
		t.Fatalf("a connection never connected was closed %d times at its deadline, want 1", n)
	}
	if n := c.n.Load(); n != 0 {
		t.Fatalf("connected connections were closed %d times, want 0", n)
	}
}
