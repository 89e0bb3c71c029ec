package amqp

import (
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
)

var queueQ = message.QueueDest("q")

var amqpAddresses = []string{"queue://q", "topic://t", "q", "queue://a,queue://b", "topic://>", "", "temp-queue://x", "bogus://x"}

// amqpProbeChannel is the channel of the Begin that probes the connection
// after the input; the programs use channels 0 to 2.
const amqpProbeChannel = 9

// FuzzAMQPSessionFrames is the structure-aware session fuzzer (issue #17):
// after SASL ANONYMOUS, Open and Begin, the input is a program that builds
// up to 32 frames — attaches of senders, receivers and coordinators on
// handles 0 to 3, flows with credit and drain, transfers (single and
// multi-frame, settled or not, transactional), dispositions with every
// outcome, declares and discharges, detaches, begins and ends on channels
// 0 to 2, close — damages some of their bytes and feeds each in two
// pieces. Invariants: no panic; unless a frame was damaged, a Begin on a
// fresh channel after them is answered, or the connection has ended; and
// the engine still serves a fresh client
// (checked after every seed input, and after one fuzzed input in
// conntest.ServeCheckEvery).
func FuzzAMQPSessionFrames(f *testing.F) {
	e := conntest.Engine(f)
	srv := NewServer(e, DefaultOptions())
	f.Add([]byte{})
	// Attach a receiver and give it credit, attach a sender and transfer.
	f.Add([]byte{0, 0, 1, 0, 0, 0, 2, 1, 0, 10, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4, 'x', 0, 0})
	f.Add([]byte{0, 0, 2, 0, 0, 0, 3, 2, 0, 0, 1, 0, 0, 0, 6, 2, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) { amqpFramesInput(t, e, srv, data) })
}

// BenchmarkFuzzAMQPSessionFramesCorpus runs FuzzAMQPSessionFrames' body
// over its seed and cached corpus (ns/input: what an execution costs).
func BenchmarkFuzzAMQPSessionFramesCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	fuzzprog.Replay(b, "wharf/protocols/amqp", "FuzzAMQPSessionFrames", func(tb testing.TB, v []any) {
		amqpFramesInput(tb, e, srv, v[0].([]byte))
	})
}

// amqpFuzzPrefix is SASL ANONYMOUS, Open and Begin on channel 0: what the
// AMQP fuzz targets put before their input.
var amqpFuzzPrefix = func() []byte {
	var prefix []byte
	prefix = append(prefix, wire.HeaderSASL...)
	prefix = wire.AppendSASLFrame(prefix, &wire.SASLInit{Mechanism: "ANONYMOUS"})
	prefix = append(prefix, wire.HeaderAMQP...)
	prefix = wire.AppendFrame(prefix, 0, wire.NewOpen("fuzz"), nil)
	return wire.AppendFrame(prefix, 0, &wire.Begin{NextOutgoingID: 1, IncomingWindow: 100, OutgoingWindow: 100, HandleMax: 10}, nil)
}()

// amqpFramesInput is one input of FuzzAMQPSessionFrames.
func amqpFramesInput(t testing.TB, e *engine.Engine, srv *Server, data []byte) {
	p := fuzzprog.New(data)
	tc := &conntest.Conn{}
	c := srv.Handler(tc)
	c.OnData(amqpFuzzPrefix)
	for n := 0; n < 32 && p.More() && !tc.Closed(); n++ {
		fr := p.Damage(buildAMQPFrame(p))
		cut := p.Intn(len(fr) + 1)
		if c.OnData(fr[:cut]) != nil || c.OnData(fr[cut:]) != nil {
			break
		}
	}
	if !p.Damaged && !tc.Closed() {
		c.OnData(wire.AppendFrame(nil, amqpProbeChannel, &wire.Begin{NextOutgoingID: 1, IncomingWindow: 10, OutgoingWindow: 10}, nil))
		if !tc.Await(conntest.ProbeWait, func(out []byte, closed bool) bool {
			return closed || answersBegin(out, amqpProbeChannel)
		}) {
			t.Fatalf("no Begin answering channel %d and no close within %v", amqpProbeChannel, conntest.ProbeWait)
		}
	}
	c.OnClose(nil)
	if err := conntest.ServesAfter(e, conntest.ProbeWait, data); err != nil {
		t.Fatalf("the engine stopped serving after the input: %v", err)
	}
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}

// answersBegin reports whether the server's output holds a Begin whose
// remote-channel is ch, or ends with Close.
func answersBegin(out []byte, ch uint16) bool {
	dec := wire.NewDecoder(wire.DefaultLimits())
	var frames []wire.Frame
	for {
		var err error
		frames, err = dec.Feed(out, frames)
		out = nil
		if err != nil || dec.Buffered() == 0 {
			break
		}
		if _, ok := frames[len(frames)-1].Body.(*wire.SASLOutcome); ok {
			dec.SetExpectHeader()
		}
	}
	for _, f := range frames {
		switch b := f.Body.(type) {
		case *wire.Begin:
			if b.RemoteChannel != nil && *b.RemoteChannel == ch {
				return true
			}
		case *wire.Close:
			return true
		}
	}
	return false
}

// buildAMQPFrame builds one frame from p's choices.
func buildAMQPFrame(p *fuzzprog.Prog) []byte {
	ch := uint16(0)
	if p.Byte()&7 == 7 {
		ch = uint16(1 + p.Intn(2))
	}
	handle := uint32(p.Intn(4))
	u32 := func(n int) *uint32 { v := uint32(p.Intn(n)); return &v }
	outcome := func() wire.DeliveryState {
		switch p.Intn(6) {
		case 0:
			return &wire.Accepted{}
		case 1:
			return &wire.Rejected{}
		case 2:
			return &wire.Released{}
		case 3:
			return &wire.Modified{DeliveryFailed: p.Bool(), UndeliverableHere: p.Bool()}
		case 4:
			return &wire.TransactionalState{TxnID: p.Bytes(4), Outcome: &wire.Accepted{}}
		}
		return nil
	}
	message := func() []byte {
		m := &wire.Message{}
		switch p.Intn(4) {
		case 0:
			m.BodyKind, m.Value = wire.BodyValue, string(p.Bytes(16))
		case 1:
			m.BodyKind, m.Data = wire.BodyData, [][]byte{p.Bytes(16)}
		case 2:
			m.BodyKind, m.Sequence = wire.BodySequence, [][]any{{int32(p.Byte()), "s"}}
		case 3:
			switch p.Intn(3) {
			case 0:
				m.BodyKind, m.Value = wire.BodyValue, &wire.Declare{}
			case 1:
				m.BodyKind, m.Value = wire.BodyValue, &wire.Discharge{TxnID: p.Bytes(4), Fail: p.Bool()}
			}
		}
		if p.Bool() {
			m.Header = wire.NewHeader()
			m.Header.Durable, m.Header.Priority, m.Header.TTL = p.Bool(), p.Byte()%12, time.Duration(p.Intn(3))*time.Millisecond
		}
		if p.Bool() {
			m.Properties = &wire.Properties{To: p.Pick(amqpAddresses...), Subject: "s", ContentType: wire.Symbol(p.Pick("text/plain", "application/octet-stream"))}
		}
		if p.Bool() {
			m.ApplicationProperties = wire.NewMap("a", int32(p.Byte()), "JMSXGroupID", "g")
		}
		if p.Bool() {
			m.MessageAnnotations = wire.NewMap(wire.Symbol("x-opt-jms-dest"), int8(p.Intn(4)), wire.Symbol("x-opt-delivery-delay"), int64(p.Intn(3)))
		}
		return wire.AppendMessage(nil, m)
	}
	var perf wire.Performative
	var payload []byte
	switch p.Intn(12) {
	case 0, 1:
		role := wire.RoleSender
		if p.Bool() {
			role = wire.RoleReceiver
		}
		a := wire.NewAttach(p.Pick("l0", "l1", "l2"), handle, role)
		src := &wire.Source{Address: p.Pick(amqpAddresses...), Dynamic: p.Byte()&7 == 7}
		if p.Bool() {
			src.Durable, src.ExpiryPolicy = wire.DurableUnsettledState, "never"
		}
		if p.Bool() {
			src.Filter = wire.NewMap(wire.Symbol("jms-selector"), wire.Described{Descriptor: wire.Symbol("apache.org:selector-filter:string"), Value: p.Pick("a > 1", "(((", "")})
		}
		if p.Bool() {
			src.DistributionMode = "copy"
		}
		a.Source = src
		if p.Byte()&3 == 3 {
			a.Target = &wire.Coordinator{}
		} else {
			a.Target = &wire.Target{Address: p.Pick(amqpAddresses...)}
		}
		perf = a
	case 2:
		perf = &wire.Flow{IncomingWindow: uint32(p.Intn(200)), NextOutgoingID: uint32(p.Intn(4)), OutgoingWindow: 100,
			Handle: &handle, LinkCredit: u32(20), DeliveryCount: u32(3), Drain: p.Bool(), Echo: p.Bool()}
	case 3, 4, 5:
		tr := &wire.Transfer{Handle: handle, DeliveryID: u32(8), DeliveryTag: p.Bytes(4), More: p.Byte()&3 == 3}
		if p.Bool() {
			s := true
			tr.Settled = &s
		}
		if p.Byte()&3 == 3 {
			tr.State = &wire.TransactionalState{TxnID: p.Bytes(4)}
		}
		if p.Byte()&7 == 7 {
			tr.Aborted = true
		}
		perf, payload = tr, message()
	case 6:
		perf = &wire.Disposition{Role: wire.RoleReceiver, First: uint32(p.Intn(8)), Last: u32(8), Settled: p.Bool(), State: outcome()}
	case 7:
		perf = &wire.Detach{Handle: handle, Closed: p.Bool()}
	case 8:
		perf = &wire.Begin{NextOutgoingID: 1, IncomingWindow: uint32(p.Intn(200)), OutgoingWindow: 100, HandleMax: uint32(p.Intn(8))}
	case 9:
		perf = &wire.End{}
	case 10:
		perf = &wire.Flow{IncomingWindow: uint32(p.Intn(200)), NextOutgoingID: uint32(p.Intn(4)), OutgoingWindow: uint32(p.Intn(200))}
	default:
		if p.Byte()&3 != 3 {
			return wire.AppendFrame(nil, ch, &wire.Flow{IncomingWindow: 100, OutgoingWindow: 100, Echo: true}, nil)
		}
		perf = &wire.Close{}
	}
	return wire.AppendFrame(nil, ch, perf, payload)
}
