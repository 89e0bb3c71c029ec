package engine_test

import (
	"fmt"
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
	applied chan struct{} // a token per Apply
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
	r.applied <- struct{}{}
	return nil
}

// waitFor waits until a batch holding an op of kind k was applied.
func (r *syncRecorder) waitFor(t *testing.T, k engine.StoreOpKind) {
	t.Helper()
	for len(r.syncedFor(k)) == 0 {
		select {
		case <-r.applied:
		case <-time.After(10 * time.Second):
			t.Fatalf("no batch with op kind %d applied", k)
		}
	}
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
	rec := &syncRecorder{applied: make(chan struct{}, 100)}
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
	// The batch holding the remove is applied before the transaction's
	// (else the writer would merge them into one).
	rec.waitFor(t, engine.OpRemove)
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

// slowSyncStore is a syncing store whose Apply takes as long as a slow
// disk's fsync, and that counts the adds of each Apply.
type slowSyncStore struct {
	mu   sync.Mutex
	adds []int
}

func (s *slowSyncStore) OpenShard(int, int) (engine.ShardStore, error)  { return s, nil }
func (s *slowSyncStore) Close() error                                   { return nil }
func (s *slowSyncStore) Syncs() bool                                    { return true }
func (s *slowSyncStore) Recover(func(engine.RecoveredItem) error) error { return nil }
func (s *slowSyncStore) Apply(ops []engine.StoreOp) error {
	time.Sleep(3 * time.Millisecond) // the disk's fsync, simulated
	n := 0
	for _, op := range ops {
		if op.Kind == engine.OpAdd {
			n++
		}
	}
	s.mu.Lock()
	s.adds = append(s.adds, n)
	s.mu.Unlock()
	return nil
}

// Four producers each waiting for their send to be stored: the writer
// gathers the sends of the producers the last sync released, so that they
// share one sync instead of splitting into two alternating cohorts of two
// (the equilibrium without gathering).
func TestEngineGroupCommitGathersReleasedProducers(t *testing.T) {
	st := &slowSyncStore{}
	e, err := engine.New(engine.Options{Shards: 1, Store: st, TickInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	q := message.QueueDest("gather")
	const producers, per = 4, 60
	var all sync.WaitGroup
	for p := range producers {
		all.Add(1)
		go func() {
			defer all.Done()
			c, err := e.Connect(engine.Credentials{})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range per {
				r := &result{errs: map[uint64]error{}}
				r.wg.Add(1)
				if err := c.Send(msg(q, fmt.Sprintf("%d-%d", p, i), true), "", r, 1); err != nil {
					t.Error(err)
					return
				}
				r.wg.Wait()
				if err := r.errs[1]; err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	all.Wait()
	st.mu.Lock()
	defer st.mu.Unlock()
	total := 0
	for _, n := range st.adds {
		total += n
	}
	if total != producers*per {
		t.Fatalf("%d adds stored, want %d", total, producers*per)
	}
	if mean := float64(total) / float64(len(st.adds)); mean < 2.6 {
		t.Fatalf("%.2f adds per sync over %d syncs, want well above the 2 of two alternating cohorts", mean, len(st.adds))
	}
}

// housekeepStore counts Housekeep calls and checks that none overlaps an
// Apply (both must run on the goroutine that writes the store).
type housekeepStore struct {
	syncs      bool
	mu         sync.Mutex
	applying   bool
	housekeeps int
	overlaps   int
}

func (h *housekeepStore) OpenShard(int, int) (engine.ShardStore, error)  { return h, nil }
func (h *housekeepStore) Close() error                                   { return nil }
func (h *housekeepStore) Syncs() bool                                    { return h.syncs }
func (h *housekeepStore) Recover(func(engine.RecoveredItem) error) error { return nil }
func (h *housekeepStore) Apply([]engine.StoreOp) error {
	h.mu.Lock()
	h.applying = true
	h.mu.Unlock()
	time.Sleep(time.Millisecond) // a write, simulated
	h.mu.Lock()
	h.applying = false
	h.mu.Unlock()
	return nil
}

func (h *housekeepStore) Housekeep() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.housekeeps++
	if h.applying {
		h.overlaps++
	}
	return nil
}

// Each tick gives a Housekeeper store its turn, on the goroutine that
// applies its batches: the writer of a syncing store, the shard otherwise.
func TestEngineTickHousekeepsStore(t *testing.T) {
	for _, syncs := range []bool{false, true} {
		h := &housekeepStore{syncs: syncs}
		e, err := engine.New(engine.Options{Shards: 1, Store: h, TickInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(engine.Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		q := message.QueueDest("housekeep")
		for i := range 20 {
			if err := c.Send(msg(q, fmt.Sprint(i), true), "", nil, 0); err != nil {
				t.Fatal(err)
			}
			if i%5 == 0 {
				e.Tick()
			}
		}
		if err := e.Close(); err != nil { // drains the writer
			t.Fatal(err)
		}
		h.mu.Lock()
		// The writer merges the turns asked for while it was busy.
		low := 4
		if syncs {
			low = 1
		}
		if h.housekeeps < low || h.housekeeps > 4 || h.overlaps != 0 {
			t.Errorf("syncs=%v: %d housekeeping turns (%d during an Apply), want %d to 4 and none during an Apply", syncs, h.housekeeps, h.overlaps, low)
		}
		h.mu.Unlock()
	}
}

// concurrentStoreAndDispatchQueues with a consumer that acknowledges at
// once: the writer waits for the ack of a message it handed out in the
// same turn, so add and remove cancel out and the message is never
// written (nor synced), as in ActiveMQ. Off, every add is written.
func TestEngineWriterWaitsForPromptAcks(t *testing.T) {
	for _, on := range []bool{true, false} {
		st := &slowSyncStore{}
		e, err := engine.New(engine.Options{Shards: 1, Store: st, TickInterval: time.Hour, ConcurrentStoreAndDispatchQueues: on})
		if err != nil {
			t.Fatal(err)
		}
		q := message.QueueDest("prompt")
		cc, err := e.Connect(engine.Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		deliveries := newSink()
		sub, err := cc.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, deliveries)
		if err != nil {
			t.Fatal(err)
		}
		const n = 40
		acked := make(chan struct{})
		go func() {
			defer close(acked)
			for range n {
				d := <-deliveries
				if err := cc.Ack(sub, d.ID, ""); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		p, err := e.Connect(engine.Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r := &result{errs: map[uint64]error{}}
			r.wg.Add(1)
			if err := p.Send(msg(q, fmt.Sprint(i), true), "", r, 1); err != nil {
				t.Fatal(err)
			}
			r.wg.Wait()
			if err := r.errs[1]; err != nil {
				t.Fatal(err)
			}
		}
		<-acked
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		st.mu.Lock()
		written := 0
		for _, a := range st.adds {
			written += a
		}
		st.mu.Unlock()
		t.Logf("concurrentStoreAndDispatch %v: %d of %d adds written", on, written, n)
		switch {
		case on && written > n/4:
			t.Errorf("concurrentStoreAndDispatch on, prompt acks: %d of %d adds written, want most cancelled", written, n)
		case !on && written != n:
			t.Errorf("concurrentStoreAndDispatch off: %d of %d adds written, want all", written, n)
		}
	}
}

// removeGate is a syncing store that records, per batch, whether it was
// synced, and holds every batch holding an OpRemove at a gate: it reports
// the batch on reached and applies it only once release is closed.
type removeGate struct {
	syncRecorder
	reached chan struct{} // a token per gated batch
	release chan struct{}
}

func (g *removeGate) OpenShard(int, int) (engine.ShardStore, error) { return g, nil }
func (g *removeGate) Apply(ops []engine.StoreOp) error              { g.hold(ops); return g.record(ops, true) }
func (g *removeGate) ApplyNoSync(ops []engine.StoreOp) error {
	g.hold(ops)
	return g.record(ops, false)
}

func (g *removeGate) hold(ops []engine.StoreOp) {
	for _, op := range ops {
		if op.Kind == engine.OpRemove {
			g.reached <- struct{}{}
			<-g.release
			return
		}
	}
}

// An acknowledgement the client waits to have confirmed (AckDurable, and
// NackDurable) is told only after the synced Apply of the batch holding its
// removal has returned; one inside a transaction (nothing stored before the
// commit) at once.
func TestEngineConfirmedAckWaitsForSyncedWrite(t *testing.T) {
	g := &removeGate{syncRecorder: syncRecorder{applied: make(chan struct{}, 100)}, reached: make(chan struct{}, 10), release: make(chan struct{})}
	e, err := engine.New(engine.Options{Shards: 1, Store: g, TickInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	defer close(g.release) // first: a failed test leaves nothing at the gate
	c, err := e.Connect(engine.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("confirmed")
	for _, b := range []string{"ack", "nack", "tx"} {
		send(t, c, msg(q, b, true))
	}
	ch := newSink()
	sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, ch)
	if err != nil {
		t.Fatal(err)
	}
	dAck, dNack, dTx := ch.recv(t), ch.recv(t), ch.recv(t)

	for _, tc := range []struct {
		name    string
		confirm func(r *result) error
	}{
		{"ack", func(r *result) error { return c.AckDurable(sub, dAck.ID, "", r, 1) }},
		{"poison nack", func(r *result) error { return c.NackDurable(sub, dNack.ID, engine.NackPoison, "", r, 1) }},
	} {
		r := &result{errs: map[uint64]error{}}
		r.wg.Add(1)
		done := make(chan struct{})
		go func() { r.wg.Wait(); close(done) }()
		if err := tc.confirm(r); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			t.Fatalf("%s: confirmed before the store had the removal", tc.name)
		case <-g.reached:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no store write holding the removal", tc.name)
		}
		// The batch is at the gate: the writer cannot tell anybody yet.
		select {
		case <-done:
			t.Fatalf("%s: confirmed while the store write holding the removal was still in progress", tc.name)
		default:
		}
		g.release <- struct{}{}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not confirmed after the store write", tc.name)
		}
		if err := r.errs[1]; err != nil {
			t.Fatalf("%s: confirmed with %v", tc.name, err)
		}
		got := g.syncedFor(engine.OpRemove)
		if len(got) == 0 || !got[len(got)-1] {
			t.Fatalf("%s: removal written synced per batch %v, want the last synced", tc.name, got)
		}
	}
	// The nack's DLQ copy went through a batch without a remove.
	if err := c.Begin("tx"); err != nil {
		t.Fatal(err)
	}
	r := &result{errs: map[uint64]error{}}
	r.wg.Add(1)
	if err := c.AckDurable(sub, dTx.ID, "tx", r, 1); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait() // told at once: nothing waits at the gate yet
	go func() { <-g.reached; g.release <- struct{}{} }()
	if err := c.Commit("tx"); err != nil {
		t.Fatal(err)
	}
	got := g.syncedFor(engine.OpRemove)
	if len(got) != 3 || !got[2] {
		t.Fatalf("removes synced per batch %v, want 3, the commit's synced", got)
	}
}
