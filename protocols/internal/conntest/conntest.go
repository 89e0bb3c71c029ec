// Package conntest is a transport.Conn without a socket, for driving a
// protocol session from tests and fuzz targets: writes are kept, pauses and
// closes are counted.
package conntest

import (
	"net"
	"sync"
)

// Conn records what a session does to its connection. Safe from any
// goroutine.
type Conn struct {
	mu     sync.Mutex
	out    []byte
	closed bool
	paused int
}

var addr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

// Write keeps b.
func (c *Conn) Write(b []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out = append(c.out, b...)
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
