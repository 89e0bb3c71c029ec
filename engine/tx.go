package engine

import (
	"fmt"

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
	subs := t.ackedSubs()
	shares := c.e.txShares(t)
	for s := range shares {
		t.shards = append(t.shards, s.idx)
	}
	err = c.e.request(t.shards, func(s *shard) command {
		return command{op: opXAPrepare, ctl: &xaCmd{t: t, subs: subs, share: shares[s]}}
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
	return e.request(t.shards, func(s *shard) command {
		return command{op: opXACommit, ctl: &xaCmd{t: t, sends: byShard[s]}}
	})
}

// rollbackPrepared rolls back a prepared transaction: its sends are
// dropped and the messages it acknowledged go back to their destinations
// (durable subscriptions) with the redelivered flag, for any consumer.
func (e *Engine) rollbackPrepared(t *tx) error {
	return e.request(t.shards, func(*shard) command { return command{op: opXARollback, ctl: &xaCmd{t: t}} })
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
	if c.txs == nil {
		c.txs = map[string]*tx{} // made on the first transaction
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
	xs := map[int]*txCommitCmd{}
	err := c.e.request(idx, func(s *shard) command {
		x := &txCommitCmd{share: shares[s], subj: c.subject}
		xs[s.idx] = x
		return command{op: opTxCommit, ctl: x}
	})
	if err != nil {
		return err
	}
	for _, i := range idx {
		if err := xs[i].sendErr; err != nil {
			return err
		}
	}
	return nil
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
	subs := t.ackedSubs()
	if len(subs) == 0 {
		return nil
	}
	// Waits for the rollbacks, so that a following receive sees the
	// redelivered messages.
	return c.e.request(nil, func(*shard) command { return command{op: opTxRollback, ctl: &txSubsCmd{t: t, subs: subs}} })
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
	subs := t.ackedSubs()
	if len(subs) == 0 {
		return nil
	}
	return c.e.request(nil, func(*shard) command { return command{op: opTxRestore, ctl: &txSubsCmd{t: t, subs: subs}} })
}

// ackedSubs lists the subscriptions whose deliveries t acknowledged, each
// once, in the order of their first ack.
func (t *tx) ackedSubs() []*Subscription {
	var out []*Subscription
	seen := map[*Subscription]bool{}
	for _, a := range t.acks {
		if !seen[a.sub] {
			seen[a.sub] = true
			out = append(out, a.sub)
		}
	}
	return out
}
