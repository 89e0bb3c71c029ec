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
// 100,000 pending 1 KiB messages and rebuilding the state, by replaying the
// whole journal (replay=full, checkpoints disabled) or by loading the
// checkpoint index a clean stop wrote and reading each message at its
// location (replay=index). The second scenario also holds 200,000 messages
// that were sent and consumed, which a full replay reads and the index
// skips. ns/op is one restart.
func BenchmarkKahaDBRecover(b *testing.B) {
	const pending = 100000
	for _, sc := range []struct {
		name     string
		consumed int // per pending message
	}{
		{"pending=100k", 0},
		{"pending=100k,consumed=200k", 2},
	} {
		dir := buildBacklog(b, pending, sc.consumed)
		for _, mode := range []string{"full", "index"} {
			b.Run(sc.name+"/replay="+mode, func(b *testing.B) {
				o := kahadb.Options{Dir: dir, CheckpointInterval: -1}
				if mode == "index" {
					o.CheckpointInterval = time.Hour
					// A clean stop writes the index.
					st, err := kahadb.Open(context.Background(), o)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := st.OpenShard(0, 1); err != nil {
						b.Fatal(err)
					}
					st.Close()
				}
				b.ReportAllocs()
				b.ResetTimer()
				var replayed int
				for i := 0; i < b.N; i++ {
					st, err := kahadb.Open(context.Background(), o)
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
					r := st.Recovery()
					if (r.FromIndex == 1) != (mode == "index") {
						b.Fatalf("recovery %+v in mode %s", r, mode)
					}
					replayed = r.RecordsReplayed
					st.Close()
				}
				b.ReportMetric(float64(pending)*float64(b.N)/b.Elapsed().Seconds(), "msgs-recovered/s")
				b.ReportMetric(float64(replayed), "records-replayed")
			})
		}
	}
}

// buildBacklog writes pending 1 KiB messages to a queue, and consumed
// more per pending one that are removed in the next batch, so that every
// journal file holds both (cleanup removes none).
func buildBacklog(b *testing.B, pending, consumed int) string {
	b.Helper()
	dir := b.TempDir()
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, CheckpointInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	q, gone := message.QueueDest("backlog"), message.QueueDest("consumed")
	body := make([]byte, 1024)
	ops := make([]engine.StoreOp, 0, 1000*(1+consumed))
	var removes []engine.StoreOp
	seq := uint64(0)
	for i := 1; i <= pending; i++ {
		m := &message.Message{ID: "ID:bench-1:1:1:" + itoa(i), Destination: q, Persistent: true, BodyType: message.BytesBody, Body: body, Priority: 4}
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: m})
		for range consumed {
			seq++
			m := &message.Message{ID: "ID:bench-2:1:1:" + itoa(int(seq)), Destination: gone, Persistent: true, BodyType: message.BytesBody, Body: body, Priority: 4}
			ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: gone, Seq: seq, Msg: m})
			removes = append(removes, engine.StoreOp{Kind: engine.OpRemove, Dest: gone, Seq: seq})
		}
		if i%1000 == 0 || i == pending {
			if err := ss.Apply(ops); err != nil {
				b.Fatal(err)
			}
			if len(removes) > 0 {
				if err := ss.Apply(removes); err != nil {
					b.Fatal(err)
				}
			}
			ops, removes = ops[:0], removes[:0]
		}
	}
	return dir
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
