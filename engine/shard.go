package engine

import (
	"log/slog"
	"sync"
	"time"

	"wharf/engine/message"
)

// Completion is told when a command is done: for a send, once the message is
// as durable as the store makes it. Complete is called from a shard
// goroutine and must not block. Protocols implement it once per connection
// and tell operations apart by token, so completing costs no allocation.
type Completion interface {
	Complete(token uint64, err error)
}

type cmdOp uint8

const (
	opSend     cmdOp = iota + 1 // msg from a connection
	opInternal                  // msg forwarded by another shard (DLQ moves)
	opAck                       // sub, id, flag = cumulative; comp told once durable
	opNack                      // sub, id, nack, cause; comp told once durable
	opKick                      // sub got credit
	opTick                      // timers
	opFn                        // run fn on the shard (control operations)
)

// command is what connections and other shards post to a shard. It is a
// value type so that posting it allocates nothing.
type command struct {
	op    cmdOp
	flag  bool
	nack  NackKind
	msg   *message.Message
	sub   *Subscription
	id    uint64
	cause string
	comp  Completion
	token uint64
	fn    func(*shard)
	subj  *Subject // opSend: who sends, for the admin check on creation
}

type completion struct {
	comp  Completion
	token uint64
	err   error
}

// maxBatch bounds how many commands one turn of the loop applies before it
// flushes the store and releases completions.
const maxBatch = 512

// shard owns a set of destinations. Everything below the mailbox is touched
// only by the goroutine running run.
type shard struct {
	e     *Engine
	idx   int
	inbox chan command
	quit  chan struct{}
	log   *slog.Logger

	// mailbox is for shard-to-shard and timer traffic. It is unbounded so
	// that two shards forwarding to each other cannot deadlock on full
	// inboxes; what enters it is bounded by what the inboxes let in.
	mu      sync.Mutex
	mail    []command
	spare   []command
	mailSig chan struct{}

	store ShardStore
	// loader reads back the messages the store recovered as stubs (nil
	// when it hands full messages).
	loader   MessageLoader
	dests    map[message.Destination]*destination
	parts    map[*Subscription]*part
	wild     []*part // parts with a wildcard pattern, attached to new destinations
	durables map[SubKey]*part

	ops     []StoreOp
	comps   []completion
	now     int64 // ms, read once per turn of the loop
	free    []*entry
	scratch []*part
	// recovering: recover is re-creating what the store holds, which it
	// need not be told again (no OpAddDest).
	recovering bool

	nextDurableCheck int64 // ms

	retainNext uint64 // the last sequence used under RetainStore

	// Producer flow control: destinations with parked sends, and whether
	// this turn freed memory (other shards' blocked producers may go on).
	blocked map[*destination]struct{}
	freed   bool

	// writer, when the store syncs (Syncer), takes each turn's batch to the
	// writer goroutine; writerDone closes when it has written the last.
	writer     chan writeBatch
	writerDone chan struct{}

	sched *scheduler // scheduled messages (scheduler.go); nil until the first

	// The delivery marks the turn raised (markDelivered), stored with its
	// batch.
	marked    []markRef
	markedSet map[markRef]struct{}

	// The temp store non-persistent messages spill to (spill.go), opened
	// on the first spill; tempBroken after it failed to open. spillBuf is
	// the encoding buffer, reused.
	temp          TempStore
	tempBroken    bool
	spillBuf      []byte
	lastSpillWarn int64 // ms
}

func newShard(e *Engine, idx int) *shard {
	return &shard{
		e:        e,
		idx:      idx,
		inbox:    make(chan command, e.opts.InboxSize),
		quit:     make(chan struct{}),
		mailSig:  make(chan struct{}, 1),
		log:      e.log.With("shard", idx),
		dests:    map[message.Destination]*destination{},
		parts:    map[*Subscription]*part{},
		durables: map[SubKey]*part{},
		now:      e.now().UnixMilli(),
	}
}

// post puts a command in the inbox, waiting while it is full.
func (s *shard) post(c command) error {
	select {
	case s.inbox <- c:
		return nil
	case <-s.quit:
		return ErrClosed
	}
}

// mailbox queues a command without waiting. Safe from any goroutine.
func (s *shard) mailbox(c command) {
	s.mu.Lock()
	s.mail = append(s.mail, c)
	s.mu.Unlock()
	select {
	case s.mailSig <- struct{}{}:
	default:
	}
}

func (s *shard) drainMail() {
	s.mu.Lock()
	batch := s.mail
	s.mail = s.spare[:0]
	s.mu.Unlock()
	for i := range batch {
		s.handle(batch[i])
		batch[i] = command{}
	}
	s.spare = batch
}

func (s *shard) run() {
	defer s.e.wg.Done()
	for {
		select {
		case c := <-s.inbox:
			s.now = s.e.now().UnixMilli()
			s.handle(c)
		case <-s.mailSig:
			s.now = s.e.now().UnixMilli()
			s.drainMail()
		case <-s.quit:
			for {
				select {
				case c := <-s.inbox:
					s.handle(c)
					continue
				default:
				}
				break
			}
			s.drainMail()
			for d := range s.blocked {
				for _, p := range d.blocked {
					s.complete(p.comp, p.token, ErrClosed)
				}
			}
			s.flush()
			s.closeTemp()
			return
		}
	batch:
		for i := 0; i < maxBatch; i++ {
			select {
			case c := <-s.inbox:
				s.handle(c)
			case <-s.mailSig:
				s.drainMail()
			default:
				break batch
			}
		}
		s.endTurn()
		s.flush()
	}
}

// flush makes the turn's store operations durable with one Apply (group
// commit), then releases the completions that waited for them.
func (s *shard) flush() {
	if len(s.marked) > 0 {
		s.queueMarks()
	}
	if s.writer != nil {
		if len(s.ops) == 0 && len(s.comps) == 0 {
			return
		}
		// The batch now belongs to the writer; the next turn starts fresh
		// slices (one allocation per turn, not per message).
		s.writer <- writeBatch{ops: s.ops, comps: s.comps}
		s.ops, s.comps = nil, nil
		return
	}
	var storeErr error
	if len(s.ops) > 0 {
		if s.store != nil {
			storeErr = s.store.Apply(s.ops)
			if storeErr != nil {
				s.log.Error("store write failed", "ops", len(s.ops), "err", storeErr)
			}
		}
		clear(s.ops)
		s.ops = s.ops[:0]
	}
	for i := range s.comps {
		c := &s.comps[i]
		err := c.err
		if err == nil {
			err = storeErr
		}
		c.comp.Complete(c.token, err)
	}
	clear(s.comps)
	s.comps = s.comps[:0]
}

type writeBatch struct {
	ops   []StoreOp
	comps []completion
	// housekeep: the tick asks for the store's timed work (Housekeeper).
	housekeep bool
}

// housekeep gives the store its turn for timed work, on the goroutine that
// applies its batches.
func (s *shard) housekeep() {
	h, ok := s.store.(Housekeeper)
	if !ok {
		return
	}
	if s.writer != nil {
		s.writer <- writeBatch{housekeep: true}
		return
	}
	if err := h.Housekeep(); err != nil {
		s.log.Error("store housekeeping failed", "err", err)
	}
}

// ackWaitMaxOps: a merged batch bigger than this is not held back for
// acks (a busy shard cancels plenty without waiting, and the check is
// linear in the batch).
const ackWaitMaxOps = 4 * maxBatch

// gatherMax bounds how long the writer waits for the waiters of the last
// synced batch to send again (see write).
const gatherMax = 2 * time.Millisecond

// write is the writer goroutine of a shard whose store syncs: it applies
// batches in order, merging those that queued up while it was busy into one
// Apply, and only then releases their completions.
func (s *shard) write() {
	defer close(s.writerDone)
	var ops []StoreOp
	var comps []completion
	// Gathering: the waiters one synced Apply released (producers whose
	// sends it held) mostly send again at once. Syncing the first of them
	// alone splits them into cohorts that then alternate, each with its
	// own fsync: with 4 synchronous producers, 2 messages per fsync. So
	// when a batch holds fewer waiters than the last synced one released,
	// the writer waits for the others, at most as long as a sync takes
	// and never more than gatherMax, before it syncs. One producer never
	// waits; four get four sends per sync instead of two.
	var released int
	var syncTime time.Duration // moving average of a synced Apply
	// Waiting for acks (concurrentStoreAndDispatchQueues): a queue message
	// handed to a consumer in the turn it arrived is often acknowledged
	// within a round trip; when its ack reaches the batch first, add and
	// remove cancel out (cancelConsumed) and nothing is synced for it, as
	// ActiveMQ skips the journal write of a message consumed before its
	// store task ran. The writer waits for such acks as for gathering,
	// while they keep coming in time (ackWaits).
	csd := s.e.opts.ConcurrentStoreAndDispatchQueues
	var acks ackWaits
	gather := time.NewTimer(time.Hour)
	gather.Stop()
	defer gather.Stop()
	var housekeep bool
	take := func(b writeBatch) {
		ops = append(ops, b.ops...)
		comps = append(comps, b.comps...)
		housekeep = housekeep || b.housekeep
	}
	for b := range s.writer {
		ops, comps, housekeep = ops[:0], comps[:0], false
		take(b)
		armed, expired, waitedAcks := false, false, false
		var deadline time.Time
	more:
		for len(ops) < 64*maxBatch {
			select {
			case b, ok := <-s.writer:
				if !ok {
					break more
				}
				take(b)
				continue
			default:
			}
			if expired || len(ops) == 0 || len(comps) == 0 || syncTime == 0 {
				break more
			}
			if armed && time.Now().After(deadline) {
				break more // batches kept coming: the timer never won
			}
			awaitAcks := false
			if csd && acks.worth() && len(ops) <= ackWaitMaxOps {
				ops = cancelConsumed(ops)
				awaitAcks = awaitingAck(ops)
			}
			if !awaitAcks && len(comps) >= released {
				break more
			}
			waitedAcks = waitedAcks || awaitAcks
			if !armed {
				wait := min(syncTime, gatherMax)
				gather.Reset(wait)
				deadline = time.Now().Add(wait)
				armed = true
			}
			select {
			case b, ok := <-s.writer:
				if !ok {
					break more
				}
				take(b)
			case <-gather.C:
				expired = true
			}
		}
		if armed && !expired {
			gather.Stop()
		}
		if csd {
			ops = cancelConsumed(ops)
			acks.record(waitedAcks, !awaitingAck(ops))
		}
		var storeErr error
		if len(ops) > 0 {
			if ns, ok := s.store.(NoSyncApplier); ok && len(comps) == 0 {
				storeErr = ns.ApplyNoSync(ops)
			} else {
				start := time.Now()
				storeErr = s.store.Apply(ops)
				d := time.Since(start)
				if syncTime == 0 {
					syncTime = d
				} else {
					syncTime += (d - syncTime) / 4
				}
			}
			if storeErr != nil {
				s.log.Error("store write failed", "ops", len(ops), "err", storeErr)
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
			released = len(comps)
		}
		clear(ops)
		clear(comps)
		if housekeep {
			if err := s.store.(Housekeeper).Housekeep(); err != nil {
				s.log.Error("store housekeeping failed", "err", err)
			}
		}
	}
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

func (s *shard) complete(comp Completion, token uint64, err error) {
	if comp != nil {
		s.comps = append(s.comps, completion{comp, token, err})
	}
}

func (s *shard) handle(c command) {
	switch c.op {
	case opSend:
		err := s.mayCreate(c.subj, c.msg.Destination)
		if err == nil {
			if s.admit(c) {
				return // parked until there is room
			}
			err = s.send(c.msg)
		}
		s.complete(c.comp, c.token, err)
	case opInternal:
		if err := s.sendTo(c.msg, c.sub); err != nil {
			s.log.Warn("forwarded message dropped", "dest", c.msg.Destination.String(), "msg_id", c.msg.ID, "err", err)
		}
	case opAck:
		s.ack(c.sub, c.id, c.flag)
		// Told after the Apply of this turn's batch, which a completion
		// makes a synced one (write): a confirmed ack is on disk first.
		s.complete(c.comp, c.token, nil)
	case opNack:
		s.nack(c.sub, c.id, c.nack, c.cause)
		s.complete(c.comp, c.token, nil)
	case opKick:
		if p := s.parts[c.sub]; p != nil {
			s.dispatchPart(p)
		}
	case opTick:
		s.now = s.e.now().UnixMilli()
		s.tick()
	case opFn:
		c.fn(s)
	}
}

// entry is one message on one destination (queues) or for one subscription
// (topics), with what differs per copy.
type entry struct {
	seq          uint64
	msg          *message.Message
	dest         *destination
	redeliveries int32
	id           uint64 // delivery id while in flight
	stored       bool   // the store holds it (persistent, with a store)
	size         int64  // bytes counted in the memory (and store) usage
	tx           *tx    // the open transaction that acknowledged it, if any (identity only)
	// What ordering and expiry need while msg is spilled (spill.go): the
	// message's priority and expiration (ms, 0 never).
	prio uint8
	exp  int64
	// Where the message is while msg is nil: tmp, in the temp store
	// (spilled); else ref, in the store (a stub recovered by
	// MessageLoader.RecoverStubs).
	tmp TempRef
	ref StoreRef
}

// expired reports whether the entry's message is past its expiration at
// now (ms), without needing the message.
func (e *entry) expired(now int64) bool { return e.exp > 0 && e.exp <= now }

func (s *shard) allocEntry() *entry {
	if n := len(s.free); n > 0 {
		e := s.free[n-1]
		s.free = s.free[:n-1]
		return e
	}
	return new(entry)
}

func (s *shard) newEntry(seq uint64, m *message.Message, d *destination) *entry {
	e := s.allocEntry()
	size := int64(m.Size())
	*e = entry{seq: seq, msg: m, dest: d, redeliveries: m.RedeliveryCounter, size: size, prio: m.Priority, exp: m.Expiration}
	d.mem += size
	s.e.memUsed.Add(size)
	return e
}

// setStored records that the store holds e, for the store usage.
func (s *shard) setStored(e *entry) {
	if !e.stored {
		e.stored = true
		s.e.storeUsed.Add(e.size)
	}
}

func (s *shard) freeEntry(e *entry) {
	if e.msg == nil {
		s.releaseTemp(e) // spilled: it holds temp space, not memory
	} else if d := e.dest; d != nil {
		d.mem -= e.size
		s.e.memUsed.Add(-e.size)
		s.freed = true
	}
	if e.stored {
		s.e.storeUsed.Add(-e.size)
		s.freed = true // store room, for producers held back by the store limit
	}
	*e = entry{}
	if len(s.free) < 4096 {
		s.free = append(s.free, e)
	}
}

// mayCreate checks, when d does not exist yet, that subj may create it:
// ActiveMQ's authorization asks for admin rights on a destination that a
// send or subscribe would create.
func (s *shard) mayCreate(subj *Subject, d message.Destination) error {
	if s.dests[d] != nil || d.Type.IsTemp() {
		return nil
	}
	return s.e.opts.Authorizer.Authorize(subj, ActionAdmin, d)
}
