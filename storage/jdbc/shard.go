package jdbc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/internal/records"
)

// shardStore is one shard's share of the database (its rows carry its
// SHARD number in Wharf's tables) and the part of its state kept in
// memory, read from the database when the shard opens: the destinations
// it knows, the subscription records it holds, delivery marks, prepared
// XIDs, and for each stored topic message its ACTIVEMQ_MSGS.ID and the
// subscriptions that still need it (which ack is the last). Queue
// messages are not in memory: a remove names them by (shard, container,
// seq), which WHARF_MSGS's unique index finds. Only the shard's writer
// goroutine uses it, but LoadMessage, which uses the pool alone.
type shardStore struct {
	store *Store
	index int
	count int // shards
	log   *slog.Logger

	closed atomic.Bool
	// stale: a failed batch's index reload failed too (the database was
	// unreachable): the next Apply reads the index again first.
	stale bool
	// lastAcks is when syncAcks last ran.
	lastAcks time.Time

	dests map[message.Destination]*destState
	subs  map[engine.SubKey]*engine.DurableSub
	marks map[mark]uint64
	// txs are the prepared transactions (by XID.String) and the rows of
	// ActiveMQ's tables each flagged (xa.go).
	txs map[string]*txRows
}

var (
	_ engine.ShardStore    = (*shardStore)(nil)
	_ engine.Syncer        = (*shardStore)(nil)
	_ engine.NoSyncApplier = (*shardStore)(nil)
	_ engine.MessageLoader = (*shardStore)(nil)
	_ engine.Housekeeper   = (*shardStore)(nil)
)

type destState struct {
	d         message.Destination
	container string
	topic     bool
	msgs      map[uint64]*topicMsg // topics: the stored messages
}

type topicMsg struct {
	id   int64
	subs []engine.SubKey // who still needs it (WHARF_WAITS)
}

type mark struct {
	sub  engine.SubKey
	dest message.Destination
}

func newDest(d message.Destination) *destState {
	x := &destState{d: d, container: d.String(), topic: d.Type.IsTopic()}
	if x.topic {
		x.msgs = make(map[uint64]*topicMsg)
	}
	return x
}

// load reads the shard's index from the database.
func (ss *shardStore) load(ctx context.Context) error {
	s, t, sh := ss.store, ss.store.t, ss.index
	ss.dests = make(map[message.Destination]*destState)
	ss.subs = make(map[engine.SubKey]*engine.DurableSub)
	ss.marks = make(map[mark]uint64)
	ss.txs = make(map[string]*txRows)
	dest := func(container string) *destState {
		d := message.ParseQualified(container, message.Queue)
		x := ss.dests[d]
		if x == nil {
			x = newDest(d)
			ss.dests[d] = x
		}
		return x
	}
	args := []any{sh}
	if err := queryRows(ctx, s.pool, "SELECT CONTAINER FROM "+t.dests+" WHERE SHARD=$1", args, func(r pgx.Rows) error {
		var c string
		if err := r.Scan(&c); err != nil {
			return err
		}
		dest(c)
		return nil
	}); err != nil {
		return err
	}
	if err := queryRows(ctx, s.pool, "SELECT CLIENT_ID, SUB_NAME, SUB_DEST, SELECTOR, NO_LOCAL FROM "+t.subs+" WHERE SHARD=$1", args, func(r pgx.Rows) error {
		var sub engine.DurableSub
		var d string
		var sel *string
		if err := r.Scan(&sub.Key.ClientID, &sub.Key.Name, &d, &sel, &sub.NoLocal); err != nil {
			return err
		}
		sub.Destination = message.ParseQualified(d, message.Topic)
		if sel != nil {
			sub.Selector = *sel
		}
		ss.subs[sub.Key] = &sub
		return nil
	}); err != nil {
		return err
	}
	if err := queryRows(ctx, s.pool, "SELECT CLIENT_ID, SUB_NAME, CONTAINER, SEQ FROM "+t.marks+" WHERE SHARD=$1", args, func(r pgx.Rows) error {
		var m mark
		var c string
		var seq int64
		if err := r.Scan(&m.sub.ClientID, &m.sub.Name, &c, &seq); err != nil {
			return err
		}
		m.dest = message.ParseQualified(c, message.Topic)
		ss.marks[m] = uint64(seq)
		return nil
	}); err != nil {
		return err
	}
	if err := queryRows(ctx, s.pool, "SELECT XID FROM "+t.txs+" WHERE SHARD=$1", args, func(r pgx.Rows) error {
		var x string
		if err := r.Scan(&x); err != nil {
			return err
		}
		ss.txs[x] = &txRows{}
		return nil
	}); err != nil {
		return err
	}
	if len(ss.txs) > 0 {
		if err := ss.loadTxRows(ctx); err != nil {
			return err
		}
	}
	// Topic messages and who still needs each: one pass over the
	// waiting rows (a key-only join: no message body is read).
	return queryRows(ctx, s.pool, "SELECT w.CONTAINER, w.SEQ, w.ID, x.CLIENT_ID, x.SUB_NAME FROM "+t.wmsgs+" w JOIN "+t.waits+
		" x ON x.ID = w.ID WHERE w.SHARD=$1 ORDER BY w.ID", args, func(r pgx.Rows) error {
		var c string
		var seq, id int64
		var k engine.SubKey
		if err := r.Scan(&c, &seq, &id, &k.ClientID, &k.Name); err != nil {
			return err
		}
		d := dest(c)
		if !d.topic {
			return nil
		}
		tm := d.msgs[uint64(seq)]
		if tm == nil {
			tm = &topicMsg{id: id}
			d.msgs[uint64(seq)] = tm
		}
		tm.subs = append(tm.subs, k)
		return nil
	})
}

// Syncs is true: Apply returns once PostgreSQL has committed the batch
// (synchronous_commit, the server's default, waits for its WAL flush),
// so the engine gathers batches that arrive meanwhile into the next one
// (engine.Syncer): group commit on the database.
func (ss *shardStore) Syncs() bool { return true }

// batch is one Apply's statements, sent together and run as one
// transaction.
type batch struct {
	b pgx.Batch
	// setup counts the statements queued before the operations' own
	// (the setting, the fence).
	setup int
}

func (b *batch) q(sql string, args ...any) { b.b.Queue(sql, args...) }

// Apply writes ops as one database transaction: one pgx batch, sent in
// one round trip and run by PostgreSQL as one implicit transaction (all
// or nothing), with prepared statements.
func (ss *shardStore) Apply(ops []engine.StoreOp) error { return ss.apply(ops, true) }

// ApplyNoSync is Apply whose transaction does not wait for the WAL
// flush (synchronous_commit off for it alone, set_config's local
// setting): the engine's batches that no completion waits for (acks
// nobody asked to have confirmed; engine.NoSyncApplier). Committed, it
// is seen by every later transaction and survives a crash of the
// broker; a crash of the database server within a moment of it (its WAL
// writer flushes within 3 × wal_writer_delay) can lose it, not a later
// synchronous commit's batch, whose flush writes the WAL before it too.
func (ss *shardStore) ApplyNoSync(ops []engine.StoreOp) error { return ss.apply(ops, false) }

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
	ctx := context.Background()
	if ss.stale {
		if err := ss.load(ctx); err != nil {
			return fmt.Errorf("jdbc: read the shard's index from %s again: %w", ss.store.where(), err)
		}
		ss.stale = false
	}
	fail := func(err error) error {
		// The index may hold part of the batch: read it back from the
		// database, which holds none of it.
		if lerr := ss.load(ctx); lerr != nil {
			ss.stale = true
			return errors.Join(err, fmt.Errorf("jdbc: reload index: %w", lerr))
		}
		return err
	}
	var b batch
	if !sync {
		b.q("SELECT set_config('synchronous_commit', 'off', true)")
	}
	lk := ss.store.lock
	if lk != nil {
		if lk.lost.Load() {
			return fmt.Errorf("%w (%s): %d operations not written", ErrLockLost, ss.store.where(), len(ops))
		}
		lk.fence(&b)
	}
	b.setup = b.b.Len()
	for i := range ops {
		if err := ss.applyOp(&b, &ops[i]); err != nil {
			return fail(fmt.Errorf("op %d %s: %w", i, &ops[i], err))
		}
	}
	if b.b.Len() == b.setup {
		return nil // nothing but the fence and the setting
	}
	if err := ss.store.pool.SendBatch(ctx, &b.b).Close(); err != nil {
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe) && pe.Code == "23505" && pe.TableName == regclass(ss.store.t.wmsgs):
			err = fmt.Errorf("%w (%s)", ErrDuplicate, pe.Detail)
		case errors.As(err, &pe) && pe.Code == "22012" && lk != nil:
			// The fence: the lock is another broker's now.
			lk.markLost(errors.New("a batch found the lock no longer this broker's"))
			err = ErrLockLost
		}
		return fail(fmt.Errorf("jdbc: write %d operations to %s: %w", len(ops), ss.store.where(), err))
	}
	return nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (ss *shardStore) applyOp(b *batch, op *engine.StoreOp) error {
	st, sh := &ss.store.st, ss.index
	switch op.Kind {
	case engine.OpAdd:
		d := ss.dests[op.Dest]
		if d != nil && d.topic && d.msgs[op.Seq] != nil {
			return ErrDuplicate
		}
		if op.Dest.Type.IsTopic() && len(op.Subs) == 0 {
			return nil // nobody could ever acknowledge it
		}
		if d == nil {
			d = newDest(op.Dest)
			ss.dests[op.Dest] = d
			b.q(st.addDest, sh, d.container)
		}
		frame, err := records.MarshalMessage(op.Msg)
		if err != nil {
			return fmt.Errorf("encode message %s: %w", op.Msg.ID, err)
		}
		id := ss.store.nextID()
		prod, pseq := producerKey(op.Msg.ID)
		b.q(st.addMessage, id, prod, pseq, d.container, op.Msg.Expiration, int64(op.Msg.Priority), frame, nil)
		b.q(st.addWMsg, id, sh, d.container, int64(op.Seq), int32(min(op.Msg.Size(), math.MaxInt32)), op.Msg.RedeliveryCounter)
		if !d.topic {
			return nil
		}
		tm := &topicMsg{id: id}
		for _, k := range op.Subs {
			if slices.Contains(tm.subs, k) {
				continue
			}
			tm.subs = append(tm.subs, k)
			b.q(st.addWait, id, k.ClientID, k.Name)
			if r := ss.subs[k]; r != nil && r.Destination.IsWildcard() {
				// ActiveMQ keeps a wildcard subscription as one row
				// per topic it has matched (CONTAINER the topic,
				// SUB_DEST the pattern): the first message of a topic
				// makes the row, acknowledged up to just below it.
				b.q(st.createWildSub, d.container, k.ClientID, k.Name, nullable(r.Selector), id-1, r.Destination.String(), int64(0))
			}
		}
		d.msgs[op.Seq] = tm
	case engine.OpAddDest:
		if ss.dests[op.Dest] == nil {
			d := newDest(op.Dest)
			ss.dests[op.Dest] = d
			b.q(st.addDest, sh, d.container)
		}
	case engine.OpRemove:
		d := ss.dests[op.Dest]
		if d == nil {
			return nil
		}
		if !d.topic {
			b.q(st.removeBySeq, sh, d.container, int64(op.Seq))
			return nil
		}
		tm := d.msgs[op.Seq]
		if tm == nil {
			return nil
		}
		b.q(st.removeMessage, tm.id)
		delete(d.msgs, op.Seq)
	case engine.OpAck:
		d := ss.dests[op.Dest]
		if d == nil || !d.topic {
			return nil
		}
		tm := d.msgs[op.Seq]
		if tm == nil {
			return nil
		}
		i := slices.Index(tm.subs, op.Sub.Key)
		if i < 0 {
			return nil
		}
		if tm.subs = slices.Delete(tm.subs, i, i+1); len(tm.subs) > 0 {
			b.q(st.removeWait, tm.id, op.Sub.Key.ClientID, op.Sub.Key.Name)
			return nil
		}
		b.q(st.removeMessage, tm.id) // its waiting rows go with it
		delete(d.msgs, op.Seq)
	case engine.OpUpdate:
		d := ss.dests[op.Dest]
		if d == nil {
			return nil
		}
		b.q(st.updateRedeliveries, sh, d.container, int64(op.Seq), op.Count)
		// And in MSG, as ActiveMQ's updateMessage rewrites it, for
		// ActiveMQ taking the database over. A message added in this
		// same batch is not committed yet: its counter is in WHARF_MSGS
		// alone.
		var id int64
		var frame []byte
		err := ss.store.pool.QueryRow(context.Background(), "SELECT m.ID, m.MSG FROM "+ss.store.t.msgs+" m JOIN "+ss.store.t.wmsgs+
			" w ON w.ID = m.ID WHERE w.SHARD=$1 AND w.CONTAINER=$2 AND w.SEQ=$3", sh, d.container, int64(op.Seq)).Scan(&id, &frame)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		if frame, err = withRedeliveries(frame, op.Count); err != nil {
			ss.log.Warn("stored message not rewritten with its redelivery counter", "dest", d.d.String(), "seq", op.Seq, "err", err)
			return nil
		}
		b.q(st.updateMSG, frame, id)
	case engine.OpAddSub:
		rec := op.Sub
		k := rec.Key
		if old := ss.subs[k]; old != nil && old.Destination != rec.Destination {
			ss.deleteActiveMQSub(b, old)
		} else if old != nil && old.Destination.IsWildcard() && old.Selector != rec.Selector {
			ss.deleteActiveMQSub(b, old) // its rows carry the old selector
		}
		ss.subs[k] = &rec
		b.q(st.putSub, sh, k.ClientID, k.Name, rec.Destination.String(), nullable(rec.Selector), rec.NoLocal)
		if !rec.Destination.IsWildcard() {
			// ActiveMQ's row of the subscription (doSetSubscriberEntry,
			// without prioritized messages: priority 0), acked up to the
			// last message id as a new, non-retroactive subscription is.
			c := rec.Destination.String()
			b.q(st.deleteSub, c, k.ClientID, k.Name)
			b.q(st.createSub, c, k.ClientID, k.Name, nullable(rec.Selector), ss.store.lastID.Load(), c, int64(0))
		}
	case engine.OpRemoveSub:
		ss.removeSub(b, op.Sub.Key)
	case engine.OpRemoveDest:
		if op.Dest.Type.IsTopic() {
			for k, r := range ss.subs {
				if r.Destination == op.Dest {
					ss.removeSub(b, k)
				}
			}
			for m := range ss.marks {
				if m.dest == op.Dest {
					delete(ss.marks, m)
				}
			}
			b.q(st.deleteDestMarks, sh, op.Dest.String())
			// ActiveMQ's rows of the subscriptions went with them
			// (removeSub): only this shard's.
		}
		d := ss.dests[op.Dest]
		if d == nil {
			return nil
		}
		b.q(st.removeDestMsgs, sh, d.container)
		b.q(st.removeDest, sh, d.container)
		delete(ss.dests, op.Dest)
	case engine.OpAddJob:
		v, err := records.EncodeJob(op.Job)
		if err != nil {
			return err
		}
		b.q(st.putJob, sh, op.Job.ID, v)
	case engine.OpRemoveJob:
		b.q(st.removeJob, sh, op.JobID)
	case engine.OpPrepare:
		key := op.Tx.XID.String()
		if _, dup := ss.txs[key]; dup {
			return fmt.Errorf("%w: %s", ErrTxPrepared, key)
		}
		v, err := records.EncodeTx(op.Tx)
		if err != nil {
			return err
		}
		b.q(st.putTx, sh, key, v)
		rows, err := ss.prepareRows(b, op.Tx)
		if err != nil {
			return err
		}
		ss.txs[key] = rows
	case engine.OpCommit, engine.OpRollback:
		key := op.Tx.XID.String()
		if rows, ok := ss.txs[key]; ok {
			delete(ss.txs, key)
			b.q(st.removeTx, sh, key)
			ss.endRows(b, rows)
		}
	case engine.OpDelivered:
		m := mark{op.Sub.Key, op.Dest}
		if seq, ok := ss.marks[m]; ok && seq >= op.Seq {
			return nil
		}
		ss.marks[m] = op.Seq
		b.q(st.putMark, sh, op.Sub.Key.ClientID, op.Sub.Key.Name, op.Dest.String(), int64(op.Seq))
	}
	return nil
}

// deleteActiveMQSub deletes ActiveMQ's rows of subscription r: the row
// of its topic, or every row of its pattern (a wildcard subscription).
func (ss *shardStore) deleteActiveMQSub(b *batch, r *engine.DurableSub) {
	if r.Destination.IsWildcard() {
		b.q(ss.store.st.deleteWildSub, r.Destination.String(), r.Key.ClientID, r.Key.Name)
		return
	}
	b.q(ss.store.st.deleteSub, r.Destination.String(), r.Key.ClientID, r.Key.Name)
}

// removeSub deletes subscription k: its record (and ActiveMQ's row of
// it), its delivery marks, its waiting rows, and the topic messages only
// it still needed.
func (ss *shardStore) removeSub(b *batch, k engine.SubKey) {
	st, sh := &ss.store.st, ss.index
	if r := ss.subs[k]; r != nil {
		b.q(st.deleteWSub, sh, k.ClientID, k.Name)
		ss.deleteActiveMQSub(b, r)
		delete(ss.subs, k)
	}
	marked := false
	for m := range ss.marks {
		if m.sub == k {
			delete(ss.marks, m)
			marked = true
		}
	}
	if marked {
		b.q(st.deleteSubMarks, sh, k.ClientID, k.Name)
	}
	var dead []int64
	waits := false
	for _, d := range ss.dests {
		if !d.topic {
			continue
		}
		for seq, tm := range d.msgs {
			i := slices.Index(tm.subs, k)
			if i < 0 {
				continue
			}
			waits = true
			if tm.subs = slices.Delete(tm.subs, i, i+1); len(tm.subs) == 0 {
				dead = append(dead, tm.id)
				delete(d.msgs, seq)
			}
		}
	}
	if waits {
		b.q(st.removeSubWaits, sh, k.ClientID, k.Name)
	}
	if len(dead) > 0 {
		b.q(st.deleteMsgs, dead)
	}
}

// Recover yields the shard's state in engine.ShardStore's order:
// destinations, subscription records, the messages of each destination
// in sequence order (add order; the engine dispatches them by priority),
// fetched a page at a time, the prepared transactions, the scheduled
// jobs.
func (ss *shardStore) Recover(fn func(engine.RecoveredItem) error) error {
	return ss.recover(false, fn)
}

// RecoverStubs is Recover with every pending message as a stub: its
// priority, expiration, size and redelivery counter read from the
// columns, its MSG left in the database until LoadMessage
// (engine.MessageLoader). A stub's StoreRef holds the message's
// ACTIVEMQ_MSGS.ID (File and Off its high and low halves) and its size
// (Len).
func (ss *shardStore) RecoverStubs(fn func(engine.RecoveredItem) error) error {
	return ss.recover(true, fn)
}

// LoadMessage reads the message a stub refers to. It runs on the engine
// shard's goroutine, concurrently with Apply: it uses a pool connection
// of its own and nothing of the index.
func (ss *shardStore) LoadMessage(ref engine.StoreRef) (*message.Message, error) {
	if ss.closed.Load() {
		return nil, ErrClosed
	}
	id := int64(ref.File)<<32 | int64(ref.Off)
	var frame []byte
	var c string
	if err := ss.store.pool.QueryRow(context.Background(), ss.store.st.findMessage, id).Scan(&frame, &c); err != nil {
		return nil, fmt.Errorf("jdbc: load message %d from %s: %w", id, ss.store.where(), err)
	}
	m, err := decodeStored(frame, message.ParseQualified(c, message.Queue), 0)
	if err != nil {
		return nil, fmt.Errorf("jdbc: load message %d: %w", id, err)
	}
	return m, nil
}

func (ss *shardStore) recover(stubs bool, fn func(engine.RecoveredItem) error) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	ctx := context.Background()
	dests := make([]*destState, 0, len(ss.dests))
	for _, d := range ss.dests {
		dests = append(dests, d)
	}
	slices.SortFunc(dests, func(a, b *destState) int { return cmp.Compare(a.container, b.container) })
	for _, d := range dests {
		if err := fn(engine.RecoveredItem{Created: true, Dest: d.d}); err != nil {
			return err
		}
	}
	subs := make([]*engine.DurableSub, 0, len(ss.subs))
	for _, r := range ss.subs {
		subs = append(subs, r)
	}
	slices.SortFunc(subs, func(a, b *engine.DurableSub) int { return cmp.Compare(a.Key.String(), b.Key.String()) })
	for _, r := range subs {
		s := *r
		if err := fn(engine.RecoveredItem{Sub: &s}); err != nil {
			return err
		}
	}
	for _, d := range dests {
		if err := ss.recoverDest(ctx, d, stubs, fn); err != nil {
			return err
		}
	}
	t, sh := ss.store.t, []any{ss.index}
	var txs [][]byte
	if err := queryRows(ctx, ss.store.pool, "SELECT DATA FROM "+t.txs+" WHERE SHARD=$1 ORDER BY XID", sh, func(r pgx.Rows) error {
		var v []byte
		txs = append(txs, v)
		return r.Scan(&txs[len(txs)-1])
	}); err != nil {
		return fmt.Errorf("jdbc: read prepared transactions from %s: %w", ss.store.where(), err)
	}
	for _, v := range txs {
		tx, err := records.DecodeTx(v)
		if err != nil {
			return err
		}
		if err := fn(engine.RecoveredItem{Tx: tx}); err != nil {
			return err
		}
	}
	var jobs [][]byte
	if err := queryRows(ctx, ss.store.pool, "SELECT DATA FROM "+t.jobs+" WHERE SHARD=$1 ORDER BY JOB_ID", sh, func(r pgx.Rows) error {
		var v []byte
		jobs = append(jobs, v)
		return r.Scan(&jobs[len(jobs)-1])
	}); err != nil {
		return fmt.Errorf("jdbc: read scheduled jobs from %s: %w", ss.store.where(), err)
	}
	for _, v := range jobs {
		j, err := records.DecodeJob(v)
		if err != nil {
			return err
		}
		if err := fn(engine.RecoveredItem{Job: j}); err != nil {
			return err
		}
	}
	return nil
}

type row struct {
	seq, id      int64
	redeliveries int32
	size         int32
	priority     *int64
	expiration   *int64
	msg          []byte
}

// recoverDest yields d's messages a page at a time (keyset paging on
// SEQ): no connection is held while fn runs, and only one page of
// bodies (none for stubs) is in memory.
func (ss *shardStore) recoverDest(ctx context.Context, d *destState, stubs bool, fn func(engine.RecoveredItem) error) error {
	t := ss.store.t
	cols := "w.SEQ, w.ID, w.REDELIVERIES, w.SIZE, m.PRIORITY, m.EXPIRATION"
	if !stubs {
		cols += ", m.MSG"
	}
	q := "SELECT " + cols + " FROM " + t.wmsgs + " w JOIN " + t.msgs + " m ON m.ID = w.ID WHERE w.SHARD=$1 AND w.CONTAINER=$2 AND w.SEQ > $3 ORDER BY w.SEQ LIMIT $4"
	after := int64(-1 << 63)
	page := make([]row, 0, ss.store.opts.PageSize)
	for {
		page = page[:0]
		if err := queryRows(ctx, ss.store.pool, q, []any{ss.index, d.container, after, ss.store.opts.PageSize}, func(r pgx.Rows) error {
			var x row
			dst := []any{&x.seq, &x.id, &x.redeliveries, &x.size, &x.priority, &x.expiration}
			if !stubs {
				dst = append(dst, &x.msg)
			}
			if err := r.Scan(dst...); err != nil {
				return err
			}
			page = append(page, x)
			return nil
		}); err != nil {
			return fmt.Errorf("jdbc: read messages of %s from %s: %w", d.d, ss.store.where(), err)
		}
		for _, x := range page {
			if err := ss.yield(d, &x, stubs, fn); err != nil {
				return err
			}
		}
		if len(page) < ss.store.opts.PageSize {
			return nil
		}
		after = page[len(page)-1].seq
	}
}

func (ss *shardStore) yield(d *destState, x *row, stubs bool, fn func(engine.RecoveredItem) error) error {
	seq := uint64(x.seq)
	var tm *topicMsg
	if d.topic {
		if tm = d.msgs[seq]; tm == nil {
			return nil // no subscription needs it
		}
	}
	ri := engine.RecoveredItem{Dest: d.d, Seq: seq}
	if stubs {
		ri.Ref = engine.StoreRef{File: uint32(uint64(x.id) >> 32), Off: uint32(x.id), Len: uint32(max(x.size, 1))}
		ri.Size, ri.Redeliveries = int64(x.size), x.redeliveries
		if x.priority != nil {
			ri.Priority = uint8(min(max(*x.priority, 0), 9))
		}
		if x.expiration != nil {
			ri.Expiration = *x.expiration
		}
	} else {
		m, err := decodeStored(x.msg, d.d, x.redeliveries)
		if err != nil {
			// As KahaDB skips a record it cannot read: the others are
			// still recovered.
			ss.log.Warn("stored message skipped", "dest", d.d.String(), "seq", seq, "id", x.id, "err", err)
			return nil
		}
		ri.Msg = m
	}
	if tm != nil {
		for _, k := range tm.subs {
			ri.Subs = append(ri.Subs, k)
			if mk, ok := ss.marks[mark{k, d.d}]; ok && seq <= mk {
				ri.Delivered = append(ri.Delivered, k)
			}
		}
	}
	return fn(ri)
}

// Close brings ActiveMQ's LAST_ACKED_ID up to date (syncAcks) and ends
// the shard; the pool stays the store's.
func (ss *shardStore) Close() error {
	if ss.closed.Load() {
		return nil
	}
	err := ss.syncAcks()
	if ss.closed.Swap(true) {
		return nil
	}
	ss.store.forget(ss)
	if err != nil {
		return fmt.Errorf("jdbc: close shard %d: %w", ss.index, err)
	}
	return nil
}

// Housekeep runs syncAcks every CleanupPeriod (engine.Housekeeper; on
// the writer goroutine, between batches).
func (ss *shardStore) Housekeep() error {
	p := ss.store.opts.CleanupPeriod
	if ss.closed.Load() || p <= 0 {
		return nil
	}
	now := time.Now()
	if ss.lastAcks.IsZero() {
		ss.lastAcks = now
	}
	if now.Sub(ss.lastAcks) < p {
		return nil
	}
	ss.lastAcks = now
	return ss.syncAcks()
}

// syncAcks sets LAST_ACKED_ID of ActiveMQ's rows of the shard's durable
// subscriptions (every priority's) to just below the oldest message the
// subscription still waits for, or to the last id handed out when it
// waits for none: what ActiveMQ, taking over the database, then
// delivers to it is what it still needs (and, when it acknowledged a
// later message before an earlier one, the later one again: never
// less). Wharf itself never reads LAST_ACKED_ID but when adopting
// ActiveMQ's rows.
func (ss *shardStore) syncAcks() error {
	if len(ss.subs) == 0 {
		return nil
	}
	t := ss.store.t
	var b batch
	if lk := ss.store.lock; lk != nil {
		if lk.lost.Load() {
			return nil
		}
		lk.fence(&b)
	}
	b.q("UPDATE "+t.acks+" a SET LAST_ACKED_ID = COALESCE((SELECT MIN(x.ID) - 1 FROM "+t.waits+" x JOIN "+t.wmsgs+" w ON w.ID = x.ID"+
		" WHERE w.CONTAINER = a.CONTAINER AND x.CLIENT_ID = a.CLIENT_ID AND x.SUB_NAME = a.SUB_NAME), $2)"+
		" FROM "+t.subs+" s WHERE s.SHARD = $1 AND (a.CONTAINER = s.SUB_DEST OR a.SUB_DEST = s.SUB_DEST) AND a.CLIENT_ID = s.CLIENT_ID AND a.SUB_NAME = s.SUB_NAME",
		ss.index, ss.store.lastID.Load())
	if err := ss.store.pool.SendBatch(context.Background(), &b.b).Close(); err != nil {
		return fmt.Errorf("jdbc: update ActiveMQ's LAST_ACKED_ID in %s: %w", ss.store.where(), err)
	}
	return nil
}
