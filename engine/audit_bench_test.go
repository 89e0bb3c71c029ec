package engine_test

import (
	"strconv"
	"testing"

	"wharf/engine"
)

// BenchmarkAuditPerMessage is what the two audits add to a persistent
// queue send on the engine's path, per message: splitting the message id
// and marking its sequence id in its producer's window (the cursor
// audit); the producer audit's map update costs the same lookup. Compare
// with BenchmarkEngineQueue/persistent,memory-store in the same run.
func BenchmarkAuditPerMessage(b *testing.B) {
	const prefix = "ID:bench-host-40000-1700000000000-1:1:1:1:"
	ids := make([]string, 4096)
	for i := range ids {
		ids[i] = prefix + strconv.Itoa(i+1)
	}
	w := engine.NewAuditWindow(2048)
	windows := map[string]*struct{}{prefix[:len(prefix)-1]: {}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, seq, ok := engine.SplitMessageID(ids[i%len(ids)])
		if !ok || windows[p] == nil {
			b.Fatal("bad id")
		}
		w.TestSet(seq + int64(i/len(ids))*int64(len(ids)))
	}
}
