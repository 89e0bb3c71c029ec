package engine

import (
	"wharf/engine/message"
)

// Routing: where a sent message goes. send and sendTo take a message from
// a producer (or the broker itself) into its destination: the scheduler
// first, expiry on arrival, a configured composite's forwards, retained
// messages and virtual-topic copies for topics (retained.go, virtual.go),
// then the queue's pending list (enqueue) or the matching topic
// subscriptions (fanOut), from which dispatch.go hands it on. forward
// carries a copy to a destination of any shard.

// send accepts a message into its destination.
func (s *shard) send(m *message.Message) error { return s.sendTo(m, nil) }

// sendTo is send; a non-nil target limits a topic message to that one
// subscription (advisory replay, ActiveMQ's TargetConsumerId).
//
// The client whose send this is, if any, is taken from s.subj (sendAs) for
// the forwards of a configured composite destination; everything sendTo
// itself sends (dead letters, advisories, scheduler replies, virtual topic
// copies) runs with no subject, as the broker's own.
func (s *shard) sendTo(m *message.Message, target *Subscription) error {
	subj := s.subj
	s.subj = nil
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
		s.deadLetter(d, m, expiryCause(m), true)
		return nil
	}
	if vc := s.compositeFor(d); vc != nil {
		// A configured composite destination: copies to its forwards
		// (filtered by their selectors), and the original only when it is
		// not forward-only.
		for _, f := range vc.Forwards {
			if f.Selector == nil || f.Selector.Matches(m, m.RedeliveryCounter) {
				s.forward(m, f.Destination, subj)
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
		// Internal copies: VirtualTopicInterceptor sends to the consumer
		// queues that exist, below every check.
		for _, q := range s.e.virtualCopies(d.d) {
			s.forward(m, q, nil)
		}
		for _, q := range s.e.shareCopies(d.d) {
			s.forward(m, q, nil)
		}
	}
	if d.policy.SendAdvisoryIfNoConsumers {
		s.noConsumerAdvisory(d, m)
	}
	d.enqueued++
	// Temporary destinations die with their connection: ActiveMQ keeps
	// their messages in memory only.
	stored := m.Persistent && s.store != nil && !d.d.Type.IsTemp()
	seq := d.nextSeq
	d.nextSeq++
	if !d.d.Type.IsTopic() {
		s.enqueue(d, m, seq, stored)
		return nil
	}
	s.fanOut(d, m, seq, stored, target)
	return nil
}

// noConsumerAdvisory sends a copy of m to ActiveMQ.Advisory.NoConsumer.*
// when d, whose policy asks for it, has no one to take it.
func (s *shard) noConsumerAdvisory(d *destination, m *message.Message) {
	// ActiveMQ (BaseDestination.onMessageWithNoConsumers) does this for
	// non-persistent messages only, and sends a plain copy of the
	// message itself, body, id and properties kept, to the NoConsumer
	// topic: no Advisory type, no origin properties, no JSON command.
	if m.Advisory != nil || m.Persistent || len(d.consumers) > 0 || len(d.subs) > 0 || !s.e.advisories() || IsAdvisory(d.d) {
		return
	}
	c := m.Clone()
	c.Destination = message.TopicDest(AdvisoryPrefix + "NoConsumer." + queueOrTopic(d.d) + "." + d.d.Name)
	s.fire(c)
}

// enqueue puts queue message m, numbered seq, on d's pending list, with
// its store add when stored, and dispatches (dispatch.go).
func (s *shard) enqueue(d *destination, m *message.Message, seq uint64, stored bool) {
	e := s.newEntry(seq, m, d)
	if s.keepStats {
		d.msgSize.add(e.size)
	}
	op := -1
	if stored {
		s.setStored(e)
		s.auditNote(d, m.ID)
		op = len(s.out.ops)
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpAdd, Dest: d.d, Seq: seq, Msg: m})
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
		s.out.ops[op].dispatched = true
	}
}

// fanOut hands topic message m, numbered seq, to the subscriptions of d
// that match it (only target's, when set): stored once for the durable
// ones, then one entry per subscription, dispatched as credit allows.
func (s *shard) fanOut(d *destination, m *message.Message, seq uint64, stored bool, target *Subscription) {
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
		s.auditNote(d, m.ID)
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpAdd, Dest: d.d, Seq: seq, Msg: m, Subs: keys})
	}
	if s.keepStats {
		d.msgSize.add(int64(m.Size()))
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
		if s.keepStats {
			p.enqueued++
		}
		s.dispatchPart(p)
		if lim := d.policy.PendingMessageLimit; lim > 0 && p.durable == nil {
			s.discardOldest(d, p, lim)
		}
		matched[i] = nil
	}
	s.spillDone(enc)
	s.scratch = matched[:0]
}

// discardOldest keeps a slow non-durable subscriber p of d at most lim
// messages beyond its prefetch: the oldest go (ActiveMQ's
// constantPendingMessageLimitStrategy).
func (s *shard) discardOldest(d *destination, p *part, lim int) {
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
		if !p.slow {
			// Once per subscriber, in TopicSubscription's words.
			p.slow = true
			s.log.Warn("consumer appears to be slow: pending message limit reached, oldest messages discarded",
				"dest", d.d.String(), "sub", p.sub.id, "consumer_id", p.sub.consumerID(), "limit", lim)
			if d.policy.AdvisoryForSlowConsumers {
				s.fire(s.e.newAdvisory(AdvisoryPrefix+"SlowConsumer."+d.d.Type.String()+"."+d.d.Name,
					consumerInfo(p.sub), str("consumerId", p.sub.consumerID())))
			}
		}
		s.freeEntry(old)
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

// forward sends a copy of m to d (on whichever shard owns it) with
// OriginalDestination set, as virtual destinations do. subj, when not nil,
// is the client whose send this copy continues: creating d needs its admin
// right (checked before the send by Conn.checkForwards, and again here in
// case d went away since).
func (s *shard) forward(m *message.Message, d message.Destination, subj *Subject) {
	c := m.Clone()
	c.Original = m.Original
	c.Destination = d
	if c.OriginalDestination.IsZero() {
		c.OriginalDestination = m.Destination
	}
	if ts := s.e.shardFor(d); ts == s {
		err := s.mayCreate(subj, d)
		if err == nil {
			err = s.send(c)
		}
		if err != nil {
			s.log.Warn("forwarded message dropped", "dest", d.String(), "msg_id", m.ID, "err", err)
		}
	} else {
		s.forwardTo(ts, command{op: opForward, msg: c, subj: subj})
	}
}

// mayCreate checks, when d does not exist yet, that subj may create it:
// ActiveMQ's authorization asks for admin rights on a destination that a
// send or subscribe would create.
// A nil subject is the broker's own: never checked.
func (s *shard) mayCreate(subj *Subject, d message.Destination) error {
	if subj == nil || s.dests[d] != nil || d.Type.IsTemp() {
		return nil
	}
	return s.e.opts.Authorizer.Authorize(subj, ActionAdmin, d)
}

// sendAs sends a client's message whose own destination was checked: subj
// is kept in s.subj while it runs, so that the forwards of a configured
// composite destination are checked as the client's (shard.forward).
func (s *shard) sendAs(subj *Subject, m *message.Message) error {
	s.subj = subj // taken by sendTo
	return s.send(m)
}
