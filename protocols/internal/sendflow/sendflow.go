// Package sendflow is the producer flow control of a protocol connection
// whose protocol has no window of its own (STOMP, MQTT): past Limit sends
// the engine has not completed, the connection stops being read, and it is
// read again once half of them are done. Engine-side flow control (a full
// destination) then holds completions back, and the client's TCP window
// fills: the producer blocks, as ActiveMQ's would.
package sendflow

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// Conn is what the gate pauses: a transport.Conn.
type Conn interface {
	PauseReading()
	ResumeReading()
}

// Gate counts one connection's outstanding sends. Started and Done are
// safe from any goroutine.
type Gate struct {
	Limit int64 // outstanding sends that stop reading
	Conn  Conn
	Log   *slog.Logger

	outstanding atomic.Int64
	paused      atomic.Bool
	mu          sync.Mutex // orders pause and resume
}

// Started counts a send handed to the engine.
func (g *Gate) Started() {
	if g.outstanding.Add(1) >= g.Limit {
		g.check()
	}
}

// Done counts a send the engine completed (or refused).
func (g *Gate) Done() {
	if n := g.outstanding.Add(-1); n <= g.Limit/2 && g.paused.Load() {
		g.check()
	}
}

// Paused reports whether reading is stopped: a paused connection reads
// nothing, so inactivity checks must not hold that against it.
func (g *Gate) Paused() bool { return g.paused.Load() }

func (g *Gate) check() {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := g.outstanding.Load()
	switch {
	case !g.paused.Load() && n >= g.Limit:
		g.paused.Store(true)
		if g.Log != nil {
			g.Log.Debug("producer blocked by flow control: reading paused", "outstanding", n)
		}
		g.Conn.PauseReading()
	case g.paused.Load() && n <= g.Limit/2:
		g.paused.Store(false)
		g.Conn.ResumeReading()
	}
}
