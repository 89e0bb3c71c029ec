package conformance

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// MQTT 5 conformance with Eclipse Paho's MQTT 5 client (eclipse/paho.golang).
// ActiveMQ Classic has no MQTT 5; these check the specification.

type v5Client struct {
	*paho.Client
	got  chan *paho.Publish
	gone chan *paho.Disconnect
	ack  *paho.Connack
}

func mqtt5Connect(t *testing.T, addr string, cp *paho.Connect) *v5Client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &v5Client{got: make(chan *paho.Publish, 1000), gone: make(chan *paho.Disconnect, 1)}
	c.Client = paho.NewClient(paho.ClientConfig{
		Conn: nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(r paho.PublishReceived) (bool, error) {
			c.got <- r.Packet
			return true, nil
		}},
		OnServerDisconnect: func(d *paho.Disconnect) { c.gone <- d },
		OnClientError:      func(error) {},
	})
	if cp.KeepAlive == 0 {
		cp.KeepAlive = 30
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.Connect(ctx, cp)
	if err != nil {
		t.Fatalf("MQTT 5 connect %q: %v (connack %+v)", cp.ClientID, err, ack)
	}
	c.ack = ack
	t.Cleanup(func() { c.Disconnect(&paho.Disconnect{}) })
	return c
}

func (c *v5Client) next(t *testing.T) *paho.Publish {
	t.Helper()
	select {
	case p := <-c.got:
		return p
	case <-time.After(wait):
		t.Fatal("no MQTT 5 message within", wait)
		return nil
	}
}

func (c *v5Client) none(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case p := <-c.got:
		t.Fatalf("unexpected MQTT 5 message on %s: %q", p.Topic, p.Payload)
	case <-time.After(within):
	}
}

func (c *v5Client) sub(t *testing.T, s *paho.Subscribe) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.Subscribe(ctx, s)
	if ack == nil {
		t.Fatalf("subscribe: %v", err)
	}
	return ack.Reasons
}

func (c *v5Client) pub(t *testing.T, p *paho.Publish) *paho.PublishResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, err := c.Publish(ctx, p)
	if err != nil && r == nil {
		t.Fatalf("publish %s: %v", p.Topic, err)
	}
	return r
}

func TestConformanceMQTT5ConnackAndAssignedClientID(t *testing.T) {
	b := mqttBroker(t, nil)
	c := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{CleanStart: true})
	p := c.ack.Properties
	if p == nil || p.AssignedClientID == "" {
		t.Fatalf("no Assigned Client Identifier for an empty client id: %+v", p)
	}
	if p.TopicAliasMaximum == nil || *p.TopicAliasMaximum == 0 || p.ReceiveMaximum == nil || !p.SharedSubAvailable {
		t.Fatalf("CONNACK properties %+v: want topic aliases, a receive maximum, shared subscriptions", p)
	}
	if c.ack.ReasonCode != 0 {
		t.Fatalf("reason %#x", c.ack.ReasonCode)
	}
}

func TestConformanceMQTT5PropertiesRoundTrip(t *testing.T) {
	b := mqttBroker(t, nil)
	base := uniq(t)
	c := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: true})
	reasons := c.sub(t, &paho.Subscribe{
		Properties:    &paho.SubscribeProperties{SubscriptionIdentifier: func() *int { n := 7; return &n }()},
		Subscriptions: []paho.SubscribeOptions{{Topic: base + "/req", QoS: 1}},
	})
	if len(reasons) != 1 || reasons[0] != 1 {
		t.Fatalf("SUBACK reasons %v, want granted QoS 1", reasons)
	}
	user := paho.UserProperties{}
	user.Add("tenant", "blue").Add("trace", "42")
	format := byte(1)
	expiry := uint32(60)
	r := c.pub(t, &paho.Publish{Topic: base + "/req", QoS: 1, Payload: []byte("héllo"), Properties: &paho.PublishProperties{
		ContentType: "text/plain", ResponseTopic: base + "/reply", CorrelationData: []byte("corr-1"),
		PayloadFormat: &format, MessageExpiry: &expiry, User: user,
	}})
	if r.ReasonCode != 0 {
		t.Fatalf("PUBACK reason %#x", r.ReasonCode)
	}
	m := c.next(t)
	pp := m.Properties
	if string(m.Payload) != "héllo" || pp == nil {
		t.Fatalf("got %q props %+v", m.Payload, pp)
	}
	if pp.ContentType != "text/plain" || pp.ResponseTopic != base+"/reply" || string(pp.CorrelationData) != "corr-1" {
		t.Fatalf("content type %q response topic %q correlation %q", pp.ContentType, pp.ResponseTopic, pp.CorrelationData)
	}
	if pp.PayloadFormat == nil || *pp.PayloadFormat != 1 || pp.MessageExpiry == nil || *pp.MessageExpiry == 0 || *pp.MessageExpiry > 60 {
		t.Fatalf("payload format %v, expiry %v", pp.PayloadFormat, pp.MessageExpiry)
	}
	if pp.User.Get("tenant") != "blue" || pp.User.Get("trace") != "42" {
		t.Fatalf("user properties %v", pp.User)
	}
	if pp.SubscriptionIdentifier == nil || *pp.SubscriptionIdentifier != 7 {
		t.Fatalf("subscription identifier %v, want 7", pp.SubscriptionIdentifier)
	}
}

func TestConformanceMQTT5TopicAlias(t *testing.T) {
	b := mqttBroker(t, nil)
	base := uniq(t)
	c := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: true})
	c.sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: base + "/alias", QoS: 0}}})
	c.pub(t, &paho.Publish{Topic: base + "/alias", QoS: 1, Payload: []byte("set"), Properties: &paho.PublishProperties{TopicAlias: paho.Uint16(3)}})
	c.pub(t, &paho.Publish{Topic: "", QoS: 1, Payload: []byte("use"), Properties: &paho.PublishProperties{TopicAlias: paho.Uint16(3)}})
	for _, want := range []string{"set", "use"} {
		if m := c.next(t); string(m.Payload) != want || m.Topic != base+"/alias" {
			t.Fatalf("got %s %q, want %s %q", m.Topic, m.Payload, base+"/alias", want)
		}
	}
}

func TestConformanceMQTT5NoLocalAndRetainAsPublished(t *testing.T) {
	b := mqttBroker(t, nil)
	base := uniq(t)
	c := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: true})
	other := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base + "-o", CleanStart: true})
	c.sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: base + "/nl", QoS: 1, NoLocal: true},
		{Topic: base + "/rap", QoS: 1, RetainAsPublished: true, RetainHandling: 2},
	}})
	c.pub(t, &paho.Publish{Topic: base + "/nl", QoS: 1, Payload: []byte("mine")})
	other.pub(t, &paho.Publish{Topic: base + "/nl", QoS: 1, Payload: []byte("theirs")})
	if m := c.next(t); string(m.Payload) != "theirs" {
		t.Fatalf("no-local subscription got %q", m.Payload)
	}
	other.pub(t, &paho.Publish{Topic: base + "/rap", QoS: 1, Retain: true, Payload: []byte("kept")})
	if m := c.next(t); !m.Retain || string(m.Payload) != "kept" {
		t.Fatalf("retain-as-published: retain=%v %q", m.Retain, m.Payload)
	}
	c.none(t, 200*time.Millisecond)
}

func TestConformanceMQTT5SessionExpiryAndTakeover(t *testing.T) {
	b := mqttBroker(t, nil)
	base := uniq(t)
	expiry := uint32(300)
	c := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: true,
		Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}})
	c.sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: base + "/s", QoS: 1}}})
	// A second connection with the id takes the session over: the first
	// gets DISCONNECT 0x8E.
	c2 := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: false,
		Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}})
	select {
	case d := <-c.gone:
		if d.ReasonCode != 0x8E {
			t.Fatalf("taken-over session got DISCONNECT %#x, want 0x8E", d.ReasonCode)
		}
	case <-time.After(wait):
		t.Fatal("taken-over session got no DISCONNECT")
	}
	if !c2.ack.SessionPresent {
		t.Fatal("session present not set for a resumed session")
	}
	c2.pub(t, &paho.Publish{Topic: base + "/s", QoS: 1, Payload: []byte("resumed")})
	if m := c2.next(t); string(m.Payload) != "resumed" {
		t.Fatalf("resumed subscription got %q", m.Payload)
	}
	// Session expiry 0 on DISCONNECT ends the session: its subscription goes.
	zero := uint32(0)
	c2.Disconnect(&paho.Disconnect{Properties: &paho.DisconnectProperties{SessionExpiryInterval: &zero}})
	eventually(t, func() bool { return len(b.Engine().DurableSubs(base)) == 0 })
}

func TestConformanceMQTT5ReceiveMaximum(t *testing.T) {
	b := mqttBroker(t, nil)
	base := uniq(t)
	rm := uint16(2)
	c := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: true,
		Properties: &paho.ConnectProperties{ReceiveMaximum: &rm}})
	c.sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: base + "/rm", QoS: 1}}})
	pub := mqtt5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base + "-p", CleanStart: true})
	for i := 0; i < 20; i++ {
		pub.pub(t, &paho.Publish{Topic: base + "/rm", QoS: 1, Payload: []byte{byte('a' + i)}})
	}
	// Paho acknowledges as it receives; all 20 arrive in order through a
	// window of 2.
	for i := 0; i < 20; i++ {
		if m := c.next(t); m.Payload[0] != byte('a'+i) {
			t.Fatalf("message %d: %q", i, m.Payload)
		}
	}
}

// eventually polls cond until it holds or wait passes.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within", wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
