package storetest

import (
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// Prepared XA transactions (engine.StoreOp's rules for OpPrepare, OpCommit
// and OpRollback).

func xid(n byte) engine.XID {
	return engine.XID{FormatID: 0x57, GlobalID: []byte{'g', n, 0, 0xff}, Branch: []byte{'b', n}}
}

func prepare(t engine.PreparedTx) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpPrepare, Tx: &t}
}

func commitTx(x engine.XID) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpCommit, Tx: &engine.PreparedTx{XID: x}}
}

func rollbackTx(x engine.XID) engine.StoreOp {
	return engine.StoreOp{Kind: engine.OpRollback, Tx: &engine.PreparedTx{XID: x}}
}

// recoveredTx returns the prepared transaction x as the shard recovers it:
// what an engine restarted over the store holds and commits.
func (h *harness) recoveredTx(shard int, x engine.XID) engine.PreparedTx {
	h.t.Helper()
	for _, it := range h.recoverAll(shard) {
		if it.Tx != nil && it.Tx.XID.String() == x.String() {
			return *it.Tx
		}
	}
	h.t.Fatalf("shard %d: prepared transaction %s not recovered, want it", shard, x)
	return engine.PreparedTx{}
}

// sent is the recovered copy of m among t's adds.
func (h *harness) sent(t engine.PreparedTx, m *message.Message) *message.Message {
	h.t.Helper()
	for _, a := range t.Adds {
		if a.ID == m.ID {
			return a
		}
	}
	h.t.Fatalf("transaction %s: %s not among its recovered adds, want it", t.XID, m.ID)
	return nil
}

// xaFixture: queue A holds m1 and m2, topic A holds t1 for subscriptions
// a and b; then X is prepared: it sends n1 to queue A and n2 to queue B,
// and acknowledges m1 and a's copy of t1.
type xaFixture struct {
	h              *harness
	a, b           engine.DurableSub
	m1, m2, t1     *message.Message
	n1, n2         *message.Message
	x              engine.XID
	tx             engine.PreparedTx
	before, during state
}

func newXAFixture(t *testing.T, newStore func(*testing.T) func() engine.Store) *xaFixture {
	f := &xaFixture{h: start(t, newStore, 1), x: xid(1)}
	f.a, f.b = durable("c1", "a", topicA), durable("c1", "b", topicA)
	f.m1, f.m2, f.t1 = textMessage(queueA, 1), textMessage(queueA, 2), textMessage(topicA, 1)
	f.n1, f.n2 = fullMessage(queueA, 11), textMessage(queueB, 12)
	f.h.apply(0, addSub(f.a), addSub(f.b), add(queueA, 1, f.m1), add(queueA, 2, f.m2), add(topicA, 1, f.t1, f.a.Key, f.b.Key))
	f.before = state{
		subs: []engine.DurableSub{f.a, f.b},
		msgs: []stored{{queueA, 1, f.m1, nil}, {queueA, 2, f.m2, nil}, {topicA, 1, f.t1, []engine.SubKey{f.a.Key, f.b.Key}}},
	}
	f.tx = engine.PreparedTx{XID: f.x, Adds: []*message.Message{f.n1, f.n2},
		Acks: []engine.TxAck{{Dest: queueA, Seq: 1}, {Dest: topicA, Seq: 1, Sub: f.a.Key}}}
	f.h.apply(0, prepare(f.tx))
	// Prepared: nothing it did shows yet.
	f.during = f.before
	f.during.txs = []engine.PreparedTx{f.tx}
	return f
}

func testXAPrepareRestart(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	f := newXAFixture(t, newStore)
	f.h.check(0, f.during)
	f.h.restart()
	f.h.check(0, f.during)
	// Still in doubt after a second restart, and the store keeps working.
	m3 := textMessage(queueA, 3)
	f.h.apply(0, add(queueA, 3, m3))
	f.h.restart()
	want := f.during
	want.msgs = append(want.msgs[:2:2], stored{queueA, 3, m3, nil}, want.msgs[2])
	f.h.check(0, want)
}

func testXAPrepareCommit(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	for _, restart := range []bool{false, true} {
		name := "live"
		if restart {
			name = "recovered"
		}
		t.Run(name, func(t *testing.T) {
			f := newXAFixture(t, newStore)
			tx := f.tx
			if restart {
				f.h.restart()
				tx = f.h.recoveredTx(0, f.x)
			}
			// The engine commits: the commit, then its acks and its sends.
			f.h.apply(0, commitTx(f.x), remove(queueA, 1), ack(topicA, 1, f.a.Key),
				add(queueA, 3, f.h.sent(tx, f.n1)), add(queueB, 1, f.h.sent(tx, f.n2)))
			want := state{
				subs: f.before.subs,
				msgs: []stored{{queueA, 2, f.m2, nil}, {queueA, 3, f.n1, nil}, {queueB, 1, f.n2, nil},
					{topicA, 1, f.t1, []engine.SubKey{f.b.Key}}},
			}
			f.h.check(0, want)
			f.h.restart()
			f.h.check(0, want)
			// A second commit or a rollback of it is ignored.
			f.h.apply(0, commitTx(f.x), rollbackTx(f.x))
			f.h.apply(0, remove(queueA, 3))
			f.h.restart()
			want.msgs = append(want.msgs[:1:1], want.msgs[2:]...)
			f.h.check(0, want)
		})
	}
}

func testXAPrepareRollback(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	for _, restart := range []bool{false, true} {
		f := newXAFixture(t, newStore)
		if restart {
			f.h.restart()
		}
		f.h.apply(0, rollbackTx(f.x))
		f.h.check(0, f.before)
		f.h.restart()
		f.h.check(0, f.before)
		// The acked messages can be consumed normally afterwards.
		f.h.apply(0, remove(queueA, 1), ack(topicA, 1, f.a.Key))
		f.h.restart()
		want := f.before
		want.msgs = []stored{{queueA, 2, f.m2, nil}, {topicA, 1, f.t1, []engine.SubKey{f.b.Key}}}
		f.h.check(0, want)
	}
}

// testXACommitPartly: a commit whose sends are not all stored (consumed
// before the batch was written, a topic without durable subscriptions at
// commit) stores only those that follow it in the batch.
func testXACommitPartly(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 1)
	a := durable("c1", "a", topicA)
	b := durable("c1", "b", topicA)
	h.apply(0, addSub(a), addSub(b))
	n1, n2, n3, n4 := textMessage(queueA, 1), textMessage(queueA, 2), textMessage(topicA, 3), textMessage(topicA, 4)
	x := xid(2)
	h.apply(0, prepare(engine.PreparedTx{XID: x, Adds: []*message.Message{n1, n2, n3, n4}}))
	h.restart()
	tx := h.recoveredTx(0, x)
	// n1 consumed at once, n3 for nobody, n4 for b only.
	h.apply(0, commitTx(x), add(queueA, 2, h.sent(tx, n2)), add(topicA, 1, h.sent(tx, n4), b.Key))
	want := state{subs: []engine.DurableSub{a, b},
		msgs: []stored{{queueA, 2, n2, nil}, {topicA, 1, n4, []engine.SubKey{b.Key}}}}
	h.check(0, want)
	h.restart()
	h.check(0, want)
}

// testXATwoTransactions: transactions are independent, by XID; the same
// XID may be prepared on two shards (each holds its share), and preparing
// an XID the shard holds fails the batch as a whole.
func testXATwoTransactions(t *testing.T, newStore func(*testing.T) func() engine.Store) {
	h := start(t, newStore, 2)
	m := []*message.Message{textMessage(queueA, 1), textMessage(queueA, 2), textMessage(queueB, 3)}
	h.apply(0, add(queueA, 1, m[0]))
	x1 := engine.PreparedTx{XID: xid(1), Adds: []*message.Message{m[1]}, Acks: []engine.TxAck{{Dest: queueA, Seq: 1}}}
	x2 := engine.PreparedTx{XID: xid(2), Adds: []*message.Message{m[2]}}
	x1b := engine.PreparedTx{XID: xid(1), Adds: []*message.Message{textMessage(queueB, 4)}}
	x3 := engine.PreparedTx{XID: xid(3)} // nothing stored: still prepared
	h.apply(0, prepare(x1), prepare(x2))
	h.apply(1, prepare(x1b), prepare(x3))
	bad := []engine.StoreOp{add(queueA, 5, textMessage(queueA, 5)), prepare(x2)}
	if err := h.shards[0].Apply(bad); err == nil {
		t.Errorf("Apply(%s): got nil error, want an already-prepared error", opsString(bad))
	}
	want0 := state{msgs: []stored{{queueA, 1, m[0], nil}}, txs: []engine.PreparedTx{x1, x2}}
	want1 := state{txs: []engine.PreparedTx{x1b, x3}}
	h.check(0, want0)
	h.check(1, want1)
	h.restart()
	h.check(0, want0)
	h.check(1, want1)
	// Commit x1 on shard 0 only, roll back x2; shard 1 still holds x1's share.
	tx := h.recoveredTx(0, xid(1))
	h.apply(0, commitTx(xid(1)), remove(queueA, 1), add(queueA, 2, h.sent(tx, m[1])), rollbackTx(xid(2)))
	want0 = state{msgs: []stored{{queueA, 2, m[1], nil}}}
	h.restart()
	h.check(0, want0)
	h.check(1, want1)
	h.apply(1, rollbackTx(xid(1)), commitTx(xid(3)), rollbackTx(xid(9)))
	h.restart()
	h.check(0, want0)
	h.check(1, state{})
}
