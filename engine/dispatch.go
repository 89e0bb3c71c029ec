package engine

import (
	"wharf/engine/message"
)

// Dispatch: where a message is chosen for a consumer. A queue's pending
// messages go to its consumers in priority order, round-robin among equals,
// to the exclusive consumer alone while it is there, to a message group's
// owner when the message belongs to a group (pick, pickAny, pickGrouped),
// always subject to the consumer's selector and noLocal flag (matches) and
// to its credit, the prefetch window (takeCredit). A topic subscription's
// backlog is delivered in order as credit allows (dispatchPart). deliver
// hands the message to the sink and records it in flight.

// dispatchQueue hands pending messages to consumers with credit: the highest
// priority first, round-robin among equals, the exclusive consumer alone when
// there is one. A message no consumer's selector accepts stays for others;
// a pass looks at most MaxPageSize such messages.
func (s *shard) dispatchQueue(d *destination) {
	if d.paused || len(d.consumers) == 0 || d.pending.len() == 0 {
		return
	}
	skipped := 0
	q := &d.pending
	for i := q.head; i < len(q.buf); i++ {
		e := q.buf[i]
		if e == nil {
			continue
		}
		if e.expired(s.now) {
			q.remove(i)
			s.expireEntry(e)
			continue
		}
		if e.msg == nil && !s.load(e) {
			q.remove(i)
			s.lost(e)
			continue
		}
		p, anyCredit, first := d.pick(e, s.now)
		if p == nil {
			if !anyCredit {
				return
			}
			if skipped++; skipped >= d.policy.MaxPageSize {
				return
			}
			continue
		}
		if !p.sub.takeCredit() {
			// A wildcard subscription's credit is shared with other
			// shards, which may have taken it since pick looked.
			i--
			continue
		}
		q.remove(i)
		if first {
			markFirstInGroup(e)
		}
		if e.msg.GroupSeq < 0 && d.groups != nil {
			// A negative JMSXGroupSeq closes the group once its owner has it.
			d.groups.close(e.msg.GroupID)
		}
		s.deliver(p, e)
	}
}

// pick chooses the consumer for e, honouring message groups. anyCredit
// reports whether some consumer could take a message at all; first, that e
// opens its group for the chosen consumer.
func (d *destination) pick(e *entry, now int64) (p *part, anyCredit, first bool) {
	if gid := e.msg.GroupID; gid != "" {
		return d.pickGrouped(e, gid, now)
	}
	p, anyCredit = d.pickAny(e, now)
	return p, anyCredit, false
}

// pickAny chooses among the consumers with credit whose selector accepts e.
func (d *destination) pickAny(e *entry, now int64) (p *part, anyCredit bool) {
	n := len(d.consumers)
	for _, c := range d.consumers {
		if c.spec.Exclusive {
			// The exclusive consumer is the first exclusive one in priority
			// order; everyone else waits until it leaves.
			if !c.sub.hasCredit() {
				return nil, false
			}
			if d.takes(c, e, now) {
				return c, true
			}
			return nil, true
		}
	}
	best := -1
	for k := 0; k < n; k++ {
		j := (d.rr + k) % n
		c := d.consumers[j]
		if !c.sub.hasCredit() {
			continue
		}
		anyCredit = true
		if best >= 0 && c.spec.Priority <= d.consumers[best].spec.Priority {
			continue
		}
		if !d.takes(c, e, now) {
			continue
		}
		best = j
	}
	if best < 0 {
		return nil, anyCredit
	}
	d.rr = best + 1
	if d.rr >= n {
		d.rr = 0
	}
	return d.consumers[best], true
}

// pickGrouped chooses the consumer for a message of group gid: its owner if
// the group has one (the message waits while the owner has no credit),
// otherwise the consumer pick would choose, which then owns the group.
// first reports that the message opens the group for that consumer.
func (d *destination) pickGrouped(e *entry, gid string, now int64) (p *part, anyCredit, first bool) {
	if d.groups == nil {
		d.groups = newGroupMap(d.policy.MessageGroupCacheSize)
	}
	if owner := d.groups.owner(gid); owner != nil {
		if owner.sub.hasCredit() && d.takes(owner, e, now) {
			return owner, true, false
		}
		// The group waits for its owner; others may still take other
		// messages, which is all the caller needs to know to go on.
		return nil, true, false
	}
	p, anyCredit = d.pickAny(e, now)
	if p != nil {
		d.groups.assign(gid, p)
		first = true
	}
	return p, anyCredit, first
}

// markFirstInGroup gives e a copy of its message carrying
// JMSXGroupFirstForConsumer=true, as ActiveMQ sets on the message that
// assigns a group to a consumer. The shared message is never changed.
func markFirstInGroup(e *entry) {
	c := e.msg.Clone()
	// The original encoding stays: the flag is a header a protocol adds to
	// it (OpenWire's JMSXGroupFirstForConsumer), not a change to the body.
	c.Original = e.msg.Original
	c.Props.Set("JMSXGroupFirstForConsumer", message.BoolValue(true))
	e.msg = c
}

// dispatchPart delivers to p what it can take: its topic backlog, and the
// queues it consumes from.
func (s *shard) dispatchPart(p *part) {
	if p.sub == nil || p.sub.closed.Load() {
		return
	}
	for p.pending.len() > 0 {
		if !p.sub.takeCredit() {
			break
		}
		e := p.pending.popFront()
		if e.expired(s.now) {
			p.sub.credit.Add(1)
			s.expireTopicEntry(p, e)
			continue
		}
		if e.msg == nil && !s.load(e) {
			p.sub.credit.Add(1)
			s.lost(e)
			continue
		}
		s.deliver(p, e)
	}
	for _, d := range p.dests {
		if !d.d.Type.IsTopic() {
			s.dispatchQueue(d)
		}
	}
}

// deliver hands e to p's sink; the caller has taken the credit.
func (s *shard) deliver(p *part, e *entry) {
	sub := p.sub
	id := sub.nextID.Add(1)<<8 | uint64(s.idx)
	e.dest.dispatched++
	if s.keepStats {
		e.dest.enqueueTime.add(s.now - e.in)
		p.dispatched++
		if !e.dest.d.Type.IsTopic() {
			p.enqueued++ // a queue gives a consumer its message at dispatch
		}
	}
	dl := Delivery{Sub: sub, ID: id, Msg: e.msg, Redeliveries: e.redeliveries}
	if e.dest.policy.AdvisoryForDelivery {
		s.messageAdvisory(AdvisoryPrefix+"MessageDelivered."+e.dest.d.Type.String()+"."+e.dest.d.Name, e.msg,
			str("orignalDestination", e.dest.d.String()))
	}
	if sub.spec.AckMode == AckAuto {
		s.consumed(p, e)
	} else {
		e.id = id
		p.inflight = append(p.inflight, e)
		e.dest.inflight++
		if p.durable != nil && e.stored && e.dest.d.Type.IsTopic() && e.seq > p.marks[e.dest] {
			s.markDelivered(p, e)
		}
	}
	s.handOver(sub, dl)
}

// handOver calls a sink. A panic there is a bug in a protocol adapter: it
// must not take the shard, and every other connection, down with it. The
// subscription is cut off and the panic logged once.
func (s *shard) handOver(sub *Subscription, d Delivery) {
	if s.out.record {
		s.out.deliveries = append(s.out.deliveries, d)
	}
	defer func() {
		if r := recover(); r != nil {
			sub.closed.Store(true)
			s.log.Error("subscription sink panicked; subscription stopped", "sub", sub.id, "conn", sub.conn.id, "panic", r)
		}
	}()
	sub.sink.Deliver(d)
}

// markDelivered notes that durable part p has been handed stored topic
// message e. The turn's highest per part and topic is stored with the
// turn's batch (OpDelivered, queueMarks), so that after a crash the
// message comes back flagged redelivered: MQTT's DUP, JMSRedelivered.
//
// The batch is written by the writer once the turn ends, while the
// delivery is handed to the sink now: a SIGKILL in the moment between the
// two resends the message without the flag.
//
// DEVIATION: ActiveMQ keeps no such mark (without persistJMSRedelivered
// a message in flight at a crash comes back with JMSRedelivered false).
func (s *shard) markDelivered(p *part, e *entry) {
	if p.marks == nil {
		p.marks = map[*destination]uint64{}
	}
	p.marks[e.dest] = e.seq
	r := markRef{p, e.dest}
	if _, queued := s.markedSet[r]; queued {
		return
	}
	if s.markedSet == nil {
		s.markedSet = map[markRef]struct{}{}
	}
	s.markedSet[r] = struct{}{}
	s.marked = append(s.marked, r)
}

// markRef names one durable part's mark on one topic.
type markRef struct {
	p *part
	d *destination
}

// queueMarks adds the marks the turn raised to its store batch, one per
// part and topic. A topic removed in the turn took its marks with it.
func (s *shard) queueMarks() {
	for _, r := range s.marked {
		if seq := r.p.marks[r.d]; seq > 0 {
			s.out.ops = append(s.out.ops, StoreOp{Kind: OpDelivered, Dest: r.d.d, Seq: seq, Sub: DurableSub{Key: r.p.durable.Key}})
		}
	}
	clear(s.marked)
	s.marked = s.marked[:0]
	clear(s.markedSet)
}

// takeCredit takes one unit of credit if there is any.
func (s *Subscription) takeCredit() bool {
	for {
		c := s.credit.Load()
		if c <= 0 {
			return false
		}
		if s.credit.CompareAndSwap(c, c-1) {
			return true
		}
	}
}

func (s *Subscription) hasCredit() bool { return s.credit.Load() > 0 }

// matches applies noLocal and the selector.
func (s *Subscription) matches(m *message.Message, redeliveries int32) bool {
	if s.spec.NoLocal && m.Origin != "" && m.Origin == s.conn.id {
		return false
	}
	if n := s.spec.Network; n != nil && !n.admits(m) {
		return false
	}
	return s.sel == nil || s.sel.Matches(m, redeliveries)
}

// matchesLocal is matches without the network filter (replay.go).
func (s *Subscription) matchesLocal(m *message.Message, redeliveries int32) bool {
	if s.spec.NoLocal && m.Origin != "" && m.Origin == s.conn.id {
		return false
	}
	return s.sel == nil || s.sel.Matches(m, redeliveries)
}

func (p *part) matches(m *message.Message) bool {
	if p.sub != nil {
		return p.sub.matches(m, 0)
	}
	// Offline durable subscription: noLocal has no connection to compare.
	return p.sel == nil || p.sel.Matches(m, 0)
}
