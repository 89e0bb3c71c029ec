package engine

import "wharf/engine/message"

// The shard-side halves of the operator's commands (admin.go): each runs
// on the destination's shard between two turns' commands, and leaves its
// answer in its payload for the caller to read once the reply came.

// snapshotCmd collects a shard's destinations and counters (AllStats);
// producers are the registered producers per destination, counted by the
// caller.
type snapshotCmd struct {
	producers map[message.Destination]int
	out       []DestinationSnapshot
}

func (s *shard) snapshot(c *snapshotCmd) {
	c.out = make([]DestinationSnapshot, 0, len(s.dests))
	for d, dst := range s.dests {
		st := dst.stats()
		limit := dst.policy.MemoryLimit
		if limit == 0 {
			limit = s.e.memLimit.Load()
		}
		st.MemoryPercentUsage = percent(st.MemoryUsage, limit)
		c.out = append(c.out, DestinationSnapshot{Destination: d, Stats: st, Producers: c.producers[d]})
	}
}

// adminBrowseCmd asks for up to max messages of queue dest that pass
// filter, dispatched or not, in queue order; found says the queue exists.
type adminBrowseCmd struct {
	dest   message.Destination
	filter MessageFilter
	max    int
	out    []QueuedMessage
	found  bool
}

func (s *shard) adminBrowse(c *adminBrowseCmd) {
	q := s.dests[c.dest]
	if q == nil {
		return
	}
	c.found = true
	var held []*entry
	for _, p := range q.consumers {
		for _, x := range p.inflight {
			if x.dest == q {
				held = append(held, x)
			}
		}
	}
	for _, x := range mergeBySeq(held, &q.pending) {
		if len(c.out) >= c.max {
			return
		}
		m := s.msgOf(x)
		if m == nil || x.expired(s.now) || (c.filter != nil && !c.filter(m, x.redeliveries)) {
			continue
		}
		c.out = append(c.out, QueuedMessage{Msg: m, Redeliveries: x.redeliveries, InFlight: x.id != 0})
	}
}

// adminRemoveCmd drops up to max (all when negative) undispatched
// messages of queue dest that pass filter or, when ids is set, whose
// message ids it counts (one removal per count: the originals of a
// move), looking no further once left, the sum of those counts, is
// spent; n is how many went, found says the queue exists. Each counts as
// dequeued, as ActiveMQ's purge acknowledges what it removes.
type adminRemoveCmd struct {
	dest   message.Destination
	filter MessageFilter
	ids    map[string]int
	left   int
	max    int
	n      int
	found  bool
}

func (s *shard) adminRemove(c *adminRemoveCmd) {
	q := s.dests[c.dest]
	if q == nil {
		return
	}
	c.found = true
	done := func() bool { return c.max >= 0 && c.n >= c.max || c.ids != nil && c.left <= 0 }
	if done() {
		return
	}
	q.pending.filterUntil(func(x *entry) (bool, bool) {
		if c.filter != nil || c.ids != nil {
			m := s.msgOf(x)
			switch {
			case m == nil:
				return false, false
			case c.ids != nil:
				if c.ids[m.ID] <= 0 {
					return false, false
				}
				c.ids[m.ID]--
				c.left--
			case !c.filter(m, x.redeliveries):
				return false, false
			}
		}
		q.dequeued++
		s.dropStored(nil, x)
		s.freeEntry(x)
		c.n++
		return true, done()
	})
}

// adminCopyCmd makes copies of up to max (all when negative)
// undispatched messages of queue dest that pass filter, each addressed to
// the destination target names (resendCopy); found says the queue exists
// and queued how many undispatched messages it held. The sequence
// numbers of the messages filter turned down go in skip, and those skip
// already holds are passed over unread: a move in chunks (relocate) reads
// each message it leaves behind once.
type adminCopyCmd struct {
	dest   message.Destination
	filter MessageFilter
	max    int
	target func(*message.Message) message.Destination
	skip   map[uint64]bool
	copies []*message.Message
	queued int
	found  bool
}

func (s *shard) adminCopy(c *adminCopyCmd) {
	q := s.dests[c.dest]
	if q == nil {
		return
	}
	c.found = true
	c.queued = q.pending.len()
	q.pending.each(func(x *entry) bool {
		if c.max >= 0 && len(c.copies) >= c.max {
			return false
		}
		if c.skip[x.seq] {
			return true
		}
		m := s.msgOf(x)
		switch {
		case m == nil:
		case c.filter == nil || c.filter(m, x.redeliveries):
			c.copies = append(c.copies, resendCopy(m, c.target(m)))
		case c.skip != nil:
			c.skip[x.seq] = true
		}
		return true
	})
}

// adminPauseCmd pauses (pause set) or resumes the dispatch of a queue;
// found reports whether it exists.
type adminPauseCmd struct {
	dest  message.Destination
	pause bool
	found bool
}

func (s *shard) adminPause(c *adminPauseCmd) {
	q := s.dests[c.dest]
	if q == nil {
		return
	}
	c.found = true
	if q.paused == c.pause {
		return
	}
	q.paused = c.pause
	s.log.Info("queue dispatch "+map[bool]string{true: "paused", false: "resumed"}[c.pause], "dest", c.dest.String())
	if !c.pause {
		s.dispatchQueue(q)
	}
}

// adminPolicyCmd changes what change sets of a destination's policy;
// found reports whether it exists.
type adminPolicyCmd struct {
	dest   message.Destination
	change PolicyChange
	found  bool
}

func (s *shard) adminPolicy(c *adminPolicyCmd) {
	d := s.dests[c.dest]
	if d == nil {
		return
	}
	c.found = true
	ch := c.change
	if ch.MaxPageSize != nil {
		d.policy.MaxPageSize = *ch.MaxPageSize
	}
	if ch.ProducerFlowControl != nil {
		d.policy.ProducerFlowControl = *ch.ProducerFlowControl
	}
	if ch.MemoryLimit != nil {
		d.policy.MemoryLimit = *ch.MemoryLimit
	}
	s.log.Info("destination policy changed", "dest", c.dest.String(), "change", ch.String())
	// A larger limit, or flow control off, may let parked sends in (at
	// the end of this turn); a larger page may dispatch more.
	s.freed = true
	if !d.d.Type.IsTopic() {
		s.dispatchQueue(d)
	}
}

// inflightCmd adds up, per subscription, what its parts hold and count.
type inflightCmd struct{ n map[*Subscription]SubCounters }

// durableCountsCmd collects, per durable subscription with a part on the
// shard, what it holds and counts (DurableSubsStats).
type durableCountsCmd struct{ n map[SubKey]SubCounters }

func (s *shard) durableCounts(c *durableCountsCmd) {
	c.n = make(map[SubKey]SubCounters, len(s.durables))
	for k, p := range s.durables {
		c.n[k] = p.counts()
	}
}

// SubCounters are a subscription's sizes and counters, as ActiveMQ's
// SubscriptionViewMBean names them.
type SubCounters struct {
	// Pending: messages kept for it, not yet dispatched
	// (PendingQueueSize; a queue's wait on the queue, so 0).
	Pending int
	// Dispatched: dispatched and not yet acknowledged
	// (DispatchedQueueSize).
	Dispatched int
	// EnqueueCounter: messages given to it (a topic's when they matched,
	// a queue's when dispatched); DispatchedCounter: dispatched;
	// DequeueCounter: acknowledged. Since the broker started; 0 with
	// Options.DisableStatistics.
	EnqueueCounter, DispatchedCounter, DequeueCounter int64
}

func (a SubCounters) plus(b SubCounters) SubCounters {
	return SubCounters{a.Pending + b.Pending, a.Dispatched + b.Dispatched,
		a.EnqueueCounter + b.EnqueueCounter, a.DispatchedCounter + b.DispatchedCounter, a.DequeueCounter + b.DequeueCounter}
}

func (p *part) counts() SubCounters {
	return SubCounters{Pending: p.pending.len(), Dispatched: len(p.inflight),
		EnqueueCounter: p.enqueued, DispatchedCounter: p.dispatched, DequeueCounter: p.dequeued}
}

// adminSendCmd sends the copies of a move, copy or retry; failed collects
// the message ids of those the shard refused, whose originals stay.
type adminSendCmd struct {
	msgs   []*message.Message
	failed []string
}

func (s *shard) adminSend(c *adminSendCmd) {
	for _, m := range c.msgs {
		if err := s.send(m); err != nil {
			s.log.Warn("admin copy refused, the original stays", "dest", m.Destination.String(), "msg_id", m.ID, "err", err)
			c.failed = append(c.failed, m.ID)
		}
	}
}

// jobListCmd collects a shard's scheduled jobs (ScheduledJobList).
type jobListCmd struct{ out []Job }

func (s *shard) jobList(c *jobListCmd) {
	if s.sched == nil {
		return
	}
	for _, j := range s.sched.jobs {
		c.out = append(c.out, j.Job)
	}
}

// jobRemoveCmd removes scheduled job id if the shard holds it; removed
// says it did.
type jobRemoveCmd struct {
	id      string
	removed bool
}

func (s *shard) jobRemove(c *jobRemoveCmd) {
	if s.sched == nil {
		return
	}
	if j := s.sched.jobs[c.id]; j != nil {
		s.dropJob(j, true)
		s.armScheduler()
		c.removed = true
	}
}
