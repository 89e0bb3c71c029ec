package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"wharf/protocols/transport/internal/streamconn"
)

// tlsConn is one connection of a TLS listener. It implements TLSConn.
//
// The queue, the writer, the close sequence, pausing and the Handler calls
// are streamconn.Conn's, shared with the WebSocket transport (its doc
// says which goroutine does what and the lock order); tlsConn is its
// Socket: it reads and writes through crypto/tls, writes the queue's
// bytes as they are, and ends our direction with close_notify and a FIN.
type tlsConn struct {
	streamconn.Conn
	l  *tlsListener
	nc net.Conn  // the TCP socket; closing it ends every blocked call
	tc *tls.Conn // over nc
	// state is the completed handshake's state, set by the reader before
	// the factory runs, immutable afterwards.
	state tls.ConnectionState
}

func newTLSConn(l *tlsListener, nc net.Conn) *tlsConn {
	c := &tlsConn{l: l, nc: nc, tc: tls.Server(nc, l.cfg)}
	c.Init(NextConnID(), &l.conn, c, nc, "transport", "tls")
	return c
}

// ConnectionState implements TLSConn: the state of the completed
// handshake (the factory is only called after it). Safe from any
// goroutine.
func (c *tlsConn) ConnectionState() tls.ConnectionState { return c.state }

// Write implements Conn. Safe from any goroutine.
func (c *tlsConn) Write(b []byte) error { return c.write(b, nil) }

// WriteNotify implements Conn: done runs on the writer goroutine, never
// alongside another Handler call, in write order, once tls.Conn.Write has
// handed every byte of b (encrypted) to the kernel, or with the close
// error when the connection ended first. Safe from any goroutine.
func (c *tlsConn) WriteNotify(b []byte, done func(error)) error { return c.write(b, done) }

func (c *tlsConn) write(b []byte, done func(error)) error {
	return c.Queue(len(b), done, func(q []byte) []byte { return append(q, b...) })
}

// Close implements Conn: what is queued is written, then a TLS
// close_notify alert and a FIN; the socket is closed when the peer closes
// its side (at most 5 s later), input being read and dropped meanwhile so
// that the close is not a reset. OnClose follows with nil, or
// ErrDrainTimeout when the queue could not be written within 30 s. Safe
// from any goroutine; returns at once; later calls do nothing.
func (c *tlsConn) Close() error {
	c.Shutdown()
	return nil
}

// PauseReading implements Conn: the reader stops delivering and stops
// reading the socket, so the peer's sends back up in TCP. A record already
// read (at most 16 KiB of plaintext) is held; crypto/tls may hold the
// start of the next one. A peer's close or reset is seen only after
// ResumeReading (or when a write fails). A closing connection reads
// whatever was asked. Safe from any goroutine; idempotent.
func (c *tlsConn) PauseReading() { c.Pause() }

// serve is the reader goroutine: it completes the handshake, builds the
// session, reads until the connection ends, then finishes it.
func (c *tlsConn) serve() {
	err := c.handshake()
	c.l.gate.HandshakeDone()
	if err != nil {
		if cut := c.Abandon(); !cut { // else the listener closed it
			c.l.gate.HandshakeFailed(c.nc, err)
		}
		c.l.remove(c)
		return
	}
	c.state = c.tc.ConnectionState()
	c.Serve(c.newHandler)
}

// newHandler runs the listener's HandlerFactory.
func (c *tlsConn) newHandler() streamconn.Handler {
	if h := c.l.factory(c); h != nil {
		return h
	}
	return nil
}

// handshake runs the server handshake within the listener's timeout. The
// deadline is set on the TCP socket, under crypto/tls, so no goroutine
// waits on a context meanwhile.
func (c *tlsConn) handshake() error {
	if err := c.nc.SetDeadline(time.Now().Add(c.l.hsTimeout)); err != nil {
		return err
	}
	if err := c.tc.Handshake(); err != nil {
		return err
	}
	return c.nc.SetDeadline(time.Time{})
}

// Read implements streamconn.Socket: one TLS record's plaintext at most;
// io.EOF is the peer's orderly close (close_notify, or a FIN between
// records).
func (c *tlsConn) Read(p []byte) (int, error) { return c.tc.Read(p) }

// Consume implements streamconn.Socket: decrypted bytes go to the session
// as they are, once reading is not paused.
func (c *tlsConn) Consume(p []byte) {
	if c.WaitReadable() {
		c.Deliver(p)
	}
}

// WriteBatch implements streamconn.Socket.
func (c *tlsConn) WriteBatch(b []byte) (int, error) { return c.tc.Write(b) }

// CloseFrame implements streamconn.Socket: TLS ends our direction with
// SendClose, not with bytes of the queue.
func (c *tlsConn) CloseFrame(error) []byte { return nil }

// SendClose implements streamconn.Socket: a close_notify alert (RFC 8446
// §6.1; crypto/tls bounds its write by 5 s), then a TCP FIN, so that a
// peer reading to the end sees every byte and then an orderly end.
func (c *tlsConn) SendClose() {
	_ = c.tc.CloseWrite() // an error shows in the reader, or does not matter: the socket closes anyway
	if tcp, ok := c.nc.(*net.TCPConn); ok {
		_ = tcp.CloseWrite()
	}
}

// WriteFailed implements streamconn.Socket.
func (c *tlsConn) WriteFailed(err error) error {
	return fmt.Errorf("transport: write to %s: %w", c.RemoteAddr(), err)
}

// ReadEnded implements streamconn.Socket: the peer's close (or our
// closing the socket) is orderly.
func (c *tlsConn) ReadEnded(rerr error) error {
	if rerr == nil || errors.Is(rerr, io.EOF) {
		return nil
	}
	return fmt.Errorf("transport: read from %s: %w", c.RemoteAddr(), rerr)
}

// Gone implements streamconn.Socket.
func (c *tlsConn) Gone() { c.l.remove(c) }
