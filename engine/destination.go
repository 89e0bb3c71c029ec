package engine

import (
	"fmt"
	"time"

	"wharf/engine/message"
)

// destination is a queue or topic and all its state. Owned by its shard.
type destination struct {
	d      message.Destination
	policy Policy
	owner  string // temporary destinations: the owning connection's id

	nextSeq uint64
	// Queues: pending messages and competing consumers.
	pending   deque
	consumers []*part // ordered by priority, highest first
	rr        int
	// Topics: every subscription part that receives its messages.
	subs []*part

	nextSweep int64     // ms
	groups    *groupMap // message group owners (queues), made on first use

	// Topics: the retained message (retained.go) and its sequence under
	// RetainStore, 0 when it is not stored.
	retained    *message.Message
	retainedSeq uint64

	composite        *Composite // configured composite intercepting sends
	compositeChecked bool

	enqueued, dequeued, dispatched, expired, inflight, discarded int64

	mem          int64    // bytes of the messages held (memory usage)
	temp         int64    // bytes of its messages spilled to the temp store (spill.go)
	held         int64    // messages a prepared XA transaction acknowledged (tx.go), still stored
	blocked      []parked // producer sends waiting for room, in arrival order
	blockedSends int64
	lastFlowWarn int64 // ms
}

func (d *destination) stats() DestinationStats {
	st := DestinationStats{
		Exists:         true,
		EnqueueCount:   d.enqueued,
		DequeueCount:   d.dequeued,
		DispatchCount:  d.dispatched,
		InFlightCount:  d.inflight,
		ExpiredCount:   d.expired,
		DiscardedCount: d.discarded,
		MemoryUsage:    d.mem,
		MemoryLimit:    d.policy.MemoryLimit,
		TempUsage:      d.temp,
		BlockedSends:   d.blockedSends,
		BlockedNow:     len(d.blocked),
	}
	if d.d.Type.IsTopic() {
		st.ConsumerCount = int64(len(d.subs))
	} else {
		st.ConsumerCount = int64(len(d.consumers))
		st.QueueSize = int64(d.pending.len()) + d.inflight + d.held
	}
	return st
}

// dest returns the destination, creating it when create is set. Temporary
// destinations are only created by their connection (createTemp).
func (s *shard) dest(d message.Destination, create bool) *destination {
	if x := s.dests[d]; x != nil {
		return x
	}
	if !create {
		return nil
	}
	x := &destination{d: d, policy: s.e.opts.PolicyFor(d), nextSeq: 1}
	x.pending.byPriority = x.policy.PrioritizedMessages && !d.Type.IsTopic()
	if x.policy.MaxPageSize <= 0 {
		x.policy.MaxPageSize = 200
	}
	if x.policy.ExpireMessagesPeriod > 0 {
		x.nextSweep = s.now + x.policy.ExpireMessagesPeriod.Milliseconds()
	}
	s.dests[d] = x
	if s.store != nil && !s.recovering && keptDest(d) {
		// The store records it, so that a restart brings it back empty
		// (a virtual topic's consumer queue then keeps collecting copies
		// while its consumer is away, as in ActiveMQ).
		s.ops = append(s.ops, StoreOp{Kind: OpAddDest, Dest: d})
	}
	for _, p := range s.wild {
		if p.spec.Destination.Matches(d) && !p.attachedTo(x) {
			s.attach(p, x)
		}
	}
	s.e.registerVirtualQueue(d, true)
	s.destinationAdvisory(d, true)
	return x
}

// keptDest reports whether the store keeps destination d across a
// restart once it is created: ActiveMQ's DestinationFactoryImpl gives a
// message store to every queue and topic but temporary destinations and
// advisory topics. RetainStore is the store's own, never a destination;
// patterns and composites are not destinations either.
func keptDest(d message.Destination) bool {
	return !d.Type.IsTemp() && !IsAdvisory(d) && d != RetainStore && !d.IsWildcard() && !d.IsComposite() && d.Name != ""
}

// attach makes part p a consumer of queue d or a subscriber of topic d.
func (s *shard) attach(p *part, d *destination) {
	p.dests = append(p.dests, d)
	if d.d.Type.IsTopic() {
		d.subs = append(d.subs, p)
		return
	}
	prio := p.spec.Priority
	i := len(d.consumers)
	for i > 0 && d.consumers[i-1].spec.Priority < prio {
		i--
	}
	d.consumers = append(d.consumers, nil)
	copy(d.consumers[i+1:], d.consumers[i:])
	d.consumers[i] = p
}

func (s *shard) detach(p *part, d *destination) {
	remove := func(list []*part) []*part {
		for i, q := range list {
			if q == p {
				return append(list[:i], list[i+1:]...)
			}
		}
		return list
	}
	if d.d.Type.IsTopic() {
		d.subs = remove(d.subs)
	} else {
		d.consumers = remove(d.consumers)
		if d.rr >= len(d.consumers) {
			d.rr = 0
		}
		if d.groups != nil {
			d.groups.release(p)
		}
	}
}

// send accepts a message into its destination.
func (s *shard) send(m *message.Message) error { return s.sendTo(m, nil) }

// sendTo is send; a non-nil target limits a topic message to that one
// subscription (advisory replay, ActiveMQ's TargetConsumerId).
func (s *shard) sendTo(m *message.Message, target *Subscription) error {
	if s.e.opts.SchedulerSupport {
		if held, err := s.scheduled(m); held {
			return err // held by the scheduler until it is due, or refused (scheduler.go)
		}
	}
	d := s.dest(m.Destination, !m.Destination.Type.IsTemp())
	if d == nil {
		return TempGoneError(m.Destination)
	}
	if m.Expired(s.now) {
		// ActiveMQ checks expiry on arrival: an expired message is never
		// stored or dispatched, it is expired at once (to the DLQ if
		// persistent).
		d.enqueued++
		d.expired++
		s.expiredAdvisory(d, m)
		s.deadLetter(d, m, 0, expiryCause(m), true)
		return nil
	}
	if vc := s.compositeFor(d); vc != nil {
		// A configured composite destination: copies to its forwards
		// (filtered by their selectors), and the original only when it is
		// not forward-only.
		for _, f := range vc.Forwards {
			if f.Selector == nil || f.Selector.Matches(m, m.RedeliveryCounter) {
				s.forward(m, f.Destination)
			}
		}
		if vc.ForwardOnly {
			return nil
		}
	}
	if d.d.Type.IsTopic() {
		if v, ok := m.Props.Get(RetainProperty); ok && v.Bool() {
			m = s.retain(d, m)
		}
	}
	if d.d.Type == message.Topic {
		for _, q := range s.e.virtualCopies(d.d) {
			s.forward(m, q)
		}
		for _, q := range s.e.shareCopies(d.d) {
			s.forward(m, q)
		}
	}
	if d.policy.SendAdvisoryIfNoConsumers && m.Advisory == nil && !m.Persistent && len(d.consumers) == 0 && len(d.subs) == 0 {
		// ActiveMQ (BaseDestination.onMessageWithNoConsumers) does this for
		// non-persistent messages only, and sends a plain copy of the
		// message itself, body, id and properties kept, to the NoConsumer
		// topic: no Advisory type, no origin properties, no JSON command.
		if s.e.advisories() && !IsAdvisory(d.d) {
			c := m.Clone()
			c.Destination = message.TopicDest(AdvisoryPrefix + "NoConsumer." + queueOrTopic(d.d) + "." + d.d.Name)
			s.fire(c)
		}
	}
	d.enqueued++
	// Temporary destinations die with their connection: ActiveMQ keeps
	// their messages in memory only.
	stored := m.Persistent && s.store != nil && !d.d.Type.IsTemp()
	seq := d.nextSeq
	d.nextSeq++
	if !d.d.Type.IsTopic() {
		e := s.newEntry(seq, m, d)
		op := -1
		if stored {
			s.setStored(e)
			op = len(s.ops)
			s.ops = append(s.ops, StoreOp{Kind: OpAdd, Dest: d.d, Seq: seq, Msg: m})
		}
		if s.e.opts.Temp != nil && (d.pending.len() > 0 || len(d.consumers) == 0) {
			// It has to wait: it may be paged out (spill.go).
			s.spillDone(s.spillNew(e, nil))
		}
		d.pending.pushBack(e)
		s.dispatchQueue(d)
		if op >= 0 && e.id != 0 && e.dest == d && e.seq == seq {
			// Handed to a consumer at once: its ack may cancel the
			// write (the writer waits a little for it).
			s.ops[op].dispatched = true
		}
		return nil
	}
	// Topic: find who gets it first, store it once for the durable ones,
	// then hand out the copies.
	// Taken, not borrowed: handing out copies can expire and dead-letter a
	// message, which re-enters send on this shard.
	matched := s.scratch[:0]
	s.scratch = nil
	var keys []SubKey
	for _, p := range d.subs {
		if p.sub == nil && !m.Persistent {
			continue // offline durable subscriptions keep persistent messages only
		}
		if target != nil && p.sub != target {
			continue
		}
		if !p.matches(m) {
			continue
		}
		matched = append(matched, p)
		if stored && p.durable != nil {
			keys = append(keys, p.durable.Key)
		}
	}
	if len(keys) > 0 {
		s.ops = append(s.ops, StoreOp{Kind: OpAdd, Dest: d.d, Seq: seq, Msg: m, Subs: keys})
	}
	var enc []byte // m encoded for the temp store, once for every copy
	for i, p := range matched {
		e := s.newEntry(seq, m, d)
		if len(keys) > 0 && p.durable != nil {
			s.setStored(e)
		}
		if s.e.opts.Temp != nil && (p.sub == nil || p.pending.len() > 0 || !p.sub.hasCredit()) {
			// It has to wait for this subscriber: it may be paged out
			// (spill.go).
			enc = s.spillNew(e, enc)
		}
		p.pending.pushBack(e)
		s.dispatchPart(p)
		if lim := d.policy.PendingMessageLimit; lim > 0 && p.durable == nil {
			// A slow non-durable subscriber keeps at most lim messages
			// beyond its prefetch; the oldest go (ActiveMQ's
			// constantPendingMessageLimitStrategy).
			for p.pending.len() > lim {
				old := p.pending.popFront()
				d.discarded++
				if d.policy.AdvisoryForDiscardingMessages {
					if om := s.msgOf(old); om != nil {
						s.messageAdvisory(AdvisoryPrefix+"MessageDiscarded."+d.d.Type.String()+"."+d.d.Name, om,
							str("consumerId", p.sub.consumerID()), str("orignalDestination", d.d.String()),
							message.Property{Name: "discardedCount", Value: message.LongValue(d.discarded)})
					}
				}
				if d.policy.AdvisoryForSlowConsumers && !p.slow {
					p.slow = true
					s.fire(s.e.newAdvisory(AdvisoryPrefix+"SlowConsumer."+d.d.Type.String()+"."+d.d.Name,
						consumerInfo(p.sub), str("consumerId", p.sub.consumerID())))
				}
				s.freeEntry(old)
			}
		}
		matched[i] = nil
	}
	s.spillDone(enc)
	s.scratch = matched[:0]
	return nil
}

func expiryCause(m *message.Message) string {
	return "java.lang.Throwable: Message Expired. Expiration:" + itoa(m.Expiration)
}

// dispatchQueue hands pending messages to consumers with credit: the highest
// priority first, round-robin among equals, the exclusive consumer alone when
// there is one. A message no consumer's selector accepts stays for others;
// a pass looks at most MaxPageSize such messages.
func (s *shard) dispatchQueue(d *destination) {
	if len(d.consumers) == 0 || d.pending.len() == 0 {
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
		p, anyCredit, first := d.pick(e)
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
func (d *destination) pick(e *entry) (p *part, anyCredit, first bool) {
	if gid := e.msg.GroupID; gid != "" {
		return d.pickGrouped(e, gid)
	}
	p, anyCredit = d.pickAny(e)
	return p, anyCredit, false
}

// pickAny chooses among the consumers with credit whose selector accepts e.
func (d *destination) pickAny(e *entry) (p *part, anyCredit bool) {
	n := len(d.consumers)
	for _, c := range d.consumers {
		if c.spec.Exclusive {
			// The exclusive consumer is the first exclusive one in priority
			// order; everyone else waits until it leaves.
			if !c.sub.hasCredit() {
				return nil, false
			}
			if c.sub.matches(e.msg, e.redeliveries) {
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
		if !c.sub.matches(e.msg, e.redeliveries) {
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
			s.ops = append(s.ops, StoreOp{Kind: OpDelivered, Dest: r.d.d, Seq: seq, Sub: DurableSub{Key: r.p.durable.Key}})
		}
	}
	clear(s.marked)
	s.marked = s.marked[:0]
	clear(s.markedSet)
}

// handOver calls a sink. A panic there is a bug in a protocol adapter: it
// must not take the shard, and every other connection, down with it. The
// subscription is cut off and the panic logged once.
func (s *shard) handOver(sub *Subscription, d Delivery) {
	defer func() {
		if r := recover(); r != nil {
			sub.closed.Store(true)
			s.log.Error("subscription sink panicked; subscription stopped", "sub", sub.id, "conn", sub.conn.id, "panic", r)
		}
	}()
	sub.sink.Deliver(d)
}

// consumed retires an acknowledged entry.
func (s *shard) consumed(p *part, e *entry) {
	d := e.dest
	d.dequeued++
	if d.policy.AdvisoryForConsumed {
		s.messageAdvisory(AdvisoryPrefix+"MessageConsumed."+d.d.Type.String()+"."+d.d.Name, e.msg,
			str("orignalDestination", d.d.String()))
	}
	if e.stored {
		if d.d.Type.IsTopic() {
			s.ops = append(s.ops, StoreOp{Kind: OpAck, Dest: d.d, Seq: e.seq, Sub: DurableSub{Key: p.durable.Key}})
		} else {
			s.ops = append(s.ops, StoreOp{Kind: OpRemove, Dest: d.d, Seq: e.seq})
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
			s.ops = append(s.ops, StoreOp{Kind: OpAck, Dest: e.dest.d, Seq: e.seq, Sub: DurableSub{Key: p.durable.Key}})
		}
		return
	}
	s.ops = append(s.ops, StoreOp{Kind: OpRemove, Dest: e.dest.d, Seq: e.seq})
}

// findInflight returns the index of delivery id in p.inflight, or -1.
func (p *part) findInflight(id uint64) int {
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
				s.e.shards[i].mailbox(command{op: opKick, sub: p.sub})
			}
		}
	}
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
		e.redeliveries++
		if max := e.dest.policy.MaxRedeliveries; max >= 0 && int(e.redeliveries) > max {
			if cause == "" {
				cause = "java.lang.Throwable: Delivery[" + itoa(int64(e.redeliveries)) + "] exceeds redelivery policy limit:" + itoa(int64(max))
			}
			s.deadLetterEntry(p, e, cause)
		} else {
			s.requeue(p, e)
		}
	case NackRelease:
		s.requeue(p, e)
	case NackExpired:
		d := e.dest
		d.expired++
		s.expiredAdvisory(d, e.msg)
		s.dropStored(p, e)
		s.deadLetter(d, e.msg, e.redeliveries, expiryCause(e.msg), true)
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

// deadLetterEntry moves an in-flight or pending entry to its DLQ.
func (s *shard) deadLetterEntry(p *part, e *entry, cause string) {
	s.dropStored(p, e)
	d := e.dest
	s.deadLetter(d, e.msg, e.redeliveries, cause, false)
	s.freeEntry(e)
}

// deadLetter sends a copy of m to d's dead-letter destination as
// RegionBroker.sendToDeadLetterQueue does, or drops it when the strategy
// says so (non-persistent, expired with processExpired=false, discarding, or
// already on its DLQ).
func (s *shard) deadLetter(d *destination, m *message.Message, redeliveries int32, cause string, expired bool) {
	pol := &d.policy.DeadLetter
	if (!m.Persistent && !pol.ProcessNonPersistent) || (expired && !pol.ProcessExpired) {
		return
	}
	target, ok := pol.Target(d.d)
	if !ok || target == d.d {
		return // discarding strategy, or the loop guard: never re-DLQ a DLQ message
	}
	c := m.Clone()
	c.OriginalDestination = m.Destination
	c.Destination = target
	c.RedeliveryCounter = 0
	if pol.Expiration > 0 {
		c.Expiration = s.now + pol.Expiration
	} else if m.Expiration != 0 {
		c.Props.Set("originalExpiration", message.LongValue(m.Expiration))
		c.Expiration = 0
	}
	if !m.Persistent {
		c.Persistent = true
		c.Props.Set("originalDeliveryMode", message.StringValue("NON_PERSISTENT"))
	}
	if cause != "" {
		c.Props.Set("dlqDeliveryFailureCause", message.StringValue(cause))
	}
	_ = redeliveries
	if ts := s.e.shardFor(target); ts == s {
		if err := s.send(c); err != nil {
			s.log.Warn("dead letter dropped", "dest", target.String(), "msg_id", m.ID, "err", err)
		}
	} else {
		ts.mailbox(command{op: opInternal, msg: c})
	}
	s.messageCopyAdvisory(AdvisoryPrefix+"MessageDLQd."+d.d.Type.String()+"."+d.d.Name, m)
}

// expireEntry expires a queue entry that is no longer pending. A spilled
// entry's message is read for the advisory and the DLQ; one that cannot be
// read is expired without them.
func (s *shard) expireEntry(e *entry) {
	d := e.dest
	m := s.msgOf(e)
	d.expired++
	if m != nil {
		s.expiredAdvisory(d, m)
	}
	d.dequeued++
	s.dropStored(nil, e)
	if m != nil {
		s.deadLetter(d, m, e.redeliveries, expiryCause(m), true)
	}
	s.freeEntry(e)
}

// expireTopicEntry expires a message waiting for a topic subscription. The
// DLQ gets one copy per durable subscription that held it, as in ActiveMQ.
func (s *shard) expireTopicEntry(p *part, e *entry) {
	d := e.dest
	m := s.msgOf(e)
	d.expired++
	if m != nil {
		s.expiredAdvisory(d, m)
	}
	s.dropStored(p, e)
	if p.durable != nil && m != nil {
		s.deadLetter(d, m, e.redeliveries, expiryCause(m), true)
	}
	s.freeEntry(e)
}

// tick runs the periodic work that is due: expiry sweeps and the removal
// of durable subscriptions offline for too long.
func (s *shard) tick() {
	if len(s.blocked) > 0 {
		s.timeoutBlocked()
		s.retryBlocked()
	}
	if t := s.e.opts.OfflineDurableSubscriberTimeout; t > 0 && s.now >= s.nextDurableCheck {
		s.nextDurableCheck = s.now + s.e.opts.OfflineDurableSubscriberTaskSchedule.Milliseconds()
		s.expireDurables(t.Milliseconds())
	}
	for _, d := range s.dests {
		if d.policy.ExpireMessagesPeriod <= 0 || s.now < d.nextSweep {
			continue
		}
		d.nextSweep = s.now + d.policy.ExpireMessagesPeriod.Milliseconds()
		s.sweep(d)
	}
	s.fireJobs() // scheduled messages due (the timer fires them too: scheduler.go)
	s.housekeep()
}

// sweep expires the pending messages of d that are past their expiration.
func (s *shard) sweep(d *destination) {
	now := s.now
	if !d.d.Type.IsTopic() {
		d.pending.filter(func(e *entry) bool {
			if !e.expired(now) {
				return false
			}
			s.expireEntry(e)
			return true
		})
		return
	}
	for _, p := range d.subs {
		p.pending.filter(func(e *entry) bool {
			if e.dest != d || !e.expired(now) {
				return false
			}
			s.expireTopicEntry(p, e)
			return true
		})
	}
}

// removeDest deletes a destination: its messages, and its consumers'
// claims on it.
func (s *shard) removeDest(d *destination) {
	for _, p := range append(append([]*part(nil), d.consumers...), d.subs...) {
		for i, x := range p.dests {
			if x == d {
				p.dests = append(p.dests[:i], p.dests[i+1:]...)
				break
			}
		}
		delete(p.marks, d)
		keep := p.inflight[:0]
		for _, e := range p.inflight {
			if e.dest == d {
				s.freeEntry(e)
				continue
			}
			keep = append(keep, e)
		}
		clear(p.inflight[len(keep):])
		p.inflight = keep
		p.pending.filter(func(e *entry) bool {
			if e.dest == d {
				s.freeEntry(e)
				return true
			}
			return false
		})
	}
	d.pending.filter(func(e *entry) bool { s.freeEntry(e); return true })
	for _, p := range d.blocked {
		s.complete(p.comp, p.token, fmt.Errorf("%w: %s was removed", ErrBadDestination, d.d))
	}
	if d.blocked != nil {
		d.blocked = nil
		s.unblock(d)
	}
	s.dropRetained(d)
	if s.store != nil {
		s.ops = append(s.ops, StoreOp{Kind: OpRemoveDest, Dest: d.d})
	}
	delete(s.dests, d.d)
	s.e.registerVirtualQueue(d.d, false)
	s.destinationAdvisory(d.d, false)
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

var _ = time.Second

// expireDurables removes the durable subscriptions of this shard that have
// been offline for at least timeout ms, and the messages kept for them
// (ActiveMQ's offlineDurableSubscriberTimeout task).
func (s *shard) expireDurables(timeout int64) {
	for key, p := range s.durables {
		if p.sub != nil || s.now-p.offlineSince < timeout {
			continue
		}
		s.log.Info("offline durable subscription removed", "sub", key.String(), "offline_ms", s.now-p.offlineSince)
		s.removeDurable(key)
		e := s.e
		e.mu.Lock()
		if r := e.durables[key]; r != nil && r.active == nil {
			delete(e.durables, key)
		}
		e.mu.Unlock()
	}
}

// compositeFor looks a destination's configured composite up once and
// remembers the answer (the config does not change while running).
func (s *shard) compositeFor(d *destination) *Composite {
	if s.e.opts.CompositeFor == nil {
		return nil
	}
	if !d.compositeChecked {
		d.composite = s.e.opts.CompositeFor(d.d)
		d.compositeChecked = true
	}
	return d.composite
}
