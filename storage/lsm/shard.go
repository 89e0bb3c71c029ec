package lsm

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/internal/records"
)

// shardStore is one shard's database and the part of its state kept in
// memory (the index, rebuilt from the database when the shard opens): the
// destinations and subscription references with their ids, the topic
// messages with the subscriptions that still need each, delivery marks,
// prepared transaction ids, and per queue the highest sequence stored.
// Only the shard's writer goroutine uses it (engine.ShardStore).
type shardStore struct {
	store *Store
	db    *badger.DB
	dir   string
	index int
	log   *slog.Logger

	closed atomic.Bool

	// names maps a destination id to its destination for LoadMessage,
	// which runs on the engine shard's goroutine while Apply runs on the
	// writer's: a sync.Map (written when a destination is created or the
	// index loads, never cleared: an id is never reused) instead of
	// destIDs, which only the writer's goroutine touches.
	names sync.Map

	nextID  uint64 // the next destination or subscription id
	idDirty bool   // nextID changed in this batch
	// auditDirty: the audit entries this batch changed (audit.go).
	auditDirty map[auditRef]struct{}

	dests   map[message.Destination]*destState
	destIDs map[uint64]*destState
	subs    map[engine.SubKey]*subRef
	subIDs  map[uint64]*subRef
	marks   map[mark]uint64
	txs     map[string]struct{} // prepared XIDs (String)

	// orphans are what removed destinations and subscriptions left: key
	// prefixes (a removed destination's messages) and keys, deleted a
	// few at a time by Housekeep. Ids are never reused, so a late delete
	// cannot hit a newer record, except a topic message key, which
	// Housekeep checks against the index first.
	orphanPrefixes [][]byte
	orphanKeys     [][]byte
	batchPrefixes  [][]byte // this batch's, kept only if it commits
	batchKeys      [][]byte

	lastGC time.Time

	tree   int64     // bytes of the LSM tree's tables, as of treeAt
	treeAt time.Time // when tree was measured
}

var (
	_ engine.ShardStore    = (*shardStore)(nil)
	_ engine.Syncer        = (*shardStore)(nil)
	_ engine.NoSyncApplier = (*shardStore)(nil)
	_ engine.Housekeeper   = (*shardStore)(nil)
	_ engine.MessageLoader = (*shardStore)(nil)
)

type destState struct {
	d     message.Destination
	id    uint64
	topic bool
	// maxSeq: the highest sequence added to this queue since the index
	// loaded (or stored at load): an add above it cannot be a duplicate.
	maxSeq uint64
	// msgs: for a topic, each stored message and the ids of the
	// subscriptions that still need it (its W keys).
	msgs map[uint64][]uint64
	// audit: the producer audit (audit.go), as its A keys hold it.
	audit map[string]int64
}

// subRef is a durable subscription as the shard knows it: an id for its
// references (W and K keys) and, when OpAddSub stored it here, its record.
// A subscription referenced by messages whose record another shard holds
// (a wildcard subscription) has an id without a record.
type subRef struct {
	id  uint64
	key engine.SubKey
	rec *engine.DurableSub
}

type mark struct {
	sub  uint64
	dest message.Destination
}

// checkMeta writes the layout record of a new database and refuses one
// written for another shard layout or format.
func (ss *shardStore) checkMeta(index, count int) error {
	want := fmt.Sprintf("wharf-lsm %d shard %d of %d", version, index, count)
	var got []byte
	err := ss.db.View(func(txn *badger.Txn) error {
		it, err := txn.Get(keyMeta)
		if err != nil {
			return err
		}
		got, err = it.ValueCopy(nil)
		return err
	})
	switch {
	case errors.Is(err, badger.ErrKeyNotFound):
		return ss.db.Update(func(txn *badger.Txn) error { return txn.Set(keyMeta, []byte(want)) })
	case err != nil:
		return fmt.Errorf("lsm: %s: %w", ss.dir, err)
	case string(got) != want:
		return fmt.Errorf("%w: %s holds %q, want %q", ErrShardCount, ss.dir, got, want)
	}
	return nil
}

// load builds the index from the database: one pass over the small
// records, a key-only pass over the waiting and message keys. There is no
// checkpoint to read and no log to replay: badger's own write-ahead log
// replay (inside badger.Open) brings back every committed batch.
func (ss *shardStore) load(ctx context.Context) error {
	ss.dests = make(map[message.Destination]*destState)
	ss.destIDs = make(map[uint64]*destState)
	ss.subs = make(map[engine.SubKey]*subRef)
	ss.subIDs = make(map[uint64]*subRef)
	ss.marks = make(map[mark]uint64)
	ss.txs = make(map[string]struct{})
	ss.orphanPrefixes, ss.orphanKeys = nil, nil
	ss.nextID = 1
	return ss.db.View(func(txn *badger.Txn) error {
		if it, err := txn.Get(keyNextID); err == nil {
			if err := it.Value(func(v []byte) error {
				if len(v) != 8 {
					return fmt.Errorf("%w: next id", ErrCorrupt)
				}
				ss.nextID = binary.BigEndian.Uint64(v)
				return nil
			}); err != nil {
				return err
			}
		} else if !errors.Is(err, badger.ErrKeyNotFound) {
			return err
		}
		if err := scan(txn, []byte{pDest}, true, func(k, v []byte) error {
			id := binary.BigEndian.Uint64(k[1:])
			d := (&records.Dec{B: v}).Dest()
			if len(v) < 1 {
				return fmt.Errorf("%w: destination %d", ErrCorrupt, id)
			}
			x := &destState{d: d, id: id, topic: d.Type.IsTopic()}
			if x.topic {
				x.msgs = make(map[uint64][]uint64)
			}
			ss.dests[d], ss.destIDs[id] = x, x
			ss.names.Store(id, d)
			return nil
		}); err != nil {
			return err
		}
		if err := scan(txn, []byte{pSub}, true, func(k, v []byte) error {
			r, err := decodeSub(binary.BigEndian.Uint64(k[1:]), v)
			if err != nil {
				return err
			}
			ss.subs[r.key], ss.subIDs[r.id] = r, r
			return nil
		}); err != nil {
			return err
		}
		if err := scan(txn, []byte{pMark}, true, func(k, v []byte) error {
			id := binary.BigEndian.Uint64(k[1:])
			if ss.subIDs[id] == nil || len(v) != 8 {
				ss.orphanKeys = append(ss.orphanKeys, k)
				return nil
			}
			ss.marks[mark{id, message.Destination{Type: message.DestType(k[9]), Name: string(k[10:])}}] = binary.BigEndian.Uint64(v)
			return nil
		}); err != nil {
			return err
		}
		if err := ss.loadAudit(txn); err != nil {
			return err
		}
		if err := scan(txn, []byte{pTx}, false, func(k, _ []byte) error {
			ss.txs[string(k[1:])] = struct{}{}
			return nil
		}); err != nil {
			return err
		}
		n := 0
		if err := scan(txn, []byte{pWait}, false, func(k, _ []byte) error {
			if n++; n%65536 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			dest, seq, sub := binary.BigEndian.Uint64(k[1:]), binary.BigEndian.Uint64(k[9:]), binary.BigEndian.Uint64(k[17:])
			d := ss.destIDs[dest]
			if d == nil || !d.topic || ss.subIDs[sub] == nil {
				ss.orphanKeys = append(ss.orphanKeys, k)
				return nil
			}
			d.msgs[seq] = append(d.msgs[seq], sub)
			return nil
		}); err != nil {
			return err
		}
		// Messages: a removed destination's are orphans (skipped as a
		// whole: Seek past its prefix), a topic message that no
		// subscription needs any more is one (its last subscription was
		// removed), a queue's give its highest sequence.
		opt := badger.DefaultIteratorOptions
		opt.PrefetchValues = false
		opt.Prefix = []byte{pMsg}
		it := txn.NewIterator(opt)
		defer it.Close()
		for it.Rewind(); it.Valid(); {
			if n++; n%65536 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			k := it.Item().Key()
			dest, seq := binary.BigEndian.Uint64(k[1:]), binary.BigEndian.Uint64(k[9:])
			d := ss.destIDs[dest]
			switch {
			case d == nil:
				ss.orphanPrefixes = append(ss.orphanPrefixes, idKey(pMsg, dest))
				it.Seek(idKey(pMsg, dest+1))
				continue
			case d.topic:
				if _, ok := d.msgs[seq]; !ok {
					ss.orphanKeys = append(ss.orphanKeys, it.Item().KeyCopy(nil))
				}
			default:
				d.maxSeq = max(d.maxSeq, seq)
			}
			it.Next()
		}
		return nil
	})
}

// scan calls fn for every key with prefix p (and its value when values).
// k and v are valid during the call only, unless fn copies them; keys
// kept by fn must be copied, so scan hands a copy.
func scan(txn *badger.Txn, p []byte, values bool, fn func(k, v []byte) error) error {
	opt := badger.DefaultIteratorOptions
	opt.PrefetchValues = values
	opt.Prefix = p
	it := txn.NewIterator(opt)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		k := item.KeyCopy(nil)
		if !values {
			if err := fn(k, nil); err != nil {
				return err
			}
			continue
		}
		if err := item.Value(func(v []byte) error { return fn(k, v) }); err != nil {
			return err
		}
	}
	return nil
}

// Syncs reports whether Apply waits for the disk (syncWrites): the
// engine then gathers batches for group commit (engine.Syncer).
func (ss *shardStore) Syncs() bool { return ss.store.opts.SyncWrites }

// Apply writes ops as one badger transaction and, with SyncWrites, syncs
// the write-ahead and value logs once before returning.
func (ss *shardStore) Apply(ops []engine.StoreOp) error {
	return ss.apply(ops, ss.store.opts.SyncWrites)
}

// ApplyNoSync is Apply without the sync: the batch reaches the disk with
// the next synced one (engine.NoSyncApplier). Only a batch that writes no
// value goes unsynced (acks, removes, delivery marks: tombstones and
// small inline records in the write-ahead log): a value written to the
// value log and not synced could, after a crash of the machine, leave a
// synced log entry pointing past the end of the value log.
func (ss *shardStore) ApplyNoSync(ops []engine.StoreOp) error {
	return ss.apply(ops, ss.store.opts.SyncWrites && !writesNoValue(ops))
}

// writesNoValue reports a batch that stores nothing new, whose records
// all stay in the write-ahead log: deletions (acks, removes: what
// consumers and administrators do to drain a store) and delivery marks of
// 8 bytes, below any ValueThreshold. An OpUpdate rewrites a message's
// record: not one of them.
func writesNoValue(ops []engine.StoreOp) bool {
	for i := range ops {
		switch ops[i].Kind {
		case engine.OpRemove, engine.OpAck, engine.OpRemoveSub, engine.OpRemoveDest, engine.OpRemoveJob,
			engine.OpCommit, engine.OpRollback, engine.OpDelivered:
		default:
			return false
		}
	}
	return true
}

func (ss *shardStore) apply(ops []engine.StoreOp, sync bool) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	if len(ops) == 0 {
		return nil
	}
	for i := range ops {
		if err := ops[i].Check(); err != nil {
			return fmt.Errorf("op %d %s: %w", i, &ops[i], err)
		}
	}
	o := &ss.store.opts
	if o.MinFreeDisk > 0 {
		need := o.MinFreeDisk
		if writesNoValue(ops) { // removals: what drains a full store
			need /= 4
		}
		// A compaction writes its output before it deletes its inputs:
		// up to the whole tree.
		need += ss.treeBytes()
		if free := o.FreeBytes(ss.dir); free >= 0 && free < need {
			return fmt.Errorf("%w: %s has %d bytes free, wharfLSM needs at least %d (minFreeDisk) to store a batch; nothing of it was written", ErrDiskFull, ss.dir, free, need)
		}
	}
	txn := ss.db.NewTransaction(true)
	defer txn.Discard()
	ss.batchPrefixes, ss.batchKeys = ss.batchPrefixes[:0], ss.batchKeys[:0]
	ss.idDirty = false
	clear(ss.auditDirty)
	fail := func(err error) error {
		// The index may hold part of the batch: read it back from the
		// database, which holds none of it.
		if lerr := ss.load(context.Background()); lerr != nil {
			ss.log.Error("index reload after a failed batch", "err", lerr)
			return errors.Join(err, fmt.Errorf("lsm: reload index: %w", lerr))
		}
		return err
	}
	for i := range ops {
		if err := ss.applyOp(txn, &ops[i]); err != nil {
			if errors.Is(err, badger.ErrTxnTooBig) {
				err = fmt.Errorf("%w: %d operations (raise memTableSize, now %d bytes): %w", ErrBatchTooBig, len(ops), o.MemTableSize, err)
			}
			return fail(fmt.Errorf("op %d %s: %w", i, &ops[i], err))
		}
	}
	if err := ss.flushAudit(txn); err != nil {
		return fail(err)
	}
	if ss.idDirty {
		if err := txn.Set(keyNextID, binary.BigEndian.AppendUint64(nil, ss.nextID)); err != nil {
			return fail(err)
		}
	}
	if err := txn.Commit(); err != nil {
		return fail(fmt.Errorf("lsm: commit %d operations: %w", len(ops), err))
	}
	ss.orphanPrefixes = append(ss.orphanPrefixes, ss.batchPrefixes...)
	ss.orphanKeys = append(ss.orphanKeys, ss.batchKeys...)
	if sync {
		if err := ss.db.Sync(); err != nil {
			return fmt.Errorf("lsm: sync %s: %w", ss.dir, err)
		}
	}
	return nil
}

// treeBytes is the size of the LSM tree's tables (the .sst files of the
// shard's directory), measured at most once a second.
func (ss *shardStore) treeBytes() int64 {
	now := ss.store.opts.Clock()
	if now.Sub(ss.treeAt) < time.Second && !ss.treeAt.IsZero() {
		return ss.tree
	}
	var n int64
	entries, _ := os.ReadDir(ss.dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sst") {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
	}
	ss.tree, ss.treeAt = n, now
	return n
}

func (ss *shardStore) newID() uint64 {
	id := ss.nextID
	ss.nextID++
	ss.idDirty = true
	return id
}

func (ss *shardStore) createDest(txn *badger.Txn, d message.Destination) (*destState, error) {
	x := &destState{d: d, id: ss.newID(), topic: d.Type.IsTopic()}
	if x.topic {
		x.msgs = make(map[uint64][]uint64)
	}
	var e records.Enc
	e.Dest(d)
	if err := txn.Set(idKey(pDest, x.id), e.B); err != nil {
		return nil, err
	}
	ss.dests[d], ss.destIDs[x.id] = x, x
	ss.names.Store(x.id, d)
	return x, nil
}

// subRef returns the reference of key, creating it (without a record).
func (ss *shardStore) subRef(txn *badger.Txn, key engine.SubKey) (*subRef, error) {
	if r := ss.subs[key]; r != nil {
		return r, nil
	}
	r := &subRef{id: ss.newID(), key: key}
	if err := txn.Set(idKey(pSub, r.id), encodeSub(r)); err != nil {
		return nil, err
	}
	ss.subs[key], ss.subIDs[r.id] = r, r
	return r, nil
}

func (ss *shardStore) applyOp(txn *badger.Txn, op *engine.StoreOp) error {
	switch op.Kind {
	case engine.OpAdd:
		d := ss.dests[op.Dest]
		if d != nil {
			if d.topic {
				if _, dup := d.msgs[op.Seq]; dup {
					return ErrDuplicate
				}
			} else if op.Seq <= d.maxSeq {
				if _, err := txn.Get(msgKey(d.id, op.Seq)); err == nil {
					return ErrDuplicate
				} else if !errors.Is(err, badger.ErrKeyNotFound) {
					return err
				}
			}
		}
		if op.Dest.Type.IsTopic() && len(op.Subs) == 0 {
			return nil // nobody could ever acknowledge it
		}
		if d == nil {
			var err error
			if d, err = ss.createDest(txn, op.Dest); err != nil {
				return err
			}
		}
		v, err := encodeMsg(op.Msg)
		if err != nil {
			return fmt.Errorf("encode message %s: %w", op.Msg.ID, err)
		}
		if err := txn.SetEntry(badger.NewEntry(msgKey(d.id, op.Seq), v).WithMeta(op.Msg.Priority)); err != nil {
			return err
		}
		if err := ss.auditNote(txn, d, op.Msg.ID); err != nil {
			return err
		}
		if !d.topic {
			d.maxSeq = max(d.maxSeq, op.Seq)
			return nil
		}
		ids := make([]uint64, 0, len(op.Subs))
		for _, k := range op.Subs {
			r, err := ss.subRef(txn, k)
			if err != nil {
				return err
			}
			if slices.Contains(ids, r.id) {
				continue
			}
			ids = append(ids, r.id)
			if err := txn.Set(waitKey(d.id, op.Seq, r.id), nil); err != nil {
				return err
			}
		}
		d.msgs[op.Seq] = ids
	case engine.OpAddDest:
		if ss.dests[op.Dest] == nil {
			_, err := ss.createDest(txn, op.Dest)
			return err
		}
	case engine.OpRemove:
		d := ss.dests[op.Dest]
		if d == nil {
			return nil
		}
		if d.topic {
			ids, ok := d.msgs[op.Seq]
			if !ok {
				return nil
			}
			for _, id := range ids {
				if err := txn.Delete(waitKey(d.id, op.Seq, id)); err != nil {
					return err
				}
			}
			delete(d.msgs, op.Seq)
		} else if op.Seq > d.maxSeq {
			return nil
		}
		return txn.Delete(msgKey(d.id, op.Seq))
	case engine.OpAck:
		d, r := ss.dests[op.Dest], ss.subs[op.Sub.Key]
		if d == nil || r == nil || !d.topic {
			return nil
		}
		ids, ok := d.msgs[op.Seq]
		i := slices.Index(ids, r.id)
		if !ok || i < 0 {
			return nil
		}
		if err := txn.Delete(waitKey(d.id, op.Seq, r.id)); err != nil {
			return err
		}
		if ids = slices.Delete(ids, i, i+1); len(ids) > 0 {
			d.msgs[op.Seq] = ids
			return nil
		}
		delete(d.msgs, op.Seq)
		return txn.Delete(msgKey(d.id, op.Seq))
	case engine.OpUpdate:
		d := ss.dests[op.Dest]
		if d == nil {
			return nil
		}
		if _, ok := d.msgs[op.Seq]; d.topic && !ok || !d.topic && op.Seq > d.maxSeq {
			return nil
		}
		k := msgKey(d.id, op.Seq)
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		if len(v) < msgHeader {
			return fmt.Errorf("%w: message record of %d bytes", ErrCorrupt, len(v))
		}
		binary.BigEndian.PutUint32(v[1:], uint32(op.Count))
		return txn.SetEntry(badger.NewEntry(k, v).WithMeta(item.UserMeta()))
	case engine.OpAddSub:
		r, err := ss.subRef(txn, op.Sub.Key)
		if err != nil {
			return err
		}
		rec := op.Sub
		r.rec = &rec
		return txn.Set(idKey(pSub, r.id), encodeSub(r))
	case engine.OpRemoveSub:
		return ss.removeSub(txn, op.Sub.Key)
	case engine.OpRemoveDest:
		if op.Dest.Type.IsTopic() {
			var keys []engine.SubKey
			for k, r := range ss.subs {
				if r.rec != nil && r.rec.Destination == op.Dest {
					keys = append(keys, k)
				}
			}
			for _, k := range keys {
				if err := ss.removeSub(txn, k); err != nil {
					return err
				}
			}
			for m := range ss.marks {
				if m.dest == op.Dest {
					if err := txn.Delete(markKey(m.sub, m.dest)); err != nil {
						return err
					}
					delete(ss.marks, m)
				}
			}
		}
		d := ss.dests[op.Dest]
		if d == nil {
			return nil
		}
		if err := txn.Delete(idKey(pDest, d.id)); err != nil {
			return err
		}
		delete(ss.dests, op.Dest)
		delete(ss.destIDs, d.id)
		ss.batchPrefixes = append(ss.batchPrefixes, idKey(pMsg, d.id), idKey(pWait, d.id), idKey(pAudit, d.id))
	case engine.OpAddJob:
		v, err := records.EncodeJob(op.Job)
		if err != nil {
			return err
		}
		return txn.Set(strKey(pJob, op.Job.ID), v)
	case engine.OpRemoveJob:
		return txn.Delete(strKey(pJob, op.JobID))
	case engine.OpPrepare:
		key := op.Tx.XID.String()
		if _, dup := ss.txs[key]; dup {
			return fmt.Errorf("%w: %s", ErrTxPrepared, key)
		}
		v, err := records.EncodeTx(op.Tx)
		if err != nil {
			return err
		}
		if err := txn.Set(strKey(pTx, key), v); err != nil {
			return err
		}
		ss.txs[key] = struct{}{}
	case engine.OpCommit, engine.OpRollback:
		key := op.Tx.XID.String()
		if _, ok := ss.txs[key]; ok {
			delete(ss.txs, key)
			return txn.Delete(strKey(pTx, key))
		}
	case engine.OpDelivered:
		r, err := ss.subRef(txn, op.Sub.Key)
		if err != nil {
			return err
		}
		m := mark{r.id, op.Dest}
		if seq, ok := ss.marks[m]; ok && seq >= op.Seq {
			return nil
		}
		ss.marks[m] = op.Seq
		return txn.Set(markKey(r.id, op.Dest), binary.BigEndian.AppendUint64(nil, op.Seq))
	}
	return nil
}

// removeSub deletes subscription key's reference and record. Its marks go
// in the batch; its waiting keys, and the topic messages only it needed,
// become orphans that Housekeep deletes (a subscription may hold a large
// backlog, more than one transaction can delete): the index no longer
// has them, and a restart's load recognises them by the dead id.
func (ss *shardStore) removeSub(txn *badger.Txn, key engine.SubKey) error {
	r := ss.subs[key]
	if r == nil {
		return nil
	}
	if err := txn.Delete(idKey(pSub, r.id)); err != nil {
		return err
	}
	delete(ss.subs, key)
	delete(ss.subIDs, r.id)
	for m := range ss.marks {
		if m.sub == r.id {
			if err := txn.Delete(markKey(m.sub, m.dest)); err != nil {
				return err
			}
			delete(ss.marks, m)
		}
	}
	for _, d := range ss.destIDs {
		if !d.topic {
			continue
		}
		for seq, ids := range d.msgs {
			i := slices.Index(ids, r.id)
			if i < 0 {
				continue
			}
			ss.batchKeys = append(ss.batchKeys, waitKey(d.id, seq, r.id))
			if ids = slices.Delete(ids, i, i+1); len(ids) > 0 {
				d.msgs[seq] = ids
				continue
			}
			delete(d.msgs, seq)
			ss.batchKeys = append(ss.batchKeys, msgKey(d.id, seq))
		}
	}
	return nil
}

// Recover yields the shard's state in engine.ShardStore's order:
// destinations (in creation order: ids increase), subscriptions with a
// record, the messages of each destination in key order (add order), the
// prepared transactions, the scheduled jobs.
func (ss *shardStore) Recover(fn func(engine.RecoveredItem) error) error {
	return ss.recover(false, fn)
}

// RecoverStubs is Recover with every pending message as a stub: its
// record's header read (redelivery counter, expiration, size; priority
// from the entry's UserMeta), its frame neither decoded nor kept
// (engine.MessageLoader).
func (ss *shardStore) RecoverStubs(fn func(engine.RecoveredItem) error) error {
	return ss.recover(true, fn)
}

// A stub's StoreRef: Part is the destination id, File and Off the high
// and low halves of the sequence, Len the record's length (never 0).

// LoadMessage reads the message a stub refers to. It runs on the engine
// shard's goroutine, concurrently with Apply: it reads through its own
// badger read transaction and the names map only.
func (ss *shardStore) LoadMessage(ref engine.StoreRef) (*message.Message, error) {
	if ss.closed.Load() {
		return nil, ErrClosed
	}
	id, seq := uint64(ref.Part), uint64(ref.File)<<32|uint64(ref.Off)
	v, ok := ss.names.Load(id)
	if !ok {
		return nil, fmt.Errorf("lsm: load message: %w: no destination %d", ErrCorrupt, id)
	}
	d := v.(message.Destination)
	var m *message.Message
	err := ss.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(msgKey(id, seq))
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			m, err = decodeMsg(v, d)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("lsm: load %s seq %d: %w", d, seq, err)
	}
	return m, nil
}

func (ss *shardStore) recover(stubs bool, fn func(engine.RecoveredItem) error) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	dests := make([]*destState, 0, len(ss.destIDs))
	for _, d := range ss.destIDs {
		dests = append(dests, d)
	}
	slices.SortFunc(dests, func(a, b *destState) int { return cmp.Compare(a.id, b.id) })
	for _, d := range dests {
		if err := fn(engine.RecoveredItem{Created: true, Dest: d.d}); err != nil {
			return err
		}
	}
	subs := make([]*subRef, 0, len(ss.subIDs))
	for _, r := range ss.subIDs {
		if r.rec != nil {
			subs = append(subs, r)
		}
	}
	slices.SortFunc(subs, func(a, b *subRef) int { return cmp.Compare(a.id, b.id) })
	for _, r := range subs {
		s := *r.rec
		if err := fn(engine.RecoveredItem{Sub: &s}); err != nil {
			return err
		}
	}
	var bad [][]byte
	defer func() {
		if len(bad) == 0 {
			return
		}
		wb := ss.db.NewWriteBatch()
		defer wb.Cancel()
		for _, k := range bad {
			if err := wb.Delete(k); err != nil {
				ss.log.Error("delete unreadable records", "err", err)
				return
			}
		}
		if err := wb.Flush(); err != nil {
			ss.log.Error("delete unreadable records", "err", err)
		}
	}()
	return ss.db.View(func(txn *badger.Txn) error {
		for _, d := range dests {
			if err := ss.recoverDest(txn, d, stubs, &bad, fn); err != nil {
				return err
			}
		}
		if err := scan(txn, []byte{pTx}, true, func(_, v []byte) error {
			t, err := records.DecodeTx(v)
			if err != nil {
				return err
			}
			return fn(engine.RecoveredItem{Tx: t})
		}); err != nil {
			return err
		}
		return scan(txn, []byte{pJob}, true, func(_, v []byte) error {
			j, err := records.DecodeJob(v)
			if err != nil {
				return err
			}
			return fn(engine.RecoveredItem{Job: j})
		})
	})
}

func (ss *shardStore) recoverDest(txn *badger.Txn, d *destState, stubs bool, bad *[][]byte, fn func(engine.RecoveredItem) error) error {
	opt := badger.DefaultIteratorOptions
	opt.Prefix = idKey(pMsg, d.id)
	opt.PrefetchSize = 64
	it := txn.NewIterator(opt)
	defer it.Close()
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		seq := binary.BigEndian.Uint64(item.Key()[9:])
		var ids []uint64
		if d.topic {
			var ok bool
			if ids, ok = d.msgs[seq]; !ok {
				continue // an orphan: see removeSub
			}
		}
		ri := engine.RecoveredItem{Dest: d.d, Seq: seq}
		if err := item.Value(func(v []byte) error {
			if !stubs || d.id > math.MaxUint32 {
				var err error
				ri.Msg, err = decodeMsg(v, d.d)
				return err
			}
			st, err := decodeStub(v)
			if err != nil {
				return err
			}
			ri.Ref = engine.StoreRef{Part: uint32(d.id), File: uint32(seq >> 32), Off: uint32(seq), Len: uint32(len(v))}
			ri.Size, ri.Priority, ri.Expiration, ri.Redeliveries = st.size, item.UserMeta(), st.expiration, st.redeliveries
			return nil
		}); err != nil {
			// A record whose value cannot be read: after a crash of the
			// machine during a batch's sync (badger syncs its log before
			// its value log), a batch nobody was told is stored can leave
			// log entries pointing past the value log's end. Skipped, as
			// KahaDB skips a record it cannot read, and deleted when
			// Recover ends (before the engine can reuse the sequence).
			ss.log.Warn("stored message skipped", "dest", d.d.String(), "seq", seq, "err", err)
			*bad = append(*bad, item.KeyCopy(nil))
			for _, id := range ids {
				*bad = append(*bad, waitKey(d.id, seq, id))
			}
			if d.topic {
				delete(d.msgs, seq)
			}
			continue
		}
		for _, id := range ids {
			r := ss.subIDs[id]
			ri.Subs = append(ri.Subs, r.key)
			if mk, ok := ss.marks[mark{id, d.d}]; ok && seq <= mk {
				ri.Delivered = append(ri.Delivered, r.key)
			}
		}
		if err := fn(ri); err != nil {
			return err
		}
	}
	return nil
}

// orphanBudget is how many orphan keys one Housekeep deletes at most: a
// removed backlog goes in slices, between the engine's batches.
const orphanBudget = 20_000

// Housekeep deletes orphans (a slice at a time) and, once the cleanup
// interval has passed, runs value log GC until it has nothing to rewrite
// (engine.Housekeeper; on the writer goroutine).
func (ss *shardStore) Housekeep() error {
	if ss.closed.Load() {
		return ErrClosed
	}
	if err := ss.deleteOrphans(orphanBudget); err != nil {
		return err
	}
	o := &ss.store.opts
	if o.CleanupInterval <= 0 {
		return nil
	}
	now := o.Clock()
	if ss.lastGC.IsZero() {
		ss.lastGC = now
	}
	if now.Sub(ss.lastGC) < o.CleanupInterval {
		return nil
	}
	ss.lastGC = now
	return ss.gc()
}

// gc runs value log GC until a round rewrites nothing (at most 16 rounds,
// one value log file each).
func (ss *shardStore) gc() error {
	for range 16 {
		err := ss.db.RunValueLogGC(ss.store.opts.GCDiscardRatio)
		if errors.Is(err, badger.ErrNoRewrite) || errors.Is(err, badger.ErrRejected) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lsm: value log GC of %s: %w", ss.dir, err)
		}
	}
	return nil
}

func (ss *shardStore) deleteOrphans(budget int) error {
	if len(ss.orphanKeys) == 0 && len(ss.orphanPrefixes) == 0 {
		return nil
	}
	wb := ss.db.NewWriteBatch()
	defer wb.Cancel()
	n := 0
	for len(ss.orphanKeys) > 0 && n < budget {
		k := ss.orphanKeys[len(ss.orphanKeys)-1]
		ss.orphanKeys = ss.orphanKeys[:len(ss.orphanKeys)-1]
		if k[0] == pMsg {
			// A topic message's key: the engine may have stored a new
			// message under the same sequence since (after a restart).
			if d := ss.destIDs[binary.BigEndian.Uint64(k[1:])]; d != nil {
				if _, live := d.msgs[binary.BigEndian.Uint64(k[9:])]; live {
					continue
				}
			}
		}
		if err := wb.Delete(k); err != nil {
			return err
		}
		n++
	}
	for len(ss.orphanPrefixes) > 0 && n < budget {
		p := ss.orphanPrefixes[len(ss.orphanPrefixes)-1]
		var keys [][]byte
		err := ss.db.View(func(txn *badger.Txn) error {
			opt := badger.DefaultIteratorOptions
			opt.PrefetchValues = false
			opt.Prefix = p
			it := txn.NewIterator(opt)
			defer it.Close()
			for it.Rewind(); it.Valid() && n+len(keys) < budget; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n+len(keys) < budget {
			ss.orphanPrefixes = ss.orphanPrefixes[:len(ss.orphanPrefixes)-1] // done with it
		}
		for _, k := range keys {
			if err := wb.Delete(k); err != nil {
				return err
			}
		}
		n += len(keys)
		if len(keys) == 0 {
			continue
		}
	}
	if err := wb.Flush(); err != nil {
		return fmt.Errorf("lsm: delete orphans in %s: %w", ss.dir, err)
	}
	return nil
}

// Close closes the shard's database. Closing twice is not an error.
func (ss *shardStore) Close() error {
	if ss.closed.Swap(true) {
		return nil
	}
	ss.store.forget(ss)
	if err := ss.db.Close(); err != nil {
		return fmt.Errorf("lsm: close %s: %w", ss.dir, err)
	}
	return nil
}
