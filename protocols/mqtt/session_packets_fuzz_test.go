package mqtt

import (
	"bytes"
	"testing"

	"wharf/engine"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
	"wharf/protocols/mqtt/wire"
)

var (
	mqttTopics  = []string{"a/b", "a/c", "a", "$SYS/x", "x/y/z", "", "a/+", "#"}
	mqttFilters = []string{"a/+", "a/#", "#", "+/+", "a/b", "$share/g/a/#", "$share/g", "a/#/b", "", "x/y/z"}
)

// FuzzMQTTSessionPackets is the structure-aware session fuzzer (issue #17):
// after a valid CONNECT (3.1.1 or 5, clean or persistent, as the input
// picks), the input is a program that builds up to 32 packets of every
// type a client sends, with fields the input chooses (packet ids from a
// small set so that acknowledgements meet their publishes, MQTT 5
// properties such as topic aliases and expiry), damages some of their
// bytes, and feeds each in two pieces. Invariants: no panic; unless a
// packet was damaged, a PINGREQ after them is answered with PINGRESP or the
// session has ended; a clean session leaves no durable subscription; and
// the engine still serves a fresh client
// (checked after every seed input, and after one fuzzed input in
// conntest.ServeCheckEvery).
func FuzzMQTTSessionPackets(f *testing.F) {
	e := conntest.Engine(f)
	srv := NewServer(e, DefaultOptions())
	f.Add([]byte{})
	f.Add([]byte{1, 1, 3, 0, 1, 0, 0, 2, 0, 1, 0, 0, 0, 3, 'h', 'i', 0, 0})
	f.Add([]byte{0, 1, 2, 1, 0, 2, 0, 1, 0, 0, 2, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) { mqttPacketsInput(t, e, srv, data) })
}

// BenchmarkFuzzMQTTSessionPacketsCorpus runs FuzzMQTTSessionPackets' body
// over its seed and cached corpus (ns/input: what an execution costs).
func BenchmarkFuzzMQTTSessionPacketsCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	fuzzprog.Replay(b, "wharf/protocols/mqtt", "FuzzMQTTSessionPackets", func(tb testing.TB, v []any) {
		mqttPacketsInput(tb, e, srv, v[0].([]byte))
	})
}

// mqttPacketsInput is one input of FuzzMQTTSessionPackets.
func mqttPacketsInput(t testing.TB, e *engine.Engine, srv *Server, data []byte) {
	p := fuzzprog.New(data)
	v := wire.Version311
	if p.Bool() {
		v = wire.Version5
	}
	clean := !p.Bool()
	clientID := p.Pick("fuzz-a", "fuzz-b")
	tc := &conntest.Conn{}
	s := srv.Handler(tc)
	s.OnData(wire.AppendPacket(nil, &wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{
		ProtocolName: wire.ProtocolName, ProtocolLevel: v, CleanSession: clean, ClientID: clientID,
	}}, v))
	for n := 0; n < 32 && p.More() && !tc.Closed(); n++ {
		pk := p.Damage(wire.AppendPacket(nil, buildMQTTPacket(p, v), v))
		cut := p.Intn(len(pk) + 1)
		if s.OnData(pk[:cut]) != nil || s.OnData(pk[cut:]) != nil {
			break
		}
	}
	if !p.Damaged && !tc.Closed() {
		from := len(tc.Written())
		s.OnData([]byte{0xc0, 0})
		if !tc.Await(conntest.ProbeWait, func(out []byte, closed bool) bool {
			return closed || bytes.Contains(out[from:], []byte{0xd0, 0})
		}) {
			t.Fatalf("no PINGRESP and no close within %v; the session wrote:\n%x", conntest.ProbeWait, tc.Written())
		}
	}
	s.OnClose(nil)
	if clean {
		if ids := e.DurableSubs(clientID); len(ids) != 0 {
			t.Fatalf("a clean session left durable subscriptions %v", ids)
		}
	} else {
		// Wipe the persistent session, so that inputs stay independent.
		tc := &conntest.Conn{}
		s := srv.Handler(tc)
		s.OnData(wire.AppendPacket(nil, &wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{
			ProtocolName: wire.ProtocolName, ProtocolLevel: wire.Version311, CleanSession: true, ClientID: clientID,
		}}, wire.Version311))
		s.OnData(wire.AppendPacket(nil, &wire.Packet{Type: wire.DISCONNECT}, wire.Version311))
		s.OnClose(nil)
	}
	if err := conntest.ServesAfter(e, conntest.ProbeWait, data); err != nil {
		t.Fatalf("the engine stopped serving after the input: %v", err)
	}
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}

// buildMQTTPacket builds one client packet from p's choices.
func buildMQTTPacket(p *fuzzprog.Prog, v byte) *wire.Packet {
	id := func() uint16 { return uint16(1 + p.Intn(4)) }
	props := func() *wire.Properties {
		if v != wire.Version5 || !p.Bool() {
			return nil
		}
		pr := &wire.Properties{}
		if p.Bool() {
			pr.TopicAlias, pr.HasTopicAlias = uint16(p.Intn(4)), true
		}
		if p.Bool() {
			pr.MessageExpiry, pr.HasMessageExpiry = uint32(p.Intn(3)), true
		}
		if p.Bool() {
			pr.SubscriptionIDs = []uint32{uint32(p.Intn(3))}
		}
		if p.Bool() {
			pr.SessionExpiry, pr.HasSessionExpiry = uint32(p.Intn(3))*100, true
		}
		if p.Bool() {
			pr.ResponseTopic, pr.CorrelationData = p.Pick(mqttTopics...), p.Bytes(8)
		}
		if p.Bool() {
			pr.ContentType, pr.PayloadFormat, pr.HasPayloadFormat = "text/plain", byte(p.Intn(2)), true
		}
		return pr
	}
	switch p.Intn(11) {
	case 0, 1, 2:
		return &wire.Packet{Type: wire.PUBLISH, QoS: byte(p.Intn(3)), Retain: p.Bool(), Dup: p.Bool(), PacketID: id(),
			Topic: p.Pick(mqttTopics...), Payload: p.Bytes(32), Props: props()}
	case 3:
		return &wire.Packet{Type: []wire.Type{wire.PUBACK, wire.PUBREC, wire.PUBREL, wire.PUBCOMP}[p.Intn(4)], PacketID: id(), Props: props()}
	case 4, 5:
		var subs []wire.Subscription
		for n := 1 + p.Intn(3); n > 0; n-- {
			sub := wire.Subscription{Filter: p.Pick(mqttFilters...), QoS: byte(p.Intn(3))}
			if v == wire.Version5 {
				sub.NoLocal, sub.RetainAsPublished, sub.RetainHandling = p.Bool(), p.Bool(), byte(p.Intn(3))
			}
			subs = append(subs, sub)
		}
		return &wire.Packet{Type: wire.SUBSCRIBE, PacketID: id(), Subscriptions: subs, Props: props()}
	case 6:
		return &wire.Packet{Type: wire.UNSUBSCRIBE, PacketID: id(), Topics: []string{p.Pick(mqttFilters...)}, Props: props()}
	case 7:
		return &wire.Packet{Type: wire.PINGREQ}
	case 8:
		return &wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{ProtocolName: wire.ProtocolName, ProtocolLevel: v, ClientID: "again"}}
	case 9:
		if v == wire.Version5 {
			return &wire.Packet{Type: wire.AUTH, ReasonCode: 0x18, Props: &wire.Properties{AuthMethod: "x"}}
		}
		return &wire.Packet{Type: wire.PINGREQ}
	default:
		return &wire.Packet{Type: wire.DISCONNECT, ReasonCode: []byte{0, 4}[p.Intn(2)], Props: props()}
	}
}
