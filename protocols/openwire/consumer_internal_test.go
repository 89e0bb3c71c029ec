package openwire

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// TestOpenWireRemoveDispatched: removing a run from a consumer's
// dispatched list keeps the others in order, whether the run is at the
// front (resliced), in the middle or at the end (copied down), and clears
// the slots it leaves so that they hold no message id.
func TestOpenWireRemoveDispatched(t *testing.T) {
	mk := func(n int) []dispatched {
		l := make([]dispatched, n, n+4)
		for i := range l {
			l[i] = dispatched{msgID: "m" + strconv.Itoa(i), id: uint64(i)}
		}
		return l
	}
	ids := func(l []dispatched) []uint64 {
		var out []uint64
		for _, d := range l {
			out = append(out, d.id)
		}
		return out
	}
	for _, c := range []struct {
		lo, hi int
		want   []uint64
	}{
		{0, 0, []uint64{1, 2, 3, 4}},
		{0, 2, []uint64{3, 4}},
		{0, 4, nil},
		{2, 2, []uint64{0, 1, 3, 4}},
		{1, 3, []uint64{0, 4}},
		{3, 4, []uint64{0, 1, 2}},
	} {
		l := mk(5)
		full := l[:cap(l)]
		got := removeDispatched(l, c.lo, c.hi)
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("remove [%d,%d]: left %v, want %v", c.lo, c.hi, ids(got), c.want)
		}
		// Every slot of the backing array not in the result is cleared.
		live := map[string]bool{}
		for _, d := range got {
			live[d.msgID] = true
		}
		for i, d := range full {
			if d.msgID != "" && !live[d.msgID] {
				t.Errorf("remove [%d,%d]: slot %d still holds %q", c.lo, c.hi, i, d.msgID)
			}
		}
		// The list still grows in order after a removal.
		got = append(got, dispatched{msgID: "new", id: 99})
		if got[len(got)-1].id != 99 || (len(c.want) > 0 && got[0].id != c.want[0]) {
			t.Errorf("remove [%d,%d] then append: %v", c.lo, c.hi, ids(got))
		}
	}
}

// BenchmarkOpenWireAckInOrder is a consumer's dispatched list in a steady
// state: one dispatch appended and the oldest acknowledged per operation,
// with window messages in flight (a queue's default prefetch, 1000, and a
// topic's, 32767). Before the reslice an in-order ack copied the whole
// window down.
func BenchmarkOpenWireAckInOrder(b *testing.B) {
	for _, window := range []int{1000, 32767} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			var l []dispatched
			for i := 0; i < window; i++ {
				l = append(l, dispatched{msgID: "m", id: uint64(i)})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				l = append(l, dispatched{msgID: "m", id: uint64(window + i)})
				l = removeDispatched(l, 0, 0)
			}
			if len(l) != window {
				b.Fatalf("window %d after the run, want %d", len(l), window)
			}
		})
	}
}
