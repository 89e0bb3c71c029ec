package amqp

import (
	"bytes"
	"testing"

	"wharf/protocols/amqp/wire"
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
