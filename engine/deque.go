package engine

// deque is a FIFO of entries that also allows removal from the middle (a
// consumer with a selector takes a message behind others). Removed slots are
// set to nil and skipped. Positions are absolute indexes into buf, stable
// while a dispatch pass iterates and removes: only pushBack and insertSorted
// compact the array. Owned by one shard loop.
type deque struct {
	buf  []*entry
	head int // index of the first slot that may be live
	live int // number of non-nil slots
	// byPriority orders entries by message priority (highest first), then
	// by sequence; otherwise by sequence alone.
	byPriority bool
}

// before reports whether a goes ahead of b.
func (q *deque) before(a, b *entry) bool {
	if q.byPriority && a.prio != b.prio {
		return a.prio > b.prio
	}
	return a.seq < b.seq
}

func (q *deque) len() int { return q.live }

func (q *deque) compact() {
	if q.head == 0 {
		return
	}
	if q.live == 0 {
		clear(q.buf)
		q.buf = q.buf[:0]
		q.head = 0
		return
	}
	if q.head > 64 && q.head >= len(q.buf)/2 {
		n := copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf = q.buf[:n]
		q.head = 0
	}
}

func (q *deque) pushBack(e *entry) {
	q.compact()
	if q.byPriority {
		for i := len(q.buf) - 1; i >= q.head; i-- {
			if last := q.buf[i]; last != nil {
				if q.before(e, last) {
					q.insertSorted(e)
					return
				}
				break
			}
		}
	}
	q.buf = append(q.buf, e)
	q.live++
}

// insertSorted puts e back in sequence order; returned messages go to the
// front of the queue, where they were, so redelivery keeps the sender's order.
func (q *deque) insertSorted(e *entry) {
	q.compact()
	i := len(q.buf)
	for i > q.head && (q.buf[i-1] == nil || q.before(e, q.buf[i-1])) {
		i--
	}
	if i == q.head && q.head > 0 {
		q.head--
		q.buf[q.head] = e
		q.live++
		return
	}
	q.buf = append(q.buf, nil)
	copy(q.buf[i+1:], q.buf[i:])
	q.buf[i] = e
	q.live++
}

// remove clears the slot at absolute position i.
func (q *deque) remove(i int) {
	q.buf[i] = nil
	q.live--
	for q.head < len(q.buf) && q.buf[q.head] == nil {
		q.head++
	}
}

func (q *deque) popFront() *entry {
	for i := q.head; i < len(q.buf); i++ {
		if e := q.buf[i]; e != nil {
			q.remove(i)
			return e
		}
	}
	return nil
}

// each calls fn for every live entry in order, stopping when fn returns false.
func (q *deque) each(fn func(*entry) bool) {
	for i := q.head; i < len(q.buf); i++ {
		if e := q.buf[i]; e != nil && !fn(e) {
			return
		}
	}
}

// filter removes every entry for which drop returns true.
func (q *deque) filter(drop func(*entry) bool) {
	for i := q.head; i < len(q.buf); i++ {
		if e := q.buf[i]; e != nil && drop(e) {
			q.remove(i)
		}
	}
}

// filterUntil is filter that also stops: drop says whether to remove the
// entry and whether to look no further.
func (q *deque) filterUntil(drop func(*entry) (remove, stop bool)) {
	for i := q.head; i < len(q.buf); i++ {
		e := q.buf[i]
		if e == nil {
			continue
		}
		rm, stop := drop(e)
		if rm {
			q.remove(i)
		}
		if stop {
			return
		}
	}
}
