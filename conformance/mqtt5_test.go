package conformance

import (
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"wharf/conform"
)

// MQTT 5 conformance with Eclipse Paho's MQTT 5 client (eclipse/paho.golang).
// ActiveMQ Classic has no MQTT 5; these check the specification.

func TestConformanceMQTT5SessionExpiryAndTakeover(t *testing.T) {
	b := mqttBroker(t, nil)
	base := uniq(t)
	expiry := uint32(300)
	c := conform.MQTT5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: true,
		Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}})
	c.Sub(t, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: base + "/s", QoS: 1}}})
	// A second connection with the id takes the session over: the first
	// gets DISCONNECT 0x8E.
	c2 := conform.MQTT5Connect(t, b.MQTTAddr(), &paho.Connect{ClientID: base, CleanStart: false,
		Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}})
	select {
	case d := <-c.Gone:
		if d.ReasonCode != 0x8E {
			t.Fatalf("taken-over session got DISCONNECT %#x, want 0x8E", d.ReasonCode)
		}
	case <-time.After(wait):
		t.Fatal("taken-over session got no DISCONNECT")
	}
	if !c2.Connack.SessionPresent {
		t.Fatal("session present not set for a resumed session")
	}
	c2.Pub(t, &paho.Publish{Topic: base + "/s", QoS: 1, Payload: []byte("resumed")})
	if m := c2.Next(t); string(m.Payload) != "resumed" {
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
