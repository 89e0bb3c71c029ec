package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"

	"wharf/protocols/transport/internal/guard"
)

const (
	// chunkBytes is the size of the chunks the outbound queue is made of:
	// a write is copied once, into the last chunk, and a burst grows the
	// queue by chunks instead of copying it into a bigger buffer each time
	// it doubles. Flushed chunks go back to a pool shared by every
	// connection, so an idle connection pins none.
	chunkBytes = 64 << 10
	// maxIovec is how many chunks go to one writev (Linux's IOV_MAX).
	maxIovec = 1024
	// drainTimeout bounds how long Close waits for gnet's outbound buffer to
	// reach the kernel before closing anyway (ErrDrainTimeout). A peer that
	// stops reading must not keep a closing connection forever.
	drainTimeout = 30 * time.Second
	// lingerTimeout bounds how long a closed connection keeps reading (and
	// dropping) its peer's input after its FIN, waiting for the peer's; see
	// linger.
	lingerTimeout = 5 * time.Second
	// pollMin and pollMax bound the back-off between checks of gnet's
	// outbound buffer, for a draining connection and for WriteNotify
	// callbacks waiting on their bytes: gnet has no callback for the moment
	// its buffer drains. The back-off restarts at pollMin whenever a wait
	// begins or a callback could run, so a reader that keeps up sees its
	// callbacks within about a millisecond and a stalled one costs a wake-up
	// every 50 ms.
	pollMin = time.Millisecond
	pollMax = 50 * time.Millisecond
	// maxSpareWaiters is the largest waiting list (entries) kept for reuse
	// once it empties.
	maxSpareWaiters = 4096
)

// waiter is a WriteNotify callback waiting for its bytes to leave gnet's
// outbound buffer: end is the connection's byte offset just past them,
// counted over every byte handed to gnet's Write.
type waiter struct {
	end  int64
	done func(error)
}

// procStart is the origin of the loop's monotonic nanosecond stamps
// (drainStart).
var procStart = time.Now()

// connSeq hands out Conn IDs, unique within the process.
var connSeq atomic.Uint64

// conn is one accepted connection. It implements Conn.
//
// Ownership: fields under "loop only" are touched only by the connection's
// gnet event loop (gnet callbacks and tasks posted with Execute). Fields
// under mu are shared with the goroutines that call Write and Close.
type conn struct {
	id     uint64
	l      *listener
	gc     gnet.Conn // loop-only methods are called on the loop only; Close and EventLoop from anywhere
	remote net.Addr  // an immutable copy: gnet's is not safe off the loop and is recycled on close
	// local is kept as a value and made a net.Addr when asked for: nothing
	// reads it on the way, and an idle connection is cheaper without the
	// two allocations (issue 18).
	local netip.AddrPort
	fd    int // the socket, for the poller; valid until OnClose

	// pauseReq is what PauseReading or ResumeReading last asked for; the
	// loop applies it (readTask, holdInput). See pause.go.
	pauseReq atomic.Bool

	// pollArmed is set by the loop when it starts the poll timer and
	// cleared by the timer, so at most one poll is pending.
	pollArmed atomic.Bool

	// loop only
	h Handler
	// The loop's flags sit together (issue 18: an idle connection's size).
	// gone: OnClose has run; gc must not be used for I/O. For rdPaused,
	// rdHeld and rdLooked see "Read pause" below; for lingering, lingerT.
	gone, rdPaused, rdHeld, rdLooked, lingering bool
	// sl is the state of waiting WriteNotify callbacks, output polls,
	// draining and lingering, made when first needed (slow).
	sl *connSlow
	// handed counts every byte given to gnet's Write; handed minus
	// gnet's OutboundBuffered is what has gone to the kernel.
	handed int64
	// Read pause (pause.go). rdPaused: input is held in gnet's inbound
	// buffer and, unless rdHeld, the socket is out of the poller's interest
	// set. rdHeld: the poller could not be reached, so gnet keeps reading.
	// epfd is the loop's epoll descriptor (-1 if unusable), looked up once
	// (rdLooked). lastOut is gnet's OutboundBuffered at the last look while
	// paused, in bytes.
	epfd    int
	lastOut int
	// lingering (above): the handler has had OnClose, the socket is
	// half-closed and gnet still reads it (see linger); connSlow.lingerT
	// closes it at the deadline.

	// mu guards the outbound queue and the close state. It is the lock
	// STYLE §3 allows by exception: Write is called from any goroutine and
	// must append to one ordered queue that the event loop takes whole; a
	// channel would cost a copy per write and give no batching. It is held
	// only to append, swap or flip flags: never across I/O or a callback.
	mu             sync.Mutex
	pending        [][]byte      // bytes queued by Write, not yet given to gnet: chunks in order
	pendingLen     int           // bytes in pending
	dones          []func(error) // WriteNotify callbacks for pending, in order (after those in waiting)
	spare          [][]byte      // the previous batch's chunk list, reused
	spareDones     []func(error)
	flushScheduled bool  // a flush task is posted to the loop and has not started
	readScheduled  bool  // readTask is posted to the loop and has not started
	inCallback     bool  // the loop is inside OnData (or the factory) and flushes when it returns
	closing        bool  // Close was called (or OnData failed): refuse writes, drain, then close
	closed         bool  // cut or gone: refuse writes, drop the queue
	fdGone         bool  // gnet's OnClose has run: its Close must not be called again
	cause          error // what Handler.OnClose will be told; nil for an orderly close
}

// connSlow is the loop-only state of a connection that WriteNotify
// callbacks, output polling, draining and lingering need: made the first
// time one of them is (slow), since an idle connection needs none of it
// (issue 18: a smaller conn for every idle connection).
type connSlow struct {
	// waiting holds the WriteNotify callbacks whose bytes were given to
	// gnet, in write order, from wHead on; see settle.
	waiting   []waiter
	wHead     int
	pollDelay time.Duration // current poll back-off
	pollT     *time.Timer   // the poll timer (pollFired), made on first use
	// drainStart is when the loop first found Close waiting on gnet's
	// buffer: nanoseconds since procStart, 0 for not yet.
	drainStart int64
	// inputLeft counts down, in bytes, the input the kernel held when a
	// closing connection's reading was resumed; drain waits for it.
	inputLeft int
	lingerT   *time.Timer // closes a lingering connection at the deadline
}

// slow returns c's connSlow, making it. Loop only.
func (c *conn) slow() *connSlow {
	if c.sl == nil {
		c.sl = new(connSlow)
	}
	return c.sl
}

// hasWaiting reports whether WriteNotify callbacks wait for their bytes.
// Loop only.
func (c *conn) hasWaiting() bool { return c.sl != nil && c.sl.wHead < len(c.sl.waiting) }

func newConn(l *listener, gc gnet.Conn) *conn {
	c := &conn{
		id:         connSeq.Add(1),
		l:          l,
		gc:         gc,
		remote:     cloneAddr(gc.RemoteAddr()),
		inCallback: true, // the factory runs next; OnOpen flushes after it
		fd:         gc.Fd(),
		epfd:       -1,
	}
	c.local = socketAddrPort(gc.Fd())
	if !c.local.IsValid() {
		if t, ok := gc.LocalAddr().(*net.TCPAddr); ok {
			c.local = t.AddrPort()
		}
	}
	return c
}

// flushTask and readTask are c as the gnet.Runnable posted to its loop to
// flush and to pause or resume reading: a conversion, where a closure per
// connection would cost every idle one two allocations.
type (
	flushTask conn
	readTask  conn
)

// Run implements gnet.Runnable. Loop only.
func (t *flushTask) Run(context.Context) error {
	(*conn)(t).flush(true)
	return nil
}

// Run implements gnet.Runnable. Loop only.
func (t *readTask) Run(context.Context) error {
	(*conn)(t).readTask()
	return nil
}

// cloneAddr deep-copies a TCP address: gnet returns the zone's bytes to a
// pool when the connection is released.
func cloneAddr(a net.Addr) net.Addr {
	if t, ok := a.(*net.TCPAddr); ok && t != nil {
		return &net.TCPAddr{IP: slices.Clone(t.IP), Port: t.Port, Zone: strings.Clone(t.Zone)}
	}
	return a
}

// ID implements Conn. Safe from any goroutine.
func (c *conn) ID() uint64 { return c.id }

// RemoteAddr implements Conn. Safe from any goroutine.
func (c *conn) RemoteAddr() net.Addr { return c.remote }

// LocalAddr implements Conn. Safe from any goroutine.
func (c *conn) LocalAddr() net.Addr {
	if !c.local.IsValid() {
		return nil
	}
	return net.TCPAddrFromAddrPort(c.local)
}

// Write implements Conn. Safe from any goroutine.
func (c *conn) Write(b []byte) error { return c.write(b, nil) }

// WriteNotify implements Conn. Safe from any goroutine.
func (c *conn) WriteNotify(b []byte, done func(error)) error { return c.write(b, done) }

// write appends b (copied) to the queue. Appending under mu gives one total
// order over all writers that respects each goroutine's program order; the
// loop sends the queue in that order.
func (c *conn) write(b []byte, done func(error)) error {
	c.mu.Lock()
	if c.closed || c.closing {
		err := ErrClosed
		if errors.Is(c.cause, ErrOutboundFull) {
			err = ErrOutboundFull
		}
		c.mu.Unlock()
		return err
	}
	if used := c.pendingLen + len(b); used > c.l.maxOutbound {
		c.cutLocked(ErrOutboundFull)
		_ = c.gc.Close() // posts the close to the loop; under mu, see post
		c.mu.Unlock()
		c.logOutboundFull(used)
		return ErrOutboundFull
	}
	c.pending = appendChunked(c.pending, b)
	c.pendingLen += len(b)
	if done != nil {
		c.dones = append(c.dones, done)
	}
	if !c.flushScheduled && !c.inCallback {
		c.flushScheduled = true
		c.post()
	}
	c.mu.Unlock()
	return nil
}

// Close implements Conn. Safe from any goroutine.
func (c *conn) Close() error {
	c.mu.Lock()
	if c.closed || c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	c.mu.Unlock()
	c.requestFlush()
	return nil
}

// requestFlush posts a flush to the loop unless one is pending or the loop
// will flush on its own when the current callback returns. Safe from any
// goroutine.
func (c *conn) requestFlush() {
	c.mu.Lock()
	if !c.closed && !c.flushScheduled && !c.inCallback {
		c.flushScheduled = true
		c.post()
	}
	c.mu.Unlock()
}

// post queues c.flush on the connection's event loop. c.mu must be held and
// c.closed false.
//
// Holding mu is what makes posting safe against engine shutdown: gnet closes
// a poller's wake-up eventfd after its loop has exited but before it marks
// the engine shut down, so a task posted in that window would write to a
// closed (and possibly reused) descriptor. A loop's last act is to close its
// connections, and OnClose sets c.closed under mu; so while mu is held with
// c.closed false the loop has not exited and its eventfd is open. The same
// holds for gnet's Conn.Close, which posts the same way.
//
// If the engine is shutting down the task is refused; the loop then closes
// every connection and OnClose settles the queue, so the error needs no
// handling here.
func (c *conn) post() {
	_ = c.gc.EventLoop().Execute(context.Background(), (*flushTask)(c))
}

// cutLocked marks the connection dead with cause and drops its queue; the
// caller then has gnet close it. WriteNotify callbacks stay queued for
// OnClose to fail on the loop. c.mu must be held.
func (c *conn) cutLocked(cause error) {
	c.closed = true
	if c.cause == nil || errors.Is(cause, ErrOutboundFull) || errors.Is(cause, ErrHandlerPanic) {
		c.cause = cause
	}
	putChunks(c.pending)
	c.pending, c.pendingLen, c.spare = nil, 0, nil
}

// chunks are the pooled chunkBytes buffers of outbound queues.
var chunks = sync.Pool{New: func() any { return new([chunkBytes]byte) }}

// appendChunked appends b to the chunk list q: into the last chunk when it
// fits, else into a new one (a pooled chunk, or one of b's size when b is
// larger).
func appendChunked(q [][]byte, b []byte) [][]byte {
	if n := len(q); n > 0 {
		if last := q[n-1]; cap(last)-len(last) >= len(b) {
			q[n-1] = append(last, b...)
			return q
		}
	}
	var c []byte
	if len(b) <= chunkBytes {
		c = chunks.Get().(*[chunkBytes]byte)[:0]
	} else {
		c = make([]byte, 0, len(b))
	}
	return append(q, append(c, b...))
}

// putChunks returns q's pooled chunks to the pool; q must not be used after.
func putChunks(q [][]byte) {
	for i, c := range q {
		if cap(c) == chunkBytes {
			chunks.Put((*[chunkBytes]byte)(c[:chunkBytes]))
		}
		q[i] = nil
	}
}

// writeChunks hands q to gnet, maxIovec chunks per writev; gnet copies what
// the kernel does not take into its own buffer. q's entries are left as
// they were (gnet reslices the ones it is given), so the caller may return
// them to the pool.
func (c *conn) writeChunks(q [][]byte) error {
	for len(q) > 0 {
		if len(q) == 1 {
			// One chunk (the usual batch): no iovec to build or keep.
			_, err := c.gc.Write(q[0])
			return err
		}
		// Several chunks: a burst past chunkBytes, where an iovec made
		// per writev costs little next to the bytes (and an idle
		// connection keeps none).
		n := min(len(q), maxIovec)
		_, err := c.gc.Writev(slices.Clone(q[:n]))
		if err != nil {
			return err
		}
		q = q[n:]
	}
	return nil
}

// flush hands the queue to gnet, enforces the outbound cap, runs the
// WriteNotify callbacks whose bytes have left gnet's buffer and advances a
// pending Close. Loop only. fromTask is true when run as the task posted by
// post (a Write, a Close, or the poll timer).
func (c *conn) flush(fromTask bool) {
	c.mu.Lock()
	if fromTask {
		c.flushScheduled = false
	}
	if c.gone || c.closed {
		c.mu.Unlock()
		return
	}
	batch, batchLen, dones := c.pending, c.pendingLen, c.dones
	c.pending, c.pendingLen, c.spare = c.spare, 0, nil
	c.dones, c.spareDones = c.spareDones, nil
	closing := c.closing
	c.mu.Unlock()

	// The batch's callbacks wait until its last byte has left gnet's
	// buffer. They join the waiting list before the Write so that, should
	// gnet close the connection from inside it, onClose settles them in
	// order with the rest.
	end := c.handed + int64(batchLen)
	if len(dones) > 0 {
		sl := c.slow()
		if sl.wHead == len(sl.waiting) {
			sl.pollDelay = 0 // a new wait: poll soon
		}
		for _, d := range dones {
			sl.waiting = append(sl.waiting, waiter{end: end, done: d})
		}
		clear(dones)
	}
	var err error
	before := c.gc.OutboundBuffered()
	if batchLen > 0 {
		// gnet writes what the kernel takes and copies the rest into its
		// own outbound buffer, which it flushes on writable events, in order.
		// On a write error it closes the connection from inside Writev
		// (OnClose has then run and c.gone is set).
		if err = c.writeChunks(batch); err == nil {
			c.handed = end
		}
	}
	putChunks(batch)
	c.flushPaused(before)
	cut, used, buffered := false, 0, 0
	if !c.gone {
		buffered = c.gc.OutboundBuffered()
		c.mu.Lock()
		// gnet's buffer is only readable on the loop, so the exact cap check
		// is here; Write checks only the queue it can see.
		used = buffered + c.pendingLen
		if err == nil && used > c.l.maxOutbound && !c.closed {
			err = ErrOutboundFull
		}
		if err != nil && !c.closed {
			cut = true
			c.cutLocked(err)
		}
		c.mu.Unlock()
	}
	// On a cut the waiting callbacks are left to onClose, which follows.
	if !c.gone && !cut {
		if perr := c.settle(buffered); perr != nil {
			cut = true
			c.mu.Lock()
			c.cutLocked(perr)
			c.mu.Unlock()
		}
	}

	c.mu.Lock()
	if !c.closed && c.spare == nil && cap(batch) <= maxIovec {
		c.spare = batch[:0]
	}
	if c.spareDones == nil && dones != nil {
		c.spareDones = dones[:0]
	}
	c.mu.Unlock()

	switch {
	case c.gone:
	case cut:
		if errors.Is(err, ErrOutboundFull) {
			c.logOutboundFull(used)
		}
		_ = c.gc.Close() // on the loop, which is running: no need for mu
	case closing:
		c.drain()
	default:
		c.watchOutbound(buffered)
		if c.hasWaiting() {
			c.armPoll()
		}
	}
}

// settle runs, in order and with nil, the waiting WriteNotify callbacks
// whose bytes have all left gnet's outbound buffer, given buffered, what
// OutboundBuffered reports now. A panicking callback is logged and the
// first such error returned so the caller can cut the connection; the
// callbacks after it still run. Loop only.
func (c *conn) settle(buffered int) (perr error) {
	sl := c.sl
	if sl == nil {
		return nil // nothing ever waited
	}
	sent := c.handed - int64(buffered)
	ran := false
	for sl.wHead < len(sl.waiting) && sl.waiting[sl.wHead].end <= sent {
		d := sl.waiting[sl.wHead].done
		sl.waiting[sl.wHead] = waiter{}
		sl.wHead++
		ran = true
		if err := c.callDone(d, nil); err != nil && perr == nil {
			perr = err
		}
	}
	if ran {
		sl.pollDelay = 0 // the reader is taking bytes: poll soon again
	}
	sl.compactWaiting()
	return perr
}

// compactWaiting drops the callbacks already run from the front of the
// waiting list. Loop only.
func (sl *connSlow) compactWaiting() {
	switch {
	case sl.wHead == len(sl.waiting):
		if cap(sl.waiting) > maxSpareWaiters {
			sl.waiting = nil
		} else {
			sl.waiting = sl.waiting[:0]
		}
		sl.wHead = 0
	case sl.wHead >= 64 && 2*sl.wHead >= len(sl.waiting):
		n := copy(sl.waiting, sl.waiting[sl.wHead:])
		clear(sl.waiting[n:])
		sl.waiting = sl.waiting[:n]
		sl.wHead = 0
	}
}

// armPoll has the loop flush again after the current back-off, to look at
// gnet's outbound buffer: gnet reports neither a drained buffer nor a
// writable event. At most one poll is pending. Loop only.
func (c *conn) armPoll() {
	if !c.pollArmed.CompareAndSwap(false, true) {
		return
	}
	sl := c.slow()
	sl.pollDelay = min(max(2*sl.pollDelay, pollMin), pollMax)
	if sl.pollT == nil {
		sl.pollT = time.AfterFunc(sl.pollDelay, c.pollFired)
		return
	}
	sl.pollT.Reset(sl.pollDelay)
}

// pollFired runs on the timer's goroutine: it posts a flush, which does
// nothing once the connection is closed.
func (c *conn) pollFired() {
	c.pollArmed.Store(false)
	c.requestFlush()
}

// drain closes the connection once gnet's outbound buffer is empty and,
// for a connection whose reading was paused, the input the kernel queued
// meanwhile has been read (and dropped), polling with back-off because gnet
// reports neither moment. Loop only; called when Close was requested and
// Wharf's queue is empty (and, the buffer being empty, the waiting
// callbacks have run).
func (c *conn) drain() {
	if c.rdPaused {
		// Read (and drop) input again; gnet watches EPOLLOUT again too. The
		// input the kernel queued while reading was paused must be read
		// before the close, or the close is an RST.
		c.syncRead(true) // sets inputLeft
		if c.gone {
			return
		}
	}
	sl := c.slow()
	now := int64(time.Since(procStart)) + 1 // never 0
	if sl.drainStart == 0 {
		sl.drainStart = now
	}
	timedOut := time.Duration(now-sl.drainStart) >= drainTimeout
	if c.gc.OutboundBuffered() == 0 && (sl.inputLeft <= 0 || timedOut) {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		if !timedOut && c.linger() {
			return
		}
		// Posted, not called: we may be inside a gnet callback (OnOpen,
		// OnTraffic), where closing the connection under gnet is unsafe.
		_ = c.gc.Close()
		return
	}
	if timedOut {
		unsent := c.gc.OutboundBuffered()
		c.mu.Lock()
		c.cutLocked(ErrDrainTimeout)
		c.mu.Unlock()
		c.l.log.Warn("close timed out with bytes unsent", "conn", c.id, "remote", c.remote.String(),
			"used", unsent, "timeout", drainTimeout)
		_ = c.gc.Close()
		return
	}
	c.armPoll()
}

// linger ends an orderly close the way a careful server does: it sends
// FIN after the bytes already queued (shutdown for writing), tells the
// handler the connection is over, and keeps reading and dropping input
// until the peer closes too or lingerTimeout passes. Closing the socket at
// once would make any input still in flight from the peer (what it wrote
// before it saw our last frame) arrive at a closed socket, and the kernel
// answers that with an RST, which destroys the replies the peer has not
// read yet: an ERROR frame, a CONNACK refusal. It reports false, leaving
// the close to the caller, if the socket cannot be half-closed. Loop only.
func (c *conn) linger() bool {
	if err := shutdownWrite(c.fd); err != nil {
		return false
	}
	c.lingering = true
	c.mu.Lock()
	cause := c.cause
	c.mu.Unlock()
	c.finish(cause)
	c.slow().lingerT = time.AfterFunc(lingerTimeout, c.lingerFired)
	return true
}

// lingerFired runs on the timer's goroutine when a lingering peer has not
// closed in time, and closes the socket. Holding mu with fdGone false
// means the loop has not exited (see post), so gnet's Close may post.
func (c *conn) lingerFired() {
	c.mu.Lock()
	if !c.fdGone {
		_ = c.gc.Close()
	}
	c.mu.Unlock()
}

// notify calls each WriteNotify callback with err; see callDone. Loop only.
func (c *conn) notify(dones []func(error), err error) (perr error) {
	for _, d := range dones {
		if e := c.callDone(d, err); e != nil && perr == nil {
			perr = e
		}
	}
	return perr
}

// callDone calls one WriteNotify callback, recovering a panic (a bug in the
// session), which it logs and returns. Loop only.
func (c *conn) callDone(d func(error), err error) error {
	return guard.Call(c, ErrHandlerPanic, "write_notify", func() { d(err) })
}

// onTraffic passes received bytes to the handler. Loop only.
func (c *conn) onTraffic(b []byte) gnet.Action {
	c.mu.Lock()
	if c.gone || c.closed || c.closing {
		// Closing: keep reading so the kernel's receive queue stays empty
		// (closing a socket with unread input sends RST, which can destroy
		// the replies still in flight to the peer), but drop the bytes.
		c.mu.Unlock()
		c.slow().inputLeft -= len(b)
		return gnet.None
	}
	c.inCallback = true
	c.mu.Unlock()

	err, perr := c.callOnData(b)
	if perr != nil {
		c.mu.Lock()
		c.inCallback = false
		c.cutLocked(perr)
		c.mu.Unlock()
		return gnet.Close
	}
	c.mu.Lock()
	c.inCallback = false
	if err != nil && !c.closing && !c.closed {
		// The handler has queued its protocol's error frame: send it, then
		// close. Handler.OnClose gets the handler's own error back.
		c.closing = true
		if c.cause == nil {
			c.cause = err
		}
	}
	c.mu.Unlock()
	c.flush(false)
	return gnet.None
}

// endCallback ends the factory callback in OnOpen: writes made during it are
// flushed now. Loop only.
func (c *conn) endCallback() {
	c.mu.Lock()
	c.inCallback = false
	c.mu.Unlock()
	c.flush(false)
}

// onClose settles the connection once gnet has closed it: every WriteNotify
// callback still waiting or queued runs, in write order, with nil if its
// bytes have left gnet's outbound buffer and with the close error
// otherwise; then Handler.OnClose runs, exactly once. gerr is gnet's last
// error (io.EOF wrapped for a peer's orderly close). Loop only.
func (c *conn) onClose(gerr error) {
	c.gone = true
	c.mu.Lock()
	wasClosed := c.closed
	c.closed = true
	c.fdGone = true
	if c.lingering {
		// The handler was told when the lingering began.
		c.mu.Unlock()
		c.sl.lingerT.Stop() // linger made sl
		if c.sl.pollT != nil {
			c.sl.pollT.Stop()
		}
		return
	}
	cause := c.cause
	pending, dones := c.pending, c.dones
	c.pending, c.pendingLen, c.dones, c.spare, c.spareDones = nil, 0, nil, nil, nil
	c.mu.Unlock()
	// gnet calls OnClose before it releases the buffer (and before its last
	// attempt to send it), so OutboundBuffered is still meaningful here.
	buffered := c.gc.OutboundBuffered()
	var waiting []waiter
	if sl := c.sl; sl != nil {
		waiting = sl.waiting[sl.wHead:]
		sl.waiting, sl.wHead = nil, 0
		if sl.pollT != nil {
			sl.pollT.Stop()
		}
	}

	if cause == nil {
		switch {
		case gerr != nil && !errors.Is(gerr, io.EOF):
			cause = gerr
		case gerr == nil && !wasClosed && c.l.closing.Load():
			cause = ErrListenerClosed
			if len(pending) > 0 {
				// Shutdown: hand what is queued to gnet, which makes one
				// non-blocking attempt to send it after this callback.
				_ = c.writeChunks(pending)
			}
		}
	}
	derr := cause
	if derr == nil {
		derr = ErrClosed
	}
	// A panic is logged; the connection is already gone.
	sent := c.handed - int64(buffered)
	for _, w := range waiting {
		werr := derr
		if w.end <= sent {
			werr = nil
		}
		_ = c.callDone(w.done, werr)
	}
	_ = c.notify(dones, derr)
	c.finish(cause)
}

// finish tells the handler the connection is over. Loop only, once.
func (c *conn) finish(cause error) {
	c.callOnClose(cause)
	if c.l.log.Enabled(context.Background(), debugLevel) {
		c.l.log.Debug("connection closed", "conn", c.id, "remote", c.remote.String(), "err", cause)
	}
}

// callFactory builds the Handler, recovering a panic. Loop only.
func (c *conn) callFactory() (Handler, bool) {
	return guard.Factory(c, ErrHandlerPanic, func() Handler { return c.l.factory(c) })
}

// callOnData runs Handler.OnData, turning a panic into perr. Loop only.
func (c *conn) callOnData(b []byte) (err, perr error) {
	perr = guard.Call(c, ErrHandlerPanic, "on_data", func() { err = c.h.OnData(b) })
	return err, perr
}

// callOnClose runs Handler.OnClose, logging a panic. Loop only.
func (c *conn) callOnClose(cause error) {
	_ = guard.Call(c, ErrHandlerPanic, "on_close", func() { c.h.OnClose(cause) })
}

// LogError writes an error line naming the connection (guard.Logger).
func (c *conn) LogError(msg string, args ...any) {
	c.l.log.Error(msg, append([]any{"conn", c.id, "remote", c.remote.String()}, args...)...)
}

// logOutboundFull reports a connection cut for exceeding the outbound cap,
// at most once per second per listener.
func (c *conn) logOutboundFull(used int) {
	if ok, suppressed := c.l.outboundFull.Allow(time.Now()); ok {
		c.l.log.Warn("outbound limit exceeded, slow consumer cut", "conn", c.id, "remote", c.remote.String(),
			"limit", c.l.maxOutbound, "used", used, "suppressed", suppressed)
	}
}
