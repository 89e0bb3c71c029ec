package storetest

import (
	"fmt"
	"slices"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// RunDuplicateAdds is the suite for a store that does what ActiveMQ's
// KahaDB does with a message id it already holds (MessageDatabase.
// updateIndex): an add of a message id its destination still holds is
// rejected, in a later batch or in the same one, and the first copy is
// kept; the same id on another destination, or again once the first copy
// is removed, is stored. It holds across a restart.
func RunDuplicateAdds(t *testing.T, newStore func(t *testing.T) (reopen func() engine.Store)) {
	testDuplicateAddRejected(t, newStore)
}

// RunProducerAudit is the suite for a store that implements
// engine.ProducerAuditor: after a restart it gives back the highest
// producer sequence id each producer added per destination, and forgets a
// removed destination's. With keepsConsumed (ActiveMQ's KahaDB, whose
// tracker acks do not clear) that counts the messages since consumed;
// without it (ActiveMQ's JDBC store, which answers from MAX(MSGID_SEQ) of
// the stored rows) only the messages still stored.
func RunProducerAudit(t *testing.T, newStore func(t *testing.T) (reopen func() engine.Store), keepsConsumed bool) {
	testProducerAudit(t, newStore, keepsConsumed)
}

func testDuplicateAddRejected(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	m1, m2, m3 := textMessage(queueA, 1), textMessage(queueA, 2), textMessage(queueA, 3)
	again := func(m *message.Message) *message.Message {
		c := m.Clone()
		c.Body = []byte("a different body under the same id")
		return c
	}
	h.apply(0, add(queueA, 1, m1))
	h.apply(0, add(queueA, 2, again(m1)))              // a later batch
	h.apply(0, add(queueA, 3, m2), add(queueA, 4, m2)) // the same batch
	m1b := m1.Clone()
	m1b.Destination = queueB
	h.apply(0, add(queueB, 1, m1b)) // another destination: stored
	want := state{msgs: []stored{{dest: queueA, seq: 1, msg: m1}, {dest: queueA, seq: 3, msg: m2}, {dest: queueB, seq: 1, msg: m1b}}}
	h.check(0, want)
	// The engine's remove of a rejected copy finds nothing.
	h.apply(0, remove(queueA, 2), remove(queueA, 4))
	h.check(0, want)
	h.restart()
	h.check(0, want)
	// Rejected after a restart too: the store knows its ids again.
	h.apply(0, add(queueA, 5, again(m2)))
	h.check(0, want)
	// Once the first copy is removed the id may be stored again.
	h.apply(0, remove(queueA, 1), add(queueA, 6, m1))
	h.apply(0, add(queueA, 7, m3), remove(queueA, 7), add(queueA, 8, m3))
	want = state{msgs: []stored{{dest: queueA, seq: 3, msg: m2}, {dest: queueA, seq: 6, msg: m1}, {dest: queueA, seq: 8, msg: m3}, {dest: queueB, seq: 1, msg: m1b}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

func testProducerAudit(t *testing.T, newStore func(*testing.T) func() engine.Store, keepsConsumed bool) {
	h := start(t, newStore, 1)
	if _, ok := h.shards[0].(engine.ProducerAuditor); !ok {
		t.Fatalf("the shard store (%T) does not implement engine.ProducerAuditor", h.shards[0])
	}
	mk := func(d message.Destination, producer string, seq int) *message.Message {
		m := textMessage(d, seq)
		m.ID = fmt.Sprintf("%s:%d", producer, seq)
		return m
	}
	const p, q = "ID:audit-host-1-1:1:1:1", "ID:audit-host-1-1:2:1:1"
	for i := 1; i <= 3; i++ {
		h.apply(0, add(queueA, uint64(i), mk(queueA, p, i)))
	}
	h.apply(0, add(queueA, 4, mk(queueA, q, 7)), add(queueB, 1, mk(queueB, p, 9)))
	// Consumed: 2 of p's and q's only message.
	h.apply(0, remove(queueA, 2), remove(queueA, 3), remove(queueA, 4))
	h.restart()
	want := []string{"queue://storetest.a " + p + " 3", "queue://storetest.a " + q + " 7", "queue://storetest.b " + p + " 9"}
	if !keepsConsumed {
		want = []string{"queue://storetest.a " + p + " 1", "queue://storetest.b " + p + " 9"}
	}
	if got := audit(t, h.shards[0]); !slices.Equal(got, want) {
		t.Fatalf("producer audit after a restart: got %q, want %q", got, want)
	}
	h.apply(0, removeDest(queueB))
	h.restart()
	want = want[:len(want)-1]
	if got := audit(t, h.shards[0]); !slices.Equal(got, want) {
		t.Fatalf("producer audit after removing %s and a restart: got %q, want %q", queueB, got, want)
	}
}

func audit(t *testing.T, ss engine.ShardStore) []string {
	t.Helper()
	var got []string
	err := ss.(engine.ProducerAuditor).ProducerAudit(func(d message.Destination, producer string, seq int64) {
		got = append(got, fmt.Sprintf("%s %s %d", d, producer, seq))
	})
	if err != nil {
		t.Fatalf("ProducerAudit: got error %v, want nil", err)
	}
	slices.Sort(got)
	return got
}
