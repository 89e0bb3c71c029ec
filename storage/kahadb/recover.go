package kahadb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

// Recover yields the index, which OpenShard built from the checkpoint
// index and the journal, reading each pending message from the journal.
func (ss *shardStore) Recover(fn func(engine.RecoveredItem) error) error {
	if ss.closed {
		return errors.New("kahadb: shard store is closed")
	}
	return ss.recoverItems(fn, 0, false)
}

// RecoverStubs is Recover with every pending message as a stub
// (engine.MessageLoader): nothing is read from the journal.
func (ss *shardStore) RecoverStubs(fn func(engine.RecoveredItem) error) error {
	if ss.closed {
		return errors.New("kahadb: shard store is closed")
	}
	return ss.recoverItems(fn, 0, true)
}

// recoverItems yields the index; its pending messages as stubs whose
// references carry part, or read from the journal.
func (ss *shardStore) recoverItems(fn func(engine.RecoveredItem) error, part uint32, stubs bool) error {
	return ss.idx.Recover(func(it engine.RecoveredItem) error {
		if it.Msg == nil {
			return fn(it)
		}
		s := ss.msgs[msgKey{it.Dest, it.Seq}]
		if s == nil || s.loc.File == 0 {
			return fmt.Errorf("kahadb: %s seq %d has no journal location", it.Dest, it.Seq)
		}
		counter := it.Msg.RedeliveryCounter // the placeholder's
		l := s.loc
		if stubs && l.Size > 0 && l.Offset <= math.MaxUint32 && l.File <= math.MaxUint32 {
			it.Msg = nil
			it.Ref = engine.StoreRef{Part: part, File: uint32(l.File), Off: uint32(l.Offset), Len: uint32(l.Size)}
			it.Size, it.Priority, it.Expiration, it.Redeliveries = s.size, s.prio, s.exp, counter
			return fn(it)
		}
		p, err := ss.j.Read(l)
		if err != nil {
			return fmt.Errorf("kahadb: %s seq %d: %w", it.Dest, it.Seq, err)
		}
		m, err := decodeMessage(p, l)
		if err != nil {
			return err
		}
		m.RedeliveryCounter = counter
		it.Msg = m
		return fn(it)
	})
}

// LoadMessage reads a message RecoverStubs handed as a stub
// (engine.MessageLoader). It runs on the engine shard's goroutine, with
// the reader's own file handles, while the writer may be appending: it
// reads nothing but rd, rdGen and the removal count.
func (ss *shardStore) LoadMessage(ref engine.StoreRef) (*message.Message, error) {
	if g := ss.removed.Load(); g != ss.rdGen {
		ss.rd.Reset() // handles of removed files would keep their space
		ss.rdGen = g
	}
	l := journal.Location{File: int(ref.File), Offset: int64(ref.Off), Size: int32(ref.Len)}
	p, err := ss.rd.Read(l)
	if err != nil {
		return nil, fmt.Errorf("kahadb: load message at %v: %w", l, err)
	}
	return decodeMessage(p, l)
}

// replay rebuilds the index from the journal records at or after from
// (reference/kahadb.md §5), as ActiveMQ rebuilds its own when db.data is
// absent. From the zero Location it replays everything; from a checkpoint's
// location it applies the tail on top of the state the index loaded. It
// returns the number of records read.
func (ss *shardStore) replay(ctx context.Context, from journal.Location) (int, error) {
	r := replayer{ss: ss, txs: map[string][]replayed{}, prepared: map[string]bool{}, named: map[message.Destination]bool{}}
	for k, recs := range ss.loadedTxs { // prepared before the index's location
		r.txs[k] = recs
		r.prepared[k] = true
	}
	ss.loadedTxs = nil
	ss.replaying = true
	defer func() { ss.replaying = false }()
	records, skipped := 0, 0
	p := ss.st.newProgress(ss.j.Bytes(from, journal.Location{File: math.MaxInt}))
	if p.total > 0 {
		ss.log.Info("Recovering from the journal", "dir", ss.dir, "from", from.String(), "bytes", p.total)
	}
	err := ss.j.Replay(from, func(l journal.Location, payload []byte) error {
		// A signal during a long replay stops the start-up; checking
		// every record costs nothing next to decoding it.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stopped at %s after %d records: %w", l, records, err)
		}
		records++
		if p.due() {
			done := ss.j.Bytes(from, l)
			ss.log.Info("entries recovered", "dir", ss.dir, "at", l.String(), "entries", records,
				"bytes", done, "total_bytes", p.total, "percent", done*100/p.total)
		}
		ss.cp.lastRec = l
		ss.cp.changed++
		c, err := command.Decode(payload)
		if err != nil {
			// A record that cannot be decoded is reported and skipped, as
			// ActiveMQ skips what it cannot read; the batch checksum already
			// vouched for the bytes, so this is a format Wharf does not know.
			skipped++
			ss.log.Warn("journal record skipped", "file", l.File, "offset", l.Offset, "err", err)
			return nil
		}
		return r.apply(l, c)
	})
	if err != nil {
		return records, fmt.Errorf("kahadb: replay %s: %w", ss.dir, err)
	}
	if len(r.prepared) > 0 {
		ss.log.Info("prepared XA transactions in doubt", "dir", ss.dir, "count", len(r.prepared))
	}
	if len(r.txs) > len(r.prepared) {
		ss.log.Info("uncommitted transactions in the journal rolled back", "count", len(r.txs)-len(r.prepared))
		// Their records stay in the journal, and a commit written later
		// (by ActiveMQ, which keeps prepared XA work in doubt) would need
		// them: no checkpoint may be taken past them while they are there.
		for k, recs := range r.txs {
			if r.prepared[k] {
				continue // pinned, and recorded by the checkpoint index
			}
			for _, rc := range recs {
				if ss.cp.txFile == 0 || rc.loc.File < ss.cp.txFile {
					ss.cp.txFile = rc.loc.File
				}
			}
		}
	}
	if records > 0 {
		// MessageDatabase.recover's closing line, in its words.
		ss.log.Info("Recovery replayed operations from the journal", "dir", ss.dir, "from", from.String(),
			"records", records, "skipped", skipped, "seconds", p.elapsed().Seconds(),
			"messages", len(ss.msgs), "subscriptions", len(ss.subs), "jobs", len(ss.jobs))
	}
	return records, nil
}

// progress paces the progress lines of a replay: one each
// RecoveryProgressInterval, on the store's clock.
type progress struct {
	now   func() time.Time
	every time.Duration // 0: no progress lines
	start time.Time
	next  time.Time
	total int64 // bytes to replay
}

func (s *Store) newProgress(total int64) *progress {
	p := &progress{now: s.opts.Clock, every: s.opts.RecoveryProgressInterval, total: total}
	if p.now == nil {
		p.now = time.Now // a Store not made by Open (Inspect's)
	}
	if p.every < 0 || total == 0 {
		p.every = 0
	}
	p.start = p.now()
	p.next = p.start.Add(p.every)
	return p
}

// due reports whether a progress line is due, and if so schedules the
// next. It reads the clock once per record: nanoseconds next to decoding
// the record.
func (p *progress) due() bool {
	if p.every == 0 {
		return false
	}
	now := p.now()
	if now.Before(p.next) {
		return false
	}
	p.next = now.Add(p.every)
	return true
}

func (p *progress) elapsed() time.Duration { return p.now().Sub(p.start) }

type replayed struct {
	loc journal.Location
	cmd command.Command
}

// replayer turns KahaDB commands back into store operations on the index.
type replayer struct {
	ss   *shardStore
	txs  map[string][]replayed // local/XA transactions until commit
	seqs []uint64              // the engine's sequences for the next adds (Wharf journals)
	// named: the destinations a replayed record named (replay knows
	// them), until a RemoveDestination record.
	named map[message.Destination]bool
	// prepared: the keys in txs of the XA transactions prepared (in doubt).
	prepared map[string]bool
}

func txKey(t *command.TransactionInfo) string {
	if t == nil {
		return ""
	}
	if l := t.LocalTransactionID; l != nil {
		return fmt.Sprintf("local:%s:%d", l.ConnectionID, l.TransactionID)
	}
	if x := t.XATransactionID; x != nil {
		return fmt.Sprintf("xa:%d:%x:%x", x.FormatID, x.GlobalTransactionID, x.BranchQualifier)
	}
	return ""
}

func (r *replayer) apply(l journal.Location, c command.Command) error {
	switch c.(type) {
	case *command.Commit, *command.Rollback, *command.Prepare:
		r.ss.noCompact[l.File] = true // transaction records: see compactAcks
	}
	switch c := c.(type) {
	case *command.AddMessage:
		if k := txKey(c.Transaction); k != "" {
			// Held until the commit record, which may come batches later:
			// the frame must not alias the journal's read buffer, which the
			// next batch overwrites.
			held := *c
			held.Message = bytes.Clone(c.Message)
			r.txs[k] = append(r.txs[k], replayed{l, &held})
			r.ss.noCompact[l.File] = true
			return nil
		}
		return r.add(l, c)
	case *command.RemoveMessage:
		if k := txKey(c.Transaction); k != "" {
			r.txs[k] = append(r.txs[k], replayed{l, c})
			r.ss.noCompact[l.File] = true
			return nil
		}
		return r.remove(l, c)
	case *command.UpdateMessage:
		return r.update(l, &c.Message)
	case *command.Commit:
		k := txKey(&c.Transaction)
		if err := r.replayEnd(engine.OpCommit, &c.Transaction); err != nil {
			return err
		}
		for _, rc := range r.txs[k] {
			var err error
			switch x := rc.cmd.(type) {
			case *command.AddMessage:
				err = r.add(rc.loc, x)
			case *command.RemoveMessage:
				err = r.remove(rc.loc, x)
			}
			if err != nil {
				return err
			}
		}
		delete(r.txs, k)
	case *command.Rollback:
		if err := r.replayEnd(engine.OpRollback, &c.Transaction); err != nil {
			return err
		}
		delete(r.txs, txKey(&c.Transaction))
	case *command.Prepare:
		// Prepared XA work stays in doubt until a commit or rollback record.
		r.replayPrepare(c, r.txs[txKey(&c.Transaction)], l)
	case *command.RemoveDestination:
		d := engineDest(c.Destination)
		delete(r.named, d)
		return r.op(engine.StoreOp{Kind: engine.OpRemoveDest, Dest: d}, l)
	case *command.Subscription:
		if err := r.name(engineDest(c.Destination), l); err != nil {
			return err
		}
		return r.subscription(l, c)
	case *command.Trace:
		switch {
		case strings.HasPrefix(c.Message, seqsPrefix):
			r.seqs = decodeSeqs(c.Message)
		case strings.HasPrefix(c.Message, jobAddPrefix):
			j, err := decodeJob(c.Message)
			if err != nil {
				r.ss.log.Warn("scheduled job record skipped", "err", err)
				return nil
			}
			return r.op(engine.StoreOp{Kind: engine.OpAddJob, Job: j}, l)
		case strings.HasPrefix(c.Message, deliveredPrefix):
			ops, err := decodeMarks(c.Message)
			if err != nil {
				r.ss.log.Warn("delivery marks record skipped", "file", l.File, "offset", l.Offset, "err", err)
				return nil
			}
			for _, op := range ops {
				if err := r.op(op, l); err != nil {
					return err
				}
			}
		case strings.HasPrefix(c.Message, jobRemovePrefix):
			return r.op(engine.StoreOp{Kind: engine.OpRemoveJob, JobID: strings.TrimPrefix(c.Message, jobRemovePrefix)}, l)
		}
	}
	return nil
}

// op applies one operation to the index and does the store's bookkeeping
// (which file holds what) through the same code as Apply, with the record's
// location already known.
func (r *replayer) op(op engine.StoreOp, l journal.Location) error {
	ss := r.ss
	if err := ss.idxApply([]engine.StoreOp{op}); err != nil {
		return err
	}
	ss.recs, ss.owners = ss.recs[:0], ss.owners[:0]
	ss.resetArena()
	if err := ss.encode(&op); err != nil {
		return err
	}
	for _, o := range ss.owners {
		if o != nil {
			o(l)
		}
	}
	ss.recs, ss.owners = ss.recs[:0], ss.owners[:0]
	return nil
}

// name makes destination d known, as the first record that names it does
// in ActiveMQ's replay (MessageDatabase.getStoredDestination creates the
// StoredDestination of every record's destination): a queue whose
// messages were all consumed comes back, empty, while their records are
// in the journal.
func (r *replayer) name(d message.Destination, l journal.Location) error {
	if r.named[d] || d.IsZero() || d.Type.IsTemp() {
		return nil
	}
	r.named[d] = true
	return r.op(engine.StoreOp{Kind: engine.OpAddDest, Dest: d}, l)
}

func (r *replayer) seqOf(d message.Destination, id string) (uint64, bool) {
	seq, ok := r.ss.byID[d][id]
	return seq, ok
}

func (r *replayer) add(l journal.Location, c *command.AddMessage) error {
	ss := r.ss
	d := engineDest(c.Destination)
	if err := r.name(d, l); err != nil {
		return err
	}
	// MessageDatabase.updateIndex records every add in the producer
	// audit, a rejected one too (audit.go), but for a topic without
	// durable subscriptions, which it skips first.
	if !d.Type.IsTopic() || ss.subscribed(d) {
		ss.auditNote(d, c.MessageID)
	}
	if _, dup := r.seqOf(d, c.MessageID); dup {
		return nil // ActiveMQ ignores a second add of the same id
	}
	m, err := unmarshalMessage(c.Message)
	if err != nil {
		ss.log.Warn("stored message skipped", "dest", d.String(), "msg_id", c.MessageID, "err", err)
		return nil
	}
	setStoredDest(m, d)
	seq := ss.nextSeq[d] + 1
	if len(r.seqs) > 0 {
		seq, r.seqs = r.seqs[0], r.seqs[1:]
		if seq == 0 {
			// A committed transaction's send the engine did not store
			// (xa.go); the removes after the commit record, for
			// ActiveMQ, then find nothing.
			return nil
		}
	}
	ss.nextSeq[d] = max(ss.nextSeq[d], seq)
	op := engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: seq, Msg: m}
	if d.Type.IsTopic() {
		// A topic message is kept for every durable subscription the topic
		// has when it is added; none, and it is not kept at all.
		for key, s := range ss.subs {
			if s.sub.Destination.Matches(d) {
				op.Subs = append(op.Subs, key)
			}
		}
		if len(op.Subs) == 0 {
			return nil
		}
	}
	return r.op(op, l)
}

func (r *replayer) remove(l journal.Location, c *command.RemoveMessage) error {
	d := engineDest(c.Destination)
	if err := r.name(d, l); err != nil {
		return err
	}
	seq, ok := r.seqOf(d, c.MessageID)
	if !ok {
		return nil // an ack of an unknown message is a no-op
	}
	if c.SubscriptionKey == "" {
		return r.op(engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: seq}, l)
	}
	key := r.ss.ackKey(d, seq, c.SubscriptionKey)
	return r.op(engine.StoreOp{Kind: engine.OpAck, Dest: d, Seq: seq, Sub: engine.DurableSub{Key: key}}, l)
}

func (r *replayer) update(l journal.Location, c *command.AddMessage) error {
	d := engineDest(c.Destination)
	seq, ok := r.seqOf(d, c.MessageID)
	if !ok {
		return r.add(l, c)
	}
	m, err := unmarshalMessage(c.Message)
	if err != nil {
		return nil
	}
	return r.op(engine.StoreOp{Kind: engine.OpUpdate, Dest: d, Seq: seq, Count: m.RedeliveryCounter}, l)
}

// subKey is the durable subscription a journal record's
// "clientId:subscriptionName" key names. The string alone is ambiguous:
// a client id may hold colons (ActiveMQ's generated ids do) and so may a
// name (every MQTT persistent session's, "AT_LEAST_ONCE:topic"; any STOMP
// activemq.subscriptionName). ActiveMQ never splits it; Wharf keys its
// state by the pair, so the key is the split that names a subscription the
// replay knows (its record carries both parts in its SubscriptionInfo),
// and only for an unknown one a guess (at the last colon), which then
// matches nothing, as the key of a removed subscription should.
func (ss *shardStore) subKey(s string) engine.SubKey {
	return ss.splitKey(s, func(k engine.SubKey) bool { return ss.subs[k] != nil })
}

// ackKey is subKey for an ack of message seq of d: the subscription may
// also be one the message is pending for without this store holding its
// record (an mKahaDB child holds a wildcard subscription's messages).
func (ss *shardStore) ackKey(d message.Destination, seq uint64, s string) engine.SubKey {
	m := ss.msgs[msgKey{d, seq}]
	return ss.splitKey(s, func(k engine.SubKey) bool { return ss.subs[k] != nil || m != nil && m.pending[k] })
}

// splitKey splits s at the first colon that makes a known key, else at
// the last one.
func (ss *shardStore) splitKey(s string, known func(engine.SubKey) bool) engine.SubKey {
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		if k := (engine.SubKey{ClientID: s[:i], Name: s[i+1:]}); known(k) {
			return k
		}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return engine.SubKey{Name: s}
	}
	return engine.SubKey{ClientID: s[:i], Name: s[i+1:]}
}

func (r *replayer) subscription(l journal.Location, c *command.Subscription) error {
	key := r.ss.subKey(c.SubscriptionKey)
	d := engineDest(c.Destination)
	if len(c.SubscriptionInfo) == 0 {
		return r.op(engine.StoreOp{Kind: engine.OpRemoveSub, Dest: d, Sub: engine.DurableSub{Key: key}}, l)
	}
	sub := engine.DurableSub{Key: key, Destination: d}
	if ds, err := wire.Unmarshal(c.SubscriptionInfo, wire.StoreFormat(), wire.DefaultLimits()); err == nil {
		if si, ok := ds.(*wire.SubscriptionInfo); ok {
			sub.Selector, sub.NoLocal = si.Selector, si.NoLocal
			if si.ClientId != "" {
				sub.Key = engine.SubKey{ClientID: si.ClientId, Name: si.SubcriptionName}
			}
			if si.SubscribedDestination != nil {
				sub.Destination = marshal.DestToEngine(si.SubscribedDestination)
			}
		}
	}
	return r.op(engine.StoreOp{Kind: engine.OpAddSub, Dest: sub.Destination, Sub: sub}, l)
}

var (
	_ engine.MessageLoader = (*shardStore)(nil)
	_ engine.MessageLoader = (*multiShard)(nil)
)
