// Package timers holds the timers of one connection: armed from any
// goroutine (the connection's own, or a timer re-arming itself), and all
// stopped at once when the connection closes.
package timers

import (
	"sync"
	"time"
)

// Set is the timers of one connection. The zero value is ready to use.
// Safe from any goroutine.
type Set struct {
	mu      sync.Mutex
	stopped bool
	live    map[*time.Timer]struct{}
}

// After runs fn on its own goroutine after d, unless Stop comes first. A
// timer that fired leaves the set, so a periodic check that re-arms itself
// holds one timer, not one per period.
func (s *Set) After(d time.Duration, fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if s.live == nil {
		s.live = map[*time.Timer]struct{}{}
	}
	var t *time.Timer
	// The callback takes mu before it reads t, so it sees the assignment
	// below even when d is so short that it fires at once.
	t = time.AfterFunc(d, func() {
		s.mu.Lock()
		_, armed := s.live[t]
		delete(s.live, t)
		s.mu.Unlock()
		if armed {
			fn()
		}
	})
	s.live[t] = struct{}{}
}

// Stop cancels every timer that has not fired and refuses new ones.
func (s *Set) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for t := range s.live {
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
