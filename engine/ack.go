package engine

// Acknowledgement: what happens on the shard when a consumer acks or nacks a
// delivery (ack, nack), how the in-flight list is kept (findInflight,
// removeInflight), how a message is retired (consumed, dropStored) or put
// back (requeue), and how the credit an ack frees reaches every shard the
// subscription spans (creditReturned).

// ack acknowledges delivery id (and, cumulative, every earlier one).
func (s *shard) ack(sub *Subscription, id uint64, cumulative bool) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	credit := 0
	if cumulative {
		n := 0
		for _, e := range p.inflight {
			if seqOf(e.id) > seqOf(id) {
				break
			}
			n++
		}
		for _, e := range p.inflight[:n] {
			if e.tx == nil {
				credit++
			}
			e.dest.inflight--
			s.consumed(p, e)
		}
		clear(p.inflight[:n])
		p.inflight = p.inflight[n:]
	} else {
		i := p.findInflight(id)
		if i < 0 {
			s.log.Debug("ack of unknown delivery", "sub", sub.id, "delivery", id)
			return
		}
		e := p.inflight[i]
		p.removeInflight(i)
		if e.tx == nil {
			credit++
		}
		e.dest.inflight--
		s.consumed(p, e)
	}
	if credit > 0 && sub.returnCredit(credit) {
		s.creditReturned(p)
	}
}

// creditReturned dispatches to p here and asks the other shards p's
// subscription spans to do the same.
func (s *shard) creditReturned(p *part) {
	s.dispatchPart(p)
	if len(p.sub.shards) > 1 {
		for _, i := range p.sub.shards {
			if i != s.idx {
				s.forwardTo(s.e.shards[i], command{op: opKick, sub: p.sub})
			}
		}
	}
}

// returnCredit gives back the credit of n acknowledged deliveries, and
// reports whether it did. A pull-mode subscription (prefetch 0) gets credit
// only from AddCredit, one per pull: acks return none.
func (s *Subscription) returnCredit(n int) bool {
	if s.prefetch.Load() == 0 {
		return false
	}
	s.credit.Add(int64(n))
	return true
}

// nack handles a negative acknowledgement of one delivery.
func (s *shard) nack(sub *Subscription, id uint64, kind NackKind, cause string) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	i := p.findInflight(id)
	if i < 0 {
		s.log.Debug("nack of unknown delivery", "sub", sub.id, "delivery", id)
		return
	}
	e := p.inflight[i]
	p.removeInflight(i)
	e.dest.inflight--
	if e.tx == nil {
		sub.returnCredit(1)
	}
	e.tx = nil
	switch kind {
	case NackPoison:
		s.deadLetterEntry(p, e, cause)
	case NackRedeliver:
		s.redeliver(p, e, cause)
	case NackRelease:
		s.requeue(p, e)
	case NackExpired:
		// Expired by the consumer: a dequeue too, as expireEntry counts
		// one (ActiveMQ's messageExpired removes it from the queue).
		d := e.dest
		d.expired++
		d.dequeued++
		s.expiredAdvisory(d, e.msg)
		s.dropStored(p, e)
		s.deadLetter(d, e.msg, expiryCause(e.msg), true)
		s.freeEntry(e)
	}
	s.creditReturned(p)
}

// requeue puts an entry back where it came from, in sequence order.
func (s *shard) requeue(p *part, e *entry) {
	e.id = 0
	e.tx = nil
	if e.dest.d.Type.IsTopic() {
		if p.durable == nil && p.sub == nil {
			s.freeEntry(e)
			return
		}
		p.pending.insertSorted(e)
		return
	}
	e.dest.pending.insertSorted(e)
	s.dispatchQueue(e.dest)
}

// consumed retires an acknowledged entry.
func (s *shard) consumed(p *part, e *entry) {
	d := e.dest
	d.dequeued++
	if p != nil && s.keepStats {
		p.dequeued++
	}
	if d.policy.AdvisoryForConsumed {
		s.messageAdvisory(AdvisoryPrefix+"MessageConsumed."+d.d.Type.String()+"."+d.d.Name, e.msg,
			str("orignalDestination", d.d.String()))
	}
	if e.stored {
		if d.d.Type.IsTopic() {
			s.out.ops = append(s.out.ops, StoreOp{Kind: OpAck, Dest: d.d, Seq: e.seq, Sub: DurableSub{Key: p.durable.Key}})
		} else {
			s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemove, Dest: d.d, Seq: e.seq})
		}
	}
	s.freeEntry(e)
}

// dropStored removes an entry from the store without counting it consumed.
func (s *shard) dropStored(p *part, e *entry) {
	if !e.stored {
		return
	}
	if e.dest.d.Type.IsTopic() {
		if p != nil && p.durable != nil {
			s.out.ops = append(s.out.ops, StoreOp{Kind: OpAck, Dest: e.dest.d, Seq: e.seq, Sub: DurableSub{Key: p.durable.Key}})
		}
		return
	}
	s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemove, Dest: e.dest.d, Seq: e.seq})
}

// findInflight returns the index of delivery id in p.inflight, or -1.
// Individual acknowledgements mostly come in delivery order (an MQTT
// client's PUBACKs must [MQTT-4.6.0-2]): the oldest is looked at first,
// which saves a binary search over up to the prefetch's entries, each a
// cache miss (issue 18).
func (p *part) findInflight(id uint64) int {
	if len(p.inflight) > 0 && p.inflight[0].id == id {
		return 0
	}
	lo, hi := 0, len(p.inflight)
	for lo < hi {
		m := (lo + hi) / 2
		if seqOf(p.inflight[m].id) < seqOf(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(p.inflight) && p.inflight[lo].id == id {
		return lo
	}
	return -1
}

func (p *part) removeInflight(i int) {
	if i == 0 {
		p.inflight[0] = nil
		p.inflight = p.inflight[1:]
		return
	}
	copy(p.inflight[i:], p.inflight[i+1:])
	p.inflight[len(p.inflight)-1] = nil
	p.inflight = p.inflight[:len(p.inflight)-1]
}

func seqOf(id uint64) uint64 { return id >> 8 }
