package transport

import (
	"context"
	"fmt"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// Read pause: producer flow control (see doc.go, "Read pause").
//
// PauseReading and ResumeReading only record what was asked (pauseReq) and
// post readTask to the loop, which makes the socket match: paused, it is
// taken out of the epoll interest set of its loop (setInterest with neither
// read nor write), so the kernel's receive queue fills, the TCP window
// closes and the peer's sends block. Input gnet read before that stays in
// gnet's inbound buffer (OnTraffic does not consume it) and is delivered on
// resume.
//
// gnet puts the read interest back on its own in two places: conn.write
// when bytes are left over (ModReadWrite), and eventloop.write when its
// outbound buffer empties (ModRead). Both run only from our flush while
// paused, because a paused socket does not watch EPOLLOUT either: flush
// hands bytes to gnet, drives gnet's outbound buffer with gnet's Flush, and
// takes the read interest away again before the loop polls, so no read
// slips in between. The poll timer (armPoll) keeps flushing while gnet holds
// outbound bytes for a paused connection.

// maxHeldInboundBytes bounds the input gnet may hold for a paused connection
// where its socket cannot be taken out of the poller (off Linux, or gnet
// built with poll_opt), in bytes: beyond it the connection is cut with
// ErrInboundFull. 4 MiB: a few large frames, well above the one read (gnet's
// 64 KiB read buffer) that may land while a pause takes effect on Linux.
const maxHeldInboundBytes = 4 << 20

// PauseReading implements Conn. Safe from any goroutine.
func (c *conn) PauseReading() {
	if !c.pauseReq.Swap(true) {
		c.postReadTask()
	}
}

// ResumeReading implements Conn. Safe from any goroutine.
func (c *conn) ResumeReading() {
	if c.pauseReq.Swap(false) {
		c.postReadTask()
	}
}

// postReadTask posts readTask to the loop unless one is pending. It is
// posted under mu with c.closed false, for the reason given at post. Safe
// from any goroutine.
func (c *conn) postReadTask() {
	c.mu.Lock()
	if !c.closed && !c.readScheduled {
		c.readScheduled = true
		_ = c.gc.EventLoop().Execute(context.Background(), (*readTask)(c))
	}
	c.mu.Unlock()
}

// readTask applies the last PauseReading or ResumeReading. The flag is
// cleared before pauseReq is read, so a change made after that read posts a
// new task. Loop only.
func (c *conn) readTask() {
	c.mu.Lock()
	c.readScheduled = false
	closed, closing := c.closed, c.closing
	c.mu.Unlock()
	if c.gone || closed {
		return
	}
	c.syncRead(closing)
}

// syncRead pauses or resumes reading to match pauseReq. A closing
// connection is never paused: it must keep reading (and dropping) its input
// so that its close is a FIN, not an RST. Loop only.
func (c *conn) syncRead(closing bool) {
	want := c.pauseReq.Load() && !closing
	switch {
	case want && !c.rdPaused:
		c.pauseRead()
	case !want && c.rdPaused:
		c.resumeRead()
		if closing && !c.gone {
			// Measured after the held input was dropped: drain waits until
			// what the kernel queued while paused has been read.
			c.slow().inputLeft = unreadBytes(c.fd)
		}
	}
}

// pauseRead stops reading the socket, or, where it cannot, starts holding
// input in gnet's buffer. Loop only.
func (c *conn) pauseRead() {
	c.rdPaused = true
	c.rdHeld = !c.stopReads()
	c.lastOut = -1 // the next watchOutbound restarts the back-off
	c.watchOutbound(c.gc.OutboundBuffered())
}

// resumeRead watches the socket for reading again (with EPOLLOUT when gnet
// holds outbound bytes, as gnet's poller keeps it) and delivers at once the
// input gnet held meanwhile, which no event would otherwise announce. If
// OnData pauses again, the pause is applied before the loop polls. Loop
// only.
func (c *conn) resumeRead() {
	c.rdPaused = false
	if !c.rdHeld {
		if err := setInterest(c.epfd, c.fd, true, c.gc.OutboundBuffered() > 0); err != nil {
			// The socket is open and registered (we are on its loop and it
			// is not gone), so this is a bug; a connection never read again
			// would hang its peer, so cut it.
			c.mu.Lock()
			c.cutLocked(fmt.Errorf("resume reading: %w", err))
			c.mu.Unlock()
			_ = c.gc.Close()
			return
		}
	}
	c.rdHeld = false
	if c.gc.InboundBuffered() == 0 {
		return
	}
	b, _ := c.gc.Next(-1) // all held input; cannot fail for n <= 0
	if c.onTraffic(b) == gnet.Close {
		_ = c.gc.Close() // OnData panicked and the connection is cut; posted, as in drain
		return
	}
	if c.gone {
		return
	}
	c.mu.Lock()
	closing := c.closing || c.closed
	c.mu.Unlock()
	c.syncRead(closing)
}

// stopReads takes the socket out of its loop's read interest (and write
// interest: see watchOutbound), looking the loop's epoll descriptor up on
// first use. It reports false when that cannot be done, logging why. Loop
// only.
func (c *conn) stopReads() bool {
	if !c.rdLooked {
		c.rdLooked = true
		fd, err := pollerFD(c.gc.EventLoop())
		c.epfd = fd
		if err != nil {
			c.logHeld(err)
		}
	}
	if c.epfd < 0 {
		return false
	}
	if err := setInterest(c.epfd, c.fd, false, false); err != nil {
		c.epfd = -1
		c.logHeld(err)
		return false
	}
	return true
}

// watchOutbound keeps gnet's outbound buffer of a paused connection moving:
// the socket does not watch EPOLLOUT, so gnet would not flush it, and the
// poll timer has flush do it instead. The back-off restarts when the
// buffered count changes (the peer is reading, or new bytes spilled). Loop
// only.
func (c *conn) watchOutbound(buffered int) {
	if !c.rdPaused || c.rdHeld {
		return
	}
	if buffered != c.lastOut {
		c.lastOut = buffered
		c.slow().pollDelay = 0
	}
	if buffered > 0 {
		c.armPoll()
	}
}

// flushPaused runs in flush after the batch was handed to gnet, for a
// paused connection: it has gnet write its outbound buffer (gnet's Flush)
// and, when gnet touched the poller, takes the read interest away again.
// before is OutboundBuffered before the batch was handed over. gnet changes
// the interest set exactly when its buffer goes from empty to non-empty
// (conn.write: ModReadWrite) or from non-empty to empty (eventloop.write:
// ModRead). Loop only.
func (c *conn) flushPaused(before int) {
	if !c.rdPaused || c.rdHeld || c.gone {
		return
	}
	mid := c.gc.OutboundBuffered()
	if mid > 0 {
		_ = c.gc.Flush() // a write error closes the connection from inside (c.gone)
	}
	if c.gone {
		return
	}
	// Two transitions can cancel out in the counts but not in the poller:
	// a batch that spills into an empty buffer (ModReadWrite) and a Flush
	// that empties it again (ModRead) leave before and after both 0 and
	// the read interest back on, so any change at either step counts.
	after := c.gc.OutboundBuffered()
	if (before == 0) != (mid == 0) || (mid == 0) != (after == 0) {
		c.rdHeld = !c.stopReads()
	}
}

// holdInput is called by OnTraffic before it takes the input: it reports
// whether the input must stay in gnet's inbound buffer because reading is
// paused, and then what OnTraffic returns. A read can land after
// PauseReading and before readTask has run; this applies the pause at once.
// Loop only.
func (c *conn) holdInput() (held bool, act gnet.Action) {
	if !c.pauseReq.Load() {
		return false, gnet.None
	}
	c.mu.Lock()
	closing := c.closing || c.closed
	c.mu.Unlock()
	if closing {
		return false, gnet.None
	}
	switch {
	case !c.rdPaused:
		c.pauseRead()
	case !c.rdHeld:
		// gnet put the read interest back by a path flushPaused does not
		// cover: take it away again.
		c.rdHeld = !c.stopReads()
	}
	if c.rdHeld {
		if n := c.gc.InboundBuffered(); n > maxHeldInboundBytes {
			c.mu.Lock()
			c.cutLocked(ErrInboundFull)
			c.mu.Unlock()
			c.l.log.Warn("inbound limit exceeded while reading paused, connection cut", "conn", c.id,
				"remote", c.remote.String(), "limit", maxHeldInboundBytes, "used", n)
			return true, gnet.Close
		}
	}
	return true, gnet.None
}

// logHeld reports, at most once per interval per listener, that a pause
// holds input in memory instead of stopping the socket's reads.
func (c *conn) logHeld(err error) {
	if ok, suppressed := c.l.readHeld.Allow(time.Now()); ok {
		c.l.log.Warn("cannot stop reading a paused connection, input held in memory", "conn", c.id,
			"remote", c.remote.String(), "limit", maxHeldInboundBytes, "err", err, "suppressed", suppressed)
	}
}
