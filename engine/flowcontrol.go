package engine

import (
	"errors"
	"fmt"
	"time"

	"wharf/engine/message"
)

// ErrResourceAllocation is wrapped by sends refused for lack of room
// (javax.jms.ResourceAllocationException in ActiveMQ).
var ErrResourceAllocation = errors.New("engine: resource allocation")

// Limits are the broker-wide <systemUsage> limits and what a producer
// meets when they are reached.
type Limits struct {
	// MemoryLimit bounds the bytes of messages held in memory; 0 is
	// unlimited (ActiveMQ: 1 GiB by default, the config supplies it).
	MemoryLimit int64
	// StoreLimit bounds the bytes of persistent messages held by the store.
	StoreLimit int64
	// TempLimit bounds the bytes of non-persistent messages spilled to the
	// temp store (spill.go); 0 is unlimited. A non-persistent send that
	// could spill meets flow control when it is reached.
	TempLimit int64
	// SendFailIfNoSpace fails a send at once instead of blocking it.
	SendFailIfNoSpace bool
	// SendFailIfNoSpaceAfterTimeout fails a blocked send after this long;
	// 0 blocks until there is room.
	SendFailIfNoSpaceAfterTimeout time.Duration
	// BlockedProducerWarningInterval rate-limits the warning a blocked
	// destination logs when its policy sets no interval (30 s).
	BlockedProducerWarningInterval time.Duration
}

// parked is a producer's send held back by flow control.
type parked struct {
	msg      *message.Message
	comp     Completion
	token    uint64
	deadline int64    // ms; 0 waits for room however long it takes
	since    int64    // ms: when it was parked
	subj     *Subject // the sender, for its composite forwards (shard.sendAs)
}

// room reports why d cannot take a message from a producer now, or "" when
// it can. Only producer sends are checked: dead-letter moves and other
// internal forwards always go through, as ActiveMQ exempts them.
func (s *shard) room(d *destination, m *message.Message) string {
	if !d.policy.ProducerFlowControl {
		return ""
	}
	if s.e.opts.Temp != nil && s.spillable(d, m) {
		// It is paged out when memory runs short, so only the usage that
		// then holds it holds it back: the store's for a persistent
		// message (Queue.checkUsage: "Persistent store is Full"), the
		// temp store's for the others ("Temp Store is Full").
		if m.Persistent && s.store != nil {
			if s.e.storeLimit.Load() > 0 && s.e.storeUsed.Load() >= s.e.storeLimit.Load() {
				return "store"
			}
			if !d.d.Type.IsTopic() {
				return ""
			}
			// A topic's copies for non-durable subscribers are not
			// stored: they page out to the temp store.
		}
		if s.tempFull() {
			return "temp"
		}
		return ""
	}
	switch {
	case d.policy.MemoryLimit > 0 && d.mem >= d.policy.MemoryLimit:
		return "memory"
	case s.e.memLimit.Load() > 0 && s.e.memUsed.Load() >= s.e.memLimit.Load():
		return "memory"
	case m.Persistent && s.store != nil && s.e.storeLimit.Load() > 0 && s.e.storeUsed.Load() >= s.e.storeLimit.Load():
		return "store"
	}
	return ""
}

// admit applies producer flow control to a send: it returns true when the
// send was parked (its completion is withheld until there is room) or
// refused (completed with ErrResourceAllocation). A parked producer holds up
// only its own sends to this destination: consumers, other destinations and
// other connections carry on, because nothing here waits.
func (s *shard) admit(c command) bool {
	d := s.dests[c.msg.Destination]
	if d == nil {
		return false // created on send: empty, so there is room
	}
	why := ""
	if len(d.blocked) == 0 {
		if why = s.room(d, c.msg); why == "" {
			return false
		}
	}
	l := &s.e.opts.Limits
	if l.SendFailIfNoSpace {
		s.complete(c.op, c.comp, c.token, s.fullError(d, why))
		return true
	}
	p := parked{msg: c.msg, comp: c.comp, token: c.token, subj: c.subj, since: s.now}
	if l.SendFailIfNoSpaceAfterTimeout > 0 {
		p.deadline = s.now + l.SendFailIfNoSpaceAfterTimeout.Milliseconds()
	}
	d.blocked = append(d.blocked, p)
	d.blockedSends++
	if s.blocked == nil {
		s.blocked = map[*destination]struct{}{}
	}
	if len(s.blocked) == 0 {
		s.e.blockedShards.Add(1)
	}
	s.blocked[d] = struct{}{}
	s.warnBlocked(d, why)
	if d.policy.AdvisoryWhenFull && s.e.advisories() && !IsAdvisory(d.d) && len(d.blocked) == 1 {
		s.fire(s.e.newAdvisory(AdvisoryPrefix+"FULL."+d.d.Type.String()+"."+d.d.Name, nil,
			str("usageName", d.d.Name+":"+usageName(why))))
	}
	if d.policy.AdvisoryForFastProducers && s.e.advisories() && !IsAdvisory(d.d) && len(d.blocked) == 1 {
		s.fire(s.e.newAdvisory(AdvisoryPrefix+"FastProducer."+d.d.Type.String()+"."+d.d.Name,
			&message.Advisory{Command: "ProducerInfo", Fields: message.Properties{str("Destination", d.d.String())}}))
	}
	return true
}

func usageName(why string) string {
	switch why {
	case "store":
		return "Store"
	case "temp":
		return "Temp"
	}
	return "Memory"
}

// fullError is what a producer refused for lack of room gets.
func (s *shard) fullError(d *destination, why string) error {
	if why == "temp" {
		l := s.e.tempLimit.Load()
		return fmt.Errorf("%w: Usage Manager Temp Store is Full (%d%% of %d). Stopping producer to prevent flooding %s. See http://activemq.apache.org/producer-flow-control.html for more info",
			ErrResourceAllocation, percent(s.e.tempUsed.Load(), l), l, d.d)
	}
	return fmt.Errorf("%w: Usage Manager %s Limit reached on %s. See http://activemq.apache.org/producer-flow-control.html for more info",
		ErrResourceAllocation, usageName(why), d.d)
}

// warnBlocked logs ActiveMQ's flow-control warning, at most once per
// BlockedProducerWarningInterval per destination. The messages carry
// ActiveMQ's words so that what operators grep for still matches: the
// memory one is Queue.send's and Topic.send's warning, the store and temp
// ones are Queue.checkUsage's (logged by BaseDestination.waitForSpace).
func (s *shard) warnBlocked(d *destination, why string) {
	iv := d.policy.BlockedProducerWarningInterval
	if iv <= 0 {
		iv = s.e.opts.Limits.BlockedProducerWarningInterval
	}
	if iv <= 0 {
		iv = 30 * time.Second
	}
	if d.lastFlowWarn != 0 && s.now-d.lastFlowWarn < iv.Milliseconds() {
		return
	}
	d.lastFlowWarn = s.now
	limit, used := d.policy.MemoryLimit, d.mem
	if limit == 0 {
		limit, used = s.e.memLimit.Load(), s.e.memUsed.Load()
	}
	msg := flowWarnMemory
	switch why {
	case "store":
		msg, limit, used = flowWarnStore, s.e.storeLimit.Load(), s.e.storeUsed.Load()
	case "temp":
		msg, limit, used = flowWarnTemp, s.e.tempLimit.Load(), s.e.tempUsed.Load()
	}
	s.log.Warn(msg, "dest", d.d.String(), "usage", usageName(why), "limit", limit, "used", used,
		"percent_usage", percent(used, limit), "blocked_sends", len(d.blocked), "blocked_for_ms", s.now-d.blocked[0].since)
}

// warnStillBlocked repeats the flow-control warning of every destination
// whose producers are still held back, once per interval, as
// BaseDestination.waitForSpace does while it waits ("blocking for: Ns"):
// a producer blocked for minutes is not silent after its first line.
// Called by the tick, after the parked sends that have room went in.
func (s *shard) warnStillBlocked() {
	for d := range s.blocked {
		if why := s.room(d, d.blocked[0].msg); why != "" {
			s.warnBlocked(d, why)
		}
	}
}

// The flow-control warnings (warnBlocked), in ActiveMQ's words.
const (
	flowWarnMemory = "Usage Manager Memory Limit reached. Producers will be throttled to the rate at which messages are removed from this destination to prevent flooding it"
	flowWarnStore  = "Persistent store is Full. Stopping producer to prevent flooding the destination"
	flowWarnTemp   = "Temp Store is Full. Stopping producer to prevent flooding the destination"
)

// admitParked lets parked sends in where room was made, and tells the
// other shards when this one freed memory that their producers may be
// waiting on. It runs at the end of each turn.
func (s *shard) admitParked() {
	if len(s.blocked) > 0 {
		s.retryBlocked()
	}
	if s.freed {
		s.freed = false
		// Every usage is broker-wide: room made here may be what a
		// producer parked on another shard waits for.
		if s.e.blockedShards.Load() > 0 && (s.e.memLimit.Load() > 0 || s.e.tempLimit.Load() > 0 || s.e.storeLimit.Load() > 0) {
			for _, o := range s.e.shards {
				if o != s {
					s.forwardTo(o, command{op: opRetryBlocked})
				}
			}
		}
	}
}

// retryBlocked admits parked sends, oldest first, while there is room.
func (s *shard) retryBlocked() {
	for d := range s.blocked {
		for len(d.blocked) > 0 && s.room(d, d.blocked[0].msg) == "" {
			p := d.blocked[0]
			d.blocked[0] = parked{}
			d.blocked = d.blocked[1:]
			s.complete(opSend, p.comp, p.token, s.sendClient(p.subj, p.msg))
		}
		if len(d.blocked) == 0 {
			d.blocked = nil
			s.unblock(d)
		}
	}
}

func (s *shard) unblock(d *destination) {
	delete(s.blocked, d)
	if len(s.blocked) == 0 {
		s.e.blockedShards.Add(-1)
	}
}

// timeoutBlocked fails the parked sends whose sendFailIfNoSpaceAfterTimeout
// has passed.
func (s *shard) timeoutBlocked() {
	for d := range s.blocked {
		keep := d.blocked[:0]
		for _, p := range d.blocked {
			if p.deadline != 0 && p.deadline <= s.now {
				err := fmt.Errorf("%w: Usage Manager Memory Limit Wait Timeout. Stopping producer to prevent flooding %s. See http://activemq.apache.org/producer-flow-control.html for more info",
					ErrResourceAllocation, d.d)
				if s.room(d, p.msg) == "temp" {
					// BaseDestination.waitForSpace: the timeout reports
					// the usage that is full.
					err = s.fullError(d, "temp")
				}
				s.complete(opSend, p.comp, p.token, err)
				continue
			}
			keep = append(keep, p)
		}
		clear(d.blocked[len(keep):])
		d.blocked = keep
		if len(keep) == 0 {
			d.blocked = nil
			s.unblock(d)
		}
	}
}

// Usage is the broker-wide resource use, as ActiveMQ's BrokerView reports it.
type Usage struct {
	MemoryUsed, MemoryLimit int64
	StoreUsed, StoreLimit   int64
	TempUsed, TempLimit     int64
	// Percentages of the limits (0 when unlimited), as integers like
	// ActiveMQ's MemoryPercentUsage.
	MemoryPercent, StorePercent, TempPercent int
}

// SetLimits changes the broker-wide limits as the broker runs
// (BrokerViewMBean setMemoryLimit, setStoreLimit, setTempLimit); a nil
// one is left as it is, 0 means no limit. Producers parked by flow
// control try again at once. Like a JMX change it lasts until the broker
// restarts. Safe from any goroutine.
func (e *Engine) SetLimits(memory, store, temp *int64) error {
	for _, l := range []*int64{memory, store, temp} {
		if l != nil && *l < 0 {
			return fmt.Errorf("%w: limit %d is negative", ErrBadArgument, *l)
		}
	}
	if memory != nil {
		e.memLimit.Store(*memory)
	}
	if store != nil {
		e.storeLimit.Store(*store)
	}
	if temp != nil {
		e.tempLimit.Store(*temp)
	}
	e.log.Info("usage limits changed", "memory", e.memLimit.Load(), "store", e.storeLimit.Load(), "temp", e.tempLimit.Load())
	for _, s := range e.shards {
		s.mailbox(command{op: opRetryBlocked})
	}
	return nil
}

// Usage reads the broker-wide usage. Safe from any goroutine.
func (e *Engine) Usage() Usage {
	u := Usage{
		MemoryUsed: e.memUsed.Load(), MemoryLimit: e.memLimit.Load(),
		StoreUsed: e.storeUsed.Load(), StoreLimit: e.storeLimit.Load(),
		TempUsed: e.tempUsed.Load(), TempLimit: e.tempLimit.Load(),
	}
	u.MemoryPercent = percent(u.MemoryUsed, u.MemoryLimit)
	u.StorePercent = percent(u.StoreUsed, u.StoreLimit)
	u.TempPercent = percent(u.TempUsed, u.TempLimit)
	return u
}

func percent(used, limit int64) int {
	if limit <= 0 {
		return 0
	}
	return int(used * 100 / limit)
}
