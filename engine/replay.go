package engine

import "wharf/engine/message"

// Replaying queue messages back through the network (a queue policy's
// ReplayWhenNoConsumers, ActiveMQ's conditionalNetworkBridgeFilterFactory).
//
// A network subscription never takes a message that already went through
// its remote broker (NetworkSpec.admits): that is what stops loops. But a
// queue message forwarded here whose consumer then left is stuck here
// while consumers wait where it came from (seed 001). With
// ReplayWhenNoConsumers such a message may go back, as
// ConditionalNetworkBridgeFilter lets it: when no subscription but network
// ones is left on the queue and the message has been here ReplayDelay,
// whatever messageTTL says. The selector and noLocal still apply.

// takes reports whether queue consumer c may be given e now (ms).
func (d *destination) takes(c *part, e *entry, now int64) bool {
	n := c.sub.spec.Network
	if n == nil || !d.policy.ReplayWhenNoConsumers || !n.cameFrom(e.msg) {
		return c.sub.matches(e.msg, e.redeliveries)
	}
	if now < e.in+d.policy.ReplayDelay.Milliseconds() || d.hasLocalConsumer() {
		return false
	}
	return c.sub.matchesLocal(e.msg, e.redeliveries)
}

// cameFrom reports whether m went through the subscription's remote
// broker.
func (n *NetworkSpec) cameFrom(m *message.Message) bool {
	for _, id := range m.BrokerPath {
		if id == n.RemoteBrokerID {
			return true
		}
	}
	return false
}

// hasLocalConsumer reports whether a queue has a consumer that is not a
// network bridge's.
func (d *destination) hasLocalConsumer() bool {
	for _, c := range d.consumers {
		if c.sub.spec.Network == nil {
			return true
		}
	}
	return false
}

// replayDue dispatches, on each tick, the queues where a message waiting
// out its ReplayDelay may have become free to go back.
func (s *shard) replayDue() {
	for _, d := range s.dests {
		if d.policy.ReplayWhenNoConsumers && d.policy.ReplayDelay > 0 && d.pending.len() > 0 && !d.d.Type.IsTopic() && !d.hasLocalConsumer() && len(d.consumers) > 0 {
			s.dispatchQueue(d)
		}
	}
}
