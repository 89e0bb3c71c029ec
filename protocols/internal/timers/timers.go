// Package timers holds the timers of one connection: armed from any
// goroutine (the connection's own, or a timer re-arming itself), and all
// stopped at once when the connection closes.
package timers

import (
	"slices"
	"sync"
	"time"
)

// Set is the timers of one connection. The zero value is ready to use.
// Safe from any goroutine.
//
// The armed timers are a slice, not a map: a connection has a handful at
// most (a handshake deadline, a read check, a heart-beat), and an idle
// connection's memory is what it holds for ever (issue 18's budget is a
// few KiB per connection; a one-entry map alone is ~200 bytes).
type Set struct {
	mu      sync.Mutex
	stopped bool
	live    []*time.Timer
}

// Timer is an armed timer of a Set, for Cancel.
type Timer struct{ t *time.Timer }

// After runs fn on its own goroutine after d, unless Stop or Cancel comes
// first. A timer that fired leaves the set, so a periodic check that
// re-arms itself holds one timer, not one per period.
func (s *Set) After(d time.Duration, fn func()) Timer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return Timer{}
	}
	var t *time.Timer
	// The callback takes mu before it reads t, so it sees the assignment
	// below even when d is so short that it fires at once.
	t = time.AfterFunc(d, func() {
		s.mu.Lock()
		armed := s.removeLocked(t)
		s.mu.Unlock()
		if armed {
			fn()
		}
	})
	s.live = append(s.live, t)
	return Timer{t}
}

// Cancel stops t unless it already fired, and forgets it.
func (s *Set) Cancel(t Timer) {
	if t.t == nil {
		return
	}
	s.mu.Lock()
	armed := s.removeLocked(t.t)
	s.mu.Unlock()
	if armed {
		t.t.Stop()
	}
}

// removeLocked takes t out of the set, reporting whether it was there
// (armed, neither fired, cancelled nor stopped). s.mu is held.
func (s *Set) removeLocked(t *time.Timer) bool {
	i := slices.Index(s.live, t)
	if i < 0 {
		return false
	}
	last := len(s.live) - 1
	s.live[i] = s.live[last]
	s.live[last] = nil
	s.live = s.live[:last]
	return true
}

// Stop cancels every timer that has not fired and refuses new ones.
func (s *Set) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for _, t := range s.live {
		t.Stop()
	}
	s.live = nil
}

// Len is the number of armed timers.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}
