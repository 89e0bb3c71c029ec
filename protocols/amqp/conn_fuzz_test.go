package amqp

import (
	"testing"

	"wharf/engine"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
)

// FuzzAMQPConnection feeds arbitrary frames, split in two, to a connection
// on a real engine after SASL, Open and Begin: whatever they say, the
// connection must not panic.
func FuzzAMQPConnection(f *testing.F) {
	e := conntest.Engine(f)
	srv := NewServer(e, DefaultOptions())
	frame := func(p wire.Performative, payload []byte) []byte { return wire.AppendFrame(nil, 0, p, payload) }
	snd := wire.NewAttach("s", 0, wire.RoleSender)
	snd.Source, snd.Target = &wire.Source{}, &wire.Target{Address: "queue://q"}
	rcv := wire.NewAttach("r", 1, wire.RoleReceiver)
	rcv.Source, rcv.Target = &wire.Source{Address: "topic://t", Durable: wire.DurableUnsettledState}, &wire.Target{}
	coord := wire.NewAttach("c", 2, wire.RoleSender)
	coord.Source, coord.Target = &wire.Source{}, &wire.Coordinator{}
	id, credit, h1 := uint32(0), uint32(10), uint32(1)
	msg := wire.AppendMessage(nil, &wire.Message{BodyKind: wire.BodyValue, Value: "x"})
	var seed []byte
	for _, b := range [][]byte{
		frame(snd, nil), frame(rcv, nil), frame(coord, nil),
		frame(&wire.Flow{IncomingWindow: 100, NextOutgoingID: 1, OutgoingWindow: 100, Handle: &h1, LinkCredit: &credit, Drain: true}, nil),
		frame(&wire.Transfer{Handle: 0, DeliveryID: &id, DeliveryTag: []byte{0}, More: true}, msg[:3]),
		frame(&wire.Transfer{Handle: 0}, msg[3:]),
		frame(&wire.Disposition{Role: wire.RoleReceiver, First: 0, Settled: true, State: &wire.Accepted{}}, nil),
		frame(&wire.Detach{Handle: 1, Closed: true}, nil),
		frame(&wire.End{}, nil),
		frame(&wire.Close{}, nil),
	} {
		f.Add(b, uint8(4))
		seed = append(seed, b...)
	}
	f.Add(seed, uint8(40))
	f.Fuzz(func(t *testing.T, data []byte, split uint8) { amqpConnectionInput(t, e, srv, data, split) })
}

// BenchmarkFuzzAMQPConnectionCorpus runs FuzzAMQPConnection's body over its
// seed and cached corpus (ns/input: what an execution costs).
func BenchmarkFuzzAMQPConnectionCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	fuzzprog.Replay(b, "wharf/protocols/amqp", "FuzzAMQPConnection", func(tb testing.TB, v []any) {
		amqpConnectionInput(tb, e, srv, v[0].([]byte), v[1].(byte))
	})
}

// amqpConnectionInput is one input of FuzzAMQPConnection.
func amqpConnectionInput(t testing.TB, e *engine.Engine, srv *Server, data []byte, split uint8) {
	tc := &conntest.Conn{}
	c := srv.Handler(tc)
	in := append(append([]byte(nil), amqpFuzzPrefix...), data...)
	cut := min(len(amqpFuzzPrefix)+int(split), len(in))
	c.OnData(in[:cut])
	c.OnData(in[cut:])
	c.OnClose(nil)
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}

// TestAMQPConnectionFuzzPrefix checks that the fuzz target's prefix opens
// a session, so that the fuzzer works past the handshake.
func TestAMQPConnectionFuzzPrefix(t *testing.T) {
	e := conntest.Engine(t)
	tc := &conntest.Conn{}
	c := NewServer(e, DefaultOptions()).Handler(tc)
	var in []byte
	in = append(in, wire.HeaderSASL...)
	in = wire.AppendSASLFrame(in, &wire.SASLInit{Mechanism: "ANONYMOUS"})
	in = append(in, wire.HeaderAMQP...)
	in = wire.AppendFrame(in, 0, wire.NewOpen("fuzz-prefix"), nil)
	in = wire.AppendFrame(in, 0, &wire.Begin{NextOutgoingID: 1, IncomingWindow: 100, OutgoingWindow: 100, HandleMax: 10}, nil)
	c.OnData(in)
	dec := wire.NewDecoder(wire.DefaultLimits())
	out := tc.Written()
	var frames []wire.Frame
	for {
		var err error
		frames, err = dec.Feed(out, frames)
		if err != nil {
			t.Fatal(err)
		}
		out = nil
		if dec.Buffered() == 0 {
			break
		}
		if _, ok := frames[len(frames)-1].Body.(*wire.SASLOutcome); ok {
			dec.SetExpectHeader()
		}
	}
	var open, begin bool
	for _, f := range frames {
		switch f.Body.(type) {
		case *wire.Open:
			open = true
		case *wire.Begin:
			begin = true
		}
	}
	if !open || !begin || tc.Closed() {
		t.Fatalf("open %v begin %v closed %v: the prefix does not open a session", open, begin, tc.Closed())
	}
	c.OnClose(nil)
}
