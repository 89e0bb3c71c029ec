package memory

import (
	"cmp"
	"slices"

	"wharf/engine"
	"wharf/engine/message"
)

// shard is the stored state of one shard. It is touched only by the
// goroutine that has it open (see Store.mu).
type shard struct {
	open *shardStore // the open ShardStore; nil when closed; guarded by Store.mu

	subs   map[engine.SubKey]subRecord
	subSeq uint64 // order of the next new subscription

	// dests are the destinations the shard knows: created by OpAddDest or
	// by the first OpAdd that stored a message on them, kept when they
	// drain, dropped by OpRemoveDest.
	dests map[message.Destination]*dest
	order []*dest // creation order; removed ones are filtered out on commit

	jobs   map[string]jobRecord // scheduled jobs by ID
	jobSeq uint64               // order of the next new job

	prepared map[string]txRecord // prepared XA transactions by XID string
	txSeq    uint64              // order of the next prepared transaction

	// marks are the delivery marks (engine.OpDelivered): the highest
	// sequence each durable subscription was handed on each topic.
	marks map[markKey]uint64
}

type markKey struct {
	sub  engine.SubKey
	dest message.Destination
}

type txRecord struct {
	tx    engine.PreparedTx // a copy: the slices are the store's own
	order uint64
}

type jobRecord struct {
	job   engine.Job // a copy: the engine's Job values are not shared
	order uint64     // when the ID was first added; Recover sorts by it
}

type subRecord struct {
	sub   engine.DurableSub
	order uint64 // when the key was first added; Recover sorts by it
}

func newShard() *shard {
	return &shard{
		subs:  make(map[engine.SubKey]subRecord),
		dests: make(map[message.Destination]*dest),
		jobs:  make(map[string]jobRecord),
	}
}

// dest holds the messages of one destination in add order.
//
// entries[head:] are the messages in add order; a slot whose msg is nil was
// removed. index maps a live sequence to its position in entries. Positions
// stay fixed during a batch (the undo log refers to them); the batch's commit
// advances head and compacts the slice once more than half of it is dead,
// which makes every removal O(1) amortised.
type dest struct {
	d       message.Destination
	topic   bool
	entries []entry
	index   map[uint64]int
	head    int
	live    int  // number of entries with a message
	peak    int  // largest live since index was made; a map never shrinks, so a big one is replaced once drained
	removed bool // dropped by OpRemoveDest in this batch or before
}

type entry struct {
	seq     uint64
	msg     *message.Message // nil: removed
	counter int32            // stored redelivery counter (OpUpdate)
	subs    []engine.SubKey  // topic: subscriptions still to acknowledge; owned, changed in place
}

func newDest(d message.Destination) *dest {
	return &dest{d: d, topic: d.Type.IsTopic(), index: make(map[uint64]int)}
}

// compactMin is the number of dead slots below which a destination's slice is
// not compacted: compacting a tiny slice often costs more than it saves.
const compactMin = 32

// bigIndex is the size, in messages, past which a drained destination gets a
// fresh index map instead of keeping the grown one.
const bigIndex = 1024

// tidy advances head past removed slots and compacts entries when most of it
// is dead. It runs between batches only.
func (d *dest) tidy() {
	for d.head < len(d.entries) && d.entries[d.head].msg == nil {
		d.head++
	}
	if d.live == 0 {
		if cap(d.entries) > bigIndex {
			d.entries = nil
		} else {
			clear(d.entries)
			d.entries = d.entries[:0]
		}
		if d.peak > bigIndex {
			d.index = make(map[uint64]int)
		}
		d.head, d.peak = 0, 0
		return
	}
	dead := len(d.entries) - d.live
	if dead < compactMin || dead <= d.live {
		return
	}
	rebuild := d.peak > bigIndex
	if rebuild {
		d.index = make(map[uint64]int, d.live)
		d.peak = d.live
	}
	n := 0
	for i := d.head; i < len(d.entries); i++ {
		if d.entries[i].msg == nil {
			continue
		}
		d.entries[n] = d.entries[i]
		d.index[d.entries[n].seq] = n
		n++
	}
	clear(d.entries[n:])
	d.entries = d.entries[:n]
	d.head = 0
	if cap(d.entries) > 4*n+bigIndex {
		d.entries = slices.Clip(slices.Clone(d.entries))
	}
}

func (sh *shard) recover(fn func(engine.RecoveredItem) error) error {
	for _, d := range sh.order {
		if d.removed {
			continue
		}
		if err := fn(engine.RecoveredItem{Created: true, Dest: d.d}); err != nil {
			return err
		}
	}
	subs := make([]subRecord, 0, len(sh.subs))
	for _, r := range sh.subs {
		subs = append(subs, r)
	}
	slices.SortFunc(subs, func(a, b subRecord) int { return cmp.Compare(a.order, b.order) })
	for i := range subs {
		if err := fn(engine.RecoveredItem{Sub: &subs[i].sub}); err != nil {
			return err
		}
	}
	for _, d := range sh.order {
		if d.removed {
			continue
		}
		for i := d.head; i < len(d.entries); i++ {
			e := &d.entries[i]
			if e.msg == nil {
				continue
			}
			m := e.msg
			if m.RedeliveryCounter != e.counter {
				m = m.Clone()
				m.RedeliveryCounter = e.counter
			}
			it := engine.RecoveredItem{Dest: d.d, Seq: e.seq, Msg: m}
			if d.topic {
				// A copy: the stored slice changes in place on the next ack.
				it.Subs = slices.Clone(e.subs)
				for _, k := range e.subs {
					if mark, ok := sh.marks[markKey{k, d.d}]; ok && e.seq <= mark {
						it.Delivered = append(it.Delivered, k)
					}
				}
			}
			if err := fn(it); err != nil {
				return err
			}
		}
	}
	if len(sh.prepared) > 0 {
		txs := make([]txRecord, 0, len(sh.prepared))
		for _, r := range sh.prepared {
			txs = append(txs, r)
		}
		slices.SortFunc(txs, func(a, b txRecord) int { return cmp.Compare(a.order, b.order) })
		for i := range txs {
			t := txs[i].tx
			t.Adds, t.Acks = slices.Clone(t.Adds), slices.Clone(t.Acks)
			if err := fn(engine.RecoveredItem{Tx: &t}); err != nil {
				return err
			}
		}
	}
	jobs := make([]jobRecord, 0, len(sh.jobs))
	for _, r := range sh.jobs {
		jobs = append(jobs, r)
	}
	slices.SortFunc(jobs, func(a, b jobRecord) int { return cmp.Compare(a.order, b.order) })
	for i := range jobs {
		if err := fn(engine.RecoveredItem{Job: &jobs[i].job}); err != nil {
			return err
		}
	}
	return nil
}
