package engine

import (
	"fmt"
	"sync"

	"wharf/engine/message"
)

// tx is a local transaction of one connection: the sends and acks it holds
// until Commit. A prepared (XA) transaction leaves its connection for the
// engine's registry, where any connection may finish it.
type tx struct {
	sends []*message.Message
	acks  []txAck
	// meta is the protocol's description of a prepared transaction (its
	// XA Xid), handed back by Prepared.
	meta any
}

// Prepare ends the first phase of a two-phase commit: the transaction
// leaves this connection (which may now close without rolling it back) and
// waits in the broker until some connection commits or rolls it back by
// the same id. meta is returned by Prepared for XA recovery.
//
// DEVIATION: prepared transactions are held in memory, not written to a
// transaction log, so a broker restart loses them. The KahaDB issue adds
// the log.
func (c *Conn) Prepare(id string, meta any) error {
	t := c.txs[id]
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, id)
	}
	delete(c.txs, id)
	t.meta = meta
	c.e.mu.Lock()
	c.e.prepared[id] = t
	c.e.mu.Unlock()
	return nil
}

// Prepared lists the prepared transactions' protocol descriptions.
func (e *Engine) Prepared() []any {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]any, 0, len(e.prepared))
	for _, t := range e.prepared {
		out = append(out, t.meta)
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
// DEVIATION: a transaction that spans shards commits shard by shard, without
// the two-phase transaction log DESIGN.md describes; a crash in the middle
// can keep one shard's share and lose another's. The KahaDB issue adds the
// log; the memory store cannot crash.
func (c *Conn) Commit(id string) error {
	t := c.takeTx(id)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, id)
	}
	type share struct {
		sends []*message.Message
		acks  []txAck
	}
	shares := map[*shard]*share{}
	get := func(s *shard) *share {
		sh := shares[s]
		if sh == nil {
			sh = &share{}
			shares[s] = sh
		}
		return sh
	}
	for _, m := range t.sends {
		sh := get(c.e.shardFor(m.Destination))
		sh.sends = append(sh.sends, m)
	}
	for _, a := range t.acks {
		if a.cumulative && len(a.sub.shards) > 1 {
			for _, i := range a.sub.shards {
				sh := get(c.e.shards[i])
				sh.acks = append(sh.acks, a)
			}
			continue
		}
		sh := get(c.e.shards[a.id&0xff])
		sh.acks = append(sh.acks, a)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for s, sh := range shares {
		wg.Add(1)
		done := &txDone{wg: &wg, mu: &mu, err: &first}
		if err := s.post(command{op: opFn, fn: func(s *shard) {
			for _, a := range sh.acks {
				s.ack(a.sub, a.id, a.cumulative)
			}
			for _, m := range sh.sends {
				if err := s.send(m); err != nil {
					done.fail(err)
				}
			}
			s.complete(done, 0, nil)
		}}); err != nil {
			done.fail(err)
			wg.Done()
		}
	}
	wg.Wait()
	return first
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
func (c *Conn) RollbackKeep(id string) error {
	t := c.takeTx(id)
	if t == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, id)
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
