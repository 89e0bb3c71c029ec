package kahadb_test

import (
	"context"
	"sync"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// unmarked drops the delivery marks (OpDelivered) on their way to the
// store: the reference for BenchmarkKahaDBDrainDurable.
type unmarked struct{ engine.Store }

func (s unmarked) OpenShard(i, n int) (engine.ShardStore, error) {
	ss, err := s.Store.OpenShard(i, n)
	if err != nil {
		return nil, err
	}
	return unmarkedShard{ss}, nil
}

type unmarkedShard struct{ engine.ShardStore }

func withoutMarks(ops []engine.StoreOp) []engine.StoreOp {
	out := ops[:0]
	for _, op := range ops {
		if op.Kind != engine.OpDelivered {
			out = append(out, op)
		}
	}
	return out
}

func (s unmarkedShard) Apply(ops []engine.StoreOp) error {
	return s.ShardStore.Apply(withoutMarks(ops))
}
func (s unmarkedShard) ApplyNoSync(ops []engine.StoreOp) error {
	return s.ShardStore.(engine.NoSyncApplier).ApplyNoSync(withoutMarks(ops))
}
func (s unmarkedShard) Syncs() bool { return s.ShardStore.(engine.Syncer).Syncs() }

// BenchmarkKahaDBDrainDurable: a durable topic subscription drains a
// backlog of persistent 1 KiB messages, acknowledging each one: every turn
// hands out one message (a delivery mark) and takes one ack. marks=off
// drops the marks before the store, the cost they add in the same run.
func BenchmarkKahaDBDrainDurable(b *testing.B) {
	for _, mode := range []string{"off", "on", "off", "on"} {
		b.Run("marks="+mode, func(b *testing.B) {
			st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: b.TempDir(), EnableJournalDiskSyncs: true})
			if err != nil {
				b.Fatal(err)
			}
			var store engine.Store = st
			if mode == "off" {
				store = unmarked{st}
			}
			e, err := engine.New(engine.Options{Shards: 1, Store: store})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { e.Close(); st.Close() })
			tp := message.TopicDest("bench")
			c, err := e.Connect(engine.Credentials{ClientID: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			spec := engine.SubSpec{Destination: tp, DurableName: "AT_LEAST_ONCE:bench", Prefetch: 100, AckMode: engine.AckIndividual}
			sub, err := c.Subscribe(spec, chanSink(make(chan engine.Delivery, 1)))
			if err != nil {
				b.Fatal(err)
			}
			if err := c.CloseSubscription(sub); err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			var sent sync.WaitGroup
			for range b.N {
				sent.Add(1)
				m := &message.Message{Destination: tp, Body: body, BodyType: message.BytesBody, Persistent: true, Priority: 4}
				if err := c.Send(m, "", waitAll{&sent}, 1); err != nil {
					b.Fatal(err)
				}
			}
			sent.Wait()
			before := st.Stats()
			deliveries := make(chanSink, 1000)
			b.ResetTimer()
			sub, err = c.Subscribe(spec, deliveries)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				d := <-deliveries
				if err := c.Ack(sub, d.ID, ""); err != nil {
					b.Fatal(err)
				}
			}
			e.Stats(tp)
			e.Close()
			b.StopTimer()
			after := st.Stats()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(float64(after.Syncs-before.Syncs), "fsyncs")
			b.ReportMetric(float64(after.Records-before.Records)/float64(b.N), "records/msg")
			b.ReportMetric(float64(after.Bytes-before.Bytes)/float64(b.N), "journal-B/msg")
		})
	}
}
