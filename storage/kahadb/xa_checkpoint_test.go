package kahadb_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// A shard checkpoints while XA transactions are prepared: the index
// records them, and a restart from it (after more writes and a crash)
// hands back the same prepared transactions and state as a replay of the
// whole journal. Committing one and rolling back the other after that
// restart works, whether the next restart starts from the index written
// while they were prepared (their commit and rollback records replayed
// after it) or from a fresh one.
func TestKahaDBCheckpointPreparedXA(t *testing.T) {
	dir := t.TempDir()
	c := openCP(t, dir, kahadb.Options{})
	populate(t, c, 1, 5)
	x1 := engine.XID{FormatID: 131077, GlobalID: []byte("gtx-1"), Branch: []byte{1}}
	x2 := engine.XID{FormatID: 131077, GlobalID: []byte("gtx-2")}
	c.apply(t, engine.StoreOp{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{
		XID:  x1,
		Adds: []*message.Message{cpMsg(cpQueue, 100), cpMsg(cpTopic, 2000)},
		Acks: []engine.TxAck{{Dest: cpQueue, Seq: 1}, {Dest: cpTopic, Seq: 1, Sub: cpSub1.Key}},
	}})
	c.apply(t, engine.StoreOp{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{
		XID:  x2,
		Adds: []*message.Message{cpMsg(cpQueue, 200)},
		Acks: []engine.TxAck{{Dest: cpQueue, Seq: 3}},
	}})
	before := c.st.Recovery().Checkpoints
	kahadb.CheckpointForTest(c.ss, false)
	if n := c.st.Recovery().Checkpoints; n != before+1 {
		t.Fatalf("checkpoints %d after one taken while transactions are prepared, want %d", n, before+1)
	}
	// More work after the index: messages, a remove, an ack, a job.
	populate(t, c, 6, 3)
	c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: 2},
		engine.StoreOp{Kind: engine.OpAck, Dest: cpTopic, Seq: 2, Sub: cpSub2},
		engine.StoreOp{Kind: engine.OpRemoveJob, JobID: "job-1"})
	want := c.state(t)
	if txs := prefixed(want, "tx "); len(txs) != 2 {
		t.Fatalf("live state holds %d prepared transactions, want 2:\n%s", len(txs), strings.Join(want, "\n"))
	}
	crashed := crashCopy(t, dir)
	c.close(t)

	sameState(t, "full replay of the crashed journal", fullReplayState(t, crashed), want)
	replayed := func() []engine.PreparedTx {
		cp := crashCopy(t, crashed)
		if err := os.Remove(filepath.Join(cp, "wharf-index.bin")); err != nil {
			t.Fatal(err)
		}
		r := openCP(t, cp, kahadb.Options{CheckpointInterval: -1})
		defer r.close(t)
		return preparedOf(t, r.ss)
	}()
	c = openCP(t, crashed, kahadb.Options{})
	r := c.st.Recovery()
	// populate ×3 (trace+add, add, job each) and remove+ack+job removal.
	if r.FromIndex != 1 || r.RecordsReplayed != 3*4+3 {
		t.Fatalf("after a crash: recovery %+v, want the index and the 15 records written after it", r)
	}
	sameState(t, "index + tail after a crash", c.state(t), want)

	// The transaction manager comes back: x1 commits (its sends stored
	// with the engine's sequences, its acks applied), x2 rolls back.
	txs := preparedOf(t, c.ss)
	if len(txs) != len(replayed) {
		t.Fatalf("%d prepared transactions from the index, %d from a full replay", len(txs), len(replayed))
	}
	for i, tx := range txs {
		r := replayed[i]
		if tx.XID.String() != r.XID.String() || !slices.Equal(tx.Acks, r.Acks) || len(tx.Adds) != len(r.Adds) {
			t.Fatalf("prepared transaction %d from the index %+v, from a full replay %+v", i, tx, r)
		}
		for j, m := range tx.Adds {
			if !reflect.DeepEqual(m, r.Adds[j]) {
				t.Fatalf("%s add %d from the index\n%+v\nfrom a full replay\n%+v", tx.XID, j, m, r.Adds[j])
			}
		}
	}
	if len(txs) != 2 || txs[0].XID.String() != x1.String() || txs[1].XID.String() != x2.String() || len(txs[0].Adds) != 2 {
		t.Fatalf("recovered transactions %+v, want %s (2 adds) then %s", txs, x1, x2)
	}
	c.apply(t,
		engine.StoreOp{Kind: engine.OpCommit, Tx: &engine.PreparedTx{XID: x1}},
		engine.StoreOp{Kind: engine.OpAdd, Dest: cpQueue, Seq: 9, Msg: txs[0].Adds[0]},
		engine.StoreOp{Kind: engine.OpAdd, Dest: cpTopic, Seq: 9, Msg: txs[0].Adds[1], Subs: []engine.SubKey{cpSub1.Key, cpSub2.Key}},
		engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: 1},
		engine.StoreOp{Kind: engine.OpAck, Dest: cpTopic, Seq: 1, Sub: cpSub1})
	c.apply(t, engine.StoreOp{Kind: engine.OpRollback, Tx: &engine.PreparedTx{XID: x2}})
	done := c.state(t)
	if len(prefixed(done, "tx ")) != 0 {
		t.Fatalf("transactions left after commit and rollback:\n%s", strings.Join(done, "\n"))
	}
	for _, w := range []string{"msg queue://cp.q #9 ID:cp-1:1:1:100 ", "msg topic://cp.t #9 ID:cp-1:1:1:2000 ", "msg queue://cp.q #3 "} {
		if len(prefixed(done, w)) != 1 {
			t.Fatalf("state after commit and rollback has no %q:\n%s", w, strings.Join(done, "\n"))
		}
	}
	for _, gone := range []string{"msg queue://cp.q #1 ", "ID:cp-1:1:1:200 "} {
		if slices.ContainsFunc(done, func(l string) bool { return strings.Contains(l, gone) }) {
			t.Fatalf("state after commit and rollback still holds %q:\n%s", gone, strings.Join(done, "\n"))
		}
	}
	// A crash now: the index is still the one with both prepared; the
	// commit and rollback records are replayed after it.
	crashed2 := crashCopy(t, crashed)
	c.close(t)
	c = openCP(t, crashed2, kahadb.Options{})
	if r := c.st.Recovery(); r.FromIndex != 1 || r.RecordsReplayed == 0 {
		t.Fatalf("after commit, rollback and a crash: recovery %+v, want the index written while prepared and its tail", r)
	}
	sameState(t, "index with the transactions prepared + commit/rollback tail", c.state(t), done)
	sameState(t, "full replay after commit and rollback", fullReplayState(t, crashed2), done)
	c.close(t)
	// The clean stop of the first restart wrote an index with neither.
	c = openCP(t, crashed, kahadb.Options{})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 1 || r.RecordsReplayed != 0 {
		t.Fatalf("after a clean stop: recovery %+v, want the index alone", r)
	}
	sameState(t, "index after commit and rollback", c.state(t), done)
}

func preparedOf(t *testing.T, ss engine.ShardStore) []engine.PreparedTx {
	t.Helper()
	var txs []engine.PreparedTx
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Tx != nil {
			txs = append(txs, *it.Tx)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return txs
}

func prefixed(lines []string, p string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, p) {
			out = append(out, l)
		}
	}
	return out
}
