package mqtt

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
)

// The session state machine driven packet by packet over the in-memory
// transport.Conn, on a real engine with the memory store: what each packet
// writes back, what it leaves in the engine, and when the connection closes.

// wait bounds every wait for a packet the session writes from a shard or
// timer goroutine; a passing test never waits that long.
const wait = 5 * time.Second

var versions = []byte{wire.Version311, wire.Version5}

func versionName(v byte) string {
	if v == wire.Version5 {
		return "5"
	}
	return "3.1.1"
}

func newMQTTServer(t *testing.T, o Options) (*engine.Engine, *Server) {
	e := conntest.Engine(t)
	return e, NewServer(e, o)
}

// mqttClient is a client's view of one session: it encodes packets for
// it and decodes what it wrote.
type mqttClient struct {
	t       *testing.T
	v       byte
	tc      *conntest.Conn
	s       *session
	dec     *wire.Decoder
	read    int // bytes of tc's output decoded so far
	packets []wire.Packet
	gone    bool // OnClose was called
}

func dialMQTT(t *testing.T, srv *Server, v byte) *mqttClient {
	t.Helper()
	tc := &conntest.Conn{}
	c := &mqttClient{t: t, v: v, tc: tc, s: srv.Handler(tc).(*session), dec: wire.NewDecoder(wire.DefaultLimits())}
	c.dec.SetVersion(v)
	t.Cleanup(func() { c.close(nil) })
	return c
}

// close ends the connection as the transport would: OnClose, once; err
// nil is an orderly close, anything else a lost connection.
func (c *mqttClient) close(err error) {
	if !c.gone {
		c.gone = true
		c.s.OnClose(err)
	}
}

func (c *mqttClient) send(p *wire.Packet) { c.s.OnData(wire.AppendPacket(nil, p, c.v)) }

// connect sends CONNECT (the protocol name and level filled in) and
// returns the CONNACK.
func (c *mqttClient) connect(cn wire.Connect, props *wire.Properties) wire.Packet {
	c.t.Helper()
	cn.ProtocolName, cn.ProtocolLevel = wire.ProtocolName, c.v
	c.send(&wire.Packet{Type: wire.CONNECT, Connect: &cn, Props: props})
	return c.expect(wire.CONNACK)
}

// connectOK connects with a clean session as clientID and checks the
// CONNACK accepts.
func (c *mqttClient) connectOK(clientID string) {
	c.t.Helper()
	if ack := c.connect(wire.Connect{ClientID: clientID, CleanSession: true}, nil); ack.ReasonCode != 0 {
		c.t.Fatalf("CONNACK reason 0x%02x, want success", ack.ReasonCode)
	}
}

// next returns the next packet the session wrote, waiting for it.
func (c *mqttClient) next() wire.Packet {
	c.t.Helper()
	for len(c.packets) == 0 {
		in := c.tc.Since(c.read, wait)
		if in == nil {
			c.t.Fatalf("no packet within %v (closed: %v)", wait, c.tc.Closed())
		}
		c.read += len(in)
		ps, err := c.dec.Feed(in, nil)
		if err != nil {
			c.t.Fatalf("session wrote an undecodable packet: %v", err)
		}
		c.packets = append(c.packets, ps...)
	}
	p := c.packets[0]
	c.packets = c.packets[1:]
	return p
}

// expect reads the next packet and checks its type.
func (c *mqttClient) expect(t wire.Type) wire.Packet {
	c.t.Helper()
	p := c.next()
	if p.Type != t {
		c.t.Fatalf("got %s (reason 0x%02x), want %s", p.Type, p.ReasonCode, t)
	}
	return p
}

// expectAck reads an acknowledgement and checks its packet id and reason.
func (c *mqttClient) expectAck(t wire.Type, pid uint16, reason byte) {
	c.t.Helper()
	if p := c.expect(t); p.PacketID != pid || p.ReasonCode != reason {
		c.t.Fatalf("%s packet id %d reason 0x%02x, want %d 0x%02x", t, p.PacketID, p.ReasonCode, pid, reason)
	}
}

// expectPublish reads a PUBLISH and checks its topic, payload and QoS.
func (c *mqttClient) expectPublish(topic, payload string, qos byte) wire.Packet {
	c.t.Helper()
	p := c.expect(wire.PUBLISH)
	if p.Topic != topic || string(p.Payload) != payload || p.QoS != qos {
		c.t.Fatalf("PUBLISH %s %q QoS %d, want %s %q QoS %d", p.Topic, p.Payload, p.QoS, topic, payload, qos)
	}
	return p
}

func (c *mqttClient) subscribe(pid uint16, subs ...wire.Subscription) []byte {
	c.t.Helper()
	c.send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: pid, Subscriptions: subs})
	p := c.expect(wire.SUBACK)
	if p.PacketID != pid {
		c.t.Fatalf("SUBACK packet id %d, want %d", p.PacketID, pid)
	}
	return p.ReasonCodes
}

func (c *mqttClient) publish(topic, payload string, qos byte, pid uint16) {
	c.send(&wire.Packet{Type: wire.PUBLISH, Topic: topic, Payload: []byte(payload), QoS: qos, PacketID: pid})
}

// awaitClosed waits for the session to close its connection.
func (c *mqttClient) awaitClosed() {
	c.t.Helper()
	if !c.tc.Await(wait, func(_ []byte, closed bool) bool { return closed }) {
		c.t.Fatalf("the session did not close the connection within %v", wait)
	}
}

// quiet checks that the session wrote nothing it has not been asked for
// yet: call it after a barrier.
func (c *mqttClient) quiet() {
	c.t.Helper()
	if len(c.packets) > 0 || c.read != len(c.tc.Written()) {
		c.t.Fatalf("unexpected output: %d packets, %d bytes", len(c.packets), len(c.tc.Written())-c.read)
	}
}

// eachVersion runs test once per MQTT version, on a fresh engine with a
// client connected as "c1".
func eachVersion(t *testing.T, test func(t *testing.T, e *engine.Engine, c *mqttClient)) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			e, srv := newMQTTServer(t, DefaultOptions())
			c := dialMQTT(t, srv, v)
			c.connectOK("c1")
			test(t, e, c)
		})
	}
}

// TestMQTTConnect covers CONNECT and its CONNACK in both versions: the
// return code, Session Present, and whether the connection stays open.
func TestMQTTConnect(t *testing.T) {
	cases := []struct {
		name    string
		cn      wire.Connect
		want311 byte
		want5   byte
		closed  bool
	}{
		{"clean session", wire.Connect{ClientID: "c1", CleanSession: true}, wire.ConnAccepted, wire.ReasonSuccess, false},
		{"empty id, clean session", wire.Connect{CleanSession: true}, wire.ConnAccepted, wire.ReasonSuccess, false},
		// MQTT 5 assigns an id; 3.1.1 needs one to keep a session [MQTT-3.1.3-8].
		{"empty id, persistent session", wire.Connect{}, wire.ConnRefusedIdentifierRejected, wire.ReasonSuccess, false},
		{"will topic with a wildcard", wire.Connect{ClientID: "c1", CleanSession: true, WillFlag: true, WillTopic: "a/#"},
			wire.ConnRefusedServerUnavailable, wire.ReasonTopicNameInvalid, true},
	}
	for _, v := range versions {
		for _, tc := range cases {
			t.Run(versionName(v)+" "+tc.name, func(t *testing.T) {
				_, srv := newMQTTServer(t, DefaultOptions())
				c := dialMQTT(t, srv, v)
				ack := c.connect(tc.cn, nil)
				want := tc.want311
				closed := tc.closed || want != wire.ConnAccepted
				if v == wire.Version5 {
					want, closed = tc.want5, tc.closed
				}
				if ack.ReasonCode != want || ack.SessionPresent {
					t.Fatalf("CONNACK reason 0x%02x session present %v, want 0x%02x false", ack.ReasonCode, ack.SessionPresent, want)
				}
				if c.tc.Closed() != closed {
					t.Fatalf("closed %v, want %v", c.tc.Closed(), closed)
				}
				if v == wire.Version5 && tc.cn.ClientID == "" && want == wire.ReasonSuccess {
					if ack.Props == nil || !strings.HasPrefix(ack.Props.AssignedClientID, "wharf-") {
						t.Fatalf("CONNACK of an MQTT 5 CONNECT without id assigns none: %+v", ack.Props)
					}
				}
			})
		}
	}
}

// An unknown protocol level is answered with the 3.1.1 CONNACK 0x01
// [MQTT-3.1.2-2] and the connection closed.
func TestMQTTConnectBadProtocolLevel(t *testing.T) {
	_, srv := newMQTTServer(t, DefaultOptions())
	c := dialMQTT(t, srv, wire.Version311)
	b := wire.AppendPacket(nil, &wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{
		ProtocolName: wire.ProtocolName, ProtocolLevel: wire.Version311, CleanSession: true, ClientID: "c1"}}, wire.Version311)
	const levelAt = 8 // fixed header (2), name length (2), "MQTT" (4)
	if b[levelAt] != wire.Version311 {
		t.Fatalf("CONNECT % x: no protocol level at %d", b, levelAt)
	}
	b[levelAt] = 6
	c.s.OnData(b)
	c.expectAck(wire.CONNACK, 0, wire.ConnRefusedProtocolVersion)
	if !c.tc.Closed() {
		t.Fatal("the connection stayed open after an unknown protocol level")
	}
}

// Packets out of place close the connection.
func TestMQTTConnectOutOfOrder(t *testing.T) {
	connect := func(cn wire.Connect) wire.Packet {
		cn.ProtocolName = wire.ProtocolName
		return wire.Packet{Type: wire.CONNECT, Connect: &cn}
	}
	cases := []struct {
		name      string
		connected bool // sent after a CONNECT, not instead of it
		packet    wire.Packet
		// An MQTT 5 client is told DISCONNECT 0x82 first; or, for a
		// rule of 3.1.1 alone, accepted.
		disconnect5, accepted5 bool
	}{
		{name: "packet before CONNECT", packet: wire.Packet{Type: wire.PINGREQ}},
		{name: "second CONNECT", connected: true, packet: connect(wire.Connect{CleanSession: true, ClientID: "c2"}), disconnect5: true},
		// [MQTT-3.1.2-22] is 3.1.1's; MQTT 5 allows a password alone.
		{name: "password without user name", packet: connect(wire.Connect{CleanSession: true, ClientID: "c2", PasswordFlag: true, Password: []byte("pw")}), accepted5: true},
	}
	for _, v := range versions {
		for _, tc := range cases {
			t.Run(versionName(v)+" "+tc.name, func(t *testing.T) {
				_, srv := newMQTTServer(t, DefaultOptions())
				c := dialMQTT(t, srv, v)
				if tc.connected {
					c.connectOK("c1")
				}
				p := tc.packet
				if p.Connect != nil {
					p.Connect.ProtocolLevel = v
				}
				c.send(&p)
				closed := true
				switch {
				case v == wire.Version5 && tc.disconnect5:
					c.expectAck(wire.DISCONNECT, 0, wire.ReasonProtocolError)
				case v == wire.Version5 && tc.accepted5:
					c.expectAck(wire.CONNACK, 0, wire.ReasonSuccess)
					closed = false
				}
				c.quiet()
				if c.tc.Closed() != closed {
					t.Fatalf("closed %v, want %v", c.tc.Closed(), closed)
				}
			})
		}
	}
}

// A CONNECT for a client id another session holds takes it over: the
// old connection is closed (an MQTT 5 one told why) [MQTT-3.1.4-3].
func TestMQTTTakeOver(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			_, srv := newMQTTServer(t, DefaultOptions())
			old := dialMQTT(t, srv, v)
			old.connectOK("dev")
			c := dialMQTT(t, srv, v)
			c.connectOK("dev")
			if v == wire.Version5 {
				old.expectAck(wire.DISCONNECT, 0, wire.ReasonSessionTakenOver)
			}
			old.quiet()
			if !old.tc.Closed() || c.tc.Closed() {
				t.Fatalf("old closed %v, new closed %v; want true, false", old.tc.Closed(), c.tc.Closed())
			}
		})
	}
}

// A persistent session keeps its subscriptions and the messages published
// while it was away; a clean one drops them.
func TestMQTTPersistentSession(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			e, srv := newMQTTServer(t, DefaultOptions())
			persistent := func(c *mqttClient, clean bool) wire.Packet {
				var props *wire.Properties
				if v == wire.Version5 && !clean {
					props = &wire.Properties{SessionExpiry: 0xFFFFFFFF, HasSessionExpiry: true}
				}
				return c.connect(wire.Connect{ClientID: "p1", CleanSession: clean}, props)
			}
			c := dialMQTT(t, srv, v)
			if ack := persistent(c, false); ack.ReasonCode != 0 || ack.SessionPresent {
				t.Fatalf("first CONNECT: reason 0x%02x session present %v", ack.ReasonCode, ack.SessionPresent)
			}
			if got := c.subscribe(1, wire.Subscription{Filter: "a/b", QoS: 1}); !bytes.Equal(got, []byte{1}) {
				t.Fatalf("SUBACK %v", got)
			}
			c.send(&wire.Packet{Type: wire.DISCONNECT})
			c.close(nil)
			if n := len(e.DurableSubs("p1")); n != 1 {
				t.Fatalf("%d durable subscriptions kept for the session, want 1", n)
			}

			pub := dialMQTT(t, srv, v)
			pub.connectOK("pub")
			pub.publish("a/b", "while away", 1, 3)
			pub.expectAck(wire.PUBACK, 3, 0)

			c = dialMQTT(t, srv, v)
			if ack := persistent(c, false); !ack.SessionPresent {
				t.Fatal("resumed session: CONNACK Session Present not set")
			}
			m := c.expectPublish("a/b", "while away", 1)
			c.send(&wire.Packet{Type: wire.PUBACK, PacketID: m.PacketID})
			c.send(&wire.Packet{Type: wire.DISCONNECT})
			c.close(nil)

			c = dialMQTT(t, srv, v)
			if ack := persistent(c, true); ack.SessionPresent {
				t.Fatal("clean start: CONNACK Session Present set")
			}
			if subs := e.DurableSubs("p1"); len(subs) != 0 {
				t.Fatalf("a clean start left durable subscriptions %v", subs)
			}
		})
	}
}

// TestMQTTSubscribe checks the QoS granted per filter in the SUBACK.
func TestMQTTSubscribe(t *testing.T) {
	eachVersion(t, func(t *testing.T, e *engine.Engine, c *mqttClient) {
		got := c.subscribe(5,
			wire.Subscription{Filter: "q/0", QoS: 0},
			wire.Subscription{Filter: "q/1", QoS: 1},
			wire.Subscription{Filter: "q/2/#", QoS: 2},
			wire.Subscription{Filter: "q/#/bad", QoS: 1},
		)
		bad := wire.SubackFailure
		if c.v == wire.Version5 {
			bad = wire.ReasonTopicFilterInvalid
		}
		if want := []byte{0, 1, 2, bad}; !bytes.Equal(got, want) {
			t.Fatalf("SUBACK codes % x, want % x", got, want)
		}
		if n := e.Stats(message.TopicDest("q.1")).ConsumerCount; n != 1 {
			t.Fatalf("%d consumers on q.1, want 1", n)
		}
	})
}

// TestMQTTPublishQoS follows a PUBLISH of each QoS from a publisher to a
// subscriber granted QoS 2: the publisher's acknowledgements, the QoS the
// subscriber gets, and the subscriber's side of the exchange.
func TestMQTTPublishQoS(t *testing.T) {
	for _, v := range versions {
		for _, qos := range []byte{0, 1, 2} {
			t.Run(fmt.Sprintf("%s QoS %d", versionName(v), qos), func(t *testing.T) {
				e, srv := newMQTTServer(t, DefaultOptions())
				sub := dialMQTT(t, srv, v)
				sub.connectOK("sub")
				sub.subscribe(1, wire.Subscription{Filter: "a/+", QoS: 2})
				pub := dialMQTT(t, srv, v)
				pub.connectOK("pub")

				pub.publish("a/b", "hello", qos, 7)
				switch qos {
				case 1:
					pub.expectAck(wire.PUBACK, 7, 0)
				case 2:
					pub.expectAck(wire.PUBREC, 7, 0)
					pub.send(&wire.Packet{Type: wire.PUBREL, PacketID: 7})
					pub.expectAck(wire.PUBCOMP, 7, 0)
				}
				m := sub.expectPublish("a/b", "hello", qos)
				switch qos {
				case 1:
					sub.send(&wire.Packet{Type: wire.PUBACK, PacketID: m.PacketID})
				case 2:
					sub.send(&wire.Packet{Type: wire.PUBREC, PacketID: m.PacketID})
					sub.expectAck(wire.PUBREL, m.PacketID, 0)
					sub.send(&wire.Packet{Type: wire.PUBCOMP, PacketID: m.PacketID})
				}
				// Barrier: a QoS 0 publish overtakes nothing on a.b.
				pub.publish("a/b", "end", 0, 0)
				sub.expectPublish("a/b", "end", 0)
				sub.quiet()
				pub.quiet()
				if n := e.Stats(message.TopicDest("a.b")).EnqueueCount; n != 2 {
					t.Fatalf("a.b enqueued %d messages, want 2", n)
				}
				sub.s.outMu.Lock()
				left := sub.s.ext().inflight.len()
				sub.s.outMu.Unlock()
				if left != 0 {
					t.Fatalf("%d deliveries in flight after the client acknowledged them", left)
				}
			})
		}
	}
}

// A subscriber gets the lower of the publish QoS and its granted QoS.
func TestMQTTDeliveryQoSDowngrade(t *testing.T) {
	_, srv := newMQTTServer(t, DefaultOptions())
	sub := dialMQTT(t, srv, wire.Version311)
	sub.connectOK("sub")
	sub.subscribe(1, wire.Subscription{Filter: "a/b", QoS: 1})
	pub := dialMQTT(t, srv, wire.Version311)
	pub.connectOK("pub")
	pub.publish("a/b", "x", 2, 9)
	pub.expectAck(wire.PUBREC, 9, 0)
	sub.expectPublish("a/b", "x", 1)
}

// A QoS 2 PUBLISH re-sent before PUBREL is acknowledged again but stored
// once [MQTT-4.3.3-10]; a PUBREL for an unknown packet id still gets its
// PUBCOMP, with reason 0x92 in MQTT 5.
func TestMQTTQoS2Duplicate(t *testing.T) {
	eachVersion(t, func(t *testing.T, e *engine.Engine, c *mqttClient) {
		c.publish("a/b", "once", 2, 4)
		c.expectAck(wire.PUBREC, 4, 0)
		c.send(&wire.Packet{Type: wire.PUBLISH, Topic: "a/b", Payload: []byte("once"), QoS: 2, PacketID: 4, Dup: true})
		c.expectAck(wire.PUBREC, 4, 0)
		c.send(&wire.Packet{Type: wire.PUBREL, PacketID: 4})
		c.expectAck(wire.PUBCOMP, 4, 0)
		c.send(&wire.Packet{Type: wire.PUBREL, PacketID: 4})
		unknown := byte(0)
		if c.v == wire.Version5 {
			unknown = wire.ReasonPacketIDNotFound
		}
		c.expectAck(wire.PUBCOMP, 4, unknown)
		if n := e.Stats(message.TopicDest("a.b")).EnqueueCount; n != 1 {
			t.Fatalf("a.b enqueued %d messages, want 1", n)
		}
	})
}

// A PUBLISH to a topic name with a wildcard closes the connection (MQTT 5:
// DISCONNECT 0x90 first).
func TestMQTTPublishBadTopic(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ *engine.Engine, c *mqttClient) {
		// The decoder refuses wildcards in a topic name, so the packet
		// is built with a valid name and patched.
		b := wire.AppendPacket(nil, &wire.Packet{Type: wire.PUBLISH, Topic: "a/x", QoS: 1, PacketID: 1}, c.v)
		i := bytes.Index(b, []byte("a/x"))
		b[i+2] = '#'
		c.s.OnData(b)
		if c.v == wire.Version5 {
			c.expectAck(wire.DISCONNECT, 0, wire.ReasonTopicNameInvalid)
		}
		c.quiet()
		if !c.tc.Closed() {
			t.Fatal("the connection stayed open")
		}
	})
}

// UNSUBSCRIBE ends the subscription: UNSUBACK (with a reason per filter in
// MQTT 5), and nothing more is delivered from it.
func TestMQTTUnsubscribe(t *testing.T) {
	eachVersion(t, func(t *testing.T, e *engine.Engine, c *mqttClient) {
		c.subscribe(1, wire.Subscription{Filter: "a/b"}, wire.Subscription{Filter: "z"})
		c.send(&wire.Packet{Type: wire.UNSUBSCRIBE, PacketID: 2, Topics: []string{"a/b", "never"}})
		ack := c.expect(wire.UNSUBACK)
		if ack.PacketID != 2 {
			t.Fatalf("UNSUBACK packet id %d, want 2", ack.PacketID)
		}
		if c.v == wire.Version5 && !bytes.Equal(ack.ReasonCodes, []byte{0, wire.ReasonNoSubscriptionExisted}) {
			t.Fatalf("UNSUBACK codes % x, want 00 11", ack.ReasonCodes)
		}
		if n := e.Stats(message.TopicDest("a.b")).ConsumerCount; n != 0 {
			t.Fatalf("%d consumers left on a.b", n)
		}
		c.publish("a/b", "gone", 0, 0)
		c.publish("z", "barrier", 0, 0)
		c.expectPublish("z", "barrier", 0)
		c.quiet()
	})
}

func TestMQTTPing(t *testing.T) {
	eachVersion(t, func(t *testing.T, _ *engine.Engine, c *mqttClient) {
		c.send(&wire.Packet{Type: wire.PINGREQ})
		c.expect(wire.PINGRESP)
		c.quiet()
	})
}

// A retained PUBLISH is kept by the engine and given to later subscribers
// with RETAIN set.
func TestMQTTRetained(t *testing.T) {
	e, srv := newMQTTServer(t, DefaultOptions())
	c := dialMQTT(t, srv, wire.Version311)
	c.connectOK("c1")
	c.send(&wire.Packet{Type: wire.PUBLISH, Topic: "r/t", Payload: []byte("last"), QoS: 1, PacketID: 1, Retain: true})
	c.expectAck(wire.PUBACK, 1, 0)
	m, err := e.Retained(message.TopicDest("r.t"))
	if err != nil || m == nil || string(m.Body) != "last" {
		t.Fatalf("retained message %v, %v; want body \"last\"", m, err)
	}
	c.subscribe(2, wire.Subscription{Filter: "r/#", QoS: 1})
	if p := c.expectPublish("r/t", "last", 1); !p.Retain {
		t.Fatal("retained message delivered without RETAIN")
	}
}

// Nothing read for 1.5 times the keep-alive closes the connection (an MQTT
// 5 client hears DISCONNECT 0x8D first). Transport option
// transport.defaultKeepAlive (ms) stands in for a CONNECT keep-alive of 0,
// so that the timer runs in milliseconds.
func TestMQTTKeepAliveExpiry(t *testing.T) {
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			o := DefaultOptions()
			o.DefaultKeepAlive = 20 * time.Millisecond
			_, srv := newMQTTServer(t, o)
			c := dialMQTT(t, srv, v)
			c.connectOK("c1")
			c.awaitClosed()
			if v == wire.Version5 {
				c.expectAck(wire.DISCONNECT, 0, wire.ReasonKeepAliveTimeout)
			}
			c.quiet()
		})
	}
}

// A connection that sends no CONNECT is closed after ConnectTimeout.
func TestMQTTConnectTimeout(t *testing.T) {
	o := DefaultOptions()
	o.ConnectTimeout = 10 * time.Millisecond
	_, srv := newMQTTServer(t, o)
	c := dialMQTT(t, srv, wire.Version311)
	c.awaitClosed()
	c.quiet()
}

// TestMQTTWill checks when the will is published: on a connection lost
// without DISCONNECT, and in MQTT 5 on DISCONNECT 0x04; never on a normal
// DISCONNECT.
func TestMQTTWill(t *testing.T) {
	lost := errors.New("connection reset by peer")
	cases := []struct {
		name       string
		v          byte
		disconnect *wire.Packet // nil: the connection is lost
		willSent   bool
	}{
		{"3.1.1 connection lost", wire.Version311, nil, true},
		{"5 connection lost", wire.Version5, nil, true},
		{"3.1.1 DISCONNECT", wire.Version311, &wire.Packet{Type: wire.DISCONNECT}, false},
		{"5 DISCONNECT", wire.Version5, &wire.Packet{Type: wire.DISCONNECT}, false},
		{"5 DISCONNECT with will", wire.Version5, &wire.Packet{Type: wire.DISCONNECT, ReasonCode: wire.ReasonDisconnectWithWill}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newMQTTServer(t, DefaultOptions())
			watcher := dialMQTT(t, srv, tc.v)
			watcher.connectOK("watcher")
			watcher.subscribe(1, wire.Subscription{Filter: "will/#", QoS: 1})
			c := dialMQTT(t, srv, tc.v)
			ack := c.connect(wire.Connect{ClientID: "dev", CleanSession: true,
				WillFlag: true, WillTopic: "will/dev", WillPayload: []byte("dev is gone"), WillQoS: 1}, nil)
			if ack.ReasonCode != 0 {
				t.Fatalf("CONNACK 0x%02x", ack.ReasonCode)
			}
			if tc.disconnect == nil {
				c.close(lost)
			} else {
				c.send(tc.disconnect)
				if !c.tc.Closed() {
					t.Fatal("DISCONNECT left the connection open")
				}
				c.close(nil)
			}
			if tc.willSent {
				m := watcher.expectPublish("will/dev", "dev is gone", 1)
				watcher.send(&wire.Packet{Type: wire.PUBACK, PacketID: m.PacketID})
			}
			watcher.publish("will/barrier", "b", 0, 0)
			watcher.expectPublish("will/barrier", "b", 0)
			watcher.quiet()
		})
	}
}

// A CONNECT with an authentication method is refused: enhanced
// authentication is not offered.
func TestMQTTConnectAuthMethod(t *testing.T) {
	_, srv := newMQTTServer(t, DefaultOptions())
	c := dialMQTT(t, srv, wire.Version5)
	ack := c.connect(wire.Connect{ClientID: "c1", CleanSession: true}, &wire.Properties{AuthMethod: "SCRAM-SHA-1"})
	if ack.ReasonCode != wire.ReasonBadAuthMethod || !c.tc.Closed() {
		t.Fatalf("CONNACK 0x%02x closed %v, want 0x8C and closed", ack.ReasonCode, c.tc.Closed())
	}
	if ack.Props == nil || ack.Props.ReasonString != "authentication method SCRAM-SHA-1 is not supported" {
		t.Fatalf("reason string %q", ack.Props.ReasonString)
	}
}
