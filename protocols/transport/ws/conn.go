package ws

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"runtime/debug"
	"sync"
	"time"
	"unicode/utf8"

	"wharf/protocols/transport"
	"wharf/protocols/transport/ws/wire"
)

const (
	// readBufBytes is each connection's read buffer, in bytes: one socket
	// read, and what a paused connection holds at most.
	readBufBytes = 16 << 10
	// maxSpareBytes is the largest written batch buffer kept for reuse, in
	// bytes; a burst's buffer is left to the GC.
	maxSpareBytes = 1 << 20
	// drainTimeout bounds how long a closing connection may take to write
	// what was queued and its close frame, as for TCP connections
	// (transport: 30 s); then it is cut with transport.ErrDrainTimeout.
	drainTimeout = 30 * time.Second
	// closeWaitTimeout bounds the wait for the peer's close frame once ours
	// is sent; then the socket is closed anyway (the bytes were delivered,
	// so the cause stays what it was). Jetty and most clients use 5 s.
	closeWaitTimeout = 5 * time.Second
)

// waiter is a WriteNotify callback; end is the offset just past its
// frame in the queue it was appended to.
type waiter struct {
	end  int
	done func(error)
}

// conn is one WebSocket connection. It implements transport.Conn.
//
// Goroutines: the reader (the http.Server goroutine that upgraded the
// connection) runs the HandlerFactory, OnData and OnClose, decodes frames
// and answers control frames; a writer goroutine, started when the queue
// becomes non-empty and gone when it is empty, writes the queue and runs
// WriteNotify callbacks. cb makes Handler methods and callbacks mutually
// exclusive, so a session sees them one at a time as on a TCP event loop.
//
// Lock order: cb before mu (OnData and callbacks call Write). mu is held
// only to append, swap or flip flags, and to close the socket (a
// non-blocking call); never across a socket write or a Handler call.
type conn struct {
	id     uint64
	s      *Server
	nc     net.Conn
	br     *bufio.Reader // the hijacked reader: it may hold bytes sent after the handshake
	local  net.Addr
	remote net.Addr
	proto  string      // the subprotocol served
	dataOp wire.Opcode // the frame type of writes

	// reader only
	h       transport.Handler
	dec     *wire.Decoder
	rbuf    []byte
	discard bool // input is dropped: after a close frame or a decoding error

	// cb is held around every Handler call and WriteNotify callback. It is
	// the lock STYLE §3 allows by exception: the session contract promises
	// those calls never overlap, and they run on two goroutines here.
	cb sync.Mutex

	wake   chan struct{}  // capacity 1: a paused reader looks at the state again
	writer sync.WaitGroup // the writer goroutine, while it runs

	// mu guards what follows. It is the one lock STYLE §3 allows here as in
	// package transport: Write is called from any goroutine and appends to
	// one ordered queue that the writer takes whole.
	mu          sync.Mutex
	pending     []byte   // encoded frames queued, not yet taken by the writer
	dones       []waiter // callbacks for pending, in order
	spare       []byte   // the last written batch's buffer, for reuse
	spareDones  []waiter
	inFlight    int  // bytes of the batch being written
	writing     bool // the writer goroutine runs
	inCallback  bool // the reader is in the factory or OnData; the writer starts after
	paused      bool // PauseReading: no OnData, no socket reads
	closing     bool // Close, an OnData error or a close frame: writes refused, close frame queued
	closeQueued bool // our close frame is in the queue (and nothing may follow it)
	closeSent   bool // our close frame is written
	closeRcvd   bool // the peer's close frame was read
	failFast    bool // close the socket as soon as our close frame is written
	closed      bool // the socket is closed (or being): everything is refused
	ended       bool // cause is decided
	cause       error
	timer       *time.Timer // the drain bound, then the close-wait bound
}

func newConn(s *Server, nc net.Conn, br *bufio.Reader, proto string) *conn {
	return &conn{
		id:         transport.NextConnID(),
		s:          s,
		nc:         nc,
		br:         br,
		local:      nc.LocalAddr(),
		remote:     nc.RemoteAddr(),
		proto:      proto,
		dataOp:     s.types[proto],
		dec:        wire.NewDecoder(s.limits),
		rbuf:       make([]byte, readBufBytes),
		wake:       make(chan struct{}, 1),
		inCallback: true, // the factory runs first; its writes go out after it
	}
}

// ID implements transport.Conn. Safe from any goroutine.
func (c *conn) ID() uint64 { return c.id }

// RemoteAddr implements transport.Conn. Safe from any goroutine.
func (c *conn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr implements transport.Conn. Safe from any goroutine.
func (c *conn) LocalAddr() net.Addr { return c.local }

// Write implements transport.Conn: b becomes one message of the
// subprotocol's type. Safe from any goroutine.
func (c *conn) Write(b []byte) error { return c.write(b, nil) }

// WriteNotify implements transport.Conn: done runs, on the writer
// goroutine and never alongside another Handler call, once the socket
// write holding b's frame has returned, or with the close error when the
// connection ended first. Safe from any goroutine.
func (c *conn) WriteNotify(b []byte, done func(error)) error { return c.write(b, done) }

func (c *conn) write(b []byte, done func(error)) error {
	c.mu.Lock()
	if c.closed || c.closing {
		err := transport.ErrClosed
		if errors.Is(c.cause, transport.ErrOutboundFull) {
			err = transport.ErrOutboundFull
		}
		c.mu.Unlock()
		return err
	}
	size := wire.HeaderLen(len(b), false) + len(b)
	if used := len(c.pending) + c.inFlight + size; used > c.s.maxOutbound {
		c.cutLocked(transport.ErrOutboundFull)
		c.mu.Unlock()
		c.logOutboundFull(used)
		return transport.ErrOutboundFull
	}
	op := c.dataOp
	if op == wire.OpText && !utf8.Valid(b) {
		// DEVIATION: ActiveMQ turns a STOMP frame into a Java String to send
		// it as text, replacing bytes that are not UTF-8 (a binary body);
		// a text frame with them would make the client fail the connection
		// (1007, RFC 6455 §8.1). Wharf sends such a write as a binary
		// message, bytes intact; stomp.js reads binary frames too.
		op = wire.OpBinary
	}
	c.pending = wire.AppendFrame(c.pending, op, b)
	if done != nil {
		c.dones = append(c.dones, waiter{end: len(c.pending), done: done})
	}
	c.startWriterLocked()
	c.mu.Unlock()
	return nil
}

// Close implements transport.Conn: what is queued is written, then a close
// frame (1000), and the socket is closed when the peer's close frame
// arrives (at most 5 s later). OnClose follows with nil, or
// transport.ErrDrainTimeout when the queue could not be written within
// 30 s. Safe from any goroutine; returns at once.
func (c *conn) Close() error {
	c.mu.Lock()
	c.beginCloseLocked(wire.CloseNormal, nil)
	c.mu.Unlock()
	return nil
}

// PauseReading implements transport.Conn: the reader stops delivering and
// stops reading the socket, so the peer's sends back up in TCP. What the
// last read brought beyond the current OnData (at most 16 KiB) is held.
// Pings are not answered meanwhile. A peer's close or reset is seen only
// after ResumeReading (or when a write fails). A closing connection reads
// whatever was asked. Safe from any goroutine; idempotent.
func (c *conn) PauseReading() {
	c.mu.Lock()
	c.paused = true
	c.mu.Unlock()
}

// ResumeReading implements transport.Conn: held input is delivered, in
// order, then the socket is read again. Safe from any goroutine;
// idempotent.
func (c *conn) ResumeReading() {
	c.mu.Lock()
	c.paused = false
	c.mu.Unlock()
	c.wakeReader()
}

func (c *conn) wakeReader() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// startWriterLocked starts the writer goroutine if there is something to
// write and none runs. c.mu must be held.
func (c *conn) startWriterLocked() {
	if c.writing || c.inCallback || c.closed || len(c.pending) == 0 {
		return
	}
	c.writing = true
	c.writer.Add(1)
	go c.writeLoop()
}

// endLocked records why the connection ends. The first cause stands,
// except that an error replaces an orderly nil (a drain timeout, a socket
// error during the close handshake) and that ErrOutboundFull and
// ErrHandlerPanic replace anything, as in package transport. c.mu must be
// held.
func (c *conn) endLocked(err error) {
	if c.ended && (err == nil || c.cause != nil) &&
		!errors.Is(err, transport.ErrOutboundFull) && !errors.Is(err, transport.ErrHandlerPanic) {
		return
	}
	c.ended, c.cause = true, err
}

// beginCloseLocked starts the close handshake [RFC 6455 §7.1.2]: writes
// are refused from now on, and a close frame with code follows what is
// queued. cause is what OnClose will be told. c.mu must be held.
func (c *conn) beginCloseLocked(code uint16, cause error) {
	if c.closed || c.closing {
		return
	}
	c.closing = true
	c.endLocked(cause)
	c.queueCloseLocked(code, "")
	c.armTimerLocked(drainTimeout, c.drainExpired)
	// A paused reader reads again: the peer's close frame must be seen.
	c.wakeReader()
}

// queueCloseLocked appends our close frame, the last frame we send
// [RFC 6455 §5.5.1]. c.mu must be held.
func (c *conn) queueCloseLocked(code uint16, reason string) {
	if c.closeQueued {
		return
	}
	c.pending = wire.AppendClose(c.pending, code, reason)
	c.closeQueued = true
	c.startWriterLocked()
}

// cut closes the socket at once with cause; what is queued is dropped and
// WriteNotify callbacks get the cause. Safe from any goroutine.
func (c *conn) cut(cause error) {
	c.mu.Lock()
	c.cutLocked(cause)
	c.mu.Unlock()
}

func (c *conn) cutLocked(cause error) {
	if c.closed {
		return
	}
	c.endLocked(cause)
	c.pending, c.spare = nil, nil
	c.closeSocketLocked()
}

// closeSocketLocked closes the socket: a blocked read or write returns,
// and the reader finishes the connection. c.mu must be held; closing a
// socket does not block.
func (c *conn) closeSocketLocked() {
	c.closed = true
	_ = c.nc.Close()
	c.wakeReader()
}

func (c *conn) armTimerLocked(d time.Duration, f func()) {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(d, f)
}

// drainExpired runs on the timer's goroutine when a closing connection
// could not write its queue and close frame in time.
func (c *conn) drainExpired() {
	c.mu.Lock()
	if c.closed || c.closeSent {
		c.mu.Unlock()
		return
	}
	unsent := len(c.pending) + c.inFlight
	c.endLocked(transport.ErrDrainTimeout)
	c.closeSocketLocked()
	c.mu.Unlock()
	c.s.log.Warn("close timed out with bytes unsent", "conn", c.id, "remote", c.remote.String(),
		"proto", c.proto, "used", unsent)
}

// closeWaitExpired runs on the timer's goroutine when the peer did not
// answer our close frame in time.
func (c *conn) closeWaitExpired() {
	c.mu.Lock()
	if !c.closed {
		c.closeSocketLocked()
	}
	c.mu.Unlock()
}

// writeLoop is the writer goroutine: it writes the queue, whole, until it
// is empty, and runs the callbacks of each batch once the batch is written.
func (c *conn) writeLoop() {
	defer c.writer.Done()
	for {
		c.mu.Lock()
		if c.closed || len(c.pending) == 0 {
			c.writing = false
			c.mu.Unlock()
			return
		}
		batch, dones := c.pending, c.dones
		c.pending, c.spare = c.spare, nil
		c.dones, c.spareDones = c.spareDones, nil
		withClose := c.closeQueued && !c.closeSent // the batch ends with our close frame
		c.inFlight = len(batch)
		c.mu.Unlock()

		written, err := c.nc.Write(batch)

		c.mu.Lock()
		c.inFlight = 0
		var derr error
		if err != nil {
			if !c.closed {
				if !c.closeRcvd {
					// A peer that sent its close frame may close TCP before
					// reading our answer: its close stands.
					c.endLocked(fmt.Errorf("%w: write: %w", ErrAbnormalClosure, err))
				}
				c.closeSocketLocked()
			}
			if derr = c.cause; derr == nil {
				derr = transport.ErrClosed
			}
		} else if withClose {
			c.closeSent = true
			if c.closeRcvd || c.failFast {
				// Handshake complete, or failing: the server closes the TCP
				// connection first [RFC 6455 §7.1.1].
				c.closeSocketLocked()
			} else {
				c.armTimerLocked(closeWaitTimeout, c.closeWaitExpired)
			}
		}
		c.mu.Unlock()

		perr := c.runDones(dones, written, derr)

		c.mu.Lock()
		if !c.closed && c.spare == nil && cap(batch) <= maxSpareBytes {
			c.spare = batch[:0]
		}
		clear(dones)
		if c.spareDones == nil && dones != nil {
			c.spareDones = dones[:0]
		}
		if perr != nil {
			c.cutLocked(perr)
		}
		c.mu.Unlock()
	}
}

// runDones runs WriteNotify callbacks in order: nil for those whose frame
// lies within the written bytes, err for the others. A panicking callback
// is logged and its error returned so the connection is cut; the others
// still run.
func (c *conn) runDones(ws []waiter, written int, err error) (perr error) {
	if len(ws) == 0 {
		return nil
	}
	c.cb.Lock()
	defer c.cb.Unlock()
	for _, w := range ws {
		werr := err
		if w.end <= written {
			werr = nil
		}
		if p := c.callDone(w.done, werr); p != nil && perr == nil {
			perr = p
		}
	}
	return perr
}

// run serves the connection on the calling goroutine, the reader, until
// it ends: builds the session, reads, then finishes.
func (c *conn) run(f transport.HandlerFactory) {
	c.cb.Lock()
	h, ok := c.callFactory(f)
	c.cb.Unlock()
	if !ok {
		// Refused: no OnClose. Callbacks queued by the factory still run.
		c.mu.Lock()
		c.endLocked(transport.ErrClosed)
		c.inCallback = false
		c.closeSocketLocked()
		dones := c.dones
		c.dones, c.pending = nil, nil
		c.mu.Unlock()
		_ = c.runDones(dones, 0, transport.ErrClosed)
		c.s.remove(c)
		return
	}
	c.h = h
	c.mu.Lock()
	c.inCallback = false
	c.startWriterLocked()
	c.mu.Unlock()
	c.finish(c.readLoop())
}

// readLoop reads and decodes until the socket is closed or fails.
func (c *conn) readLoop() error {
	for {
		if !c.waitReadable() {
			return nil
		}
		n, err := c.br.Read(c.rbuf)
		if n > 0 {
			c.consume(c.rbuf[:n])
		}
		if err != nil {
			return err
		}
	}
}

// waitReadable blocks while reading is paused and the connection is not
// closing. It returns false once the socket is closed.
func (c *conn) waitReadable() bool {
	for {
		c.mu.Lock()
		closed, hold := c.closed, c.paused && !c.closing
		c.mu.Unlock()
		if closed {
			return false
		}
		if !hold {
			return true
		}
		<-c.wake
	}
}

// consume decodes b and acts on each event.
func (c *conn) consume(b []byte) {
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
			if !c.waitReadable() {
				return
			}
			c.deliver(ev.Payload)
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

// deliver hands a chunk of message data to the session.
func (c *conn) deliver(p []byte) {
	c.mu.Lock()
	if c.closing || c.closed {
		// A closing connection reads and drops its input, as over TCP.
		c.mu.Unlock()
		return
	}
	c.inCallback = true
	c.mu.Unlock()

	c.cb.Lock()
	err, perr := c.callOnData(p)
	c.cb.Unlock()

	c.mu.Lock()
	c.inCallback = false
	switch {
	case perr != nil:
		c.cutLocked(perr)
	case err != nil:
		// The session has queued its protocol's error frame: send it, then
		// close with 1008, the generic "violates its policy" code
		// [RFC 6455 §7.4.1]; OnClose gets the session's own error back.
		c.beginCloseLocked(wire.ClosePolicyViolation, err)
	}
	c.startWriterLocked()
	c.mu.Unlock()
}

// pong answers a ping with its payload [RFC 6455 §5.5.2], after what is
// queued. Pongs count against the outbound cap: a client that pings and
// never reads is cut like any other.
func (c *conn) pong(payload []byte) {
	c.mu.Lock()
	if c.closing || c.closed {
		c.mu.Unlock()
		return
	}
	size := wire.HeaderLen(len(payload), false) + len(payload)
	if used := len(c.pending) + c.inFlight + size; used > c.s.maxOutbound {
		c.cutLocked(transport.ErrOutboundFull)
		c.mu.Unlock()
		c.logOutboundFull(used)
		return
	}
	c.pending = wire.AppendFrame(c.pending, wire.OpPong, payload)
	c.startWriterLocked()
	c.mu.Unlock()
}

// peerClosed handles the peer's close frame: the close handshake ends
// when our close frame has been sent too [RFC 6455 §5.5.1].
func (c *conn) peerClosed(payload []byte) {
	code, reason, _ := wire.ParseClose(payload) // checked by the decoder
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeRcvd = true
	if !c.ended {
		var cause error
		switch code {
		case wire.CloseNormal, wire.CloseGoingAway, wire.CloseNoStatus:
		default:
			cause = &CloseError{Code: code, Reason: reason}
		}
		c.endLocked(cause)
	}
	switch {
	case c.closed:
	case !c.closeQueued:
		// Answer with the code received ("typically echoing the status
		// code it received"), after what is queued.
		c.closing = true
		c.queueCloseLocked(code, "")
		c.armTimerLocked(drainTimeout, c.drainExpired)
	case c.closeSent:
		c.closeSocketLocked() // we closed first and this is the answer
	}
	// Otherwise our close frame is queued: the writer closes the socket
	// once it is sent.
}

// fail fails the connection for a framing error [RFC 6455 §7.1.7]: a close
// frame with the error's code, then the socket is closed without waiting
// for an answer. Input is dropped from now on.
func (c *conn) fail(err error) {
	c.discard = true
	c.mu.Lock()
	defer c.mu.Unlock()
	c.endLocked(fmt.Errorf("ws: read from %s: %w", c.remote, err))
	if c.closed {
		return
	}
	c.failFast = true
	if c.closeSent {
		c.closeSocketLocked()
		return
	}
	if !c.closeQueued {
		c.closing = true
		c.queueCloseLocked(wire.CloseCodeFor(err), err.Error())
		c.armTimerLocked(drainTimeout, c.drainExpired)
	}
}

// finish ends the connection once the reader stopped: the socket is
// closed, the writer is waited for, the callbacks still queued get the
// cause, and OnClose runs, exactly once.
func (c *conn) finish(rerr error) {
	c.mu.Lock()
	if !c.ended {
		if rerr == nil {
			rerr = errors.New("reader stopped")
		}
		c.endLocked(fmt.Errorf("%w: %w", ErrAbnormalClosure, rerr))
	}
	if !c.closed {
		c.closeSocketLocked()
	}
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()

	c.writer.Wait() // no writer starts once closed is set

	c.mu.Lock()
	cause, dones := c.cause, c.dones
	c.pending, c.dones, c.spare, c.spareDones = nil, nil, nil, nil
	c.mu.Unlock()
	derr := cause
	if derr == nil {
		derr = transport.ErrClosed
	}
	c.cb.Lock()
	for _, w := range dones {
		_ = c.callDone(w.done, derr)
	}
	c.callOnClose(cause)
	c.cb.Unlock()
	if c.s.log.Enabled(context.Background(), debugLevel) {
		c.s.log.Debug("connection closed", "conn", c.id, "remote", c.remote.String(), "proto", c.proto, "err", cause)
	}
	c.s.remove(c)
}

// callFactory builds the session, recovering a panic. c.cb must be held.
func (c *conn) callFactory(f transport.HandlerFactory) (h transport.Handler, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			_ = c.panicked("handler_factory", r)
			h, ok = nil, false
		}
	}()
	h = f(c)
	if h == nil {
		c.s.log.Error("handler factory returned nil, connection refused", "conn", c.id, "remote", c.remote.String(), "proto", c.proto)
		return nil, false
	}
	return h, true
}

// callOnData runs Handler.OnData, turning a panic into perr. c.cb must be
// held.
func (c *conn) callOnData(b []byte) (err, perr error) {
	defer func() {
		if r := recover(); r != nil {
			perr = c.panicked("on_data", r)
		}
	}()
	return c.h.OnData(b), nil
}

// callOnClose runs Handler.OnClose, logging a panic. c.cb must be held.
func (c *conn) callOnClose(cause error) {
	defer func() {
		if r := recover(); r != nil {
			_ = c.panicked("on_close", r)
		}
	}()
	c.h.OnClose(cause)
}

// callDone runs a WriteNotify callback, turning a panic into perr. c.cb
// must be held.
func (c *conn) callDone(done func(error), err error) (perr error) {
	defer func() {
		if r := recover(); r != nil {
			perr = c.panicked("write_notify", r)
		}
	}()
	done(err)
	return nil
}

// panicked logs a recovered panic once, with the connection's identity and
// the stack, and returns the error the connection is cut with (STYLE §6).
func (c *conn) panicked(where string, r any) error {
	err := fmt.Errorf("%w in %s: %v", transport.ErrHandlerPanic, where, r)
	c.s.log.Error("handler panic, connection closed", "conn", c.id, "remote", c.remote.String(),
		"proto", c.proto, "where", where, "err", err, "stack", string(debug.Stack()))
	return err
}

// logOutboundFull reports a connection cut for exceeding the outbound cap,
// at most once per second per server.
func (c *conn) logOutboundFull(used int) {
	if ok, suppressed := c.s.outboundFull.allow(time.Now()); ok {
		c.s.log.Warn("outbound limit exceeded, slow consumer cut", "conn", c.id, "remote", c.remote.String(),
			"proto", c.proto, "limit", c.s.maxOutbound, "used", used, "suppressed", suppressed)
	}
}
