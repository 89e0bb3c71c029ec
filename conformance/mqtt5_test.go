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
