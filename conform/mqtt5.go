package conform

import (
	"context"
	"net"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// MQTT 5 cases with Eclipse Paho's MQTT 5 client (eclipse/paho.golang).
// ActiveMQ Classic 5.17 has no MQTT 5: these check the specification, and
// skip on a broker that refuses protocol level 5.

// MQTT5Client is a Paho MQTT 5 client that collects what it receives.
type MQTT5Client struct {
	*paho.Client
	got chan *paho.Publish
	// Gone gets the server's DISCONNECT.
	Gone chan *paho.Disconnect
	// Connack is the broker's answer to CONNECT.
	Connack *paho.Connack
}

func MQTT5Connect(t TB, addr string, cp *paho.Connect) *MQTT5Client {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &MQTT5Client{got: make(chan *paho.Publish, 1000), Gone: make(chan *paho.Disconnect, 1)}
	c.Client = paho.NewClient(paho.ClientConfig{
		Conn: nc,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(r paho.PublishReceived) (bool, error) {
			c.got <- r.Packet
			return true, nil
		}},
		OnServerDisconnect: func(d *paho.Disconnect) { c.Gone <- d },
		OnClientError:      func(error) {},
	})
	if cp.KeepAlive == 0 {
		cp.KeepAlive = 30
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if u, p := credentials(t); u != "" && cp.Username == "" {
		cp.Username, cp.UsernameFlag = u, true
		cp.Password, cp.PasswordFlag = []byte(p), true
	}
	ack, err := c.Connect(ctx, cp)
	if err != nil && !isWharf(t) {
		// ActiveMQ 5.17 answers protocol level 5 with an MQTT 3 CONNACK
		// (unacceptable protocol version) and closes.
		t.Skipf("the broker does not speak MQTT 5: CONNECT at protocol level 5: %v (connack %+v)", err, ack)
	}
	if err != nil {
		t.Fatalf("MQTT 5 connect %q: %v (connack %+v)", cp.ClientID, err, ack)
	}
	c.Connack = ack
	t.Cleanup(func() { c.Disconnect(&paho.Disconnect{}) })
	return c
}

func (c *MQTT5Client) Next(t TB) *paho.Publish {
	t.Helper()
	select {
	case p := <-c.got:
		return p
	case <-time.After(wait):
		t.Fatal("no MQTT 5 message within", wait)
		return nil
	}
}

func (c *MQTT5Client) None(t TB, within time.Duration) {
	t.Helper()
	select {
	case p := <-c.got:
		t.Fatalf("unexpected MQTT 5 message on %s: %q", p.Topic, p.Payload)
	case <-time.After(within):
	}
}

func (c *MQTT5Client) Sub(t TB, s *paho.Subscribe) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ack, err := c.Subscribe(ctx, s)
	if ack == nil {
		t.Fatalf("subscribe: %v", err)
	}
	return ack.Reasons
}

func (c *MQTT5Client) Pub(t TB, p *paho.Publish) *paho.PublishResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	r, err := c.Publish(ctx, p)
	if err != nil && r == nil {
		t.Fatalf("publish %s: %v", p.Topic, err)
	}
	return r
}

func mqtt5ConnackAndAssignedClientID(t *T) {
	addr := t.Addr(MQTT)
	c := MQTT5Connect(t, addr, &paho.Connect{CleanStart: true})
	p := c.Connack.Properties
	if p == nil || p.AssignedClientID == "" {
		t.Fatalf("no Assigned Client Identifier for an empty client id: %+v", p)
	}
	if p.TopicAliasMaximum == nil || *p.TopicAliasMaximum == 0 || p.ReceiveMaximum == nil || !p.SharedSubAvailable {
		t.Fatalf("CONNACK properties %+v: want topic aliases, a receive maximum, shared subscriptions", p)
	}
	if c.Connack.ReasonCode != 0 {
		t.Fatalf("reason %#x", c.Connack.ReasonCode)
	}
}

func mqtt5PropertiesRoundTrip(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	c := MQTT5Connect(t, addr, &paho.Connect{ClientID: base, CleanStart: true})
	reasons := c.Sub(t, &paho.Subscribe{
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
	r := c.Pub(t, &paho.Publish{Topic: base + "/req", QoS: 1, Payload: []byte("héllo"), Properties: &paho.PublishProperties{
		ContentType: "text/plain", ResponseTopic: base + "/reply", CorrelationData: []byte("corr-1"),
		PayloadFormat: &format, MessageExpiry: &expiry, User: user,
	}})
	if r.ReasonCode != 0 {
		t.Fatalf("PUBACK reason %#x", r.ReasonCode)
	}
	m := c.Next(t)
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

func mqtt5TopicAlias(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	c := MQTT5Connect(t, addr, &paho.Connect{ClientID: base, CleanStart: true})
	c.Sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: base + "/alias", QoS: 0}}})
	c.Pub(t, &paho.Publish{Topic: base + "/alias", QoS: 1, Payload: []byte("set"), Properties: &paho.PublishProperties{TopicAlias: paho.Uint16(3)}})
	c.Pub(t, &paho.Publish{Topic: "", QoS: 1, Payload: []byte("use"), Properties: &paho.PublishProperties{TopicAlias: paho.Uint16(3)}})
	for _, want := range []string{"set", "use"} {
		if m := c.Next(t); string(m.Payload) != want || m.Topic != base+"/alias" {
			t.Fatalf("got %s %q, want %s %q", m.Topic, m.Payload, base+"/alias", want)
		}
	}
}

func mqtt5NoLocalAndRetainAsPublished(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	c := MQTT5Connect(t, addr, &paho.Connect{ClientID: base, CleanStart: true})
	other := MQTT5Connect(t, addr, &paho.Connect{ClientID: base + "-o", CleanStart: true})
	c.Sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: base + "/nl", QoS: 1, NoLocal: true},
		{Topic: base + "/rap", QoS: 1, RetainAsPublished: true, RetainHandling: 2},
	}})
	c.Pub(t, &paho.Publish{Topic: base + "/nl", QoS: 1, Payload: []byte("mine")})
	other.Pub(t, &paho.Publish{Topic: base + "/nl", QoS: 1, Payload: []byte("theirs")})
	if m := c.Next(t); string(m.Payload) != "theirs" {
		t.Fatalf("no-local subscription got %q", m.Payload)
	}
	other.Pub(t, &paho.Publish{Topic: base + "/rap", QoS: 1, Retain: true, Payload: []byte("kept")})
	if m := c.Next(t); !m.Retain || string(m.Payload) != "kept" {
		t.Fatalf("retain-as-published: retain=%v %q", m.Retain, m.Payload)
	}
	c.None(t, 200*time.Millisecond)
}

func mqtt5ReceiveMaximum(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	rm := uint16(2)
	c := MQTT5Connect(t, addr, &paho.Connect{ClientID: base, CleanStart: true,
		Properties: &paho.ConnectProperties{ReceiveMaximum: &rm}})
	c.Sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: base + "/rm", QoS: 1}}})
	pub := MQTT5Connect(t, addr, &paho.Connect{ClientID: base + "-p", CleanStart: true})
	for i := 0; i < 20; i++ {
		pub.Pub(t, &paho.Publish{Topic: base + "/rm", QoS: 1, Payload: []byte{byte('a' + i)}})
	}
	// Paho acknowledges as it receives; all 20 arrive in order through a
	// window of 2.
	for i := 0; i < 20; i++ {
		if m := c.Next(t); m.Payload[0] != byte('a'+i) {
			t.Fatalf("message %d: %q", i, m.Payload)
		}
	}
}

// mqtt5Extension is the Extension of the MQTT 5 cases.
const mqtt5Extension = "MQTT 5: ActiveMQ 5.17 speaks MQTT 3.1 and 3.1.1 only and refuses protocol level 5; these cases check the MQTT 5.0 specification and skip on a broker that refuses it"

func init() {
	mq := []string{MQTT}
	register(
		Case{Name: "mqtt5/connect/assigned-client-id", Needs: mq, Run: mqtt5ConnackAndAssignedClientID, Extension: mqtt5Extension,
			Pins:   "an empty client id gets an Assigned Client Identifier in CONNACK",
			Source: "[MQTT-3.2.2-16] MQTT 5.0 §3.2.2.3.7"},
		Case{Name: "mqtt5/publish/properties-round-trip", Needs: mq, Run: mqtt5PropertiesRoundTrip, Extension: mqtt5Extension,
			Pins:   "user properties, content type, response topic, correlation data and payload format reach the subscriber",
			Source: "MQTT 5.0 §3.3.2.3"},
		Case{Name: "mqtt5/publish/topic-alias", Needs: mq, Run: mqtt5TopicAlias, Extension: mqtt5Extension,
			Pins:   "a PUBLISH by topic alias reaches the alias's topic",
			Source: "MQTT 5.0 §3.3.2.3.4"},
		Case{Name: "mqtt5/subscribe/no-local-retain-as-published", Needs: mq, Run: mqtt5NoLocalAndRetainAsPublished, Extension: mqtt5Extension,
			Pins:   "No Local keeps a client's own publications from it; Retain As Published keeps the retain flag",
			Source: "[MQTT-3.8.3-3], MQTT 5.0 §3.8.3.1"},
		Case{Name: "mqtt5/flow/receive-maximum", Needs: mq, Run: mqtt5ReceiveMaximum, Extension: mqtt5Extension,
			Pins:   "the broker sends no more unacknowledged QoS 1 publications than the client's Receive Maximum",
			Source: "[MQTT-3.3.4-9] MQTT 5.0 §4.9"},
	)
}
