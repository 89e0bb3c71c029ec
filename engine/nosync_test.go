package engine_test

import (
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// syncRecorder is a syncing store that records, per batch, whether the
// writer asked for the disk sync.
type syncRecorder struct {
	mu      sync.Mutex
	batches []recordedBatch
}

type recordedBatch struct {
	synced bool
	kinds  []engine.StoreOpKind
}

func (r *syncRecorder) OpenShard(int, int) (engine.ShardStore, error)  { return r, nil }
func (r *syncRecorder) Close() error                                   { return nil }
func (r *syncRecorder) Syncs() bool                                    { return true }
func (r *syncRecorder) Recover(func(engine.RecoveredItem) error) error { return nil }
func (r *syncRecorder) Apply(ops []engine.StoreOp) error               { return r.record(ops, true) }
func (r *syncRecorder) ApplyNoSync(ops []engine.StoreOp) error         { return r.record(ops, false) }

func (r *syncRecorder) record(ops []engine.StoreOp, synced bool) error {
	b := recordedBatch{synced: synced}
	for _, op := range ops {
		b.kinds = append(b.kinds, op.Kind)
	}
	r.mu.Lock()
	r.batches = append(r.batches, b)
	r.mu.Unlock()
	return nil
}

// syncedFor reports, for every batch holding an op of kind k, whether it
// was synced.
func (r *syncRecorder) syncedFor(k engine.StoreOpKind) []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bool
	for _, b := range r.batches {
		for _, got := range b.kinds {
			if got == k {
				out = append(out, b.synced)
				break
			}
		}
	}
	return out
}

// A persistent send is answered after a synced write; a consumer's plain
// acknowledgement, which nobody waits for, is written without a sync; a
// transaction's commit of an acknowledgement waits for a synced write.
func TestEngineSyncOnlyWhatSomebodyWaitsFor(t *testing.T) {
	rec := &syncRecorder{}
	e, err := engine.New(engine.Options{Shards: 1, Store: rec, TickInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Connect(engine.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("nosync")
	send := func(body string) {
		t.Helper()
		r := &result{errs: map[uint64]error{}}
		r.wg.Add(1)
		if err := c.Send(msg(q, body, true), "", r, 1); err != nil {
			t.Fatal(err)
		}
		r.wg.Wait()
		if err := r.errs[1]; err != nil {
			t.Fatal(err)
		}
	}
	send("plain ack")
	send("acked in a transaction")
	if got := rec.syncedFor(engine.OpAdd); len(got) != 2 || !got[0] || !got[1] {
		t.Fatalf("persistent sends: synced per batch %v, want [true true]", got)
	}
	ch := newSink()
	sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, ch)
	if err != nil {
		t.Fatal(err)
	}
	d := ch.recv(t)
	if err := c.Ack(sub, d.ID, ""); err != nil {
		t.Fatal(err)
	}
	// Two round trips through the shard: the batch holding the remove has
	// gone to the writer, and the writer applies batches in order, so
	// the transaction's batch below comes after it.
	e.Stats(q)
	e.Stats(q)
	if err := c.Begin("tx"); err != nil {
		t.Fatal(err)
	}
	d = ch.recv(t)
	if err := c.Ack(sub, d.ID, "tx"); err != nil {
		t.Fatal(err)
	}
	if err := c.Commit("tx"); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if got := rec.syncedFor(engine.OpRemove); len(got) != 2 || got[0] || !got[1] {
		t.Fatalf("removes: synced per batch %v, want [false true] (plain ack unsynced, commit synced)", got)
	}
}
