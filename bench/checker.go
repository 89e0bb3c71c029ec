package bench

import "math/bits"

// checker verifies that one copy of the message stream arrived exactly
// once: a queue's consumers share one checker, each topic subscriber has
// its own. It keeps a bitset of the sequence numbers seen per producer
// (one bit per message) and the last sequence number each consumer saw
// from each producer. Not safe for concurrent use: the recorder's mutex
// guards it.
type checker struct {
	producers int
	// ordered: check the order per consumer and producer. Replies that
	// several responders send are in no defined order.
	ordered bool
	seen    [][]uint64 // [producer] bitset of seq
	last    [][]uint64 // [consumer][producer] highest seq seen, 0 none
	unique  int64
	// duplicates counts deliveries of a (producer, seq) already seen,
	// by any consumer of this copy.
	duplicates int64
	// outOfOrder counts deliveries whose seq is below one this consumer
	// already had from the same producer. JMS orders the messages of one
	// producer as seen by one consumer; redeliveries may break that.
	outOfOrder int64
	// foreign counts deliveries that are not ours: no stamp, or a
	// producer index out of range.
	foreign int64
}

func newChecker(producers int, ordered bool) *checker {
	return &checker{producers: producers, ordered: ordered, seen: make([][]uint64, producers)}
}

// record notes that consumer got message seq (from 1) of producer. It
// reports whether the message was new to this copy of the stream.
func (c *checker) record(consumer, producer int, seq uint64) bool {
	if producer < 0 || producer >= c.producers || seq == 0 {
		c.foreign++
		return false
	}
	if c.ordered {
		for consumer >= len(c.last) {
			c.last = append(c.last, make([]uint64, c.producers))
		}
		if l := &c.last[consumer][producer]; seq < *l {
			c.outOfOrder++
		} else {
			*l = seq
		}
	}
	set := c.seen[producer]
	w, b := int((seq-1)/64), (seq-1)%64
	if w >= len(set) {
		set = append(set, make([]uint64, w+1-len(set)+len(set)/2)...)
		c.seen[producer] = set
	}
	if set[w]&(1<<b) != 0 {
		c.duplicates++
		return false
	}
	set[w] |= 1 << b
	c.unique++
	return true
}

// lost counts the messages producer p sent (sequence numbers 1..sent[p])
// that never arrived. Sequence numbers above sent[p] (a send that failed
// but arrived anyway) are not held against the count.
func (c *checker) lost(sent []int64) int64 {
	var n int64
	for p, s := range sent {
		got := int64(0)
		set := c.seen[p]
		full := int(s / 64)
		for w := 0; w < full && w < len(set); w++ {
			got += int64(bits.OnesCount64(set[w]))
		}
		if rest := s % 64; rest > 0 && full < len(set) {
			got += int64(bits.OnesCount64(set[full] & (1<<rest - 1)))
		}
		n += s - got
	}
	return n
}
