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

// Pending is a message written with ResponseRequired whose Response has
// not been awaited yet (ForwardAsync).
type Pending struct {
	c  *Conn
	m  *wire.Message
	ch chan wire.DataStructure
}

// Wait waits for the Response to the pending message, as a synchronous
// send does: an ExceptionResponse becomes a *BrokerError. ctx bounds the
// wait.
func (pd *Pending) Wait(ctx context.Context) error {
	select {
	case r := <-pd.ch:
		// Arrived already: answered whatever ctx says (await would pick
		// between the two at random once ctx is done).
		if er, ok := r.(*wire.ExceptionResponse); ok {
			return brokerError(wire.TypeName(pd.m.DataStructureType()), er.Exception)
		}
		return nil
	default:
	}
	_, err := pd.c.await(ctx, pd.m, pd.ch)
	return err
}

// ForwardAsync is Forward with sync set, without the wait: it writes m
// with ResponseRequired and returns at once, and the caller waits for the
// Response with the Pending's Wait. A network bridge forwards this way,
// many messages in flight on the connection at once, as ActiveMQ's
// DemandForwardingBridgeSupport does with remoteBroker.asyncRequest.
func (p *Producer) ForwardAsync(m *wire.Message) (*Pending, error) {
	if m.MessageId == nil {
		return nil, fmt.Errorf("%w: a forwarded message needs its MessageId", ErrBadMessage)
	}
	ch, err := p.write(m, true, true)
	if err != nil {
		return nil, err
	}
	return &Pending{c: p.s.c, m: m, ch: ch}, nil
}

func (p *Producer) send(ctx context.Context, m *wire.Message, sync, keepID bool) error {
	ch, err := p.write(m, sync, keepID)
	if err != nil || !sync {
		return err
	}
	_, err = p.s.c.await(ctx, m, ch)
	return err
}

// write fills in m's identity and writes it; with sync, it returns the
// channel its Response comes on.
func (p *Producer) write(m *wire.Message, sync, keepID bool) (chan wire.DataStructure, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	s := p.s
	if err := s.checkOpen(); err != nil {
		return nil, err
	}
	dest := p.dest
	if dest == nil {
		dest = m.Destination
	}
	if dest == nil {
		return nil, ErrNoDestination
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
			return nil, err
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
	if err != nil {
		if sync {
			c.unexpect(m.CommandId)
		}
		return nil, err
	}
	return ch, nil
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
