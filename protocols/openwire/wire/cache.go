package wire

import (
	"encoding/binary"
	"fmt"
)

// The marshal cache (CacheEnabled): each direction of a connection keeps
// CacheSize slots. The writer (marshalCache, owned by an Encoder) maps values
// to slots and assigns slots round-robin, evicting the oldest so that at
// least marshalCacheFreeSpace stay free (OpenWireFormat
// runMarshallCacheEvictionSweep / addToMarshallCache); the reader
// (unmarshalCache, owned by a Decoder) just stores what it is told.

const (
	// defaultCacheSize is OpenWireFormat.MARSHAL_CACHE_SIZE, used when
	// the negotiated CacheSize is 0 or the cache was enabled without one.
	defaultCacheSize = 1<<15/2 - 1
	// maxCacheSize: indices are Java shorts.
	maxCacheSize          = 1<<15 - 1
	marshalCacheFreeSpace = 100
)

func cacheSlots(size int) int {
	switch {
	case size <= 0:
		return defaultCacheSize
	case size > maxCacheSize:
		return maxCacheSize
	}
	return size
}

// cacheKey is a value-equality key matching the Java equals() of the
// cacheable types. The zero key is null (Java caches null too).
type cacheKey struct {
	t    byte
	s    string
	a, b int64
}

type cacheAdd struct {
	slot int
	prev cacheKey
	key  cacheKey
}

// Both caches grow their slots as they are used, up to the negotiated
// size: a connection that sends a handful of ids (most do: one connection,
// session, producer and destination) holds a handful of slots, not the
// 1024 a Java client asks for (40 KiB on the writer's side, 16 KiB on the
// reader's, per connection and direction; issue 18's budget for an idle
// OpenWire connection is 8 KiB).

type marshalCache struct {
	size    int        // the negotiated number of slots
	slots   []cacheKey // the slots used so far (grown up to size)
	index   map[cacheKey]int16
	next    int
	evict   int
	uniq    int64
	journal []cacheAdd // additions during the current frame, for rollback
	nextAt  int        // next at the start of the current frame
	// memo remembers the slots of keys recently found, so that the ids
	// and destinations every frame repeats (the consumer's id, the
	// message's producer and destination) are found without hashing
	// their strings (issue 18: the map's hashing was half of encoding a
	// MessageDispatch). Made at the first index hit: an idle connection,
	// which only ever adds, holds none.
	memo *[memoSize]memoEntry
	// nullSlot is 1 + the slot of the null key, 0 when not known.
	nullSlot int16
}

// memoSize is the number of memo entries (a power of two).
const memoSize = 16

// memoEntry says that key was in slot. It is a hint, checked against
// slots before use: an entry whose slot was evicted, overwritten or
// rolled back since is a miss.
type memoEntry struct {
	key  cacheKey
	slot int16
}

// memoOf is key's memo entry: a mix of its fields that leaves the
// string's bytes alone (its length stands for it), so that finding the
// entry costs no hashing.
func memoOf(key cacheKey) int {
	x := uint64(key.t) ^ uint64(len(key.s))<<8 ^ uint64(key.a)<<24 ^ uint64(key.b)<<44
	return int(x * 0x9E3779B97F4A7C15 >> 60) // the top 4 bits: memoSize entries
}

// lookup returns key's slot, if the cache holds it: from the memo when it
// is there and still true, else from the index (and then remembered).
//
// slots[i] == key holds exactly when index[key] == i: add, begin and
// rollback change the two together. The null key (slots not yet used
// hold it too, so they cannot vouch for it) is remembered in nullSlot,
// which every change to the index that may touch it forgets.
func (m *marshalCache) lookup(key cacheKey) (int16, bool) {
	if key == (cacheKey{}) {
		if m.nullSlot > 0 {
			return m.nullSlot - 1, true
		}
		i, ok := m.index[key]
		if ok {
			m.nullSlot = i + 1
		}
		return i, ok
	}
	h := memoOf(key)
	if m.memo != nil {
		if e := &m.memo[h]; e.key == key && int(e.slot) < len(m.slots) && m.slots[e.slot] == key {
			return e.slot, true
		}
	}
	i, ok := m.index[key]
	if ok {
		if m.memo == nil {
			m.memo = new([memoSize]memoEntry)
		}
		m.memo[h] = memoEntry{key: key, slot: i}
	}
	return i, ok
}

func newMarshalCache(size int) *marshalCache {
	return &marshalCache{size: cacheSlots(size), index: make(map[cacheKey]int16)}
}

// grow makes slot i exist, growing the slots geometrically up to size.
func grow[T any](slots []T, i, size int) []T {
	if i < len(slots) {
		return slots
	}
	if i < cap(slots) {
		return slots[:i+1]
	}
	n := min(max(2*cap(slots), i+1, 8), size)
	grown := make([]T, i+1, n)
	copy(grown, slots)
	return grown
}

// keyOf returns the equality key of v. Only cacheable types reach it; any
// other type would compare by identity in Java, so it gets a unique key.
func (m *marshalCache) keyOf(v DataStructure) cacheKey {
	switch x := v.(type) {
	case nil:
		return cacheKey{}
	case *ConnectionId:
		return cacheKey{t: TypeConnectionId, s: x.Value}
	case *SessionId:
		return cacheKey{t: TypeSessionId, s: x.ConnectionId, a: x.Value}
	case *ConsumerId:
		return cacheKey{t: TypeConsumerId, s: x.ConnectionId, a: x.SessionId, b: x.Value}
	case *ProducerId:
		return cacheKey{t: TypeProducerId, s: x.ConnectionId, a: x.SessionId, b: x.Value}
	case *BrokerId:
		return cacheKey{t: TypeBrokerId, s: x.Value}
	case *Destination:
		return cacheKey{t: x.Kind, s: x.PhysicalName}
	case *LocalTransactionId:
		k := cacheKey{t: TypeLocalTransactionId, a: x.Value, b: -1}
		if x.ConnectionId != nil {
			k.s, k.b = x.ConnectionId.Value, 0
		}
		return k
	case *XATransactionId:
		var s []byte
		for _, b := range [][]byte{x.GlobalTransactionId, x.BranchQualifier} {
			if b == nil {
				s = binary.BigEndian.AppendUint32(s, 0xFFFFFFFF)
			} else {
				s = binary.BigEndian.AppendUint32(s, uint32(len(b)))
				s = append(s, b...)
			}
		}
		return cacheKey{t: TypeXATransactionId, s: string(s), a: int64(x.FormatId)}
	}
	m.uniq++
	return cacheKey{t: 0xFF, a: m.uniq}
}

// begin starts a frame: run the eviction sweep and open the rollback journal.
//
// DEVIATION: Java's sweep never ends when the cache has fewer than 100
// slots, or when a frame added more objects than there are slots (the map
// keeps entries whose slot was overwritten); this one stops after one full
// pass and then forgets everything, which only costs cache hits.
func (m *marshalCache) begin() {
	for n := 0; len(m.index) > 0 && len(m.index) > m.size-marshalCacheFreeSpace; n++ {
		m.nullSlot = 0 // an eviction may delete the null key's entry
		if n == m.size {
			clear(m.index)
			clear(m.slots)
			break
		}
		if m.evict < len(m.slots) { // a slot never used holds nothing
			delete(m.index, m.slots[m.evict])
			m.slots[m.evict] = cacheKey{}
		}
		m.evict++
		if m.evict >= m.size {
			m.evict = 0
		}
	}
	m.journal = m.journal[:0]
	m.nextAt = m.next
}

// add assigns the next slot to key, or returns -1 ("not cached") when full.
func (m *marshalCache) add(key cacheKey) int16 {
	i := m.next
	m.next++
	if m.next >= m.size {
		m.next = 0
	}
	if len(m.index) >= m.size {
		return -1
	}
	m.slots = grow(m.slots, i, m.size)
	prev := m.slots[i]
	m.nullSlot = 0 // key or prev may be the null key
	m.journal = append(m.journal, cacheAdd{slot: i, prev: prev, key: key})
	// DEVIATION: Java keeps the overwritten value's map entry, so a later
	// frame could reference slot i for it and the peer would read the new
	// value. Only reachable when one frame adds more objects than the
	// sweep keeps free.
	if j, ok := m.index[prev]; ok && int(j) == i {
		delete(m.index, prev)
	}
	m.slots[i] = key
	m.index[key] = int16(i)
	return int16(i)
}

// rollback undoes the current frame's additions after an encode error, so
// the cache never references a frame the peer did not receive.
func (m *marshalCache) rollback() {
	m.nullSlot = 0
	for i := len(m.journal) - 1; i >= 0; i-- {
		a := m.journal[i]
		delete(m.index, a.key)
		m.slots[a.slot] = a.prev
		if a.prev != (cacheKey{}) {
			m.index[a.prev] = int16(a.slot)
		}
	}
	m.journal = m.journal[:0]
	m.next = m.nextAt
}

type unmarshalCache struct {
	size  int             // the negotiated number of slots
	slots []DataStructure // grown up to size as the writer uses them
}

func newUnmarshalCache(size int) *unmarshalCache {
	return &unmarshalCache{size: cacheSlots(size)}
}

func (u *unmarshalCache) set(idx int16, v DataStructure) error {
	if idx == -1 {
		return nil // the writer's cache was full
	}
	if idx < 0 || int(idx) >= u.size {
		return fmt.Errorf("%w: %d", ErrCacheIndex, idx)
	}
	u.slots = grow(u.slots, int(idx), u.size)
	u.slots[idx] = v
	return nil
}

func (u *unmarshalCache) get(idx int16) (DataStructure, error) {
	if idx < 0 || int(idx) >= u.size {
		return nil, fmt.Errorf("%w: %d", ErrCacheIndex, idx)
	}
	if int(idx) >= len(u.slots) {
		return nil, nil // never set: null, as a fresh slot is in Java
	}
	return u.slots[idx], nil
}

// cacheable reports whether v may travel in a cached (cobj) field: every
// cobj field of every OpenWire version holds nil, an id, a destination or a
// transaction id.
func cacheable(v DataStructure) bool {
	switch v.(type) {
	case nil, *ConnectionId, *SessionId, *ConsumerId, *ProducerId, *BrokerId, *Destination,
		*LocalTransactionId, *XATransactionId:
		return true
	}
	return false
}

// cloneCached copies a cached value so that a caller mutating one decoded
// command cannot change what later frames resolve to.
func cloneCached(v DataStructure) DataStructure {
	switch x := v.(type) {
	case *ConnectionId:
		y := *x
		return &y
	case *SessionId:
		y := *x
		return &y
	case *ConsumerId:
		y := *x
		return &y
	case *ProducerId:
		y := *x
		return &y
	case *BrokerId:
		y := *x
		return &y
	case *Destination:
		y := *x
		return &y
	case *LocalTransactionId:
		y := *x
		if x.ConnectionId != nil {
			cid := *x.ConnectionId
			y.ConnectionId = &cid
		}
		return &y
	case *XATransactionId:
		y := *x
		y.GlobalTransactionId = cloneBytes(x.GlobalTransactionId)
		y.BranchQualifier = cloneBytes(x.BranchQualifier)
		return &y
	}
	return v
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}
