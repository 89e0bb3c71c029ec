package kahadb_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

type waitAll struct{ wg *sync.WaitGroup }

func (w waitAll) Complete(uint64, error) { w.wg.Done() }

// BenchmarkKahaDBPersistentSend: persistent 1 KiB sends through the engine
// into KahaDB with disk syncs on, each producer waiting for its send to be
// on disk before the next (as a JMS persistent send does). Reports msgs/s,
// messages per fsync (group commit at work) and, for reference, the raw
// fsync rate of the same disk measured in the same run.
func BenchmarkKahaDBPersistentSend(b *testing.B) {
	fsyncs := rawFsyncRate(b)
	for _, producers := range []int{1, 4} {
		b.Run("producers="+string(rune('0'+producers)), func(b *testing.B) {
			dir := b.TempDir()
			st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
			if err != nil {
				b.Fatal(err)
			}
			e, err := engine.New(engine.Options{Shards: 1, Store: st})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { e.Close(); st.Close() }()
			q := message.QueueDest("bench")
			body := make([]byte, 1024)
			per := b.N / producers
			b.ReportAllocs()
			b.ResetTimer()
			var all sync.WaitGroup
			for p := 0; p < producers; p++ {
				all.Add(1)
				go func() {
					defer all.Done()
					c, err := e.Connect(engine.Credentials{})
					if err != nil {
						b.Error(err)
						return
					}
					for i := 0; i < per; i++ {
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

// rawFsyncRate measures write(1 KiB)+fsync per second on the test's disk.
func rawFsyncRate(b *testing.B) float64 {
	f, err := os.Create(filepath.Join(b.TempDir(), "fsync"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1024)
	start := time.Now()
	n := 0
	for time.Since(start) < 300*time.Millisecond {
		f.Write(buf)
		f.Sync()
		n++
	}
	return float64(n) / time.Since(start).Seconds()
}

// BenchmarkKahaDBRecover measures a restart: opening a journal that holds
// 100,000 pending 1 KiB messages and rebuilding the index by replay (Wharf
// writes no db.data, so every restart replays). ns/op is one restart.
func BenchmarkKahaDBRecover(b *testing.B) {
	const pending = 100000
	dir := b.TempDir()
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	q := message.QueueDest("backlog")
	body := make([]byte, 1024)
	ops := make([]engine.StoreOp, 0, 1000)
	for i := 1; i <= pending; i++ {
		m := &message.Message{ID: "ID:bench-1:1:1:" + itoa(i), Destination: q, Persistent: true, BodyType: message.BytesBody, Body: body, Priority: 4}
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: m})
		if len(ops) == cap(ops) {
			if err := ss.Apply(ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	st.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		ss, err := st.OpenShard(0, 1)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		ss.Recover(func(engine.RecoveredItem) error { n++; return nil })
		if n != pending {
			b.Fatalf("recovered %d of %d", n, pending)
		}
		st.Close()
	}
	b.ReportMetric(float64(pending)*float64(b.N)/b.Elapsed().Seconds(), "msgs-recovered/s")
}

func itoa(i int) string {
	var buf [20]byte
	n := len(buf)
	for {
		n--
		buf[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(buf[n:])
		}
	}
}
