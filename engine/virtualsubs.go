package engine

import "wharf/engine/message"

// Virtual destination consumer advisories (ActiveMQ's AdvisoryBroker with
// <broker useVirtualDestSubs="true">): a consumer on a queue that a
// virtual destination forwards to — a virtual topic's consumer queue
// (Consumer.A.VirtualTopic.Orders for VirtualTopic.Orders), a
// composite's forwardTo — is also advertised as a consumer of the virtual
// destination itself, on ActiveMQ.Advisory.VirtualDestination.Consumer.
// <Queue|Topic>.<virtual destination>, and its going with a RemoveInfo
// there. A network bridge with useVirtualDestSubs reads those, so what is
// published to the virtual destination on its broker comes here.

// VirtualDestConsumerAdvisoryPrefix is AdvisorySupport's
// VIRTUAL_DESTINATION_CONSUMER_ADVISORY_TOPIC_PREFIX.
const VirtualDestConsumerAdvisoryPrefix = AdvisoryPrefix + "VirtualDestination.Consumer."

// virtualDestsOf are the virtual destinations that forward to d.
func (e *Engine) virtualDestsOf(d message.Destination) []message.Destination {
	var out []message.Destination
	if d.Type == message.Queue {
		for i := range e.opts.VirtualTopics {
			if topic, ok := e.opts.VirtualTopics[i].topicOfQueue(d.Name); ok {
				out = append(out, message.TopicDest(topic))
				break
			}
		}
	}
	if f := e.opts.CompositesForwardingTo; f != nil {
		out = append(out, f(d)...)
	}
	return out
}

// virtualConsumerAdvisories publishes sub's virtual destination consumer
// advisories (removed: its RemoveInfo); to only that subscriber when
// target is set (a replay), when it subscribes to the topic.
func (e *Engine) virtualConsumerAdvisories(sub *Subscription, removed bool, target *Subscription) {
	if !e.opts.UseVirtualDestSubs || !e.advisories() || IsAdvisory(sub.spec.Destination) {
		return
	}
	for _, vd := range e.virtualDestsOf(sub.spec.Destination) {
		topic := VirtualDestConsumerAdvisoryPrefix + queueOrTopic(vd) + "." + advisoryName(vd)
		if target != nil && !target.spec.Destination.Matches(message.TopicDest(topic)) {
			continue
		}
		var a *message.Advisory
		if removed {
			a = removeInfo(sub.consumerID())
		} else {
			a = consumerInfo(sub)
			for i := range a.Fields {
				if a.Fields[i].Name == "Destination" {
					a.Fields[i].Value = message.StringValue(vd.String())
				}
			}
		}
		e.fire(e.newAdvisory(topic, a), target)
	}
}
