package kahadb_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// benchPending is how many pending messages the restart and checkpoint
// benchmarks hold: small by default so that -bench=. stays quick; the
// figures in the issue use -kahadb.pending=1000000.
var benchPending = flag.Int("kahadb.pending", 100000, "pending 1 KiB messages in the KahaDB restart and checkpoint benchmarks")

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
			rate := float64(per*producers) / b.Elapsed().Seconds()
			b.ReportMetric(rate, "msgs/s")
			if s.Syncs > 0 {
				b.ReportMetric(float64(per*producers)/float64(s.Syncs), "msgs/fsync")
			}
			b.ReportMetric(fsyncs, "disk-fsyncs/s")
			// The broker's sends against the disk's raw write+fsync rate,
			// both measured in this run: above 1 only by group commit.
			b.ReportMetric(rate/fsyncs, "msgs-vs-disk-fsyncs")
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
// -kahadb.pending pending 1 KiB messages (100,000 by default) and
// rebuilding the state, by replaying the whole journal (replay=full: after
// a kill, no usable index; checkpoints disabled) or by loading the
// checkpoint index a clean stop wrote and reading each message at its
// location (replay=index). The second scenario also holds twice as many
// messages that were sent and consumed, which a full replay reads and the
// index skips. ns/op is one restart; index-vs-full is the full replay's
// time over the index load's, both measured in the same run.
func BenchmarkKahaDBRecover(b *testing.B) {
	parent := b
	pending := *benchPending
	for _, sc := range []struct {
		name     string
		consumed int // per pending message
	}{
		{"pending=" + itoa(pending), 0},
		{"pending=" + itoa(pending) + ",consumed=" + itoa(2*pending), 2},
	} {
		var (
			dir  string // built by the first sub-benchmark run: -bench filters the others out
			full time.Duration
		)
		for _, mode := range []string{"full", "index"} {
			b.Run(sc.name+"/replay="+mode, func(b *testing.B) {
				if dir == "" {
					// In the parent's directory: a sub-benchmark's is
					// removed when it ends.
					dir = parent.TempDir()
					buildBacklog(b, dir, pending, sc.consumed)
				}
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
				var heap uint64 // live heap with the store open, after the last restart
				for i := 0; i < b.N; i++ {
					st, err := kahadb.Open(context.Background(), o)
					if err != nil {
						b.Fatal(err)
					}
					ss, err := st.OpenShard(0, 1)
					if err != nil {
						b.Fatal(err)
					}
					// As the engine recovers: stubs, when the store hands
					// them (every message stays in the journal). Items
					// that re-create a destination are not messages.
					n := 0
					count := func(it engine.RecoveredItem) error {
						if !it.Created {
							n++
						}
						return nil
					}
					if ld, ok := ss.(engine.MessageLoader); ok {
						err = ld.RecoverStubs(count)
					} else {
						err = ss.Recover(count)
					}
					if err != nil || n != pending {
						b.Fatalf("recovered %d of %d: %v", n, pending, err)
					}
					if i == b.N-1 {
						runtime.GC()
						var ms runtime.MemStats
						runtime.ReadMemStats(&ms)
						heap = ms.HeapAlloc
					}
					r := st.Recovery()
					if (r.FromIndex == 1) != (mode == "index") {
						b.Fatalf("recovery %+v in mode %s", r, mode)
					}
					replayed = r.RecordsReplayed
					st.Close()
				}
				per := b.Elapsed() / time.Duration(b.N)
				b.ReportMetric(float64(pending)*float64(b.N)/b.Elapsed().Seconds(), "msgs-recovered/s")
				b.ReportMetric(float64(replayed), "records-replayed")
				b.ReportMetric(per.Seconds(), "s/restart")
				b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
				if mode == "full" {
					full = per
				} else if full > 0 {
					b.ReportMetric(float64(full)/float64(per), "index-vs-full")
				}
			})
		}
	}
}

// buildBacklog writes pending 1 KiB messages to a queue, and consumed
// more per pending one that are removed in the next batch, so that every
// journal file holds both (cleanup removes none).
func buildBacklog(b *testing.B, dir string, pending, consumed int) {
	b.Helper()
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

// BenchmarkKahaDBCheckpoint measures what writing the checkpoint index
// costs the write path with -kahadb.pending pending 1 KiB messages (disk
// syncs on). write=sync is the whole checkpoint on the shard's goroutine
// (snapshot, encoding, file write, fsync, rename: how every checkpoint ran
// before, and how cleanup and Close still run it); write=async is what a
// periodic checkpoint of a large state holds the goroutine for now (the
// snapshot), the rest running on another one (waited for outside the
// timer). The reference is one Apply of one message with checkpoints off,
// measured in the same run; stall-vs-apply is the ratio.
func BenchmarkKahaDBCheckpoint(b *testing.B) {
	pending := *benchPending
	dir := b.TempDir()
	buildBacklog(b, dir, pending, 0)
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true, CheckpointInterval: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	var ref time.Duration
	runs := 0
	b.Run("pending="+itoa(pending)+"/apply", func(b *testing.B) {
		runs++ // b.Run calls this more than once on the same store
		q := message.QueueDest("checkpoint." + itoa(runs))
		ops := make([]engine.StoreOp, 1)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m := &message.Message{ID: "ID:bench-3:" + itoa(runs) + ":1:" + itoa(i+1), Destination: q, Persistent: true, BodyType: message.BytesBody, Body: []byte("x"), Priority: 4}
			ops[0] = engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(i + 1), Msg: m}
			if err := ss.Apply(ops); err != nil {
				b.Fatal(err)
			}
		}
		ref = b.Elapsed() / time.Duration(b.N)
	})
	for _, mode := range []string{"sync", "async"} {
		b.Run("pending="+itoa(pending)+"/write="+mode, func(b *testing.B) {
			b.ReportAllocs()
			var held, worst time.Duration
			for i := 0; i < b.N; i++ {
				d := kahadb.CheckpointForTest(ss, mode == "async")
				held += d
				worst = max(worst, d)
				b.StopTimer()
				kahadb.WaitCheckpointForTest(ss)
				b.StartTimer()
			}
			per := held / time.Duration(b.N)
			b.ReportMetric(float64(per.Microseconds())/1000, "held-ms")
			b.ReportMetric(float64(worst.Microseconds())/1000, "max-held-ms")
			if ref > 0 {
				b.ReportMetric(float64(per)/float64(ref), "stall-vs-apply")
			}
		})
	}
}

// BenchmarkKahaDBRecoverPrepared is BenchmarkKahaDBRecover's restart with
// an XA transaction prepared before the backlog and never ended (a
// transaction manager that does not come back): replay=index starts from
// the checkpoint index, which records it (before index format 3 no index
// was written while it was prepared, and every restart replayed the
// whole journal, as replay=full does).
func BenchmarkKahaDBRecoverPrepared(b *testing.B) {
	parent := b
	pending := *benchPending
	var (
		dir  string
		full time.Duration
	)
	x := engine.XID{FormatID: 1, GlobalID: []byte("bench-prepared")}
	for _, mode := range []string{"full", "index"} {
		b.Run("pending="+itoa(pending)+"/replay="+mode, func(b *testing.B) {
			if dir == "" {
				dir = parent.TempDir()
				st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, CheckpointInterval: -1})
				if err != nil {
					b.Fatal(err)
				}
				ss, err := st.OpenShard(0, 1)
				if err != nil {
					b.Fatal(err)
				}
				q := message.QueueDest("prepared")
				mk := func(id string) *message.Message {
					return &message.Message{ID: id, Destination: q, Persistent: true, BodyType: message.BytesBody, Body: make([]byte, 1024)}
				}
				if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: mk("ID:bench-p:1:1:1")}}); err != nil {
					b.Fatal(err)
				}
				if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{XID: x,
					Adds: []*message.Message{mk("ID:bench-p:1:1:2")}, Acks: []engine.TxAck{{Dest: q, Seq: 1}}}}}); err != nil {
					b.Fatal(err)
				}
				st.Close()
				buildBacklog(b, dir, pending, 0)
			}
			o := kahadb.Options{Dir: dir, CheckpointInterval: -1}
			if mode == "index" {
				o.CheckpointInterval = time.Hour
				st, err := kahadb.Open(context.Background(), o)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := st.OpenShard(0, 1); err != nil {
					b.Fatal(err)
				}
				st.Close() // writes the index
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
				n, txs := 0, 0
				err = ss.(engine.MessageLoader).RecoverStubs(func(it engine.RecoveredItem) error {
					switch {
					case it.Tx != nil:
						txs++
					case !it.Created: // not a destination re-created
						n++
					}
					return nil
				})
				if err != nil || n != pending+1 || txs != 1 {
					b.Fatalf("recovered %d of %d messages and %d transactions: %v", n, pending+1, txs, err)
				}
				r := st.Recovery()
				if (r.FromIndex == 1) != (mode == "index") {
					b.Fatalf("recovery %+v in mode %s", r, mode)
				}
				replayed = r.RecordsReplayed
				st.Close()
			}
			per := b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(replayed), "records-replayed")
			b.ReportMetric(per.Seconds(), "s/restart")
			if mode == "full" {
				full = per
			} else if full > 0 {
				b.ReportMetric(float64(full)/float64(per), "index-vs-full")
			}
		})
	}
}
