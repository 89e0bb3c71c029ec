package client

import (
	"fmt"
	"sync"

	"wharf/protocols/openwire/wire"
)

// Session is a JMS session: a factory for producers and consumers and, when
// transacted, the scope of a local transaction. As in JMS, a transacted
// session's work should come from one goroutine at a time; the methods are
// nevertheless safe for concurrent use.
type Session struct {
	c          *Conn
	id         *wire.SessionId
	transacted bool

	// tx is the open local transaction, nil when none; guarded by c.wmu so
	// that its BEGIN is written before any frame that names it.
	tx *wire.LocalTransactionId

	mu        sync.Mutex // guards the fields below; never held with another lock
	consumers map[*Consumer]struct{}
	producers map[*Producer]struct{}
	closed    bool
}

// ID returns the session id.
func (s *Session) ID() *wire.SessionId { return s.id }

// Transacted reports whether the session is transacted.
func (s *Session) Transacted() bool { return s.transacted }

func (s *Session) checkOpen() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return s.c.checkOpen()
}

// txLocked returns the open transaction, beginning one if needed: the Java
// client begins lazily, with an asynchronous TransactionInfo BEGIN, at the
// first send or consumed message (TransactionContext.begin). c.wmu must be
// held.
func (s *Session) txLocked() (*wire.LocalTransactionId, error) {
	if s.tx != nil {
		return s.tx, nil
	}
	c := s.c
	tx := &wire.LocalTransactionId{Value: c.nextTxID.Add(1), ConnectionId: c.id}
	begin := &wire.TransactionInfo{
		BaseCommand:   wire.BaseCommand{CommandId: c.nextID()},
		ConnectionId:  c.id,
		TransactionId: tx,
		Type:          wire.TransactionBegin,
	}
	if err := c.writeLocked(begin); err != nil {
		return nil, err
	}
	s.tx = tx
	return tx, nil
}

// beginIfNeeded makes sure a transaction is open (transacted sessions only).
func (s *Session) beginIfNeeded() error {
	return s.c.locked(func() error {
		_, err := s.txLocked()
		return err
	})
}

// Producer opens a producer (ProducerInfo, answered by Response) for dest;
// a nil dest makes an anonymous producer whose messages name their own
// destination.
func (s *Session) Producer(dest *wire.Destination) (*Producer, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	c := s.c
	p := &Producer{
		s:    s,
		id:   &wire.ProducerId{ConnectionId: c.id.Value, SessionId: s.id.Value, Value: c.nextProducerID.Add(1)},
		dest: dest,
	}
	if _, err := c.requestDefault(&wire.ProducerInfo{ProducerId: p.id, Destination: dest}); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.producers[p] = struct{}{}
	return p, nil
}

// Consumer opens a consumer on dest (ConsumerInfo, answered by Response).
// Messages then arrive as MessageDispatch and wait in the consumer until
// Receive; the broker sends at most the prefetch ahead.
func (s *Session) Consumer(dest *wire.Destination, o ConsumerOptions) (*Consumer, error) {
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	if dest == nil {
		return nil, ErrNoDestination
	}
	prefetch, err := prefetchFor(dest, o)
	if err != nil {
		return nil, err
	}
	c := s.c
	k := newConsumer(s, &wire.ConsumerId{ConnectionId: c.id.Value, SessionId: s.id.Value, Value: c.nextConsumerID.Add(1)}, dest, o, prefetch)
	// Registered before ConsumerInfo is written: ActiveMQ may dispatch
	// before its Response.
	c.mu.Lock()
	c.consumers[keyOf(k.id)] = k
	c.mu.Unlock()
	info := &wire.ConsumerInfo{
		ConsumerId:       k.id,
		Browser:          o.Browser,
		Destination:      dest,
		PrefetchSize:     prefetch,
		DispatchAsync:    true, // ActiveMQConnection.dispatchAsync default
		Selector:         o.Selector,
		SubscriptionName: o.DurableName,
		NoLocal:          o.NoLocal,
		Exclusive:        o.Exclusive,
	}
	if n := o.Network; n != nil {
		info.NetworkSubscription = true
		info.Priority = n.Priority
		for _, id := range n.BrokerPath {
			info.BrokerPath = append(info.BrokerPath, &wire.BrokerId{Value: id})
		}
		info.AdditionalPredicate = &wire.NetworkBridgeFilter{
			NetworkBrokerId: &wire.BrokerId{Value: n.NetworkBrokerID},
			NetworkTTL:      int32(n.MessageTTL),
			MessageTTL:      int32(n.MessageTTL),
			ConsumerTTL:     int32(n.ConsumerTTL),
		}
	}
	if _, err := c.requestDefault(info); err != nil {
		c.mu.Lock()
		delete(c.consumers, keyOf(k.id))
		c.mu.Unlock()
		return nil, err
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.consumers[k] = struct{}{}
	}
	s.mu.Unlock()
	if closed {
		k.dispose(ErrClosed)
		return nil, ErrClosed
	}
	return k, nil
}

func prefetchFor(dest *wire.Destination, o ConsumerOptions) (int32, error) {
	switch {
	case o.Prefetch == PrefetchPull:
		return 0, nil
	case o.Prefetch < 0 || o.Prefetch > 1<<31-1:
		return 0, fmt.Errorf("openwire client: prefetch %d out of range", o.Prefetch)
	case o.Prefetch > 0:
		return int32(o.Prefetch), nil
	case o.Browser:
		return DefaultQueueBrowserPrefetch, nil
	case o.DurableName != "":
		return DefaultDurableTopicPrefetch, nil
	}
	switch dest.DataStructureType() {
	case wire.TypeActiveMQTopic, wire.TypeActiveMQTempTopic:
		return DefaultTopicPrefetch, nil
	}
	return DefaultQueuePrefetch, nil
}

func (s *Session) snapshotConsumers() []*Consumer {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Consumer, 0, len(s.consumers))
	for k := range s.consumers {
		out = append(out, k)
	}
	return out
}

// Commit commits the open transaction: for each consumer a STANDARD
// MessageAck in the transaction covering what it delivered, then
// TransactionInfo COMMIT_ONE_PHASE, answered by Response (the Java
// client's order). With no transaction open it sends nothing.
func (s *Session) Commit() error { return s.end(wire.TransactionCommitOnePhase) }

// Rollback rolls the open transaction back (TransactionInfo ROLLBACK,
// answered by Response). Messages received in it are redelivered locally,
// ahead of the others and with RedeliveryCounter incremented, as the Java
// client does: ActiveMQ keeps them dispatched to this consumer.
func (s *Session) Rollback() error { return s.end(wire.TransactionRollback) }

func (s *Session) end(kind byte) error {
	if !s.transacted {
		return ErrNotTransacted
	}
	if err := s.checkOpen(); err != nil {
		return err
	}
	consumers := s.snapshotConsumers()
	var acks []*wire.MessageAck
	if kind == wire.TransactionCommitOnePhase {
		for _, k := range consumers {
			if ack := k.takeTxAck(); ack != nil {
				acks = append(acks, ack)
			}
		}
	}
	err := s.endTx(kind, acks)
	if kind == wire.TransactionRollback {
		for _, k := range consumers {
			k.redeliverLocally()
		}
	}
	return err
}

// endTx writes acks and the ending TransactionInfo and waits for its
// Response.
func (s *Session) endTx(kind byte, acks []*wire.MessageAck) error {
	c := s.c
	for _, ack := range acks {
		ack.CommandId = c.nextID()
	}
	end := &wire.TransactionInfo{
		BaseCommand:  wire.BaseCommand{CommandId: c.nextID(), ResponseRequired: true},
		ConnectionId: c.id,
		Type:         kind,
	}
	ch, err := c.expect(end.CommandId)
	if err != nil {
		return err
	}
	sent := false
	err = c.locked(func() error {
		if s.tx == nil && len(acks) == 0 {
			return nil
		}
		tx, err := s.txLocked()
		if err != nil {
			return err
		}
		for _, ack := range acks {
			ack.TransactionId = tx
			if err := c.writeLocked(ack); err != nil {
				return err
			}
		}
		end.TransactionId = tx
		s.tx = nil
		sent = true
		return c.writeLocked(end)
	})
	if !sent || err != nil {
		c.unexpect(end.CommandId)
		return err
	}
	ctx, cancel := contextWithTimeout(requestTimeout)
	defer cancel()
	_, err = c.await(ctx, end, ch)
	return err
}

// Close closes the session: an open transaction is rolled back, then one
// RemoveInfo for the session (answered by Response) closes its producers
// and consumers at the broker, as the Java client does.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	var rbErr error
	if s.transacted {
		rbErr = s.Rollback()
	}
	last := s.dispose()
	c := s.c
	c.mu.Lock()
	delete(c.sessions, s)
	c.mu.Unlock()
	if err := c.checkOpen(); err != nil {
		return nil // the connection's end closed the session at the broker
	}
	if _, err := c.requestDefault(&wire.RemoveInfo{ObjectId: s.id, LastDeliveredSequenceId: last}); err != nil {
		return err
	}
	return rbErr
}

// dispose closes the session locally and returns the highest
// LastDeliveredSequenceId of its consumers (-1 if none delivered).
func (s *Session) dispose() int64 {
	s.mu.Lock()
	s.closed = true
	consumers := make([]*Consumer, 0, len(s.consumers))
	for k := range s.consumers {
		consumers = append(consumers, k)
	}
	producers := make([]*Producer, 0, len(s.producers))
	for p := range s.producers {
		producers = append(producers, p)
	}
	s.consumers, s.producers = map[*Consumer]struct{}{}, map[*Producer]struct{}{}
	s.mu.Unlock()
	last := int64(-1)
	for _, k := range consumers {
		last = max(last, k.dispose(ErrClosed))
	}
	for _, p := range producers {
		p.closed.Store(true)
	}
	return last
}
