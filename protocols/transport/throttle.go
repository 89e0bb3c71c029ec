package transport

import (
	"sync"
	"time"
)

// throttle lets one log line through per interval and counts the ones it
// held back, so a flood (a connection storm against MaxConnections) costs one
// line per interval, not one per event.
//
// The mutex is the exception STYLE §3 allows: the call sites are on every
// event loop of a listener, are rare (only when something is refused), and
// hold it for a few instructions.
type throttle struct {
	every time.Duration

	mu         sync.Mutex
	last       time.Time // when a line was last let through
	suppressed int       // lines held back since then
}

// allow reports whether the caller may log now and, if so, how many calls
// were suppressed since the previous line. Safe from any goroutine.
func (t *throttle) allow(now time.Time) (ok bool, suppressed int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.last.IsZero() && now.Sub(t.last) < t.every {
		t.suppressed++
		return false, 0
	}
	t.last = now
	suppressed, t.suppressed = t.suppressed, 0
	return true, suppressed
}
