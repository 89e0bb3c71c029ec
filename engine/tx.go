package engine

import (
	"fmt"
	"sync"

	"wharf/engine/message"
)

// tx is a transaction of one connection: the sends and acks it holds
// until Commit. A prepared (XA) transaction leaves its connection for the
// engine's registry, where any connection may finish it.
type tx struct {
	sends []*message.Message
	acks  []txAck

	// Prepared (XA) only: its Xid; the shards that logged a share of it;
	// and, by shard index, the deliveries it acknowledged, taken out of
	// their subscriptions and held out of dispatch until it ends. held[i]
	// is touched only by shard i's goroutine.
	prepared bool
	xid      XID
	shards   []int
	held     [][]heldEntry
}

// heldEntry is a message a prepared transaction acknowledged: p is the
// subscription part it was delivered to (for a topic, the durable part;
// nil for a recovered queue message).
type heldEntry struct {
	p *part
	e *entry
}

// Prepare ends the first phase of a two-phase commit of the XA transaction
// xid: the transaction's share on each shard (its persistent sends and its
// acks of stored messages) is written to that shard's store, and Prepare
// returns once every share is durable. The deliveries it acknowledged are
// taken from their consumers and held: no consumer or browser sees them
// until the transaction ends. The transaction leaves this connection (which
// may now close without rolling it back) and waits in the broker, across
// restarts, until some connection commits or rolls it back by the same
// Xid. A transaction that did nothing is forgotten and reported read-only
// (XA_RDONLY), as ActiveMQ's XATransaction.prepare does.
func (c *Conn) Prepare(xid XID) (readOnly bool, err error) {
	id := xid.String()
	t := c.txs[id]
	if t == nil {
		return false, fmt.Errorf("%w: %q", ErrUnknownTx, id)
	}
	delete(c.txs, id)
	if len(t.sends) == 0 && len(t.acks) == 0 {
		return true, nil
	}
	t.prepared, t.xid = true, xid
	t.held = make([][]heldEntry, len(c.e.shards))
	subs := map[*Subscription]bool{}
	for _, a := range t.acks {
		subs[a.sub] = true
	}
	shares := c.e.txShares(t)
	for s := range shares {
		t.shards = append(t.shards, s.idx)
	}
	err = c.e.onShardsDurable(t.shards, func(s *shard) {
		for sub := range subs {
			s.txHold(sub, t)
		}
		if s.store == nil {
			return
		}
		pt := &PreparedTx{XID: xid}
		for _, m := range shares[s].sends {
			if m.Persistent && !m.Destination.Type.IsTemp() {
				pt.Adds = append(pt.Adds, m)
			}
		}
		for _, h := range t.held[s.idx] {
			if !h.e.stored {
				continue
			}
			a := TxAck{Dest: h.e.dest.d, Seq: h.e.seq}
			if h.e.dest.d.Type.IsTopic() {
				a.Sub = h.p.durable.Key
			}
			pt.Acks = append(pt.Acks, a)
		}
		s.ops = append(s.ops, StoreOp{Kind: OpPrepare, Tx: pt})
	})
	if err != nil {
		// Not durable everywhere: roll back what was held, and what
		// was logged.
		_ = c.e.rollbackPrepared(t)
		return false, err
	}
	c.e.mu.Lock()
	c.e.prepared[id] = t
	c.e.mu.Unlock()
	return false, nil
}

// Prepared lists the Xids of the prepared transactions, recovered ones
// included.
func (e *Engine) Prepared() []XID {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]XID, 0, len(e.prepared))
	for _, t := range e.prepared {
		out = append(out, t.xid)
	}
	return out
}

// takeTx finds a transaction of this connection, or a prepared one.
func (c *Conn) takeTx(id string) *tx {
	if t := c.txs[id]; t != nil {
		delete(c.txs, id)
		return t
	}
	c.e.mu.Lock()
	defer c.e.mu.Unlock()
	if t := c.e.prepared[id]; t != nil {
		delete(c.e.prepared, id)
		return t
	}
	return nil
}

// txShare is one shard's part of a transaction.
type txShare struct {
	sends []*message.Message
	acks  []txAck
}

// txShares splits t's sends and acks by the shard that applies them.
func (e *Engine) txShares(t *tx) map[*shard]*txShare {
	shares := map[*shard]*txShare{}
	get := func(s *shard) *txShare {
		sh := shares[s]
		if sh == nil {
			sh = &txShare{}
			shares[s] = sh
		}
		return sh
	}
	for _, m := range t.sends {
		sh := get(e.shardFor(m.Destination))
		sh.sends = append(sh.sends, m)
	}
	for _, a := range t.acks {
		if a.cumulative && len(a.sub.shards) > 1 {
			for _, i := range a.sub.shards {
				sh := get(e.shards[i])
				sh.acks = append(sh.acks, a)
			}
			continue
		}
		sh := get(e.shards[a.id&0xff])
		sh.acks = append(sh.acks, a)
	}
	return shares
}

// onShardsDurable runs fn on each shard of idx and returns once the store
// operations fn adds are durable (the first error otherwise).
func (e *Engine) onShardsDurable(idx []int, fn func(*shard)) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, i := range idx {
		s := e.shards[i]
		wg.Add(1)
		done := &txDone{wg: &wg, mu: &mu, err: &first}
		if err := s.post(command{op: opFn, fn: func(s *shard) {
			fn(s)
			s.complete(done, 0, nil)
		}}); err != nil {
			done.fail(err)
			wg.Done()
		}
	}
	wg.Wait()
	return first
}

// commitPrepared commits a prepared transaction: on each shard that holds
// a share, the commit record, then its acks, then its sends, in one store
// batch. A crash between two shards' batches leaves the others' shares
// prepared: they are recovered, and the transaction manager's next commit
// of the Xid finishes them.
func (e *Engine) commitPrepared(t *tx) error {
	byShard := map[*shard][]*message.Message{}
	for _, m := range t.sends {
		s := e.shardFor(m.Destination)
		byShard[s] = append(byShard[s], m)
	}
	return e.onShardsDurable(t.shards, func(s *shard) {
		if s.store != nil {
			s.ops = append(s.ops, StoreOp{Kind: OpCommit, Tx: &PreparedTx{XID: t.xid}})
		}
		for _, h := range t.held[s.idx] {
			h.e.dest.held--
			s.consumed(h.p, h.e)
		}
		t.held[s.idx] = nil
		for _, m := range byShard[s] {
			if err := s.send(m); err != nil {
				s.log.Warn("committed message dropped", "xid", t.xid.String(), "dest", m.Destination.String(), "msg_id", m.ID, "err", err)
			}
		}
	})
}

// rollbackPrepared rolls back a prepared transaction: its sends are
// dropped and the messages it acknowledged go back to their destinations
// (durable subscriptions) with the redelivered flag, for any consumer.
func (e *Engine) rollbackPrepared(t *tx) error {
	return e.onShardsDurable(t.shards, func(s *shard) {
		if s.store != nil {
			s.ops = append(s.ops, StoreOp{Kind: OpRollback, Tx: &PreparedTx{XID: t.xid}})
		}
		for _, h := range t.held[s.idx] {
			s.txRelease(h)
		}
		t.held[s.idx] = nil
	})
}

// txHold takes the deliveries of sub acknowledged in t out of flight and
// holds them in t.
func (s *shard) txHold(sub *Subscription, t *tx) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	keep := p.inflight[:0]
	for _, e := range p.inflight {
		if e.tx == t {
			e.dest.inflight--
			e.dest.held++
			t.held[s.idx] = append(t.held[s.idx], heldEntry{p: p, e: e})
			continue
		}
		keep = append(keep, e)
	}
	clear(p.inflight[len(keep):])
	p.inflight = keep
}

// txRelease puts a held message back for redelivery, if its destination
// (or durable subscription) still exists.
//
// DEVIATION: the message comes back flagged redelivered also when the
// transaction was recovered after a restart; ActiveMQ 5.17 then
// redelivers it with redelivery counter 0 (conformance
// TestConformanceKahaDBXAActiveMQReference), as its count was in memory.
// It was delivered before, so JMSRedelivered is the truthful flag.
func (s *shard) txRelease(h heldEntry) {
	e := h.e
	e.dest.held--
	alive := s.dests[e.dest.d] == e.dest
	if alive && e.dest.d.Type.IsTopic() {
		switch {
		case h.p == nil:
			alive = false
		case h.p.durable != nil:
			alive = s.durables[h.p.durable.Key] == h.p
		default:
			alive = h.p.sub != nil && s.parts[h.p.sub] == h.p
		}
	}
	if !alive {
		s.freeEntry(e)
		return
	}
	e.redeliveries++
	s.requeue(h.p, e)
	if e.dest.d.Type.IsTopic() {
		s.dispatchPart(h.p)
	}
}

// recoverTx puts a prepared transaction's share back: its sends wait for
// the commit, the messages it acknowledged (recovered as pending) are held.
func (s *shard) recoverTx(pt *PreparedTx) error {
	held := make([]heldEntry, 0, len(pt.Acks))
	for _, a := range pt.Acks {
		var q *deque
		var p *part
		d := s.dests[a.Dest]
		if a.Dest.Type.IsTopic() {
			if p = s.durables[a.Sub]; p != nil {
				q = &p.pending
			}
		} else if d != nil {
			q = &d.pending
		}
		if q == nil {
			continue // nothing stored for it any more
		}
		var found *entry
		q.filter(func(e *entry) bool {
			if found == nil && e.seq == a.Seq && e.dest == d {
				found = e
				return true
			}
			return false
		})
		if found != nil {
			found.dest.held++
			held = append(held, heldEntry{p: p, e: found})
		}
	}
	e := s.e
	id := pt.XID.String()
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.prepared[id]
	if t == nil {
		t = &tx{prepared: true, xid: pt.XID, held: make([][]heldEntry, len(e.shards))}
		e.prepared[id] = t
	}
	t.shards = append(t.shards, s.idx)
	t.sends = append(t.sends, pt.Adds...)
	t.held[s.idx] = held
	return nil
}

type txAck struct {
	sub        *Subscription
	id         uint64
	cumulative bool
}

// Begin starts a local transaction named id.
func (c *Conn) Begin(id string) error {
	if c.closed {
		return ErrConnClosed
	}
	if _, dup := c.txs[id]; dup {
		return fmt.Errorf("%w: %q", ErrTxExists, id)
	}
	c.txs[id] = &tx{}
	return nil
}

// Commit applies the transaction's sends and acks and returns once they are
// stored. Each shard applies its share atomically, in one store batch.
//
// DEVIATION: a local transaction that spans shards commits shard by shard,
// without the two-phase transaction log DESIGN.md describes; a crash in
// the middle can keep one shard's share and lose another's. (A prepared XA
// transaction does not have this gap: see commitPrepared.)
func (c *Conn) Commit(id string) error {
	t := c.takeTx(id)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, id)
	}
	if t.prepared {
		return c.e.commitPrepared(t)
	}
	shares := c.e.txShares(t)
	idx := make([]int, 0, len(shares))
	for s := range shares {
		idx = append(idx, s.idx)
	}
	var sendErr error
	var mu sync.Mutex
	err := c.e.onShardsDurable(idx, func(s *shard) {
		sh := shares[s]
		for _, a := range sh.acks {
			s.ack(a.sub, a.id, a.cumulative)
		}
		for _, m := range sh.sends {
			if err := s.send(m); err != nil {
				mu.Lock()
				if sendErr == nil {
					sendErr = err
				}
				mu.Unlock()
			}
		}
	})
	if err != nil {
		return err
	}
	return sendErr
}

type txDone struct {
	wg  *sync.WaitGroup
	mu  *sync.Mutex
	err *error
}

func (d *txDone) fail(err error) {
	d.mu.Lock()
	if *d.err == nil {
		*d.err = err
	}
	d.mu.Unlock()
}

func (d *txDone) Complete(_ uint64, err error) {
	if err != nil {
		d.fail(err)
	}
	d.wg.Done()
}

// Rollback discards the transaction's sends; the deliveries it acknowledged
// are redelivered with the redelivered flag.
func (c *Conn) Rollback(id string) error {
	t := c.takeTx(id)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, id)
	}
	if t.prepared {
		return c.e.rollbackPrepared(t)
	}
	subs := map[*Subscription]bool{}
	for _, a := range t.acks {
		subs[a.sub] = true
	}
	if len(subs) == 0 {
		return nil
	}
	// Waits for the rollbacks, so that a following receive sees the
	// redelivered messages.
	return c.e.onShards(nil, func(s *shard) {
		for sub := range subs {
			s.txRollback(sub, t)
		}
	})
}

// RollbackKeep discards the transaction's sends and turns its acks back
// into unacknowledged deliveries that stay with their consumer, which
// redelivers them itself: what a JMS client expects (it redelivers from its
// own buffer after Session.rollback, and tells the broker with
// REDELIVERED or POISON acks), and what ActiveMQ does for every protocol.
// A prepared transaction's deliveries have left their consumers: they are
// redelivered by the broker, as Rollback does.
func (c *Conn) RollbackKeep(id string) error {
	t := c.takeTx(id)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, id)
	}
	if t.prepared {
		return c.e.rollbackPrepared(t)
	}
	subs := map[*Subscription]bool{}
	for _, a := range t.acks {
		subs[a.sub] = true
	}
	if len(subs) == 0 {
		return nil
	}
	return c.e.onShards(nil, func(s *shard) {
		for sub := range subs {
			s.txRestore(sub, t)
		}
	})
}

// txRestore makes the deliveries acknowledged in t unacknowledged again,
// still in flight to the same consumer, and takes back the credit their
// acks gave.
func (s *shard) txRestore(sub *Subscription, t *tx) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	n := 0
	for _, e := range p.inflight {
		if e.tx == t {
			e.tx = nil
			n++
		}
	}
	if n > 0 && sub.Prefetch() > 0 {
		sub.credit.Add(-int64(n))
	}
}

// txMark marks deliveries acknowledged inside a transaction: they stay in
// flight until the commit, but give their credit back so that the consumer
// keeps receiving (ActiveMQ's DELIVERED ack).
func (s *shard) txMark(sub *Subscription, id uint64, cumulative bool, t *tx) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	credit := 0
	for _, e := range p.inflight {
		if cumulative && seqOf(e.id) > seqOf(id) {
			break
		}
		if (cumulative || e.id == id) && e.tx == nil {
			e.tx = t
			credit++
		}
	}
	if credit > 0 && sub.returnCredit(credit) {
		s.creditReturned(p)
	}
}

// txRollback redelivers the deliveries of sub acknowledged in a
// transaction that rolled back.
func (s *shard) txRollback(sub *Subscription, t *tx) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	keep := p.inflight[:0]
	var back []*entry
	for _, e := range p.inflight {
		if e.tx == t {
			back = append(back, e)
			continue
		}
		keep = append(keep, e)
	}
	clear(p.inflight[len(keep):])
	p.inflight = keep
	for _, e := range back {
		e.dest.inflight--
		e.redeliveries++
		s.requeue(p, e)
	}
	s.dispatchPart(p)
}
