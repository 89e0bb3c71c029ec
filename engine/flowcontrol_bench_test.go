package engine_test

import (
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// BenchmarkEngineFlowControlIsolation measures queue B's send -> dispatch ->
// ack throughput, first alone, then while queue "small.A" (same engine, 2
// shards) is held at its memory limit by a producer that has no consumer and
// sends synchronously, so one of its sends is always parked. The ratio of
// the two msgs/s figures is the isolation: a blocked producer must cost
// other destinations nothing.
func BenchmarkEngineFlowControlIsolation(b *testing.B) {
	for _, blocked := range []bool{false, true} {
		name := "alone"
		if blocked {
			name = "next-to-blocked"
		}
		b.Run(name, func(b *testing.B) {
			v := start(&testing.T{}, limited(64*1024, nil))
			defer v.e.Close()
			if blocked {
				p, _ := v.e.Connect(engine.Credentials{})
				a := message.QueueDest("small.A")
				pc := newPending()
				go func() {
					// Synchronous sends until one is parked; it stays parked
					// for the rest of the run.
					for tok := uint64(1); ; tok++ {
						if p.Send(bigMsg(a), "", pc, tok) != nil {
							return
						}
						<-pc.ch
						if st := v.e.Stats(a); st.BlockedNow > 0 {
							return
						}
					}
				}()
				for v.e.Stats(a).BlockedNow == 0 {
					// wait until the producer on A is blocked (the loop above
					// stops sending then); Stats is a round trip to the shard.
				}
			}
			runQueue(b, v, message.QueueDest("B"))
		})
	}
}

func runQueue(b *testing.B, v *env, q message.Destination) {
	p, _ := v.e.Connect(engine.Credentials{})
	c, _ := v.e.Connect(engine.Credentials{})
	ch := make(benchSink, 2048)
	s, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 1000, AckMode: engine.AckIndividual}, ch)
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	done := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for i := 0; i < b.N; i++ {
			c.Ack(s, <-ch, "")
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		p.Send(&message.Message{Destination: q, Body: body, BodyType: message.BytesBody, Priority: 4}, "", nil, 0)
	}
	<-done
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
