package memory_test

import (
	"fmt"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/memory"
)

// BenchmarkStoreMemoryAddRemove measures one batch that adds a message to a
// queue and one that removes the oldest, with depth messages pending.
func BenchmarkStoreMemoryAddRemove(b *testing.B) {
	for _, depth := range []int{1, 1_000, 100_000} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			ss, err := memory.New().OpenShard(0, 1)
			if err != nil {
				b.Fatal(err)
			}
			q := message.QueueDest("bench")
			m := &message.Message{ID: "ID:bench", Destination: q, Persistent: true, BodyType: message.TextBody, Body: make([]byte, 1024)}
			op := make([]engine.StoreOp, 1)
			seq := uint64(0)
			for range depth {
				seq++
				op[0] = engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: m}
				if err := ss.Apply(op); err != nil {
					b.Fatal(err)
				}
			}
			oldest := uint64(1)
			b.ReportAllocs()
			for b.Loop() {
				seq++
				op[0] = engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: m}
				if err := ss.Apply(op); err != nil {
					b.Fatal(err)
				}
				op[0] = engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: oldest}
				if err := ss.Apply(op); err != nil {
					b.Fatal(err)
				}
				oldest++
			}
		})
	}
}
