package amqp

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/conntest"
)

// The adapter's per-message hot paths as a broker under load runs them,
// with the message `wharf bench` sends through go-amqp (a 1 KiB data
// section, header.durable for --persistent) and with the richer one Qpid
// JMS sends (benchAMQP). `make bench` runs them with -benchmem:
// allocs/op is the figure to watch.

// benchPlain is go-amqp's message in `wharf bench --persistent`: a durable
// header and one 1 KiB data section.
func benchPlain(b *testing.B) *wire.Message {
	return reencode(b, &wire.Message{Header: &wire.Header{Durable: true, Priority: 4},
		BodyKind: wire.BodyData, Data: [][]byte{bytes.Repeat([]byte{'x'}, 1024)}})
}

// BenchmarkAMQPInbound is what a transfer from a producer costs the
// adapter once its frame is read: the message decoded into the
// connection's reused Message and mapped to an engine message (what
// link.onDelivery does).
func BenchmarkAMQPInbound(b *testing.B) {
	for _, tc := range []struct {
		name string
		am   *wire.Message
	}{{"plain", benchPlain(b)}, {"jms", benchAMQP(b)}} {
		raw := tc.am.Encoded()
		b.Run(tc.name, func(b *testing.B) {
			var dec wire.MessageDecoder
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				am, err := dec.Decode(raw)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ToMessage(am, testQueue, testNow); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAMQPDeliverEncode is what a delivery to a consumer costs the
// adapter before it is queued for the socket: the engine message mapped
// into the connection's reused outMessage, with the link's cached
// address, encoded, and framed as a transfer (what link.Deliver and
// session.sendLocked do).
func BenchmarkAMQPDeliverEncode(b *testing.B) {
	for _, tc := range []struct {
		name string
		am   *wire.Message
	}{{"plain", benchPlain(b)}, {"jms", benchAMQP(b)}} {
		m, err := ToMessage(tc.am, testQueue, testNow)
		if err != nil {
			b.Fatal(err)
		}
		m.ID = "ID:wharf-1:1:1:1"
		b.Run(tc.name, func(b *testing.B) {
			var (
				o        outMessage
				to       addrCache
				msg, out []byte
				x        xferScratch
			)
			b.ReportAllocs()
			b.SetBytes(int64(len(m.Body)))
			for b.Loop() {
				msg = wire.AppendMessage(msg[:0], fromMessage(&o, &to, m, 0, testNow))
				o = outMessage{}
				x.id++
				x.t = wire.Transfer{Handle: 1, DeliveryID: &x.id, DeliveryTag: x.tag[:], MessageFormat: &x.format, Settled: &x.settled}
				out, err = wire.AppendTransfer(out[:0], 1, &x.t, msg, 65536)
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// discardConn is a transport connection that counts what is written and
// keeps none of it, for benchmarks that write without end.
type discardConn struct {
	conntest.Conn
	bytes atomic.Int64
	wrote chan struct{} // signalled, without blocking, on every write
}

func (c *discardConn) Write(b []byte) error {
	c.bytes.Add(int64(len(b)))
	select {
	case c.wrote <- struct{}{}:
	default:
	}
	return nil
}

func (c *discardConn) WriteNotify(b []byte, done func(error)) error {
	c.Write(b)
	if done != nil {
		done(nil)
	}
	return nil
}

// benchConn is an opened connection on a real engine with one session
// (channel 0, windows wide open), a sender link on handle 0 to "topic://"
// + drop, which nobody subscribes to, and a receiver link on handle 1 from
// a queue, unsettled, rcv-settle-mode first, as go-amqp attaches them.
func benchConn(b *testing.B) (*conn, *discardConn) {
	e := conntest.Engine(b)
	tc := &discardConn{wrote: make(chan struct{}, 1)}
	c := NewServer(e, DefaultOptions()).Handler(tc).(*conn)
	var in []byte
	in = append(in, wire.HeaderSASL...)
	in = wire.AppendSASLFrame(in, &wire.SASLInit{Mechanism: "ANONYMOUS"})
	in = append(in, wire.HeaderAMQP...)
	in = wire.AppendFrame(in, 0, wire.NewOpen("bench"), nil)
	in = wire.AppendFrame(in, 0, &wire.Begin{NextOutgoingID: 1, IncomingWindow: 1<<31 - 1, OutgoingWindow: 1<<31 - 1, HandleMax: 10}, nil)
	snd := wire.NewAttach("snd", 0, wire.RoleSender)
	snd.SndSettleMode = wire.SndSettleSettled
	snd.Source, snd.Target = &wire.Source{}, &wire.Target{Address: "topic://bench.drop"}
	in = wire.AppendFrame(in, 0, snd, nil)
	rcv := wire.NewAttach("rcv", 1, wire.RoleReceiver)
	rcv.SndSettleMode = wire.SndSettleUnsettled
	rcv.Source, rcv.Target = &wire.Source{Address: "queue://bench.q"}, &wire.Target{}
	in = wire.AppendFrame(in, 0, rcv, nil)
	h, credit := uint32(1), uint32(1<<30)
	in = wire.AppendFrame(in, 0, &wire.Flow{NextIncomingID: new(uint32(1)), IncomingWindow: 1<<31 - 1, NextOutgoingID: 1, OutgoingWindow: 1<<31 - 1, Handle: &h, LinkCredit: &credit}, nil)
	for len(in) > 0 {
		c.OnData(in)
		in = nil
		if c.dec.Buffered() == 0 {
			break
		}
	}
	if tc.Closed() || c.sessions[0] == nil || len(c.sessions[0].links) != 2 {
		b.Fatalf("benchmark connection not set up: closed %v", tc.Closed())
	}
	b.Cleanup(func() { c.OnClose(nil) })
	return c, tc
}

// BenchmarkAMQPConnTransferIn is what one transfer from a producer costs
// from the bytes read to the engine: the frame decoded, the delivery
// handled on its link, the message decoded, mapped and sent (settled, to
// a topic nobody subscribes to, so that nothing piles up). Frames come 16
// to a read, as from a producer that keeps sending.
func BenchmarkAMQPConnTransferIn(b *testing.B) {
	c, _ := benchConn(b)
	body := wire.AppendMessage(nil, &wire.Message{BodyKind: wire.BodyData, Data: [][]byte{bytes.Repeat([]byte{'x'}, 1024)}})
	const perRead = 16
	var in []byte
	for i := range perRead {
		id := uint32(i)
		in = wire.AppendFrame(in, 0, &wire.Transfer{Handle: 0, DeliveryID: &id, DeliveryTag: []byte{byte(i)}, MessageFormat: new(uint32(0)), Settled: new(true)}, body)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(in) / perRead))
	n := 0
	for b.Loop() {
		if n%perRead == 0 {
			c.OnData(in)
		}
		n++
	}
}

// BenchmarkAMQPConnDeliverSettle is what one delivery to an unsettled
// consumer costs the adapter: the engine's delivery mapped, encoded and
// written as a transfer, then the client's accepting disposition decoded
// and handed to the engine (link.Deliver, session.onDisposition).
func BenchmarkAMQPConnDeliverSettle(b *testing.B) {
	c, tc := benchConn(b)
	s := c.sessions[0]
	l := s.links[1]
	es := l.es.Load()
	m := &message.Message{ID: "ID:wharf-1:1:1:1", Destination: message.QueueDest("bench.q"), BodyType: message.BytesBody,
		Body: bytes.Repeat([]byte{'x'}, 1024), Priority: message.DefaultPriority, Persistent: false}
	// One message through the engine gives a delivery id of the queue's
	// shard (the engine routes an ack by its low byte).
	if err := c.ec.Send(m, "", nil, 0); err != nil {
		b.Fatal(err)
	}
	var first outDelivery
	timeout := time.After(10 * time.Second)
	for first.l == nil {
		select {
		case <-tc.wrote:
		case <-timeout:
			b.Fatal("the engine did not deliver the first message")
		}
		c.outMu.Lock()
		first = s.unsettled[0]
		c.outMu.Unlock()
	}
	var disp []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(m.Body)))
	id := uint32(0)
	for b.Loop() {
		if id > 0 {
			l.Deliver(engine.Delivery{Sub: es, ID: first.id + uint64(id)<<8, Msg: m})
		}
		disp = wire.AppendFrame(disp[:0], 0, &wire.Disposition{Role: wire.RoleReceiver, First: id, Settled: true, State: stateAccepted}, nil)
		c.OnData(disp)
		id++
	}
	if len(c.sessions[0].unsettled) != 0 || tc.Closed() {
		b.Fatalf("%d deliveries left unsettled, closed %v", len(c.sessions[0].unsettled), tc.Closed())
	}
}
