package client

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"wharf/protocols/openwire/wire"
)

// Producer sends messages to one destination, or to each message's own
// destination when anonymous.
type Producer struct {
	s      *Session
	id     *wire.ProducerId
	dest   *wire.Destination
	seq    atomic.Int64 // last ProducerSequenceId used
	closed atomic.Bool
}

// ID returns the producer id.
func (p *Producer) ID() *wire.ProducerId { return p.id }

// Destination returns the producer's destination, nil when anonymous.
func (p *Producer) Destination() *wire.Destination { return p.dest }

// Send sends m. Like a JMS send it fills in m's identity: MessageId
// (producer id and sequence), ProducerId, Destination (the producer's, or
// m's own for an anonymous producer), TransactionId (the session's
// transaction), Timestamp (now, unless set) and RedeliveryCounter (0). The
// caller owns the other headers, the properties and the body, and must not
// touch m until Send returns.
//
// With sync set the message goes with ResponseRequired and Send waits for
// the broker's Response, which ActiveMQ sends once a persistent message is
// stored; the Java client sends persistent messages outside transactions
// this way by default, and everything else asynchronously. ctx bounds the
// wait for the Response, not the write.
func (p *Producer) Send(ctx context.Context, m *wire.Message, sync bool) error {
	return p.send(ctx, m, sync, false)
}

// Forward sends m as a network bridge forwards a message it consumed
// (ActiveMQ's DemandForwardingBridgeSupport.configureMessage): its
// MessageId, Timestamp, RedeliveryCounter and BrokerPath stay as the
// caller set them; ProducerId becomes this producer's, Destination the
// producer's when it has one, and TransactionId the session's (none
// outside a transaction). sync is Send's.
func (p *Producer) Forward(ctx context.Context, m *wire.Message, sync bool) error {
	if m.MessageId == nil {
		return fmt.Errorf("%w: a forwarded message needs its MessageId", ErrBadMessage)
	}
	return p.send(ctx, m, sync, true)
}

func (p *Producer) send(ctx context.Context, m *wire.Message, sync, keepID bool) error {
	if p.closed.Load() {
		return ErrClosed
	}
	s := p.s
	if err := s.checkOpen(); err != nil {
		return err
	}
	dest := p.dest
	if dest == nil {
		dest = m.Destination
	}
	if dest == nil {
		return ErrNoDestination
	}
	c := s.c
	m.ProducerId = p.id
	m.Destination = dest
	if !keepID {
		m.MessageId = &wire.MessageId{ProducerId: p.id, ProducerSequenceId: p.seq.Add(1)}
		if m.Timestamp == 0 {
			m.Timestamp = time.Now().UnixMilli()
		}
		m.RedeliveryCounter = 0
	}
	m.CommandId, m.ResponseRequired = c.nextID(), sync
	var ch chan wire.DataStructure
	if sync {
		var err error
		if ch, err = c.expect(m.CommandId); err != nil {
			return err
		}
	}
	err := c.locked(func() error {
		m.TransactionId = nil
		if s.transacted {
			tx, err := s.txLocked()
			if err != nil {
				return err
			}
			m.TransactionId = tx
		}
		return c.writeLocked(m)
	})
	if err != nil || !sync {
		if sync {
			c.unexpect(m.CommandId)
		}
		return err
	}
	_, err = c.await(ctx, m, ch)
	return err
}

// Close closes the producer (RemoveInfo, answered by Response).
func (p *Producer) Close() error {
	if p.closed.Swap(true) {
		return nil
	}
	s := p.s
	s.mu.Lock()
	delete(s.producers, p)
	s.mu.Unlock()
	if err := s.c.checkOpen(); err != nil {
		return nil
	}
	_, err := s.c.requestDefault(&wire.RemoveInfo{ObjectId: p.id, LastDeliveredSequenceId: lastDeliveredUnknown})
	return err
}
