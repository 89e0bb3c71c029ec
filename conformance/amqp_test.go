package conformance

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"
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

func TestConformanceAMQPQueueRoundTrip(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	c := amqpDial(t, b.AMQPAddr(), nil)
	s := amqpSession(t, c)
	snd := amqpSender(t, s, q, nil)
	for i := 0; i < 50; i++ {
		amqpSend(t, snd, amqp.NewMessage([]byte{byte(i)}))
	}
	r := amqpReceiver(t, s, q, &amqp.ReceiverOptions{Credit: 10})
	for i := 0; i < 50; i++ {
		m := amqpRecv(t, r)
		if got := m.GetData(); len(got) != 1 || got[0] != byte(i) {
			t.Fatalf("message %d: %v", i, got)
		}
		if err := r.AcceptMessage(amqpCtx(t), m); err != nil {
			t.Fatal(err)
		}
	}
	amqpNone(t, r, 200*time.Millisecond)
	if st := b.Engine().Stats(queueDest(q)); st.QueueSize != 0 {
		t.Fatalf("queue size %d after every message was accepted", st.QueueSize)
	}
}

func queueDest(addr string) message.Destination {
	return message.QueueDest(strings.TrimPrefix(addr, "queue://"))
}

func TestConformanceAMQPPresettledAndBareAddress(t *testing.T) {
	b := amqpBroker(t, nil)
	name := uniq(t)
	c := amqpDial(t, b.AMQPAddr(), nil)
	s := amqpSession(t, c)
	settled := amqp.SenderSettleModeSettled
	snd := amqpSender(t, s, name, &amqp.SenderOptions{SettlementMode: &settled}) // bare address = queue
	amqpSend(t, snd, amqp.NewMessage([]byte("fire and forget")))
	r := amqpReceiver(t, s, "queue://"+name, &amqp.ReceiverOptions{RequestedSenderSettleMode: &settled})
	if m := amqpRecv(t, r); string(m.GetData()) != "fire and forget" {
		t.Fatalf("got %q", m.GetData())
	}
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

func TestConformanceAMQPOutcomes(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	s := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	snd := amqpSender(t, s, q, nil)
	for _, body := range []string{"released", "rejected"} {
		// Durable: ActiveMQ dead-letters persistent messages only.
		m := amqp.NewMessage([]byte(body))
		m.Header = &amqp.MessageHeader{Durable: true}
		amqpSend(t, snd, m)
	}
	r := amqpReceiver(t, s, q, &amqp.ReceiverOptions{Credit: 1})
	m := amqpRecv(t, r)
	if err := r.ReleaseMessage(amqpCtx(t), m); err != nil {
		t.Fatal(err)
	}
	// Released: redelivered, delivery count not raised.
	m = amqpRecv(t, r)
	if string(m.GetData()) != "released" || m.Header != nil && m.Header.DeliveryCount != 0 {
		t.Fatalf("after release: %q header %+v", m.GetData(), m.Header)
	}
	if err := r.ModifyMessage(amqpCtx(t), m, &amqp.ModifyMessageOptions{DeliveryFailed: true}); err != nil {
		t.Fatal(err)
	}
	m = amqpRecv(t, r)
	if string(m.GetData()) != "released" || m.Header == nil || m.Header.DeliveryCount != 1 {
		t.Fatalf("after modified(delivery-failed): %q header %+v", m.GetData(), m.Header)
	}
	r.AcceptMessage(amqpCtx(t), m)
	m = amqpRecv(t, r)
	if string(m.GetData()) != "rejected" {
		t.Fatalf("got %q", m.GetData())
	}
	if err := r.RejectMessage(amqpCtx(t), m, nil); err != nil {
		t.Fatal(err)
	}
	// Rejected: to the DLQ at once.
	dlq := amqpReceiver(t, s, "queue://ActiveMQ.DLQ", nil)
	if m := amqpRecv(t, dlq); string(m.GetData()) != "rejected" {
		t.Fatalf("DLQ got %q", m.GetData())
	}
}

func TestConformanceAMQPSelectorAndDrain(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	s := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	snd := amqpSender(t, s, q, nil)
	for _, color := range []string{"red", "blue", "red"} {
		m := amqp.NewMessage([]byte(color))
		m.ApplicationProperties = map[string]any{"color": color}
		amqpSend(t, snd, m)
	}
	r := amqpReceiver(t, s, q, &amqp.ReceiverOptions{Credit: -1, Filters: []amqp.LinkFilter{amqp.NewSelectorFilter("color = 'red'")}})
	if err := r.IssueCredit(5); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		m := amqpRecv(t, r)
		if string(m.GetData()) != "red" || m.ApplicationProperties["color"] != "red" {
			t.Fatalf("selector let through %q %v", m.GetData(), m.ApplicationProperties)
		}
		r.AcceptMessage(amqpCtx(t), m)
	}
	// Drain: the broker uses up the remaining credit and says so.
	if err := r.DrainCredit(amqpCtx(t), nil); err != nil {
		t.Fatalf("drain: %v", err)
	}
}

func TestConformanceAMQPDynamicRequestReply(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	// Responder.
	rs := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	req := amqpReceiver(t, rs, q, nil)
	reply := amqpSender(t, rs, "", nil) // the anonymous relay
	go func() {
		m, err := req.Receive(context.Background(), nil)
		if err != nil {
			return
		}
		req.AcceptMessage(context.Background(), m)
		out := amqp.NewMessage([]byte("re: " + string(m.GetData())))
		out.Properties = &amqp.MessageProperties{To: m.Properties.ReplyTo, CorrelationID: m.Properties.MessageID}
		reply.Send(context.Background(), out, nil)
	}()
	cs := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	tmp := amqpReceiver(t, cs, "", &amqp.ReceiverOptions{DynamicAddress: true})
	addr := tmp.Address()
	if !strings.HasPrefix(addr, "temp-queue://") {
		t.Fatalf("dynamic address %q, want a temp-queue:// name", addr)
	}
	snd := amqpSender(t, cs, q, nil)
	m := amqp.NewMessage([]byte("ping"))
	id := "req-1"
	m.Properties = &amqp.MessageProperties{MessageID: id, ReplyTo: &addr}
	amqpSend(t, snd, m)
	got := amqpRecv(t, tmp)
	if string(got.GetData()) != "re: ping" {
		t.Fatalf("reply %q", got.GetData())
	}
	if got.Properties == nil || got.Properties.CorrelationID != id {
		t.Fatalf("reply correlation id %+v", got.Properties)
	}
	// The anonymous relay refuses a message without "to".
	err := reply.Send(amqpCtx(t), amqp.NewMessage([]byte("nowhere")), nil)
	var rej *amqp.Error
	if !errors.As(err, &rej) {
		t.Fatalf("send without to: %v, want a rejection", err)
	}
	// In ActiveMQ's words (AmqpReceiver).
	if want := "Missing to field for message sent to an anonymous producer"; rej.Description != want {
		t.Fatalf("rejection %q, want %q", rej.Description, want)
	}
}

func TestConformanceAMQPMixedProtocols(t *testing.T) {
	b := amqpBroker(t, nil)
	base := uniq(t)
	s := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	// STOMP → AMQP.
	sc, err := stomp.Dial("tcp", b.STOMPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Disconnect()
	r := amqpReceiver(t, s, "queue://"+base+".fromstomp", nil)
	if err := sc.Send("/queue/"+base+".fromstomp", "text/plain", []byte("from stomp"), stomp.SendOpt.Header("color", "blue")); err != nil {
		t.Fatal(err)
	}
	// go-stomp sends content-length, which makes a BytesMessage (a Data
	// section); with amq-msg-type:text it is a TextMessage (an AmqpValue).
	m := amqpRecv(t, r)
	if string(m.GetData()) != "from stomp" {
		t.Fatalf("STOMP bytes message reached AMQP as %#v (data %q)", m.Value, m.GetData())
	}
	if m.ApplicationProperties["color"] != "blue" {
		t.Fatalf("application properties %v", m.ApplicationProperties)
	}
	r.AcceptMessage(amqpCtx(t), m) // settling it gives the credit back
	if err := sc.Send("/queue/"+base+".fromstomp", "text/plain", []byte("text from stomp"), stomp.SendOpt.Header("amq-msg-type", "text")); err != nil {
		t.Fatal(err)
	}
	if m := amqpRecv(t, r); m.Value != "text from stomp" {
		t.Fatalf("STOMP text message reached AMQP as %#v (data %q)", m.Value, m.GetData())
	}
	// AMQP → STOMP.
	ss, err := sc.Subscribe("/queue/"+base+".tostomp", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sc)
	out := amqp.NewMessage([]byte("to stomp"))
	out.ApplicationProperties = map[string]any{"n": int32(7)}
	amqpSend(t, amqpSender(t, s, "queue://"+base+".tostomp", nil), out)
	sm := recv(t, ss)
	if string(sm.Body) != "to stomp" || sm.Header.Get("n") != "7" {
		t.Fatalf("STOMP got %q %v", sm.Body, sm.Header)
	}
	// MQTT → AMQP and AMQP → MQTT on a topic.
	tr := amqpReceiver(t, s, "topic://"+base+".sensor", nil)
	mc := mqttConnect(t, mqttBrokerAddr(t, b), base)
	mqttPub(t, mc, base+"/sensor", 1, false, "21.5")
	if m := amqpRecv(t, tr); string(m.GetData()) != "21.5" {
		t.Fatalf("MQTT publish reached AMQP as %q", m.GetData())
	}
	ch := mqttSub(t, mc, base+"/out", 0)
	amqpSend(t, amqpSender(t, s, "topic://"+base+".out", nil), amqp.NewMessage([]byte("to mqtt")))
	if m := ch.next(t); string(m.Payload()) != "to mqtt" {
		t.Fatalf("MQTT got %q", m.Payload())
	}
	_ = paho.ErrNotConnected
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
