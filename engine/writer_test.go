package engine

import (
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"wharf/engine/message"
	"wharf/internal/logtest"
)

// The writer's tests drive it through a fake store whose Apply waits for
// the test (to hold a sync while batches queue up) and a fake clock whose
// timer fires only when the test moves time past it: nothing sleeps.

// fakeClock is a writerClock that moves only when told.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// armed receives the duration of each Reset: the writer opened a
	// gathering window.
	armed chan time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), armed: make(chan time.Duration, 64)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer() writerTimer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	return t
}

// advance moves the clock by d and fires the timers it passes.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		if t.active && !t.at.After(c.now) {
			t.active = false
			t.ch <- c.now
		}
	}
}

// skip moves the clock by d without firing timers: their fire is late,
// as when the writer's select keeps choosing batches over the timer.
func (c *fakeClock) skip(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// active reports whether any timer is running.
func (c *fakeClock) active() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.active {
			return true
		}
	}
	return false
}

type fakeTimer struct {
	c      *fakeClock
	ch     chan time.Time
	at     time.Time
	active bool // guarded by c.mu
}

// Reset and Stop drop a fire not yet received, as time.Timer does since
// Go 1.23.
func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	was := t.active
	t.active, t.at = true, t.c.now.Add(d)
	t.drain()
	t.c.mu.Unlock()
	t.c.armed <- d
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	t.drain()
	return was
}

func (t *fakeTimer) drain() {
	select {
	case <-t.ch:
	default:
	}
}

func (t *fakeTimer) Chan() <-chan time.Time { return t.ch }

// applyCall is one write the store was asked for.
type applyCall struct {
	synced bool // Apply; false for ApplyNoSync
	ops    []StoreOp
}

// fakeStore is a syncing ShardStore whose writes report to calls and
// then wait for the test to send their result on results.
type fakeStore struct {
	calls     chan applyCall
	results   chan error
	housekept chan struct{}
}

func newFakeStore() *fakeStore {
	return &fakeStore{calls: make(chan applyCall), results: make(chan error), housekept: make(chan struct{}, 16)}
}

func (st *fakeStore) write(synced bool, ops []StoreOp) error {
	st.calls <- applyCall{synced, slices.Clone(ops)}
	return <-st.results
}

func (st *fakeStore) Apply(ops []StoreOp) error               { return st.write(true, ops) }
func (st *fakeStore) ApplyNoSync(ops []StoreOp) error         { return st.write(false, ops) }
func (st *fakeStore) Recover(func(RecoveredItem) error) error { return nil }
func (st *fakeStore) Close() error                            { return nil }
func (st *fakeStore) Syncs() bool                             { return true }
func (st *fakeStore) Housekeep() error                        { st.housekept <- struct{}{}; return nil }

// syncOnlyStore is a syncing store without ApplyNoSync.
type syncOnlyStore struct{ st *fakeStore }

func (st *syncOnlyStore) Apply(ops []StoreOp) error               { return st.st.write(true, ops) }
func (st *syncOnlyStore) Recover(func(RecoveredItem) error) error { return nil }
func (st *syncOnlyStore) Close() error                            { return nil }
func (st *syncOnlyStore) Syncs() bool                             { return true }

// fakeComps records the completions the writer releases.
type fakeComps chan compDone

type compDone struct {
	token uint64
	err   error
}

func (c fakeComps) Complete(token uint64, err error) { c <- compDone{token, err} }

// writerRig is a running writer with its fakes.
type writerRig struct {
	w     *writer
	st    *fakeStore
	clk   *fakeClock
	comps fakeComps
}

func startWriter(t *testing.T, csd bool) *writerRig {
	t.Helper()
	st := newFakeStore()
	return startWriterOn(t, st, st, csd)
}

func startWriterOn(t *testing.T, st *fakeStore, store ShardStore, csd bool) *writerRig {
	t.Helper()
	r := &writerRig{st: st, clk: newFakeClock(), comps: make(fakeComps, 1024)}
	r.w = newWriter(store, slog.New(slog.NewTextHandler(io.Discard, nil)), csd, r.clk, 4)
	go r.w.run()
	return r
}

// stop stops the writer, which must have nothing left to write.
func (r *writerRig) stop(t *testing.T) {
	t.Helper()
	stopped := make(chan struct{})
	go func() { r.w.stop(); close(stopped) }()
	recv(t, stopped)
}

var writerQ = message.QueueDest("writer.q")

func addOp(seq uint64, dispatched bool) StoreOp {
	return StoreOp{Kind: OpAdd, Dest: writerQ, Seq: seq, dispatched: dispatched}
}

func removeOp(seq uint64) StoreOp { return StoreOp{Kind: OpRemove, Dest: writerQ, Seq: seq} }

// send hands the writer a batch of ops whose completions carry tokens.
func (r *writerRig) send(ops []StoreOp, tokens ...uint64) {
	b := writeBatch{ops: ops}
	for _, tok := range tokens {
		b.comps = append(b.comps, completion{comp: r.comps, token: tok})
	}
	r.w.in <- b
}

// next waits for the writer's next write, which then waits for finish.
func (r *writerRig) next(t *testing.T) applyCall {
	t.Helper()
	return recv(t, r.st.calls)
}

// finish ends the write in progress after d of clock time, with err.
func (r *writerRig) finish(d time.Duration, err error) {
	r.clk.advance(d)
	r.st.results <- err
}

// write waits for the next write and lets it take d.
func (r *writerRig) write(t *testing.T, d time.Duration) applyCall {
	t.Helper()
	c := r.next(t)
	r.finish(d, nil)
	return c
}

// done waits for the completions of tokens, in order, and checks their
// error.
func (r *writerRig) done(t *testing.T, want error, tokens ...uint64) {
	t.Helper()
	for _, tok := range tokens {
		c := recv(t, r.comps)
		if c.token != tok || !errors.Is(c.err, want) || (want == nil && c.err != nil) {
			t.Fatalf("completion (%d, %v), want (%d, %v)", c.token, c.err, tok, want)
		}
	}
}

// noCompletions checks that nothing was completed yet.
func (r *writerRig) noCompletions(t *testing.T) {
	t.Helper()
	if n := len(r.comps); n > 0 {
		t.Fatalf("%d completions released before their write returned", n)
	}
}

// notArmed checks that the writer opened no gathering window.
func (r *writerRig) notArmed(t *testing.T) {
	t.Helper()
	if n := len(r.clk.armed); n > 0 {
		t.Fatalf("the writer waited %d times, want no wait", n)
	}
}

// warm writes one synced batch of n waiters that took syncTime, so that
// the writer gathers for n and its window is syncTime.
func (r *writerRig) warm(t *testing.T, n int, syncTime time.Duration) {
	t.Helper()
	tokens := make([]uint64, n)
	ops := make([]StoreOp, n)
	for i := range n {
		tokens[i] = uint64(1000 + i)
		ops[i] = addOp(uint64(1000+i), false)
	}
	r.send(ops, tokens...)
	if c := r.write(t, syncTime); len(c.ops) != n || !c.synced {
		t.Fatalf("warm-up write %+v, want %d ops synced", c, n)
	}
	r.done(t, nil, tokens...)
	r.notArmed(t) // nothing measured yet: the first batch never waits
}

func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for the writer")
		panic("unreachable")
	}
}

func seqs(ops []StoreOp) []uint64 {
	var out []uint64
	for _, op := range ops {
		out = append(out, op.Seq)
	}
	return out
}

// One producer never waits: a batch with as many waiters as the last
// sync released is written at once.
func TestWriterOneProducerNeverWaits(t *testing.T) {
	r := startWriter(t, false)
	r.warm(t, 1, time.Millisecond)
	for seq := range uint64(3) {
		r.send([]StoreOp{addOp(seq, false)}, seq)
		if c := r.write(t, time.Millisecond); !slices.Equal(seqs(c.ops), []uint64{seq}) || !c.synced {
			t.Fatalf("write %+v, want add %d synced", c, seq)
		}
		r.done(t, nil, seq)
		r.notArmed(t)
	}
	r.stop(t)
}

// Idle gathering: after a sync released four producers, the first of them
// to send again waits for the other three, and the four are synced
// together; the window is the measured sync time.
func TestWriterGathersReleasedProducers(t *testing.T) {
	r := startWriter(t, false)
	r.warm(t, 4, 1500*time.Microsecond)
	r.send([]StoreOp{addOp(1, false)}, 1)
	if d := recv(t, r.clk.armed); d != 1500*time.Microsecond {
		t.Fatalf("gathering window %v, want the sync time 1.5ms", d)
	}
	r.send([]StoreOp{addOp(2, false)}, 2)
	r.send([]StoreOp{addOp(3, false)}, 3)
	r.send([]StoreOp{addOp(4, false)}, 4)
	c := r.next(t)
	if !slices.Equal(seqs(c.ops), []uint64{1, 2, 3, 4}) || !c.synced {
		t.Fatalf("write %+v, want adds 1-4 in one sync", c)
	}
	r.noCompletions(t)
	r.finish(time.Millisecond, nil)
	r.done(t, nil, 1, 2, 3, 4)
	if r.clk.active() {
		t.Fatal("the gathering timer still runs after the window closed early")
	}
	r.stop(t)
}

// The window is never longer than gatherMax, and when it ends the writer
// syncs what it has.
func TestWriterGatherWindowExpires(t *testing.T) {
	r := startWriter(t, false)
	r.warm(t, 4, time.Second) // a slow disk
	r.send([]StoreOp{addOp(1, false)}, 1)
	if d := recv(t, r.clk.armed); d != gatherMax {
		t.Fatalf("gathering window %v, want gatherMax %v", d, gatherMax)
	}
	r.clk.advance(gatherMax)
	if c := r.write(t, time.Second); !slices.Equal(seqs(c.ops), []uint64{1}) {
		t.Fatalf("write %+v, want add 1 alone", c)
	}
	r.done(t, nil, 1)
	r.stop(t)
}

// Under load: batches that arrive while a sync runs are merged into the
// next Apply, and the completions of a batch are released only after the
// Apply that holds it returns.
func TestWriterMergesBatchesDuringSync(t *testing.T) {
	r := startWriter(t, false)
	r.send([]StoreOp{addOp(1, false)}, 1)
	c := r.next(t)
	if !slices.Equal(seqs(c.ops), []uint64{1}) {
		t.Fatalf("first write %+v, want add 1", c)
	}
	r.send([]StoreOp{addOp(2, false)}, 2)
	r.send([]StoreOp{addOp(3, false)}, 3)
	r.send([]StoreOp{addOp(4, false)}, 4)
	r.noCompletions(t)
	r.finish(time.Millisecond, nil)
	r.done(t, nil, 1)
	c = r.next(t)
	if !slices.Equal(seqs(c.ops), []uint64{2, 3, 4}) || !c.synced {
		t.Fatalf("second write %+v, want adds 2-4 in one sync", c)
	}
	r.noCompletions(t)
	r.finish(time.Millisecond, nil)
	r.done(t, nil, 2, 3, 4)
	r.notArmed(t) // three waiters, the last sync released one
	r.stop(t)
}

// The cap: merging stops once a batch holds writeMaxOps operations; what
// is left is the next write.
func TestWriterCapsMergedBatch(t *testing.T) {
	r := startWriter(t, false)
	r.send([]StoreOp{addOp(0, false)}, 0)
	r.next(t) // held while three big batches queue up
	big := func(from uint64) []StoreOp {
		ops := make([]StoreOp, writeMaxOps/2+1)
		for i := range ops {
			ops[i] = addOp(from+uint64(i), false)
		}
		return ops
	}
	r.send(big(1_000_000), 1)
	r.send(big(2_000_000), 2)
	r.send(big(3_000_000), 3, 4) // as many waiters as the write before
	r.finish(time.Millisecond, nil)
	r.done(t, nil, 0)
	c := r.write(t, time.Millisecond)
	if len(c.ops) != 2*(writeMaxOps/2+1) || c.ops[0].Seq != 1_000_000 || c.ops[len(c.ops)-1].Seq != 2_000_000+writeMaxOps/2 {
		t.Fatalf("first merged write has %d ops, want the first two batches (%d)", len(c.ops), 2*(writeMaxOps/2+1))
	}
	r.done(t, nil, 1, 2)
	c = r.write(t, time.Millisecond)
	if len(c.ops) != writeMaxOps/2+1 || c.ops[0].Seq != 3_000_000 {
		t.Fatalf("second merged write has %d ops from %d, want the third batch", len(c.ops), c.ops[0].Seq)
	}
	r.done(t, nil, 3, 4)
	r.stop(t)
}

// The byte cap: merging stops once the merged batch carries
// writeMaxBytes of messages, however few operations that is; a batch is
// never split.
func TestWriterCapsMergedBytes(t *testing.T) {
	r := startWriter(t, false)
	r.send([]StoreOp{addOp(0, false)}, 0)
	r.next(t) // held while three big batches queue up
	big := func(seq uint64) []StoreOp {
		op := addOp(seq, false)
		op.Msg = &message.Message{Body: make([]byte, writeMaxBytes/2+1)}
		return []StoreOp{op}
	}
	r.send(big(1), 1)
	r.send(big(2), 2)
	r.send(big(3), 3, 4) // as many waiters as the write before
	r.finish(time.Millisecond, nil)
	r.done(t, nil, 0)
	c := r.write(t, time.Millisecond)
	if !slices.Equal(seqs(c.ops), []uint64{1, 2}) {
		t.Fatalf("first merged write %v, want adds 1 and 2 (past writeMaxBytes, not split)", seqs(c.ops))
	}
	r.done(t, nil, 1, 2)
	c = r.write(t, time.Millisecond)
	if !slices.Equal(seqs(c.ops), []uint64{3}) {
		t.Fatalf("second merged write %v, want add 3", seqs(c.ops))
	}
	r.done(t, nil, 3, 4)
	r.stop(t)
}

// The deadline: when batches keep coming, each one restarting the wait,
// the window still ends at its deadline even though the timer's fire was
// not seen.
func TestWriterDeadlineWhenBatchesKeepComing(t *testing.T) {
	r := startWriter(t, false)
	r.warm(t, 4, time.Millisecond)
	r.send([]StoreOp{addOp(1, false)}, 1)
	recv(t, r.clk.armed)
	r.clk.skip(2 * time.Millisecond) // past the deadline; the timer lags
	r.send([]StoreOp{addOp(2, false)}, 2)
	if c := r.write(t, time.Millisecond); !slices.Equal(seqs(c.ops), []uint64{1, 2}) {
		t.Fatalf("write %+v, want adds 1 and 2 at the deadline", c)
	}
	r.done(t, nil, 1, 2)
	r.notArmed(t) // one window, not a second one
	r.stop(t)
}

// concurrentStoreAndDispatchQueues: the writer waits for the ack of a
// message it dispatched at once; when the ack comes in time, the add, the
// redelivery-count update and the remove cancel out and only the rest is
// written. A batch of cancelled writes alone needs no Apply.
func TestWriterCancelsConsumedAdds(t *testing.T) {
	r := startWriter(t, true)
	r.warm(t, 1, time.Millisecond)
	r.send([]StoreOp{addOp(1, true), addOp(2, false)}, 1)
	recv(t, r.clk.armed) // one producer, but an ack to wait for
	r.send([]StoreOp{{Kind: OpUpdate, Dest: writerQ, Seq: 1, Count: 1}, removeOp(1)})
	c := r.write(t, time.Millisecond)
	if !slices.Equal(seqs(c.ops), []uint64{2}) || c.ops[0].Kind != OpAdd {
		t.Fatalf("write %+v, want add 2 alone", c)
	}
	r.done(t, nil, 1)

	r.send([]StoreOp{addOp(3, true)}, 3)
	recv(t, r.clk.armed)
	r.send([]StoreOp{removeOp(3)})
	r.done(t, nil, 3) // nothing left to write: released without an Apply
	r.stop(t)
	select {
	case c := <-r.st.calls:
		t.Fatalf("write %+v of a batch whose writes all cancelled", c)
	default:
	}
	if r.w.acks.score != 2 {
		t.Fatalf("ack-wait score %d after two hits, want 2", r.w.acks.score)
	}
}

// Queue messages not dispatched at once are not waited for, and a topic
// add never cancels against a remove.
func TestWriterCancelsOnlyQueueAdds(t *testing.T) {
	r := startWriter(t, true)
	r.warm(t, 1, time.Millisecond)
	topic := message.TopicDest("writer.t")
	r.send([]StoreOp{{Kind: OpAdd, Dest: topic, Seq: 1}, {Kind: OpRemove, Dest: topic, Seq: 1}, addOp(2, false)}, 1)
	if c := r.write(t, time.Millisecond); len(c.ops) != 3 {
		t.Fatalf("write %+v, want all three ops", c)
	}
	r.done(t, nil, 1)
	r.notArmed(t)
	r.stop(t)
}

// After an ack wait that times out (late consumers) the writer stops
// waiting for acks, and tries again after four batches.
func TestWriterAckWaitBacksOffAfterLateAcks(t *testing.T) {
	r := startWriter(t, true)
	r.warm(t, 1, time.Millisecond)
	miss := func(seq uint64) {
		t.Helper()
		r.send([]StoreOp{addOp(seq, true)}, seq)
		d := recv(t, r.clk.armed)
		r.clk.advance(d) // the ack does not come in time
		if c := r.write(t, time.Millisecond); !slices.Equal(seqs(c.ops), []uint64{seq}) {
			t.Fatalf("write %+v, want add %d", c, seq)
		}
		r.done(t, nil, seq)
	}
	miss(1)
	for seq := uint64(2); seq < 6; seq++ {
		r.send([]StoreOp{addOp(seq, true)}, seq)
		if c := r.write(t, time.Millisecond); !slices.Equal(seqs(c.ops), []uint64{seq}) {
			t.Fatalf("write %+v, want add %d", c, seq)
		}
		r.done(t, nil, seq)
		r.notArmed(t)
	}
	miss(6) // the fifth batch after the miss waits again
	r.stop(t)
}

// A batch no completion waits for (unconfirmed acks) is written without a
// sync; one with a waiter, or on a store that cannot skip the sync, is
// synced. A batch with waiters and no writes releases them without a
// write.
func TestWriterSyncsOnlyForWaiters(t *testing.T) {
	r := startWriter(t, false)
	r.send([]StoreOp{removeOp(1)})
	if c := r.write(t, time.Millisecond); c.synced {
		t.Fatalf("write %+v of a batch no one waits for was synced", c)
	}
	r.send([]StoreOp{removeOp(2)}, 2)
	if c := r.write(t, time.Millisecond); !c.synced {
		t.Fatalf("write %+v with a waiter was not synced", c)
	}
	r.done(t, nil, 2)
	r.send(nil, 3)
	r.done(t, nil, 3)
	r.stop(t)

	st := newFakeStore()
	r = startWriterOn(t, st, &syncOnlyStore{st}, false)
	r.send([]StoreOp{removeOp(1)})
	if c := r.write(t, time.Millisecond); !c.synced {
		t.Fatalf("write %+v on a store without ApplyNoSync was not synced", c)
	}
	r.stop(t)
}

// A store error reaches every completion of the batch that failed, except
// those that carry an error of their own; the next batch is unaffected.
func TestWriterStoreErrorReachesCompletions(t *testing.T) {
	r := startWriter(t, false)
	errDisk := errors.New("disk on fire")
	errOwn := errors.New("refused")
	r.w.in <- writeBatch{ops: []StoreOp{addOp(1, false)}, comps: []completion{
		{comp: r.comps, token: 1},
		{comp: r.comps, token: 2, err: errOwn},
		{comp: r.comps, token: 3},
	}}
	r.next(t)
	r.finish(time.Millisecond, errDisk)
	r.done(t, errDisk, 1)
	r.done(t, errOwn, 2)
	r.done(t, errDisk, 3)
	r.send([]StoreOp{addOp(2, false)}, 4)
	r.clk.advance(recv(t, r.clk.armed)) // no other producer comes back
	r.write(t, time.Millisecond)
	r.done(t, nil, 4)
	r.stop(t)
}

// Housekeeping asked for by the tick runs on the writer, after the write
// of the batch it came with.
func TestWriterHousekeepsAfterWrite(t *testing.T) {
	r := startWriter(t, false)
	r.send([]StoreOp{addOp(1, false)}, 1)
	r.next(t)
	r.w.in <- writeBatch{housekeep: true}
	r.send([]StoreOp{addOp(2, false)}, 2)
	r.finish(time.Millisecond, nil)
	r.done(t, nil, 1)
	r.next(t)
	if len(r.st.housekept) != 0 {
		t.Fatal("housekeeping ran before the write of its batch")
	}
	r.finish(time.Millisecond, nil)
	recv(t, r.st.housekept)
	r.done(t, nil, 2)
	r.stop(t)
}

// Stopping the writer ends a gathering window and writes what it holds.
func TestWriterStopWritesWhatItHolds(t *testing.T) {
	r := startWriter(t, false)
	r.warm(t, 4, time.Millisecond)
	r.send([]StoreOp{addOp(1, false)}, 1)
	recv(t, r.clk.armed)
	close(r.w.in)
	r.write(t, time.Millisecond)
	r.done(t, nil, 1)
	recv(t, r.w.done)
}

// Consumers that ack late make the writer stop waiting for their acks,
// and it tries again now and then; prompt acks keep it waiting.
func TestAckWaitsBackOff(t *testing.T) {
	var a ackWaits
	if !a.worth() {
		t.Fatal("a new writer does not wait for acks")
	}
	a.record(true, false) // a wait that timed out
	waits := 0
	for range 20 {
		if a.worth() {
			waits++
			a.record(true, false) // late consumers: every wait times out
		} else {
			a.record(false, false)
		}
	}
	if waits < 3 || waits > 5 {
		t.Fatalf("with late acks the writer waited in %d of 20 batches, want about one in five", waits)
	}
	for !a.worth() {
		a.record(false, false)
	}
	for range 20 {
		if !a.worth() {
			t.Fatal("prompt acks: the writer stopped waiting")
		}
		a.record(true, true)
	}
	if a.score != 16 {
		t.Fatalf("score %d after a run of hits, want the cap 16", a.score)
	}
	// Capped: a run of hits buys four misses' worth of patience.
	for range 4 {
		a.record(true, false)
	}
	if !a.worth() {
		t.Fatal("four misses after many hits stopped the waits")
	}
	a.record(true, false)
	if a.worth() {
		t.Fatal("a fifth miss in a row did not stop the waits")
	}
}

// TestWriterSlowSyncWarning: a synced write slower than the threshold is
// logged in ActiveMQ's words ("Slow KahaDB access"), at most once per
// slowLogEvery, with the count of the slow writes it did not log. The
// fake clock makes each write take what the test says.
func TestWriterSlowSyncWarning(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	st := newFakeStore()
	r := &writerRig{st: st, clk: newFakeClock(), comps: make(fakeComps, 1024)}
	r.w = newWriter(st, lg, false, r.clk, 4)
	r.w.slow = 500 * time.Millisecond
	go r.w.run()
	const phrase = "Slow KahaDB access"
	steps := []struct {
		took   time.Duration
		logged int // lines with the phrase after this write
	}{
		{600 * time.Millisecond, 1}, // slow: logged
		{100 * time.Millisecond, 1}, // fast
		{700 * time.Millisecond, 1}, // slow, within 10 s of the first: held back
		{11 * time.Second, 2},       // slow, past the interval: logged
	}
	for i, s := range steps {
		tok := uint64(i + 1)
		r.send([]StoreOp{addOp(tok, false)}, tok)
		r.write(t, s.took)
		r.done(t, nil, tok) // released after the line is logged
		if n := len(logs.Find(phrase)); n != s.logged {
			t.Fatalf("after write %d (%v): %d slow-access lines, want %d", tok, s.took, n, s.logged)
		}
	}
	recs := logs.Find(phrase)
	first, last := recs[0].Attrs, recs[1].Attrs
	if recs[0].Level != slog.LevelWarn || first["took_ms"] != int64(600) || first["threshold_ms"] != int64(500) || first["slow_writes_not_logged"] != int64(0) {
		t.Errorf("first slow-access line %v %v", recs[0].Level, first)
	}
	if last["took_ms"] != int64(11000) || last["slow_writes_not_logged"] != int64(1) {
		t.Errorf("second slow-access line %v: want took_ms 11000 and 1 slow write not logged", last)
	}
	r.stop(t)
}

// A store that fails every write (stopped after a failed fsync, a full
// disk) is logged once per slowLogEvery, with the count of failures the
// line stands for; every producer still gets the error.
func TestWriterStoreErrorLogThrottled(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	st := newFakeStore()
	r := &writerRig{st: st, clk: newFakeClock(), comps: make(fakeComps, 1024)}
	r.w = newWriter(st, lg, false, r.clk, 4)
	go r.w.run()
	errDisk := errors.New("no space left on device")
	const phrase = "store write failed"
	for i, took := range []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond, 11 * time.Second} {
		tok := uint64(i + 1)
		r.send([]StoreOp{addOp(tok, false)}, tok)
		r.next(t)
		r.finish(took, errDisk)
		r.done(t, errDisk, tok)
		want := 1
		if i == 3 {
			want = 2
		}
		if n := len(logs.Find(phrase)); n != want {
			t.Fatalf("after failed write %d: %d %q lines, want %d", tok, n, phrase, want)
		}
	}
	recs := logs.Find(phrase)
	if recs[0].Level != slog.LevelError || recs[0].Attrs["failed_writes_not_logged"] != int64(0) {
		t.Errorf("first line %v %v", recs[0].Level, recs[0].Attrs)
	}
	if recs[1].Attrs["failed_writes_not_logged"] != int64(2) {
		t.Errorf("second line %v: want 2 failed writes not logged", recs[1].Attrs)
	}
	r.stop(t)
}

// slowHousekeeper is a fake store whose housekeeping takes 2 s of the
// fake clock.
type slowHousekeeper struct {
	*fakeStore
	clk *fakeClock
}

func (s slowHousekeeper) Housekeep() error {
	s.clk.skip(2 * time.Second)
	return s.fakeStore.Housekeep()
}

// TestWriterSlowCleanupWarning: housekeeping (journal cleanup, checkpoint)
// slower than the threshold is logged as ActiveMQ's "Slow KahaDB access:
// cleanup took".
func TestWriterSlowCleanupWarning(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	st := newFakeStore()
	r := &writerRig{st: st, clk: newFakeClock(), comps: make(fakeComps, 1024)}
	r.w = newWriter(slowHousekeeper{st, r.clk}, lg, false, r.clk, 4)
	r.w.slow = 500 * time.Millisecond
	go r.w.run()
	r.w.in <- writeBatch{ops: []StoreOp{addOp(1, false)}, comps: []completion{{comp: r.comps, token: 1}}, housekeep: true}
	r.write(t, time.Millisecond)
	r.done(t, nil, 1)
	recv(t, st.housekept)
	r.stop(t) // the writer has logged all it will
	recs := logs.Find("Slow KahaDB access: cleanup took")
	if len(recs) != 1 || recs[0].Attrs["took_ms"] != int64(2000) {
		t.Fatalf("slow cleanup lines %v, want one that took 2000 ms", recs)
	}
	if n := len(logs.Find("Journal append took")); n != 0 {
		t.Errorf("%d slow append lines for a 1 ms write", n)
	}
}
