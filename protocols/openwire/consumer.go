package openwire

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// The Java client's prefetch defaults (ActiveMQPrefetchPolicy); a consumer
// that sends exactly its kind's default gets the destination policy's value.
const (
	defaultQueuePrefetch   = 1000
	defaultTopicPrefetch   = 32767
	defaultDurablePrefetch = 100
	defaultBrowserPrefetch = 500
)

// consumer is one ConsumerInfo; it is the engine Sink of its subscription.
type consumer struct {
	s    *session
	id   *wire.ConsumerId
	dest *wire.Destination
	sub  *engine.Subscription

	// mu guards dispatched: appended by Deliver (shard goroutines), trimmed
	// by MessageAck (transport goroutine).
	mu         sync.Mutex
	dispatched []dispatched

	// borrowed is the credit the consumer holds back while the
	// connection's outbound is over its bound (outflow.go).
	borrowed atomic.Int64
}

// dispatched is a message the client holds and has not acknowledged.
type dispatched struct {
	msgID     string
	id        uint64 // engine delivery id
	delivered bool   // a DELIVERED ack already returned its credit
}

func (s *session) onConsumer(c *wire.ConsumerInfo) {
	if err := s.needConn(); err != nil {
		s.respond(c, err)
		return
	}
	if c.ConsumerId == nil || c.Destination == nil {
		s.respond(c, fmt.Errorf("%w: ConsumerInfo without a consumer id or destination", engine.ErrBadDestination))
		return
	}
	d := marshal.DestToEngine(c.Destination)
	spec := engine.SubSpec{
		Destination: d,
		Selector:    c.Selector,
		Prefetch:    int(c.PrefetchSize),
		AckMode:     engine.AckIndividual,
		DurableName: c.SubscriptionName,
		NoLocal:     c.NoLocal,
		Exclusive:   c.Exclusive,
		Priority:    c.Priority,
		Browser:     c.Browser,
		Retroactive: c.Retroactive,
	}
	if c.NetworkSubscription || c.AdditionalPredicate != nil {
		spec.Network = networkSpec(c)
	}
	switch {
	case c.Browser:
		spec.DefaultPrefetch = c.PrefetchSize == defaultBrowserPrefetch
	case !d.Type.IsTopic():
		spec.DefaultPrefetch = c.PrefetchSize == defaultQueuePrefetch
	case c.SubscriptionName != "":
		spec.DefaultPrefetch = c.PrefetchSize == defaultDurablePrefetch
	default:
		spec.DefaultPrefetch = c.PrefetchSize == defaultTopicPrefetch
	}
	cons := &consumer{s: s, id: c.ConsumerId, dest: c.Destination}
	if s.flow.Load() == nil {
		s.flow.Store(&outFlow{})
	}
	sub, err := s.conn.Subscribe(spec, cons)
	if err != nil {
		s.respond(c, err)
		return
	}
	cons.sub = sub
	key := c.ConsumerId.String()
	put(&s.consumers, key, cons)
	put(&s.jmsSessionOf(c.ConsumerId.ConnectionId, c.ConsumerId.SessionId).consumers, key, cons)
	s.respond(c, nil)
	if p := sub.Prefetch(); p != int(c.PrefetchSize) {
		// The policy replaced the client's default: tell it, as the broker
		// does with a ConsumerControl.
		s.send(&wire.ConsumerControl{ConsumerId: c.ConsumerId, Destination: c.Destination, Prefetch: int32(p)})
	}
}

func (s *session) closeConsumer(key string, c *consumer) {
	delete(s.consumers, key)
	if js := s.sessions[c.id.SessionId]; js != nil {
		delete(js.consumers, key)
	}
	if s.conn != nil {
		if err := s.conn.CloseSubscription(c.sub); err != nil {
			s.log.Debug("close consumer", "consumer", key, "err", err)
		}
	}
}

// Deliver sends a MessageDispatch. It runs on a shard goroutine.
func (c *consumer) Deliver(d engine.Delivery) {
	s := c.s
	if d.BrowseEnd {
		// A browser's end is a dispatch with no message.
		s.send(&wire.MessageDispatch{ConsumerId: c.id, Destination: c.dest})
		return
	}
	// The message is only encoded here: its kept form is used as it is
	// when this delivery changes nothing in it (shared).
	var w *wire.Message
	var shared bool
	var err error
	if v, ok := d.Msg.Props.Get("JMSXGroupFirstForConsumer"); ok && v.Bool() {
		if w, err = marshal.FromEngine(d.Msg, d.Redeliveries); err == nil {
			w.JMSXGroupFirstForConsumer = true
		}
	} else {
		w, shared, err = marshal.FromEngineShared(d.Msg, d.Redeliveries)
	}
	if err != nil {
		s.log.Warn("message cannot be sent over OpenWire", "msg_id", d.Msg.ID, "err", err)
		return
	}
	if !d.Sub.Spec().Browser { // d.Sub: c.sub is not set while Subscribe delivers the backlog
		// Acks name the id as the client saw it (MessageId.toString), which
		// is not always the engine's spelling of it.
		msgID := d.Msg.ID
		if w.MessageId != nil {
			var buf [128]byte
			if id := w.MessageId.AppendString(buf[:0]); string(id) != msgID {
				msgID = string(id)
			}
		}
		c.mu.Lock()
		c.dispatched = append(c.dispatched, dispatched{msgID: msgID, id: d.ID})
		c.mu.Unlock()
	}
	s.send(&wire.MessageDispatch{ConsumerId: c.id, Destination: w.Destination, Message: w, RedeliveryCounter: d.Redeliveries})
	// Encoded and written (the transport copies the bytes; the encoder's
	// marshal cache keeps ids and destinations, never the message).
	if !shared {
		marshal.Release(w)
	}
	if f := s.flow.Load(); f != nil && !d.Sub.Spec().Browser {
		c.throttle(f, d.Sub)
	}
}

// onAck applies a MessageAck to the range of dispatched messages it names
// (PrefetchSubscription.acknowledge). When it consumes messages and asks
// for a response (the Java client with jms.sendAcksAsync=false), the
// Response waits for the store: it goes out once the acknowledgement is on
// disk, as ActiveMQ's KahaDB syncs the journal write of an ack that asked
// for a response (KahaDBStore removeMessage), and onAck reports deferred.
// Otherwise the caller answers with err (a plain ack takes the fast path:
// written without a sync).
func (s *session) onAck(a *wire.MessageAck) (deferred bool, err error) {
	if err := s.needConn(); err != nil {
		return false, err
	}
	if a.ConsumerId == nil || a.LastMessageId == nil {
		return false, fmt.Errorf("MessageAck without a consumer or last message id")
	}
	// The ids are spelled into stack buffers: the lookups and comparisons
	// of string(bytes) below allocate nothing.
	var idBuf, firstBuf, lastBuf [128]byte
	c := s.consumers[string(a.ConsumerId.AppendString(idBuf[:0]))]
	if c == nil {
		return false, nil // the consumer is gone; its messages went back already
	}
	var first []byte
	if a.FirstMessageId != nil {
		first = a.FirstMessageId.AppendString(firstBuf[:0])
	}
	last := a.LastMessageId.AppendString(lastBuf[:0])
	tx := txKey(a.TransactionId)

	c.mu.Lock()
	lo, hi := -1, -1
	for i, p := range c.dispatched {
		if lo < 0 && (first == nil || p.msgID == string(first)) {
			lo = i
		}
		if p.msgID == string(last) {
			hi = i
			break
		}
	}
	if hi < 0 {
		c.mu.Unlock()
		s.log.Debug("ack matches no dispatched message", "ack_type", a.AckType, "last", string(last))
		return false, fmt.Errorf("Could not correlate acknowledgment with dispatched message: %s", last)
	}
	if a.AckType == wire.AckIndividual || lo < 0 {
		lo = hi
	}
	// The usual ack names one message or a short run: its copy stays on
	// the stack.
	var buf [8]dispatched
	batch := append(buf[:0], c.dispatched[lo:hi+1]...)
	consumed := a.AckType != wire.AckDelivered && a.AckType != wire.AckRedelivered
	if consumed {
		c.dispatched = removeDispatched(c.dispatched, lo, hi)
		if tx != "" && a.AckType != wire.AckPoison && a.AckType != wire.AckExpired {
			// If the transaction rolls back, the client redelivers these
			// itself and acks them again: keep them to put back.
			put(&s.txAcked, tx, append(s.txAcked[tx], txAckedBatch{c: c, batch: slices.Clone(batch)}))
		}
	} else if a.AckType == wire.AckDelivered {
		for i := lo; i <= hi; i++ {
			c.dispatched[i].delivered = true
		}
	}
	c.mu.Unlock()

	// DELIVERED and REDELIVERED acks store nothing.
	var join *ackJoin
	var comp engine.Completion
	if a.ResponseRequired && consumed {
		// One share per message, and one for this loop, so that the
		// Response cannot go out before every message is posted.
		join = &ackJoin{s: s, corr: a.CommandId}
		join.left.Store(int32(len(batch)) + 1)
		comp = join
	}
	for _, p := range batch {
		var e error
		switch a.AckType {
		case wire.AckDelivered:
			if !p.delivered {
				e = s.conn.MarkDelivered(c.sub, p.id)
			}
		case wire.AckRedelivered:
			e = s.conn.CountRedelivery(c.sub, p.id)
		case wire.AckPoison:
			e = s.conn.NackDurable(c.sub, p.id, engine.NackPoison, poisonCause(a.PoisonCause), comp, 0)
		case wire.AckExpired:
			e = s.conn.NackDurable(c.sub, p.id, engine.NackExpired, "", comp, 0)
		default: // STANDARD, INDIVIDUAL, UNMATCHED
			e = s.conn.AckDurable(c.sub, p.id, tx, comp, 0)
		}
		if e != nil && err == nil {
			err = e
		}
		if e != nil && join != nil {
			join.Complete(0, e) // the engine will not tell this share
		}
	}
	if join == nil {
		return false, err
	}
	join.Complete(0, nil)
	return true, nil
}

// removeDispatched removes list[lo:hi+1]. Acks come in dispatch order,
// so the run is usually at the front: the list is then resliced past it
// (the slots cleared, so that they keep no message id alive) instead of
// its remainder being copied down: with a topic's prefetch of 32,767 the
// copy moved the whole window on every ack (issue 18: 17 % of the
// broker's CPU in a JMS fan-out 1→10). append reallocates once the
// backing array's tail is used up, which drops the head with it.
func removeDispatched(list []dispatched, lo, hi int) []dispatched {
	if lo == 0 {
		clear(list[:hi+1])
		return list[hi+1:]
	}
	n := copy(list[lo:], list[hi+1:])
	clear(list[lo+n:])
	return list[:lo+n]
}

// ackJoin answers a MessageAck that asked for a response once the engine
// has told every message's share of it durable, with the first error.
type ackJoin struct {
	s     *session
	corr  int32 // the MessageAck's CommandId
	left  atomic.Int32
	mu    sync.Mutex
	first error
}

// Complete is told once per share; called from shard goroutines and from
// onAck.
func (j *ackJoin) Complete(_ uint64, err error) {
	if err != nil {
		j.mu.Lock()
		if j.first == nil {
			j.first = err
		}
		j.mu.Unlock()
	}
	if j.left.Add(-1) != 0 {
		return
	}
	j.mu.Lock()
	err = j.first
	j.mu.Unlock()
	if !j.s.closed.Load() {
		j.s.respondTo(j.corr, err)
	}
}

// poisonCause is the text ActiveMQ stores in dlqDeliveryFailureCause: the
// Throwable's toString ("class: message").
func poisonCause(t *wire.Throwable) string {
	if t == nil {
		return ""
	}
	if t.Message == "" {
		return t.ClassName
	}
	return t.ClassName + ": " + t.Message
}

// onPull serves MessagePull for a prefetch-0 consumer: one credit, and a
// dispatch with no message if nothing came within the timeout (-1: none
// waiting now; 0: wait for ever).
func (s *session) onPull(p *wire.MessagePull) {
	if p.ConsumerId == nil {
		return
	}
	c := s.consumers[p.ConsumerId.String()]
	if c == nil {
		return
	}
	c.sub.AddCredit(1)
	nothing := func() {
		if c.sub.Revoke() {
			s.send(&wire.MessageDispatch{ConsumerId: c.id, Destination: c.dest})
		}
	}
	switch {
	case p.Timeout < 0:
		c.sub.Sync()
		nothing()
	case p.Timeout > 0:
		s.timers.After(time.Duration(p.Timeout)*time.Millisecond, nothing)
	}
}

// txAckedBatch is what an ack inside a transaction took off a consumer's
// dispatched list.
type txAckedBatch struct {
	c     *consumer
	batch []dispatched
}

// restore puts rolled-back acknowledgements back on their consumers'
// dispatched lists, in delivery order.
func (s *session) restoreAcked(tx string) {
	for _, b := range s.txAcked[tx] {
		c := b.c
		c.mu.Lock()
		c.dispatched = append(c.dispatched, b.batch...)
		slices.SortFunc(c.dispatched, func(x, y dispatched) int { return cmp.Compare(x.id>>8, y.id>>8) })
		c.mu.Unlock()
	}
	delete(s.txAcked, tx)
}

// networkSpec reads a network bridge's ConsumerInfo (a duplex bridge's
// demand on this broker): its brokerPath, and its NetworkBridgeFilter
// (additionalPredicate), which ActiveMQ's subscriptions apply with the
// selector (AbstractSubscription); no filter: no hop limit.
func networkSpec(c *wire.ConsumerInfo) *engine.NetworkSpec {
	ns := &engine.NetworkSpec{MessageTTL: math.MaxInt32}
	for _, id := range c.BrokerPath {
		if id != nil {
			ns.BrokerPath = append(ns.BrokerPath, id.Value)
		}
	}
	// The original consumers, kept for the Consumer advisory
	// (duplicate suppression on other brokers).
	ns.ConsumerPath = marshal.ConsumerPathToEngine(c.NetworkConsumerPath)
	if f, ok := c.AdditionalPredicate.(*wire.NetworkBridgeFilter); ok {
		if f.NetworkBrokerId != nil {
			ns.RemoteBrokerID = f.NetworkBrokerId.Value
		}
		ttl := f.MessageTTL
		if ttl <= 0 {
			ttl = f.NetworkTTL // before v10
		}
		if ttl > 0 {
			ns.MessageTTL = int(ttl)
		}
	}
	return ns
}
