// Package wheel is a coarse timer shared by many connections: a hashed
// timing wheel driven by one goroutine that ticks only while a timer is
// armed. It replaces a runtime timer and its closure per connection (about
// 300 bytes for every idle connection, issue 18) by a Timer a connection
// embeds in its own struct (40 bytes, no allocation) and a counter it
// stamps when it reads.
//
// Precision is one tick: a timer armed for d fires after at least d and at
// most d plus one tick (plus however late the goroutine is scheduled). That
// suits deadlines measured in seconds (MQTT keep-alive, handshake
// deadlines), not sub-tick ones.
//
// Ownership: a Wheel's slots and every armed Timer's links are guarded by
// the Wheel's mutex. Fire runs on the wheel's goroutine with no lock held,
// so it may re-arm its own timer; it must not block (it would delay every
// other timer of the wheel): anything slow goes to its own goroutine.
package wheel

import (
	"sync"
	"sync/atomic"
	"time"
)

// slots is the number of buckets; a timer further away than slots ticks
// stays in its bucket and is passed over until its round comes.
const slots = 512

// Target is what a Timer calls when it expires.
type Target interface {
	// Fire runs on the wheel's goroutine with now, the tick being
	// processed; it must not block.
	Fire(now int64)
}

// Timer is one timer of a Wheel, embedded by its owner (the zero value is
// disarmed). Its fields are the wheel's: use only the Wheel's methods.
type Timer struct {
	next, prev *Timer
	// at is the tick the timer fires at while it is armed (linked into a
	// slot; always above 0), 0 while disarmed, and stopped after Stop.
	at     int64
	target Target
}

// stopped is Timer.at after Stop: never armed again.
const stopped = -1

func (t *Timer) armed() bool { return t.at > 0 }

// Wheel is a set of Timers sharing one ticking goroutine. Safe from any
// goroutine.
type Wheel struct {
	tick   time.Duration
	start  time.Time // when tick 0 was
	manual bool      // tests move the clock themselves (Advance)
	// manualNow is the clock of a manual wheel (ticks).
	manualNow atomic.Int64

	mu      sync.Mutex
	done    int64 // the last tick processed
	slot    [slots]*Timer
	armedN  int  // armed timers
	running bool // the goroutine is ticking
}

// New returns a wheel ticking every tick (at least a millisecond).
func New(tick time.Duration) *Wheel {
	tick = max(tick, time.Millisecond)
	return &Wheel{tick: tick, start: time.Now()}
}

// Tick is the wheel's resolution.
func (w *Wheel) Tick() time.Duration { return w.tick }

// Now is the current tick, counted from the wheel's creation: stamp it
// when something happens that a timer will look at later (Ticks says how
// far a tick count is in time). Safe from any goroutine; it reads the
// monotonic clock and stores nothing.
func (w *Wheel) Now() int64 {
	if w.manual {
		return w.manualNow.Load()
	}
	return int64(time.Since(w.start) / w.tick)
}

// Ticks is the number of ticks that makes sure a period d has passed since
// a stamp of Now: a deadline of stamp+Ticks(d) fires between d and d plus
// one tick after the stamped event (the event happened somewhere within
// its tick).
func (w *Wheel) Ticks(d time.Duration) int64 {
	n := int64((d + w.tick - 1) / w.tick)
	return n + 1
}

// After arms t to call f after d (between d and d plus one tick), replacing
// any earlier arming. A stopped timer stays stopped.
func (w *Wheel) After(t *Timer, d time.Duration, f Target) {
	w.At(t, w.Now()+w.Ticks(d), f)
}

// At arms t to call f at tick at (at once, on the next tick, when at has
// passed), replacing any earlier arming. A stopped timer stays stopped.
func (w *Wheel) At(t *Timer, at int64, f Target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.at == stopped {
		return
	}
	if t.armed() {
		w.unlinkLocked(t)
	}
	// A tick already processed cannot fire: the next one does (and tick
	// 0 is never processed, so an armed timer's at is above 0).
	if at <= w.done {
		at = w.done + 1
	}
	t.at, t.target = at, f
	head := &w.slot[at%slots]
	t.prev, t.next = nil, *head
	if *head != nil {
		(*head).prev = t
	}
	*head = t
	w.armedN++
	if !w.running && !w.manual {
		w.running = true
		go w.run()
	}
}

// Cancel disarms t if it is armed; it may be armed again.
func (w *Wheel) Cancel(t *Timer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.armed() {
		w.unlinkLocked(t)
		t.at = 0
	}
}

// Stop disarms t for good: later arming is ignored, so that a Fire racing
// with its owner's close cannot re-arm it. The wheel then holds no
// reference to t or its target.
func (w *Wheel) Stop(t *Timer) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.armed() {
		w.unlinkLocked(t)
	}
	t.at, t.target = stopped, nil
}

// Armed is the number of armed timers.
func (w *Wheel) Armed() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armedN
}

func (w *Wheel) unlinkLocked(t *Timer) {
	if t.prev != nil {
		t.prev.next = t.next
	} else {
		w.slot[t.at%slots] = t.next
	}
	if t.next != nil {
		t.next.prev = t.prev
	}
	t.next, t.prev = nil, nil
	w.armedN--
}

// run ticks while timers are armed, catching up on ticks it was late for.
// It wakes at each tick's boundary, so that a tick is processed when it
// begins, not up to a tick later.
func (w *Wheel) run() {
	tm := time.NewTimer(w.untilNextTick())
	defer tm.Stop()
	for range tm.C {
		w.mu.Lock()
		if w.armedN == 0 {
			// Nothing to tick for: stop until a timer is armed (At
			// starts a new goroutine, which catches up).
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		w.advanceTo(w.Now())
		tm.Reset(w.untilNextTick())
	}
}

// untilNextTick is the time to the next tick's boundary.
func (w *Wheel) untilNextTick() time.Duration {
	since := time.Since(w.start)
	return w.tick - since%w.tick
}

// Advance moves the clock of a manual wheel (newManual, for tests) n ticks
// on and processes them.
func (w *Wheel) advance(n int64) { w.advanceTo(w.manualNow.Add(n)) }

// advanceTo processes the ticks up to target, firing what expired.
func (w *Wheel) advanceTo(target int64) {
	for {
		w.mu.Lock()
		now := w.done
		if now >= target {
			w.mu.Unlock()
			return
		}
		// Past a whole turn every slot is due once: process them all at
		// target rather than tick by tick.
		next := now + 1
		if target-now > slots {
			next = target
		}
		var due *Timer
		first, last := next, next
		if next == target && target-now > slots {
			first, last = target-slots+1, target
		}
		for m := first; m <= last; m++ {
			for t := w.slot[m%slots]; t != nil; {
				nt := t.next
				if t.at <= next {
					w.unlinkLocked(t)
					t.at = 0
					t.next = due
					due = t
				}
				t = nt
			}
		}
		w.done = next
		// Fire with the lock released, so that targets can re-arm; a
		// timer Stopped meanwhile lost its target and is skipped.
		var fire []firing
		for t := due; t != nil; {
			nt := t.next
			t.next = nil
			if t.target != nil {
				fire = append(fire, firing{t.target, next})
			}
			t = nt
		}
		w.mu.Unlock()
		for _, f := range fire {
			f.target.Fire(f.now)
		}
	}
}

type firing struct {
	target Target
	now    int64
}
