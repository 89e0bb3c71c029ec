package wheel

import (
	"sync"
	"testing"
	"time"
)

// newManual is a wheel whose clock only Advance moves.
func newManual(tick time.Duration) *Wheel {
	return &Wheel{tick: tick, manual: true}
}

// counter is a Target counting its fires and the ticks they came at.
type counter struct {
	mu  sync.Mutex
	at  []int64
	off func(now int64) // called from Fire, when set
}

func (c *counter) Fire(now int64) {
	c.mu.Lock()
	c.at = append(c.at, now)
	c.mu.Unlock()
	if c.off != nil {
		c.off(now)
	}
}

func (c *counter) fires() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.at...)
}

func TestWheelFiresBetweenDAndDPlusOneTick(t *testing.T) {
	w := newManual(100 * time.Millisecond)
	var tm Timer
	var c counter
	w.After(&tm, 300*time.Millisecond, &c) // 3 ticks, plus the one under way
	w.advance(3)
	if got := c.fires(); len(got) != 0 {
		t.Fatalf("fired at ticks %v, before 300ms had surely passed", got)
	}
	w.advance(1)
	if got := c.fires(); len(got) != 1 || got[0] != 4 {
		t.Fatalf("fires %v, want one at tick 4", got)
	}
	if w.Armed() != 0 {
		t.Fatalf("%d armed after the only timer fired, want 0", w.Armed())
	}
	w.advance(2 * slots)
	if got := c.fires(); len(got) != 1 {
		t.Fatalf("fires %v after a fired timer's slot came round again, want just the one", got)
	}
}

func TestWheelCancelAndStop(t *testing.T) {
	w := newManual(time.Second)
	var a, b Timer
	var ca, cb counter
	w.After(&a, 2*time.Second, &ca)
	w.After(&b, 2*time.Second, &cb)
	w.Cancel(&a)
	w.Stop(&b)
	if w.Armed() != 0 {
		t.Fatalf("%d armed after cancel and stop, want 0", w.Armed())
	}
	w.advance(10)
	if len(ca.fires())+len(cb.fires()) != 0 {
		t.Fatalf("cancelled fired %v, stopped fired %v; want neither", ca.fires(), cb.fires())
	}
	// A cancelled timer may be armed again; a stopped one may not.
	w.After(&a, time.Second, &ca)
	w.After(&b, time.Second, &cb)
	if w.Armed() != 1 {
		t.Fatalf("%d armed, want 1 (the cancelled timer re-armed, the stopped one refused)", w.Armed())
	}
	w.advance(2)
	if len(ca.fires()) != 1 || len(cb.fires()) != 0 {
		t.Fatalf("re-armed fired %d times, stopped %d; want 1 and 0", len(ca.fires()), len(cb.fires()))
	}
}

func TestWheelRearmReplacesTheDeadline(t *testing.T) {
	w := newManual(time.Second)
	var tm Timer
	var c counter
	w.After(&tm, time.Second, &c)
	w.After(&tm, 5*time.Second, &c)
	if w.Armed() != 1 {
		t.Fatalf("%d armed after re-arming one timer, want 1", w.Armed())
	}
	w.advance(5)
	if len(c.fires()) != 0 {
		t.Fatalf("fired at %v: the first deadline should be gone", c.fires())
	}
	w.advance(1)
	if got := c.fires(); len(got) != 1 || got[0] != 6 {
		t.Fatalf("fires %v, want one at tick 6", got)
	}
}

// A target re-arming itself from Fire (a keep-alive that saw a read) keeps
// one timer armed, firing once a period.
func TestWheelFireMayRearm(t *testing.T) {
	w := newManual(time.Second)
	var tm Timer
	var c counter
	c.off = func(now int64) {
		if now < 30 {
			w.At(&tm, now+10, &c)
		}
	}
	w.At(&tm, 10, &c)
	w.advance(100)
	if got := c.fires(); len(got) != 3 || got[0] != 10 || got[1] != 20 || got[2] != 30 {
		t.Fatalf("fires %v, want 10 20 30", got)
	}
	if w.Armed() != 0 {
		t.Fatalf("%d armed, want 0", w.Armed())
	}
}

// Many timers spread over several turns of the wheel each fire exactly
// once, at their own tick, including when the wheel catches up on more
// than a turn at once.
func TestWheelManyTimers(t *testing.T) {
	const n = 10000
	w := newManual(time.Millisecond)
	timers := make([]Timer, n)
	cs := make([]counter, n)
	for i := range n {
		w.At(&timers[i], int64(1+i%(3*slots)), &cs[i])
	}
	if w.Armed() != n {
		t.Fatalf("%d armed, want %d", w.Armed(), n)
	}
	for range 2 * slots { // tick by tick
		w.advance(1)
	}
	for i := range n {
		want := int64(1 + i%(3*slots))
		got := cs[i].fires()
		if want <= 2*slots && (len(got) != 1 || got[0] != want) {
			t.Fatalf("timer %d: fires %v, want one at %d", i, got, want)
		}
		if want > 2*slots && len(got) != 0 {
			t.Fatalf("timer %d: fired at %v, before its tick %d", i, got, want)
		}
	}
	w.advance(5 * slots) // more than a turn: one pass at the target
	for i := range n {
		if got := cs[i].fires(); len(got) != 1 {
			t.Fatalf("timer %d: fired %d times, want 1", i, len(got))
		}
	}
	if w.Armed() != 0 {
		t.Fatalf("%d armed after all fired, want 0", w.Armed())
	}
}

// Cancelled timers leave nothing in the wheel: no slot keeps a link to
// them (nor, so, to their targets).
func TestWheelNoLeakAfterCancel(t *testing.T) {
	const n = 5000
	w := newManual(time.Millisecond)
	timers := make([]Timer, n)
	var c counter
	for i := range n {
		w.After(&timers[i], time.Duration(i)*time.Millisecond, &c)
	}
	for i := range n {
		if i%2 == 0 {
			w.Cancel(&timers[i])
		} else {
			w.Stop(&timers[i])
		}
	}
	if w.Armed() != 0 {
		t.Fatalf("%d armed after cancelling every timer, want 0", w.Armed())
	}
	for i, head := range w.slot {
		if head != nil {
			t.Fatalf("slot %d still links a timer after every one was cancelled", i)
		}
	}
	for i := range timers {
		if timers[i].next != nil || timers[i].prev != nil {
			t.Fatalf("timer %d still links to another", i)
		}
	}
	w.advance(2 * n)
	if len(c.fires()) != 0 {
		t.Fatalf("%d cancelled timers fired", len(c.fires()))
	}
}

// On the real clock: a timer fires no sooner than its duration, and the
// wheel's goroutine stops once nothing is armed.
func TestWheelRealClock(t *testing.T) {
	w := New(10 * time.Millisecond)
	var tm Timer
	fired := make(chan time.Time, 1)
	start := time.Now()
	w.After(&tm, 50*time.Millisecond, targetFunc(func(int64) { fired <- time.Now() }))
	select {
	case at := <-fired:
		if d := at.Sub(start); d < 50*time.Millisecond {
			t.Fatalf("fired after %v, before 50ms", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not fire within 5s")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		running := w.running
		w.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the wheel's goroutine still runs 5s after its last timer fired")
		}
		time.Sleep(time.Millisecond) // polling the goroutine's exit, not waiting for an effect
	}
	// Armed again after the pause, it fires on time, not at once for the
	// ticks that went by while it slept.
	start = time.Now()
	w.After(&tm, 50*time.Millisecond, targetFunc(func(int64) { fired <- time.Now() }))
	select {
	case at := <-fired:
		if d := at.Sub(start); d < 50*time.Millisecond {
			t.Fatalf("re-armed after a pause, fired after %v, before 50ms", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("re-armed timer did not fire within 5s")
	}
}

type targetFunc func(int64)

func (f targetFunc) Fire(now int64) { f(now) }
