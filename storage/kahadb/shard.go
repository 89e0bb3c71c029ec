package kahadb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
	"wharf/storage/memory"
)

type msgKey struct {
	dest message.Destination
	seq  uint64
}

// stored is what the shard store remembers of a message it wrote: its id
// (KahaDB's key), the journal file holding it, and for a topic message the
// durable subscriptions still owing an ack.
type stored struct {
	id      string
	file    int              // 0 until the batch holding it is written
	loc     journal.Location // the record holding its current form (add or update)
	pending map[engine.SubKey]bool
	dead    bool // forgotten before its batch was written
	// files holds every journal file with an add or update record of it:
	// any of them still present would bring it back on a replay without
	// its remove. older: an add may also be in an unknown older file (a
	// message loaded from the index at an update record).
	files []int
	older bool
	// What the engine needs of it without its body (RecoverStubs):
	// priority, expiration and size (message.Message.Size).
	prio uint8
	exp  int64
	size int64
}

// setMeta records what a stub of m needs.
func (s *stored) setMeta(m *message.Message) {
	s.prio, s.exp, s.size = m.Priority, m.Expiration, int64(m.Size())
}

// bodiless are the placeholders the index (idx) holds instead of the
// messages, by redelivery counter: the store keeps no message body in
// memory. The journal holds the messages; ss.msgs where each is.
var bodiless = func() (p [16]*message.Message) {
	for i := range p {
		p[i] = &message.Message{RedeliveryCounter: int32(i)}
	}
	return p
}()

// placeholder is the index's stand-in for a message stored with
// redelivery counter c. Shared: the index never changes a message.
func placeholder(c int32) *message.Message {
	if c >= 0 && int(c) < len(bodiless) {
		return bodiless[c]
	}
	return &message.Message{RedeliveryCounter: c}
}

// fwdAck is a removal (queue remove, durable subscription ack, ...)
// recorded in one journal file that cancels records in other, older
// files: removing its file while one of them is present would bring back
// on replay what it removed. Ack compaction writes rec again at the head
// of the journal; a removal that cannot be moved (rec nil: a subscription
// or destination removal, whose meaning depends on its place) keeps its
// file while its targets are present.
type fwdAck struct {
	rec     []byte // a RemoveMessage record without transaction, or nil
	targets []int  // files holding what it cancels; 0: any older file
	done    bool   // written again later: this copy no longer matters
}

// relevant reports whether the removal held in file f still matters.
func (a *fwdAck) relevant(f int, present []int) bool {
	for _, t := range a.targets {
		if t == 0 {
			if present[0] < f {
				return true
			}
		} else if _, ok := slices.BinarySearch(present, t); ok && t != f {
			return true
		}
	}
	return false
}

type subRec struct {
	sub  engine.DurableSub
	file int
	dead bool
}

type jobRec struct {
	file int
	loc  journal.Location // its KahaTraceCommand record
	dead bool
}

// shardStore is one shard's KahaDB journal with its in-memory index. Used
// by the shard's goroutine only.
type shardStore struct {
	st  *Store
	j   *journal.Journal
	dir string
	log *slog.Logger
	idx engine.ShardStore // the pending state (storage/memory semantics), without bodies (placeholder)
	// idxOps is the batch as idx gets it (placeholders for messages).
	idxOps []engine.StoreOp
	// batch is the batch being encoded (OpUpdate finds there a message
	// added in the same batch); replaying: encode runs for replay's
	// bookkeeping, and its records are not written.
	batch     []engine.StoreOp
	replaying bool

	// rd reads the messages the engine loads (LoadMessage), on the shard's
	// goroutine while the writer appends: its own handles. removed counts
	// the journal files removed; rdGen is the count rd last saw (its
	// handles of removed files are then closed).
	rd      *journal.Reader
	rdGen   uint64
	removed atomic.Uint64

	msgs map[msgKey]*stored
	byID map[message.Destination]map[string]uint64
	// audit is the producer audit; batchIDs and batchSeqs are
	// dropDuplicateAdds' scratch (audit.go).
	audit     map[message.Destination]map[string]int64
	batchIDs  map[batchID]bool
	batchSeqs map[msgKey]string
	nextSeq   map[message.Destination]uint64
	subs      map[engine.SubKey]*subRec
	jobs      map[string]*jobRec
	live      map[int]int // journal file → records still needed in it
	// marks are the delivery marks (marks.go); batchMarks the ones the
	// batch being encoded raised.
	marks      map[markKey]uint64
	batchMarks []markKey

	// Ack compaction: removals that cancel records in other files, by the
	// file holding them; files never compacted (transaction records); the
	// files at or before the index loaded (their removals are unknown);
	// cleanup cycles in a row that freed nothing while a file was pinned.
	acks      map[int][]*fwdAck
	noCompact map[int]bool
	opaqueTo  int
	noGC      int
	// growthFile is the file being written at the previous cleanup cycle
	// that freed nothing (0 before the first): ack compaction waits while
	// the journal grows (CompactAcksIgnoresStoreGrowth).
	growthFile int

	recs   [][]byte
	owners []func(l journal.Location) // per record: what to note once its location is known
	// arena holds the add records of the batch being encoded (addRecord);
	// enc and msgBuf marshal its converted messages (marshalAdd).
	arena  []byte
	enc    *wire.Encoder
	msgBuf []byte
	seqs   []uint64 // the engine's sequences of this batch's adds
	lastGC time.Time
	// lastSync: the last periodic journal sync (journalDiskSyncStrategy
	// periodic).
	lastSync time.Time
	closed   bool

	// Prepared XA transactions by XID (xa.go), and those whose commit the
	// batch being encoded holds.
	prepared   map[string]*prepTx
	committing []*prepTx
	// loadedTxs: the records of the prepared transactions the checkpoint
	// index named, by txKey, until replay takes them (a commit record in
	// the journal after the index applies them).
	loadedTxs map[string][]replayed
	// rewriteAppend replaces appendAll in rewriteForward when set (tests
	// inject write failures through it).
	rewriteAppend func([][]byte) ([]journal.Location, error)

	cp    checkpointState // the checkpoint index (checkpoint.go)
	stats shardStats
}

func newShardStore(st *Store, j *journal.Journal, dir string, log *slog.Logger) *shardStore {
	return &shardStore{
		st: st, j: j, dir: dir, log: log,
		idx:       memory.NewShard(),
		rd:        journal.NewReader(dir),
		msgs:      map[msgKey]*stored{},
		byID:      map[message.Destination]map[string]uint64{},
		audit:     map[message.Destination]map[string]int64{},
		batchIDs:  map[batchID]bool{},
		batchSeqs: map[msgKey]string{},
		nextSeq:   map[message.Destination]uint64{},
		subs:      map[engine.SubKey]*subRec{},
		jobs:      map[string]*jobRec{},
		live:      map[int]int{},
		marks:     map[markKey]uint64{},
		acks:      map[int][]*fwdAck{},
		noCompact: map[int]bool{},
		prepared:  map[string]*prepTx{},
		lastGC:    time.Now(),
		lastSync:  time.Now(),
	}
}

func kahaDest(d message.Destination) command.Destination {
	return command.Destination{Type: command.DestType(d.Type), Name: d.Name}
}

func engineDest(d command.Destination) message.Destination {
	return message.Destination{Type: message.DestType(d.Type), Name: d.Name}
}

// setStoredDest gives m, read from a record stored under d, its
// destination: d, as ActiveMQ's store hands a message the destination it
// is kept under (the frame of a composite or virtual-destination copy is
// the message as sent, naming the destination it was sent to) — but under
// engine.RetainStore, which holds the retained messages of every topic of
// the shard, the frame's own destination, which names the topic: it is all
// the engine has to find the topic by after a restart.
func setStoredDest(m *message.Message, d message.Destination) {
	if d == engine.RetainStore && m.Destination.Type.IsTopic() {
		return
	}
	m.Destination = d
}

// marshalMessage is the OpenWire v11 loose frame KahaDB stores for m: its
// kept OpenWire form's bytes when it came over OpenWire (those it was read
// back with, or the producer's message marshalled: Encoded.Marshalled),
// else converted. A copy
// that a composite or virtual destination made keeps the bytes of the
// message as sent, which name neither where the copy is nor its
// OriginalDestination: it is converted (marshal.FromEngine sets both in the
// original frame), or a restart would hand it back without its
// OriginalDestination.
func marshalMessage(m *message.Message, redeliveries int32) ([]byte, error) {
	if b := keptMarshalled(m, redeliveries); b != nil {
		return b, nil
	}
	w, err := marshal.FromEngine(m, redeliveries)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(w, wire.StoreFormat())
}

// keptMarshalled is the frame of m kept from OpenWire when marshalMessage
// stores it as it is, else nil. The caller must not write to it.
func keptMarshalled(m *message.Message, redeliveries int32) []byte {
	if m.Original.Protocol == "openwire" && m.Original.Kept() && redeliveries == m.RedeliveryCounter && m.OriginalDestination.IsZero() {
		if b := m.Original.Marshalled(); len(b) > 0 {
			return b
		}
	}
	return nil
}

// marshalAdd is marshalMessage for the add being encoded: a converted
// message is marshalled by the shard's encoder into its buffer (msgBuf),
// valid until the next call, instead of a fresh encoder and buffer per
// message. The store's format has no marshal cache, so a reused encoder
// writes the same bytes as a fresh one.
func (ss *shardStore) marshalAdd(m *message.Message) ([]byte, error) {
	if b := keptMarshalled(m, m.RedeliveryCounter); b != nil {
		return b, nil
	}
	w, err := marshal.FromEngine(m, m.RedeliveryCounter)
	if err != nil {
		return nil, err
	}
	if ss.enc == nil {
		ss.enc = wire.NewEncoder(wire.StoreFormat())
	}
	b, err := ss.enc.Append(ss.msgBuf[:0], w)
	if err != nil {
		return nil, err
	}
	if cap(b) <= maxKeptBuffer {
		ss.msgBuf = b[:0]
	}
	return b, nil
}

// maxKeptBuffer bounds the buffers the shard keeps from one batch to the
// next (msgBuf, arena): one large message does not pin its size.
const maxKeptBuffer = 8 << 20

// addRecord encodes c into the batch's record arena: the add records of a
// batch share one buffer, reset when the next batch starts (apply,
// replayer.op), instead of one allocation each. Nothing keeps an add's
// record past its batch: the journal copies it (Append), and owners and
// ack compaction keep only locations and removal records.
func (ss *shardStore) addRecord(c *command.AddMessage) []byte {
	start := len(ss.arena)
	out := command.Encode(ss.arena, c)
	// A grown arena is a new array: the records already carved from the
	// old one stay valid there, and the new one is only appended to.
	ss.arena = out
	return out[start:len(out):len(out)]
}

// resetArena starts a new batch's records (addRecord).
func (ss *shardStore) resetArena() {
	if cap(ss.arena) > maxKeptBuffer {
		ss.arena = nil
		return
	}
	ss.arena = ss.arena[:0]
}

func unmarshalMessage(b []byte) (*message.Message, error) {
	// Read the frame up to its size prefix, as ActiveMQ's reader does, and
	// ignore anything after it. (This was first added for "stale bytes"
	// after transacted frames; the real cause of that symptom was replay
	// holding transacted adds in the journal's reused read buffer, fixed
	// in recover.go. Kept: it costs nothing and matches ActiveMQ.)
	if len(b) >= 4 {
		if n := int(binary.BigEndian.Uint32(b)); n >= 0 && 4+n < len(b) {
			b = b[:4+n]
		}
	}
	ds, err := wire.Unmarshal(b, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		return nil, err
	}
	w, ok := ds.(*wire.Message)
	if !ok {
		return nil, fmt.Errorf("stored record holds a %s, not a message", wire.TypeName(ds.DataStructureType()))
	}
	// b may point into the journal's read buffer (command.Decode does not
	// copy): the kept original form needs its own bytes.
	return marshal.ToEngineStored(w, bytes.Clone(b))
}

func (ss *shardStore) add(rec []byte, owner func(l journal.Location)) {
	ss.recs = append(ss.recs, rec)
	ss.owners = append(ss.owners, owner)
}

func (ss *shardStore) release(file int) {
	if n := ss.live[file] - 1; n > 0 {
		ss.live[file] = n
	} else {
		delete(ss.live, file)
	}
}

// targets are the files whose records s's removal cancels.
func (s *stored) targets() []int {
	t := slices.Clone(s.files)
	if s.older {
		t = append(t, 0)
	}
	return t
}

func targetsOf(files []int, msgs []*stored) []int {
	t := slices.Clone(files)
	for _, s := range msgs {
		t = append(t, s.targets()...)
	}
	return t
}

// noteAck is the owner of a removal record: once its file is known, it is
// remembered for ack compaction if it cancels records in another file
// (targets is called then, when the records of its own batch have their
// files). rec is what compaction writes again; nil if it cannot be moved.
func (ss *shardStore) noteAck(rec []byte, targets func() []int) func(journal.Location) {
	return func(l journal.Location) {
		if l.File == 0 {
			return
		}
		t := targets()
		for _, f := range t {
			if f != l.File {
				ss.acks[l.File] = append(ss.acks[l.File], &fwdAck{rec: rec, targets: t})
				return
			}
		}
	}
}

// Apply writes ops as one journal batch (one fsync), then applies them to
// the index.
func (ss *shardStore) Apply(ops []engine.StoreOp) error {
	return ss.apply(ops, true)
}

// ApplyNoSync is Apply without the fsync (engine.NoSyncApplier): the batch
// reaches the disk with the next synced one.
func (ss *shardStore) ApplyNoSync(ops []engine.StoreOp) error {
	return ss.apply(ops, false)
}

func (ss *shardStore) apply(ops []engine.StoreOp, sync bool) error {
	if ss.closed {
		return errors.New("kahadb: shard store is closed")
	}
	if ss.st.lost.Load() {
		// Another broker may be writing this directory now.
		return fmt.Errorf("%w (%s): %d operations not written", ErrLockLost, ss.dir, len(ops))
	}
	// An add and the remove of the same queue message in one batch cancel
	// out before they get here, when concurrentStoreAndDispatchQueues is on
	// (engine/writer.go cancelConsumed, in linear time on the merged batch);
	// with it off both are written, as ActiveMQ writes them.
	ops = ss.dropDuplicateAdds(ops)
	if err := ss.idxApply(ops); err != nil {
		return err
	}
	ss.recs, ss.owners, ss.seqs = ss.recs[:0], ss.owners[:0], ss.seqs[:0]
	ss.resetArena()
	ss.batch = ops
	defer func() { ss.batch = nil }()
	for i := range ops {
		if err := ss.encode(&ops[i]); err != nil {
			clear(ss.committing)
			ss.committing = ss.committing[:0]
			clear(ss.batchMarks)
			ss.batchMarks = ss.batchMarks[:0]
			ss.diverged(err)
			return fmt.Errorf("kahadb: op %d: %w", i, err)
		}
	}
	if len(ss.committing) > 0 {
		ss.finishCommits()
	}
	ss.addMarksRecord()
	if len(ss.recs) == 0 {
		return nil
	}
	if len(ss.seqs) > 0 {
		// KahaDB keys messages by id and numbers them on replay; the
		// engine's own sequence numbers ride in a trace record at the head
		// of the batch (ActiveMQ ignores it), so a restart gives them back.
		ss.recs = append(ss.recs, nil)
		copy(ss.recs[1:], ss.recs)
		ss.recs[0] = command.Encode(nil, &command.Trace{Message: encodeSeqs(ss.seqs)})
		ss.owners = append(ss.owners, nil)
		copy(ss.owners[1:], ss.owners)
		ss.owners[0] = nil
	}
	// With the periodic strategy every batch is written unsynced; the
	// journal is synced by time (housekeep).
	locs, err := ss.appendAll(ss.recs, sync && !ss.st.periodic())
	if err != nil {
		ss.diverged(err)
		return fmt.Errorf("kahadb: journal write: %w", err)
	}
	ss.wrote(locs)
	ss.housekeep()
	return nil
}

// idxApply applies ops to the index with placeholders for the messages.
func (ss *shardStore) idxApply(ops []engine.StoreOp) error {
	ss.idxOps = append(ss.idxOps[:0], ops...)
	for i := range ss.idxOps {
		if op := &ss.idxOps[i]; op.Kind == engine.OpAdd && op.Msg != nil {
			op.Msg = placeholder(op.Msg.RedeliveryCounter)
		}
	}
	err := ss.idx.Apply(ss.idxOps)
	clear(ss.idxOps)
	return err
}

// Housekeep does the store's timed work when the shard is idle
// (engine.Housekeeper): the periodic journal sync, the cleanup and the
// checkpoint that are due, which otherwise wait for the next Apply.
func (ss *shardStore) Housekeep() error {
	if ss.closed || ss.st.lost.Load() {
		return nil
	}
	return ss.housekeep()
}

func (ss *shardStore) housekeep() error {
	var err error
	if ss.st.periodic() && time.Since(ss.lastSync) >= ss.st.opts.JournalDiskSyncInterval {
		ss.lastSync = time.Now()
		if err = ss.j.Sync(); err != nil {
			ss.log.Error("periodic journal sync failed", "dir", ss.dir, "err", err)
		}
	}
	if iv := ss.st.opts.CleanupInterval; iv > 0 && time.Since(ss.lastGC) >= iv {
		ss.cleanup()
	}
	ss.maybeCheckpoint()
	return err
}

// wrote hands each record's location to its owner once its batch is
// written.
func (ss *shardStore) wrote(locs []journal.Location) {
	for i, l := range locs {
		if ss.owners[i] != nil {
			ss.owners[i](l)
		}
	}
	clear(ss.owners)
	if len(locs) > 0 {
		ss.cp.lastRec = locs[len(locs)-1]
		ss.cp.changed += len(locs)
	}
}

// encode turns one operation into journal records and bookkeeping.
func (ss *shardStore) encode(op *engine.StoreOp) error {
	k := msgKey{op.Dest, op.Seq}
	switch op.Kind {
	case engine.OpAdd:
		if op.Dest.Type.IsTopic() && len(op.Subs) == 0 {
			return nil
		}
		var s *stored
		if p, i := ss.committedAdd(op); p != nil { // committing is empty but for an XA commit
			// Stored by its transaction's record, which the commit
			// record makes count.
			p.matched[i] = true
			ss.seqs[p.slot0+i] = op.Seq
			l := p.adds[i].loc
			s = &stored{id: op.Msg.ID, file: l.File, loc: l, files: []int{l.File}}
			s.setMeta(op.Msg)
			ss.live[l.File]++
			ss.msgs[k] = s
			ss.index(op.Dest, op.Msg.ID, op.Seq)
		} else {
			b, err := ss.marshalAdd(op.Msg)
			if err != nil {
				return err
			}
			s = &stored{id: op.Msg.ID}
			s.setMeta(op.Msg)
			ss.msgs[k] = s
			ss.seqs = append(ss.seqs, op.Seq)
			ss.index(op.Dest, op.Msg.ID, op.Seq)
			ss.add(ss.addRecord(&command.AddMessage{
				Destination: kahaDest(op.Dest), MessageID: op.Msg.ID, Message: b, Priority: int32(op.Msg.Priority),
			}), func(l journal.Location) {
				s.file, s.loc = l.File, l
				s.files = append(s.files, l.File)
				if !s.dead {
					ss.live[l.File]++
				}
			})
		}
		if op.Dest.Type.IsTopic() {
			s.pending = map[engine.SubKey]bool{}
			for _, key := range op.Subs {
				s.pending[key] = true
			}
			// Durable subscriptions of this topic that the message is not
			// for (selector, offline non-persistent rule) ack it at once,
			// as ActiveMQ's "unmatched" ack: KahaDB marks a topic message
			// pending for every subscription.
			for key, r := range ss.subs {
				if !s.pending[key] && r.sub.Destination.Matches(op.Dest) {
					rec := command.Encode(nil, &command.RemoveMessage{
						Destination: kahaDest(op.Dest), MessageID: op.Msg.ID, SubscriptionKey: key.String(), Ack: []byte{},
					})
					ss.add(rec, ss.noteAck(rec, s.targets))
				}
			}
		}
	case engine.OpRemove:
		s := ss.msgs[k]
		if s == nil {
			return nil
		}
		if len(ss.committing) > 0 && ss.committedAck(txAckKey{op.Dest, op.Seq, engine.SubKey{}}) {
			ss.forget(k, s)
			return nil
		}
		rec := command.Encode(nil, &command.RemoveMessage{Destination: kahaDest(op.Dest), MessageID: s.id})
		ss.add(rec, ss.noteAck(rec, s.targets))
		ss.forget(k, s)
	case engine.OpAck:
		s := ss.msgs[k]
		if s == nil || !s.pending[op.Sub.Key] {
			return nil
		}
		if len(ss.committing) == 0 || !ss.committedAck(txAckKey{op.Dest, op.Seq, op.Sub.Key}) {
			rec := command.Encode(nil, &command.RemoveMessage{
				Destination: kahaDest(op.Dest), MessageID: s.id, SubscriptionKey: op.Sub.Key.String(),
			})
			ss.add(rec, ss.noteAck(rec, s.targets))
		}
		delete(s.pending, op.Sub.Key)
		if len(s.pending) == 0 {
			ss.forget(k, s)
		}
	case engine.OpUpdate:
		s := ss.msgs[k]
		if s == nil {
			return nil
		}
		var rec []byte
		if !ss.replaying {
			// Replay only needs the bookkeeping below.
			m, err := ss.current(k, s)
			if err != nil || m == nil {
				return err
			}
			b, err := marshalMessage(m, op.Count)
			if err != nil {
				return err
			}
			rec = command.Encode(nil, &command.UpdateMessage{Message: command.AddMessage{
				Destination: kahaDest(op.Dest), MessageID: s.id, Message: b, Priority: int32(m.Priority),
			}})
		}
		old := s.file
		ss.add(rec, func(l journal.Location) {
			s.files = append(s.files, l.File)
			if s.dead {
				return
			}
			s.file, s.loc = l.File, l
			ss.live[l.File]++
			if old != 0 {
				ss.release(old)
			}
		})
	case engine.OpAddSub:
		rec, err := encodeSub(op.Sub)
		if err != nil {
			return err
		}
		key := op.Sub.Key
		if old := ss.subs[key]; old != nil {
			ss.dropSub(old)
		}
		r := &subRec{sub: op.Sub}
		ss.subs[key] = r
		ss.add(rec, func(l journal.Location) {
			r.file = l.File
			if !r.dead {
				ss.live[l.File]++
			}
		})
	case engine.OpRemoveSub:
		key := op.Sub.Key
		r := ss.subs[key]
		if r == nil {
			return nil
		}
		var cancelled []*stored
		ss.add(command.Encode(nil, &command.Subscription{Destination: kahaDest(r.sub.Destination), SubscriptionKey: key.String()}),
			ss.noteAck(nil, func() []int { return targetsOf([]int{r.file}, cancelled) }))
		delete(ss.subs, key)
		ss.dropSub(r)
		ss.dropMarks(func(k markKey) bool { return k.sub == key })
		for mk, s := range ss.msgs {
			if s.pending[key] {
				cancelled = append(cancelled, s)
				delete(s.pending, key)
				if len(s.pending) == 0 {
					ss.forget(mk, s)
				}
			}
		}
	case engine.OpRemoveDest:
		delete(ss.audit, op.Dest)
		var cancelled []*stored
		var subFiles []int
		ss.add(command.Encode(nil, &command.RemoveDestination{Destination: kahaDest(op.Dest)}),
			ss.noteAck(nil, func() []int { return targetsOf(subFiles, cancelled) }))
		for mk, s := range ss.msgs {
			if mk.dest == op.Dest {
				cancelled = append(cancelled, s)
				ss.forget(mk, s)
			}
		}
		if op.Dest.Type.IsTopic() {
			for key, r := range ss.subs {
				if r.sub.Destination == op.Dest {
					subFiles = append(subFiles, r.file)
					delete(ss.subs, key)
					ss.dropSub(r)
					ss.dropMarks(func(k markKey) bool { return k.sub == key })
				}
			}
			ss.dropMarks(func(k markKey) bool { return k.dest == op.Dest })
		}
	case engine.OpAddDest:
		// No journal record: ActiveMQ writes none either, its
		// StoredDestination lives in db.data. The checkpoint index is
		// Wharf's db.data: it must be written again even if the journal
		// has not moved (checkpoint.go).
		if !ss.replaying {
			ss.cp.destsChanged = true
			ss.cp.changed++
		}
	case engine.OpAddJob:
		rec, err := encodeJob(op.Job)
		if err != nil {
			return err
		}
		if old := ss.jobs[op.Job.ID]; old != nil {
			ss.dropJob(old)
		}
		r := &jobRec{}
		ss.jobs[op.Job.ID] = r
		ss.add(command.Encode(nil, &command.Trace{Message: rec}), func(l journal.Location) {
			r.file, r.loc = l.File, l
			if !r.dead {
				ss.live[l.File]++
			}
		})
	case engine.OpDelivered:
		ss.noteMark(op)
	case engine.OpPrepare:
		return ss.encodePrepare(op.Tx)
	case engine.OpCommit, engine.OpRollback:
		ss.encodeEnd(op)
	case engine.OpRemoveJob:
		r := ss.jobs[op.JobID]
		if r == nil {
			return nil
		}
		ss.add(command.Encode(nil, &command.Trace{Message: jobRemovePrefix + op.JobID}),
			ss.noteAck(nil, func() []int { return []int{r.file} }))
		delete(ss.jobs, op.JobID)
		ss.dropJob(r)
	}
	return nil
}

// encodeSub is the KahaSubscriptionCommand record that adds sub.
func encodeSub(sub engine.DurableSub) ([]byte, error) {
	info, err := wire.Marshal(&wire.SubscriptionInfo{
		ClientId:              sub.Key.ClientID,
		SubcriptionName:       sub.Key.Name,
		Destination:           marshal.DestFromEngine(sub.Destination),
		SubscribedDestination: marshal.DestFromEngine(sub.Destination),
		Selector:              sub.Selector,
		NoLocal:               sub.NoLocal,
	}, wire.StoreFormat())
	if err != nil {
		return nil, err
	}
	return command.Encode(nil, &command.Subscription{
		Destination: kahaDest(sub.Destination), SubscriptionKey: sub.Key.String(), SubscriptionInfo: info,
	}), nil
}

// appendAll writes records as one batch, or as several when together they
// are bigger than a journal file (each batch is then atomic on its own).
func (ss *shardStore) appendAll(recs [][]byte, sync bool) ([]journal.Location, error) {
	appendBatch := ss.j.Append
	if !sync {
		appendBatch = ss.j.AppendNoSync
	}
	limit := int(max(ss.st.opts.JournalMaxFileLength, 4<<20)) - 64
	var locs []journal.Location
	start, size := 0, 0
	for i, r := range recs {
		if i > start && size+len(r)+5 >= limit {
			l, err := appendBatch(recs[start:i])
			if err != nil {
				return nil, err
			}
			locs = append(locs, l...)
			start, size = i, 0
		}
		size += len(r) + 5
	}
	l, err := appendBatch(recs[start:])
	if err != nil {
		return nil, err
	}
	return append(locs, l...), nil
}

func (ss *shardStore) index(d message.Destination, id string, seq uint64) {
	m := ss.byID[d]
	if m == nil {
		m = map[string]uint64{}
		ss.byID[d] = m
	}
	m[id] = seq
}

func (ss *shardStore) forget(k msgKey, s *stored) {
	delete(ss.msgs, k)
	if m := ss.byID[k.dest]; m != nil {
		delete(m, s.id)
	}
	s.dead = true
	if s.file != 0 {
		ss.release(s.file)
	}
}

func (ss *shardStore) dropSub(r *subRec) {
	r.dead = true
	if r.file != 0 {
		ss.release(r.file)
	}
}

func (ss *shardStore) dropJob(r *jobRec) {
	r.dead = true
	if r.file != 0 {
		ss.release(r.file)
	}
}

// current reads the message s stores (for UpdateMessage): from this
// batch when it was added in it, else from the journal.
func (ss *shardStore) current(k msgKey, s *stored) (*message.Message, error) {
	if s.loc.File == 0 {
		for i := len(ss.batch) - 1; i >= 0; i-- {
			if op := &ss.batch[i]; op.Kind == engine.OpAdd && op.Dest == k.dest && op.Seq == k.seq {
				return op.Msg, nil
			}
		}
		return nil, nil
	}
	p, err := ss.j.Read(s.loc)
	if err != nil {
		return nil, err
	}
	return decodeMessage(p, s.loc)
}

// decodeMessage decodes the add or update record read at l.
func decodeMessage(p []byte, l journal.Location) (*message.Message, error) {
	c, err := command.Decode(p)
	var add *command.AddMessage
	switch c := c.(type) {
	case *command.AddMessage:
		add = c
	case *command.UpdateMessage:
		add = &c.Message
	}
	if err != nil || add == nil {
		return nil, fmt.Errorf("kahadb: record %v holds no message", l)
	}
	m, err := unmarshalMessage(add.Message)
	if err != nil {
		return nil, fmt.Errorf("kahadb: message %s at %v: %w", add.MessageID, l, err)
	}
	setStoredDest(m, engineDest(add.Destination))
	return m, nil
}

// cleanup deletes (or archives) the oldest journal files that hold nothing
// still needed, oldest first: acks in a file only refer to messages in it or
// in older files, so a prefix of free files can go without bringing acked
// messages back on replay. The file being written is never removed. When
// the oldest file has stayed pinned for CompactAcksAfterNoGC cycles, ack
// compaction (compactAcks) frees the free files after it, unless the
// journal is still growing (see CompactAcksIgnoresStoreGrowth).
func (ss *shardStore) cleanup() {
	ss.lastGC = time.Now()
	files := ss.j.Files()
	sort.Ints(files)
	for i, f := range files {
		if i < len(files)-1 && ss.live[f] > 0 {
			ss.rewriteForward(f)
		}
		if i == len(files)-1 {
			ss.noGC = 0
			return
		}
		if ss.live[f] > 0 {
			ss.log.Debug("journal file pinned", "file", f, "records", ss.live[f])
			if i > 0 {
				ss.noGC = 0
				return
			}
			if !ss.st.opts.EnableAckCompaction {
				return
			}
			// As MessageDatabase.checkpointUpdate: once the cycles are
			// up, compact only if the journal has not moved to a new
			// file since the previous cycle, unless told to ignore that
			// growth; either way the count starts again.
			head := files[len(files)-1]
			if ss.noGC++; ss.noGC >= ss.st.opts.CompactAcksAfterNoGC {
				ss.noGC = 0
				if ss.growthFile == head || ss.st.opts.CompactAcksIgnoresStoreGrowth {
					ss.compactAcks(files)
				} else {
					ss.log.Debug("ack compaction skipped: the journal is growing", "file", head, "previous", ss.growthFile)
				}
			}
			ss.growthFile = head
			return
		}
		if !ss.removeFile(f) {
			return
		}
		ss.log.Debug("journal file released", "file", f, "archived", ss.st.opts.ArchiveDataLogs)
	}
}

// removeFile deletes or archives journal file f once the index on disk no
// longer refers to it.
func (ss *shardStore) removeFile(f int) bool {
	// The index on disk must not refer to a file about to go: write it
	// first (a no-op when nothing changed since the last one). A failure
	// only costs a full replay at the next start.
	ss.checkpoint()
	// Records written without a sync (ApplyNoSync) may be what frees f:
	// they go to disk before f goes.
	if err := ss.j.Sync(); err != nil {
		ss.log.Error("journal cleanup deferred", "file", f, "err", err)
		return false
	}
	var err error
	if ss.st.opts.ArchiveDataLogs {
		archive := filepath.Join(ss.dir, "data-archive")
		if err = os.MkdirAll(archive, 0o755); err == nil {
			err = ss.j.Archive(f, archive)
		}
	} else {
		err = ss.j.Remove(f)
	}
	if err != nil {
		ss.log.Error("journal cleanup failed", "file", f, "err", err)
		return false
	}
	ss.removed.Add(1)
	delete(ss.acks, f)
	delete(ss.noCompact, f)
	return true
}

// compactAcks is ActiveMQ's ack compaction: it frees the journal files
// after the pinned oldest one (files, ascending) that hold no record still
// needed. The removals in them that cancel records of files still present
// are written again, as one batch, at the head of the journal; then the
// index is written and the files are removed, leaving a gap in the file
// numbers as ActiveMQ's own GC does. Not compacted: the file being
// written, files holding transaction records (an ActiveMQ journal), files
// at or before the location of the index loaded at start (their removals
// were not seen), and files holding a subscription or destination removal
// that still cancels records of a present file.
func (ss *shardStore) compactAcks(files []int) {
	if len(files) < 3 || ss.cp.stopped {
		return
	}
	var (
		free  []int
		moved []*fwdAck
		recs  [][]byte
	)
	for _, f := range files[1 : len(files)-1] {
		if ss.live[f] > 0 || ss.noCompact[f] || f <= ss.opaqueTo {
			continue
		}
		var mv []*fwdAck
		ok := true
		for _, a := range ss.acks[f] {
			if a.done || !a.relevant(f, files) {
				continue
			}
			if a.rec == nil {
				ok = false
				break
			}
			mv = append(mv, a)
		}
		if !ok {
			continue
		}
		free = append(free, f)
		for _, a := range mv {
			moved = append(moved, a)
			recs = append(recs, a.rec)
		}
	}
	if len(free) == 0 {
		return
	}
	if len(recs) > 0 {
		locs, err := ss.appendAll(recs, true)
		if err != nil {
			ss.log.Error("ack compaction failed", "err", err)
			ss.diverged(err)
			return
		}
		for i, l := range locs {
			a := moved[i]
			a.done = true
			ss.acks[l.File] = append(ss.acks[l.File], &fwdAck{rec: a.rec, targets: a.targets})
		}
		ss.cp.lastRec = locs[len(locs)-1]
		ss.cp.changed += len(locs)
	}
	var removed []int
	for _, f := range free {
		if !ss.removeFile(f) {
			break
		}
		removed = append(removed, f)
	}
	ss.log.Info("ack compaction: journal files freed", "dir", ss.dir, "files", removed,
		"acks_rewritten", len(recs), "pinned_file", files[0], "archived", ss.st.opts.ArchiveDataLogs)
}

// rewriteForward frees file f when all that keeps it is durable
// subscription records of subscriptions with no pending message: they are
// written again at the head of the journal, as ActiveMQ rewrites such a
// subscription command (checkpointUpdate rule 5). A subscription with a
// backlog is left alone: re-adding it would start it afresh on replay and
// lose the backlog. Files holding pending messages or scheduled jobs are
// not rewritten (ack compaction is not implemented).
//
// f is released only once the rewritten records are written: if the write
// fails, the subscriptions still count f's records, so cleanup keeps the
// only copy. The state is then unchanged (a failed Append leaves the
// journal's append position where it was), so checkpoints go on.
func (ss *shardStore) rewriteForward(f int) {
	for _, s := range ss.msgs {
		if s.file == f {
			return
		}
	}
	for _, j := range ss.jobs {
		if j.file == f {
			return
		}
	}
	var move []*subRec
	for key, r := range ss.subs {
		if r.file != f {
			continue
		}
		for _, s := range ss.msgs {
			if s.pending[key] {
				return
			}
		}
		move = append(move, r)
	}
	if len(move) == 0 {
		return
	}
	ss.recs, ss.owners, ss.seqs = ss.recs[:0], ss.owners[:0], ss.seqs[:0]
	for _, r := range move {
		rec, err := encodeSub(r.sub)
		if err != nil {
			ss.log.Error("subscription rewrite failed", "file", f, "sub", r.sub.Key.String(), "err", err)
			return
		}
		ss.add(rec, func(l journal.Location) {
			old := r.file
			r.file = l.File
			ss.live[l.File]++
			ss.release(old)
		})
	}
	appendAll := func(recs [][]byte) ([]journal.Location, error) { return ss.appendAll(recs, true) }
	if ss.rewriteAppend != nil {
		appendAll = ss.rewriteAppend
	}
	locs, err := appendAll(ss.recs)
	if err != nil {
		clear(ss.owners)
		ss.log.Error("subscription rewrite failed: the journal file is kept", "file", f, "err", err)
		return
	}
	ss.wrote(locs)
	ss.log.Debug("durable subscriptions rewritten forward", "file", f, "count", len(move))
}

// Syncs tells the engine that Apply waits for an fsync, so it writes on a
// writer goroutine and merges batches that queue up meanwhile (group commit).
func (ss *shardStore) Syncs() bool { return ss.st.opts.EnableJournalDiskSyncs }

// Close closes the journal (after a final cleanup, as cleanupOnStop).
func (ss *shardStore) Close() error {
	if ss.closed {
		return nil
	}
	ss.closed = true
	if ss.st.lost.Load() {
		// Another broker may own the directory now: no cleanup, no
		// checkpoint, only close the files.
		ss.rd.Reset()
		return ss.j.Close()
	}
	if !ss.st.opts.NoCleanupOnStop {
		ss.cleanup()
	}
	// A clean stop leaves an index of everything: the next start replays
	// nothing but what a later writer (ActiveMQ) appended.
	ss.checkpoint()
	ss.rd.Reset()
	return ss.j.Close()
}

const seqsPrefix = "wharf:seqs:"

func encodeSeqs(seqs []uint64) string {
	b := []byte(seqsPrefix)
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, s, 10)
	}
	return string(b)
}

func decodeSeqs(s string) []uint64 {
	var out []uint64
	for _, f := range strings.Split(strings.TrimPrefix(s, seqsPrefix), ",") {
		if n, err := strconv.ParseUint(f, 10, 64); err == nil {
			out = append(out, n)
		}
	}
	return out
}
