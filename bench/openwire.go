package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// owSession is a session over Wharf's OpenWire client.
type owSession struct {
	c          *client.Conn
	s          *client.Session
	persistent bool
	// producers holds one producer per destination, created on first
	// send: ActiveMQ accounts producer flow control per producer and
	// destination, so an anonymous producer would measure something else.
	producers map[dest]*client.Producer
}

func dialOpenWire(ctx context.Context, t Target, tc *tls.Config, timeout time.Duration, persistent, transacted bool) (session, error) {
	o := client.DefaultOptions()
	o.TLS = tc
	o.Username, o.Password = t.User, t.Password
	o.DialTimeout = timeout
	o.CloseTimeout = closeTimeout
	// Asynchronous broker errors surface as failed sends or receives.
	o.OnError = func(error) {}
	c, err := client.Dial(ctx, t.Addr, o)
	if err != nil {
		return nil, err
	}
	s, err := c.Session(transacted)
	if err != nil {
		c.Close()
		return nil, err
	}
	return &owSession{c: c, s: s, persistent: persistent, producers: map[dest]*client.Producer{}}, nil
}

func owDest(d dest) *wire.Destination {
	if d.topic {
		return wire.NewTopic(d.name)
	}
	return wire.NewQueue(d.name)
}

func (o *owSession) send(ctx context.Context, to dest, body []byte, replyTo *dest, sync bool) error {
	p := o.producers[to]
	if p == nil {
		var err error
		if p, err = o.s.Producer(owDest(to)); err != nil {
			return err
		}
		o.producers[to] = p
	}
	// The client encodes the message before Send returns, so body may be
	// reused for the next one.
	m := client.NewBytesMessage(body)
	m.Persistent = o.persistent
	if replyTo != nil {
		m.ReplyTo = owDest(*replyTo)
	}
	return p.Send(ctx, m, sync)
}

func (o *owSession) subscribe(_ context.Context, from dest, so subOptions) (subscription, error) {
	co := client.ConsumerOptions{Prefetch: so.prefetch}
	switch so.ack {
	case AckClient:
		co.AckMode = client.AckClient
	case AckIndividual:
		co.AckMode = client.AckIndividual
	}
	k, err := o.s.Consumer(owDest(from), co)
	if err != nil {
		return nil, err
	}
	return owSubscription{k}, nil
}

func (o *owSession) commit(context.Context) error { return o.s.Commit() }

func (o *owSession) done() <-chan struct{} { return o.c.Done() }

func (o *owSession) close() error {
	if err := o.c.Close(); err != nil && !errors.Is(err, client.ErrClosed) {
		return err
	}
	return nil
}

type owSubscription struct{ k *client.Consumer }

func (s owSubscription) receive(ctx context.Context) (delivery, error) {
	m, err := s.k.Receive(ctx)
	if err != nil {
		return delivery{}, err
	}
	body, err := m.Body(wire.Limits{})
	if err != nil {
		return delivery{}, err
	}
	d := delivery{body: body, handle: m}
	if r := m.ReplyTo; r != nil {
		t := r.DataStructureType()
		d.replyTo = &dest{name: r.PhysicalName, topic: t == wire.TypeActiveMQTopic || t == wire.TypeActiveMQTempTopic}
	}
	return d, nil
}

func (s owSubscription) ack(d delivery) error { return s.k.Ack(d.handle.(*wire.Message)) }
