package conform

import (
	"context"
	"errors"

	"github.com/go-stomp/stomp/v3"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// OpenWire cases with the project's Go OpenWire client
// (protocols/openwire/client), which speaks to a broker as ActiveMQ's JMS
// client does.

// owDial connects with the target's credentials and a client id unique to
// the case (suffix tells several apart); the connection closes at the end.
func owDial(t *T, suffix string) *client.Conn {
	t.Helper()
	o := client.DefaultOptions()
	o.ClientID = t.Uniq() + suffix
	o.Username, o.Password = t.User(), t.Password()
	c, err := client.Dial(t.Context(), t.Addr(OpenWire), o)
	if err != nil {
		t.Fatalf("OpenWire connect to %s: %v", t.Addr(OpenWire), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func owSession(t *T, c *client.Conn) *client.Session {
	t.Helper()
	s, err := c.Session(false)
	if err != nil {
		t.Fatalf("OpenWire session: %v", err)
	}
	return s
}

func owDest(t *T, s string) *wire.Destination {
	t.Helper()
	d, err := client.ParseDestination(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func owSend(t *T, s *client.Session, dest string, m *wire.Message) {
	t.Helper()
	p, err := s.Producer(owDest(t, dest))
	if err != nil {
		t.Fatalf("producer on %s: %v", dest, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	if err := p.Send(ctx, m, true); err != nil {
		t.Fatalf("send to %s: %v", dest, err)
	}
}

func owConsumer(t *T, s *client.Session, dest string, o client.ConsumerOptions) *client.Consumer {
	t.Helper()
	k, err := s.Consumer(owDest(t, dest), o)
	if err != nil {
		t.Fatalf("consumer on %s: %v", dest, err)
	}
	return k
}

func owRecv(t *T, k *client.Consumer) *wire.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	m, err := k.Receive(ctx)
	if err != nil {
		t.Fatalf("receive on %s: %v", k.Destination(), err)
	}
	return m
}

func owText(t *T, m *wire.Message) string {
	t.Helper()
	s, ok, err := m.Text(wire.DefaultLimits())
	if err != nil || !ok {
		t.Fatalf("message %s is not a TextMessage with a body (ok %v, %v)", wire.TypeName(m.DataStructureType()), ok, err)
	}
	return s
}

// A TextMessage with properties, correlation id and type comes back as
// sent, persistent, not redelivered.
func openWireQueueRoundTrip(t *T) {
	q := "queue://" + t.Uniq()
	s := owSession(t, owDial(t, ""))
	m := client.NewTextMessage("héllo wörld")
	m.CorrelationId, m.Type = "corr-1", "greeting"
	if err := m.SetProperties(map[string]any{"color": "red", "n": int32(7), "ok": true}); err != nil {
		t.Fatal(err)
	}
	owSend(t, s, q, m)
	got := owRecv(t, owConsumer(t, s, q, client.ConsumerOptions{}))
	if txt := owText(t, got); txt != "héllo wörld" {
		t.Fatalf("text %q", txt)
	}
	props, err := got.Properties(wire.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	t.Observe("recv", "%s properties %v correlation %q type %q persistent %v redelivery %d", wire.TypeName(got.DataStructureType()), props, got.CorrelationId, got.Type, got.Persistent, got.RedeliveryCounter)
	if props["color"] != "red" || props["n"] != int32(7) || props["ok"] != true {
		t.Fatalf("properties %v, want color=red n=7 ok=true", props)
	}
	if got.CorrelationId != "corr-1" || got.Type != "greeting" || !got.Persistent || got.RedeliveryCounter != 0 {
		t.Fatalf("correlation %q type %q persistent %v redelivery %d", got.CorrelationId, got.Type, got.Persistent, got.RedeliveryCounter)
	}
}

// A selector consumer gets only what matches; the rest stays for others.
func openWireSelector(t *T) {
	q := "queue://" + t.Uniq()
	s := owSession(t, owDial(t, ""))
	for _, c := range []string{"blue", "red", "red"} {
		m := client.NewTextMessage(c)
		if err := m.SetProperties(map[string]any{"color": c}); err != nil {
			t.Fatal(err)
		}
		owSend(t, s, q, m)
	}
	red := owConsumer(t, s, q, client.ConsumerOptions{Selector: "color = 'red'"})
	for range 2 {
		if txt := owText(t, owRecv(t, red)); txt != "red" {
			t.Fatalf("selector color = 'red' let %q through", txt)
		}
	}
	if err := red.Close(); err != nil {
		t.Fatal(err)
	}
	if txt := owText(t, owRecv(t, owConsumer(t, s, q, client.ConsumerOptions{}))); txt != "blue" {
		t.Fatalf("after the selector consumer: %q, want blue", txt)
	}
}

// A durable topic subscriber keeps persistent messages sent while it is
// away; unsubscribing destroys the subscription.
func openWireDurableSubscriber(t *T) {
	topic := "topic://" + t.Uniq()
	name := "sub"
	conn := owDial(t, "-sub")
	k := owConsumer(t, owSession(t, conn), topic, client.ConsumerOptions{DurableName: name})
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Unsubscribe(name) })
	owSend(t, owSession(t, owDial(t, "-pub")), topic, client.NewTextMessage("while away"))
	k = owConsumer(t, owSession(t, conn), topic, client.ConsumerOptions{DurableName: name})
	if txt := owText(t, owRecv(t, k)); txt != "while away" {
		t.Fatalf("durable subscriber got %q", txt)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Unsubscribe(name); err != nil {
		t.Fatalf("unsubscribe: %v", err)
	}
	// Gone: a second unsubscribe is refused.
	err := conn.Unsubscribe(name)
	var be *client.BrokerError
	if !errors.As(err, &be) {
		t.Fatalf("second unsubscribe: %v, want the broker's refusal", err)
	}
	t.Observe("error", "%s: %s", be.ClassName(), be.Message())
}

// An OpenWire TextMessage reaches STOMP as its text with the properties as
// headers; a STOMP SEND with content-length reaches OpenWire as a
// BytesMessage, one without as a TextMessage.
func openWireToSTOMPAndBack(t *T) {
	base := t.Uniq()
	sc := dial(t, t.Addr(STOMP))
	ss := sub(t, sc, "/queue/"+base+".tostomp", stomp.AckAuto)
	s := owSession(t, owDial(t, ""))
	m := client.NewTextMessage("from openwire")
	if err := m.SetProperties(map[string]any{"color": "red"}); err != nil {
		t.Fatal(err)
	}
	owSend(t, s, "queue://"+base+".tostomp", m)
	sm := recv(t, ss)
	t.Observe("recv", "STOMP MESSAGE %q headers %v", sm.Body, sm.Header)
	if string(sm.Body) != "from openwire" || sm.Header.Get("color") != "red" {
		t.Fatalf("STOMP got %q with color %q", sm.Body, sm.Header.Get("color"))
	}

	k := owConsumer(t, s, "queue://"+base+".fromstomp", client.ConsumerOptions{})
	send(t, sc, "/queue/"+base+".fromstomp", "bytes") // go-stomp sends content-length
	if got := owRecv(t, k); got.DataStructureType() != wire.TypeActiveMQBytesMessage {
		t.Fatalf("STOMP SEND with content-length reached OpenWire as %s, want a BytesMessage", wire.TypeName(got.DataStructureType()))
	}
	raw, _ := ConnectRaw(t, t.Addr(STOMP), "1.2")
	raw.SendMsg("/queue/"+base+".fromstomp", "text")
	got := owRecv(t, k)
	if txt := owText(t, got); txt != "text" {
		t.Fatalf("STOMP SEND without content-length: %q", txt)
	}
}

func init() {
	ow := []string{OpenWire}
	register(
		Case{Name: "openwire/connect/connection-control", Needs: ow, Run: openWireConnectionControl,
			Pins:   "a manageable connection gets one empty ConnectionControl; no client id is InvalidClientIDException; KeepAliveInfo is echoed",
			Source: "TransportConnection.processAddConnection; InactivityMonitor"},
		Case{Name: "openwire/tx/errors", Needs: ow, Run: openWireTransactionErrors,
			Pins:   "COMMIT or XA PREPARE of a transaction never begun is refused in ActiveMQ's words; a second BEGIN is a replay",
			Source: "TransactionBroker; TransportConnection.processBeginTransaction"},
		Case{Name: "openwire/client/queue-round-trip", Needs: ow, Run: openWireQueueRoundTrip,
			Pins:   "a TextMessage keeps its text, typed properties, JMSCorrelationID and JMSType; persistent, not redelivered",
			Source: "ActiveMQTextMessage; OpenWire v12 Message"},
		Case{Name: "openwire/client/selector", Needs: ow, Run: openWireSelector,
			Pins:   "a consumer's selector lets only matching messages through; the others stay on the queue",
			Source: "ConsumerInfo.selector; SelectorParser"},
		Case{Name: "openwire/client/durable-subscriber", Needs: ow, Run: openWireDurableSubscriber,
			Pins:   "a durable subscriber keeps what is sent while it is away; RemoveSubscriptionInfo destroys it, a second is refused",
			Source: "DurableTopicSubscription; TopicRegion.removeSubscription"},
		Case{Name: "cross/openwire-stomp/round-trip", Needs: []string{OpenWire, STOMP}, Run: openWireToSTOMPAndBack,
			Pins:   "a JMS TextMessage reaches STOMP with properties as headers; STOMP with content-length is a BytesMessage, without a TextMessage",
			Source: "LegacyFrameTranslator; reference mappings.md §1.4–1.5"},
	)
}
