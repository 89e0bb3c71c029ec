package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// Run runs the suite against the store that newStore makes. newStore is
// called once per subtest: it makes a fresh, empty backing location (a
// t.TempDir(), a new database schema...) and returns reopen, which opens a
// Store over that location. The suite calls reopen again only after closing
// every ShardStore it opened and the previous Store (a broker restart).
func Run(t *testing.T, newStore func(t *testing.T) (reopen func() engine.Store), opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tests := []struct {
		name string
		fn   func(*testing.T, func(*testing.T) func() engine.Store)
	}{
		{"EmptyStore", testEmptyStore},
		{"QueueAddRecover", testQueueAddRecover},
		{"QueueRemove", testQueueRemove},
		{"RetainedKeepTheirTopic", testRetainedKeepTheirTopic},
		{"UnknownSeqIgnored", testUnknownSeqIgnored},
		{"TopicAckBySubs", testTopicAckBySubs},
		{"DurableSubAddRemove", testDurableSubAddRemove},
		{"RemoveSubDropsOnlyItsMessages", testRemoveSubDropsOnlyItsMessages},
		{"UpdateRedeliveryCounter", testUpdateRedeliveryCounter},
		{"RemoveDestination", testRemoveDestination},
		{"EmptyDestinations", func(t *testing.T, ns func(*testing.T) func() engine.Store) { testEmptyDestinations(t, ns, o) }},
		{"AtomicBatch", testAtomicBatch},
		{"ShardsIndependent", testShardsIndependent},
		{"ManyMessages", testManyMessages},
		{"ConcurrentShards", testConcurrentShards},
		{"RecoverStopsOnError", testRecoverStopsOnError},
		{"ScheduledJobs", testScheduledJobs},
		{"ScheduledJobsAtomicBatch", testScheduledJobsAtomicBatch},
		{"XAPrepareRestart", testXAPrepareRestart},
		{"XAPrepareCommit", testXAPrepareCommit},
		{"XAPrepareRollback", testXAPrepareRollback},
		{"XACommitPartly", testXACommitPartly},
		{"XATwoTransactions", testXATwoTransactions},
		{"StubsLoadWhileWriting", testStubsLoadWhileWriting},
		{"DeliveredMarks", testDeliveredMarks},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore) })
	}
}

// Option adapts the suite to a store's documented limits.
type Option func(*options)

type options struct {
	onlyNamed bool
}

// OnlyNamedDestinations tells the suite that the store, as configured,
// keeps across a restart only the destinations its stored records name
// (KahaDB with its checkpoint index turned off, as ActiveMQ rebuilding
// its index from the journal without db.data): a destination created by
// OpAddDest alone is then not required to come back.
func OnlyNamedDestinations() Option { return func(o *options) { o.onlyNamed = true } }

var (
	queueA = message.QueueDest("storetest.a")
	queueB = message.QueueDest("storetest.b")
	topicA = message.TopicDest("storetest.news")
	topicB = message.TopicDest("storetest.sport")
)

func testEmptyStore(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	h.check(0, state{})
	h.restart()
	h.check(0, state{})
}

func testQueueAddRecover(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	ms := bodyMessages(queueA)
	var want state
	var ops []engine.StoreOp
	for i, m := range ms {
		seq := uint64(i + 1)
		ops = append(ops, add(queueA, seq, m))
		want.msgs = append(want.msgs, stored{dest: queueA, seq: seq, msg: m})
	}
	// Two batches: the first message alone, the rest together.
	h.apply(0, ops[0])
	h.apply(0, ops[1:]...)
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

func testQueueRemove(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	m := make([]*message.Message, 8)
	for i := 1; i <= 5; i++ {
		m[i] = textMessage(queueA, i)
		h.apply(0, add(queueA, uint64(i), m[i]))
	}
	h.apply(0, remove(queueA, 2), remove(queueA, 4))
	want := state{msgs: []stored{{dest: queueA, seq: 1, msg: m[1]}, {dest: queueA, seq: 3, msg: m[3]}, {dest: queueA, seq: 5, msg: m[5]}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	// The store keeps working after recovery: remove the head, add a tail.
	m[6] = textMessage(queueA, 6)
	h.apply(0, remove(queueA, 1), add(queueA, 6, m[6]))
	want = state{msgs: []stored{{dest: queueA, seq: 3, msg: m[3]}, {dest: queueA, seq: 5, msg: m[5]}, {dest: queueA, seq: 6, msg: m[6]}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	// Drain it completely, then use it again.
	h.apply(0, remove(queueA, 3), remove(queueA, 5), remove(queueA, 6))
	h.restart()
	h.check(0, state{})
	m[7] = textMessage(queueA, 7)
	h.apply(0, add(queueA, 7, m[7]))
	h.restart()
	h.check(0, state{msgs: []stored{{dest: queueA, seq: 7, msg: m[7]}}})
}

// testRetainedKeepTheirTopic: the engine keeps every topic's retained
// message under the one queue engine.RetainStore, each message naming its
// topic in its own Destination; the store must give that back (after a
// restart it is all the engine has to find the topic by).
func testRetainedKeepTheirTopic(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	m1 := textMessage(topicA, 1)
	m2 := textMessage(topicB, 2)
	m2.Props = message.Properties{{Name: engine.RetainedProperty, Value: message.BoolValue(true)}}
	h.apply(0, add(engine.RetainStore, 1, m1), add(engine.RetainStore, 2, m2))
	want := state{msgs: []stored{{dest: engine.RetainStore, seq: 1, msg: m1}, {dest: engine.RetainStore, seq: 2, msg: m2}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

func testUnknownSeqIgnored(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a := durable("c1", "s1", topicA)
	mq, mt := textMessage(queueA, 1), textMessage(topicA, 1)
	h.apply(0, addSub(a), add(queueA, 1, mq), add(topicA, 1, mt, a.Key))
	want := state{
		subs: []engine.DurableSub{a},
		msgs: []stored{{dest: queueA, seq: 1, msg: mq}, {dest: topicA, seq: 1, msg: mt, subs: []engine.SubKey{a.Key}}},
	}
	// KahaDB ignores removes of messages it does not hold; so must every store.
	h.apply(0,
		remove(queueA, 99), remove(queueB, 1),
		ack(topicA, 99, a.Key), ack(topicB, 1, a.Key),
		update(queueA, 99, 5), update(queueB, 1, 5),
	)
	h.check(0, want)
	// Removing twice in one batch, or in two, is not an error either.
	h.apply(0, remove(queueA, 1), remove(queueA, 1))
	h.apply(0, remove(queueA, 1))
	want.msgs = want.msgs[1:]
	h.restart()
	h.check(0, want)
}

func testTopicAckBySubs(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a, b := durable("c1", "s1", topicA), durable("c2", "s2", topicA)
	m1, m2 := fullMessage(topicA, 1), fullMessage(topicA, 2)
	m1.BodyType, m1.Body = message.TextBody, []byte("one")
	h.apply(0, addSub(a), addSub(b))
	h.apply(0, add(topicA, 1, m1, a.Key, b.Key), add(topicA, 2, m2, a.Key, b.Key))
	subs := []engine.DurableSub{a, b}
	both := []engine.SubKey{a.Key, b.Key}
	h.check(0, state{subs: subs, msgs: []stored{{topicA, 1, m1, both}, {topicA, 2, m2, both}}})

	h.apply(0, ack(topicA, 1, a.Key))
	want := state{subs: subs, msgs: []stored{{topicA, 1, m1, []engine.SubKey{b.Key}}, {topicA, 2, m2, both}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	// An ack by a subscription that already acknowledged changes nothing.
	h.apply(0, ack(topicA, 1, a.Key))
	h.check(0, want)

	h.apply(0, ack(topicA, 1, b.Key))
	want = state{subs: subs, msgs: []stored{{topicA, 2, m2, both}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	// Both acks in one batch.
	h.apply(0, ack(topicA, 2, b.Key), ack(topicA, 2, a.Key))
	h.restart()
	h.check(0, state{subs: subs})
}

func testDurableSubAddRemove(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a := durable("client-1", "plain", topicA)
	b := durable("client-1", "selective", topicB)
	b.Selector, b.NoLocal = "colour = 'red' AND weight > 2.5", true
	c := durable("client-2", "wildcard", message.TopicDest("storetest.>"))
	h.apply(0, addSub(a), addSub(b))
	h.apply(0, addSub(c))
	want := state{subs: []engine.DurableSub{a, b, c}}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	h.apply(0, removeSub(b))
	want = state{subs: []engine.DurableSub{a, c}}
	h.restart()
	h.check(0, want)

	// Removing an unknown subscription is not an error.
	h.apply(0, removeSub(durable("nobody", "none", topicA)))
	h.check(0, want)

	// Adding a key again replaces its record (a changed selector).
	a2 := a
	a2.Selector = "urgent = TRUE"
	h.apply(0, addSub(a2))
	want = state{subs: []engine.DurableSub{a2, c}}
	h.restart()
	h.check(0, want)
}

func testRemoveSubDropsOnlyItsMessages(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a, b := durable("c1", "s1", topicA), durable("c2", "s2", topicA)
	m := []*message.Message{nil, textMessage(topicA, 1), textMessage(topicA, 2), textMessage(topicA, 3)}
	h.apply(0, addSub(a), addSub(b),
		add(topicA, 1, m[1], a.Key),
		add(topicA, 2, m[2], a.Key, b.Key),
		add(topicA, 3, m[3], b.Key),
	)
	h.apply(0, removeSub(a))
	onlyB := []engine.SubKey{b.Key}
	want := state{subs: []engine.DurableSub{b}, msgs: []stored{{topicA, 2, m[2], onlyB}, {topicA, 3, m[3], onlyB}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	h.apply(0, removeSub(b))
	h.restart()
	h.check(0, state{})
}

func testUpdateRedeliveryCounter(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a := durable("c1", "s1", topicA)
	mq := fullMessage(queueA, 1)
	mq2 := textMessage(queueA, 2)
	mq2.RedeliveryCounter = 1
	mt := textMessage(topicA, 1)
	h.apply(0, addSub(a), add(queueA, 1, mq), add(queueA, 2, mq2), add(topicA, 1, mt, a.Key))
	h.apply(0, update(queueA, 1, 3), update(topicA, 1, 1))
	h.apply(0, update(queueA, 1, 4)) // the last update wins

	withCounter := func(m *message.Message, n int32) *message.Message {
		c := m.Clone()
		c.RedeliveryCounter = n
		return c
	}
	want := state{
		subs: []engine.DurableSub{a},
		msgs: []stored{
			{queueA, 1, withCounter(mq, 4), nil},
			{queueA, 2, mq2, nil}, // the counter it was added with
			{topicA, 1, withCounter(mt, 1), []engine.SubKey{a.Key}},
		},
	}
	h.check(0, want)
	h.restart()
	h.check(0, want)
	if mq.RedeliveryCounter != 0 {
		t.Errorf("added message's RedeliveryCounter after OpUpdate: got %d, want 0 (a handed-over message is immutable)", mq.RedeliveryCounter)
	}
}

func testRemoveDestination(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	onA, onA2, onB := durable("c1", "s1", topicA), durable("c2", "s2", topicA), durable("c3", "s3", topicB)
	qa1, qa2, qb1 := textMessage(queueA, 1), textMessage(queueA, 2), textMessage(queueB, 1)
	ta1, tb1 := textMessage(topicA, 1), textMessage(topicB, 1)
	h.apply(0, addSub(onA), addSub(onA2), addSub(onB),
		add(queueA, 1, qa1), add(queueA, 2, qa2), add(queueB, 1, qb1),
		add(topicA, 1, ta1, onA.Key, onA2.Key), add(topicB, 1, tb1, onB.Key),
	)
	h.apply(0, removeDest(queueA))
	want := state{
		subs: []engine.DurableSub{onA, onA2, onB},
		msgs: []stored{{queueB, 1, qb1, nil}, {topicA, 1, ta1, []engine.SubKey{onA.Key, onA2.Key}}, {topicB, 1, tb1, []engine.SubKey{onB.Key}}},
	}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	// Removing a topic removes its messages and its durable subscriptions,
	// as ActiveMQ does.
	h.apply(0, removeDest(topicA))
	want = state{
		subs: []engine.DurableSub{onB},
		msgs: []stored{{queueB, 1, qb1, nil}, {topicB, 1, tb1, []engine.SubKey{onB.Key}}},
	}
	h.restart()
	h.check(0, want)

	// A removed destination can be used again, from any sequence.
	qa := textMessage(queueA, 10)
	h.apply(0, removeDest(queueB), add(queueA, 1, qa))
	want.msgs = []stored{{queueA, 1, qa, nil}, {topicB, 1, tb1, []engine.SubKey{onB.Key}}}
	h.restart()
	h.check(0, want)

	// Removing an unknown destination is not an error.
	h.apply(0, removeDest(message.QueueDest("storetest.never")))
	h.check(0, want)
}

// testEmptyDestinations: a destination the store knows comes back after a
// restart with no message in it, whether it was created empty (OpAddDest)
// or drained; a removed one does not, until it is created again.
// ActiveMQ's KahaDB keeps a StoredDestination per destination in db.data
// until KahaRemoveDestinationCommand, and its broker re-creates them all
// at start.
func testEmptyDestinations(t *testing.T, newStore func(*testing.T) func() engine.Store, o options) {
	h := start(t, newStore, 2)
	created, createdTopic := message.QueueDest("storetest.created"), message.TopicDest("storetest.created")
	h.apply(0, addDest(created), addDest(createdTopic),
		addDest(queueA), add(queueA, 1, textMessage(queueA, 1)),
		add(queueB, 1, textMessage(queueB, 1)))
	h.apply(0, remove(queueA, 1))
	h.apply(0, removeDest(queueB))
	// Known already: no change, no duplicate.
	h.apply(0, addDest(queueA), addDest(created))
	h.checkDests(0, created, createdTopic, queueA)
	h.check(0, state{})
	h.checkDests(1)
	h.restart()
	if o.onlyNamed {
		h.checkDests(0, queueA) // its add and remove name it
	} else {
		h.checkDests(0, created, createdTopic, queueA)
	}
	h.check(0, state{})
	h.checkDests(1)

	// Removed after the restart, created again after its removal, and a
	// message added to a destination created empty.
	m := textMessage(createdTopic, 2)
	sub := durable("c1", "s1", createdTopic)
	h.apply(0, removeDest(created), addDest(queueB), addSub(sub), add(createdTopic, 1, m, sub.Key))
	h.restart()
	want := state{subs: []engine.DurableSub{sub}, msgs: []stored{{createdTopic, 1, m, []engine.SubKey{sub.Key}}}}
	if o.onlyNamed {
		h.checkDests(0, createdTopic, queueA)
	} else {
		h.checkDests(0, createdTopic, queueA, queueB)
	}
	h.check(0, want)
	// Removing the topic removes it, its subscription and its message.
	h.apply(0, removeDest(createdTopic))
	h.restart()
	if o.onlyNamed {
		h.checkDests(0, queueA)
	} else {
		h.checkDests(0, queueA, queueB)
	}
	h.check(0, state{})
}

func testAtomicBatch(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a, b := durable("c1", "s1", topicA), durable("c2", "s2", topicA)
	m1, m2, m3 := textMessage(queueA, 1), textMessage(queueA, 2), textMessage(queueA, 3)
	t1 := textMessage(topicA, 1)
	h.apply(0, addSub(a), add(queueA, 1, m1), add(topicA, 1, t1, a.Key))
	want := state{subs: []engine.DurableSub{a}, msgs: []stored{{queueA, 1, m1, nil}, {topicA, 1, t1, []engine.SubKey{a.Key}}}}

	bad := []struct {
		name string
		ops  []engine.StoreOp
	}{
		{"duplicate of a stored message", []engine.StoreOp{
			add(queueA, 2, m2), addSub(b), update(queueA, 1, 7), ack(topicA, 1, a.Key), add(queueA, 1, m3),
		}},
		{"duplicate within the batch", []engine.StoreOp{
			remove(queueA, 1), add(queueB, 1, m2), removeSub(a), add(queueB, 1, m3),
		}},
		{"duplicate after removing the destination and adding again", []engine.StoreOp{
			removeDest(queueA), add(queueA, 5, m2), removeDest(topicA), add(queueA, 5, m3),
		}},
	}
	for _, tc := range bad {
		if err := h.shards[0].Apply(tc.ops); err == nil {
			t.Errorf("%s: Apply(%s): got nil error, want a duplicate-add error", tc.name, opsString(tc.ops))
		}
		h.check(0, want)
	}
	h.restart()
	h.check(0, want)

	// The store is still usable, and the same sequence may be added after
	// an explicit remove in one batch.
	h.apply(0, remove(queueA, 1), add(queueA, 1, m3), add(queueA, 2, m2))
	want.msgs = []stored{{queueA, 1, m3, nil}, {queueA, 2, m2, nil}, {topicA, 1, t1, []engine.SubKey{a.Key}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

func testShardsIndependent(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 2)
	a := durable("c1", "s1", topicA)
	z, o := textMessage(queueA, 0), textMessage(queueA, 1)
	z.Body, o.Body = []byte("shard zero"), []byte("shard one")
	tz := textMessage(topicA, 0)
	h.apply(0, addSub(a), add(queueA, 1, z), add(topicA, 1, tz, a.Key))
	h.apply(1, add(queueA, 1, o)) // same destination and seq: not a duplicate
	want0 := state{subs: []engine.DurableSub{a}, msgs: []stored{{queueA, 1, z, nil}, {topicA, 1, tz, []engine.SubKey{a.Key}}}}
	want1 := state{msgs: []stored{{queueA, 1, o, nil}}}
	h.check(0, want0)
	h.check(1, want1)
	h.restart()
	h.check(0, want0)
	h.check(1, want1)

	h.apply(1, remove(queueA, 1), removeDest(topicA))
	h.restart()
	h.check(0, want0)
	h.check(1, state{})
}

func testManyMessages(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	const n, batch = 10_000, 500
	h := start(t, newStore, 1)
	msgs := make([]*message.Message, n+1)
	for lo := 1; lo <= n; lo += batch {
		ops := make([]engine.StoreOp, 0, batch)
		for i := lo; i < lo+batch && i <= n; i++ {
			msgs[i] = textMessage(queueA, i)
			ops = append(ops, add(queueA, uint64(i), msgs[i]))
		}
		h.apply(0, ops...)
	}
	// Remove the odd ones, oldest first, in batches of varied size.
	var ops []engine.StoreOp
	for i := 1; i <= n; i += 2 {
		ops = append(ops, remove(queueA, uint64(i)))
		if len(ops) == 1+i%97 {
			h.apply(0, ops...)
			ops = ops[:0]
		}
	}
	if len(ops) > 0 {
		h.apply(0, ops...)
	}
	var want state
	for i := 2; i <= n; i += 2 {
		want.msgs = append(want.msgs, stored{dest: queueA, seq: uint64(i), msg: msgs[i]})
	}
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

func testConcurrentShards(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	const n = 1_000
	h := start(t, newStore, 2)
	wants := make([]state, 2)
	var wg sync.WaitGroup
	for shard := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ss := h.shards[shard]
			a := durable(fmt.Sprintf("c%d", shard), "s", topicA)
			if err := ss.Apply([]engine.StoreOp{addSub(a)}); err != nil {
				t.Errorf("shard %d Apply(add-sub): got error %v, want nil", shard, err)
				return
			}
			want := state{subs: []engine.DurableSub{a}}
			for i := 1; i <= n; i++ {
				q, tm := textMessage(queueA, shard*n+i), textMessage(topicA, shard*n+i)
				ops := []engine.StoreOp{add(queueA, uint64(i), q), add(topicA, uint64(i), tm, a.Key)}
				if i%2 == 0 {
					ops = append(ops, remove(queueA, uint64(i-1)), ack(topicA, uint64(i), a.Key))
				} else {
					want.msgs = append(want.msgs, stored{topicA, uint64(i), tm, []engine.SubKey{a.Key}})
				}
				if i%2 == 0 || i == n {
					want.msgs = append(want.msgs, stored{queueA, uint64(i), q, nil})
				}
				if err := ss.Apply(ops); err != nil {
					t.Errorf("shard %d Apply(%s): got error %v, want nil", shard, opsString(ops), err)
					return
				}
			}
			wants[shard] = want
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	h.restart()
	h.check(0, wants[0])
	h.check(1, wants[1])
}

func testRecoverStopsOnError(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a := durable("c1", "s1", topicA)
	h.apply(0, addSub(a), add(queueA, 1, textMessage(queueA, 1)), add(queueA, 2, textMessage(queueA, 2)))
	h.restart()
	stop := errors.New("storetest: stop")
	calls := 0
	err := h.shards[0].Recover(func(engine.RecoveredItem) error {
		calls++
		if calls == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Errorf("Recover whose callback fails: got error %v, want %v", err, stop)
	}
	if calls != 2 {
		t.Errorf("Recover calls after the callback failed on the 2nd: got %d calls, want 2", calls)
	}
}

func testScheduledJobs(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 2)
	j1, j2, j3 := scheduledJob(queueA, 1), scheduledJob(topicA, 2), scheduledJob(queueB, 3)
	j3.Cron, j3.Repeat = "", -1 // repeats forever
	m := textMessage(queueA, 1)
	h.apply(0, add(queueA, 1, m), addJob(j1), addJob(j2))
	h.apply(0, addJob(j3))
	h.apply(1, addJob(scheduledJob(queueA, 9))) // another shard's
	want := state{msgs: []stored{{queueA, 1, m, nil}}, jobs: []engine.Job{j1, j2, j3}}
	h.check(0, want)
	h.restart()
	h.check(0, want)
	h.check(1, state{jobs: []engine.Job{scheduledJob(queueA, 9)}})

	// A reschedule replaces the job; a removed job is gone; removing an
	// unknown job, or the destination of a job, is not an error and keeps
	// the jobs.
	j1.Next, j1.Repeat = j1.Next+250, j1.Repeat-1
	h.apply(0, addJob(j1), removeJob(j2.ID), removeJob("ID:storetest-never:1"), removeDest(queueB))
	want.jobs = []engine.Job{j1, j3}
	h.check(0, want)
	h.restart()
	h.check(0, want)

	// A job removed and added again in one batch is there; the last
	// state of a job changed twice wins.
	j1b := j1
	j1b.Next += 1000
	h.apply(0, removeJob(j3.ID), addJob(j3), addJob(j1), addJob(j1b))
	want.jobs = []engine.Job{j1b, j3}
	h.restart()
	h.check(0, want)

	h.apply(0, removeJob(j1.ID), removeJob(j3.ID), remove(queueA, 1))
	h.restart()
	h.check(0, state{})
	h.check(1, state{jobs: []engine.Job{scheduledJob(queueA, 9)}})
}

func testScheduledJobsAtomicBatch(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	j1, j2 := scheduledJob(queueA, 1), scheduledJob(queueA, 2)
	m1 := textMessage(queueA, 1)
	h.apply(0, add(queueA, 1, m1), addJob(j1))
	want := state{msgs: []stored{{queueA, 1, m1, nil}}, jobs: []engine.Job{j1}}
	// A firing writes the delivered message and the job's new state in one
	// batch: if the batch fails, the job must be as it was.
	j1moved := j1
	j1moved.Next += 5000
	ops := []engine.StoreOp{addJob(j2), addJob(j1moved), removeJob(j1.ID), add(queueA, 1, textMessage(queueA, 2))}
	if err := h.shards[0].Apply(ops); err == nil {
		t.Errorf("Apply(%s): got nil error, want a duplicate-add error", opsString(ops))
	}
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

// testStubsLoadWhileWriting: for a store that recovers stubs
// (engine.MessageLoader), every stub loads, on one goroutine, the message a
// full Recover hands, while another goroutine applies batches that add and
// remove other messages (the engine's shard loads while its writer
// writes), and stubs stay loadable until their message is removed.
func testStubsLoadWhileWriting(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	const n = 400
	h := start(t, newStore, 1)
	if _, ok := h.shards[0].(engine.MessageLoader); !ok {
		t.Logf("%T recovers full messages: nothing to check", h.shards[0])
		return
	}
	msgs := make([]*message.Message, n+1)
	var ops []engine.StoreOp
	for i := 1; i <= n; i++ {
		msgs[i] = fullMessage(queueA, i)
		msgs[i].BodyType = message.BytesBody
		msgs[i].Body = bytes.Repeat([]byte{byte(i)}, 1000+i)
		msgs[i].Priority = uint8(i % 10)
		msgs[i].Expiration = int64(i) * 1000
		ops = append(ops, add(queueA, uint64(i), msgs[i]))
	}
	h.apply(0, ops[:n/2]...)
	h.apply(0, ops[n/2:]...)
	h.apply(0, update(queueA, 3, 5))
	h.restart()
	ld := h.shards[0].(engine.MessageLoader)
	var stubs []engine.RecoveredItem
	if err := ld.RecoverStubs(func(it engine.RecoveredItem) error {
		if !it.Created {
			stubs = append(stubs, it)
		}
		return nil
	}); err != nil {
		t.Fatalf("RecoverStubs: got error %v, want nil", err)
	}
	if len(stubs) != n {
		t.Fatalf("RecoverStubs: got %d items, want %d", len(stubs), n)
	}
	// The writer adds big messages to queue B (new journal files) and
	// removes them, and removes the first half of queue A's.
	done := make(chan error, 1)
	go func() {
		ss := h.shards[0]
		for round := 0; round < 20; round++ {
			var ops []engine.StoreOp
			for i := 0; i < 20; i++ {
				m := textMessage(queueB, round*20+i+1)
				m.Body = bytes.Repeat([]byte("x"), 16<<10)
				ops = append(ops, add(queueB, uint64(round*20+i+1), m))
			}
			if err := ss.Apply(ops); err != nil {
				done <- err
				return
			}
			ops = ops[:0]
			for i := 0; i < 20; i++ {
				ops = append(ops, remove(queueB, uint64(round*20+i+1)))
			}
			ops = append(ops, remove(queueA, uint64(round*10+1)))
			if err := ss.Apply(ops); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for _, it := range stubs {
		i := int(it.Seq)
		want := msgs[i]
		counter := int32(0)
		if i == 3 {
			counter = 5
		}
		m := it.Msg
		if m == nil {
			if it.Priority != want.Priority || it.Expiration != want.Expiration || it.Redeliveries != counter || it.Size < int64(len(want.Body)) {
				t.Errorf("stub seq %d: got priority %d, expiration %d, redeliveries %d, size %d; want %d, %d, %d, at least %d",
					i, it.Priority, it.Expiration, it.Redeliveries, it.Size, want.Priority, want.Expiration, counter, len(want.Body))
			}
			var err error
			if m, err = ld.LoadMessage(it.Ref); err != nil {
				t.Errorf("LoadMessage of seq %d while writing: got error %v, want nil", i, err)
				continue
			}
			m.RedeliveryCounter = it.Redeliveries
		}
		w := *want
		w.RedeliveryCounter = counter
		if d := diffMessage(m, &w); len(d) > 0 {
			t.Errorf("stub seq %d loaded while writing: differs:\n%s", i, strings.Join(d, "\n"))
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("Apply while loading: got error %v, want nil", err)
	}
	// The stubs of the messages still stored load after the writes.
	for _, it := range stubs {
		if it.Msg != nil || (it.Seq-1)%10 == 0 && it.Seq <= 200 {
			continue
		}
		m, err := ld.LoadMessage(it.Ref)
		if err != nil {
			t.Errorf("LoadMessage of seq %d after the writes: got error %v, want nil", it.Seq, err)
			continue
		}
		if m.ID != msgs[it.Seq].ID || !bytes.Equal(m.Body, msgs[it.Seq].Body) {
			t.Errorf("LoadMessage of seq %d after the writes: got %s (%d bytes), want %s (%d bytes)", it.Seq, m.ID, len(m.Body), msgs[it.Seq].ID, len(msgs[it.Seq].Body))
		}
	}
}
