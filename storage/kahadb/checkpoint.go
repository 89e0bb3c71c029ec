package kahadb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

// The checkpoint index.
//
// Every CheckpointInterval (after an Apply), before cleanup removes a
// journal file, and at Close, a shard writes its recovered state as of a
// journal location L (the append position) to wharf-index.bin next to its
// journal: where each pending message's current record is (add or update),
// the durable subscriptions and the messages each still owes, where each
// scheduled job's record is, the prepared XA transactions (where each of
// their records is and what it holds, and their acks), the delivery marks
// (marks.go), and the sequence counters; for each message also its
// priority, expiration and size, so that a start that finds a valid index
// loads it without reading any pending message (the engine reads each when
// it needs it: engine.MessageLoader), and replays only the records at or
// after L; without one it replays the whole journal, as before.
// Messages stay in the journal: the index holds locations. It also lists
// the destinations the shard knows (engine.OpAddDest, or named by a
// record), empty ones included, as db.data keeps a StoredDestination per
// destination until KahaRemoveDestinationCommand: a restart from it
// creates them all again. A destination created since the last index,
// with no journal record naming it, is lost by a crash, as in ActiveMQ
// (its db.data gets it at the next checkpoint); a clean stop writes the
// index, so a clean restart keeps it. Without an index (or with
// checkpoints off) only the destinations the journal's records name come
// back, as ActiveMQ's rebuild without db.data brings back.
//
// DEVIATION: ActiveMQ's index is db.data (a B-tree page file). Wharf writes
// its own, under a name ActiveMQ does not read, and never a db.data: ActiveMQ
// opening a Wharf journal must rebuild its index from the journal alone
// (reference kahadb.md §9). Records ActiveMQ appends to the journal later
// come after L and are replayed; files it removes make the index stale.
//
// A large state (asyncCheckpointMin pending messages or more) is copied
// out on the shard's goroutine and encoded, written and fsynced on another
// one, one at a time; a periodic checkpoint of it also waits until the
// journal has grown by one record per checkpointChangeRatio pending
// messages. Cleanup (before removing a file) and Close write the index on
// the shard's goroutine, after waiting for one in flight.
//
// The file is replaced atomically (temporary file, fsync, rename, fsync of
// the directory; the fsyncs only with EnableJournalDiskSyncs, whose journal
// batches are then already on disk, so the index never runs ahead of the
// journal). An index is used only if it is intact (checksum), of this
// format version, and still matches the journal: L's file is present and
// not cut short, the last record before L is the one the index saw (CRC),
// every file it refers to is present, and every job record and prepared
// transaction record it names holds what it says (a message record is
// checked when it is loaded: loadMessages). Anything else is logged with the reason, the index
// is deleted, and the whole journal is replayed: the index is a shortcut,
// never the only copy of anything.
//
// No checkpoint is taken while the journal holds records of a transaction
// a replay left open and never prepared (an ActiveMQ journal with in-flight
// work): the index does not record those, and a commit appended later (by
// ActiveMQ) would need them, which lie before L. A prepared XA transaction
// (xa.go) is recorded: a start from the index reads its adds back (a few
// records: the engine holds a prepared transaction's sends as messages)
// and hands the replay after L its records, for a commit record there.
// ActiveMQ's db.data records prepared transactions too.

const (
	indexFile    = "wharf-index.bin"
	indexTmpFile = "wharf-index.bin.tmp"
	indexMagic   = "WHARFIDX"
	// indexVersion is the format below; another version is not read.
	// 2 added each message's priority, expiration, size and older flag,
	// so that a start reads no message; 3 the prepared XA transactions;
	// 4 the delivery marks (marks.go); 5 the destinations the shard knows
	// (an older index is discarded: the replay of the whole journal finds
	// more destinations than it lists); 6 the producer audit (audit.go).
	indexVersion = 6
	// indexHeadSize is magic, version (uint32) and body length (uint64).
	indexHeadSize = len(indexMagic) + 4 + 8
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkpointState is a shard's checkpoint bookkeeping.
type checkpointState struct {
	at      journal.Location // location of the last index written or loaded: replay starts here
	lastRec journal.Location // the last record written or replayed (before Head)
	last    time.Time        // when a checkpoint was last tried
	txFile  int              // oldest file holding records of a transaction left open by replay; 0 if none
	txNoted bool             // the deferral for txFile was logged
	// stopped: the in-memory state may hold operations the journal does
	// not (a failed write); no index may record it.
	stopped bool
	// changed counts the journal records written (and destinations
	// created) since the last snapshot: a periodic checkpoint of a large
	// state waits until enough changed.
	changed int
	// destsChanged: a destination was created since the last snapshot
	// (engine.OpAddDest, which writes no record): the index must be
	// written even if the journal has not moved.
	destsChanged bool
	// inflight receives the result of an index being written off the
	// shard's goroutine (a large state); nil when none is.
	inflight chan cpResult
}

// cpResult is how writing one index went.
type cpResult struct {
	at       journal.Location
	n, bytes int
	took     time.Duration
	err      error
}

const (
	// asyncCheckpointMin is the number of pending messages from which the
	// index is encoded and written off the shard's goroutine: below it the
	// whole checkpoint takes well under a millisecond.
	asyncCheckpointMin = 4096
	// checkpointChangeRatio bounds how often a large state is written: a
	// periodic checkpoint needs at least one journal record written since
	// the last one per checkpointChangeRatio pending messages. The index
	// costs O(pending) to write, so at most checkpointChangeRatio index
	// entries are written per journal record, and a restart replays at most
	// pending/checkpointChangeRatio records more than with an index per
	// interval (next to reading the pending messages, which it does anyway).
	checkpointChangeRatio = 8
)

// diverged stops checkpoints after an Apply failed once the in-memory
// state had changed: the journal, not that state, is then the truth, and
// the next start must get it from the journal (the last index written is
// still valid: what follows it in the journal is replayed).
func (ss *shardStore) diverged(err error) {
	if !ss.cp.stopped {
		ss.cp.stopped = true
		ss.log.Error("checkpoints stopped until restart: a journal write failed", "dir", ss.dir, "err", err)
	}
}

// shardStats counts how a shard recovered and checkpointed (Store.Recovery).
type shardStats struct {
	FromIndex       bool
	IndexMessages   int
	RecordsReplayed int
	Checkpoints     atomic.Int64 // written by the shard's goroutine, read by Recovery
}

// maybeCheckpoint writes the index when CheckpointInterval has passed since
// the last one. Called by the shard's goroutine after an Apply.
func (ss *shardStore) maybeCheckpoint() {
	iv := ss.st.opts.CheckpointInterval
	if iv < 0 || ss.st.opts.NoPeriodicCheckpoint || time.Since(ss.cp.last) < iv {
		return
	}
	if ss.cp.changed*checkpointChangeRatio < len(ss.msgs) {
		return
	}
	if ss.cp.inflight != nil && !ss.collect(false) {
		return // the previous index is still being written
	}
	ss.checkpointAt(len(ss.msgs) >= asyncCheckpointMin)
}

// collect takes the result of the index being written off the shard's
// goroutine, waiting for it when wait. It reports whether there was none
// left in flight.
func (ss *shardStore) collect(wait bool) bool {
	if ss.cp.inflight == nil {
		return true
	}
	var r cpResult
	if wait {
		r = <-ss.cp.inflight
	} else {
		select {
		case r = <-ss.cp.inflight:
		default:
			return false
		}
	}
	ss.cp.inflight = nil
	ss.done(r)
	return true
}

// done records a written index (or logs why it was not).
func (ss *shardStore) done(r cpResult) {
	if r.err != nil {
		ss.cp.destsChanged = true // its destinations are not on disk yet
		ss.log.Error("checkpoint failed", "dir", ss.dir, "file", indexFile, "err", r.err)
		return
	}
	ss.cp.at = r.at
	ss.stats.Checkpoints.Add(1)
	ss.log.Debug("checkpoint written", "dir", ss.dir, "at", r.at.String(), "messages", r.n, "bytes", r.bytes, "took", r.took)
}

// checkpoint writes the index for the state as of the journal's append
// position, unless nothing was written since the last one, and returns
// once it is written (waiting for one written off the goroutine first):
// cleanup relies on it before it removes a file, Close before it closes. A
// failure is logged: the previous index (or none) still leads to a correct
// start, at worst a longer replay.
func (ss *shardStore) checkpoint() {
	ss.collect(true)
	ss.checkpointAt(false)
}

// checkpointAt takes a snapshot of the state and writes it as the index,
// on the shard's goroutine or, when async, on another one (collect takes
// the result). No other may be in flight.
func (ss *shardStore) checkpointAt(async bool) {
	if ss.st.opts.CheckpointInterval < 0 || ss.cp.stopped {
		return
	}
	ss.cp.last = time.Now()
	head := ss.j.Head()
	if head == ss.cp.at && !ss.cp.destsChanged {
		return
	}
	// The index must not describe records a crash can still take away.
	if err := ss.j.Sync(); err != nil {
		ss.log.Error("checkpoint skipped", "dir", ss.dir, "err", err)
		return
	}
	if ss.cp.txFile != 0 {
		if slices.Contains(ss.j.Files(), ss.cp.txFile) {
			if !ss.cp.txNoted {
				ss.cp.txNoted = true
				ss.log.Info("checkpoint deferred: the journal holds uncommitted transactions", "dir", ss.dir, "file", ss.cp.txFile)
			}
			return
		}
		ss.cp.txFile = 0
	}
	start := time.Now()
	snap, err := ss.snapshot(head)
	if err != nil {
		ss.log.Error("checkpoint failed", "dir", ss.dir, "file", indexFile, "err", err)
		return
	}
	ss.cp.changed, ss.cp.destsChanged = 0, false
	write := func() cpResult {
		n, size, err := snap.write(ss.dir, ss.st.opts.EnableJournalDiskSyncs)
		return cpResult{at: head, n: n, bytes: size, took: time.Since(start), err: err}
	}
	if !async {
		ss.done(write())
		return
	}
	// The snapshot is the goroutine's own: the shard goes on changing its
	// state meanwhile, and the index on disk stays the previous one until
	// the rename.
	ch := make(chan cpResult, 1)
	ss.cp.inflight = ch
	go func() { ch <- write() }()
}

// indexEntry is one pending message as the index holds it: copied out of
// the shard's state, so that it can be encoded on another goroutine.
type indexEntry struct {
	seq     uint64
	id      string
	loc     journal.Location
	counter int32
	subs    []engine.SubKey // the store's copy (memory Recover clones them)
	prio    uint8
	exp     int64
	size    int64
	// older: an add record of it may be in a file before loc's (loc is
	// an update), which ack compaction must know (stored.older).
	older bool
}

type indexDest struct {
	d    message.Destination
	from int // its messages: entries[from:to]
	to   int
}

type indexSubEntry struct {
	sub  engine.DurableSub
	file int
}

// indexSnapshot is the state an index records, as of head.
type indexSnapshot struct {
	head, lastRec journal.Location
	lastCRC       uint32
	nextSeq       []indexSeq
	subs          []indexSubEntry
	dests         []indexDest
	entries       []indexEntry
	jobs          []indexJob
	txs           []indexTx // in prepare order
	marks         []indexMark
	known         []message.Destination
	audit         []indexAudit
}

// indexAudit is one producer's entry in a destination's producer audit.
type indexAudit struct {
	d        message.Destination
	producer string
	seq      int64
}

type indexSeq struct {
	d   message.Destination
	seq uint64
}

// snapshot copies out of the shard's state what the index as of head
// records. Runs on the shard's goroutine; the result is immutable.
func (ss *shardStore) snapshot(head journal.Location) (*indexSnapshot, error) {
	x := &indexSnapshot{head: head, lastRec: ss.cp.lastRec}
	if ss.cp.lastRec.File != 0 {
		p, err := ss.j.Read(ss.cp.lastRec)
		if err != nil {
			return nil, fmt.Errorf("read the last record: %w", err)
		}
		x.lastCRC = crc32.Checksum(p, castagnoli)
	}
	x.nextSeq = make([]indexSeq, 0, len(ss.nextSeq))
	for d, seq := range ss.nextSeq {
		x.nextSeq = append(x.nextSeq, indexSeq{d, seq})
	}
	x.entries = make([]indexEntry, 0, len(ss.msgs))
	err := ss.idx.Recover(func(it engine.RecoveredItem) error {
		switch {
		case it.Created:
			x.known = append(x.known, it.Dest)
		case it.Sub != nil:
			r := ss.subs[it.Sub.Key]
			if r == nil || r.file == 0 {
				return fmt.Errorf("subscription %s has no journal location", it.Sub.Key)
			}
			x.subs = append(x.subs, indexSubEntry{*it.Sub, r.file})
		case it.Job != nil:
			r := ss.jobs[it.Job.ID]
			if r == nil || r.loc.File == 0 {
				return fmt.Errorf("scheduled job %s has no journal location", it.Job.ID)
			}
			x.jobs = append(x.jobs, indexJob{id: it.Job.ID, loc: r.loc})
		case it.Tx != nil:
			p := ss.prepared[it.Tx.XID.String()]
			if p == nil {
				return fmt.Errorf("prepared transaction %s has no journal records", it.Tx.XID)
			}
			t, err := indexTxOf(p)
			if err != nil {
				return err
			}
			x.txs = append(x.txs, t)
		case it.Msg != nil:
			s := ss.msgs[msgKey{it.Dest, it.Seq}]
			if s == nil || s.loc.File == 0 {
				return fmt.Errorf("%s seq %d has no journal location", it.Dest, it.Seq)
			}
			if len(x.dests) == 0 || x.dests[len(x.dests)-1].d != it.Dest {
				x.dests = append(x.dests, indexDest{d: it.Dest, from: len(x.entries)})
			}
			x.entries = append(x.entries, indexEntry{seq: it.Seq, id: s.id, loc: s.loc, counter: it.Msg.RedeliveryCounter, subs: it.Subs,
				prio: s.prio, exp: s.exp, size: s.size, older: s.older || len(s.files) > 1})
			x.dests[len(x.dests)-1].to = len(x.entries)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	x.marks = ss.snapshotMarks()
	for d, m := range ss.audit {
		for p, seq := range m {
			x.audit = append(x.audit, indexAudit{d, p, seq})
		}
	}
	return x, nil
}

// indexBytesPerMessage is about what one pending message takes in the
// index (the buffer is sized with it).
const indexBytesPerMessage = 64

// write encodes the snapshot and replaces dir's index file with it. It
// returns the number of messages and the file's size. Safe on any
// goroutine.
func (x *indexSnapshot) write(dir string, sync bool) (int, int, error) {
	w := indexWriter{b: make([]byte, indexHeadSize, indexHeadSize+indexBytesPerMessage*(len(x.entries)+len(x.subs)+len(x.jobs)+len(x.nextSeq))+64)}
	w.loc(x.head)
	w.loc(x.lastRec)
	w.uint(uint64(x.lastCRC))
	w.uint(uint64(len(x.nextSeq)))
	for _, s := range x.nextSeq {
		w.dest(s.d)
		w.uint(s.seq)
	}
	w.uint(uint64(len(x.subs)))
	for _, s := range x.subs {
		w.subKey(s.sub.Key)
		w.dest(s.sub.Destination)
		w.str(s.sub.Selector)
		w.bool(s.sub.NoLocal)
		w.uint(uint64(s.file))
	}
	w.uint(uint64(len(x.dests)))
	for _, d := range x.dests {
		w.dest(d.d)
		w.uint(uint64(d.to - d.from))
		for _, e := range x.entries[d.from:d.to] {
			w.uint(e.seq)
			w.str(e.id)
			w.loc(e.loc)
			w.int(int64(e.counter))
			w.uint(uint64(e.prio))
			w.int(e.exp)
			w.uint(uint64(e.size))
			w.bool(e.older)
			w.uint(uint64(len(e.subs)))
			for _, k := range e.subs {
				w.subKey(k)
			}
		}
	}
	w.uint(uint64(len(x.jobs)))
	for _, jb := range x.jobs {
		w.str(jb.id)
		w.loc(jb.loc)
	}
	w.uint(uint64(len(x.txs)))
	for i := range x.txs {
		t := &x.txs[i]
		w.int(int64(t.xid.FormatID))
		w.str(string(t.xid.GlobalID))
		w.str(string(t.xid.Branch))
		w.loc(t.prepLoc)
		w.uint(uint64(len(t.recs)))
		for _, r := range t.recs {
			w.bool(r.remove)
			w.loc(r.loc)
			w.dest(r.dest)
			w.str(r.id)
			w.str(r.sub)
		}
		w.uint(uint64(len(t.acks)))
		for _, a := range t.acks {
			w.dest(a.Dest)
			w.uint(a.Seq)
			w.subKey(a.Sub)
		}
	}
	w.uint(uint64(len(x.marks)))
	for _, m := range x.marks {
		w.subKey(m.k.sub)
		w.dest(m.k.dest)
		w.uint(m.seq)
	}
	w.uint(uint64(len(x.known)))
	for _, d := range x.known {
		w.dest(d)
	}
	w.uint(uint64(len(x.audit)))
	for _, a := range x.audit {
		w.dest(a.d)
		w.str(a.producer)
		w.int(a.seq)
	}
	b := w.b
	copy(b, indexMagic)
	binary.BigEndian.PutUint32(b[len(indexMagic):], indexVersion)
	binary.BigEndian.PutUint64(b[len(indexMagic)+4:], uint64(len(b)-indexHeadSize))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if err := writeFileAtomic(dir, indexFile, indexTmpFile, b, sync); err != nil {
		return 0, 0, err
	}
	return len(x.entries), len(b), nil
}

// writeFileAtomic replaces dir/name with b: written to dir/tmp, fsynced,
// renamed over name, and the directory fsynced (the fsyncs when sync).
func writeFileAtomic(dir, name, tmp string, b []byte, sync bool) error {
	tp := filepath.Join(dir, tmp)
	f, err := os.OpenFile(tp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tp)
		return err
	}
	if sync {
		return syncDir(dir)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}

// removeIndex deletes dir's index (and a leftover temporary file).
func removeIndex(dir string, sync bool) error {
	removed := false
	for _, name := range []string{indexFile, indexTmpFile} {
		err := os.Remove(filepath.Join(dir, name))
		switch {
		case err == nil:
			removed = true
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("kahadb: remove checkpoint index: %w", err)
		}
	}
	if removed && sync {
		if err := syncDir(dir); err != nil {
			return fmt.Errorf("kahadb: %w", err)
		}
	}
	return nil
}

// indexMsg is one pending message read back from the index.
type indexMsg struct {
	d       message.Destination
	seq     uint64
	id      string
	loc     journal.Location
	counter int32
	subs    []engine.SubKey
	prio    uint8
	exp     int64
	size    int64
	older   bool
}

type indexSub struct {
	sub  engine.DurableSub
	file int
}

type indexJob struct {
	id  string
	loc journal.Location
}

// decodedIndex is the content of an index file.
type decodedIndex struct {
	at, lastRec journal.Location
	lastCRC     uint32
	nextSeq     map[message.Destination]uint64
	subs        []indexSub
	msgs        []indexMsg
	jobs        []indexJob
	txs         []indexTx
	marks       []indexMark
	known       []message.Destination
	audit       []indexAudit
}

// loadIndex loads the shard's index, if there is a usable one, into the
// (empty) store and sets cp.at to where replay must continue. Without an
// index it returns nil and leaves cp.at zero: the whole journal is
// replayed. An error says why the index it found cannot be used; the store
// is then half-filled and must be discarded.
func (ss *shardStore) loadIndex() error {
	if ss.st.opts.CheckpointInterval < 0 {
		// Checkpoints disabled: an index from an earlier run would go
		// stale unseen, drop it.
		if _, err := os.Stat(filepath.Join(ss.dir, indexFile)); err == nil {
			ss.log.Info("checkpoint index removed: checkpoints are disabled", "dir", ss.dir, "file", indexFile)
		}
		return removeIndex(ss.dir, ss.st.opts.EnableJournalDiskSyncs)
	}
	start := time.Now()
	b, err := os.ReadFile(filepath.Join(ss.dir, indexFile))
	if errors.Is(err, fs.ErrNotExist) {
		if h := ss.j.Head(); h.Offset > 0 || len(ss.j.Files()) > 1 {
			ss.log.Info("no checkpoint index: replaying the whole journal", "dir", ss.dir, "file", indexFile)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrIndexCorrupt, err)
	}
	x, err := decodeIndex(b)
	if err != nil {
		return err
	}
	if err := ss.checkIndex(x); err != nil {
		return err
	}
	for d, seq := range x.nextSeq {
		ss.nextSeq[d] = seq
	}
	if len(x.known) > 0 {
		ops := make([]engine.StoreOp, 0, len(x.known))
		for _, d := range x.known {
			ops = append(ops, engine.StoreOp{Kind: engine.OpAddDest, Dest: d})
		}
		if err := ss.idx.Apply(ops); err != nil {
			return fmt.Errorf("%w: destinations: %w", ErrIndexStale, err)
		}
	}
	if len(x.subs) > 0 {
		ops := make([]engine.StoreOp, 0, len(x.subs))
		for _, s := range x.subs {
			ops = append(ops, engine.StoreOp{Kind: engine.OpAddSub, Dest: s.sub.Destination, Sub: s.sub})
			ss.subs[s.sub.Key] = &subRec{sub: s.sub, file: s.file}
			ss.live[s.file]++
		}
		if err := ss.idx.Apply(ops); err != nil {
			return fmt.Errorf("%w: subscriptions: %w", ErrIndexStale, err)
		}
	}
	if err := ss.loadMessages(x.msgs); err != nil {
		return err
	}
	for i := range x.txs {
		if err := ss.restorePrepared(&x.txs[i]); err != nil {
			return err
		}
	}
	for _, jb := range x.jobs {
		p, err := ss.j.Read(jb.loc)
		if err != nil {
			return fmt.Errorf("%w: scheduled job %s: %w", ErrIndexStale, jb.id, err)
		}
		c, err := command.Decode(p)
		tr, ok := c.(*command.Trace)
		if err != nil || !ok || !strings.HasPrefix(tr.Message, jobAddPrefix) {
			return fmt.Errorf("%w: record %v is not scheduled job %s", ErrIndexStale, jb.loc, jb.id)
		}
		j, err := decodeJob(tr.Message)
		if err != nil || j.ID != jb.id {
			return fmt.Errorf("%w: record %v is not scheduled job %s", ErrIndexStale, jb.loc, jb.id)
		}
		if err := ss.idx.Apply([]engine.StoreOp{{Kind: engine.OpAddJob, Job: j}}); err != nil {
			return fmt.Errorf("%w: scheduled job %s: %w", ErrIndexStale, jb.id, err)
		}
		ss.jobs[jb.id] = &jobRec{file: jb.loc.File, loc: jb.loc}
		ss.live[jb.loc.File]++
	}
	if len(x.marks) > 0 {
		ops := make([]engine.StoreOp, 0, len(x.marks))
		for _, m := range x.marks {
			ss.marks[m.k] = m.seq
			ops = append(ops, engine.StoreOp{Kind: engine.OpDelivered, Dest: m.k.dest, Seq: m.seq, Sub: engine.DurableSub{Key: m.k.sub}})
		}
		if err := ss.idx.Apply(ops); err != nil {
			return fmt.Errorf("%w: delivery marks: %w", ErrIndexStale, err)
		}
	}
	for _, a := range x.audit {
		ss.auditSet(a.d, a.producer, a.seq)
	}
	ss.cp.at, ss.cp.lastRec = x.at, x.lastRec
	// The removals written before x.at were not seen: ack compaction
	// leaves those files alone (shard.go compactAcks).
	ss.opaqueTo = x.at.File
	ss.cp.last = time.Now()
	ss.stats.FromIndex = true
	ss.stats.IndexMessages = len(x.msgs)
	ss.log.Info("checkpoint index loaded", "dir", ss.dir, "at", x.at.String(), "destinations", len(x.known), "messages", len(x.msgs),
		"subscriptions", len(x.subs), "jobs", len(x.jobs), "prepared", len(x.txs), "took", time.Since(start))
	return nil
}

// checkIndex verifies that the journal still holds what the index was
// written against.
func (ss *shardStore) checkIndex(x *decodedIndex) error {
	files := ss.j.Files()
	present := func(f int) bool { _, ok := slices.BinarySearch(files, f); return ok }
	head := ss.j.Head()
	switch {
	case !present(x.at.File):
		return fmt.Errorf("%w: its location %v is in db-%d.log, which is gone", ErrIndexStale, x.at, x.at.File)
	case x.at.File > head.File || (x.at.File == head.File && x.at.Offset > head.Offset):
		return fmt.Errorf("%w: its location %v is past the journal's end %v (tail recovery cut it)", ErrIndexStale, x.at, head)
	case x.lastRec.File == 0 && x.at.Offset != 0:
		return fmt.Errorf("%w: location %v without a last record", ErrIndexCorrupt, x.at)
	}
	// Damage the journal skipped (a flipped bit: journal.skipDamage)
	// before the index's location may hold records the index points to:
	// only a replay, which drops the damaged batch, can be trusted.
	for _, d := range ss.j.Skipped() {
		if d.Compare(x.at) < 0 {
			return fmt.Errorf("%w: the journal is damaged at %v (%s), before its location %v", ErrIndexStale, d, "db-"+strconv.Itoa(d.File)+".log", x.at)
		}
	}
	if x.lastRec.File != 0 {
		if x.lastRec.Compare(x.at) >= 0 {
			return fmt.Errorf("%w: last record %v not before its location %v", ErrIndexCorrupt, x.lastRec, x.at)
		}
		p, err := ss.j.Read(x.lastRec)
		if err != nil {
			return fmt.Errorf("%w: last record before its location: %w", ErrIndexStale, err)
		}
		if crc32.Checksum(p, castagnoli) != x.lastCRC {
			return fmt.Errorf("%w: the record at %v is not the one the index was written after", ErrIndexStale, x.lastRec)
		}
	}
	check := func(what string, f int) error {
		if !present(f) || f > x.at.File {
			return fmt.Errorf("%w: %s is in db-%d.log, which is gone", ErrIndexStale, what, f)
		}
		return nil
	}
	for _, s := range x.subs {
		if err := check("subscription "+s.sub.Key.String(), s.file); err != nil {
			return err
		}
	}
	for i := range x.msgs {
		if err := check("message "+x.msgs[i].id, x.msgs[i].loc.File); err != nil {
			return err
		}
	}
	for _, jb := range x.jobs {
		if err := check("scheduled job "+jb.id, jb.loc.File); err != nil {
			return err
		}
	}
	for i := range x.txs {
		t := &x.txs[i]
		what := "prepared transaction " + t.xid.String()
		if err := check(what, t.prepLoc.File); err != nil {
			return err
		}
		for _, r := range t.recs {
			if err := check(what, r.loc.File); err != nil {
				return err
			}
		}
	}
	return nil
}

// loadChunk is how many messages are added to the store at a time.
const loadChunk = 4096

// loadMessages adds every pending message the index names to the store,
// in the index's order, without reading it: the store keeps no body, and
// the engine reads each when it needs it (RecoverStubs, LoadMessage).
//
// DEVIATION: the index no longer proves, message by message, that the
// record at each location is the message it names (that took reading
// every pending message at start); checkIndex still requires every file
// it names to be present and the record before its location to be the
// one it was written after, and a record that turns out wrong is
// reported when it is loaded. ActiveMQ trusts its db.data the same way.
func (ss *shardStore) loadMessages(msgs []indexMsg) error {
	ops := make([]engine.StoreOp, 0, loadChunk)
	for lo := 0; lo < len(msgs); lo += loadChunk {
		chunk := msgs[lo:min(lo+loadChunk, len(msgs))]
		ops = ops[:0]
		for i := range chunk {
			m := &chunk[i]
			ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: m.d, Seq: m.seq, Msg: placeholder(m.counter), Subs: m.subs})
		}
		if err := ss.idx.Apply(ops); err != nil {
			return fmt.Errorf("%w: %w", ErrIndexStale, err)
		}
		for i := range chunk {
			m := &chunk[i]
			s := &stored{id: m.id, file: m.loc.File, loc: m.loc, files: []int{m.loc.File}, older: m.older,
				prio: m.prio, exp: m.exp, size: m.size}
			if m.d.Type.IsTopic() {
				s.pending = make(map[engine.SubKey]bool, len(m.subs))
				for _, k := range m.subs {
					s.pending[k] = true
				}
			}
			ss.msgs[msgKey{m.d, m.seq}] = s
			ss.index(m.d, m.id, m.seq)
			// The index's nextSeq is as of the last replay: messages
			// written since then took their sequences from the engine. An
			// add replayed after the checkpoint without a sequence trace
			// (one ActiveMQ appended) must come after them.
			ss.nextSeq[m.d] = max(ss.nextSeq[m.d], m.seq)
			ss.live[m.loc.File]++
		}
	}
	return nil
}

// indexWriter appends the index's fields: unsigned varints, zig-zag
// varints, and length-prefixed strings.
type indexWriter struct{ b []byte }

func (w *indexWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *indexWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *indexWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *indexWriter) bool(v bool) {
	if v {
		w.uint(1)
	} else {
		w.uint(0)
	}
}
func (w *indexWriter) dest(d message.Destination) { w.uint(uint64(d.Type)); w.str(d.Name) }

func (w *indexWriter) subKey(k engine.SubKey) { w.str(k.ClientID); w.str(k.Name) }
func (w *indexWriter) loc(l journal.Location) {
	w.uint(uint64(l.File))
	w.uint(uint64(l.Offset))
	w.uint(uint64(l.Size))
}

// indexReader reads what indexWriter wrote; the first error sticks. Every
// count is checked against the bytes left before anything is allocated.
type indexReader struct {
	b   []byte
	err error
}

func (r *indexReader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: bad %s at %d bytes from the end", ErrIndexCorrupt, what, len(r.b))
	}
	r.b = nil
}

func (r *indexReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *indexReader) int() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail("number")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a number of entries, each at least min bytes long.
func (r *indexReader) count(minBytes int) int {
	v := r.uint()
	if v > uint64(len(r.b)/minBytes) {
		r.fail("count")
		return 0
	}
	return int(v)
}

func (r *indexReader) str() string {
	n := r.uint()
	if n > uint64(len(r.b)) {
		r.fail("string length")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

func (r *indexReader) bool() bool { return r.uint() != 0 }

func (r *indexReader) subKey() engine.SubKey {
	c := r.str()
	return engine.SubKey{ClientID: c, Name: r.str()}
}

func (r *indexReader) dest() message.Destination {
	t := r.uint()
	if t > uint64(message.TempTopic) {
		r.fail("destination type")
	}
	return message.Destination{Type: message.DestType(t), Name: r.str()}
}

func (r *indexReader) loc() journal.Location {
	f, off, size := r.uint(), r.uint(), r.uint()
	if f > 1<<31-1 || off > 1<<31-1 || size > 1<<31-1 {
		r.fail("location")
		return journal.Location{}
	}
	return journal.Location{File: int(f), Offset: int64(off), Size: int32(size)}
}

// decodeIndex checks an index file's framing, version and checksum and
// decodes its body.
func decodeIndex(b []byte) (*decodedIndex, error) {
	if len(b) < indexHeadSize+4 || string(b[:len(indexMagic)]) != indexMagic {
		return nil, fmt.Errorf("%w: not an index file (%d bytes)", ErrIndexCorrupt, len(b))
	}
	if v := binary.BigEndian.Uint32(b[len(indexMagic):]); v != indexVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrIndexVersion, v, indexVersion)
	}
	n := binary.BigEndian.Uint64(b[len(indexMagic)+4:])
	if n != uint64(len(b)-indexHeadSize-4) {
		return nil, fmt.Errorf("%w: body of %d bytes in a file of %d", ErrIndexCorrupt, n, len(b))
	}
	sum := binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(b[:len(b)-4], castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrIndexCorrupt)
	}
	r := &indexReader{b: b[indexHeadSize : len(b)-4]}
	x := &decodedIndex{at: r.loc(), lastRec: r.loc()}
	crc := r.uint()
	if crc > 1<<32-1 {
		r.fail("checksum")
	}
	x.lastCRC = uint32(crc)
	nseq := r.count(3)
	x.nextSeq = make(map[message.Destination]uint64, nseq)
	for range nseq {
		d := r.dest()
		x.nextSeq[d] = r.uint()
	}
	nsubs := r.count(7)
	x.subs = make([]indexSub, 0, nsubs)
	for range nsubs {
		s := indexSub{}
		s.sub.Key = r.subKey()
		s.sub.Destination = r.dest()
		s.sub.Selector = r.str()
		s.sub.NoLocal = r.bool()
		if f := r.uint(); f <= 1<<31-1 {
			s.file = int(f)
		} else {
			r.fail("file")
		}
		x.subs = append(x.subs, s)
	}
	ndests := r.count(3)
	for range ndests {
		d := r.dest()
		nmsgs := r.count(8)
		x.msgs = slices.Grow(x.msgs, nmsgs)
		for range nmsgs {
			m := indexMsg{d: d, seq: r.uint(), id: r.str(), loc: r.loc()}
			c := r.int()
			if c < 0 || c > 1<<31-1 {
				r.fail("redelivery counter")
			}
			m.counter = int32(c)
			if p := r.uint(); p <= 255 {
				m.prio = uint8(p)
			} else {
				r.fail("priority")
			}
			m.exp = r.int()
			if z := r.uint(); z <= 1<<62 {
				m.size = int64(z)
			} else {
				r.fail("size")
			}
			m.older = r.bool()
			if np := r.count(2); np > 0 {
				m.subs = make([]engine.SubKey, 0, np)
				for range np {
					m.subs = append(m.subs, r.subKey())
				}
			}
			x.msgs = append(x.msgs, m)
		}
	}
	njobs := r.count(5)
	for range njobs {
		x.jobs = append(x.jobs, indexJob{id: r.str(), loc: r.loc()})
	}
	ntxs := r.count(8)
	for range ntxs {
		t := indexTx{}
		if f := r.int(); f >= math.MinInt32 && f <= math.MaxInt32 {
			t.xid.FormatID = int32(f)
		} else {
			r.fail("XA format id")
		}
		t.xid.GlobalID, t.xid.Branch = []byte(r.str()), []byte(r.str())
		t.prepLoc = r.loc()
		nrecs := r.count(8)
		for range nrecs {
			t.recs = append(t.recs, prepRec{remove: r.bool(), loc: r.loc(), dest: r.dest(), id: r.str(), sub: r.str()})
		}
		nacks := r.count(5)
		if nacks > 0 {
			t.acks = make([]engine.TxAck, 0, nacks)
		}
		for range nacks {
			t.acks = append(t.acks, engine.TxAck{Dest: r.dest(), Seq: r.uint(), Sub: r.subKey()})
		}
		x.txs = append(x.txs, t)
	}
	nmarks := r.count(5)
	for range nmarks {
		k := markKey{sub: r.subKey(), dest: r.dest()}
		x.marks = append(x.marks, indexMark{k, r.uint()})
	}
	nknown := r.count(2)
	x.known = make([]message.Destination, 0, nknown)
	for range nknown {
		x.known = append(x.known, r.dest())
	}
	naudit := r.count(4)
	for range naudit {
		x.audit = append(x.audit, indexAudit{d: r.dest(), producer: r.str(), seq: r.int()})
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("trailing bytes")
	}
	if r.err != nil {
		return nil, r.err
	}
	return x, nil
}
