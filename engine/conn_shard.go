package engine

// The shard side of Conn (conn.go): what the shard does for a subscribe, a
// close, an unsubscribe and a browse. Everything here runs on the shard
// goroutine.

// addPart registers sub in this shard. durable is the stored subscription
// for durable ones (whose part may exist already, offline).
func (s *shard) addPart(sub *Subscription, durable *DurableSub) {
	var p *part
	if durable != nil {
		p = s.durables[durable.Key]
	}
	if p == nil {
		p = &part{spec: sub.spec, sel: sub.sel, durable: durable}
		if durable != nil {
			s.durables[durable.Key] = p
			s.attachPattern(p)
		}
	}
	p.sub = sub
	p.spec = sub.spec
	p.sel = sub.sel
	p.subj = sub.conn.subject
	s.parts[sub] = p
	if durable == nil {
		s.attachPattern(p)
	}
	if sub.spec.Retroactive {
		s.replayRetained(p)
	}
	s.dispatchPart(p)
}

// attachPattern attaches p to the destinations its pattern names, creating
// the destination when it is a plain name.
func (s *shard) attachPattern(p *part) {
	d := p.spec.Destination
	if !d.IsComposite() {
		if d.IsWildcard() {
			s.wild = append(s.wild, p)
			for _, x := range s.dests {
				if d.Matches(x.d) && s.readable(p, x.d) {
					s.attach(p, x)
				}
			}
			return
		}
		if x := s.dest(d, !d.Type.IsTemp()); x != nil {
			s.attach(p, x)
		}
		return
	}
	// A composite: its plain elements are attached in the shard that owns
	// them, its patterns everywhere, now and as destinations appear.
	wildAdded := false
	for _, el := range d.Elements() {
		if el.IsWildcard() {
			if !wildAdded {
				s.wild = append(s.wild, p)
				wildAdded = true
			}
			for _, x := range s.dests {
				if el.Matches(x.d) && !p.attachedTo(x) && s.readable(p, x.d) {
					s.attach(p, x)
				}
			}
			continue
		}
		if s.e.shardFor(el) != s {
			continue
		}
		// A plain member was checked for read (and, if it is created
		// here, admin) by Subscribe; a composite with a pattern in it is
		// a wildcard subscription, which skips what it may not read.
		if x := s.dest(el, !el.Type.IsTemp()); x != nil && !p.attachedTo(x) && s.readable(p, x.d) {
			s.attach(p, x)
		}
	}
}

func (p *part) attachedTo(d *destination) bool {
	for _, x := range p.dests {
		if x == d {
			return true
		}
	}
	return false
}

func (s *shard) detachPattern(p *part) {
	for _, d := range p.dests {
		s.detach(p, d)
	}
	p.dests = nil
	for i, w := range s.wild {
		if w == p {
			s.wild = append(s.wild[:i], s.wild[i+1:]...)
			break
		}
	}
}

// closePart removes sub from this shard: in-flight queue messages go back
// to their queues with the redelivery counter incremented, a non-durable
// topic subscription's backlog is dropped, a durable one keeps it offline.
func (s *shard) closePart(sub *Subscription) {
	p := s.parts[sub]
	if p == nil {
		return
	}
	delete(s.parts, sub)
	touched := s.scratchDests(p)
	for _, e := range p.inflight {
		e.dest.inflight--
		e.redeliveries++
		e.tx = nil
		e.id = 0
		if e.dest.d.Type.IsTopic() {
			if p.durable != nil {
				p.pending.insertSorted(e)
			} else {
				s.freeEntry(e)
			}
			continue
		}
		e.dest.pending.insertSorted(e)
	}
	clear(p.inflight)
	p.inflight = p.inflight[:0]
	if p.durable != nil {
		p.sub = nil
		p.offlineSince = s.now
	} else {
		p.pending.filter(func(e *entry) bool { s.freeEntry(e); return true })
		s.detachPattern(p)
	}
	for _, d := range touched {
		if !d.d.Type.IsTopic() {
			s.dispatchQueue(d)
		}
	}
}

func (s *shard) scratchDests(p *part) []*destination {
	return append([]*destination(nil), p.dests...)
}

func (s *shard) removeDurable(key SubKey) {
	p := s.durables[key]
	if p == nil {
		return
	}
	delete(s.durables, key)
	for _, e := range p.inflight {
		e.dest.inflight--
		s.freeEntry(e)
	}
	p.inflight = nil
	p.pending.filter(func(e *entry) bool { s.freeEntry(e); return true })
	s.detachPattern(p)
	if s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemoveSub, Dest: p.spec.Destination, Sub: *p.durable})
	}
}

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

// browse delivers a snapshot of the matching queues' messages, then the
// end marker once every shard the browser spans has finished.
func (s *shard) browse(sub *Subscription) {
	d := sub.spec.Destination
	send := func(q *destination) {
		emit := func(e *entry) bool {
			if sub.closed.Load() {
				return false
			}
			if e.expired(s.now) {
				return true
			}
			m := e.msg
			if m == nil {
				// Spilled: read for the browser, left where it is.
				if m = s.peek(e); m == nil {
					return true
				}
			}
			if sub.matches(m, e.redeliveries) {
				s.handOver(sub, Delivery{Sub: sub, ID: sub.nextID.Add(1)<<8 | uint64(s.idx), Msg: m, Redeliveries: e.redeliveries})
			}
			return true
		}
		// ActiveMQ's browser sees what the queue holds, dispatched or not,
		// in queue order.
		var held []*entry
		for _, c := range q.consumers {
			for _, e := range c.inflight {
				if e.dest == q {
					held = append(held, e)
				}
			}
		}
		for _, e := range mergeBySeq(held, &q.pending) {
			if !emit(e) {
				return
			}
		}
	}
	if d.IsWildcard() {
		for _, q := range s.dests {
			if d.Matches(q.d) && s.browsable(sub, q.d) {
				send(q)
			}
		}
	} else if q := s.dests[d]; q != nil {
		send(q)
	}
	if sub.browsing.Add(-1) == 0 && !sub.closed.Load() {
		s.handOver(sub, Delivery{Sub: sub, BrowseEnd: true})
	}
}

func mergeBySeq(held []*entry, q *deque) []*entry {
	out := make([]*entry, 0, len(held)+q.len())
	out = append(out, held...)
	q.each(func(e *entry) bool { out = append(out, e); return true })
	// Insertion sort: held is short (bounded by prefetch) and both halves
	// are nearly sorted already.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j-1].seq > out[j].seq; j-- {
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// subscribe attaches a subscription's part here (opSubscribe).
func (s *shard) subscribe(x *subscribeCmd) error {
	d := x.sub.spec.Destination
	if x.checkTemp && s.dests[d] == nil {
		return TempGoneError(d)
	}
	if x.checkCreate {
		if err := s.mayCreate(x.sub.conn.subject, d); err != nil {
			return err
		}
	}
	if x.storeSub && s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpAddSub, Dest: x.durable.Destination, Sub: *x.durable})
	}
	s.addPart(x.sub, x.durable)
	return nil
}

// countRedelivery raises the redelivery counter of a delivery the client
// redelivers itself (Conn.CountRedelivery).
func (s *shard) countRedelivery(sub *Subscription, id uint64) {
	if p := s.parts[sub]; p != nil {
		if i := p.findInflight(id); i >= 0 {
			p.inflight[i].redeliveries++
		}
	}
}

// checkCreate answers Conn.checkCreate for the destinations this shard
// owns.
func (s *shard) checkCreate(x *checkCreateCmd) {
	x.exists = make([]bool, len(x.ask))
	x.errs = make([]error, len(x.ask))
	for i, d := range x.ask {
		if s.dests[d] != nil {
			x.exists[i] = true
			continue
		}
		x.errs[i] = s.mayCreate(x.subj, d)
	}
}

// removeDestCmd deletes a destination, asking for admin first when the
// command names a subject (Conn.RemoveDestination).
func (s *shard) removeDestCmd(x *removeDestCmd) {
	d := s.dests[x.dest]
	if d == nil {
		return
	}
	if x.check {
		if x.denied = s.e.opts.Authorizer.Authorize(x.subj, ActionAdmin, x.dest); x.denied != nil {
			return
		}
	}
	s.removeDest(d)
}
