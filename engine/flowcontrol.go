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
	// destination logs (30 s).
	BlockedProducerWarningInterval time.Duration
}

// parked is a producer's send held back by flow control.
type parked struct {
	msg      *message.Message
	comp     Completion
	token    uint64
	deadline int64 // ms; 0 waits for room however long it takes
}

// room reports why d cannot take a message from a producer now, or "" when
// it can. Only producer sends are checked: dead-letter moves and other
// internal forwards always go through, as ActiveMQ exempts them.
func (s *shard) room(d *destination, m *message.Message) string {
	if !d.policy.ProducerFlowControl {
		return ""
	}
	l := &s.e.opts.Limits
	if s.e.opts.Temp != nil && s.spillable(d, m) {
		// It is paged out when memory runs short, so only the usage that
		// then holds it holds it back: the store's for a persistent
		// message (Queue.checkUsage: "Persistent store is Full"), the
		// temp store's for the others ("Temp Store is Full").
		if m.Persistent && s.store != nil {
			if l.StoreLimit > 0 && s.e.storeUsed.Load() >= l.StoreLimit {
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
	case l.MemoryLimit > 0 && s.e.memUsed.Load() >= l.MemoryLimit:
		return "memory"
	case m.Persistent && s.store != nil && l.StoreLimit > 0 && s.e.storeUsed.Load() >= l.StoreLimit:
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
		s.complete(c.comp, c.token, s.fullError(d, why))
		return true
	}
	p := parked{msg: c.msg, comp: c.comp, token: c.token}
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
		l := s.e.opts.Limits.TempLimit
		return fmt.Errorf("%w: Usage Manager Temp Store is Full (%d%% of %d). Stopping producer to prevent flooding %s. See http://activemq.apache.org/producer-flow-control.html for more info",
			ErrResourceAllocation, percent(s.e.tempUsed.Load(), l), l, d.d)
	}
	return fmt.Errorf("%w: Usage Manager %s Limit reached on %s. See http://activemq.apache.org/producer-flow-control.html for more info",
		ErrResourceAllocation, usageName(why), d.d)
}

// warnBlocked logs ActiveMQ's flow-control warning, at most once per
// BlockedProducerWarningInterval per destination.
func (s *shard) warnBlocked(d *destination, why string) {
	iv := s.e.opts.Limits.BlockedProducerWarningInterval
	if iv <= 0 {
		iv = 30 * time.Second
	}
	if d.lastFlowWarn != 0 && s.now-d.lastFlowWarn < iv.Milliseconds() {
		return
	}
	d.lastFlowWarn = s.now
	limit, used := d.policy.MemoryLimit, d.mem
	if limit == 0 {
		limit = s.e.opts.Limits.MemoryLimit
	}
	if why == "temp" {
		limit, used = s.e.opts.Limits.TempLimit, s.e.tempUsed.Load()
	}
	s.log.Warn("Usage Manager "+usageName(why)+" Limit reached; producers will be throttled to the rate at which messages are removed from this destination",
		"dest", d.d.String(), "limit", limit, "used", used, "blocked_sends", len(d.blocked))
}

// endTurn lets parked sends in where room was made, and tells the other
// shards when this one freed memory that their producers may be waiting on.
func (s *shard) endTurn() {
	if len(s.blocked) > 0 {
		s.retryBlocked()
	}
	if s.freed {
		s.freed = false
		// Every usage is broker-wide: room made here may be what a
		// producer parked on another shard waits for.
		if l := &s.e.opts.Limits; s.e.blockedShards.Load() > 0 && (l.MemoryLimit > 0 || l.TempLimit > 0 || l.StoreLimit > 0) {
			for _, o := range s.e.shards {
				if o != s {
					o.mailbox(command{op: opFn, fn: (*shard).retryBlocked})
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
			s.complete(p.comp, p.token, s.send(p.msg))
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
				s.complete(p.comp, p.token, err)
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

// Usage reads the broker-wide usage. Safe from any goroutine.
func (e *Engine) Usage() Usage {
	l := e.opts.Limits
	u := Usage{
		MemoryUsed: e.memUsed.Load(), MemoryLimit: l.MemoryLimit,
		StoreUsed: e.storeUsed.Load(), StoreLimit: l.StoreLimit,
		TempUsed: e.tempUsed.Load(), TempLimit: l.TempLimit,
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
