package cluster

import "wharf/protocols/openwire/wire"

// useVirtualDestSubs (ActiveMQ 5.13+): with the connector's
// useVirtualDestSubs the bridge also subscribes to the peer's
// ActiveMQ.Advisory.VirtualDestination.Consumer advisories (all of them,
// or those of the dynamically included destinations). A peer with
// <broker useVirtualDestSubs="true"> publishes there a consumer on a
// queue one of its virtual destinations forwards to (a virtual topic's
// consumer queue Consumer.A.VirtualTopic.Orders, a composite's forwardTo
// queue) as a consumer of the virtual destination (topic
// VirtualTopic.Orders): ordinary demand here, so what is published to
// VirtualTopic.Orders on this broker reaches the peer's topic, whose
// virtual topic copies it to the consumer queue.
//
// The advisory's ConsumerInfo carries the queue consumer's own id, which
// the peer's plain Consumer advisory also names (as demand for the
// queue); the bridge keys the virtual demand apart so that the two do not
// replace each other.

const virtualIDPrefix = "virtual-dest:"

func virtualConsumerID(id *wire.ConsumerId) *wire.ConsumerId {
	c := *id
	c.ConnectionId = virtualIDPrefix + c.ConnectionId
	return &c
}

// virtualDemand is a virtual destination consumer advisory's ConsumerInfo
// with its id kept apart from the queue consumer's.
func virtualDemand(ci *wire.ConsumerInfo) *wire.ConsumerInfo {
	if ci.ConsumerId == nil {
		return ci
	}
	c := *ci
	c.ConsumerId = virtualConsumerID(ci.ConsumerId)
	return &c
}
