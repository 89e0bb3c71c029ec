package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"
)

// The AMQP 1.0 client of `wharf bench`, over github.com/Azure/go-amqp.
// Destinations are the addresses ActiveMQ's AMQP adapter reads:
// "queue://name" and "topic://name" (a bare name would be a queue), or
// with --amqp-addresses rabbitmq RabbitMQ's "/queue/name" and
// "/topic/name" (amqpOptions.address, set at link attach only). A body
// travels in one data section (AMQP 1.0 §3.2.6); --persistent sets
// header.durable (§3.2.1), which ActiveMQ maps to JMS PERSISTENT.
//
// Settlement (Config.Settle; AMQP 1.0 §2.6.12, §3.4):
//
//   - unsettled: producer links send unsettled (snd-settle-mode
//     unsettled) and the broker answers each transfer with an outcome. A
//     sync send waits for Accepted; an asynchronous one keeps up to
//     amqpMaxInFlight outcomes outstanding per connection. Consumer links
//     ask for unsettled deliveries, in rcv-settle-mode first, and accept
//     each message: on receipt with --ack auto, when the run acknowledges
//     it with client or individual.
//   - presettled: producer links send settled (snd-settle-mode settled):
//     a send returns once the transfer is written, and no outcome comes
//     back. Consumer links ask the broker for settled deliveries, which
//     take no disposition.
//
// Request/reply uses the run's per-requester reply queues (run.go), named
// in properties.reply-to as "queue://..."; a dynamic receiver would spare
// the name and nothing else.
//
// go-amqp has no API for transactions (AMQP 1.0 §4 needs a link to the
// broker's coordinator): Config.Validate refuses --tx.

// amqpMaxInFlight bounds the unsettled sends of one connection whose
// outcome has not come back, when sends are asynchronous: as for MQTT
// (mqttMaxInFlight), and as much as ActiveMQ grants a producer link
// (transport.producerCredit, 1000), past which a send waits for credit.
const amqpMaxInFlight = 1000

// amqpDefaultCredit is the link credit of a consumer when --prefetch is 0:
// Qpid JMS's default prefetch. go-amqp's own default, 1, would measure a
// round trip per message.
const amqpDefaultCredit = 1000

// amqpContainerSeq numbers the connections of this process, for their
// container-id (AMQP 1.0 §2.7.1), which names them in the broker's logs.
var amqpContainerSeq atomic.Int64

// amqpOptions are the run's settings an AMQP connection needs.
type amqpOptions struct {
	timeout time.Duration
	// tls, when set, connects over TLS (amqps://, ActiveMQ's amqp+ssl
	// connector).
	tls        *tls.Config
	persistent bool
	presettled bool
	// autoAccept accepts an unsettled delivery on receipt (--ack auto);
	// otherwise when the run acks it.
	autoAccept bool
	// rabbitMQ names destinations as RabbitMQ's AMQP 1.0 plugin does
	// (Config.AMQPAddresses); otherwise as ActiveMQ does.
	rabbitMQ bool
}

// amqpSession is one AMQP connection with one session on it: a sender
// link per destination it sends to, made on the first send, and a
// receiver link per subscription. go-amqp runs its own goroutines (reader
// and writer per connection, a mux per session and link); the session's
// owner goroutine calls send and subscribe, and owns senders and pending.
type amqpSession struct {
	c *amqp.Conn
	s *amqp.Session
	o amqpOptions

	senders map[dest]*amqp.Sender
	// pending are the asynchronous sends whose outcome has not been
	// looked at, oldest first: a ring of up to amqpMaxInFlight, n of
	// them from head.
	pending []amqpPending
	head, n int
}

// amqpPending is an unsettled send and where it went.
type amqpPending struct {
	receipt amqp.SendReceipt
	to      string
}

func dialAMQP(ctx context.Context, t Target, o amqpOptions) (session, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// SASL ANONYMOUS unless the URL names a user (RFC 4505, RFC 4616).
	sasl := amqp.SASLTypeAnonymous()
	if t.User != "" {
		sasl = amqp.SASLTypePlain(t.User, t.Password)
	}
	// go-amqp bounds the dial and the whole handshake (protocol headers,
	// SASL, open) by ctx.
	scheme := "amqp://"
	if o.tls != nil {
		scheme = "amqps://"
	}
	c, err := amqp.Dial(ctx, scheme+t.Addr, &amqp.ConnOptions{
		// "wba": MQTT client ids are "wb<pid>-<n>", and the broker takes
		// both as one namespace of client ids (as ActiveMQ does).
		ContainerID: fmt.Sprintf("wba%d-%d", os.Getpid(), amqpContainerSeq.Add(1)),
		SASLType:    sasl,
		TLSConfig:   o.tls,
	})
	if err != nil {
		return nil, fmt.Errorf("amqp connect: %w", err)
	}
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("amqp begin: %w", err)
	}
	return &amqpSession{c: c, s: s, o: o, senders: map[dest]*amqp.Sender{}}, nil
}

// amqpAddress is the ActiveMQ AMQP address of d.
func amqpAddress(d dest) string {
	if d.topic {
		return "topic://" + d.name
	}
	return "queue://" + d.name
}

// address is d's address on the broker: ActiveMQ's, or RabbitMQ's
// /queue/name and /topic/name.
func (o amqpOptions) address(d dest) string {
	if !o.rabbitMQ {
		return amqpAddress(d)
	}
	if d.topic {
		return "/topic/" + d.name
	}
	return "/queue/" + d.name
}

// durableQueue reports whether the links to or from d ask for a durable
// terminus: RabbitMQ's plugin declares the queue of /queue/name durable
// only then, and writes persistent messages to disk only in a durable
// queue. Its sender and receiver links must agree, or the second
// declaration fails. ActiveMQ decides by the message, not the link.
func (o amqpOptions) durableQueue(d dest) bool {
	return o.rabbitMQ && o.persistent && !d.topic
}

// parseAMQPAddress reads a reply-to back. A name without a known prefix
// is a queue, as ActiveMQ takes it.
func parseAMQPAddress(s string) dest {
	for _, p := range []struct {
		prefix string
		topic  bool
	}{{"queue://", false}, {"topic://", true}, {"temp-queue://", false}, {"temp-topic://", true},
		{"/queue/", false}, {"/topic/", true}} {
		if n, ok := strings.CutPrefix(s, p.prefix); ok {
			return dest{name: n, topic: p.topic}
		}
	}
	return dest{name: s}
}

// sender returns the sender link to to, attaching it on first use: the
// broker accounts producer credit per link, so an anonymous-relay link
// would measure something else.
func (a *amqpSession) sender(ctx context.Context, to dest) (*amqp.Sender, error) {
	if snd := a.senders[to]; snd != nil {
		return snd, nil
	}
	mode := amqp.SenderSettleModeUnsettled
	if a.o.presettled {
		mode = amqp.SenderSettleModeSettled
	}
	so := &amqp.SenderOptions{SettlementMode: &mode}
	if a.o.durableQueue(to) {
		so.TargetDurability = amqp.DurabilityConfiguration
	}
	snd, err := a.s.NewSender(ctx, a.o.address(to), so)
	if err != nil {
		return nil, fmt.Errorf("amqp sender to %s: %w", a.o.address(to), err)
	}
	a.senders[to] = snd
	return snd, nil
}

// send sends body to to. Presettled, it returns once the transfer is
// written. Unsettled with sync, once the outcome is in and is Accepted;
// without, once fewer than amqpMaxInFlight outcomes are outstanding. When
// the ring is full the oldest outcome is waited for before this message
// goes: if that one failed, the error is returned and this message has not
// been sent, so the run's sequence numbers stay those of messages that
// went out.
func (a *amqpSession) send(ctx context.Context, to dest, body []byte, replyTo *dest, sync bool) error {
	snd, err := a.sender(ctx, to)
	if err != nil {
		return err
	}
	// go-amqp encodes the message before Send and SendWithReceipt
	// return, so body may be reused for the next one.
	m := &amqp.Message{Data: [][]byte{body}}
	if a.o.persistent {
		m.Header = &amqp.MessageHeader{Durable: true}
	}
	if replyTo != nil {
		rt := a.o.address(*replyTo)
		m.Properties = &amqp.MessageProperties{ReplyTo: &rt}
	}
	if a.o.presettled {
		return snd.Send(ctx, m, nil)
	}
	if !sync && a.n == amqpMaxInFlight {
		if err := a.outcome(ctx, a.pop()); err != nil {
			return err
		}
	}
	r, err := snd.SendWithReceipt(ctx, m, nil)
	if err != nil {
		return fmt.Errorf("amqp send to %s: %w", snd.Address(), err)
	}
	p := amqpPending{receipt: r, to: snd.Address()}
	if sync {
		return a.outcome(ctx, p)
	}
	a.push(p)
	return nil
}

func (a *amqpSession) push(p amqpPending) {
	if a.pending == nil {
		a.pending = make([]amqpPending, amqpMaxInFlight)
	}
	a.pending[(a.head+a.n)%len(a.pending)] = p
	a.n++
}

func (a *amqpSession) pop() amqpPending {
	p := a.pending[a.head]
	a.pending[a.head] = amqpPending{}
	a.head = (a.head + 1) % len(a.pending)
	a.n--
	return p
}

// outcome waits for p's outcome: nil for Accepted, an error for the
// others (AMQP 1.0 §3.4): the broker did not take the message.
func (a *amqpSession) outcome(ctx context.Context, p amqpPending) error {
	st, err := p.receipt.Wait(ctx)
	if err != nil {
		return fmt.Errorf("amqp send to %s: %w", p.to, err)
	}
	switch st := st.(type) {
	case *amqp.StateAccepted:
		return nil
	case *amqp.StateRejected:
		if st.Error != nil {
			return fmt.Errorf("amqp send to %s: rejected: %w", p.to, st.Error)
		}
		return fmt.Errorf("amqp send to %s: rejected", p.to)
	case *amqp.StateReleased:
		return fmt.Errorf("amqp send to %s: released, not accepted", p.to)
	case *amqp.StateModified:
		return fmt.Errorf("amqp send to %s: modified, not accepted", p.to)
	default:
		return fmt.Errorf("amqp send to %s: outcome %v, want accepted", p.to, st)
	}
}

// subscribe attaches a receiver link to from with the prefetch as its
// credit, which go-amqp tops up as messages are settled.
func (a *amqpSession) subscribe(ctx context.Context, from dest, o subOptions) (subscription, error) {
	credit := o.prefetch // Config.Validate keeps it within int32
	if credit == 0 {
		credit = amqpDefaultCredit
	}
	ro := &amqp.ReceiverOptions{Credit: int32(credit)}
	if a.o.durableQueue(from) {
		ro.SourceDurability = amqp.DurabilityConfiguration
	}
	// Asking for a settle mode makes go-amqp refuse a broker that
	// attaches with another (AMQP 1.0 §2.6.3: the attach reply carries
	// the mode the broker will use).
	if a.o.presettled {
		ro.RequestedSenderSettleMode = new(amqp.SenderSettleModeSettled)
	} else {
		ro.RequestedSenderSettleMode = new(amqp.SenderSettleModeUnsettled)
		// First: the accept settles the delivery; no round trip more.
		ro.SettlementMode = new(amqp.ReceiverSettleModeFirst)
	}
	r, err := a.s.NewReceiver(ctx, a.o.address(from), ro)
	if err != nil {
		return nil, fmt.Errorf("amqp receiver on %s: %w", a.o.address(from), err)
	}
	return &amqpSub{r: r, presettled: a.o.presettled, acceptOnReceive: !a.o.presettled && a.o.autoAccept}, nil
}

// commit has nothing to do: Config.Validate refuses transactions over AMQP.
func (a *amqpSession) commit(context.Context) error { return nil }

func (a *amqpSession) done() <-chan struct{} { return a.c.Done() }

// close sends the close performative and closes the socket; go-amqp does
// not wait for the broker's close (AMQP 1.0 §2.4.3 says SHOULD).
func (a *amqpSession) close() error {
	select {
	case <-a.c.Done():
		return nil
	default:
	}
	return a.c.Close()
}

// amqpSub is a receiver link. go-amqp buffers what the credit lets in.
type amqpSub struct {
	r               *amqp.Receiver
	presettled      bool
	acceptOnReceive bool
}

func (k *amqpSub) receive(ctx context.Context) (delivery, error) {
	m, err := k.r.Receive(ctx, nil)
	if err != nil {
		return delivery{}, err
	}
	if k.acceptOnReceive {
		if err := k.r.AcceptMessage(ctx, m); err != nil {
			return delivery{}, fmt.Errorf("amqp accept: %w", err)
		}
	}
	d := delivery{body: m.GetData(), handle: m}
	if p := m.Properties; p != nil && p.ReplyTo != nil {
		rd := parseAMQPAddress(*p.ReplyTo)
		d.replyTo = &rd
	}
	return d, nil
}

// ack accepts d (--ack client or individual: AMQP settles each delivery
// by itself, so both are per message); a presettled delivery, or one
// accepted on receipt, has nothing left to settle.
func (k *amqpSub) ack(d delivery) error {
	if k.presettled || k.acceptOnReceive {
		return nil
	}
	// In rcv-settle-mode first this returns once the disposition is
	// written; the context bounds nothing more.
	return k.r.AcceptMessage(context.Background(), d.handle.(*amqp.Message))
}
