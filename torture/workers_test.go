package torture

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/go-amqp"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// The load: long-lived workers, one per client, each a loop that connects
// to the broker's fixed addresses, works until the connection fails (the
// broker was killed) and connects again once the broker is back. What
// they know goes to the ledger as it happens.

// Destinations (their JMS names; MQTT topic torture/mqtt is torture.mqtt).
const (
	qStomp   = "torture.q.stomp" // STOMP SEND+receipt → OpenWire individual sync acks
	qOW      = "torture.q.ow"    // OpenWire sync send → STOMP acks in transactions
	qAMQP    = "torture.q.amqp"  // AMQP unsettled send → AMQP accept, rcv-settle-mode second
	qTx      = "torture.q.tx"    // OpenWire transacted send → OpenWire transacted consumer
	qJMS     = "torture.q.jms"   // JMS sync persistent send → JMS client-ack, sendAcksAsync=false
	qXAIn    = "torture.q.xain"  // OpenWire sync send → JMS XA branches
	qXAOut   = "torture.q.xaout" // JMS XA branch sends → OpenWire individual sync acks
	tDurable = "torture.t"       // OpenWire, STOMP, JMS sends → OpenWire, STOMP durable subs, MQTT QoS 1 session
	tMQTT    = "torture.mqtt"    // MQTT QoS 1 and QoS 2 publishers → MQTT QoS 1, QoS 2 sessions, OpenWire durable sub
)

// backlogBound: a producer waits while a stream of its destination has
// this many of its confirmed sends unseen.
const backlogBound = 150

type addrs struct{ openwire, stomp, mqtt, amqp string }

type rig struct {
	l       *ledger
	a       addrs
	ctx     context.Context // ends the worker being started (producers or consumers)
	wg      *sync.WaitGroup // the group of the workers being started
	seed    uint64
	errs    sync.Map // worker → *atomic.Int64, connection failures
	lastErr sync.Map // worker → string, the last failure
	logf    func(string, ...any)
	nextID  atomic.Int64
}

// run starts worker name: body is one connection's life; it returns when
// the connection fails or ctx ends.
func (r *rig) run(name string, body func(ctx context.Context, rng *rand.Rand) error) {
	ctx, wg := r.ctx, r.wg
	wg.Add(1)
	n, _ := r.errs.LoadOrStore(name, new(atomic.Int64))
	fails := n.(*atomic.Int64)
	h := uint64(0)
	for _, c := range name {
		h = h*31 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(r.seed, h))
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			err := body(ctx, rng)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				fails.Add(1)
				r.lastErr.Store(name, err.Error())
			}
			// The broker is down or restarting: try again shortly (a
			// client's reconnect delay, not a synchronisation).
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
}

// holdBack waits while d's backlog is above backlogBound.
func (r *rig) holdBack(ctx context.Context, d string) error {
	for {
		ch, _ := r.l.wait()
		if r.l.backlog(d) < backlogBound {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (r *rig) key(prefix string) string {
	return fmt.Sprintf("%s-%07d", prefix, r.nextID.Add(1))
}

// closeOn closes c when ctx ends, so that a blocked call returns.
func closeOn(ctx context.Context, c interface{ Close() error }) func() bool {
	return context.AfterFunc(ctx, func() { c.Close() })
}

// --- OpenWire (the project's Go client) ---

func (r *rig) dialOW(ctx context.Context, clientID string, syncAcks bool) (*client.Conn, error) {
	o := client.DefaultOptions()
	o.ClientID = clientID
	o.SyncAcks = syncAcks
	o.DialTimeout = 5 * time.Second
	o.CloseTimeout = time.Second
	return client.Dial(ctx, r.a.openwire, o)
}

func owDest(name string, topic bool) *wire.Destination {
	if topic {
		return wire.NewTopic(name)
	}
	return wire.NewQueue(name)
}

// owProducer sends persistent messages synchronously (a Response per send,
// as the Java client does for persistent sends) to each of dests in turn.
func (r *rig) owProducer(name string, dests ...string) {
	r.run(name, func(ctx context.Context, rng *rand.Rand) error {
		c, err := r.dialOW(ctx, "", false)
		if err != nil {
			return err
		}
		defer closeOn(ctx, c)()
		defer c.Close()
		s, err := c.Session(false)
		if err != nil {
			return err
		}
		p, err := s.Producer(nil)
		if err != nil {
			return err
		}
		for {
			d := dests[rng.IntN(len(dests))]
			if err := r.holdBack(ctx, d); err != nil {
				return err
			}
			k := r.key(name)
			m := client.NewTextMessage(k)
			m.Destination = owDest(d, d == tDurable)
			r.l.sending(d, k)
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := p.Send(sctx, m, true)
			cancel()
			if err != nil {
				return err
			}
			r.l.sent("openwire", d, k)
		}
	})
}

// owTxProducer sends batches of 1-5 persistent messages in a local
// transaction; the commit's Response confirms them all.
func (r *rig) owTxProducer(name, d string) {
	r.run(name, func(ctx context.Context, rng *rand.Rand) error {
		c, err := r.dialOW(ctx, "", false)
		if err != nil {
			return err
		}
		defer closeOn(ctx, c)()
		defer c.Close()
		s, err := c.Session(true)
		if err != nil {
			return err
		}
		p, err := s.Producer(wire.NewQueue(d))
		if err != nil {
			return err
		}
		for {
			if err := r.holdBack(ctx, d); err != nil {
				return err
			}
			keys := make([]string, 1+rng.IntN(5))
			for i := range keys {
				keys[i] = r.key(name)
			}
			r.l.sending(d, keys...)
			for _, k := range keys {
				if err := p.Send(ctx, client.NewTextMessage(k), false); err != nil {
					return err
				}
			}
			if err := s.Commit(); err != nil {
				return err
			}
			r.l.sent("openwire-tx", d, keys...)
		}
	})
}

// owConsumer acknowledges each message individually and waits for the
// broker's Response (SyncAcks), or, transacted, commits every 1-4
// messages. durable names a durable topic subscription (clientID set).
func (r *rig) owConsumer(stream, d string, topic bool, clientID, durable string, transacted bool) {
	r.run(stream, func(ctx context.Context, rng *rand.Rand) error {
		c, err := r.dialOW(ctx, clientID, true)
		if err != nil {
			return err
		}
		defer closeOn(ctx, c)()
		defer c.Close()
		s, err := c.Session(transacted)
		if err != nil {
			return err
		}
		k, err := s.Consumer(owDest(d, topic), client.ConsumerOptions{DurableName: durable, AckMode: client.AckIndividual, Prefetch: 20})
		if err != nil {
			return err
		}
		var batch []delivery
		want := 1 + rng.IntN(4)
		for {
			var m *wire.Message
			if transacted && len(batch) > 0 {
				m, err = k.ReceiveNoWait(ctx)
			} else {
				m, err = k.Receive(ctx)
			}
			if err != nil {
				return err
			}
			if m != nil {
				text, err := owKey(m)
				if err != nil {
					return err
				}
				d := delivery{text, m.MessageId.String()}
				r.l.delivered(stream, d.key, d.id, m.RedeliveryCounter > 0)
				if !transacted {
					r.l.acking(stream, d)
					if err := k.Ack(m); err != nil {
						return err
					}
					r.l.confirmed(stream, d)
					continue
				}
				batch = append(batch, d)
			}
			if len(batch) > 0 && (m == nil || len(batch) >= want) {
				r.l.acking(stream, batch...)
				if err := s.Commit(); err != nil {
					return err
				}
				r.l.confirmed(stream, batch...)
				batch, want = batch[:0], 1+rng.IntN(4)
			}
		}
	})
}

// --- STOMP (go-stomp) ---

// stompReceiptWait bounds a go-stomp call that waits for a RECEIPT
// (stompBounded).
const stompReceiptWait = 30 * time.Second

// errStompReceiptLost: a RECEIPT did not come within stompReceiptWait,
// or the worker was stopped while waiting; the connection was closed and
// the frame's outcome is unknown, as when the broker is killed.
var errStompReceiptLost = errors.New("no RECEIPT: connection closed, outcome unknown")

// stompBounded runs fn, a go-stomp call that waits for a RECEIPT, and
// gives up when stompReceiptWait passes or ctx ends, closing nc. go-stomp
// (v3.1.3, Conn.sendFrame) waits for ever for the receipt of a frame it
// queued if the connection dies before its writer sends it (without a
// heart-beat it sets no write timeout): a SIGKILL at that moment hung
// the worker, and the drain after the last kill with it.
func stompBounded(ctx context.Context, nc net.Conn, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }() // left blocked if go-stomp never answers
	t := time.NewTimer(stompReceiptWait)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	case <-t.C:
	}
	nc.Close()
	return errStompReceiptLost
}

func (r *rig) dialSTOMP(ctx context.Context, clientID string) (*stomp.Conn, net.Conn, error) {
	opts := []func(*stomp.Conn) error{stomp.ConnOpt.HeartBeat(0, 0), stomp.ConnOpt.Host("localhost")}
	if clientID != "" {
		opts = append(opts, stomp.ConnOpt.Header("client-id", clientID))
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dctx, "tcp", r.a.stomp)
	if err != nil {
		return nil, nil, err
	}
	c, err := stomp.Connect(nc, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	context.AfterFunc(ctx, func() { nc.Close() })
	return c, nc, nil
}

func stompDest(d string, topic bool) string {
	if topic {
		return "/topic/" + d
	}
	return "/queue/" + d
}

// stompProducer sends persistent messages, each with a receipt.
func (r *rig) stompProducer(name string, dests ...string) {
	r.run(name, func(ctx context.Context, rng *rand.Rand) error {
		c, nc, err := r.dialSTOMP(ctx, "")
		if err != nil {
			return err
		}
		defer c.MustDisconnect()
		for {
			d := dests[rng.IntN(len(dests))]
			if err := r.holdBack(ctx, d); err != nil {
				return err
			}
			k := r.key(name)
			r.l.sending(d, k)
			err := stompBounded(ctx, nc, func() error {
				return c.Send(stompDest(d, d == tDurable), "text/plain", []byte(k), stomp.SendOpt.Receipt, stomp.SendOpt.Header("persistent", "true"))
			})
			if err != nil {
				return err
			}
			r.l.sent("stomp", d, k)
		}
	})
}

// stompConsumer acknowledges in STOMP transactions of 1-3 messages,
// committed with a receipt. durable: an ActiveMQ durable subscription
// (client-id and activemq.subscriptionName).
func (r *rig) stompConsumer(stream, d string, topic bool, clientID, durable string) {
	r.run(stream, func(ctx context.Context, rng *rand.Rand) error {
		c, nc, err := r.dialSTOMP(ctx, clientID)
		if err != nil {
			return err
		}
		defer c.MustDisconnect()
		opts := []func(*frame.Frame) error{stomp.SubscribeOpt.Header("activemq.prefetchSize", "20")}
		if durable != "" {
			opts = append(opts, stomp.SubscribeOpt.Header("activemq.subscriptionName", durable))
		}
		sub, err := c.Subscribe(stompDest(d, topic), stomp.AckClientIndividual, opts...)
		if err != nil {
			return err
		}
		for {
			tx := c.Begin()
			var keys []delivery
			for n := 1 + rng.IntN(3); len(keys) < n; {
				var m *stomp.Message
				var ok bool
				if len(keys) == 0 {
					select {
					case m, ok = <-sub.C:
					case <-ctx.Done():
						return ctx.Err()
					}
				} else {
					select {
					case m, ok = <-sub.C:
					default:
						n = 0 // nothing waiting: commit what we have
						continue
					}
				}
				if !ok {
					return errors.New("subscription closed")
				}
				if m.Err != nil {
					return m.Err
				}
				d := delivery{string(m.Body), m.Header.Get("message-id")}
				r.l.delivered(stream, d.key, d.id, m.Header.Get("redelivered") == "true")
				if err := tx.Ack(m); err != nil {
					return err
				}
				keys = append(keys, d)
			}
			r.l.acking(stream, keys...)
			if err := stompBounded(ctx, nc, tx.CommitWithReceipt); err != nil {
				return err
			}
			r.l.confirmed(stream, keys...)
		}
	})
}

// --- AMQP (go-amqp) ---

func (r *rig) dialAMQP(ctx context.Context) (*amqp.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := amqp.Dial(dctx, "amqp://"+r.a.amqp, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous(), IdleTimeout: 0})
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { c.Close() })
	return c, nil
}

// amqpProducer sends durable messages unsettled: Send returns once the
// broker's disposition accepted each.
func (r *rig) amqpProducer(name, d string) {
	r.run(name, func(ctx context.Context, rng *rand.Rand) error {
		c, err := r.dialAMQP(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			return err
		}
		snd, err := s.NewSender(ctx, "queue://"+d, nil)
		if err != nil {
			return err
		}
		for {
			if err := r.holdBack(ctx, d); err != nil {
				return err
			}
			k := r.key(name)
			r.l.sending(d, k)
			m := amqp.NewMessage([]byte(k))
			m.Header = &amqp.MessageHeader{Durable: true}
			sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err := snd.Send(sctx, m, nil)
			cancel()
			if err != nil {
				return err
			}
			r.l.sent("amqp", d, k)
		}
	})
}

// amqpConsumer accepts each message in rcv-settle-mode second: the
// accept is confirmed when the broker settles it.
func (r *rig) amqpConsumer(stream, d string) {
	r.run(stream, func(ctx context.Context, rng *rand.Rand) error {
		c, err := r.dialAMQP(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			return err
		}
		second := amqp.ReceiverSettleModeSecond
		rcv, err := s.NewReceiver(ctx, "queue://"+d, &amqp.ReceiverOptions{SettlementMode: &second, Credit: 20})
		if err != nil {
			return err
		}
		for {
			m, err := rcv.Receive(ctx, nil)
			if err != nil {
				return err
			}
			d := delivery{key: string(m.GetData())}
			if m.Properties != nil && m.Properties.MessageID != nil {
				d.id = fmt.Sprint(m.Properties.MessageID)
			}
			red := m.Header != nil && m.Header.DeliveryCount > 0
			r.l.delivered(stream, d.key, d.id, red)
			r.l.acking(stream, d)
			actx, cancel := context.WithTimeout(ctx, 30*time.Second)
			err = rcv.AcceptMessage(actx, m)
			cancel()
			if err != nil {
				return err
			}
			r.l.confirmed(stream, d)
		}
	})
}

// --- MQTT (paho) ---

func (r *rig) mqttOptions(clientID string) *paho.ClientOptions {
	o := paho.NewClientOptions().AddBroker("tcp://" + r.a.mqtt).SetClientID(clientID).
		SetCleanSession(false).SetAutoReconnect(false).SetConnectRetry(false).
		SetConnectTimeout(5 * time.Second).SetKeepAlive(0).SetOrderMatters(false)
	return o
}

// mqttPublisher publishes with qos on a persistent session; one paho
// client for the whole run, so that messages in flight at a kill are
// published again (DUP) when it connects again, and their tokens complete
// then.
func (r *rig) mqttPublisher(name, topic, d string, qos byte) {
	c := paho.NewClient(r.mqttOptions(name))
	var pending paho.Token
	var pendingKey string
	r.run(name, func(ctx context.Context, rng *rand.Rand) error {
		if t := c.Connect(); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
			return fmt.Errorf("mqtt connect: %v", t.Error())
		}
		defer context.AfterFunc(ctx, func() { c.Disconnect(0) })()
		wait := func(t paho.Token) (bool, error) {
			// A publish in flight at a kill is sent again by paho when it
			// connects again; if its token does not complete then, it is
			// left unconfirmed.
			limit := time.After(10 * time.Second)
			for {
				select {
				case <-t.Done():
					return true, t.Error()
				case <-ctx.Done():
					return false, ctx.Err()
				case <-limit:
					return true, errors.New("publish not confirmed")
				case <-time.After(100 * time.Millisecond):
					if !c.IsConnectionOpen() {
						return false, errors.New("connection lost")
					}
				}
			}
		}
		for {
			if pending != nil {
				done, err := wait(pending)
				if !done {
					return err
				}
				pending = nil
				if err != nil && !c.IsConnectionOpen() {
					return err
				}
				if err == nil {
					r.l.sent(fmt.Sprintf("mqtt-qos%d", qos), d, pendingKey)
				}
			}
			if err := r.holdBack(ctx, d); err != nil {
				return err
			}
			pendingKey = r.key(name)
			r.l.sending(d, pendingKey)
			pending = c.Publish(topic, qos, false, pendingKey)
		}
	})
}

// mqttSubscriber is a persistent session subscribed (once, at set-up) to
// topic with qos; each connection receives what the session holds. paho
// sends the PUBACK/PUBREC after the handler returns; the broker never
// confirms it, so these streams are checked for delivery only.
func (r *rig) mqttSubscriber(stream, topic string, qos byte) {
	r.run(stream, func(ctx context.Context, rng *rand.Rand) error {
		o := r.mqttOptions(mqttClientID(stream)).SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			r.l.delivered(stream, string(m.Payload()), "", m.Duplicate())
		})
		lost := make(chan struct{})
		o.SetConnectionLostHandler(func(paho.Client, error) { close(lost) })
		c := paho.NewClient(o)
		if t := c.Connect(); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
			c.Disconnect(0)
			return fmt.Errorf("mqtt connect: %v", t.Error())
		}
		defer c.Disconnect(0)
		if t := c.Subscribe(topic, qos, nil); !t.WaitTimeout(10*time.Second) || t.Error() != nil {
			return fmt.Errorf("mqtt subscribe: %v", t.Error())
		}
		select {
		case <-lost:
			return errors.New("connection lost")
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// mqttClientID is the MQTT client id of a stream's persistent session.
func mqttClientID(stream string) string { return "torture-" + strings.ReplaceAll(stream, "/", "-") }

// owKey is the key a message carries: a TextMessage's text, or the body
// of a BytesMessage (what STOMP SENDs with a content-length and MQTT
// publishes become).
func owKey(m *wire.Message) (string, error) {
	if m.DataStructureType() == wire.TypeActiveMQBytesMessage {
		b, err := m.Bytes(wire.DefaultLimits())
		return string(b), err
	}
	text, _, err := m.Text(wire.DefaultLimits())
	return text, err
}
