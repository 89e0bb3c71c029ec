package conformance

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	"github.com/gorilla/websocket"

	"wharf/cmd/wharf/wiring"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
)

// AMQP 1.0 conformance with github.com/Azure/go-amqp against an in-process
// broker.

func amqpBroker(t *testing.T, opts map[string]string, more ...brokertest.Option) *brokertest.Broker {
	t.Helper()
	o := append([]brokertest.Option{brokertest.WithConfig(func(c *config.Config) {
		for i := range c.Transports {
			if c.Transports[i].Scheme == "amqp" {
				for k, v := range opts {
					c.Transports[i].Options[k] = v
				}
			}
		}
	})}, more...)
	b := brokertest.Start(t, wiring.Factories(), o...)
	if b.AMQPAddr() == "" {
		t.Fatal("the broker has no AMQP connector")
	}
	return b
}

func amqpCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func amqpDial(t *testing.T, addr string, o *amqp.ConnOptions) *amqp.Conn {
	t.Helper()
	if o == nil {
		o = &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()}
	}
	c, err := amqp.Dial(amqpCtx(t), "amqp://"+addr, o)
	if err != nil {
		t.Fatalf("AMQP dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func amqpSession(t *testing.T, c *amqp.Conn) *amqp.Session {
	t.Helper()
	s, err := c.NewSession(amqpCtx(t), nil)
	if err != nil {
		t.Fatalf("AMQP session: %v", err)
	}
	return s
}

func amqpSender(t *testing.T, s *amqp.Session, target string, o *amqp.SenderOptions) *amqp.Sender {
	t.Helper()
	snd, err := s.NewSender(amqpCtx(t), target, o)
	if err != nil {
		t.Fatalf("AMQP sender to %q: %v", target, err)
	}
	return snd
}

func amqpReceiver(t *testing.T, s *amqp.Session, source string, o *amqp.ReceiverOptions) *amqp.Receiver {
	t.Helper()
	r, err := s.NewReceiver(amqpCtx(t), source, o)
	if err != nil {
		t.Fatalf("AMQP receiver from %q: %v", source, err)
	}
	return r
}

func amqpSend(t *testing.T, snd *amqp.Sender, m *amqp.Message) {
	t.Helper()
	if err := snd.Send(amqpCtx(t), m, nil); err != nil {
		t.Fatalf("AMQP send: %v", err)
	}
}

func amqpRecv(t *testing.T, r *amqp.Receiver) *amqp.Message {
	t.Helper()
	m, err := r.Receive(amqpCtx(t), nil)
	if err != nil {
		t.Fatalf("AMQP receive: %v", err)
	}
	return m
}

func amqpNone(t *testing.T, r *amqp.Receiver, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if m, err := r.Receive(ctx, nil); err == nil {
		t.Fatalf("unexpected AMQP message %q", m.GetData())
	}
}

func queueDest(addr string) message.Destination {
	return message.QueueDest(strings.TrimPrefix(addr, "queue://"))
}

func TestConformanceAMQPTopicAndDurableSubscription(t *testing.T) {
	b := amqpBroker(t, nil)
	base := uniq(t)
	topic := "topic://" + base
	c := amqpDial(t, b.AMQPAddr(), &amqp.ConnOptions{ContainerID: base + "-client", SASLType: amqp.SASLTypeAnonymous()})
	s := amqpSession(t, c)
	live := amqpReceiver(t, s, topic, nil)
	dur := amqpReceiver(t, s, topic, &amqp.ReceiverOptions{Name: "sub1", SourceDurability: amqp.DurabilityUnsettledState, SourceExpiryPolicy: amqp.ExpiryPolicyNever})
	ps := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	snd := amqpSender(t, ps, topic, nil)
	amqpSend(t, snd, amqp.NewMessage([]byte("one")))
	for _, r := range []*amqp.Receiver{live, dur} {
		m := amqpRecv(t, r)
		if string(m.GetData()) != "one" {
			t.Fatalf("topic subscriber got %q", m.GetData())
		}
		r.AcceptMessage(amqpCtx(t), m)
	}
	// The durable subscription is ActiveMQ's: client id = container-id,
	// name = link name. Detaching keeps it.
	subs := b.Engine().DurableSubs(base + "-client")
	if len(subs) != 1 || subs[0].Key.Name != "sub1" {
		t.Fatalf("durable subscriptions: %+v", subs)
	}
	c.Close()
	eventually(t, func() bool { return b.Engine().DurableSubs(base+"-client") != nil })
	away := amqp.NewMessage([]byte("while-away"))
	away.Header = &amqp.MessageHeader{Durable: true} // offline subscriptions keep persistent messages only
	amqpSend(t, snd, away)
	c2 := amqpDial(t, b.AMQPAddr(), &amqp.ConnOptions{ContainerID: base + "-client", SASLType: amqp.SASLTypeAnonymous()})
	s2 := amqpSession(t, c2)
	dur2 := amqpReceiver(t, s2, topic, &amqp.ReceiverOptions{Name: "sub1", SourceDurability: amqp.DurabilityUnsettledState, SourceExpiryPolicy: amqp.ExpiryPolicyNever})
	m := amqpRecv(t, dur2)
	if string(m.GetData()) != "while-away" {
		t.Fatalf("durable subscription kept %q", m.GetData())
	}
	dur2.AcceptMessage(amqpCtx(t), m)
	// Closing the link (not detaching) destroys the subscription.
	if err := dur2.Close(amqpCtx(t)); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool { return len(b.Engine().DurableSubs(base+"-client")) == 0 })
}

func mqttBrokerAddr(t *testing.T, b *brokertest.Broker) string {
	t.Helper()
	if b.MQTTAddr() == "" {
		t.Fatal("no MQTT connector")
	}
	return b.MQTTAddr()
}

func TestConformanceAMQPSASL(t *testing.T) {
	b := amqpBroker(t, nil, brokertest.WithEngine(func(o *engine.Options) {
		o.Authenticator = passwords{"app": "secret"}
	}))
	if _, err := amqp.Dial(amqpCtx(t), "amqp://"+b.AMQPAddr(), &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("app", "wrong")}); err == nil {
		t.Fatal("wrong password accepted")
	}
	if _, err := amqp.Dial(amqpCtx(t), "amqp://"+b.AMQPAddr(), &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()}); err == nil {
		t.Fatal("ANONYMOUS accepted by a broker with users")
	}
	c := amqpDial(t, b.AMQPAddr(), &amqp.ConnOptions{SASLType: amqp.SASLTypePlain("app", "secret")})
	amqpSession(t, c)
}

// wsConn adapts a WebSocket connection to net.Conn: each Write is one
// binary message, Read reads the messages' bytes in order.
type wsConn struct {
	*websocket.Conn
	r io.Reader
}

func (c *wsConn) Read(p []byte) (int, error) {
	for {
		if c.r == nil {
			_, r, err := c.NextReader()
			if err != nil {
				return 0, err
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if err == io.EOF {
			c.r = nil
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (c *wsConn) Write(p []byte) (int, error) {
	if err := c.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *wsConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func TestConformanceAMQPOverWebSocket(t *testing.T) {
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		c.Transports = append(c.Transports, config.Transport{Name: "amqp+ws", URI: "amqp+ws://127.0.0.1:0", Scheme: "amqp+ws",
			Host: "127.0.0.1", Options: map[string]string{}})
	}))
	d := websocket.Dialer{Subprotocols: []string{"amqp"}, HandshakeTimeout: wait}
	ws, resp, err := d.Dial("ws://"+b.Addr("amqp+ws").String()+"/", nil)
	if err != nil {
		t.Fatalf("WebSocket dial: %v", err)
	}
	if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != "amqp" {
		t.Fatalf("subprotocol %q, want amqp", got)
	}
	c, err := amqp.NewConn(amqpCtx(t), &wsConn{Conn: ws}, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()})
	if err != nil {
		t.Fatalf("AMQP over WebSocket: %v", err)
	}
	defer c.Close()
	s := amqpSession(t, c)
	q := "queue://" + uniq(t)
	amqpSend(t, amqpSender(t, s, q, nil), amqp.NewMessage([]byte("over websocket")))
	// Read it back over plain TCP: one engine behind both.
	r := amqpReceiver(t, amqpSession(t, amqpDial(t, b.AMQPAddr(), nil)), q, nil)
	if m := amqpRecv(t, r); string(m.GetData()) != "over websocket" {
		t.Fatalf("got %q", m.GetData())
	}
}
