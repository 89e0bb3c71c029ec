package engine_test

import (
	"strconv"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// BenchmarkEngineAckInOrder is individual acknowledgement in delivery
// order with window deliveries unacknowledged, as an MQTT QoS 1 subscriber
// with a large prefetch acknowledges (PUBACKs come in order, behind the
// deliveries still on the wire): send -> dispatch -> ack of the delivery
// window sends earlier, per op, on one shard (issue 18: the ack looked the
// id up by binary search over the in-flight list).
func BenchmarkEngineAckInOrder(b *testing.B) {
	for _, window := range []int{1, 1000, 20000} {
		b.Run("window="+strconv.Itoa(window), func(b *testing.B) {
			v := start(&testing.T{}, func(o *engine.Options) { o.Shards = 1 })
			defer v.e.Close()
			q := message.QueueDest("bench")
			p, err := v.e.Connect(engine.Credentials{})
			if err != nil {
				b.Fatal(err)
			}
			c, err := v.e.Connect(engine.Credentials{})
			if err != nil {
				b.Fatal(err)
			}
			ch := make(benchSink, window+2048)
			s, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: window + 1000, AckMode: engine.AckIndividual}, ch)
			if err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			send := func() {
				m := &message.Message{Destination: q, Body: body, BodyType: message.BytesBody, Priority: 4}
				if err := p.Send(m, "", nil, 0); err != nil {
					b.Fatal(err)
				}
			}
			held := make([]uint64, 0, window)
			for range window {
				send()
				held = append(held, <-ch)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				send()
				id := <-ch
				c.Ack(s, held[i%window], "")
				held[i%window] = id
			}
			b.StopTimer()
		})
	}
}
