package mqtt

import (
	"math/rand/v2"
	"strconv"
	"testing"
)

// flights against a map model: random allocs, acknowledgements in order
// and out of order, resumed ids (put), across the wrap of packet ids past
// 65535. Every step checks that alloc never gives an id in use or 0, that
// get finds what the model has and nothing else, and the count.
func TestFlightsModel(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		r := rand.New(rand.NewPCG(seed, 0))
		var f flights
		model := map[uint16]uint64{}
		var order []uint16 // allocated ids, oldest first, some gone
		// Resumed PUBRELs scattered over the id space, before any alloc.
		for range 20 {
			pid := uint16(r.IntN(maxSpan) + 1)
			f.put(pid, outFlight{id: uint64(pid) << 32, qos: 2})
			model[pid] = uint64(pid) << 32
		}
		next := uint64(1)
		check := func(step int) {
			t.Helper()
			if f.len() != len(model) {
				t.Fatalf("seed %d step %d: len %d, model %d", seed, step, f.len(), len(model))
			}
		}
		for step := range 300000 {
			switch k := r.IntN(100); {
			case k < 50 && f.canAlloc() && f.len() < 5000:
				pid := f.alloc(outFlight{id: next, qos: 1})
				if pid == 0 {
					t.Fatalf("seed %d step %d: packet id 0", seed, step)
				}
				if _, taken := model[pid]; taken {
					t.Fatalf("seed %d step %d: packet id %d given twice", seed, step, pid)
				}
				model[pid] = next
				order = append(order, pid)
				next++
			case k < 85 && len(order) > 0:
				// The oldest: in order, as clients acknowledge.
				pid := order[0]
				order = order[1:]
				f.del(pid)
				delete(model, pid)
			case len(order) > 0:
				i := r.IntN(len(order))
				pid := order[i]
				order = append(order[:i], order[i+1:]...)
				f.del(pid)
				delete(model, pid)
			}
			check(step)
			if step%997 == 0 {
				for pid, id := range model {
					if o := f.get(pid); o == nil || o.id != id {
						t.Fatalf("seed %d step %d: get(%d) = %+v, want id %d", seed, step, pid, o, id)
					}
				}
				for range 50 {
					pid := uint16(r.IntN(65536))
					if _, in := model[pid]; !in && f.get(pid) != nil {
						t.Fatalf("seed %d step %d: get(%d) found a delivery not in flight", seed, step, pid)
					}
				}
			}
		}
		if next < 2*maxSpan {
			t.Fatalf("seed %d: %d allocations did not wrap the packet ids", seed, next)
		}
	}
}

// With the oldest delivery never acknowledged, the window fills every
// packet id and canAlloc turns false: alloc is never asked to give an id
// in use. Acknowledging the oldest frees the ids again.
func TestFlightsFullWindow(t *testing.T) {
	var f flights
	oldest := f.alloc(outFlight{qos: 1})
	for i := 1; i < maxSpan; i++ {
		if !f.canAlloc() {
			t.Fatalf("canAlloc false with %d in flight", f.len())
		}
		pid := f.alloc(outFlight{qos: 1})
		f.del(pid)
	}
	if f.canAlloc() {
		t.Fatalf("canAlloc true with the window over all %d ids (len %d)", maxSpan, f.len())
	}
	f.del(oldest)
	if !f.canAlloc() || f.len() != 0 {
		t.Fatalf("after the oldest: canAlloc %v, len %d", f.canAlloc(), f.len())
	}
	if pid := f.alloc(outFlight{qos: 1}); pid != oldest {
		t.Fatalf("next id %d, want %d (ids go round)", pid, oldest)
	}
}

// The ring a burst grew is given back once the window is empty.
func TestFlightsRingShrinks(t *testing.T) {
	var f flights
	var pids []uint16
	for range 5000 {
		pids = append(pids, f.alloc(outFlight{qos: 1}))
	}
	if len(f.ring) < 5000 {
		t.Fatalf("ring of %d slots for 5000 deliveries", len(f.ring))
	}
	for _, pid := range pids {
		f.del(pid)
	}
	if f.ring != nil || f.len() != 0 {
		t.Fatalf("after the burst: ring of %d slots, len %d", len(f.ring), f.len())
	}
}

// BenchmarkFlights is a QoS 1 subscriber's in-flight bookkeeping: a
// delivery put in flight and the PUBACK of the one sent window deliveries
// earlier taken out, per op.
func BenchmarkFlights(b *testing.B) {
	for _, window := range []int{10, 1000, 32767} {
		b.Run("window="+strconv.Itoa(window), func(b *testing.B) {
			var f flights
			q := make([]uint16, 0, window)
			for range window {
				q = append(q, f.alloc(outFlight{qos: 1}))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				pid := q[i%window]
				if f.get(pid) == nil {
					b.Fatal("lost a delivery")
				}
				f.del(pid)
				q[i%window] = f.alloc(outFlight{id: uint64(i), qos: 1})
			}
		})
	}
}

// BenchmarkFlightsMap is BenchmarkFlights on the map the session used
// before flights (map[uint16]*outFlight, the next free id searched by
// lookups): the reference for its ratio in the same run.
func BenchmarkFlightsMap(b *testing.B) {
	for _, window := range []int{10, 1000, 32767} {
		b.Run("window="+strconv.Itoa(window), func(b *testing.B) {
			m := map[uint16]*outFlight{}
			var next uint16
			alloc := func(o *outFlight) uint16 {
				for {
					next++
					if next == 0 {
						next = 1
					}
					if m[next] == nil {
						m[next] = o
						return next
					}
				}
			}
			q := make([]uint16, 0, window)
			for range window {
				q = append(q, alloc(&outFlight{qos: 1}))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				pid := q[i%window]
				if m[pid] == nil {
					b.Fatal("lost a delivery")
				}
				delete(m, pid)
				q[i%window] = alloc(&outFlight{id: uint64(i), qos: 1})
			}
		})
	}
}
