package kahadb_test

import (
	"context"
	"sync"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// syncedAcks hides ApplyNoSync, so that every batch is synced: the
// reference for BenchmarkKahaDBPersistentQueue.
type syncedAcks struct{ engine.Store }

func (s syncedAcks) OpenShard(i, n int) (engine.ShardStore, error) {
	ss, err := s.Store.OpenShard(i, n)
	if err != nil {
		return nil, err
	}
	return syncedAcksShard{ss}, nil
}

type syncedAcksShard struct{ engine.ShardStore }

func (s syncedAcksShard) Syncs() bool { return true }

// ackBenchBroker is an engine on a KahaDB store with disk syncs, whose
// acknowledgements are synced (mode "synced") or not (Wharf's way).
func ackBenchBroker(b *testing.B, mode string) (*engine.Engine, *kahadb.Store) {
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: b.TempDir(), EnableJournalDiskSyncs: true})
	if err != nil {
		b.Fatal(err)
	}
	var store engine.Store = st
	if mode == "synced" {
		store = syncedAcks{st}
	}
	e, err := engine.New(engine.Options{Shards: 1, Store: store})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close(); st.Close() })
	return e, st
}

type chanSink chan engine.Delivery

func (c chanSink) Deliver(d engine.Delivery) { c <- d }

// BenchmarkKahaDBPersistentQueue: 4 producers send persistent 1 KiB
// messages, each waiting for its send to be on disk, while a consumer
// acknowledges each message as it arrives — the broker's common persistent
// workload. acks=unsynced is Wharf's way (a batch of acknowledgements alone
// is written without an fsync, as ActiveMQ writes an ack that asked for no
// response); acks=synced syncs every batch, the reference in the same run.
func BenchmarkKahaDBPersistentQueue(b *testing.B) {
	fsyncs := rawFsyncRate(b)
	for _, mode := range []string{"synced", "unsynced", "synced", "unsynced"} {
		b.Run("acks="+mode, func(b *testing.B) {
			e, st := ackBenchBroker(b, mode)
			q := message.QueueDest("bench")
			cc, err := e.Connect(engine.Credentials{})
			if err != nil {
				b.Fatal(err)
			}
			deliveries := make(chanSink, 1000)
			sub, err := cc.Subscribe(engine.SubSpec{Destination: q, Prefetch: 100, AckMode: engine.AckIndividual}, deliveries)
			if err != nil {
				b.Fatal(err)
			}
			const producers = 4
			per := max(b.N/producers, 1)
			body := make([]byte, 1024)
			b.ResetTimer()
			var all sync.WaitGroup
			for range producers {
				all.Add(1)
				go func() {
					defer all.Done()
					c, err := e.Connect(engine.Credentials{})
					if err != nil {
						b.Error(err)
						return
					}
					for range per {
						var wg sync.WaitGroup
						wg.Add(1)
						m := &message.Message{Destination: q, Body: body, BodyType: message.BytesBody, Persistent: true, Priority: 4}
						if err := c.Send(m, "", waitAll{&wg}, 1); err != nil {
							b.Error(err)
							return
						}
						wg.Wait()
					}
				}()
			}
			for range per * producers {
				d := <-deliveries
				if err := cc.Ack(sub, d.ID, ""); err != nil {
					b.Fatal(err)
				}
			}
			all.Wait()
			b.StopTimer()
			s := st.Stats()
			b.ReportMetric(float64(per*producers)/b.Elapsed().Seconds(), "msgs/s")
			if s.Syncs > 0 {
				b.ReportMetric(float64(per*producers)/float64(s.Syncs), "msgs/fsync")
			}
			b.ReportMetric(fsyncs, "disk-fsyncs/s")
		})
	}
}

// BenchmarkKahaDBDrainQueue: a consumer drains a backlog of persistent
// 1 KiB messages, acknowledging each one, with nothing else going on. With
// acks=synced each turn's acknowledgements wait for an fsync; with
// acks=unsynced (Wharf) they do not, as in ActiveMQ.
func BenchmarkKahaDBDrainQueue(b *testing.B) {
	fsyncs := rawFsyncRate(b)
	for _, mode := range []string{"synced", "unsynced", "synced", "unsynced"} {
		b.Run("acks="+mode, func(b *testing.B) {
			e, st := ackBenchBroker(b, mode)
			q := message.QueueDest("bench")
			c, err := e.Connect(engine.Credentials{})
			if err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			var sent sync.WaitGroup
			for range b.N {
				sent.Add(1)
				m := &message.Message{Destination: q, Body: body, BodyType: message.BytesBody, Persistent: true, Priority: 4}
				if err := c.Send(m, "", waitAll{&sent}, 1); err != nil {
					b.Fatal(err)
				}
			}
			sent.Wait()
			before := st.Stats().Syncs
			deliveries := make(chanSink, 1000)
			b.ResetTimer()
			sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 100, AckMode: engine.AckIndividual}, deliveries)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				d := <-deliveries
				if err := c.Ack(sub, d.ID, ""); err != nil {
					b.Fatal(err)
				}
			}
			// Round trips through the shard and a close: every ack written.
			e.Stats(q)
			e.Close()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			b.ReportMetric(float64(st.Stats().Syncs-before), "fsyncs")
			b.ReportMetric(fsyncs, "disk-fsyncs/s")
		})
	}
}
