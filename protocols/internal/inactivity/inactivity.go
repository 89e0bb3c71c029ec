// Package inactivity is the part of a protocol connection that judges it
// alive, as ActiveMQ's InactivityMonitor does for every transport: a read
// check that cuts a peer which sent nothing for a whole period, a writer
// that sends a heart-beat when nothing else went out for a period, and a
// deadline for the handshake. STOMP heart-beats, MQTT keep-alive and the
// AMQP idle-time-out differ only in their periods and in what the expiry
// writes, so those are the arguments; the bookkeeping (what was read or
// written since the last tick, re-arming, stopping everything once the
// connection is gone) is here once. (OpenWire still has its own: its
// negotiation deadline asks whether anything was read at all, which the
// read check's flag does not say once the check runs.)
package inactivity

import (
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"wharf/protocols/internal/timers"
)

// Monitor is the liveness state of one connection. The zero value is
// ready to use. Safe from any goroutine; the functions it is given run on
// timer goroutines.
type Monitor struct {
	timers    timers.Set
	closed    atomic.Bool
	connected atomic.Bool // the handshake is done (SetConnected)
	// deadline is ConnectDeadline's timer, cancelled by SetConnected so
	// that an idle connection holds no timer it will never need.
	deadline atomic.Pointer[timers.Timer]
	readSeen atomic.Bool // data read since the last read check
	wrote    atomic.Bool // data written since the last heart-beat tick
}

// Read records that the connection read something (call it from OnData).
func (m *Monitor) Read() { m.readSeen.Store(true) }

// Wrote records that something was written to the peer, which a heart-beat
// would only repeat.
func (m *Monitor) Wrote() { m.wrote.Store(true) }

// Close stops every check and timer for good (call it from OnClose).
func (m *Monitor) Close() {
	m.closed.Store(true)
	m.timers.Stop()
}

// Closed reports whether Close was called: the connection is gone, and
// late completions and deliveries write nothing.
func (m *Monitor) Closed() bool { return m.closed.Load() }

// After runs fn after d unless the connection closes first: the handshake
// deadline, whose fn checks whether the handshake is done, and any other
// timer of the connection.
func (m *Monitor) After(d time.Duration, fn func()) {
	m.timers.After(d, func() {
		if !m.closed.Load() {
			fn()
		}
	})
}

// ConnectDeadline closes c after d unless SetConnected came first, so that
// a client that opens a socket and never completes its handshake does not
// hold it for ever (ActiveMQ's transport.connectAttemptTimeout). expired,
// when not nil, is called just before the close (the engine's count of
// handshake timeouts).
func (m *Monitor) ConnectDeadline(d time.Duration, c io.Closer, log *slog.Logger, expired func()) {
	t := m.timers.After(d, func() {
		if !m.closed.Load() && !m.connected.Load() {
			log.Debug("connect timeout", "timeout", d)
			if expired != nil {
				expired()
			}
			c.Close()
		}
	})
	m.deadline.Store(&t)
	if m.connected.Load() {
		m.cancelDeadline() // SetConnected came first
	}
}

// SetConnected records that the handshake is done, and cancels the
// connect deadline.
func (m *Monitor) SetConnected() {
	m.connected.Store(true)
	m.cancelDeadline()
}

func (m *Monitor) cancelDeadline() {
	if t := m.deadline.Swap(nil); t != nil {
		m.timers.Cancel(*t)
	}
}

// Connected reports whether SetConnected was called.
func (m *Monitor) Connected() bool { return m.connected.Load() }

// ReadCheck calls expire, once, when a whole period passes with nothing
// read; what arrived before the call does not count. paused (nil for
// never) reports whether the connection has stopped reading itself (flow
// control): then the peer cannot be judged by what it sent, and the check
// waits for the next period. expire writes what the protocol says on
// expiry and closes the connection.
func (m *Monitor) ReadCheck(period time.Duration, paused func() bool, expire func()) {
	m.readSeen.Store(false)
	var check func()
	check = func() {
		if !m.readSeen.Swap(false) && (paused == nil || !paused()) {
			expire()
			return
		}
		m.After(period, check)
	}
	m.After(period, check)
}

// Heartbeat calls beat at the end of every period in which nothing was
// written (Wrote), until the connection closes.
func (m *Monitor) Heartbeat(period time.Duration, beat func()) {
	var tick func()
	tick = func() {
		if !m.wrote.Swap(false) {
			beat()
		}
		m.After(period, tick)
	}
	m.After(period, tick)
}
