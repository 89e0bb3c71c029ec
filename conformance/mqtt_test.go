package conformance

import (
	"fmt"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"

	"wharf/cmd/wharf/wiring"
	"wharf/conform"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
)

// MQTT 3.1.1 conformance with Eclipse Paho (paho.mqtt.golang v1.5.1), the
// client the issue names, against an in-process broker.

// mqttBroker starts a broker; mod changes the MQTT connector's options.
func mqttBroker(t *testing.T, opts map[string]string, more ...brokertest.Option) *brokertest.Broker {
	t.Helper()
	o := append([]brokertest.Option{brokertest.WithConfig(func(c *config.Config) {
		for i := range c.Transports {
			if c.Transports[i].Scheme == "mqtt" {
				for k, v := range opts {
					c.Transports[i].Options[k] = v
				}
			}
		}
	})}, more...)
	b := brokertest.Start(t, wiring.Factories(), o...)
	if b.MQTTAddr() == "" {
		t.Fatal("the broker has no MQTT connector")
	}
	return b
}

func TestConformanceMQTTPersistentSession(t *testing.T) {
	b := mqttBroker(t, nil, brokertest.WithKahaDB()) // the restart reopens the store from disk
	base := uniq(t)
	id := base + "-dev"
	persistent := func(o *paho.ClientOptions) { o.SetCleanSession(false) }
	c := conform.MQTTConnect(t, b.MQTTAddr(), id, persistent)
	conform.MQTTSub(t, c, base+"/cmd/#", 1)
	conform.MQTTSub(t, c, base+"/q0", 0)
	c.Disconnect(50)

	// Kept as ActiveMQ keeps it: a durable subscription of the client id
	// named <QoS>:<filter>; the QoS 0 one is not durable.
	subs := b.Engine().DurableSubs(id)
	if len(subs) != 1 || subs[0].Key.Name != "AT_LEAST_ONCE:"+base+"/cmd/#" || subs[0].Destination != message.TopicDest(strings.ReplaceAll(base, "/", ".")+".cmd.>") {
		t.Fatalf("durable subscriptions of %s: %+v", id, subs)
	}

	pub := conform.MQTTConnect(t, b.MQTTAddr(), base+"-pub")
	conform.MQTTPub(t, pub, base+"/cmd/a", 1, false, "while-away-1")
	conform.MQTTPub(t, pub, base+"/cmd/b", 0, false, "qos0-not-kept")
	conform.MQTTPub(t, pub, base+"/cmd/c", 2, false, "while-away-2")

	b.Restart() // the session survives a broker restart too
	ch := make(conform.MQTTMessages, 10)
	c = conform.MQTTConnect(t, b.MQTTAddr(), id, persistent, func(o *paho.ClientOptions) {
		o.SetDefaultPublishHandler(ch.Handler)
		o.SetOnConnectHandler(nil)
	})
	if !c.IsConnected() {
		t.Fatal("not connected")
	}
	for _, want := range []string{"while-away-1", "while-away-2"} {
		if m := ch.Next(t); string(m.Payload()) != want {
			t.Fatalf("resumed session got %q, want %q", m.Payload(), want)
		}
	}
	ch.None(t, 200*time.Millisecond)
	c.Disconnect(50)

	// A clean session deletes it.
	conform.MQTTConnect(t, b.MQTTAddr(), id).Disconnect(50)
	if subs := b.Engine().DurableSubs(id); len(subs) != 0 {
		t.Fatalf("clean session left %+v", subs)
	}
}

func TestConformanceMQTTAuthentication(t *testing.T) {
	b := mqttBroker(t, nil, brokertest.WithEngine(func(o *engine.Options) {
		o.Authenticator = passwords{"dev": "secret"}
	}))
	o := paho.NewClientOptions().AddBroker("tcp://" + b.MQTTAddr()).SetClientID(uniq(t)).
		SetUsername("dev").SetPassword("wrong").SetAutoReconnect(false).SetConnectTimeout(wait)
	c := paho.NewClient(o)
	tok := c.Connect()
	tok.WaitTimeout(wait)
	// ActiveMQ 5.17.2 answers a wrong password with CONNACK 5 (not
	// authorized), not 4 (conformance/security-reference.md).
	if err := tok.Error(); err == nil || !strings.Contains(err.Error(), "not Authorized") {
		t.Fatalf("wrong password: %v, want CONNACK 5 (not authorized)", err)
	}
	good := conform.MQTTConnect(t, b.MQTTAddr(), uniq(t)+"-ok", func(o *paho.ClientOptions) {
		o.SetUsername("dev").SetPassword("secret")
	})
	if !good.IsConnected() {
		t.Fatal("right password refused")
	}
}

// passwords is an Authenticator with a fixed table.
type passwords map[string]string

func (p passwords) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	if pw, ok := p[c.Username]; !ok || pw != c.Password {
		return nil, fmt.Errorf("%w: user %q", engine.ErrBadCredentials, c.Username)
	}
	return &engine.Subject{User: c.Username}, nil
}

func TestConformanceMQTTVirtualTopicStrategy(t *testing.T) {
	b := mqttBroker(t, map[string]string{"transport.subscriptionStrategy": "mqtt-virtual-topic-subscriptions"})
	base := uniq(t)
	id := base + "-dev"
	persistent := func(o *paho.ClientOptions) { o.SetCleanSession(false) }
	sc, err := stomp.Dial("tcp", b.STOMPAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Disconnect()
	// Publishes go to VirtualTopic.<topic>.
	ss, err := sc.Subscribe("/topic/VirtualTopic."+base+".t", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sc)
	c := conform.MQTTConnect(t, b.MQTTAddr(), id, persistent)
	ch := conform.MQTTSub(t, c, base+"/t", 1)
	conform.MQTTPub(t, c, base+"/t", 1, false, "v1")
	if m := recv(t, ss); string(m.Body) != "v1" {
		t.Fatalf("STOMP on the virtual topic got %q", m.Body)
	}
	// The durable subscription is a queue fed by the virtual topic, and the
	// MQTT subscriber sees the topic without the prefix.
	if m := ch.Next(t); m.Topic() != base+"/t" || string(m.Payload()) != "v1" {
		t.Fatalf("MQTT got %s %q", m.Topic(), m.Payload())
	}
	q := message.QueueDest("Consumer." + id + ":AT_LEAST_ONCE.VirtualTopic." + base + ".t")
	if st := b.Engine().Stats(q); !st.Exists || st.ConsumerCount != 1 {
		t.Fatalf("subscription queue %s: %+v", q, st)
	}
	c.Disconnect(50)
	conform.MQTTPub(t, conform.MQTTConnect(t, b.MQTTAddr(), base+"-p"), base+"/t", 1, false, "while-away")
	ch2 := make(conform.MQTTMessages, 10)
	conform.MQTTConnect(t, b.MQTTAddr(), id, persistent, func(o *paho.ClientOptions) { o.SetDefaultPublishHandler(ch2.Handler) })
	if m := ch2.Next(t); string(m.Payload()) != "while-away" {
		t.Fatalf("resumed virtual-topic session got %q", m.Payload())
	}
	// A clean session removes the queue.
	conform.MQTTConnect(t, b.MQTTAddr(), id).Disconnect(50)
	if st := b.Engine().Stats(q); st.Exists {
		t.Fatalf("clean session left %s", q)
	}
}

func TestConformanceMQTTOverWebSocket(t *testing.T) {
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		c.Transports = append(c.Transports, config.Transport{Name: "ws", URI: "ws://127.0.0.1:0", Scheme: "ws",
			Host: "127.0.0.1", Options: map[string]string{}})
	}))
	wsAddr := b.Addr("ws").String()
	base := uniq(t)
	// Paho speaks MQTT over WebSocket (subprotocol "mqtt") to the ws
	// connector, which serves STOMP on the same port.
	o := paho.NewClientOptions().AddBroker("ws://" + wsAddr + "/").SetClientID(base).
		SetAutoReconnect(false).SetConnectTimeout(wait).SetProtocolVersion(4)
	c := paho.NewClient(o)
	conform.MQTTWait(t, c.Connect(), "connect over WebSocket")
	defer c.Disconnect(0)
	ch := conform.MQTTSub(t, c, base+"/ws", 1)
	tcp := conform.MQTTConnect(t, b.MQTTAddr(), base+"-tcp")
	conform.MQTTPub(t, tcp, base+"/ws", 1, false, "over tcp, to ws")
	if m := ch.Next(t); string(m.Payload()) != "over tcp, to ws" {
		t.Fatalf("got %q", m.Payload())
	}
	conform.MQTTPub(t, c, base+"/ws", 0, false, "from ws")
	if m := ch.Next(t); string(m.Payload()) != "from ws" {
		t.Fatalf("got %q", m.Payload())
	}
}
