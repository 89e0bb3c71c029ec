package engine

import (
	"strconv"
	"testing"
)

// BenchmarkFindInflight is the lookup of an individual ack in a
// subscription's in-flight list of window deliveries, acks coming in
// delivery order (the oldest each time, as MQTT PUBACKs do) and out of
// order (a middle one): the oldest is found without a binary search.
func BenchmarkFindInflight(b *testing.B) {
	for _, window := range []int{10, 1000, 32767} {
		p := &part{}
		for i := range window {
			// Entries spread over the heap, as a shard's are.
			for range 3 {
				_ = new(entry)
			}
			p.inflight = append(p.inflight, &entry{id: uint64(i+1)<<8 | 1})
		}
		b.Run("in-order,window="+strconv.Itoa(window), func(b *testing.B) {
			for range b.N {
				if p.findInflight(p.inflight[0].id) != 0 {
					b.Fatal("oldest not found")
				}
			}
		})
		b.Run("middle,window="+strconv.Itoa(window), func(b *testing.B) {
			mid := len(p.inflight) / 2
			for range b.N {
				if p.findInflight(p.inflight[mid].id) != mid {
					b.Fatal("middle not found")
				}
			}
		})
	}
}
