// Package conntest is a transport.Conn without a socket, for driving a
// protocol session from tests and fuzz targets: writes are kept, pauses and
// closes are counted, and a test can wait for the next write or close
// instead of sleeping.
package conntest

import (
	"net"
	"sync"
	"time"
)

// Conn records what a session does to its connection. Safe from any
// goroutine.
type Conn struct {
	mu     sync.Mutex
	out    []byte
	closed bool
	paused int
	// changed is signalled (without blocking) on every write and close,
	// for Await.
	changed chan struct{}
}

var addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

// Write keeps b.
func (c *Conn) Write(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out = append(c.out, b...)
	c.signal()
	return nil
}

// WriteNotify keeps b and reports it written.
func (c *Conn) WriteNotify(b []byte, done func(error)) error {
	c.Write(b)
	if done != nil {
		done(nil)
	}
	return nil
}

// Close records the close.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.signal()
	return nil
}

// PauseReading counts a pause; ResumeReading a resume.
func (c *Conn) PauseReading()  { c.mu.Lock(); c.paused++; c.mu.Unlock() }
func (c *Conn) ResumeReading() { c.mu.Lock(); c.paused--; c.mu.Unlock() }

// RemoteAddr and LocalAddr are 127.0.0.1:1.
func (c *Conn) RemoteAddr() net.Addr { return addr }
func (c *Conn) LocalAddr() net.Addr  { return addr }

// ID is 1.
func (c *Conn) ID() uint64 { return 1 }

// Closed reports whether the session closed the connection.
func (c *Conn) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Written returns a copy of everything written so far.
func (c *Conn) Written() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]byte(nil), c.out...)
}

// Await waits until cond holds of what was written so far and of whether
// the connection was closed, checking it again after every write and close,
// and reports whether it held within d. The session writes from shard and
// timer goroutines too, so a test awaits the frame it expects rather than
// reading once.
func (c *Conn) Await(d time.Duration, cond func(out []byte, closed bool) bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		ok := cond(c.out, c.closed)
		ch := c.changedLocked()
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// Since waits up to d for bytes written after the first n and returns a
// copy of them, or nil when none came in time.
func (c *Conn) Since(n int, d time.Duration) []byte {
	var out []byte
	c.Await(d, func(b []byte, _ bool) bool {
		if len(b) > n {
			out = append([]byte(nil), b[n:]...)
		}
		return out != nil
	})
	return out
}

// signal wakes an Await; called with mu held.
func (c *Conn) signal() {
	select {
	case c.changedLocked() <- struct{}{}:
	default:
	}
}

func (c *Conn) changedLocked() chan struct{} {
	if c.changed == nil {
		c.changed = make(chan struct{}, 1)
	}
	return c.changed
}
