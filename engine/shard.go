package engine

import (
	"log/slog"
	"sync"

	"wharf/engine/message"
)

// maxBatch bounds how many commands one turn of the loop applies before
// its batch is executed: the store written, completions released
// (turn.go).
const maxBatch = 512

// shard owns a set of destinations. Everything below the mailbox is touched
// only by the goroutine running run.
type shard struct {
	e     *Engine
	idx   int
	inbox chan command
	quit  chan struct{}
	log   *slog.Logger
	// dropLogged (shard time, ms) and dropHeld rate-limit the "dead
	// letter dropped" warning (deadLetter).
	dropLogged int64
	dropHeld   int

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

	// out is the turn's output (turn.go), reused from turn to turn.
	out     batch
	now     int64 // ms, read once per turn of the loop
	free    []*entry
	scratch []*part
	// recovering: recover is re-creating what the store holds, which it
	// need not be told again (no OpAddDest).
	recovering bool
	// recovered is what recover found (Engine.Recovered).
	recovered Recovery

	nextDurableCheck int64 // ms

	retainNext uint64 // the last sequence used under RetainStore

	// Producer flow control: destinations with parked sends, and whether
	// this turn freed memory (other shards' blocked producers may go on).
	blocked map[*destination]struct{}
	freed   bool

	// writer, when the store syncs (Syncer), takes each turn's batch and
	// writes it on a goroutine of its own (writer.go); nil otherwise.
	writer *writer

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
	// subj is the client whose send is being applied (sendAs), nil while
	// the shard applies its own messages.
	subj *Subject
	// stats: keep the timing and size statistics (not
	// Options.DisableStatistics), read once here off the message path.
	keepStats bool
}

func newShard(e *Engine, idx int) *shard {
	return &shard{
		e:         e,
		idx:       idx,
		inbox:     make(chan command, e.opts.InboxSize),
		quit:      make(chan struct{}),
		mailSig:   make(chan struct{}, 1),
		log:       e.log.With("shard", idx),
		dests:     map[message.Destination]*destination{},
		parts:     map[*Subscription]*part{},
		durables:  map[SubKey]*part{},
		now:       e.now().UnixMilli(),
		keepStats: !e.opts.DisableStatistics,
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
	// wasDelivered: tx is a real transaction that took the entry over from
	// deliveredMark (a DELIVERED ack came first); a restore gives it back.
	wasDelivered bool
	// What ordering and expiry need while msg is spilled (spill.go): the
	// message's priority and expiration (ms, 0 never).
	prio uint8
	exp  int64
	// Where the message is while msg is nil: tmp, in the temp store
	// (spilled); else ref, in the store (a stub recovered by
	// MessageLoader.RecoverStubs).
	tmp TempRef
	ref StoreRef
	// in is when the message entered the destination (ms), the start of
	// its enqueue time (deliver). DEVIATION: a recovered message's is the
	// recovery's; ActiveMQ keeps the brokerInTime in the stored message,
	// so its enqueue time spans the restart.
	in int64
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
	*e = entry{seq: seq, msg: m, dest: d, redeliveries: m.RedeliveryCounter, size: size, prio: m.Priority, exp: m.Expiration, in: s.now}
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

// tick runs the periodic work that is due: expiry sweeps and the removal
// of durable subscriptions offline for too long.
func (s *shard) tick() {
	if len(s.blocked) > 0 {
		s.timeoutBlocked()
		s.retryBlocked()
		s.warnStillBlocked()
	}
	if t := s.e.opts.OfflineDurableSubscriberTimeout; t > 0 && s.now >= s.nextDurableCheck {
		s.nextDurableCheck = s.now + s.e.opts.OfflineDurableSubscriberTaskSchedule.Milliseconds()
		s.expireDurables(t.Milliseconds())
	}
	for _, d := range s.dests {
		if d.policy.ExpireMessagesPeriod <= 0 || s.now < d.nextSweep || d.paused {
			continue
		}
		d.nextSweep = s.now + d.policy.ExpireMessagesPeriod.Milliseconds()
		s.sweep(d)
	}
	s.replayDue()
	s.fireJobs() // scheduled messages due (the timer fires them too: scheduler.go)
	if _, ok := s.store.(Housekeeper); ok {
		s.out.housekeep = true // run with the batch, where Apply runs (turn.go execute)
	}
}
