package jolokia

import (
	"fmt"

	"wharf/engine"
)

// The network connectors' beans, as ActiveMQ's ManagedNetworkConnector
// and MBeanNetworkListener register them: one NetworkConnectorViewMBean
// per <networkConnector> (connector=networkConnectors,
// networkConnectorName=N) and, under it, one NetworkBridgeViewMBean per
// bridge while it is up (networkBridge=<remote address>). The Broker
// bean of 5.17 has no attribute listing them (BrokerViewMBean has only
// the addNetworkConnector and removeNetworkConnector operations, which
// Wharf does not serve): a search for connector=networkConnectors,* is
// how a client finds them, in ActiveMQ as here. Under a bridge, each
// destination it has forwarded to has a NetworkDestinationViewMBean
// (direction=outbound,destinationType=T,destinationName=D), as
// MBeanBridgeDestination registers on the first message. The bridge's
// resetStats zeroes its counters and its destinations'. Not built:
// Service's start and stop operations, the destinations' resetStats, the inbound
// destination beans of a duplex bridge, and the removal of destination
// beans idle for gcSweepTime (gcDestinationViews).

// passwordMask is what NetworkConnectorView answers for the passwords.
const passwordMask = "****"

// networkConnectors is the engine's network view, nil without one.
func (s *snapshot) networkConnectors() []engine.NetworkConnectorInfo {
	if !s.read.network {
		s.read.network = true
		if v := s.h.e.Network(); v != nil {
			s.network = v.NetworkConnectors()
		}
	}
	return s.network
}

func (h *Handler) networkConnectorName(nc engine.NetworkConnectorInfo) objectName {
	return h.under("connector", "networkConnectors", "networkConnectorName", encodePart(nc.Name))
}

// networkBridgeName is BrokerMBeanSupport.createNetworkBridgeObjectName:
// the connector's name and networkBridge=<remote address>.
func (h *Handler) networkBridgeName(nc engine.NetworkConnectorInfo, b engine.NetworkBridgeInfo) objectName {
	on := h.networkConnectorName(nc)
	on.props = append(on.props, prop{"networkBridge", encodePart(b.RemoteAddress)})
	return on
}

// annotated is the description JMX gives an attribute or operation that
// has no @MBeanInfo (most of the network beans').
const annotated = "Attribute exposed for management"

// networkConnectorBean is a network connector (NetworkConnectorViewMBean).
func (s *snapshot) networkConnectorBean(nc engine.NetworkConnectorInfo) *mbean {
	v := func(x any) func() any { return func() any { return x } }
	return &mbean{
		name: s.h.networkConnectorName(nc), class: "org.apache.activemq.broker.jmx.NetworkConnectorView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"Name", "java.lang.String", annotated, v(nc.Name)},
			{"MessageTTL", "int", annotated, v(nc.MessageTTL)},
			{"ConsumerTTL", "int", annotated, v(nc.ConsumerTTL)},
			{"PrefetchSize", "int", annotated, v(nc.PrefetchSize)},
			{"AdvisoryPrefetchSize", "int", "The prefetch setting for the advisory message consumer.  If set to <= 0 then this setting is disabled and the prefetchSize attribute is used instead for configuring the advisory consumer.", v(nc.AdvisoryPrefetchSize)},
			{"UserName", "java.lang.String", annotated, v(nullable(nc.UserName))},
			{"BridgeTempDestinations", "boolean", annotated, v(nc.BridgeTempDestinations)},
			{"ConduitSubscriptions", "boolean", annotated, v(nc.ConduitSubscriptions)},
			{"DecreaseNetworkConsumerPriority", "boolean", annotated, v(nc.DecreaseNetworkConsumerPriority)},
			{"DispatchAsync", "boolean", annotated, v(nc.DispatchAsync)},
			{"DynamicOnly", "boolean", annotated, v(nc.DynamicOnly)},
			{"Duplex", "boolean", annotated, v(nc.Duplex)},
			{"SuppressDuplicateQueueSubscriptions", "boolean", annotated, v(nc.SuppressDuplicateQueueSubscriptions)},
			{"SuppressDuplicateTopicSubscriptions", "boolean", annotated, v(nc.SuppressDuplicateTopicSubscriptions)},
			{"Password", "java.lang.String", annotated, v(passwordMask)},
			{"RemoteUserName", "java.lang.String", annotated, v(nil)},
			{"RemotePassword", "java.lang.String", annotated, v(passwordMask)},
		},
	}
}

// networkBridgeBean is a bridge that is up (NetworkBridgeViewMBean).
func (s *snapshot) networkBridgeBean(nc engine.NetworkConnectorInfo, b engine.NetworkBridgeInfo) *mbean {
	v := func(x any) func() any { return func() any { return x } }
	return &mbean{
		name: s.h.networkBridgeName(nc, b), class: "org.apache.activemq.broker.jmx.NetworkBridgeView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"LocalAddress", "java.lang.String", annotated, v(nullable(b.LocalAddress))},
			{"RemoteAddress", "java.lang.String", annotated, v(nullable(b.RemoteAddress))},
			{"RemoteBrokerName", "java.lang.String", annotated, v(nullable(b.RemoteBrokerName))},
			{"RemoteBrokerId", "java.lang.String", annotated, v(nullable(b.RemoteBrokerID))},
			{"LocalBrokerName", "java.lang.String", annotated, v(nullable(b.LocalBrokerName))},
			{"EnqueueCounter", "long", annotated, v(b.Enqueued)},
			{"DequeueCounter", "long", annotated, v(b.Dequeued)},
			{"ReceivedCounter", "long", annotated, v(b.Received)},
			{"CreatedByDuplex", "boolean", annotated, v(b.CreatedByDuplex)},
		},
		ops: func() []operation {
			return []operation{{name: "resetStats", desc: "Operation exposed for management", ret: "void", changes: true,
				run: func([]any) (any, error) {
					if v := s.h.e.Network(); v == nil || !v.ResetBridgeStats(nc.Name, b.RemoteAddress) {
						return nil, operationFailed(fmt.Errorf("network bridge to %s of %s is no longer up", b.RemoteAddress, nc.Name))
					}
					return nil, nil
				}}}
		},
	}
}

// networkDestinationName is createNetworkOutBoundDestinationObjectName.
func (h *Handler) networkDestinationName(nc engine.NetworkConnectorInfo, b engine.NetworkBridgeInfo, d engine.NetworkDestinationCount) objectName {
	on := h.networkBridgeName(nc, b)
	on.props = append(on.props, prop{"direction", "outbound"}, prop{"destinationType", d.Destination.Type.String()},
		prop{"destinationName", encodePart(d.Destination.Name)})
	return on
}

// networkDestinationBean is a destination a bridge forwarded to
// (NetworkDestinationViewMBean).
func (s *snapshot) networkDestinationBean(nc engine.NetworkConnectorInfo, b engine.NetworkBridgeInfo, d engine.NetworkDestinationCount) *mbean {
	v := func(x any) func() any { return func() any { return x } }
	return &mbean{
		name: s.h.networkDestinationName(nc, b, d), class: "org.apache.activemq.broker.jmx.NetworkDestinationView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"Name", "java.lang.String", annotated, v(d.Destination.Name)},
			{"Count", "long", annotated, v(d.Count)},
			{"Rate", "double", annotated, v(d.Rate)},
		},
	}
}

// networkCandidates are the network beans.
func (s *snapshot) networkCandidates() []candidate {
	var out []candidate
	for _, nc := range s.networkConnectors() {
		out = append(out, candidate{s.h.networkConnectorName(nc), func() *mbean { return s.networkConnectorBean(nc) }})
		for _, b := range nc.Bridges {
			if b.Up && b.RemoteAddress != "" {
				out = append(out, candidate{s.h.networkBridgeName(nc, b), func() *mbean { return s.networkBridgeBean(nc, b) }})
				for _, d := range b.Outbound {
					out = append(out, candidate{s.h.networkDestinationName(nc, b, d), func() *mbean { return s.networkDestinationBean(nc, b, d) }})
				}
			}
		}
	}
	return out
}
