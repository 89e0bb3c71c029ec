package conform

import (
	"context"
	"errors"
	"strings"

	"github.com/Azure/go-amqp"
	"github.com/go-stomp/stomp/v3"
)

// AMQP 1.0 cases with github.com/Azure/go-amqp.

func amqpCtx(t *T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func amqpDial(t *T, addr string, o *amqp.ConnOptions) *amqp.Conn {
	t.Helper()
	if o == nil {
		o = &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()}
	}
	if t.User() != "" {
		o.SASLType = amqp.SASLTypePlain(t.User(), t.Password())
	}
	c, err := amqp.Dial(amqpCtx(t), "amqp://"+addr, o)
	if err != nil {
		t.Fatalf("AMQP dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func amqpSession(t *T, c *amqp.Conn) *amqp.Session {
	t.Helper()
	s, err := c.NewSession(amqpCtx(t), nil)
	if err != nil {
		t.Fatalf("AMQP session: %v", err)
	}
	return s
}

func amqpSender(t *T, s *amqp.Session, target string, o *amqp.SenderOptions) *amqp.Sender {
	t.Helper()
	snd, err := s.NewSender(amqpCtx(t), target, o)
	if err != nil {
		t.Fatalf("AMQP sender to %q: %v", target, err)
	}
	return snd
}

func amqpReceiver(t *T, s *amqp.Session, source string, o *amqp.ReceiverOptions) *amqp.Receiver {
	t.Helper()
	r, err := s.NewReceiver(amqpCtx(t), source, o)
	if err != nil {
		t.Fatalf("AMQP receiver from %q: %v", source, err)
	}
	return r
}

func amqpSend(t *T, snd *amqp.Sender, m *amqp.Message) {
	t.Helper()
	if err := snd.Send(amqpCtx(t), m, nil); err != nil {
		t.Fatalf("AMQP send: %v", err)
	}
}

func amqpRecv(t *T, r *amqp.Receiver) *amqp.Message {
	t.Helper()
	m, err := r.Receive(amqpCtx(t), nil)
	if err != nil {
		t.Fatalf("AMQP receive: %v", err)
	}
	return m
}

func amqpQueueRoundTrip(t *T) {
	addr := t.Addr(AMQP)
	q := "queue://" + t.Uniq()
	c := amqpDial(t, addr, nil)
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
	// Nothing else is left on the queue: a marker sent now is next.
	amqpSend(t, snd, amqp.NewMessage([]byte("marker")))
	if m := amqpRecv(t, r); string(m.GetData()) != "marker" {
		t.Fatalf("after 50 accepted messages got %q, want the marker", m.GetData())
	}
}

func amqpPresettledAndBareAddress(t *T) {
	addr := t.Addr(AMQP)
	name := t.Uniq()
	c := amqpDial(t, addr, nil)
	s := amqpSession(t, c)
	settled := amqp.SenderSettleModeSettled
	snd := amqpSender(t, s, name, &amqp.SenderOptions{SettlementMode: &settled}) // bare address = queue
	amqpSend(t, snd, amqp.NewMessage([]byte("fire and forget")))
	r := amqpReceiver(t, s, "queue://"+name, &amqp.ReceiverOptions{RequestedSenderSettleMode: &settled})
	if m := amqpRecv(t, r); string(m.GetData()) != "fire and forget" {
		t.Fatalf("got %q", m.GetData())
	}
}

func amqpOutcomes(t *T) {
	addr := t.Addr(AMQP)
	q := "queue://" + t.Uniq()
	s := amqpSession(t, amqpDial(t, addr, nil))
	snd := amqpSender(t, s, q, nil)
	for _, body := range []string{"released", "rejected"} {
		// Durable: ActiveMQ dead-letters persistent messages only.
		m := amqp.NewMessage([]byte(body))
		m.Header = &amqp.MessageHeader{Durable: true}
		// testid finds it again on the shared ActiveMQ.DLQ.
		m.ApplicationProperties = map[string]any{"testid": t.Uniq()}
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
	dlq := amqpReceiver(t, s, "queue://ActiveMQ.DLQ", &amqp.ReceiverOptions{
		Filters: []amqp.LinkFilter{amqp.NewSelectorFilter("testid = '" + t.Uniq() + "'")}})
	if m := amqpRecv(t, dlq); string(m.GetData()) != "rejected" {
		t.Fatalf("DLQ got %q", m.GetData())
	}
}

func amqpSelectorAndDrain(t *T) {
	addr := t.Addr(AMQP)
	q := "queue://" + t.Uniq()
	s := amqpSession(t, amqpDial(t, addr, nil))
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

func amqpDynamicRequestReply(t *T) {
	addr := t.Addr(AMQP)
	q := "queue://" + t.Uniq()
	// Responder.
	rs := amqpSession(t, amqpDial(t, addr, nil))
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
	cs := amqpSession(t, amqpDial(t, addr, nil))
	tmp := amqpReceiver(t, cs, "", &amqp.ReceiverOptions{DynamicAddress: true})
	tmpAddr := tmp.Address()
	if !strings.HasPrefix(tmpAddr, "temp-queue://") {
		t.Fatalf("dynamic address %q, want a temp-queue:// name", tmpAddr)
	}
	snd := amqpSender(t, cs, q, nil)
	m := amqp.NewMessage([]byte("ping"))
	id := "req-1"
	m.Properties = &amqp.MessageProperties{MessageID: id, ReplyTo: &tmpAddr}
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

func amqpMixedProtocols(t *T) {
	addr := t.Addr(AMQP)
	base := t.Uniq()
	s := amqpSession(t, amqpDial(t, addr, nil))
	// STOMP → AMQP.
	sc := dial(t, t.Addr(STOMP))
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
	mc := MQTTConnect(t, t.Addr(MQTT), base)
	MQTTPub(t, mc, base+"/sensor", 1, false, "21.5")
	if m := amqpRecv(t, tr); string(m.GetData()) != "21.5" {
		t.Fatalf("MQTT publish reached AMQP as %q", m.GetData())
	}
	ch := MQTTSub(t, mc, base+"/out", 0)
	amqpSend(t, amqpSender(t, s, "topic://"+base+".out", nil), amqp.NewMessage([]byte("to mqtt")))
	if m := ch.Next(t); string(m.Payload()) != "to mqtt" {
		t.Fatalf("MQTT got %q", m.Payload())
	}
}

func init() {
	am := []string{AMQP}
	register(
		Case{Name: "amqp/queue/round-trip", Needs: am, Run: amqpQueueRoundTrip,
			Pins:   "50 messages to queue://x come back in order with link credit 10; accepted ones are gone",
			Source: "AMQP 1.0 §2.6.7 (flow), §3.4.2 (accepted); AmqpSender"},
		Case{Name: "amqp/queue/presettled-bare-address", Needs: am, Run: amqpPresettledAndBareAddress,
			Pins:   "a bare address is a queue; a pre-settled send arrives at a settled receiver",
			Source: "AMQP 1.0 §2.7.3 (snd-settle-mode); AmqpSupport.createDestination"},
		Case{Name: "amqp/queue/outcomes", Needs: am, Run: amqpOutcomes,
			Pins:   "released redelivers without counting, modified(delivery-failed) counts, rejected dead-letters at once",
			Source: "AMQP 1.0 §3.4; AmqpSender.settle"},
		Case{Name: "amqp/link/selector-and-drain", Needs: am, Run: amqpSelectorAndDrain,
			Pins:   "a jms-selector filter selects by application properties; a drain uses up the credit and answers",
			Source: "AMQP JMS mapping (apache.org:selector-filter:string); AMQP 1.0 §2.6.7 drain"},
		Case{Name: "amqp/link/dynamic-request-reply", Needs: am, Run: amqpDynamicRequestReply,
			Pins:   "a dynamic receiver gets a temp-queue:// address; the anonymous relay routes by to and refuses a message without it",
			Source: "AMQP 1.0 §3.5.3 (dynamic); AmqpReceiver (anonymous relay)"},
		Case{Name: "cross/amqp-stomp-mqtt/round-trip", Needs: []string{AMQP, STOMP, MQTT}, Run: amqpMixedProtocols,
			Pins:   "STOMP bytes/text reach AMQP as Data/AmqpValue with properties; AMQP reaches STOMP and MQTT, MQTT reaches AMQP",
			Source: "JMSMappingOutboundTransformer / AMQPNativeInboundTransformer; reference mappings.md"},
	)
}
