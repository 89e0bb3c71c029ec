package memory

import (
	"fmt"
	"slices"

	"wharf/engine"
	"wharf/engine/message"
)

// txn applies one batch to a shard and keeps what is needed to undo it.
// Slot positions do not move during a batch (tidy runs on commit), so undo
// records refer to them directly.
type txn struct {
	sh          *shard
	undo        []undoRec
	touched     []*dest
	removedDest bool
}

type undoKind uint8

const (
	undoAdd        undoKind = iota + 1 // pop the last entry of d
	undoDrop                           // put e back at d.entries[pos]
	undoAck                            // put key back at d.entries[pos].subs[i]
	undoCounter                        // d.entries[pos].counter = counter
	undoSub                            // sh.subs[key] = rec if had, else delete
	undoCreateDest                     // forget d, the last of sh.order
	undoRemoveDest                     // bring d back
	undoJob                            // sh.jobs[jobID] = job if had, else delete
	undoTx                             // sh.prepared[jobID] = txRec if had, else delete
	undoMark                           // sh.marks[mark] = seq if had, else delete
)

type undoRec struct {
	kind    undoKind
	d       *dest
	pos     int
	i       int
	e       entry
	key     engine.SubKey
	counter int32
	rec     subRecord
	had     bool
	jobID   string
	job     jobRecord
	txRec   txRecord
	mark    markKey
	seq     uint64
}

func (tx *txn) touch(d *dest) {
	if n := len(tx.touched); n == 0 || tx.touched[n-1] != d {
		tx.touched = append(tx.touched, d)
	}
}

func (tx *txn) apply(op *engine.StoreOp) error {
	sh := tx.sh
	switch op.Kind {
	case engine.OpAdd:
		d := sh.dests[op.Dest]
		if d != nil {
			if _, dup := d.index[op.Seq]; dup {
				return ErrDuplicate
			}
		}
		if op.Dest.Type.IsTopic() && len(op.Subs) == 0 {
			return nil // nobody needs it: see the package comment
		}
		if d == nil {
			d = tx.createDest(op.Dest)
		}
		e := entry{seq: op.Seq, msg: op.Msg, counter: op.Msg.RedeliveryCounter}
		if d.topic {
			e.subs = slices.Clone(op.Subs)
		}
		d.index[op.Seq] = len(d.entries)
		d.entries = append(d.entries, e)
		d.live++
		d.peak = max(d.peak, d.live)
		tx.undo = append(tx.undo, undoRec{kind: undoAdd, d: d})
		tx.touch(d)
	case engine.OpAddDest:
		if sh.dests[op.Dest] == nil {
			tx.createDest(op.Dest)
		}
	case engine.OpRemove:
		if d, pos, ok := tx.find(op); ok {
			tx.drop(d, pos)
		}
	case engine.OpAck:
		if d, pos, ok := tx.find(op); ok {
			tx.ack(d, pos, op.Sub.Key)
		}
	case engine.OpUpdate:
		if d, pos, ok := tx.find(op); ok {
			e := &d.entries[pos]
			tx.undo = append(tx.undo, undoRec{kind: undoCounter, d: d, pos: pos, counter: e.counter})
			e.counter = op.Count
		}
	case engine.OpAddSub:
		rec, had := sh.subs[op.Sub.Key]
		tx.undo = append(tx.undo, undoRec{kind: undoSub, key: op.Sub.Key, rec: rec, had: had})
		if !had {
			rec.order = sh.subSeq
			sh.subSeq++
		}
		rec.sub = op.Sub
		sh.subs[op.Sub.Key] = rec
	case engine.OpRemoveSub:
		tx.removeSub(op.Sub.Key)
	case engine.OpRemoveDest:
		if op.Dest.Type.IsTopic() {
			var keys []engine.SubKey
			for k, r := range sh.subs {
				if r.sub.Destination == op.Dest {
					keys = append(keys, k)
				}
			}
			for _, k := range keys {
				tx.removeSub(k)
			}
		}
		if op.Dest.Type.IsTopic() {
			tx.dropMarks(func(k markKey) bool { return k.dest == op.Dest })
		}
		if d := sh.dests[op.Dest]; d != nil {
			delete(sh.dests, op.Dest)
			d.removed = true
			tx.removedDest = true
			tx.undo = append(tx.undo, undoRec{kind: undoRemoveDest, d: d})
		}
	case engine.OpAddJob:
		rec, had := sh.jobs[op.Job.ID]
		tx.undo = append(tx.undo, undoRec{kind: undoJob, jobID: op.Job.ID, job: rec, had: had})
		if !had {
			rec.order = sh.jobSeq
			sh.jobSeq++
		}
		rec.job = *op.Job
		sh.jobs[op.Job.ID] = rec
	case engine.OpRemoveJob:
		if rec, had := sh.jobs[op.JobID]; had {
			tx.undo = append(tx.undo, undoRec{kind: undoJob, jobID: op.JobID, job: rec, had: true})
			delete(sh.jobs, op.JobID)
		}
	case engine.OpPrepare:
		key := op.Tx.XID.String()
		if _, dup := sh.prepared[key]; dup {
			return fmt.Errorf("%w: %s", ErrTxPrepared, key)
		}
		if sh.prepared == nil {
			sh.prepared = make(map[string]txRecord)
		}
		tx.undo = append(tx.undo, undoRec{kind: undoTx, jobID: key})
		t := *op.Tx
		t.XID = engine.XID{FormatID: t.XID.FormatID, GlobalID: slices.Clone(t.XID.GlobalID), Branch: slices.Clone(t.XID.Branch)}
		t.Adds, t.Acks = slices.Clone(t.Adds), slices.Clone(t.Acks)
		sh.prepared[key] = txRecord{tx: t, order: sh.txSeq}
		sh.txSeq++
	case engine.OpCommit, engine.OpRollback:
		key := op.Tx.XID.String()
		if rec, had := sh.prepared[key]; had {
			tx.undo = append(tx.undo, undoRec{kind: undoTx, jobID: key, txRec: rec, had: true})
			delete(sh.prepared, key)
		}
	case engine.OpDelivered:
		k := markKey{op.Sub.Key, op.Dest}
		seq, had := sh.marks[k]
		if had && seq >= op.Seq {
			return nil
		}
		tx.undo = append(tx.undo, undoRec{kind: undoMark, mark: k, seq: seq, had: had})
		if sh.marks == nil {
			sh.marks = make(map[markKey]uint64)
		}
		sh.marks[k] = op.Seq
	}
	return nil
}

// dropMarks forgets the delivery marks for which drop is true.
func (tx *txn) dropMarks(drop func(markKey) bool) {
	for k, seq := range tx.sh.marks {
		if drop(k) {
			tx.undo = append(tx.undo, undoRec{kind: undoMark, mark: k, seq: seq, had: true})
			delete(tx.sh.marks, k)
		}
	}
}

// createDest adds destination d, which the shard does not hold, after
// every other (Recover's order).
func (tx *txn) createDest(d message.Destination) *dest {
	sh := tx.sh
	x := newDest(d)
	sh.dests[d] = x
	sh.order = append(sh.order, x)
	tx.undo = append(tx.undo, undoRec{kind: undoCreateDest, d: x})
	return x
}

func (tx *txn) find(op *engine.StoreOp) (*dest, int, bool) {
	d := tx.sh.dests[op.Dest]
	if d == nil {
		return nil, 0, false
	}
	pos, ok := d.index[op.Seq]
	return d, pos, ok
}

func (tx *txn) drop(d *dest, pos int) {
	e := d.entries[pos]
	tx.undo = append(tx.undo, undoRec{kind: undoDrop, d: d, pos: pos, e: e})
	d.entries[pos] = entry{}
	delete(d.index, e.seq)
	d.live--
	tx.touch(d)
}

// ack removes key from the message's waiting subscriptions (swapping the last
// into its place: the set has no order) and drops the message when none is
// left. It ignores a key the message is not waiting for.
func (tx *txn) ack(d *dest, pos int, key engine.SubKey) {
	e := &d.entries[pos]
	i := slices.Index(e.subs, key)
	if i < 0 {
		return
	}
	last := len(e.subs) - 1
	e.subs[i] = e.subs[last]
	e.subs[last] = engine.SubKey{}
	e.subs = e.subs[:last]
	tx.undo = append(tx.undo, undoRec{kind: undoAck, d: d, pos: pos, i: i, key: key})
	if last == 0 {
		tx.drop(d, pos)
	}
}

// removeSub deletes a durable subscription and its references from every
// topic message of the shard: a wildcard subscription's messages live on
// several topics.
func (tx *txn) removeSub(key engine.SubKey) {
	sh := tx.sh
	if rec, had := sh.subs[key]; had {
		tx.undo = append(tx.undo, undoRec{kind: undoSub, key: key, rec: rec, had: true})
		delete(sh.subs, key)
	}
	tx.dropMarks(func(k markKey) bool { return k.sub == key })
	for _, d := range sh.order {
		if d.removed || !d.topic {
			continue
		}
		for pos := d.head; pos < len(d.entries); pos++ {
			if d.entries[pos].msg != nil {
				tx.ack(d, pos, key)
			}
		}
	}
}

// rollback undoes the batch, newest change first.
func (tx *txn) rollback() {
	sh := tx.sh
	for i := len(tx.undo) - 1; i >= 0; i-- {
		u := &tx.undo[i]
		d := u.d
		switch u.kind {
		case undoAdd:
			n := len(d.entries) - 1
			delete(d.index, d.entries[n].seq)
			d.entries[n] = entry{}
			d.entries = d.entries[:n]
			d.live--
		case undoDrop:
			d.entries[u.pos] = u.e
			d.index[u.e.seq] = u.pos
			d.live++
		case undoAck:
			e := &d.entries[u.pos]
			n := len(e.subs)
			e.subs = e.subs[:n+1]
			e.subs[n] = e.subs[u.i]
			e.subs[u.i] = u.key
		case undoCounter:
			d.entries[u.pos].counter = u.counter
		case undoSub:
			if u.had {
				sh.subs[u.key] = u.rec
			} else {
				delete(sh.subs, u.key)
			}
		case undoCreateDest:
			delete(sh.dests, d.d)
			sh.order[len(sh.order)-1] = nil
			sh.order = sh.order[:len(sh.order)-1]
		case undoRemoveDest:
			d.removed = false
			sh.dests[d.d] = d
		case undoJob:
			if u.had {
				sh.jobs[u.jobID] = u.job
			} else {
				delete(sh.jobs, u.jobID)
			}
		case undoTx:
			if u.had {
				sh.prepared[u.jobID] = u.txRec
			} else {
				delete(sh.prepared, u.jobID)
			}
		case undoMark:
			if u.had {
				sh.marks[u.mark] = u.seq
			} else {
				delete(sh.marks, u.mark)
			}
		}
	}
	// Slots are back where they were; tidy is still safe and keeps the
	// invariants tidy maintains.
	tx.commit()
}

// commit ends the batch: it forgets the undo log and lets the touched
// destinations tidy up.
func (tx *txn) commit() {
	for _, d := range tx.touched {
		if !d.removed {
			d.tidy()
		}
	}
	if tx.removedDest {
		tx.sh.order = slices.DeleteFunc(tx.sh.order, func(d *dest) bool { return d.removed })
	}
	clear(tx.undo)
	tx.undo = tx.undo[:0]
	clear(tx.touched)
	tx.touched = tx.touched[:0]
	tx.removedDest = false
}
