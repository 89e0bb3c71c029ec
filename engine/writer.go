package engine

import (
	"log/slog"
	"time"

	"wharf/engine/message"
)

// writeBatch is one turn of a shard's loop, handed to its writer.
type writeBatch struct {
	ops   []StoreOp
	comps []completion
	// housekeep: the tick asks for the store's timed work (Housekeeper).
	housekeep bool
}

// ackWaitMaxOps: a merged batch bigger than this is not held back for
// acks (a busy shard cancels plenty without waiting, and the check is
// linear in the batch).
const ackWaitMaxOps = 4 * maxBatch

// writeMaxOps caps how many operations the writer merges into one Apply.
const writeMaxOps = 64 * maxBatch

// writeMaxBytes caps the message bytes (opBytes) the writer merges into
// one Apply: a store that holds a whole Apply in memory before it commits
// it (storage/lsm: one badger transaction, bounded by its memtable) gets
// batches of a bounded size however many sends queued up during a slow
// sync. One shard batch is never split (its operations are atomic), so an
// Apply can exceed it by one batch. 4 MiB still makes a journal write of
// dozens of 64 KiB messages per sync.
const writeMaxBytes = 4 << 20

// gatherMax bounds how long the writer waits for the waiters of the last
// synced batch to send again (see writer.run).
const gatherMax = 2 * time.Millisecond

// writer is the group-commit writer of a shard whose store syncs
// (Syncer): it applies the shard's batches in order on a goroutine of its
// own (run), merging those that queued up while it was busy into one
// Apply, and only then releases their completions. The shard starts it
// (go run) when it opens a syncing store and stops it (stop) after its
// loop has ended. The shard only sends on in; every other field belongs to
// the goroutine running run.
//
// Ordering: a completion is released only after the Apply (or ApplyNoSync,
// for a batch no completion waits for) that holds its batch's operations
// has returned, with that Apply's error; deliveries were made by the shard
// during the turn, before its batch reached the writer.
type writer struct {
	in   chan writeBatch // the shard's batches; closed by stop
	done chan struct{}   // closed when run has written the last batch

	store ShardStore
	// nosync and hk are store's optional faces, nil when it has none.
	nosync NoSyncApplier
	hk     Housekeeper
	log    *slog.Logger
	clock  writerClock
	// csd: wait for the acks of queue messages dispatched at once and
	// cancel their writes (Options.ConcurrentStoreAndDispatchQueues).
	csd bool

	// ops and comps are the merged batch being written, reused; bytes
	// are the message bytes of ops (opBytes).
	ops   []StoreOp
	comps []completion
	bytes int64
	// housekeep: some merged batch asked for the store's timed work.
	housekeep bool

	// Gathering: the waiters one synced Apply released (producers whose
	// sends it held) mostly send again at once. Syncing the first of them
	// alone splits them into cohorts that then alternate, each with its
	// own fsync: with 4 synchronous producers, 2 messages per fsync. So
	// when a batch holds fewer waiters than the last synced one released,
	// the writer waits for the others, at most as long as a sync takes
	// and never more than gatherMax, before it syncs. One producer never
	// waits; four get four sends per sync instead of two.
	released int
	syncTime time.Duration // moving average of a synced Apply
	// Waiting for acks (concurrentStoreAndDispatchQueues): a queue message
	// handed to a consumer in the turn it arrived is often acknowledged
	// within a round trip; when its ack reaches the batch first, add and
	// remove cancel out (cancelConsumed) and nothing is synced for it, as
	// ActiveMQ skips the journal write of a message consumed before its
	// store task ran. The writer waits for such acks as for gathering,
	// while they keep coming in time (ackWaits).
	acks ackWaits

	// slow: a synced Apply that takes longer is logged as ActiveMQ's
	// "Slow KahaDB access" (Options.SlowStoreThreshold); 0 logs none.
	slow time.Duration
	// slowLogged is when the last slow Apply was logged, slowHeld how
	// many were not since (one line per slowLogEvery).
	slowLogged time.Time
	slowHeld   int
	// errLogged and errHeld are the same for failed writes (errorWrite).
	errLogged time.Time
	errHeld   int
}

// slowLogEvery bounds the slow-store warnings to one per interval: a disk
// that stalls stalls every batch.
const slowLogEvery = 10 * time.Second

// writerClock is the time the writer reads: Now to measure its syncs and
// its gathering windows, and a timer that ends a window. It measures the
// disk, not the broker's calendar, so the engine gives it the real clock
// (realClock), not Options.Now, which tests freeze and jump; the writer's
// own tests drive a fake one.
type writerClock interface {
	Now() time.Time
	// NewTimer returns a stopped timer.
	NewTimer() writerTimer
}

// writerTimer is the part of a time.Timer the writer uses.
type writerTimer interface {
	Reset(d time.Duration) bool
	Stop() bool
	Chan() <-chan time.Time
}

// realClock is the writerClock of time.Now and time.Timer.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer() writerTimer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return realTimer{t}
}

type realTimer struct{ *time.Timer }

func (t realTimer) Chan() <-chan time.Time { return t.C }

// newWriter returns the writer of store, not yet running. The shard's
// batches queue in a channel of queued places.
func newWriter(store ShardStore, log *slog.Logger, csd bool, clock writerClock, queued int) *writer {
	w := &writer{
		in:    make(chan writeBatch, queued),
		done:  make(chan struct{}),
		store: store,
		log:   log,
		clock: clock,
		csd:   csd,
	}
	w.nosync, _ = store.(NoSyncApplier)
	w.hk, _ = store.(Housekeeper)
	return w
}

// stop closes the writer's input and waits until it has written every
// batch it was given. Called by the shard once its loop has ended.
func (w *writer) stop() {
	close(w.in)
	<-w.done
}

// take adds b to the merged batch.
func (w *writer) take(b writeBatch) {
	for i := range b.ops {
		w.bytes += opBytes(&b.ops[i])
	}
	w.ops = append(w.ops, b.ops...)
	w.comps = append(w.comps, b.comps...)
	w.housekeep = w.housekeep || b.housekeep
}

// run is the writer goroutine: it takes batches until stop, and writes
// each merged batch (write).
func (w *writer) run() {
	defer close(w.done)
	gather := w.clock.NewTimer()
	defer gather.Stop()
	for b := range w.in {
		w.ops, w.comps, w.housekeep, w.bytes = w.ops[:0], w.comps[:0], false, 0
		w.take(b)
		w.merge(gather)
		w.write()
	}
}

// merge adds to the batch just taken those that are already queued, up to
// writeMaxOps operations or writeMaxBytes, and, when the last synced batch released more waiters than
// this one holds or when dispatched adds await their acks, waits for more,
// at most min(syncTime, gatherMax).
func (w *writer) merge(gather writerTimer) {
	armed, expired, waitedAcks := false, false, false
	var deadline time.Time
more:
	for len(w.ops) < writeMaxOps && w.bytes < writeMaxBytes {
		select {
		case b, ok := <-w.in:
			if !ok {
				break more
			}
			w.take(b)
			continue
		default:
		}
		if expired || len(w.ops) == 0 || len(w.comps) == 0 || w.syncTime == 0 {
			break more
		}
		if armed && w.clock.Now().After(deadline) {
			break more // batches kept coming: the timer never won
		}
		awaitAcks := false
		if w.csd && w.acks.worth() && len(w.ops) <= ackWaitMaxOps {
			w.ops = cancelConsumed(w.ops)
			awaitAcks = awaitingAck(w.ops)
		}
		if !awaitAcks && len(w.comps) >= w.released {
			break more
		}
		waitedAcks = waitedAcks || awaitAcks
		if !armed {
			wait := min(w.syncTime, gatherMax)
			// The deadline is taken before the timer is armed: a clock
			// read after could already be past the timer's start (a
			// test's fake clock moves as soon as it sees the timer armed),
			// and the window would then outlast its timer.
			deadline = w.clock.Now().Add(wait)
			gather.Reset(wait)
			armed = true
		}
		select {
		case b, ok := <-w.in:
			if !ok {
				break more
			}
			w.take(b)
		case <-gather.Chan():
			expired = true
		}
	}
	if armed && !expired {
		gather.Stop()
	}
	if w.csd {
		w.ops = cancelConsumed(w.ops)
		w.acks.record(waitedAcks, !awaitingAck(w.ops))
	}
}

// write applies the merged batch, then releases its completions with the
// store's error, then runs the housekeeping it asked for.
func (w *writer) write() {
	ops, comps := w.ops, w.comps
	var storeErr error
	if len(ops) > 0 {
		if w.nosync != nil && len(comps) == 0 {
			storeErr = w.nosync.ApplyNoSync(ops)
		} else {
			start := w.clock.Now()
			storeErr = w.store.Apply(ops)
			end := w.clock.Now()
			d := end.Sub(start)
			if w.slow > 0 && d > w.slow {
				w.warnSlow(slowAppend, end, d, len(ops))
			}
			if w.syncTime == 0 {
				w.syncTime = d
			} else {
				w.syncTime += (d - w.syncTime) / 4
			}
		}
		if storeErr != nil {
			w.errorWrite(storeErr, len(ops))
		}
	}
	for i := range comps {
		c := &comps[i]
		err := c.err
		if err == nil {
			err = storeErr
		}
		c.comp.Complete(c.token, err)
	}
	if len(comps) > 0 {
		// Whether synced or not (all its writes cancelled), these
		// waiters are back soon. Counted only from a synced Apply,
		// a stale count from a busier time kept every later batch
		// waiting for producers that were not there.
		w.released = len(comps)
	}
	clear(ops)
	clear(comps)
	if w.housekeep {
		start := w.clock.Now()
		if err := w.hk.Housekeep(); err != nil {
			w.log.Error("store housekeeping failed", "err", err)
		}
		if end := w.clock.Now(); w.slow > 0 && end.Sub(start) > w.slow {
			w.warnSlow(slowCleanup, end, end.Sub(start), 0)
		}
	}
}

// The slow-store warnings, in MessageDatabase's words: "Slow KahaDB
// access: Journal append took: N ms, Index update took: M ms" (Wharf's
// index update is in memory, so the append and its fsync are the whole
// time) and "Slow KahaDB access: cleanup took N" (the housekeeping:
// journal cleanup and checkpoint).
const (
	slowAppend  = "Slow KahaDB access: Journal append took longer than the threshold"
	slowCleanup = "Slow KahaDB access: cleanup took longer than the threshold"
)

// warnSlow logs a synced Apply or a housekeeping run that took d, at most
// one line per slowLogEvery, with the count of the slow ones not logged.
func (w *writer) warnSlow(msg string, now time.Time, d time.Duration, ops int) {
	if !w.slowLogged.IsZero() && now.Sub(w.slowLogged) < slowLogEvery {
		w.slowHeld++
		return
	}
	w.slowLogged = now
	held := w.slowHeld
	w.slowHeld = 0
	w.log.Warn(msg, "took_ms", d.Milliseconds(), "threshold_ms", w.slow.Milliseconds(), "ops", ops, "slow_writes_not_logged", held)
}

// errorWrite logs a failed store write: the first at once, then at most
// one line every slowLogEvery with the count of failures it stands for. A
// stopped store (a failed fsync, a full disk) fails every batch until it
// recovers, and each producer is told so already; the log needs the fact,
// not a line per batch.
func (w *writer) errorWrite(err error, ops int) {
	now := w.clock.Now()
	if !w.errLogged.IsZero() && now.Sub(w.errLogged) < slowLogEvery {
		w.errHeld++
		return
	}
	w.errLogged = now
	held := w.errHeld
	w.errHeld = 0
	w.log.Error("store write failed", "ops", ops, "err", err, "failed_writes_not_logged", held)
}

// ackWaits decides whether the writer waits for the acks of messages it
// dispatched at once. A wait that ends with every such add cancelled raises
// the score, one that times out lowers it four times as much; below 0 the
// writer does not wait (the consumers ack late) but each batch raises the
// score by one, so after a run of misses it tries again every few batches.
type ackWaits struct{ score int }

func (a *ackWaits) worth() bool { return a.score >= 0 }

// record notes how a batch went: whether the writer waited for acks, and
// whether every dispatched add in it was cancelled.
func (a *ackWaits) record(waited, allCancelled bool) {
	switch {
	case waited && !allCancelled:
		a.score = max(a.score-4, -64)
	case waited:
		a.score = min(a.score+1, 16)
	case a.score < 0:
		a.score++
	}
}

// awaitingAck reports whether ops hold the add of a queue message that
// was handed to a consumer at once and whose ack has not come yet.
func awaitingAck(ops []StoreOp) bool {
	for i := range ops {
		if ops[i].dispatched && ops[i].Kind == OpAdd {
			return true
		}
	}
	return false
}

// cancelConsumed drops, from one merged batch, the writes of queue
// messages that were consumed before the batch reached the disk: an add and
// the remove of the same message cancel out, with any redelivery-count
// update between them (ActiveMQ's concurrentStoreAndDispatchQueues: a
// message acknowledged before its journal write is never written). The
// batch is applied atomically either way, so a crash recovers the same
// state. The producers are still answered after the Apply of the batch.
func cancelConsumed(ops []StoreOp) []StoreOp {
	type key struct {
		d   message.Destination
		seq uint64
	}
	var adds map[key]int
	var cancelled map[key]bool
	for i := range ops {
		op := &ops[i]
		switch {
		case op.Kind == OpAdd && !op.Dest.Type.IsTopic():
			if adds == nil {
				adds = map[key]int{}
			}
			adds[key{op.Dest, op.Seq}] = i
		case op.Kind == OpRemove && adds != nil:
			k := key{op.Dest, op.Seq}
			if j, ok := adds[k]; ok {
				ops[j].Kind, op.Kind = 0, 0
				delete(adds, k)
				if cancelled == nil {
					cancelled = map[key]bool{}
				}
				cancelled[k] = true
			}
		}
	}
	if cancelled == nil {
		return ops
	}
	out := ops[:0]
	for _, op := range ops {
		if op.Kind == 0 || op.Kind == OpUpdate && cancelled[key{op.Dest, op.Seq}] {
			continue // consumed before it was written: nothing to write
		}
		out = append(out, op)
	}
	clear(ops[len(out):])
	return out
}

// opBytes is what op carries of messages, for writeMaxBytes: the size of
// the message it adds, schedules or prepares to send.
func opBytes(op *StoreOp) int64 {
	var n int64
	if op.Msg != nil {
		n += int64(op.Msg.Size())
	}
	if op.Job != nil && op.Job.Msg != nil {
		n += int64(op.Job.Msg.Size())
	}
	if op.Tx != nil {
		for _, m := range op.Tx.Adds {
			n += int64(m.Size())
		}
	}
	return n
}
