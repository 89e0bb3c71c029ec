package jolokia

import (
	"wharf/engine"
)

// durableName is a durable subscription's bean, as ActiveMQ's
// BrokerMBeanSupport.createSubscriptionName names it whether or not a
// consumer is attached: consumerId=Durable(<clientId>_<name>).
func (h *Handler) durableName(ds engine.DurableSub) objectName {
	return h.under("destinationType", ds.Destination.Type.String(), "destinationName", encodePart(ds.Destination.Name),
		"endpoint", "Consumer", "clientId", encodePart(ds.Key.ClientID),
		"consumerId", "Durable("+encodePart(ds.Key.ClientID+":"+ds.Key.Name)+")")
}

// durableBean is a durable subscription (DurableSubscriptionViewMBean).
func (s *snapshot) durableBean(ds engine.DurableSubInfo) *mbean {
	e := s.h.e
	v := func(x any) func() any { return func() any { return x } }
	return &mbean{
		name: s.h.durableName(ds.DurableSub), class: "org.apache.activemq.broker.jmx.DurableSubscriptionView", desc: "Information on the management interface of the MBean",
		attrs: append([]attribute{
			{"ClientId", "java.lang.String", "JMS Client id of the Connection the Subscription is on.", v(ds.Key.ClientID)},
			{"SubscriptionName", "java.lang.String", "The subscription name.", v(ds.Key.Name)},
			// ActiveMQ's SubscriptionViewMBean spells it so.
			{"SubcriptionName", "java.lang.String", "The name of the subscription (durable subscriptions only).", v(ds.Key.Name)},
			{"DestinationName", "java.lang.String", "The name of the destionation the subscription is on.", v(ds.Destination.Name)},
			{"Selector", "java.lang.String", "The SQL-92 message header selector or XPATH body selector of the subscription.", v(nullable(ds.Selector))},
			{"Active", "boolean", "Subscription is active (connected and receiving messages).", v(ds.Active)},
			{"Durable", "boolean", "The subsription is persistent.", v(true)},
			{"NoLocal", "boolean", "The subsription ignores local messages.", v(ds.NoLocal)},
			{"DestinationQueue", "boolean", "Subscription is on a Queue", v(false)},
			{"DestinationTopic", "boolean", "Subscription is on a Topic", v(true)},
			{"DestinationTemporary", "boolean", "Subscription is on a temporary Queue/Topic", v(false)},
		}, subCounterAttrs(func() engine.SubCounters { return s.durableCounters(ds.Key) })...),
		ops: func() []operation {
			return []operation{{name: "destroy", desc: "Destroys the durable subscription so that messages will no longer be stored for this subscription", ret: "void", changes: true,
				run: func([]any) (any, error) { return nil, e.Unsubscribe(ds.Key) }}}
		},
	}
}

// nullable is a Java String that is null when empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// connectionView is one of the names ActiveMQ registers a connection
// under: by remote address and, once it has one, by client id.
type connectionView struct{ viewType, name string }

func connectionViews(c engine.ConnectionInfo) []connectionView {
	if c.Protocol == "" {
		return nil // not a client connector's
	}
	var out []connectionView
	if c.Remote != "" {
		out = append(out, connectionView{"remoteAddress", remoteAddress(c)})
	}
	if c.ClientID != "" {
		out = append(out, connectionView{"clientId", c.ClientID})
	}
	return out
}

// remoteAddress is the connection's address as ActiveMQ's transports
// write it ("tcp://127.0.0.1:50000"), "" when unknown.
func remoteAddress(c engine.ConnectionInfo) string {
	if c.Remote == "" {
		return ""
	}
	return "tcp://" + c.Remote
}

// connectionName is a connection's ConnectionViewMBean name
// (connector=clientConnectors,connectorName=...,connectionViewType=...,
// connectionName=...). Wharf names the connector after the protocol,
// which is what ActiveMQ's shipped activemq.xml calls its transport
// connectors.
func (h *Handler) connectionName(c engine.ConnectionInfo, v connectionView) objectName {
	return h.under("connector", "clientConnectors", "connectorName", encodePart(c.Protocol),
		"connectionViewType", v.viewType, "connectionName", encodePart(v.name))
}

// connectionBean is a client connection (ConnectionViewMBean).
func (s *snapshot) connectionBean(c engine.ConnectionInfo, name objectName) *mbean {
	v := func(x any) func() any { return func() any { return x } }
	return &mbean{
		name: name, class: "org.apache.activemq.broker.jmx.ConnectionView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"ClientId", "java.lang.String", "client id for this connection", v(nullable(c.ClientID))},
			{"RemoteAddress", "java.lang.String", "source address for this connection", v(remoteAddress(c))},
			{"UserName", "java.lang.String", "User Name used to authorize creation of this connection", v(nullable(c.User))},
			{"Connected", "boolean", "Connection is connected to the broker.", v(true)},
			{"Active", "boolean", "Connection is active (both connected and receiving messages).", v(true)},
		},
	}
}

// consumerName is a consumer's SubscriptionViewMBean name, as
// BrokerMBeanSupport.createSubscriptionName builds it for a non-durable
// consumer. A client without a client id is named by its connection id,
// as ActiveMQ's STOMP and MQTT converters fill the client id in.
func (h *Handler) consumerName(c engine.ConsumerInfo) objectName {
	client := c.ClientID
	if client == "" {
		client = c.ConnectionID
	}
	return h.under("destinationType", c.Destination.Type.String(), "destinationName", encodePart(c.Destination.Name),
		"endpoint", "Consumer", "clientId", encodePart(client), "consumerId", encodePart(c.ID))
}

// consumerBean is an open non-durable consumer (SubscriptionViewMBean);
// a durable one is its durable subscription's bean.
func (s *snapshot) consumerBean(c engine.ConsumerInfo) *mbean {
	v := func(x any) func() any { return func() any { return x } }
	d := c.Destination
	class := "org.apache.activemq.broker.jmx.QueueSubscriptionView"
	if d.Type.IsTopic() {
		class = "org.apache.activemq.broker.jmx.TopicSubscriptionView"
	}
	return &mbean{
		name: s.h.consumerName(c), class: class, desc: "Information on the management interface of the MBean",
		attrs: append([]attribute{
			{"ClientId", "java.lang.String", "JMS Client id of the Connection the Subscription is on.", v(nullable(c.ClientID))},
			{"ConnectionId", "java.lang.String", "ID of the Connection the Subscription is on.", v(c.ConnectionID)},
			{"DestinationName", "java.lang.String", "The name of the destionation the subscription is on.", v(d.Name)},
			{"Selector", "java.lang.String", "The SQL-92 message header selector or XPATH body selector of the subscription.", v(nullable(c.Selector))},
			{"UserName", "java.lang.String", "User Name used to authorize creation of this Subscription", v(nullable(c.User))},
			{"Active", "boolean", "Subscription is active (connected and receiving messages).", v(true)},
			{"Durable", "boolean", "The subsription is persistent.", v(false)},
			{"NoLocal", "boolean", "The subsription ignores local messages.", v(c.NoLocal)},
			{"Exclusive", "boolean", "The subscriber is exclusive (no other subscribers may receive messages from the destination as long as this one is)", v(c.Exclusive)},
			{"Retroactive", "boolean", "The subscriber is retroactive (tries to receive broadcasted topic messages sent prior to connecting)", v(c.Retroactive)},
			{"Priority", "byte", "The subscription priority", v(int(c.Priority))},
			{"PrefetchSize", "int", "Number of messages to pre-fetch and dispatch to the client.", v(c.Prefetch)},
			{"DestinationQueue", "boolean", "Subscription is on a Queue", v(!d.Type.IsTopic())},
			{"DestinationTopic", "boolean", "Subscription is on a Topic", v(d.Type.IsTopic())},
			{"DestinationTemporary", "boolean", "Subscription is on a temporary Queue/Topic", v(d.Type.IsTemp())},
		}, subCounterAttrs(func() engine.SubCounters { return c.SubCounters })...),
	}
}

// subCounterAttrs are SubscriptionViewMBean's sizes and counters.
func subCounterAttrs(get func() engine.SubCounters) []attribute {
	f := func(x func(engine.SubCounters) any) func() any { return func() any { return x(get()) } }
	return []attribute{
		{"PendingQueueSize", "int", "Number of messages pending delivery.", f(func(c engine.SubCounters) any { return c.Pending })},
		{"DispatchedQueueSize", "int", "Number of messages dispatched awaiting acknowledgement.", f(func(c engine.SubCounters) any { return c.Dispatched })},
		{"MessageCountAwaitingAcknowledge", "int", "Number of messages dispatched awaiting acknowledgement.", f(func(c engine.SubCounters) any { return c.Dispatched })},
		{"DispatchedCounter", "long", "Number of messages that sent to the client.", f(func(c engine.SubCounters) any { return c.DispatchedCounter })},
		{"EnqueueCounter", "long", "Number of messages that matched the subscription.", f(func(c engine.SubCounters) any { return c.EnqueueCounter })},
		{"DequeueCounter", "long", "Number of messages were sent to and acknowledge by the client.", f(func(c engine.SubCounters) any { return c.DequeueCounter })},
	}
}

// producerName is a producer's ProducerViewMBean name
// (BrokerMBeanSupport.createProducerName): endpoint=Producer under its
// destination, or endpoint=dynamicProducer for an anonymous one.
func (h *Handler) producerName(p engine.ProducerInfo) objectName {
	client := p.ClientID
	if client == "" {
		client = p.ConnectionID
	}
	var on objectName
	if p.Destination.IsZero() {
		on = h.under("endpoint", "dynamicProducer")
	} else {
		on = h.under("destinationType", p.Destination.Type.String(), "destinationName", encodePart(p.Destination.Name), "endpoint", "Producer")
	}
	on.props = append(on.props, prop{"clientId", encodePart(client)}, prop{"producerId", encodePart(p.ID)})
	return on
}

// producerBean is a registered producer (ProducerViewMBean).
func (s *snapshot) producerBean(p engine.ProducerInfo) *mbean {
	v := func(x any) func() any { return func() any { return x } }
	d := p.Destination
	return &mbean{
		name: s.h.producerName(p), class: "org.apache.activemq.broker.jmx.ProducerView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"ClientId", "java.lang.String", "JMS Client id of the Connection the Producer is on.", v(nullable(p.ClientID))},
			{"ConnectionId", "java.lang.String", "ID of the Connection the Producer is on.", v(p.ConnectionID)},
			{"ProducerId", "java.lang.String", "ID of the Producer.", v(p.ID)},
			{"DestinationName", "java.lang.String", "The name of the destionation the Producer is on.", v(nullable(d.Name))},
			{"UserName", "java.lang.String", "User Name used to authorize creation of this Producer", v(nullable(p.User))},
			{"DestinationQueue", "boolean", "Producer is on a Queue", v(!d.IsZero() && !d.Type.IsTopic())},
			{"DestinationTopic", "boolean", "Producer is on a Topic", v(!d.IsZero() && d.Type.IsTopic())},
			{"DestinationTemporary", "boolean", "Producer is on a temporary Queue/Topic", v(d.Type.IsTemp())},
		},
	}
}
