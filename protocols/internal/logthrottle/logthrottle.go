// Package logthrottle rate-limits log lines per call site (STYLE.md §7):
// a flood of refused connections or logins costs one line per interval,
// with the count of the lines held back, not one line per event.
package logthrottle

import (
	"sync"
	"time"
)

// Throttle lets one log line through per Every and counts the ones it held
// back. The zero value with Every set is ready to use.
//
// The mutex is the exception STYLE §3 allows: the call sites run on many
// goroutines (every event loop of a listener, every session), are rare
// (only when something is refused), and hold it for a few instructions.
type Throttle struct {
	// Every is the least time between two lines let through.
	Every time.Duration

	mu         sync.Mutex
	last       time.Time // when a line was last let through
	suppressed int       // lines held back since then
}

// Allow reports whether the caller may log now and, if so, how many calls
// were held back since the previous line. Safe from any goroutine.
func (t *Throttle) Allow(now time.Time) (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < t.Every {
		t.suppressed++
		return false, 0
	}
	t.last = now
	suppressed, t.suppressed = t.suppressed, 0
	return true, suppressed
}

// Burst lets up to Max log lines through per Every and counts the ones it
// held back: unlike Throttle, a few distinct failures in a row are each
// logged. The mutex is taken only when something failed.
type Burst struct {
	// Every is the interval, Max the lines let through in each.
	Every time.Duration
	Max   int

	mu         sync.Mutex
	start      time.Time // the current interval's start
	n          int       // lines let through in this interval
	suppressed int       // lines held back since the last one let through
}

// Allow reports whether the caller may log now and, if so, how many calls
// were held back since the previous line. Safe from any goroutine.
func (t *Burst) Allow(now time.Time) (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.start.IsZero() || now.Sub(t.start) >= t.Every {
		t.start, t.n = now, 0
	}
	if t.n >= t.Max {
		t.suppressed++
		return false, 0
	}
	t.n++
	suppressed, t.suppressed = t.suppressed, 0
	return true, suppressed
}
