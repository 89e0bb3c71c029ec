package engine

import (
	"strconv"
	"strings"

	"wharf/engine/message"
)

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
		topic := virtualDestAdvisoryTopic(vd)
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

// vdPair is a virtual destination and a queue it forwards to
// (AdvisoryBroker's VirtualConsumerPair).
type vdPair struct{ virtual, queue message.Destination }

// queueDemand, with useVirtualDestSubsOnCreation, advertises queue d as a
// consumer of each virtual destination that forwards to it from its
// creation (add) to its removal, consumers or not: ActiveMQ's
// AdvisoryBroker.addDestination fires a VirtualDestination consumer
// advisory with a ConsumerInfo of its own making for each such pair, and
// removeDestination its RemoveInfo. A network bridge with
// useVirtualDestSubs then forwards what is published to the virtual
// destination on its broker while the queue has no consumer, so nothing
// is left behind there. Called by shard s as d is created (a restart's
// recovery included: ActiveMQ registers the virtual destinations at
// start against the destinations it already has) or removed.
func (s *shard) queueDemand(d message.Destination, add bool) {
	e := s.e
	if !e.opts.UseVirtualDestSubs || !e.opts.UseVirtualDestSubsOnCreation || d.Type != message.Queue || IsAdvisory(d) {
		return
	}
	for _, vd := range e.virtualDestsOf(d) {
		pair := vdPair{vd, d}
		e.vdMu.Lock()
		id, had := e.vdQueues[pair]
		switch {
		case add && !had:
			// AdvisoryBroker's ids come from IdGenerator("advisory"): a
			// connection of their own, and session and consumer sequences.
			n := strconv.FormatUint(e.vdSeq.Add(1), 10)
			id = "advisory-" + strings.TrimPrefix(e.brokerID, "ID:") + "-0:" + n + ":" + n + ":" + n
			if e.vdQueues == nil {
				e.vdQueues = map[vdPair]string{}
			}
			e.vdQueues[pair] = id
		case !add && had:
			delete(e.vdQueues, pair)
		}
		e.vdMu.Unlock()
		// A queue recovered at start is recorded and not announced: no
		// subscriber can be there yet, and an advisory forwarded to
		// another shard's inbox now would reach one that subscribes
		// after the start, on top of its replay.
		if add == had || !e.advisories() || s.recovering {
			continue
		}
		topic := virtualDestAdvisoryTopic(vd)
		if add {
			s.fire(e.newAdvisory(topic, queueDemandInfo(id, vd)))
		} else {
			s.fire(e.newAdvisory(topic, removeInfo(id)))
		}
	}
}

// replayQueueDemand sends subscriber sub of the virtual destination
// consumer advisory topics the demand queueDemand holds.
func (e *Engine) replayQueueDemand(sub *Subscription) {
	type demand struct {
		id string
		vd message.Destination
	}
	e.vdMu.Lock()
	ds := make([]demand, 0, len(e.vdQueues))
	for p, id := range e.vdQueues {
		ds = append(ds, demand{id, p.virtual})
	}
	e.vdMu.Unlock()
	for _, d := range ds {
		if topic := virtualDestAdvisoryTopic(d.vd); sub.spec.Destination.Matches(message.TopicDest(topic)) {
			e.fire(e.newAdvisory(topic, queueDemandInfo(d.id, d.vd)), sub)
		}
	}
}

// queueDemandInfo is the ConsumerInfo AdvisoryBroker makes for a queue's
// demand: its id and the virtual destination; every other field as a new
// ConsumerInfo has it.
func queueDemandInfo(id string, vd message.Destination) *message.Advisory {
	return &message.Advisory{Command: "ConsumerInfo", Fields: message.Properties{
		str("ConsumerId", id),
		str("Destination", vd.String()),
		{Name: "PrefetchSize", Value: message.IntValue(0)},
		str("Selector", ""),
		str("SubscriptionName", ""),
		str("ClientId", ""),
		{Name: "NoLocal", Value: message.BoolValue(false)},
		{Name: "Exclusive", Value: message.BoolValue(false)},
		{Name: "Browser", Value: message.BoolValue(false)},
		{Name: "Priority", Value: message.ByteValue(0)},
	}}
}

func virtualDestAdvisoryTopic(vd message.Destination) string {
	return VirtualDestConsumerAdvisoryPrefix + queueOrTopic(vd) + "." + advisoryName(vd)
}
