package engine

import (
	"fmt"

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

	// audit: the highest producer sequence id stored per producer id
	// (audit.go); nil until a persistent message is stored. window: the
	// cursor audit per producer id (queues; nil until used).
	audit  map[string]int64
	window map[string]*auditWindow

	composite        *Composite // configured composite intercepting sends
	compositeChecked bool

	enqueued, dequeued, dispatched, expired, inflight, discarded int64
	// Timing and size statistics (Options.DisableStatistics turns them
	// off): enqueue-to-dispatch time and the size of each message sent.
	enqueueTime, msgSize Statistic

	mem          int64    // bytes of the messages held (memory usage)
	temp         int64    // bytes of its messages spilled to the temp store (spill.go)
	held         int64    // messages a prepared XA transaction acknowledged (tx.go), still stored
	blocked      []parked // producer sends waiting for room, in arrival order
	blockedSends int64
	lastFlowWarn int64 // ms
	// paused: a queue's dispatch is paused by an operator (PauseDispatch).
	paused bool
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
		EnqueueTime:    d.enqueueTime,
		MessageSize:    d.msgSize,
		Paused:         d.paused,
		Policy: PolicyView{
			MaxPageSize:         d.policy.MaxPageSize,
			ProducerFlowControl: d.policy.ProducerFlowControl,
		},
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
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpAddDest, Dest: d})
	}
	// AbstractRegion.addSubscriptionsForDestination: each wildcard
	// subscriber is checked for read on the new destination, and skips it
	// when refused.
	for _, p := range s.wild {
		if p.spec.Destination.Matches(d) && !p.attachedTo(x) && s.readable(p, d) {
			s.attach(p, x)
		}
	}
	s.e.registerVirtualQueue(d, true)
	s.queueDemand(d, true) // virtualsubs.go
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
		s.complete(opSend, p.comp, p.token, fmt.Errorf("%w: %s was removed", ErrBadDestination, d.d))
	}
	if d.blocked != nil {
		d.blocked = nil
		s.unblock(d)
	}
	s.dropRetained(d)
	if s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemoveDest, Dest: d.d})
	}
	delete(s.dests, d.d)
	s.e.registerVirtualQueue(d.d, false)
	s.queueDemand(d.d, false)
	s.destinationAdvisory(d.d, false)
}

// stats answers Engine.Stats.
func (s *shard) stats(x *statsCmd) {
	d := s.dests[x.dest]
	if d == nil {
		return
	}
	x.st = d.stats()
	limit := d.policy.MemoryLimit
	if limit == 0 {
		limit = s.e.memLimit.Load()
	}
	x.st.MemoryPercentUsage = percent(x.st.MemoryUsage, limit)
}
