package client

import (
	"context"
	"sync"
	"time"

	"wharf/protocols/openwire/wire"
)

// RemoveInfo.LastDeliveredSequenceId values.
const (
	lastDeliveredUnset   = -1 // nothing delivered: no redelivery counted
	lastDeliveredUnknown = -2 // RemoveInfo's default
)

// Consumer receives the messages the broker dispatches to it. Receive,
// Ack and Close are safe for concurrent use; concurrent Receives compete
// for messages.
type Consumer struct {
	s          *Session
	c          *Conn
	id         *wire.ConsumerId
	dest       *wire.Destination
	opts       ConsumerOptions
	transacted bool

	notify   chan struct{} // capacity 1: "the queue or state changed"
	closedCh chan struct{} // closed by dispose

	// mu guards the fields below. The reader goroutine appends to queue;
	// callers pop. Never held with another lock.
	mu sync.Mutex
	// queue holds dispatches not yet returned by Receive, oldest first.
	// Like the Java client's MessageDispatchChannel it is not capped: the
	// reader must never block (responses share the socket), and the broker
	// bounds it by the prefetch. Head index avoids shifting.
	queue      []*wire.MessageDispatch
	head       int
	prefetch   int32 // current prefetch (ConsumerControl may change it)
	overflowed bool  // warned once about dispatch beyond prefetch
	// delivered are messages returned by Receive and not yet acknowledged
	// (client and individual modes, and transacted sessions), oldest first.
	delivered []delivery
	// sinceDeliveredAck counts deliveries not yet reported by a DELIVERED
	// ack; firstUnreported is the oldest of them.
	sinceDeliveredAck int32
	firstUnreported   *wire.MessageId
	// lastDelivered is the BrokerSequenceId of the last message Receive
	// returned, for RemoveInfo.LastDeliveredSequenceId.
	lastDelivered int64
	pulling       bool  // a MessagePull is outstanding (prefetch 0)
	browseDone    bool  // a browser saw the end-of-browse dispatch
	err           error // set when closed
}

type delivery struct {
	md *wire.MessageDispatch
}

func newConsumer(s *Session, id *wire.ConsumerId, dest *wire.Destination, o ConsumerOptions, prefetch int32) *Consumer {
	return &Consumer{
		s: s, c: s.c, id: id, dest: dest, opts: o, transacted: s.transacted,
		notify:        make(chan struct{}, 1),
		closedCh:      make(chan struct{}),
		prefetch:      prefetch,
		lastDelivered: lastDeliveredUnset,
	}
}

// ID returns the consumer id.
func (k *Consumer) ID() *wire.ConsumerId { return k.id }

// Destination returns the destination the consumer was opened on.
func (k *Consumer) Destination() *wire.Destination { return k.dest }

func (k *Consumer) wake() {
	select {
	case k.notify <- struct{}{}:
	default:
	}
}

// dispatch queues md; called by the reader goroutine.
func (k *Consumer) dispatch(md *wire.MessageDispatch) {
	k.mu.Lock()
	if k.err != nil {
		k.mu.Unlock()
		return
	}
	if k.prefetch == 0 {
		k.pulling = false
	}
	k.queue = append(k.queue, md)
	over := !k.overflowed && k.prefetch > 0 && len(k.queue)-k.head > int(k.prefetch)
	if over {
		k.overflowed = true
	}
	k.mu.Unlock()
	if over {
		k.c.log.Warn("dispatch beyond prefetch", "sub", k.id.String(), "limit", k.prefetch)
	}
	k.wake()
}

// control applies a ConsumerControl; called by the reader goroutine. As
// ActiveMQConnection.onConsumerControl: Close closes the consumer, anything
// else sets its prefetch (0 turns it into a pulling consumer).
func (k *Consumer) control(cc *wire.ConsumerControl) {
	if cc.Close {
		k.dispose(ErrConsumerClosedByBroker)
		return
	}
	k.mu.Lock()
	k.prefetch = cc.Prefetch
	k.mu.Unlock()
	k.wake()
}

// pop takes the oldest queued dispatch; k.mu must be held.
func (k *Consumer) pop() *wire.MessageDispatch {
	if k.head == len(k.queue) {
		return nil
	}
	md := k.queue[k.head]
	k.queue[k.head] = nil
	k.head++
	if k.head == len(k.queue) {
		k.queue, k.head = k.queue[:0], 0
	}
	return md
}

// Receive returns the next message, waiting until one arrives, ctx ends, or
// the consumer or connection closes. A prefetch-0 consumer first asks for
// one with MessagePull: Timeout is the time left before ctx's deadline (0,
// wait forever, without one); ActiveMQ answers a pull it cannot serve in
// time with an empty MessageDispatch. A browser returns ErrBrowseDone after
// the last message.
//
// In AckAuto mode the message is acknowledged before Receive returns (one
// STANDARD MessageAck, asynchronous as in the Java client). A redelivered
// message has RedeliveryCounter > 0 (JMSRedelivered).
func (k *Consumer) Receive(ctx context.Context) (*wire.Message, error) {
	return k.receive(ctx, false)
}

// ReceiveNoWait returns a message only if one is available now, else
// (nil, nil). A prefetch-0 consumer asks the broker (MessagePull with
// Timeout -1) and waits, within ctx, for its answer, so an empty result
// means the broker had nothing for it; a prefetching consumer looks only at
// what was already dispatched.
func (k *Consumer) ReceiveNoWait(ctx context.Context) (*wire.Message, error) {
	return k.receive(ctx, true)
}

func (k *Consumer) receive(ctx context.Context, noWait bool) (*wire.Message, error) {
	noWaitPulled := false
	for {
		k.mu.Lock()
		if k.err != nil {
			err := k.err
			k.mu.Unlock()
			return nil, err
		}
		md := k.pop()
		more := k.head < len(k.queue)
		var pull *wire.MessagePull
		if md == nil && k.browseDone {
			k.mu.Unlock()
			return nil, ErrBrowseDone
		}
		if md == nil && k.prefetch == 0 && !k.pulling && !noWaitPulled {
			timeout, err := pullTimeout(ctx, noWait)
			if err != nil {
				k.mu.Unlock()
				return nil, err
			}
			k.pulling = true
			noWaitPulled = noWait
			pull = &wire.MessagePull{ConsumerId: k.id, Destination: k.dest, Timeout: timeout}
		}
		if md != nil && md.Message == nil && k.opts.Browser {
			k.browseDone = true
		}
		k.mu.Unlock()
		if more {
			k.wake() // let a competing Receive take the next one
		}
		if md != nil {
			if md.Message == nil {
				if k.opts.Browser {
					return nil, ErrBrowseDone
				}
				// An unanswered pull ended.
				if noWait {
					return nil, nil
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				continue
			}
			return k.deliver(md)
		}
		if pull != nil {
			if err := k.c.oneway(pull); err != nil {
				return nil, err
			}
			continue
		}
		if noWait && !noWaitPulled {
			return nil, nil
		}
		select {
		case <-k.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-k.closedCh:
		case <-k.c.done:
			return nil, k.c.err
		}
	}
}

// pullTimeout is MessagePull.Timeout for ctx: -1 no wait, 0 forever, or
// the milliseconds left, rounded up.
func pullTimeout(ctx context.Context, noWait bool) (int64, error) {
	if noWait {
		return -1, nil
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, ctx.Err()
	}
	left := time.Until(dl)
	if left <= 0 {
		return 0, context.DeadlineExceeded
	}
	return int64((left + time.Millisecond - 1) / time.Millisecond), nil
}

// deliver hands md's message to the application and does the
// acknowledgement work of the mode.
func (k *Consumer) deliver(md *wire.MessageDispatch) (*wire.Message, error) {
	m := md.Message
	if md.RedeliveryCounter > m.RedeliveryCounter {
		m.RedeliveryCounter = md.RedeliveryCounter
	}
	if k.transacted {
		// The Java client opens the transaction at the first consumed
		// message; its acks go out at Commit.
		if err := k.s.beginIfNeeded(); err != nil {
			return nil, err
		}
	}
	k.mu.Lock()
	if m.MessageId != nil {
		k.lastDelivered = m.MessageId.BrokerSequenceId
	}
	if !k.transacted && k.opts.AckMode == AckAuto {
		k.mu.Unlock()
		ack := &wire.MessageAck{
			Destination: md.Destination, ConsumerId: k.id, AckType: wire.AckStandard,
			FirstMessageId: m.MessageId, LastMessageId: m.MessageId, MessageCount: 1,
		}
		if err := k.c.oneway(ack); err != nil {
			return nil, err
		}
		return m, nil
	}
	k.delivered = append(k.delivered, delivery{md})
	// ActiveMQMessageConsumer.ackLater: once half the prefetch is delivered
	// but unacknowledged, a DELIVERED ack lets the broker extend the
	// prefetch window, so a transaction or a client-ack batch may grow past
	// the prefetch.
	var ack *wire.MessageAck
	if k.prefetch > 0 {
		if k.sinceDeliveredAck == 0 {
			k.firstUnreported = m.MessageId
		}
		k.sinceDeliveredAck++
		if k.sinceDeliveredAck >= max(1, k.prefetch/2) {
			ack = &wire.MessageAck{
				Destination: md.Destination, ConsumerId: k.id, AckType: wire.AckDelivered,
				FirstMessageId: k.firstUnreported, LastMessageId: m.MessageId, MessageCount: k.sinceDeliveredAck,
			}
			k.sinceDeliveredAck, k.firstUnreported = 0, nil
		}
	}
	k.mu.Unlock()
	if ack != nil {
		if err := k.c.oneway(ack); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Ack acknowledges m, which this consumer delivered. AckClient: m and every
// earlier message this consumer delivered (one STANDARD MessageAck with
// FirstMessageId, LastMessageId and MessageCount); AckIndividual: m alone
// (INDIVIDUAL). The ack is asynchronous, as the Java client sends it by
// default; with Options.SyncAcks, Ack waits for the broker's Response. In
// AckAuto mode and in transacted sessions Ack does nothing.
func (k *Consumer) Ack(m *wire.Message) error {
	if k.transacted || k.opts.AckMode == AckAuto {
		return nil
	}
	k.mu.Lock()
	if k.err != nil {
		err := k.err
		k.mu.Unlock()
		return err
	}
	i := k.indexOf(m)
	if i < 0 {
		k.mu.Unlock()
		return ErrUnknownMessage
	}
	d := k.delivered[i]
	ack := &wire.MessageAck{Destination: d.md.Destination, ConsumerId: k.id, LastMessageId: d.md.Message.MessageId}
	if k.opts.AckMode == AckIndividual {
		ack.AckType, ack.MessageCount = wire.AckIndividual, 1
		k.delivered = append(k.delivered[:i], k.delivered[i+1:]...)
	} else {
		ack.AckType, ack.MessageCount = wire.AckStandard, int32(i+1)
		ack.FirstMessageId = k.delivered[0].md.Message.MessageId
		k.delivered = append(k.delivered[:0], k.delivered[i+1:]...)
	}
	k.mu.Unlock()
	if k.c.opts.SyncAcks {
		_, err := k.c.requestDefault(ack)
		return err
	}
	return k.c.oneway(ack)
}

// indexOf finds m in delivered, by identity or by message id; k.mu held.
func (k *Consumer) indexOf(m *wire.Message) int {
	for i, d := range k.delivered {
		if d.md.Message == m {
			return i
		}
	}
	for i, d := range k.delivered {
		if sameMessageID(d.md.Message.MessageId, m.MessageId) {
			return i
		}
	}
	return -1
}

func sameMessageID(a, b *wire.MessageId) bool {
	if a == nil || b == nil {
		return false
	}
	return a.String() == b.String()
}

// takeTxAck returns the STANDARD ack for everything delivered in the
// session's transaction, and forgets it; nil if nothing was delivered.
func (k *Consumer) takeTxAck() *wire.MessageAck {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := len(k.delivered)
	if n == 0 {
		return nil
	}
	last := k.delivered[n-1].md
	ack := &wire.MessageAck{
		Destination: last.Destination, ConsumerId: k.id, AckType: wire.AckStandard,
		FirstMessageId: k.delivered[0].md.Message.MessageId, LastMessageId: last.Message.MessageId,
		MessageCount: int32(n),
	}
	k.delivered = k.delivered[:0]
	return ack
}

// redeliverLocally puts the messages delivered in a rolled-back
// transaction back at the head of the queue, counting one more delivery
// (ActiveMQMessageConsumer.rollback).
func (k *Consumer) redeliverLocally() {
	k.mu.Lock()
	if len(k.delivered) == 0 {
		k.mu.Unlock()
		return
	}
	q := make([]*wire.MessageDispatch, 0, len(k.delivered)+len(k.queue)-k.head)
	for _, d := range k.delivered {
		d.md.Message.RedeliveryCounter++
		d.md.RedeliveryCounter = d.md.Message.RedeliveryCounter
		q = append(q, d.md)
	}
	q = append(q, k.queue[k.head:]...)
	k.queue, k.head = q, 0
	k.delivered = k.delivered[:0]
	k.sinceDeliveredAck, k.firstUnreported = 0, nil
	k.mu.Unlock()
	k.wake()
}

// dispose closes the consumer locally with err, drops its routing entry,
// and returns its LastDeliveredSequenceId.
func (k *Consumer) dispose(err error) int64 {
	last := k.closeLocal(err)
	k.c.mu.Lock()
	delete(k.c.consumers, keyOf(k.id))
	k.c.mu.Unlock()
	return last
}

// Close closes the consumer (RemoveInfo with LastDeliveredSequenceId,
// answered by Response). The broker redelivers what this consumer did not
// acknowledge; messages up to the last one Receive returned come back with
// their RedeliveryCounter incremented. Messages delivered in a transaction
// still open are left to the broker likewise (the Java client would defer
// the close to the transaction's end).
func (k *Consumer) Close() error {
	k.mu.Lock()
	if k.err != nil {
		k.mu.Unlock()
		return nil
	}
	k.mu.Unlock()
	last := k.closeLocal(ErrClosed)
	s := k.s
	s.mu.Lock()
	delete(s.consumers, k)
	s.mu.Unlock()
	c := k.c
	if err := c.checkOpen(); err != nil {
		c.mu.Lock()
		delete(c.consumers, keyOf(k.id))
		c.mu.Unlock()
		return nil
	}
	_, err := c.requestDefault(&wire.RemoveInfo{ObjectId: k.id, LastDeliveredSequenceId: last})
	c.mu.Lock()
	delete(c.consumers, keyOf(k.id))
	c.mu.Unlock()
	return err
}

// closeLocal marks the consumer closed with err (the first error wins),
// drops what it holds, and returns its LastDeliveredSequenceId. The
// connection's routing entry stays, so dispatches racing a RemoveInfo are
// dropped quietly.
func (k *Consumer) closeLocal(err error) int64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.err == nil {
		k.err = err
		close(k.closedCh)
		k.queue, k.head, k.delivered = nil, 0, nil
	}
	return k.lastDelivered
}
