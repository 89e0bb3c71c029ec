package openwire

import (
	"bytes"
	"compress/zlib"
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/internal/fuzzprog"
	"wharf/protocols/openwire/wire"
)

var owDestinations = []*wire.Destination{
	wire.NewQueue("q"), wire.NewTopic("t"), wire.NewQueue("a,b"), wire.NewTopic(">"), wire.NewQueue(""),
	wire.NewTempQueue("ID:fuzz-1:1:1"), wire.NewTempTopic("ID:fuzz-1:1:2"), wire.NewQueue("ActiveMQ.DLQ"),
	{Kind: 0, PhysicalName: "x"},
}

// owProbeID is the command id of the KeepAliveInfo that probes the session
// after the input; the programs use ids below it.
const owProbeID = 1 << 30

// FuzzOpenWireSessionCommands is the structure-aware session fuzzer
// (issue #17): after WireFormatInfo (tight or loose encoding, cache on or
// off, as the input picks) and ConnectionInfo, the input is a program that
// builds up to 32 commands — sessions, consumers (queue, topic, durable,
// browser, with selectors and prefetch), producers, messages of every kind
// (persistent or not, in transactions), acks of every type, local and XA
// transaction steps, pulls, destination adds and removes, removes of every
// id — encodes them with the negotiated format, damages some of their
// bytes, and feeds each in two pieces. Invariants: no panic; unless a
// command was damaged, a KeepAliveInfo asking for a response after them is
// answered or the session has ended; no consumer is left on queue q after
// the close; and the engine still serves a fresh client
// (checked after every seed input, and after one fuzzed input in
// conntest.ServeCheckEvery).
func FuzzOpenWireSessionCommands(f *testing.F) {
	e := conntest.Engine(f)
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{})
	// Session, consumer on queue q, producer, message, standard ack.
	f.Add([]byte{1, 0, 0, 0, 1, 0, 0, 2, 0, 0, 10, 0, 0, 0, 0, 0, 3, 0, 0, 4, 0, 0, 1, 0, 3, 'h', 'i', 0, 5, 0, 0, 2, 0})
	f.Add([]byte{0, 1, 0, 6, 0, 0, 4, 0, 1, 0, 6, 2, 0, 6, 4, 0, 9, 0})
	hs := newOWHandshakes(f, srv)
	f.Fuzz(func(t *testing.T, data []byte) { openwireCommandsInput(t, e, srv, hs, data) })
}

// BenchmarkFuzzOpenWireSessionCommandsCorpus runs
// FuzzOpenWireSessionCommands' body over its seed and cached corpus
// (ns/input: what an execution costs).
func BenchmarkFuzzOpenWireSessionCommandsCorpus(b *testing.B) {
	e := conntest.Engine(b)
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	hs := newOWHandshakes(b, srv)
	fuzzprog.Replay(b, "wharf/protocols/openwire", "FuzzOpenWireSessionCommands", func(tb testing.TB, v []any) {
		openwireCommandsInput(tb, e, srv, hs, v[0].([]byte))
	})
}

// owHandshake is one encoding the OpenWire fuzz target picks: the
// WireFormatInfo it sends, encoded, and the format both sides then use.
type owHandshake struct {
	wfi    []byte
	format wire.Format
}

// owHandshakes holds the four encodings, indexed tight*2+cache, built
// once: building the WireFormatInfo and negotiating for every input was a
// tenth of what the target spent.
type owHandshakes [4]owHandshake

func newOWHandshakes(tb testing.TB, srv *Server) *owHandshakes {
	var hs owHandshakes
	for i := range hs {
		opts := wire.DefaultOptions()
		opts.TightEncodingEnabled, opts.CacheEnabled = i&2 != 0, i&1 != 0
		format, err := wire.Negotiate(opts, srv.opts.Local)
		if err != nil {
			tb.Fatal(err)
		}
		wfi, err := wire.NewWireFormatInfo(opts)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := wire.NewEncoder(wire.InitialFormat(wire.MaxVersion)).Append(nil, wfi)
		if err != nil {
			tb.Fatal(err)
		}
		hs[i] = owHandshake{wfi: b, format: format}
	}
	return &hs
}

// openwireCommandsInput is one input of FuzzOpenWireSessionCommands.
func openwireCommandsInput(t testing.TB, e *engine.Engine, srv *Server, hs *owHandshakes, data []byte) {
	p := fuzzprog.New(data)
	i := 0
	if p.Bool() { // TightEncodingEnabled
		i |= 2
	}
	if p.Bool() { // CacheEnabled
		i |= 1
	}
	format := hs[i].format
	enc := wire.NewEncoder(format)
	in := append([]byte(nil), hs[i].wfi...)
	in, _ = enc.Append(in, &wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: 1, ResponseRequired: true},
		ConnectionId: &wire.ConnectionId{Value: "ID:fuzz-1"}, ClientId: p.Pick("fuzz-a", "fuzz-b")})
	tc := &conntest.Conn{}
	s := srv.Handler(tc)
	s.OnData(in)
	for n := 0; n < 32 && p.More() && !tc.Closed(); n++ {
		cmd := buildOpenWireCommand(p, int32(2+n))
		b, err := enc.Append(nil, cmd)
		if err != nil {
			continue // the encoder refuses what it cannot write (an over-long string)
		}
		b = p.Damage(b)
		cut := p.Intn(len(b) + 1)
		if s.OnData(b[:cut]) != nil || s.OnData(b[cut:]) != nil {
			break
		}
	}
	if !p.Damaged && !tc.Closed() {
		b, _ := enc.Append(nil, &wire.KeepAliveInfo{BaseCommand: wire.BaseCommand{CommandId: owProbeID, ResponseRequired: true}})
		s.OnData(b)
		if !tc.Await(conntest.ProbeWait, func(out []byte, closed bool) bool {
			return closed || answersProbe(out, format)
		}) {
			t.Fatalf("no answer to KeepAliveInfo %d and no close within %v", owProbeID, conntest.ProbeWait)
		}
	}
	s.OnClose(nil)
	if st := e.Stats(message.QueueDest("q")); st.ConsumerCount != 0 {
		t.Fatalf("a closed session left %d consumers on queue q", st.ConsumerCount)
	}
	if err := conntest.ServesAfter(e, conntest.ProbeWait, data); err != nil {
		t.Fatalf("the engine stopped serving after the input: %v", err)
	}
	if err := conntest.Tidy(e); err != nil {
		t.Fatalf("tidying the engine after the input: %v", err)
	}
}

// answersProbe reports whether the server's output holds the answer to the
// probe: a Response or ExceptionResponse to owProbeID, a KeepAliveInfo, or
// a ConnectionError or ShutdownInfo (the session ending).
func answersProbe(out []byte, f wire.Format) bool {
	dec := wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.DefaultLimits())
	dec.Feed(out)
	for first := true; ; first = false {
		ds, err := dec.Next()
		if err != nil || ds == nil {
			return false
		}
		if first {
			dec.SetFormat(f)
		}
		switch c := ds.(type) {
		case *wire.Response:
			if c.CorrelationId == owProbeID {
				return true
			}
		case *wire.ExceptionResponse:
			if c.CorrelationId == owProbeID {
				return true
			}
		case *wire.KeepAliveInfo, *wire.ConnectionError, *wire.ShutdownInfo:
			return true
		}
	}
}

var owZlib struct {
	sync.Mutex
	w *zlib.Writer
}

// owDeflate is b compressed as OpenWire compresses a body (zlib, default
// level), with one zlib writer reused.
func owDeflate(b []byte) []byte {
	owZlib.Lock()
	defer owZlib.Unlock()
	var buf bytes.Buffer
	if owZlib.w == nil {
		owZlib.w = zlib.NewWriter(&buf)
	} else {
		owZlib.w.Reset(&buf)
	}
	owZlib.w.Write(b) // writes to a bytes.Buffer cannot fail
	owZlib.w.Close()
	return buf.Bytes()
}

// buildOpenWireCommand builds one command from p's choices; id is its
// command id.
func buildOpenWireCommand(p *fuzzprog.Prog, id int32) wire.Command {
	base := wire.BaseCommand{CommandId: id, ResponseRequired: p.Bool()}
	conn := "ID:fuzz-1"
	if p.Byte()&15 == 15 {
		conn = "ID:other"
	}
	sess := int64(p.Intn(3))
	dest := func() *wire.Destination {
		if p.Byte()&15 == 15 {
			return nil
		}
		return owDestinations[p.Intn(len(owDestinations))]
	}
	consumer := func() *wire.ConsumerId {
		return &wire.ConsumerId{ConnectionId: conn, SessionId: sess, Value: int64(p.Intn(3))}
	}
	producer := func() *wire.ProducerId {
		return &wire.ProducerId{ConnectionId: conn, SessionId: sess, Value: int64(p.Intn(3))}
	}
	msgID := func() *wire.MessageId {
		return &wire.MessageId{ProducerId: producer(), ProducerSequenceId: int64(1 + p.Intn(4))}
	}
	tx := func() wire.TransactionId {
		switch p.Intn(4) {
		case 0:
			return &wire.LocalTransactionId{Value: int64(1 + p.Intn(2)), ConnectionId: &wire.ConnectionId{Value: conn}}
		case 1:
			return &wire.XATransactionId{FormatId: 1, GlobalTransactionId: p.Bytes(4), BranchQualifier: []byte{1}}
		}
		return nil
	}
	switch p.Intn(14) {
	case 0:
		return &wire.SessionInfo{BaseCommand: base, SessionId: &wire.SessionId{ConnectionId: conn, Value: sess}}
	case 1, 2:
		return &wire.ConsumerInfo{BaseCommand: base, ConsumerId: consumer(), Destination: dest(),
			PrefetchSize: int32(p.Intn(4)) * 5, Browser: p.Byte()&7 == 7, Selector: p.Pick("", "", "a > 1", "((("),
			SubscriptionName: p.Pick("", "", "d1"), NoLocal: p.Bool(), Exclusive: p.Bool(), Retroactive: p.Byte()&7 == 7,
			Priority: int8(p.Intn(12)), MaximumPendingMessageLimit: int32(p.Intn(3))}
	case 3:
		return &wire.ProducerInfo{BaseCommand: base, ProducerId: producer(), Destination: dest(), WindowSize: int32(p.Intn(3)) * 1024}
	case 4, 5, 6:
		m := &wire.Message{BaseCommand: base, ProducerId: producer(), Destination: dest(), MessageId: msgID(),
			Persistent: p.Bool(), Priority: byte(p.Intn(12)), TransactionId: tx(), Expiration: int64(p.Intn(3)),
			GroupID: p.Pick("", "", "g"), Type: p.Pick("", "t")}
		m.Kind = []byte{wire.TypeActiveMQTextMessage, wire.TypeActiveMQBytesMessage, wire.TypeActiveMQMapMessage,
			wire.TypeActiveMQMessage, wire.TypeActiveMQObjectMessage, wire.TypeActiveMQStreamMessage}[p.Intn(6)]
		if m.Kind == wire.TypeActiveMQTextMessage && p.Bool() {
			text := string(p.Bytes(32))
			if p.Byte()&3 == 3 {
				// What m.SetText(text, true) makes, with a reused zlib
				// writer: a new one per message was most of what the
				// target allocated.
				m.Compressed, m.Content = true, owDeflate(wire.AppendUTF8(nil, text))
			} else {
				m.SetText(text, false)
			}
		} else {
			m.Content = p.Bytes(32)
		}
		if p.Bool() {
			_ = m.SetProperties(map[string]any{"a": int32(p.Byte()), "AMQ_SCHEDULED_DELAY": int64(p.Intn(3))})
		}
		if p.Byte()&7 == 7 {
			m.MarshalledProperties = p.Bytes(16)
		}
		if p.Byte()&7 == 7 {
			m.ReplyTo = dest()
		}
		return m
	case 7, 8:
		return &wire.MessageAck{BaseCommand: base, Destination: dest(), ConsumerId: consumer(), TransactionId: tx(),
			AckType: byte(p.Intn(8)), FirstMessageId: msgID(), LastMessageId: msgID(), MessageCount: int32(p.Intn(4))}
	case 9:
		return &wire.TransactionInfo{BaseCommand: base, ConnectionId: &wire.ConnectionId{Value: conn}, TransactionId: tx(), Type: byte(p.Intn(9))}
	case 10:
		var obj wire.DataStructure
		switch p.Intn(4) {
		case 0:
			obj = &wire.ConnectionId{Value: conn}
		case 1:
			obj = &wire.SessionId{ConnectionId: conn, Value: sess}
		case 2:
			obj = consumer()
		default:
			obj = producer()
		}
		return &wire.RemoveInfo{BaseCommand: base, ObjectId: obj, LastDeliveredSequenceId: int64(p.Intn(3)) - 1}
	case 11:
		return &wire.MessagePull{BaseCommand: base, ConsumerId: consumer(), Destination: dest(), Timeout: int64(p.Intn(3)) - 1}
	case 12:
		return &wire.DestinationInfo{BaseCommand: base, ConnectionId: &wire.ConnectionId{Value: conn}, Destination: dest(), OperationType: byte(p.Intn(3))}
	default:
		if p.Byte()&3 == 3 {
			return &wire.ShutdownInfo{BaseCommand: base}
		}
		return &wire.RemoveSubscriptionInfo{BaseCommand: base, ConnectionId: &wire.ConnectionId{Value: conn}, SubscriptionName: "d1", ClientId: p.Pick("fuzz-a", "fuzz-b")}
	}
}

// TestOpenWireSessionFuzzPrefix checks that the fuzz target's handshake is
// accepted for every encoding it picks (ConnectionInfo answered with a
// Response, nothing closed), so that the fuzzer works past it.
func TestOpenWireSessionFuzzPrefix(t *testing.T) {
	e := conntest.Engine(t)
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tight := range []bool{false, true} {
		for _, cache := range []bool{false, true} {
			opts := wire.DefaultOptions()
			opts.TightEncodingEnabled, opts.CacheEnabled = tight, cache
			format, err := wire.Negotiate(opts, srv.opts.Local)
			if err != nil {
				t.Fatal(err)
			}
			enc := wire.NewEncoder(wire.InitialFormat(wire.MaxVersion))
			wfi, _ := wire.NewWireFormatInfo(opts)
			in, _ := enc.Append(nil, wfi)
			enc.SetFormat(format)
			in, _ = enc.Append(in, &wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: 1, ResponseRequired: true},
				ConnectionId: &wire.ConnectionId{Value: "ID:prefix"}, ClientId: "prefix"})
			tc := &conntest.Conn{}
			s := srv.Handler(tc)
			s.OnData(in)
			ok := tc.Await(5*time.Second, func(out []byte, closed bool) bool {
				dec := wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.DefaultLimits())
				dec.Feed(out)
				for first := true; ; first = false {
					ds, err := dec.Next()
					if err != nil || ds == nil {
						return false
					}
					if first {
						dec.SetFormat(format)
					}
					if r, ok := ds.(*wire.Response); ok && r.CorrelationId == 1 {
						return true
					}
				}
			})
			if !ok || tc.Closed() {
				t.Errorf("tight %v cache %v: ConnectionInfo answered %v, closed %v", tight, cache, ok, tc.Closed())
			}
			s.OnClose(nil)
		}
	}
}
