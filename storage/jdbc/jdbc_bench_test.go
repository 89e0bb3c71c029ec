package jdbc_test

import (
	"strconv"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// BenchmarkStoreApply is storage/lsm's BenchmarkStoreApply on the JDBC
// store, on the test's private PostgreSQL (fsync on, synchronous_commit
// on): each op is one Apply of n adds of 1 KiB messages to a queue and
// the Apply that removes them. ns/op is per batch; msgs/s is what that
// gives.
//
//	go test -run '^$' -bench StoreApply ./storage/jdbc/
func BenchmarkStoreApply(b *testing.B) {
	body := make([]byte, 1024)
	for _, n := range []int{1, 16, 256} {
		b.Run("batch="+strconv.Itoa(n), func(b *testing.B) {
			s := open(b, newDB(b))
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
