package openwire

import (
	"sync"
	"sync/atomic"

	"wharf/engine"
)

// Outbound flow: the bytes a connection's consumers may have queued in the
// transport, unwritten, are bounded well below the transport's cap
// (transport.DefaultMaxOutboundBytes, 64 MiB), which cuts the connection
// as a slow consumer when exceeded.
//
// A consumer's prefetch bounds its unacknowledged deliveries, not their
// bytes: ten topic subscribers with the Java client's default of 32,767
// may be dispatched 360 MB of 1 KiB messages, all queued at once for a
// client that reads slower than the broker encodes (the JMS fan-out of
// bench-compare was cut so once the broker dispatched faster; issue 18).
// ActiveMQ's dispatch blocks on the socket instead. Here, once more than
// flowHigh bytes are unwritten, a consumer that is dispatched to gives
// back the credit it has not used (Revoke), so that what it would have
// been sent waits in the engine, where memory limits and producer flow
// control account for it; acks still return credit one by one, so
// dispatch continues at the pace the client consumes. When the unwritten
// bytes fall below flowLow the credit is given back (AddCredit).
//
// What is unwritten is known from marks: every flowMarkEvery bytes a
// WriteNotify with no bytes, whose callback runs once everything queued
// before it has left the transport's buffer.
const (
	flowHigh      = 16 << 20
	flowLow       = 4 << 20
	flowMarkEvery = 1 << 20
)

// outFlow is a connection's outbound accounting, made with its first
// consumer (a connection without consumers keeps none).
type outFlow struct {
	sent    atomic.Int64 // bytes handed to the transport since the flow was made
	written atomic.Int64 // of those, bytes known to have left its buffer
	markAt  int64        // sent at which the next mark is due; under writeMu

	mu        sync.Mutex
	throttled []throttled // consumers holding back credit
}

// throttled is a consumer holding back credit, and its subscription (the
// consumer's own field is not set while Subscribe delivers a backlog).
type throttled struct {
	c   *consumer
	sub *engine.Subscription
}

// unwritten is an upper bound on the bytes queued and not yet written.
func (f *outFlow) unwritten() int64 { return f.sent.Load() - f.written.Load() }

// accountWrite accounts n bytes just handed to the transport and, every
// flowMarkEvery bytes, queues a mark behind them. s.writeMu must be held,
// so that the mark follows the bytes it counts.
func (s *session) accountWrite(f *outFlow, n int) {
	sent := f.sent.Add(int64(n))
	if sent < f.markAt {
		return
	}
	f.markAt = sent + flowMarkEvery
	_ = s.tc.WriteNotify(nil, func(error) {
		// Marks complete in order; on a closed connection too, which
		// lets the throttled consumers go (their credit no longer
		// matters).
		f.written.Store(sent)
		if f.unwritten() < flowLow {
			f.release()
		}
	})
}

// throttle makes c give back its unused credit while the connection's
// unwritten bytes are over flowHigh. Called after a delivery to c on sub.
func (c *consumer) throttle(f *outFlow, sub *engine.Subscription) {
	if f.unwritten() <= flowHigh || c.borrowed.Load() != 0 {
		return
	}
	var n int64
	for sub.Revoke() {
		n++
	}
	if n == 0 {
		return
	}
	f.mu.Lock()
	c.borrowed.Add(n)
	f.throttled = append(f.throttled, throttled{c, sub})
	f.mu.Unlock()
	// A mark may have completed between the check and the list: the
	// credit must not wait for one that never comes.
	if f.unwritten() < flowLow {
		f.release()
	}
}

// release gives the throttled consumers their credit back.
func (f *outFlow) release() {
	f.mu.Lock()
	cs := f.throttled
	f.throttled = nil
	f.mu.Unlock()
	for _, t := range cs {
		if n := t.c.borrowed.Swap(0); n > 0 {
			t.sub.AddCredit(int(n))
		}
	}
}
