package wire

import (
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestOpenWireWireCacheMemo: the writer's memo of recent slots answers as
// its index does, through evictions (a cache barely above Java's 100 free
// slots), full clears, rollbacks of failed frames and null fields; and
// the peer decodes every frame as sent.
func TestOpenWireWireCacheMemo(t *testing.T) {
	for _, size := range []int{101, 120, 1024} {
		for _, tight := range []bool{false, true} {
			f := Format{Version: 12, TightEncodingEnabled: tight, CacheEnabled: true, CacheSize: size}
			e := NewEncoder(f)
			d := NewDecoder(f, Limits{})
			rnd := rand.New(rand.NewSource(int64(size)))
			var keys []cacheKey
			for i := 0; i < 3000; i++ {
				// A pool of 150 consumers, ten of them hot, and a
				// destination that is sometimes absent (null).
				n := rnd.Intn(10)
				if rnd.Intn(4) == 0 {
					n = rnd.Intn(150)
				}
				cid := &ConsumerId{ConnectionId: "ID:c" + strconv.Itoa(n%7), SessionId: 1, Value: int64(n)}
				var dest *Destination
				if rnd.Intn(3) > 0 {
					dest = NewQueue("q" + strconv.Itoa(rnd.Intn(20)))
				}
				sent := &ConsumerInfo{ConsumerId: cid, Destination: dest}
				if rnd.Intn(50) == 0 {
					// Fails after its ids were added: they are rolled back.
					bad := *sent
					bad.Selector = strings.Repeat("a", 40000)
					bad.ConsumerId = &ConsumerId{ConnectionId: "ID:bad", Value: int64(i)}
					keys = append(keys, e.wc.keyOf(bad.ConsumerId))
					if bb, err := e.Append(nil, &bad); err == nil {
						if tight {
							t.Fatal("a 40000-byte tight string encoded")
						}
						// Loose strings are longer: it went out, and the
						// peer reads it.
						d.Feed(bb)
						if _, err := d.Next(); err != nil {
							t.Fatal(err)
						}
					}
				}
				b, err := e.Append(nil, sent)
				if err != nil {
					t.Fatal(err)
				}
				d.Feed(b)
				ds, err := d.Next()
				if err != nil {
					t.Fatalf("size %d tight=%v frame %d: %v", size, tight, i, err)
				}
				got := ds.(*ConsumerInfo)
				if !reflect.DeepEqual(got.ConsumerId, sent.ConsumerId) || !reflect.DeepEqual(got.Destination, sent.Destination) {
					t.Fatalf("size %d tight=%v frame %d: decoded %+v %+v, sent %+v %+v", size, tight, i, got.ConsumerId, got.Destination, sent.ConsumerId, sent.Destination)
				}
				keys = append(keys, e.wc.keyOf(cid), cacheKey{})
				if dest != nil {
					keys = append(keys, e.wc.keyOf(dest))
				}
				if len(keys) > 64 {
					keys = keys[len(keys)-64:]
				}
				for _, k := range keys {
					wantSlot, wantOK := e.wc.index[k]
					gotSlot, gotOK := e.wc.lookup(k)
					if gotOK != wantOK || (wantOK && gotSlot != wantSlot) {
						t.Fatalf("size %d tight=%v frame %d: lookup %+v = %d %v, index has %d %v", size, tight, i, k, gotSlot, gotOK, wantSlot, wantOK)
					}
				}
			}
		}
	}
}

// BenchmarkOpenWireWireEncodeDispatch is the broker's hot encode: a
// MessageDispatch of a 1 KiB message whose ids and destination are
// cached references after the first frame (tight, cache on).
func BenchmarkOpenWireWireEncodeDispatch(b *testing.B) {
	f := Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, CacheSize: 1024}
	e := NewEncoder(f)
	m := benchMessage()
	cons := &ConsumerId{ConnectionId: "ID:consumer-host-1234-5678-1:1", SessionId: 1, Value: 1}
	d := &MessageDispatch{ConsumerId: cons, Destination: m.Destination, Message: m}
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var err error
		if buf, err = e.Append(buf[:0], d); err != nil {
			b.Fatal(err)
		}
	}
}
