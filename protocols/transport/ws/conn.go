package ws

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"
	"unicode/utf8"

	"wharf/protocols/transport"
	"wharf/protocols/transport/internal/streamconn"
	"wharf/protocols/transport/ws/wire"
)

const (
	// readBufBytes is each connection's read buffer, in bytes: one socket
	// read, and what a paused connection holds at most.
	readBufBytes = 16 << 10
	// drainTimeout bounds how long a closing connection may take to write
	// what was queued and its close frame, as for TCP connections
	// (transport: 30 s); then it is cut with transport.ErrDrainTimeout.
	drainTimeout = 30 * time.Second
	// closeWaitTimeout bounds the wait for the peer's close frame once ours
	// is sent; then the socket is closed anyway (the bytes were delivered,
	// so the cause stays what it was). Jetty and most clients use 5 s.
	closeWaitTimeout = 5 * time.Second
)

// streamErrors are package transport's sentinels, for the shared
// connection machinery.
var streamErrors = streamconn.Errors{
	Closed:       transport.ErrClosed,
	OutboundFull: transport.ErrOutboundFull,
	HandlerPanic: transport.ErrHandlerPanic,
	DrainTimeout: transport.ErrDrainTimeout,
}

// conn is one WebSocket connection. It implements transport.Conn.
//
// The queue, the writer, the close sequence, pausing and the Handler calls
// are streamconn.Conn's, shared with transport.ListenTLS (its doc says
// which goroutine does what and the lock order); the reader is the
// http.Server goroutine that upgraded the connection. conn is its Socket:
// each write becomes a frame, the reader decodes frames and answers
// control frames, and our direction ends with a close frame [RFC 6455
// §7.1.2], after which the socket closes when the peer's close frame
// arrives.
type conn struct {
	streamconn.Conn
	s      *Server
	nc     net.Conn
	br     *bufio.Reader // the hijacked reader: it may hold bytes sent after the handshake
	proto  string        // the subprotocol served
	dataOp wire.Opcode   // the frame type of writes
	// tlsState is the completed TLS handshake of a wss connection, nil
	// for ws; immutable.
	tlsState *tls.ConnectionState

	// reader only
	dec     *wire.Decoder
	discard bool // input is dropped: after a close frame or a decoding error

	closeRcvd bool // the peer's close frame was read; guarded by the Conn's lock
}

func newConn(s *Server, nc net.Conn, br *bufio.Reader, proto string) *conn {
	var st *tls.ConnectionState
	if tc, ok := nc.(*tls.Conn); ok {
		// http.Server completed the handshake before reading the request.
		cs := tc.ConnectionState()
		st = &cs
	}
	c := &conn{
		tlsState: st,
		s:        s,
		nc:       nc,
		br:       br,
		proto:    proto,
		dataOp:   s.types[proto],
		dec:      wire.NewDecoder(s.limits),
	}
	c.Init(transport.NextConnID(), &s.conn, c, nc, "proto", proto)
	return c
}

// Write implements transport.Conn: b becomes one message of the
// subprotocol's type. Safe from any goroutine.
func (c *conn) Write(b []byte) error { return c.write(b, nil) }

// WriteNotify implements transport.Conn: done runs, on the writer
// goroutine and never alongside another Handler call, once the socket
// write holding b's frame has returned, or with the close error when the
// connection ended first. Safe from any goroutine.
func (c *conn) WriteNotify(b []byte, done func(error)) error { return c.write(b, done) }

func (c *conn) write(b []byte, done func(error)) error {
	op := c.dataOp
	if op == wire.OpText && !utf8.Valid(b) {
		// DEVIATION: ActiveMQ turns a STOMP frame into a Java String to send
		// it as text, replacing bytes that are not UTF-8 (a binary body);
		// a text frame with them would make the client fail the connection
		// (1007, RFC 6455 §8.1). Wharf sends such a write as a binary
		// message, bytes intact; stomp.js reads binary frames too.
		op = wire.OpBinary
	}
	return c.Queue(wire.HeaderLen(len(b), false)+len(b), done,
		func(q []byte) []byte { return wire.AppendFrame(q, op, b) })
}

// Close implements transport.Conn: what is queued is written, then a close
// frame (1000), and the socket is closed when the peer's close frame
// arrives (at most 5 s later). OnClose follows with nil, or
// transport.ErrDrainTimeout when the queue could not be written within
// 30 s. Safe from any goroutine; returns at once.
func (c *conn) Close() error {
	c.Shutdown()
	return nil
}

// PauseReading implements transport.Conn: the reader stops delivering and
// stops reading the socket, so the peer's sends back up in TCP. What the
// last read brought beyond the current OnData (at most 16 KiB) is held.
// Pings are not answered meanwhile. A peer's close or reset is seen only
// after ResumeReading (or when a write fails). A closing connection reads
// whatever was asked. Safe from any goroutine; idempotent.
func (c *conn) PauseReading() { c.Pause() }

// run serves the connection on the calling goroutine, the reader, until
// it ends: builds the session, reads, then finishes.
func (c *conn) run(f transport.HandlerFactory) {
	c.Serve(func() streamconn.Handler {
		if h := f(c.public()); h != nil {
			return h
		}
		return nil
	})
}

// Read implements streamconn.Socket.
func (c *conn) Read(p []byte) (int, error) { return c.br.Read(p) }

// WriteBatch implements streamconn.Socket: the queue holds encoded frames.
func (c *conn) WriteBatch(b []byte) (int, error) { return c.nc.Write(b) }

// CloseFrame implements streamconn.Socket: 1000 for Close; for an OnData
// error, once the session has queued its protocol's error frame, 1008, the
// generic "violates its policy" code [RFC 6455 §7.4.1].
func (c *conn) CloseFrame(cause error) []byte {
	code := wire.CloseNormal
	if cause != nil {
		code = wire.ClosePolicyViolation
	}
	return wire.AppendClose(nil, code, "")
}

// SendClose implements streamconn.Socket: never called, the close frame
// ends our direction.
func (c *conn) SendClose() {}

// WriteFailed implements streamconn.Socket: a peer that sent its close
// frame may close TCP before reading our answer: its close stands.
func (c *conn) WriteFailed(err error) error {
	if c.closeRcvd {
		return nil
	}
	return fmt.Errorf("%w: write: %w", ErrAbnormalClosure, err)
}

// ReadEnded implements streamconn.Socket: the socket ended without a
// close handshake.
func (c *conn) ReadEnded(rerr error) error {
	if rerr == nil {
		rerr = errors.New("reader stopped")
	}
	return fmt.Errorf("%w: %w", ErrAbnormalClosure, rerr)
}

// Gone implements streamconn.Socket.
func (c *conn) Gone() { c.s.remove(c) }

// Consume implements streamconn.Socket: it decodes b and acts on each
// event.
func (c *conn) Consume(b []byte) {
	for len(b) > 0 && !c.discard {
		n, ev, ok, err := c.dec.Next(b)
		b = b[n:]
		if err != nil {
			c.fail(err)
			return
		}
		if !ok {
			continue
		}
		switch ev.Opcode {
		case wire.OpText, wire.OpBinary:
			// Text or binary, the bytes go to the session as a stream in
			// order, whatever the subprotocol's write type: stomp.js sends
			// text, some clients binary. Message boundaries mean nothing to
			// STOMP or MQTT, whose decoders find their own frames.
			if len(ev.Payload) == 0 {
				continue
			}
			if !c.WaitReadable() {
				return
			}
			c.Deliver(ev.Payload)
		case wire.OpPing:
			c.pong(ev.Payload)
		case wire.OpPong:
			// Unsolicited or not, a pong needs no answer [RFC 6455 §5.5.3].
		case wire.OpClose:
			c.peerClosed(ev.Payload)
			// Nothing may follow a close frame [RFC 6455 §5.5.1].
			c.discard = true
		}
	}
}

// pong answers a ping with its payload [RFC 6455 §5.5.2], after what is
// queued; nothing once the connection is closing. Pongs count against the
// outbound cap: a client that pings and never reads is cut like any other.
func (c *conn) pong(payload []byte) {
	_ = c.Queue(wire.HeaderLen(len(payload), false)+len(payload), nil,
		func(q []byte) []byte { return wire.AppendFrame(q, wire.OpPong, payload) })
}

// peerClosed handles the peer's close frame: the close handshake ends
// when our close frame has been sent too [RFC 6455 §5.5.1].
func (c *conn) peerClosed(payload []byte) {
	code, reason, _ := wire.ParseClose(payload) // checked by the decoder
	c.Lock()
	defer c.Unlock()
	c.closeRcvd = true
	// Handshake complete once ours is sent: the server closes the TCP
	// connection first [RFC 6455 §7.1.1].
	c.CloseOnSentLocked()
	if !c.EndedLocked() {
		var cause error
		switch code {
		case wire.CloseNormal, wire.CloseGoingAway, wire.CloseNoStatus:
		default:
			cause = &CloseError{Code: code, Reason: reason}
		}
		c.EndLocked(cause)
	}
	switch {
	case c.ClosedLocked():
	case !c.CloseQueuedLocked():
		// Answer with the code received ("typically echoing the status
		// code it received"), after what is queued.
		c.BeginCloseLocked(nil, wire.AppendClose(nil, code, ""))
	case c.CloseSentLocked():
		c.CloseSocketLocked() // we closed first and this is the answer
	}
	// Otherwise our close frame is queued: the writer closes the socket
	// once it is sent.
}

// fail fails the connection for a framing error [RFC 6455 §7.1.7]: a close
// frame with the error's code, then the socket is closed without waiting
// for an answer. Input is dropped from now on.
func (c *conn) fail(err error) {
	c.discard = true
	c.Lock()
	defer c.Unlock()
	c.EndLocked(fmt.Errorf("ws: read from %s: %w", c.RemoteAddr(), err))
	if c.ClosedLocked() {
		return
	}
	c.CloseOnSentLocked()
	if c.CloseSentLocked() {
		c.CloseSocketLocked()
		return
	}
	if !c.CloseQueuedLocked() {
		c.BeginCloseLocked(nil, wire.AppendClose(nil, wire.CloseCodeFor(err), err.Error()))
	}
}

// tlsConn is a wss connection as its session sees it: a conn that also
// implements transport.TLSConn. A ws connection is handed to the factory
// as the bare conn, so transport.PeerCertificates tells the two apart.
type tlsConn struct{ *conn }

// ConnectionState implements transport.TLSConn: the completed handshake's
// state. Safe from any goroutine.
func (c tlsConn) ConnectionState() tls.ConnectionState { return *c.tlsState }

// public is the value the HandlerFactory gets: a transport.TLSConn for a
// wss connection.
func (c *conn) public() transport.Conn {
	if c.tlsState != nil {
		return tlsConn{c}
	}
	return c
}
