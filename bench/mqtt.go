package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// The MQTT 3.1.1 client of `wharf bench`, over Eclipse Paho. Every
// destination is a topic: the dest's name is the topic name as it is
// (MQTT allows dots; ActiveMQ swaps '.' and '/' on the way in and out,
// which a run that only speaks MQTT does not see). Publications are never
// retained: a retained message would reach the next run's subscribers.
//
// MQTT 3.1.1 messages have no headers, so there is no reply-to: a
// request/reply run replies to a fixed topic per requester, which the
// responder finds from the requester index in the body's stamp (run.go,
// replyTarget).

// mqttMaxInFlight bounds the publications of one connection that the
// broker has not confirmed yet (PUBACK at QoS 1, PUBCOMP at QoS 2, the
// socket write at QoS 0) when sends are asynchronous: MQTT has no flow
// control of its own in 3.1.1, and Paho gives up when its 65535 packet
// identifiers [MQTT-2.3.1-1] run out.
const mqttMaxInFlight = 1000

// mqttQuiesce is how long a close waits for the DISCONNECT to be written
// before the socket is closed anyway.
const mqttQuiesce = 250 * time.Millisecond

// mqttClientSeq numbers the connections of this process: every MQTT
// connection needs its own client identifier [MQTT-3.1.3-2], or the broker
// takes the older one's session away [MQTT-3.1.4-2].
var mqttClientSeq atomic.Int64

// mqttOptions are the run's settings an MQTT connection needs.
type mqttOptions struct {
	timeout time.Duration
	// tls, when set, connects over TLS (ActiveMQ's mqtt+ssl connector).
	tls          *tls.Config
	qos          byte
	cleanSession bool
	// manualAck acknowledges QoS 1 and 2 deliveries when the run acks
	// them (--ack client or individual) instead of when the handler
	// returns.
	manualAck bool
	// clientID, when set, is the connection's client identifier (a
	// persistent session the soak test takes offline and back);
	// otherwise one is made up per connection.
	clientID string
}

// mqttSession is one MQTT connection. Paho runs its own goroutines; the
// session's owner goroutine calls send and subscribe, and owns pending.
type mqttSession struct {
	c   mqtt.Client
	qos byte

	// pending are the asynchronous publications not confirmed yet, in
	// the order they were sent: a ring of up to mqttMaxInFlight tokens.
	pending []mqtt.Token
	head    int

	failOnce sync.Once
	err      error // set before doneCh closes
	doneCh   chan struct{}
}

func dialMQTT(ctx context.Context, t Target, o mqttOptions) (session, error) {
	s := &mqttSession{qos: o.qos, doneCh: make(chan struct{})}
	co := mqtt.NewClientOptions()
	if o.tls != nil {
		co.AddBroker("ssl://" + t.Addr)
		co.SetTLSConfig(o.tls)
	} else {
		co.AddBroker("tcp://" + t.Addr)
	}
	if o.clientID != "" {
		co.SetClientID(o.clientID)
	} else {
		co.SetClientID(fmt.Sprintf("wb%d-%d", os.Getpid(), mqttClientSeq.Add(1)))
	}
	if t.User != "" {
		co.SetUsername(t.User)
		co.SetPassword(t.Password)
	}
	co.SetCleanSession(o.cleanSession)
	// A run measures one connection's life: a reconnect would hide the
	// failure and redeliver, which the checker would count against the
	// broker.
	co.SetAutoReconnect(false)
	co.SetConnectRetry(false)
	co.SetResumeSubs(false)
	co.SetConnectTimeout(o.timeout)
	co.SetDialer(&net.Dialer{Timeout: o.timeout})
	// In-order handler calls, as JMS orders one producer's messages at
	// one consumer; the handler only queues the message (mqttSub.push).
	co.SetOrderMatters(true)
	co.SetAutoAckDisabled(o.manualAck)
	co.SetConnectionLostHandler(func(_ mqtt.Client, err error) {
		s.fail(fmt.Errorf("%w: %v", errClosed, err))
	})
	s.c = mqtt.NewClient(co)
	// Paho bounds the dial and the wait for CONNACK by the connect
	// timeout, so the token completes by itself.
	tok := s.c.Connect()
	select {
	case <-tok.Done():
	case <-ctx.Done():
		go func() {
			<-tok.Done()
			s.c.Disconnect(0)
		}()
		return nil, ctx.Err()
	}
	if err := tok.Error(); err != nil {
		return nil, fmt.Errorf("mqtt connect: %w", err)
	}
	return s, nil
}

func (s *mqttSession) fail(err error) {
	s.failOnce.Do(func() {
		s.err = err
		close(s.doneCh)
	})
}

func (s *mqttSession) done() <-chan struct{} { return s.doneCh }

// wait returns when tok completed, with its error, or when ctx or the
// connection ends.
func (s *mqttSession) wait(ctx context.Context, tok mqtt.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-s.doneCh:
		select {
		case <-tok.Done():
			return tok.Error()
		default:
			return s.err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send publishes body on to's topic. replyTo is not carried (see the top
// of this file). With sync it returns once the broker confirmed the
// publication; otherwise once fewer than mqttMaxInFlight are unconfirmed.
// The error of an asynchronous publication surfaces on a later send.
func (s *mqttSession) send(ctx context.Context, to dest, body []byte, _ *dest, sync bool) error {
	// Paho keeps the payload until it is written, and at QoS 1 and 2
	// until it is acknowledged; the caller reuses body.
	p := make([]byte, len(body))
	copy(p, body)
	tok := s.c.Publish(to.name, s.qos, false, p)
	if sync {
		return s.wait(ctx, tok)
	}
	if len(s.pending) < mqttMaxInFlight {
		s.pending = append(s.pending, tok)
		return nil
	}
	oldest := s.pending[s.head]
	s.pending[s.head] = tok
	s.head = (s.head + 1) % len(s.pending)
	return s.wait(ctx, oldest)
}

func (s *mqttSession) subscribe(ctx context.Context, from dest, _ subOptions) (subscription, error) {
	sub := &mqttSub{s: s, notify: make(chan struct{}, 1)}
	tok := s.c.Subscribe(from.name, s.qos, sub.push)
	if err := s.wait(ctx, tok); err != nil {
		return nil, fmt.Errorf("mqtt subscribe %s: %w", from.name, err)
	}
	// SUBACK return code 0x80 is a refusal [MQTT-3.9.3-2].
	if st, ok := tok.(*mqtt.SubscribeToken); ok {
		if code, ok := st.Result()[from.name]; ok && code == 0x80 {
			return nil, fmt.Errorf("mqtt subscribe %s: %w", from.name, errMQTTRefused)
		}
	}
	return sub, nil
}

// commit has nothing to do: Config.Validate refuses transactions over MQTT.
func (s *mqttSession) commit(context.Context) error { return nil }

// close sends DISCONNECT and closes the socket; Paho does not call the
// connection-lost handler for it.
func (s *mqttSession) close() error {
	select {
	case <-s.doneCh:
		return nil
	default:
	}
	s.c.Disconnect(uint(mqttQuiesce / time.Millisecond))
	s.fail(errClosed)
	return nil
}

// mqttSub is a subscription. Paho's router calls push for each message in
// order and waits for it: push must not block, or acknowledgements to our
// own publications (read by the same client) would wait behind it. The
// queue is bounded by what the broker sends; at QoS 1 and 2 its in-flight
// window for this client.
type mqttSub struct {
	s *mqttSession

	mu     sync.Mutex
	queue  []mqtt.Message
	head   int
	notify chan struct{}
}

func (k *mqttSub) push(_ mqtt.Client, m mqtt.Message) {
	k.mu.Lock()
	k.queue = append(k.queue, m)
	k.mu.Unlock()
	select {
	case k.notify <- struct{}{}:
	default:
	}
}

func (k *mqttSub) pop() (mqtt.Message, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.head == len(k.queue) {
		return nil, false
	}
	m := k.queue[k.head]
	k.queue[k.head] = nil
	k.head++
	if k.head == len(k.queue) {
		k.queue, k.head = k.queue[:0], 0
	}
	return m, true
}

func (k *mqttSub) receive(ctx context.Context) (delivery, error) {
	for {
		if m, ok := k.pop(); ok {
			return delivery{body: m.Payload(), handle: m}, nil
		}
		select {
		case <-k.notify:
		case <-ctx.Done():
			return delivery{}, ctx.Err()
		case <-k.s.doneCh:
			k.mu.Lock()
			more := k.head < len(k.queue)
			k.mu.Unlock()
			if !more {
				return delivery{}, k.s.err
			}
		}
	}
}

// ack sends the PUBACK (QoS 1) or PUBREC (QoS 2) that Paho held back with
// manual acknowledgement; otherwise Paho sent it already.
func (k *mqttSub) ack(d delivery) error {
	d.handle.(mqtt.Message).Ack()
	return nil
}
