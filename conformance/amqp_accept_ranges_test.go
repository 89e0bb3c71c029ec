package conformance

import (
	"testing"

	"wharf/conform"
	"wharf/protocols/amqp/wire"
)

// The broker batches the Accepted outcomes of a producer's transfers into
// range dispositions (protocols/amqp conn.accept): whatever the batching,
// every transfer gets exactly one settled Accepted, in delivery-id order,
// and the queue holds every message. A burst of 500 transfers arrives in
// one write, the case where outcomes complete faster than they are
// written.
func TestConformanceAMQPAcceptRanges(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	r := conform.DialRawAMQP(t, b.AMQPAddr())
	r.Open(uniq(t))
	r.AttachSender(0, "snd", q)
	const n = 500 // below the producer credit (1000): no flow needed
	var burst []byte
	for i := range uint32(n) {
		id := i
		msg := wire.AppendMessage(nil, &wire.Message{BodyKind: wire.BodyData, Data: [][]byte{[]byte("m")}})
		burst = wire.AppendFrame(burst, 0, &wire.Transfer{Handle: 0, DeliveryID: &id, DeliveryTag: []byte{byte(id >> 8), byte(id)}}, msg)
	}
	r.Write(burst)
	next, frames := uint32(0), 0
	for next < n {
		d, ok := r.Next().Body.(*wire.Disposition)
		if !ok {
			continue
		}
		frames++
		last := d.First
		if d.Last != nil {
			last = *d.Last
		}
		if d.Role != wire.RoleReceiver || !d.Settled {
			t.Fatalf("disposition %+v: want role receiver, settled", d)
		}
		if _, ok := d.State.(*wire.Accepted); !ok {
			t.Fatalf("disposition %d..%d: state %T, want Accepted", d.First, last, d.State)
		}
		if d.First != next || last < d.First || last >= n {
			t.Fatalf("disposition %d..%d; want one starting at %d, within the %d sent", d.First, last, next, n)
		}
		next = last + 1
	}
	t.Logf("%d transfers accepted in %d dispositions", n, frames)
	if st := b.Engine().Stats(queueDest(q)); st.QueueSize != n {
		t.Fatalf("queue holds %d, want %d", st.QueueSize, n)
	}
	// Nothing more: no outcome is sent twice. The barrier is an echoed
	// flow, which the broker writes after whatever outcome it still held.
	h, in := uint32(0), uint32(1) // the broker sent no transfer: its next is 1
	r.Send(0, &wire.Flow{NextIncomingID: &in, IncomingWindow: 1000, NextOutgoingID: n, OutgoingWindow: 1000, Handle: &h, Echo: true}, nil)
	for {
		switch f := r.Next().Body.(type) {
		case *wire.Disposition:
			t.Fatalf("extra disposition %+v", f)
		case *wire.Flow:
			return
		}
	}
}
