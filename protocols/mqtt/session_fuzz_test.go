package mqtt

import (
	"testing"

	"wharf/engine"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
	"wharf/protocols/mqtt/wire"
)

// FuzzMQTTSession feeds arbitrary bytes, split in two, to a session on a
// real engine behind a valid CONNECT: whatever the packets, the session
// must not panic, and a close must leave nothing in the engine.
func FuzzMQTTSession(f *testing.F) {
	e := conntest.Engine(f)
	srv := NewServer(e, DefaultOptions())
	for _, v := range []byte{wire.Version311, wire.Version5} {
		seed := func(p *wire.Packet) { f.Add(v, wire.AppendPacket(nil, p, v), uint8(3)) }
		seed(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: "a/+", QoS: 2}, {Filter: "$share/g/a/#", QoS: 1}}})
		seed(&wire.Packet{Type: wire.PUBLISH, QoS: 2, PacketID: 7, Topic: "a/b", Payload: []byte("x"), Retain: true})
		seed(&wire.Packet{Type: wire.PUBREL, PacketID: 7})
		seed(&wire.Packet{Type: wire.PUBACK, PacketID: 1})
		seed(&wire.Packet{Type: wire.UNSUBSCRIBE, PacketID: 2, Topics: []string{"a/+"}})
		seed(&wire.Packet{Type: wire.PINGREQ})
		seed(&wire.Packet{Type: wire.DISCONNECT})
	}
	f.Fuzz(func(t *testing.T, v byte, data []byte, split uint8) { mqttSessionInput(t, e, srv, v, data, split) })
}

// BenchmarkFuzzMQTTSessionCorpus runs FuzzMQTTSession's body over its seed
// and cached corpus (ns/input: what an execution costs).
func BenchmarkFuzzMQTTSessionCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	fuzzprog.Replay(b, "wharf/protocols/mqtt", "FuzzMQTTSession", func(tb testing.TB, v []any) {
		mqttSessionInput(tb, e, srv, v[0].(byte), v[1].([]byte), v[2].(byte))
	})
}

// mqttSessionInput is one input of FuzzMQTTSession.
func mqttSessionInput(t testing.TB, e *engine.Engine, srv *Server, v byte, data []byte, split uint8) {
	connect := func(v byte) []byte {
		return wire.AppendPacket(nil, &wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{
			ProtocolName: wire.ProtocolName, ProtocolLevel: v, CleanSession: true, ClientID: "fuzz",
		}}, v)
	}
	if v != wire.Version311 && v != wire.Version5 {
		v = wire.Version311
	}
	tc := &conntest.Conn{}
	s := srv.Handler(tc)
	in := append(connect(v), data...)
	cut := min(int(split), len(in))
	s.OnData(in[:cut])
	s.OnData(in[cut:])
	s.OnClose(nil)
	if ids := e.DurableSubs("fuzz"); len(ids) != 0 {
		t.Fatalf("a clean session left durable subscriptions %v", ids)
	}
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}
