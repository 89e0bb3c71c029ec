package mqtt

// flights are a session's outbound QoS 1 and 2 deliveries in flight, by
// packet id (sessionExt.inflight, guarded by outMu).
//
// Packet ids are handed out in turn (alloc) and clients acknowledge QoS 1
// deliveries in the order they were sent [MQTT-4.6.0-2], so the deliveries
// in flight are a window of consecutive packet ids: a ring, indexed by the
// distance from the oldest id, where taking a delivery out is a slot
// cleared and, at the head, the window moved on. A map (the earlier
// map[uint16]*outFlight) cost an allocation per delivery and, with
// 32,767 deliveries in flight per subscriber (topicPrefetch), a lookup
// that missed the cache at every PUBACK and every new packet id (issue 18:
// a tenth of the broker's CPU in a QoS 1 fan-out).
//
// The deliveries a resumed session re-sends PUBREL for keep the packet ids
// of the earlier connection, wherever they are: they are in extra, and
// alloc skips their ids.
type flights struct {
	ring  []outFlight // len a power of two, or nil
	head  int         // ring index of the window's first slot
	first uint16      // the packet id of that slot
	span  int         // slots in the window, empty ones among them
	n     int         // deliveries, in the ring and in extra
	extra map[uint16]*outFlight
}

// maxSpan is the widest window: every packet id but 0 [MQTT-2.3.1-1].
const maxSpan = 65535

// minRing is the ring's first size; maxKeptRing the largest one kept
// once the window is empty (a burst's ring is given back).
const (
	minRing     = 16
	maxKeptRing = 1024
)

// pidAfter is the packet id k ids after pid, skipping 0.
func pidAfter(pid uint16, k int) uint16 {
	return uint16((int(pid)-1+k)%maxSpan + 1)
}

// len is the number of deliveries in flight.
func (f *flights) len() int { return f.n }

// get returns the delivery on packet id pid, or nil. The pointer is good
// until the next alloc, put or del.
func (f *flights) get(pid uint16) *outFlight {
	if pid == 0 {
		return nil
	}
	if d := (int(pid) - int(f.first) + maxSpan) % maxSpan; d < f.span {
		if o := &f.ring[(f.head+d)&(len(f.ring)-1)]; o.used {
			return o
		}
	}
	return f.extra[pid]
}

// canAlloc reports whether alloc has a packet id to give: false when the
// window spans every id (the oldest delivery is still in flight after
// 65,534 younger ones); the delivery then waits as for the Receive Maximum.
func (f *flights) canAlloc() bool { return f.span < maxSpan-len(f.extra) }

// alloc puts o in flight under the next packet id after the newest, and
// returns that id. Call it only when canAlloc.
func (f *flights) alloc(o outFlight) uint16 {
	o.used = true
	for {
		if f.span == 0 && f.first == 0 {
			f.first = 1
		}
		pid := pidAfter(f.first, f.span)
		f.grow()
		slot := &f.ring[(f.head+f.span)&(len(f.ring)-1)]
		f.span++
		if f.extra[pid] != nil {
			// Taken by a resumed PUBREL: an empty slot.
			*slot = outFlight{}
			continue
		}
		*slot = o
		f.n++
		return pid
	}
}

// grow makes room in the ring for one more slot.
func (f *flights) grow() {
	if f.span < len(f.ring) {
		return
	}
	n := max(2*len(f.ring), minRing)
	r := make([]outFlight, n)
	for i := 0; i < f.span; i++ {
		r[i] = f.ring[(f.head+i)&(len(f.ring)-1)]
	}
	f.ring, f.head = r, 0
}

// put puts o in flight under packet id pid, in place of any delivery on
// it: a PUBREL resumed from an earlier connection.
func (f *flights) put(pid uint16, o outFlight) {
	f.del(pid)
	o.used = true
	if f.extra == nil {
		f.extra = map[uint16]*outFlight{}
	}
	f.extra[pid] = &o
	f.n++
}

// del takes the delivery on packet id pid out of flight, if any.
func (f *flights) del(pid uint16) {
	if pid == 0 {
		return
	}
	if d := (int(pid) - int(f.first) + maxSpan) % maxSpan; d < f.span {
		o := &f.ring[(f.head+d)&(len(f.ring)-1)]
		if !o.used {
			f.delExtra(pid) // an id alloc skipped
			return
		}
		*o = outFlight{}
		f.n--
		// Move the window past the empty slots at its start.
		for f.span > 0 && !f.ring[f.head].used {
			f.head = (f.head + 1) & (len(f.ring) - 1)
			f.first = pidAfter(f.first, 1)
			f.span--
		}
		if f.span == 0 && len(f.ring) > maxKeptRing {
			f.ring, f.head = nil, 0
		}
		return
	}
	f.delExtra(pid)
}

// delExtra takes pid out of extra, if there.
func (f *flights) delExtra(pid uint16) {
	if _, ok := f.extra[pid]; ok {
		delete(f.extra, pid)
		f.n--
		if len(f.extra) == 0 {
			f.extra = nil
		}
	}
}
