// Package streamconn is what the goroutine-driven listeners share: the
// connection machinery (Conn) and the TLS accept gate (Gate) of package
// transport's ListenTLS and of package ws (ws:// and wss://). Those
// transports differ only in how bytes are read, framed and written and in
// how a connection's direction ends (a TLS close_notify, a WebSocket close
// frame); Socket names those differences, the rest is here once.
//
// It cannot import package transport (transport imports it), so the
// transport's sentinel errors come in through Config.Errors and a session
// is a Handler, which transport.Handler satisfies.
package streamconn

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"wharf/protocols/internal/logthrottle"
	"wharf/protocols/transport/internal/guard"
)

// maxSpareBytes is the largest written batch buffer kept for reuse, in
// bytes; a burst's buffer is left to the GC.
const maxSpareBytes = 1 << 20

// Handler is a session as the connection calls it: transport.Handler.
type Handler interface {
	OnData(b []byte) error
	OnClose(err error)
}

// Errors are package transport's sentinels, which a Conn returns and ends
// connections with.
type Errors struct {
	Closed, OutboundFull, HandlerPanic, DrainTimeout error
}

// Config is what a listener's connections share. It is not changed once
// a connection uses it.
type Config struct {
	Log          *slog.Logger
	MaxOutbound  int                   // the outbound cap, in bytes
	OutboundFull *logthrottle.Throttle // rate-limits "outbound limit exceeded" (per listener)
	ReadBufBytes int                   // one socket read, and what a paused connection holds at most
	// DrainTimeout bounds how long a closing connection may take to write
	// what was queued and the end of its direction; then it is cut with
	// Errors.DrainTimeout.
	DrainTimeout time.Duration
	// CloseWait bounds the wait for the peer's close once ours is sent;
	// then the socket is closed anyway (the bytes were delivered, so the
	// cause stays what it was).
	CloseWait time.Duration
	Errors    Errors
}

// Socket is what differs between the transports. Its methods are called
// by the Conn: Read and Consume on the reader goroutine, WriteBatch and
// SendClose on the writer, the others with the Conn's lock held.
type Socket interface {
	// Read reads the socket into p.
	Read(p []byte) (int, error)
	// Consume hands what Read returned to the session through
	// Conn.WaitReadable and Conn.Deliver: decrypted bytes as they are
	// (TLS), the data of decoded frames (WebSocket).
	Consume(p []byte)
	// WriteBatch writes a batch of the queue to the socket.
	WriteBatch(b []byte) (int, error)
	// CloseFrame is what ends our direction, queued after what Close or an
	// OnData error (cause) leaves queued; nil when that end is not bytes of
	// the queue but SendClose. Lock held.
	CloseFrame(cause error) []byte
	// SendClose ends our direction once the queue is written, when
	// CloseFrame gave nil (TLS: close_notify, then a FIN). It must be
	// bounded in time.
	SendClose()
	// WriteFailed is the cause a failed socket write ends the connection
	// with, or nil to keep the cause as it is. Lock held.
	WriteFailed(err error) error
	// ReadEnded is the cause when the reader stopped with rerr (nil: the
	// socket was closed) and no cause was decided. Lock held.
	ReadEnded(rerr error) error
	// Gone tells the listener the connection is gone, last.
	Gone()
}

// waiter is a WriteNotify callback; end is the offset just past its bytes
// in the queue it was appended to.
type waiter struct {
	end  int
	done func(error)
}

// Conn is one connection served by goroutines. Embedded in the
// transport's connection type and set up with Init.
//
// Goroutines: the reader (Serve's caller) runs the HandlerFactory, reads,
// calls OnData and finally OnClose; a writer, started when the queue turns
// non-empty and gone when it is empty again, hands the whole queue to
// Socket.WriteBatch and runs the batch's WriteNotify callbacks. cb makes
// Handler calls and callbacks mutually exclusive, so a session sees them
// one at a time, as on a gnet event loop.
//
// Lock order: cb before mu (OnData and callbacks call Write). mu is held
// only to append, swap or flip flags and to close the socket (which does
// not block); never across a socket read or write or a Handler call.
type Conn struct {
	id     uint64
	cfg    *Config
	sock   Socket
	nc     net.Conn // the socket; closing it ends every blocked call
	local  net.Addr
	remote net.Addr
	attrs  []any // name the transport in log lines

	// reader only
	h    Handler
	rbuf []byte

	// cb is held around every Handler call and WriteNotify callback. It is
	// the lock STYLE §3 allows by exception: the session contract promises
	// those calls never overlap, and they run on two goroutines here.
	cb sync.Mutex

	wake   chan struct{}  // capacity 1: a paused reader looks at the state again
	writer sync.WaitGroup // the writer goroutine, while it runs

	// mu guards what follows. As in package transport's conn, Write is
	// called from any goroutine and appends to one ordered queue that the
	// writer takes whole: one total order over all writers, a burst in one
	// write.
	mu          sync.Mutex
	pending     []byte   // bytes queued, not yet taken by the writer
	dones       []waiter // callbacks for pending, in order
	spare       []byte   // the last written batch's buffer, for reuse
	spareDones  []waiter
	inFlight    int  // bytes of the batch being written
	writing     bool // the writer goroutine runs
	inCallback  bool // the reader is in the factory or OnData; the writer starts after
	paused      bool // PauseReading: no OnData, no socket reads
	closing     bool // writes refused; our direction ends after the queue
	closeQueued bool // the end of our direction is decided (nothing may follow)
	closeFrame  bool // that end is the queue's last bytes (not SendClose)
	closeSent   bool // that end is written (or being sent)
	closeOnSent bool // close the socket as soon as our end is sent
	closed      bool // the socket is closed (or being): everything is refused
	ended       bool // cause is decided
	cause       error
	timer       *time.Timer // the drain bound, then the close-wait bound
}

// Init sets a Conn up before its reader starts: id, the shared cfg, the
// transport's sock, the socket nc, and attrs, the key-value pairs naming
// the transport in log lines.
func (c *Conn) Init(id uint64, cfg *Config, sock Socket, nc net.Conn, attrs ...any) {
	c.id, c.cfg, c.sock, c.nc, c.attrs = id, cfg, sock, nc, attrs
	c.local, c.remote = nc.LocalAddr(), nc.RemoteAddr()
	c.rbuf = make([]byte, cfg.ReadBufBytes)
	c.wake = make(chan struct{}, 1)
	c.inCallback = true // the factory runs first; its writes go out after it
}

// ID implements transport.Conn. Safe from any goroutine.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr implements transport.Conn. Safe from any goroutine.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr implements transport.Conn. Safe from any goroutine.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// Queue appends a write of size bytes (add appends them to the queue it
// is given) with its WriteNotify callback done, or nil. It returns
// Errors.Closed once the connection closes, or Errors.OutboundFull when
// the write crosses the outbound cap (the connection is then cut). Safe
// from any goroutine.
func (c *Conn) Queue(size int, done func(error), add func(q []byte) []byte) error {
	c.mu.Lock()
	if c.closed || c.closing {
		err := c.cfg.Errors.Closed
		if errors.Is(c.cause, c.cfg.Errors.OutboundFull) {
			err = c.cfg.Errors.OutboundFull
		}
		c.mu.Unlock()
		return err
	}
	// The batch being written counts until the socket write returns: those
	// bytes are still in user space, or the kernel has not taken them all.
	if used := len(c.pending) + c.inFlight + size; used > c.cfg.MaxOutbound {
		c.cutLocked(c.cfg.Errors.OutboundFull)
		c.mu.Unlock()
		c.logOutboundFull(used)
		return c.cfg.Errors.OutboundFull
	}
	c.pending = add(c.pending)
	if done != nil {
		c.dones = append(c.dones, waiter{end: len(c.pending), done: done})
	}
	c.startWriterLocked()
	c.mu.Unlock()
	return nil
}

// Shutdown starts an orderly close (transport.Conn's Close): what is
// queued is written, then Socket.CloseFrame or SendClose ends our
// direction. Safe from any goroutine; later calls do nothing.
func (c *Conn) Shutdown() {
	c.mu.Lock()
	if !c.closed && !c.closing {
		c.BeginCloseLocked(nil, c.sock.CloseFrame(nil))
	}
	c.mu.Unlock()
}

// Pause stops the reader (transport.Conn's PauseReading). Safe from any
// goroutine; idempotent.
func (c *Conn) Pause() {
	c.mu.Lock()
	c.paused = true
	c.mu.Unlock()
}

// ResumeReading implements transport.Conn: held input is delivered, in
// order, then the socket is read again. Safe from any goroutine;
// idempotent.
func (c *Conn) ResumeReading() {
	c.mu.Lock()
	c.paused = false
	c.mu.Unlock()
	c.wakeReader()
}

func (c *Conn) wakeReader() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Lock takes the lock that guards the connection's state, for the
// transport's own ...Locked calls.
func (c *Conn) Lock() { c.mu.Lock() }

// Unlock releases what Lock took.
func (c *Conn) Unlock() { c.mu.Unlock() }

// ClosedLocked reports whether the socket is closed. Lock held.
func (c *Conn) ClosedLocked() bool { return c.closed }

// EndedLocked reports whether the cause is decided. Lock held.
func (c *Conn) EndedLocked() bool { return c.ended }

// CloseQueuedLocked reports whether the end of our direction is decided.
// Lock held.
func (c *Conn) CloseQueuedLocked() bool { return c.closeQueued }

// CloseSentLocked reports whether the end of our direction is written.
// Lock held.
func (c *Conn) CloseSentLocked() bool { return c.closeSent }

// CloseOnSentLocked makes the socket close as soon as the end of our
// direction is written, instead of waiting for the peer's. Lock held.
func (c *Conn) CloseOnSentLocked() { c.closeOnSent = true }

// startWriterLocked starts the writer goroutine if there is something to
// write (bytes, or the end of a closing connection's direction) and none
// runs. c.mu must be held.
func (c *Conn) startWriterLocked() {
	if c.writing || c.inCallback || c.closed {
		return
	}
	if len(c.pending) == 0 && !(c.closeQueued && !c.closeSent) {
		return
	}
	c.writing = true
	c.writer.Add(1)
	go c.writeLoop()
}

// EndLocked records why the connection ends. The first cause stands,
// except that an error replaces an orderly nil (a drain timeout, a socket
// error during the close) and that ErrOutboundFull and ErrHandlerPanic
// replace anything, as in package transport's conn. Lock held.
func (c *Conn) EndLocked(err error) {
	if c.ended && (err == nil || c.cause != nil) &&
		!errors.Is(err, c.cfg.Errors.OutboundFull) && !errors.Is(err, c.cfg.Errors.HandlerPanic) {
		return
	}
	c.ended, c.cause = true, err
}

// BeginCloseLocked starts an orderly close: writes are refused from now
// on, and the queue is written, then frame (the last bytes we send), or
// Socket.SendClose when frame is nil. cause is what OnClose will be told.
// Lock held.
func (c *Conn) BeginCloseLocked(cause error, frame []byte) {
	if c.closed || c.closing {
		return
	}
	c.closing = true
	c.EndLocked(cause)
	if !c.closeQueued {
		if frame != nil {
			c.pending = append(c.pending, frame...)
			c.closeFrame = true
		}
		c.closeQueued = true
	}
	c.armTimerLocked(c.cfg.DrainTimeout, c.drainExpired)
	c.startWriterLocked()
	// A paused reader reads (and drops) again: the peer's close must be
	// seen, and unread input would turn our close into a reset.
	c.wakeReader()
}

// Cut closes the socket at once with cause; what is queued is dropped and
// WriteNotify callbacks get the cause. Nothing ends our direction first.
// Safe from any goroutine.
func (c *Conn) Cut(cause error) {
	c.mu.Lock()
	c.cutLocked(cause)
	c.mu.Unlock()
}

func (c *Conn) cutLocked(cause error) {
	if c.closed {
		return
	}
	c.EndLocked(cause)
	c.pending, c.spare = nil, nil
	c.CloseSocketLocked()
}

// CloseSocketLocked closes the socket: a blocked handshake, read or write
// returns, and the reader finishes the connection. Lock held; closing a
// socket does not block.
func (c *Conn) CloseSocketLocked() {
	c.closed = true
	_ = c.nc.Close()
	c.wakeReader()
}

// Abandon closes a connection that never got a session (its handshake
// failed) and reports whether it was closed already (by the listener).
func (c *Conn) Abandon() (wasClosed bool) {
	c.mu.Lock()
	wasClosed = c.closed
	c.closed, c.ended = true, true
	c.mu.Unlock()
	_ = c.nc.Close()
	return wasClosed
}

func (c *Conn) armTimerLocked(d time.Duration, f func()) {
	if c.timer != nil {
		c.timer.Stop()
	}
	c.timer = time.AfterFunc(d, f)
}

// drainExpired runs on the timer's goroutine when a closing connection
// could not write its queue and the end of its direction in time.
func (c *Conn) drainExpired() {
	c.mu.Lock()
	if c.closed || c.closeSent {
		c.mu.Unlock()
		return
	}
	unsent := len(c.pending) + c.inFlight
	c.EndLocked(c.cfg.Errors.DrainTimeout)
	c.CloseSocketLocked()
	c.mu.Unlock()
	c.log(slog.LevelWarn, "close timed out with bytes unsent", "used", unsent, "timeout", c.cfg.DrainTimeout)
}

// closeWaitExpired runs on the timer's goroutine when the peer did not
// close in time after our end was sent.
func (c *Conn) closeWaitExpired() {
	c.mu.Lock()
	if !c.closed {
		c.CloseSocketLocked()
	}
	c.mu.Unlock()
}

// closeSentLocked follows the end of our direction: the socket closes now
// (closeOnSent) or when the peer closes, within CloseWait. Lock held.
func (c *Conn) closeSentLocked() {
	switch {
	case c.closed:
	case c.closeOnSent:
		c.CloseSocketLocked()
	default:
		c.armTimerLocked(c.cfg.CloseWait, c.closeWaitExpired)
	}
}

// writeLoop is the writer goroutine: it writes the queue, whole, until it
// is empty, and runs the callbacks of each batch once the batch is
// written; a closing connection's writer then ends our direction.
func (c *Conn) writeLoop() {
	defer c.writer.Done()
	for {
		c.mu.Lock()
		if c.closed {
			c.writing = false
			c.mu.Unlock()
			return
		}
		if len(c.pending) == 0 {
			if c.closeQueued && !c.closeSent {
				// No close frame: the Socket ends our direction.
				c.closeSent = true
				c.mu.Unlock()
				c.sock.SendClose()
				c.mu.Lock()
				c.closeSentLocked()
			}
			c.writing = false
			c.mu.Unlock()
			return
		}
		batch, dones := c.pending, c.dones
		c.pending, c.spare = c.spare, nil
		c.dones, c.spareDones = c.spareDones, nil
		withClose := c.closeFrame && !c.closeSent // the batch ends with our close frame
		c.inFlight = len(batch)
		c.mu.Unlock()

		written, err := c.sock.WriteBatch(batch)

		c.mu.Lock()
		c.inFlight = 0
		var derr error
		if err != nil {
			if !c.closed {
				if cause := c.sock.WriteFailed(err); cause != nil {
					c.EndLocked(cause)
				}
				c.CloseSocketLocked()
			}
			if derr = c.cause; derr == nil {
				derr = c.cfg.Errors.Closed
			}
		} else if withClose {
			c.closeSent = true
			c.closeSentLocked()
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

// runDones runs WriteNotify callbacks in order: nil for those whose bytes
// lie within the written ones, err for the others. A panicking callback is
// logged and its error returned so the connection is cut; the others
// still run.
func (c *Conn) runDones(ws []waiter, written int, err error) (perr error) {
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

// Serve runs the connection on the calling goroutine, the reader, until
// it ends: builds the session with factory, reads, then finishes.
func (c *Conn) Serve(factory func() Handler) {
	c.cb.Lock()
	h, ok := c.callFactory(factory)
	c.cb.Unlock()
	if !ok {
		// Refused: no OnClose. Callbacks queued by the factory still run.
		c.mu.Lock()
		c.EndLocked(c.cfg.Errors.Closed)
		c.inCallback = false
		c.CloseSocketLocked()
		dones := c.dones
		c.dones, c.pending = nil, nil
		c.mu.Unlock()
		_ = c.runDones(dones, 0, c.cfg.Errors.Closed)
		c.sock.Gone()
		return
	}
	c.h = h
	c.mu.Lock()
	c.inCallback = false
	c.startWriterLocked()
	c.mu.Unlock()
	c.finish(c.readLoop())
}

// readLoop reads until the socket is closed or fails.
func (c *Conn) readLoop() error {
	for {
		if !c.WaitReadable() {
			return nil
		}
		n, err := c.sock.Read(c.rbuf)
		if n > 0 {
			c.sock.Consume(c.rbuf[:n])
		}
		if err != nil {
			return err
		}
	}
}

// WaitReadable blocks while reading is paused and the connection is not
// closing. It returns false once the socket is closed. Reader only.
func (c *Conn) WaitReadable() bool {
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

// Deliver hands input to the session's OnData. Reader only.
func (c *Conn) Deliver(p []byte) {
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
		// close. OnClose gets the session's own error back.
		c.BeginCloseLocked(err, c.sock.CloseFrame(err))
	}
	c.startWriterLocked()
	c.mu.Unlock()
}

// finish ends the connection once the reader stopped: the socket is
// closed, the writer is waited for, the callbacks still queued get the
// cause, and OnClose runs, exactly once.
func (c *Conn) finish(rerr error) {
	c.mu.Lock()
	if !c.ended {
		c.EndLocked(c.sock.ReadEnded(rerr))
	}
	if !c.closed {
		c.CloseSocketLocked()
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
		derr = c.cfg.Errors.Closed
	}
	c.cb.Lock()
	for _, w := range dones {
		_ = c.callDone(w.done, derr)
	}
	c.callOnClose(cause)
	c.cb.Unlock()
	if c.cfg.Log.Enabled(context.Background(), slog.LevelDebug) {
		c.log(slog.LevelDebug, "connection closed", "err", cause)
	}
	c.sock.Gone()
}

// callFactory builds the session, recovering a panic. c.cb must be held.
func (c *Conn) callFactory(factory func() Handler) (Handler, bool) {
	return guard.Factory((*panicLog)(c), c.cfg.Errors.HandlerPanic, factory)
}

// callOnData runs Handler.OnData, turning a panic into perr. c.cb must be
// held.
func (c *Conn) callOnData(b []byte) (err, perr error) {
	perr = guard.Call((*panicLog)(c), c.cfg.Errors.HandlerPanic, "on_data", func() { err = c.h.OnData(b) })
	return err, perr
}

// callOnClose runs Handler.OnClose, logging a panic. c.cb must be held.
func (c *Conn) callOnClose(cause error) {
	_ = guard.Call((*panicLog)(c), c.cfg.Errors.HandlerPanic, "on_close", func() { c.h.OnClose(cause) })
}

// callDone runs a WriteNotify callback, turning a panic into perr. c.cb
// must be held.
func (c *Conn) callDone(done func(error), err error) error {
	return guard.Call((*panicLog)(c), c.cfg.Errors.HandlerPanic, "write_notify", func() { done(err) })
}

// panicLog is the Conn as the guard.Logger of its session's panics; a
// type of its own so that the transports embedding Conn do not gain the
// method.
type panicLog Conn

func (p *panicLog) LogError(msg string, args ...any) {
	(*Conn)(p).log(slog.LevelError, msg, args...)
}

// logOutboundFull reports a connection cut for exceeding the outbound cap,
// at most once per second per listener.
func (c *Conn) logOutboundFull(used int) {
	if ok, suppressed := c.cfg.OutboundFull.Allow(time.Now()); ok {
		c.log(slog.LevelWarn, "outbound limit exceeded, slow consumer cut",
			"limit", c.cfg.MaxOutbound, "used", used, "suppressed", suppressed)
	}
}

// log writes one line naming the connection and its transport.
func (c *Conn) log(level slog.Level, msg string, args ...any) {
	all := make([]any, 0, 4+len(c.attrs)+len(args))
	all = append(all, "conn", c.id, "remote", c.remote.String())
	all = append(all, c.attrs...)
	c.cfg.Log.Log(context.Background(), level, msg, append(all, args...)...)
}
