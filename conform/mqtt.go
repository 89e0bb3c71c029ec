package conform

import (
	"net"
	"net/url"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"
)

// MQTT 3.1.1 cases with Eclipse Paho (paho.mqtt.golang).

// MQTTMessages collects what a Paho subscription receives.
type MQTTMessages chan paho.Message

func (c MQTTMessages) Handler(_ paho.Client, m paho.Message) { c <- m }

func (c MQTTMessages) Next(t TB) paho.Message {
	t.Helper()
	select {
	case m := <-c:
		observe(t, "recv", "MQTT PUBLISH topic:%q qos:%d retained:%v payload=%q", m.Topic(), m.Qos(), m.Retained(), m.Payload())
		return m
	case <-time.After(wait):
		t.Fatal("no MQTT message within", wait)
		return nil
	}
}

func (c MQTTMessages) None(t TB, within time.Duration) {
	t.Helper()
	select {
	case m := <-c:
		t.Fatalf("unexpected MQTT message on %s: %q", m.Topic(), m.Payload())
	case <-time.After(within):
	}
}

type MQTTOpt func(*paho.ClientOptions)

func MQTTConnect(t TB, addr, clientID string, opts ...MQTTOpt) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(clientID).
		SetAutoReconnect(false).SetConnectRetry(false).SetProtocolVersion(4).
		SetConnectTimeout(wait).SetKeepAlive(30 * time.Second).SetOrderMatters(true)
	if u, p := credentials(t); u != "" {
		o.SetUsername(u).SetPassword(p)
	}
	for _, f := range opts {
		f(o)
	}
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(wait) {
		t.Fatal("MQTT connect timed out")
	}
	if err := tok.Error(); err != nil {
		t.Fatalf("MQTT connect %q: %v", clientID, err)
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c
}

func MQTTWait(t TB, tok paho.Token, what string) {
	t.Helper()
	if !tok.WaitTimeout(wait) {
		t.Fatalf("%s: timed out", what)
	}
	if err := tok.Error(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func MQTTSub(t TB, c paho.Client, filter string, qos byte) MQTTMessages {
	t.Helper()
	ch := make(MQTTMessages, 1000)
	tok := c.Subscribe(filter, qos, ch.Handler)
	MQTTWait(t, tok, "subscribe "+filter)
	st := tok.(*paho.SubscribeToken)
	if got := st.Result()[filter]; got != qos {
		t.Fatalf("SUBACK for %s granted %d, want %d", filter, got, qos)
	}
	return ch
}

func MQTTPub(t TB, c paho.Client, topic string, qos byte, retained bool, payload string) {
	t.Helper()
	MQTTWait(t, c.Publish(topic, qos, retained, payload), "publish "+topic)
}

// MQTTDrop connects a client whose socket the returned func closes
// without DISCONNECT, as a crashed device would; rawDrop closes a client's socket without DISCONNECT, as a crashed device.
func MQTTDrop(t TB, addr, clientID string, opts ...MQTTOpt) (paho.Client, func()) {
	t.Helper()
	var nc net.Conn
	opts = append(opts, func(o *paho.ClientOptions) {
		o.SetCustomOpenConnectionFn(func(u *url.URL, _ paho.ClientOptions) (net.Conn, error) {
			c, err := net.Dial("tcp", u.Host)
			nc = c
			return c, err
		})
	})
	c := MQTTConnect(t, addr, clientID, opts...)
	return c, func() { nc.Close() }
}

func mqttQoSRoundTrips(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	sub := MQTTConnect(t, addr, base+"-sub")
	pub := MQTTConnect(t, addr, base+"-pub")
	for _, qos := range []byte{0, 1, 2} {
		topic := base + "/q" + string('0'+qos)
		ch := MQTTSub(t, sub, topic, qos)
		for i := 0; i < 20; i++ {
			MQTTPub(t, pub, topic, qos, false, strings.Repeat("x", i))
		}
		for i := 0; i < 20; i++ {
			m := ch.Next(t)
			if string(m.Payload()) != strings.Repeat("x", i) || m.Qos() != qos || m.Topic() != topic {
				t.Fatalf("qos %d message %d: topic %s qos %d payload %q", qos, i, m.Topic(), m.Qos(), m.Payload())
			}
			if m.Retained() || m.Duplicate() {
				t.Fatalf("qos %d message %d: retained=%v dup=%v, want neither", qos, i, m.Retained(), m.Duplicate())
			}
		}
	}
}

func mqttQoSDowngrade(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	c := MQTTConnect(t, addr, base)
	ch0 := MQTTSub(t, c, base+"/a", 0)
	ch1 := MQTTSub(t, c, base+"/b", 1)
	MQTTPub(t, c, base+"/a", 2, false, "two-to-zero")
	MQTTPub(t, c, base+"/b", 0, false, "zero-stays-zero")
	MQTTPub(t, c, base+"/b", 2, false, "two-to-one")
	if m := ch0.Next(t); m.Qos() != 0 {
		t.Fatalf("QoS 2 publish on a QoS 0 subscription arrived at %d", m.Qos())
	}
	if m := ch1.Next(t); m.Qos() != 0 || string(m.Payload()) != "zero-stays-zero" {
		t.Fatalf("QoS 0 publish on a QoS 1 subscription: qos %d %q", m.Qos(), m.Payload())
	}
	if m := ch1.Next(t); m.Qos() != 1 || string(m.Payload()) != "two-to-one" {
		t.Fatalf("QoS 2 publish on a QoS 1 subscription: qos %d %q", m.Qos(), m.Payload())
	}
}

func mqttDollarPublishDroppedByDefault(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	c := MQTTConnect(t, addr, base)
	ch := MQTTSub(t, c, "$"+base+"/x", 1)
	// ActiveMQ acknowledges and drops it unless publishDollarTopics=true.
	MQTTPub(t, c, "$"+base+"/x", 1, false, "dropped")
	MQTTPub(t, c, base+"/marker", 1, false, "m")
	marker := MQTTSub(t, c, base+"/marker", 1)
	_ = marker
	ch.None(t, 300*time.Millisecond)
}

func mqttWill(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	watcher := MQTTConnect(t, addr, base+"-watch")
	wills := MQTTSub(t, watcher, base+"/status/+", 1)

	_, crash := MQTTDrop(t, addr, base+"-dev1", func(o *paho.ClientOptions) {
		o.SetWill(base+"/status/dev1", "offline", 1, false)
	})
	polite := MQTTConnect(t, addr, base+"-dev2", func(o *paho.ClientOptions) {
		o.SetWill(base+"/status/dev2", "offline", 1, false)
	})
	polite.Disconnect(50) // a normal DISCONNECT discards the will
	crash()
	m := wills.Next(t)
	if m.Topic() != base+"/status/dev1" || string(m.Payload()) != "offline" {
		t.Fatalf("will: %s %q, want dev1 offline", m.Topic(), m.Payload())
	}
	wills.None(t, 300*time.Millisecond)
}

func mqttSessionTakeover(t *T) {
	addr := t.Addr(MQTT)
	id := t.Uniq()
	lost := make(chan error, 1)
	first := MQTTConnect(t, addr, id, func(o *paho.ClientOptions) {
		o.SetConnectionLostHandler(func(_ paho.Client, err error) { lost <- err })
	})
	_ = first
	second := MQTTConnect(t, addr, id)
	select {
	case <-lost:
	case <-time.After(wait):
		t.Fatal("the first connection was not closed when its client id connected again")
	}
	ch := MQTTSub(t, second, id+"/t", 1)
	MQTTPub(t, second, id+"/t", 1, false, "still works")
	if m := ch.Next(t); string(m.Payload()) != "still works" {
		t.Fatalf("after takeover: %q", m.Payload())
	}
}

func mqttToSTOMPAndBack(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	mc := MQTTConnect(t, addr, base)
	sc := dial(t, t.Addr(STOMP))
	// MQTT a/b is JMS topic a.b, so STOMP /topic/a.b.
	ss, err := sc.Subscribe("/topic/"+base+".sensor", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sc)
	MQTTPub(t, mc, base+"/sensor", 1, false, "\x00\x01binary")
	sm := recv(t, ss)
	if string(sm.Body) != "\x00\x01binary" {
		t.Fatalf("STOMP got %q", sm.Body)
	}
	// A BytesMessage: STOMP sees content-length; the QoS rides along.
	if sm.Header.Get("content-length") != "8" || sm.Header.Get("ActiveMQ.MQTT.QoS") != "1" || sm.Header.Get("persistent") != "true" {
		t.Fatalf("STOMP headers: %v", sm.Header)
	}

	ch := MQTTSub(t, mc, base+"/reply/+", 1)
	if err := sc.Send("/topic/"+base+".reply.x", "text/plain", []byte("from stomp")); err != nil {
		t.Fatal(err)
	}
	m := ch.Next(t)
	if m.Topic() != base+"/reply/x" || string(m.Payload()) != "from stomp" {
		t.Fatalf("MQTT got %s %q", m.Topic(), m.Payload())
	}
	// A non-persistent STOMP message (no ActiveMQ.MQTT.QoS) to a QoS 1
	// subscriber: ActiveMQ publishes at "persistent ? 0 : 1"
	// (MQTTProtocolConverter.convertMessage), so QoS 1. DEVIATION: Wharf
	// maps it as the inbound side does, non-persistent ⇒ QoS 0
	// (protocols/mqtt/subscribe.go messageQoS).
	want := byte(1)
	if !t.ActiveMQBehaviour() {
		want = 0
	}
	if m.Qos() != want {
		t.Fatalf("non-persistent STOMP message at QoS %d, want %d", m.Qos(), want)
	}
}

func init() {
	mq := []string{MQTT}
	register(
		Case{Name: "mqtt/qos/round-trips", Needs: mq, Run: mqttQoSRoundTrips,
			Pins:   "QoS 0, 1 and 2 publications reach a subscriber of the same QoS in order, neither retained nor dup",
			Source: "[MQTT-4.3]; MQTTProtocolConverter.onMQTTPublish"},
		Case{Name: "mqtt/qos/downgrade", Needs: mq, Run: mqttQoSDowngrade,
			Pins:   "a message is delivered at the lower of its publication QoS and the subscription's granted QoS",
			Source: "[MQTT-3.8.4-6]; MQTTProtocolConverter.convertMessage"},
		Case{Name: "mqtt/topics/dollar-publish-dropped", Needs: mq, Run: mqttDollarPublishDroppedByDefault,
			Pins:   "a PUBLISH to a $-topic is acknowledged and dropped unless publishDollarTopics=true",
			Source: "MQTTProtocolConverter.onMQTTPublish (publishDollarTopics)"},
		Case{Name: "mqtt/session/will", Needs: mq, Run: mqttWill,
			Pins:   "the will is published when a client drops without DISCONNECT, and discarded on a clean DISCONNECT",
			Source: "[MQTT-3.1.2-8], [MQTT-3.1.2-10]; MQTTProtocolConverter.onTransportError"},
		Case{Name: "mqtt/session/takeover", Needs: mq, Run: mqttSessionTakeover,
			Pins:   "a second CONNECT with a live client id closes the first connection; the second works",
			Source: "[MQTT-3.1.4-2]; MQTTProtocolConverter (link stealing)"},
		Case{Name: "cross/mqtt-stomp/round-trip", Needs: []string{MQTT, STOMP}, Run: mqttToSTOMPAndBack,
			Pins:      "MQTT a/b is JMS topic a.b: an MQTT publication reaches STOMP as a BytesMessage with ActiveMQ.MQTT.QoS, and back",
			Source:    "MQTTProtocolConverter.convertMessage; reference mappings.md",
			Deviation: "Wharf publishes a JMS/STOMP message without ActiveMQ.MQTT.QoS at QoS 1 when persistent and 0 when not; ActiveMQ does the reverse (persistent ? 0 : 1)"},
	)
}
