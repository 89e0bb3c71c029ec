package engine

// The shard side of transactions (tx.go): marking, holding, restoring and
// rolling back the deliveries a transaction acknowledged, and recovering a
// prepared XA transaction's share. Everything here runs on the shard
// goroutine.

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
		if cumulative || e.id == id {
			switch {
			case e.tx == nil:
				e.tx, e.wasDelivered = t, false
				credit++
			case e.tx == deliveredMark && t != deliveredMark:
				// A DELIVERED ack came first (ActiveMQ's client sends one
				// for each message a transacted or XA session receives):
				// the transaction takes the entry over, so that a prepare
				// holds it and a commit consumes it; its credit was
				// returned already.
				e.tx, e.wasDelivered = t, true
			}
		}
	}
	if credit > 0 && sub.returnCredit(credit) {
		s.creditReturned(p)
	}
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
			if e.wasDelivered {
				e.tx, e.wasDelivered = deliveredMark, false
				continue
			}
			e.tx = nil
			n++
		}
	}
	if n > 0 && sub.Prefetch() > 0 {
		sub.credit.Add(-int64(n))
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

// txCommit applies one shard's share of a local transaction (opTxCommit):
// its acks, then its sends, in one store batch.
func (s *shard) txCommit(x *txCommitCmd) {
	for _, a := range x.share.acks {
		s.ack(a.sub, a.id, a.cumulative)
	}
	for _, m := range x.share.sends {
		// Checked at Send (Conn.checkCreate); again here in case the
		// destination went away since.
		err := s.mayCreate(x.subj, m.Destination)
		if err == nil {
			err = s.sendAs(x.subj, m)
		}
		if err != nil && x.sendErr == nil {
			x.sendErr = err
		}
	}
}

// xaPrepare holds the deliveries the transaction acknowledged here and
// logs the shard's share of it (opXAPrepare).
func (s *shard) xaPrepare(x *xaCmd) {
	t := x.t
	for _, sub := range x.subs {
		s.txHold(sub, t)
	}
	if s.store == nil {
		return
	}
	pt := &PreparedTx{XID: t.xid}
	if x.share != nil {
		for _, m := range x.share.sends {
			if m.Persistent && !m.Destination.Type.IsTemp() {
				pt.Adds = append(pt.Adds, m)
			}
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
	s.out.ops = append(s.out.ops, StoreOp{Kind: OpPrepare, Tx: pt})
}

// xaCommit commits the shard's share of a prepared transaction
// (opXACommit): the commit record, then its acks, then its sends, in one
// store batch.
func (s *shard) xaCommit(x *xaCmd) {
	t := x.t
	if s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpCommit, Tx: &PreparedTx{XID: t.xid}})
	}
	for _, h := range t.held[s.idx] {
		h.e.dest.held--
		s.consumed(h.p, h.e)
	}
	t.held[s.idx] = nil
	for _, m := range x.sends {
		if err := s.send(m); err != nil {
			s.log.Warn("committed message dropped", "xid", t.xid.String(), "dest", m.Destination.String(), "msg_id", m.ID, "err", err)
		}
	}
}

// xaRollback rolls the shard's share of a prepared transaction back
// (opXARollback): what it acknowledged goes back for redelivery.
func (s *shard) xaRollback(x *xaCmd) {
	t := x.t
	if s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpRollback, Tx: &PreparedTx{XID: t.xid}})
	}
	for _, h := range t.held[s.idx] {
		s.txRelease(h)
	}
	t.held[s.idx] = nil
}
