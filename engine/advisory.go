package engine

import (
	"strconv"
	"strings"

	"wharf/engine/message"
)

// Advisory messages, as ActiveMQ's AdvisoryBroker publishes them
// (reference/broker-behaviour.md §3): non-persistent, JMSType "Advisory",
// the broker's origin properties, and the command they report as payload.
// A consumer that subscribes to an advisory topic is first sent the current
// state (connections, destinations, consumers, producers) for that topic,
// addressed to it alone.

// AdvisoryPrefix starts the name of every advisory topic.
const AdvisoryPrefix = "ActiveMQ.Advisory."

// IsAdvisory reports whether d is an advisory topic (for a composite: all
// of its elements are). Advisories are never published about them.
func IsAdvisory(d message.Destination) bool {
	if d.Type != message.Topic {
		return false
	}
	for _, el := range d.Elements() {
		if el.Type != message.Topic || !strings.HasPrefix(el.Name, AdvisoryPrefix) {
			return false
		}
	}
	return true
}

// advisoryName is a destination name as it appears in an advisory topic's
// name: commas become "&sbquo;" (AdvisorySupport.getAdvisoryTopic).
func advisoryName(d message.Destination) string {
	return strings.ReplaceAll(d.Name, ",", "&sbquo;")
}

func queueOrTopic(d message.Destination) string {
	if d.Type.IsTopic() {
		return "Topic"
	}
	return "Queue"
}

// Advisory topic names for a destination.
func consumerAdvisoryTopic(d message.Destination) string {
	return AdvisoryPrefix + "Consumer." + queueOrTopic(d) + "." + advisoryName(d)
}

func producerAdvisoryTopic(d message.Destination) string {
	return AdvisoryPrefix + "Producer." + queueOrTopic(d) + "." + advisoryName(d)
}

func destinationAdvisoryTopic(d message.Destination) string {
	return AdvisoryPrefix + d.Type.String()
}

const connectionAdvisoryTopic = AdvisoryPrefix + "Connection"

func (e *Engine) advisories() bool { return !e.opts.DisableAdvisories }

// newAdvisory builds an advisory message for topic.
func (e *Engine) newAdvisory(topic string, a *message.Advisory, props ...message.Property) *message.Message {
	m := &message.Message{
		ID:          e.brokerID + ":0:0:1:" + strconv.FormatUint(e.advSeq.Add(1), 10),
		Destination: message.TopicDest(topic),
		Type:        "Advisory",
		// AdvisoryBroker.fireAdvisory sets neither JMSPriority nor
		// JMSTimestamp: ActiveMQ's advisories carry 0 for both.
		Priority:  0,
		Timestamp: 0,
		Advisory:  a,
	}
	m.Props = append(m.Props,
		message.Property{Name: "originBrokerName", Value: message.StringValue(e.opts.BrokerName)},
		message.Property{Name: "originBrokerId", Value: message.StringValue(e.brokerID)},
		message.Property{Name: "originBrokerURL", Value: message.StringValue(e.opts.BrokerURL)},
	)
	m.Props = append(m.Props, props...)
	return m
}

// NetworkBridgeAdvisoryTopic is where a network bridge's start and stop
// are announced (AdvisorySupport.getNetworkBridgeAdvisoryTopic).
const NetworkBridgeAdvisoryTopic = AdvisoryPrefix + "NetworkBridge"

// PublishAdvisory publishes an advisory that the engine does not raise
// itself (the network bridges' NetworkBridge advisory, package cluster) on
// the advisory topic topic, with the broker's origin properties and props.
// Nothing is published with advisorySupport off or to a topic outside
// ActiveMQ.Advisory. Safe from any goroutine but a shard's.
func (e *Engine) PublishAdvisory(topic string, a *message.Advisory, props ...message.Property) {
	if !e.advisories() || !IsAdvisory(message.TopicDest(topic)) {
		return
	}
	e.fire(e.newAdvisory(topic, a, props...), nil)
}

// fire publishes an advisory from any goroutine but a shard's.
func (e *Engine) fire(m *message.Message, target *Subscription) {
	e.shardFor(m.Destination).mailbox(command{op: opForward, msg: m, sub: target})
}

// fire publishes an advisory from shard s.
func (s *shard) fire(m *message.Message) {
	ts := s.e.shardFor(m.Destination)
	if ts == s {
		if err := s.send(m); err != nil {
			s.log.Debug("advisory dropped", "dest", m.Destination.String(), "err", err)
		}
		return
	}
	s.forwardTo(ts, command{op: opForward, msg: m})
}

func str(name, v string) message.Property {
	return message.Property{Name: name, Value: message.StringValue(v)}
}

func connectionInfo(c *Conn) *message.Advisory {
	user := ""
	if c.subject != nil {
		user = c.subject.User
	}
	remote := ""
	if c.remote != nil {
		remote = c.remote.String()
	}
	clientID := c.clientID
	if clientID == "" {
		clientID = c.id
	}
	return &message.Advisory{Command: "ConnectionInfo", Fields: message.Properties{
		str("ConnectionId", c.id), str("ClientId", clientID), str("UserName", user), str("ClientIp", remote),
	}}
}

func removeInfo(objectID string) *message.Advisory {
	return &message.Advisory{Command: "RemoveInfo", Fields: message.Properties{str("ObjectId", objectID)}}
}

func destinationInfo(d message.Destination, add bool) *message.Advisory {
	op := int32(0)
	if !add {
		op = 1
	}
	return &message.Advisory{Command: "DestinationInfo", Fields: message.Properties{
		str("Destination", d.String()),
		{Name: "OperationType", Value: message.ByteValue(int8(op))},
	}}
}

// consumerID is a subscription's ActiveMQ-style consumer id.
func (s *Subscription) consumerID() string {
	return s.conn.id + ":1:" + strconv.FormatUint(s.id, 10)
}

func consumerInfo(sub *Subscription) *message.Advisory {
	sp := sub.spec
	a := &message.Advisory{Command: "ConsumerInfo", Fields: message.Properties{
		str("ConsumerId", sub.consumerID()),
		str("Destination", sp.Destination.String()),
		{Name: "PrefetchSize", Value: message.IntValue(int32(sp.Prefetch))},
		str("Selector", sp.Selector),
		str("SubscriptionName", sp.DurableName),
		str("ClientId", sub.conn.clientID),
		{Name: "NoLocal", Value: message.BoolValue(sp.NoLocal)},
		{Name: "Exclusive", Value: message.BoolValue(sp.Exclusive)},
		{Name: "Browser", Value: message.BoolValue(sp.Browser)},
		{Name: "Priority", Value: message.ByteValue(sp.Priority)},
	}}
	if n := sp.Network; n != nil {
		// ActiveMQ's bridge marks its demand consumers so (ConsumerInfo
		// networkSubscription, brokerPath); the ids are comma-separated
		// here (a broker id holds none).
		a.Fields = append(a.Fields,
			message.Property{Name: "NetworkSubscription", Value: message.BoolValue(true)},
			str("BrokerPath", strings.Join(n.BrokerPath, ",")))
		if len(n.ConsumerPath) > 0 {
			a.Fields = append(a.Fields, str("NetworkConsumerPath", strings.Join(n.ConsumerPath, ",")))
		}
	}
	return a
}

// consumerAdded and consumerRemoved publish the Consumer advisory with the
// consumerCount property, counted over the consumers of the same
// destination (pattern) the broker knows.
func (e *Engine) consumerAdded(sub *Subscription) {
	if !e.advisories() || IsAdvisory(sub.spec.Destination) {
		return
	}
	e.mu.Lock()
	e.consumers[sub] = struct{}{}
	n := e.countConsumersLocked(sub.spec.Destination)
	e.mu.Unlock()
	e.fire(e.newAdvisory(consumerAdvisoryTopic(sub.spec.Destination), consumerInfo(sub),
		message.Property{Name: "consumerCount", Value: message.IntValue(int32(n))}), nil)
	e.virtualConsumerAdvisories(sub, false, nil) // virtualsubs.go
}

func (e *Engine) consumerRemoved(sub *Subscription) {
	if !e.advisories() || IsAdvisory(sub.spec.Destination) {
		return
	}
	e.mu.Lock()
	if _, ok := e.consumers[sub]; !ok {
		e.mu.Unlock()
		return
	}
	delete(e.consumers, sub)
	n := e.countConsumersLocked(sub.spec.Destination)
	e.mu.Unlock()
	e.fire(e.newAdvisory(consumerAdvisoryTopic(sub.spec.Destination), removeInfo(sub.consumerID()),
		message.Property{Name: "consumerCount", Value: message.IntValue(int32(n))}), nil)
	e.virtualConsumerAdvisories(sub, true, nil) // virtualsubs.go
}

func (e *Engine) countConsumersLocked(d message.Destination) int {
	n := 0
	for s := range e.consumers {
		if s.spec.Destination == d {
			n++
		}
	}
	return n
}

// Producer is a producer registered for advisories (OpenWire's
// ProducerInfo); STOMP, MQTT and AMQP producers are anonymous.
type Producer struct {
	ID          string
	Destination message.Destination
	conn        *Conn
}

// AddProducer registers a producer with a destination and publishes the
// Producer advisory (producerCount property).
func (c *Conn) AddProducer(d message.Destination) *Producer {
	e := c.e
	c.prodSeq++
	p := &Producer{ID: c.id + ":1:" + strconv.FormatUint(c.prodSeq, 10), Destination: d, conn: c}
	e.mu.Lock()
	e.producers[p] = struct{}{}
	n := e.countProducersLocked(d)
	e.mu.Unlock()
	c.producers = append(c.producers, p)
	if e.advisories() && !d.IsZero() && !IsAdvisory(d) {
		e.fire(e.newAdvisory(producerAdvisoryTopic(d), producerInfo(p),
			message.Property{Name: "producerCount", Value: message.IntValue(int32(n))}), nil)
	}
	return p
}

// RemoveProducer unregisters a producer.
func (c *Conn) RemoveProducer(p *Producer) {
	e := c.e
	e.mu.Lock()
	_, ok := e.producers[p]
	delete(e.producers, p)
	n := e.countProducersLocked(p.Destination)
	e.mu.Unlock()
	for i, x := range c.producers {
		if x == p {
			c.producers = append(c.producers[:i], c.producers[i+1:]...)
			break
		}
	}
	if ok && e.advisories() && !p.Destination.IsZero() && !IsAdvisory(p.Destination) {
		e.fire(e.newAdvisory(producerAdvisoryTopic(p.Destination), removeInfo(p.ID),
			message.Property{Name: "producerCount", Value: message.IntValue(int32(n))}), nil)
	}
}

func (e *Engine) countProducersLocked(d message.Destination) int {
	n := 0
	for p := range e.producers {
		if p.Destination == d {
			n++
		}
	}
	return n
}

func producerInfo(p *Producer) *message.Advisory {
	return &message.Advisory{Command: "ProducerInfo", Fields: message.Properties{
		str("ProducerId", p.ID), str("Destination", p.Destination.String()),
	}}
}

func (e *Engine) connectionAdded(c *Conn) {
	e.mu.Lock()
	e.conns[c] = struct{}{}
	e.mu.Unlock()
	if e.advisories() {
		e.fire(e.newAdvisory(connectionAdvisoryTopic, connectionInfo(c)), nil)
	}
}

func (e *Engine) connectionRemoved(c *Conn) {
	e.mu.Lock()
	delete(e.conns, c)
	e.mu.Unlock()
	if e.advisories() {
		e.fire(e.newAdvisory(connectionAdvisoryTopic, removeInfo(c.id)), nil)
	}
}

// destinationAdvisory reports a destination created or removed (shard).
func (s *shard) destinationAdvisory(d message.Destination, add bool) {
	if !s.e.advisories() || IsAdvisory(d) {
		return
	}
	s.fire(s.e.newAdvisory(destinationAdvisoryTopic(d), destinationInfo(d, add)))
}

// messageAdvisory publishes a copy of m (its body cleared, as
// includeBodyForAdvisory is off by default) on topic, with ActiveMQ's
// (misspelt) orignalMessageId property and any extra ones.
func (s *shard) messageAdvisory(topic string, m *message.Message, props ...message.Property) {
	s.messageCopyAdvisory(topic, m, append(props, str("orignalMessageId", m.ID))...)
}

// messageCopyAdvisory is messageAdvisory without orignalMessageId: the
// MessageDLQd advisory (AdvisoryBroker.sendToDeadLetterQueue fires the copy
// with no property of its own).
func (s *shard) messageCopyAdvisory(topic string, m *message.Message, props ...message.Property) {
	if !s.e.advisories() || m.Advisory != nil || IsAdvisory(m.Destination) {
		return
	}
	c := m.Clone()
	c.Body, c.Map, c.List = nil, nil, nil
	c.Original = message.Encoded{}
	s.fire(s.e.newAdvisory(topic, &message.Advisory{Command: "Message", Message: c}, props...))
}

func (s *shard) expiredAdvisory(d *destination, m *message.Message) {
	prefix := "Expired.Queue."
	if d.d.Type.IsTopic() {
		prefix = "Expired.Topic."
	}
	s.messageAdvisory(AdvisoryPrefix+prefix+d.d.Name, m)
}

// replayAdvisories sends a new subscriber of advisory topics the current
// state, addressed to it alone (AdvisoryBroker.addConsumer).
func (e *Engine) replayAdvisories(sub *Subscription) {
	if !e.advisories() {
		return
	}
	pat := sub.spec.Destination
	wants := func(topic string) bool { return pat.Matches(message.TopicDest(topic)) }
	e.mu.Lock()
	conns := make([]*Conn, 0, len(e.conns))
	for c := range e.conns {
		conns = append(conns, c)
	}
	subs := make([]*Subscription, 0, len(e.consumers))
	// ActiveMQ's replay goes through fireConsumerAdvisory and
	// fireProducerAdvisory, so replayed advisories carry consumerCount and
	// producerCount as the live ones do.
	subCount := make(map[*Subscription]int, len(e.consumers))
	for s := range e.consumers {
		subs = append(subs, s)
		subCount[s] = e.countConsumersLocked(s.spec.Destination)
	}
	prods := make([]*Producer, 0, len(e.producers))
	prodCount := make(map[*Producer]int, len(e.producers))
	for p := range e.producers {
		prods = append(prods, p)
		prodCount[p] = e.countProducersLocked(p.Destination)
	}
	e.mu.Unlock()
	if wants(connectionAdvisoryTopic) {
		for _, c := range conns {
			e.fire(e.newAdvisory(connectionAdvisoryTopic, connectionInfo(c)), sub)
		}
	}
	destTopics := false
	for _, t := range []message.DestType{message.Queue, message.Topic, message.TempQueue, message.TempTopic} {
		if wants(destinationAdvisoryTopic(message.Destination{Type: t})) {
			destTopics = true
		}
	}
	if destTopics {
		for _, d := range e.Destinations() {
			if t := destinationAdvisoryTopic(d); !IsAdvisory(d) && wants(t) {
				e.fire(e.newAdvisory(t, destinationInfo(d, true)), sub)
			}
		}
	}
	for _, p := range prods {
		if t := producerAdvisoryTopic(p.Destination); !p.Destination.IsZero() && wants(t) {
			e.fire(e.newAdvisory(t, producerInfo(p),
				message.Property{Name: "producerCount", Value: message.IntValue(int32(prodCount[p]))}), sub)
		}
	}
	for _, s := range subs {
		if t := consumerAdvisoryTopic(s.spec.Destination); wants(t) && s != sub {
			e.fire(e.newAdvisory(t, consumerInfo(s),
				message.Property{Name: "consumerCount", Value: message.IntValue(int32(subCount[s]))}), sub)
		}
		if s != sub {
			e.virtualConsumerAdvisories(s, false, sub)
		}
	}
	e.replayQueueDemand(sub) // virtualsubs.go
}
