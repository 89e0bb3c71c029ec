package engine

import (
	"context"
	"log/slog"
	"strconv"

	"wharf/engine/message"
)

// Redelivery, expiry and dead letters: the redelivery policy a nack meets
// (redeliver), expiring messages on arrival, at dispatch and in the
// periodic sweep (expireEntry, expireTopicEntry, sweep), and the
// dead-letter strategies that decide where, and whether, a message that
// could not be consumed goes (deadLetter, deadLetterEntry).

// redeliver puts a nacked entry back for another delivery with its
// redelivery counter raised, or dead-letters it once the counter passes the
// destination's MaxRedeliveries (ActiveMQ's RedeliveryPolicy on the broker
// side: the client's count decides, and the broker moves the message).
func (s *shard) redeliver(p *part, e *entry, cause string) {
	e.redeliveries++
	if max := e.dest.policy.MaxRedeliveries; max >= 0 && int(e.redeliveries) > max {
		if cause == "" {
			cause = "java.lang.Throwable: Delivery[" + strconv.FormatInt(int64(e.redeliveries), 10) + "] exceeds redelivery policy limit:" + strconv.Itoa(max)
		}
		s.deadLetterEntry(p, e, cause)
		return
	}
	s.requeue(p, e)
}

// deadLetterEntry moves an in-flight or pending entry to its DLQ. It
// counts as a dequeue of its destination, as in ActiveMQ, where the
// poison ack removes the message from its queue (Queue.dropMessage):
// TestConformanceJMXDifferential's jmx.poison.
func (s *shard) deadLetterEntry(p *part, e *entry, cause string) {
	s.dropStored(p, e)
	d := e.dest
	d.dequeued++
	s.deadLetter(d, e.msg, cause, false)
	s.freeEntry(e)
}

// deadLetter sends a copy of m to d's dead-letter destination as
// RegionBroker.sendToDeadLetterQueue does, or drops it when the strategy
// says so (non-persistent, expired with processExpired=false, discarding, or
// already on its DLQ).
func (s *shard) deadLetter(d *destination, m *message.Message, cause string, expired bool) {
	pol := &d.policy.DeadLetter
	if (!m.Persistent && !pol.ProcessNonPersistent) || (expired && !pol.ProcessExpired) {
		return
	}
	debug := s.log.Enabled(context.Background(), slog.LevelDebug)
	target, ok := pol.Target(d.d)
	if !ok {
		if debug {
			s.log.Debug("Discarding message sent to DLQ", "dest", d.d.String(), "msg_id", m.ID, "cause", cause)
		}
		return // the discarding strategy
	}
	if target == d.d {
		if debug {
			s.log.Debug("Not re-adding to DLQ", "dest", d.d.String(), "msg_id", m.ID)
		}
		return // the loop guard: never re-DLQ a DLQ message
	}
	if debug {
		// ActiveMQ's loggingBrokerPlugin words ("Sending to DLQ"), at
		// Debug: a poison message per second would flood Info.
		s.log.Debug("Sending to DLQ", "dest", d.d.String(), "dlq", target.String(), "msg_id", m.ID, "cause", cause)
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
	if ts := s.e.shardFor(target); ts == s {
		if err := s.send(c); err != nil {
			s.warnDropped(target, m, err)
		}
	} else {
		s.forwardTo(ts, command{op: opForward, msg: c})
	}
	s.messageCopyAdvisory(AdvisoryPrefix+"MessageDLQd."+d.d.Type.String()+"."+d.d.Name, m)
}

// warnDropped logs a dead letter its DLQ refused (a full store, a
// destination limit): the first at once, then at most one line per
// slowLogEvery with the count of those it stands for, since a DLQ that
// refuses one poison message refuses the next thousand too.
func (s *shard) warnDropped(target message.Destination, m *message.Message, err error) {
	if s.dropLogged != 0 && s.now-s.dropLogged < slowLogEvery.Milliseconds() {
		s.dropHeld++
		return
	}
	s.dropLogged = s.now
	held := s.dropHeld
	s.dropHeld = 0
	s.log.Warn("dead letter dropped", "dest", target.String(), "msg_id", m.ID, "err", err, "dropped_not_logged", held)
}

func expiryCause(m *message.Message) string {
	return "java.lang.Throwable: Message Expired. Expiration:" + strconv.FormatInt(m.Expiration, 10)
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
		s.deadLetter(d, m, expiryCause(m), true)
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
		s.deadLetter(d, m, expiryCause(m), true)
	}
	s.freeEntry(e)
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
