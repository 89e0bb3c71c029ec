package engine

import (
	"wharf/engine/message"
)

// Retained messages: ActiveMQ gives every topic a
// RetainedMessageSubscriptionRecoveryPolicy. A message sent to a topic with
// the boolean property ActiveMQ.Retain=true becomes the topic's retained
// message (an empty body clears it); the property is stripped before the
// message is dispatched; the kept copy carries ActiveMQ.Retained=true and is
// replayed to every new retroactive subscription (MQTT subscriptions are
// always retroactive). Any protocol may set the property.
const (
	// RetainProperty asks for the message to be retained (MQTT RETAIN).
	RetainProperty = "ActiveMQ.Retain"
	// RetainedProperty marks the replayed copy of a retained message.
	RetainedProperty = "ActiveMQ.Retained"
)

// RetainStore is the destination under which a shard stores its topics'
// retained messages, one stored message per topic; the message's own
// Destination names its topic.
//
// DEVIATION: ActiveMQ keeps retained messages in memory only, so they are
// gone after a restart; MQTT users expect them to survive (Mosquitto
// persists them), and the issue asks for it. An ActiveMQ broker started on
// a Wharf journal sees them as messages on this queue.
var RetainStore = message.QueueDest("ActiveMQ.Retained.Store")

// retain records m, sent to topic d with RetainProperty set, as d's retained
// message, or clears it when m has no body. It returns the message to
// dispatch: m without the property.
func (s *shard) retain(d *destination, m *message.Message) *message.Message {
	c := m.Clone()
	c.Props.Delete(RetainProperty)
	c.Original = m.Original
	c.Retain = true
	if d.retainedSeq != 0 && s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemove, Dest: RetainStore, Seq: d.retainedSeq})
	}
	d.retained, d.retainedSeq = nil, 0
	if !hasBody(m) {
		return c
	}
	r := c.Clone()
	r.Props.Set(RetainedProperty, message.BoolValue(true))
	r.Retain = true
	d.retained = r
	if s.store != nil && !d.d.Type.IsTemp() {
		s.retainNext++
		d.retainedSeq = s.retainNext
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpAdd, Dest: RetainStore, Seq: d.retainedSeq, Msg: r})
	}
	return c
}

// hasBody reports whether m carries content: ActiveMQ clears the retained
// message with one whose content is empty.
func hasBody(m *message.Message) bool {
	return len(m.Body) > 0 || len(m.Map) > 0 || len(m.List) > 0
}

// recoverRetained restores a stored retained message into its topic.
func (s *shard) recoverRetained(it RecoveredItem) {
	if it.Seq > s.retainNext {
		s.retainNext = it.Seq
	}
	if !it.Msg.Destination.Type.IsTopic() {
		// Only a store that lost the message's own destination hands
		// this; it would be a retained message of no topic.
		s.log.Warn("retained message of no topic ignored", "dest", it.Msg.Destination.String(), "msg_id", it.Msg.ID)
		return
	}
	d := s.dest(it.Msg.Destination, true)
	if d.retainedSeq != 0 && d.retainedSeq > it.Seq {
		// An older copy left by a crash between two writes: the store
		// removes it with the next change.
		return
	}
	m := it.Msg
	m.Retain = true
	d.retained, d.retainedSeq = m, it.Seq
}

// replayRetained hands p the retained messages of the topics it was just
// attached to, ahead of anything sent after the subscription.
func (s *shard) replayRetained(p *part) {
	for _, d := range p.dests {
		r := d.retained
		if r == nil || !d.d.Type.IsTopic() {
			continue
		}
		if r.Expired(s.now) {
			s.dropRetained(d)
			continue
		}
		if !p.matches(r) {
			continue
		}
		p.pending.pushBack(s.newEntry(d.nextSeq, r, d))
	}
}

// dropRetained forgets d's retained message (expired, or d removed).
func (s *shard) dropRetained(d *destination) {
	if d.retainedSeq != 0 && s.store != nil {
		s.out.ops = append(s.out.ops, StoreOp{Kind: OpRemove, Dest: RetainStore, Seq: d.retainedSeq})
	}
	d.retained, d.retainedSeq = nil, 0
}

// Retained returns the retained message of topic d, or nil. Safe from any
// goroutine; it waits for d's shard.
func (e *Engine) Retained(d message.Destination) (*message.Message, error) {
	x := &retainedCmd{dest: d}
	err := e.request([]int{e.shardFor(d).idx}, func(*shard) command { return command{op: opRetained, ctl: x} })
	return x.m, err
}
