package lsm_test

import (
	"context"
	"strconv"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/lsm"
)

// BenchmarkStoreApply compares the LSM store with KahaDB in one run: each
// op is one Apply of a batch of n adds of 1 KiB messages to a queue,
// synced as each store syncs by default (syncWrites, enableJournalDiskSyncs),
// followed by the Apply that removes them (as consumers do), so that the
// store stays small. ns/op is per batch; msgs/s is what that gives.
//
//	go test -run '^$' -bench StoreApply ./storage/lsm/
func BenchmarkStoreApply(b *testing.B) {
	stores := []struct {
		name string
		open func(dir string) (engine.Store, error)
	}{
		{"kahadb", func(dir string) (engine.Store, error) {
			return kahadb.Open(context.Background(), kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
		}},
		{"lsm", func(dir string) (engine.Store, error) {
			return lsm.Open(lsm.Options{Dir: dir, SyncWrites: true})
		}},
		// Bodies inline in the tree: one log to write per batch.
		{"lsm-inline", func(dir string) (engine.Store, error) {
			return lsm.Open(lsm.Options{Dir: dir, SyncWrites: true, ValueThreshold: 64 << 10})
		}},
	}
	body := make([]byte, 1024)
	for _, n := range []int{1, 16, 256} {
		for _, st := range stores {
			b.Run("batch="+strconv.Itoa(n)+"/store="+st.name, func(b *testing.B) {
				s, err := st.open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				ss, err := s.OpenShard(0, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer ss.Close()
				q := message.QueueDest("bench")
				adds := make([]engine.StoreOp, n)
				removes := make([]engine.StoreOp, n)
				seq := uint64(0)
				b.SetBytes(int64(n * len(body)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					for i := range adds {
						seq++
						m := &message.Message{ID: "ID:bench-1:1:1:" + strconv.FormatUint(seq, 10), Destination: q,
							Body: body, BodyType: message.BytesBody, Persistent: true, Priority: 4}
						adds[i] = engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: m}
						removes[i] = engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: seq}
					}
					if err := ss.Apply(adds); err != nil {
						b.Fatal(err)
					}
					if err := ss.Apply(removes); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}
