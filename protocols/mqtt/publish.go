package mqtt

import (
	"errors"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/mqtt/wire"
)

// Properties ActiveMQ's MQTT mapping sets on the JMS message.
const (
	// QoSProperty is the int property carrying the publish QoS.
	QoSProperty = "ActiveMQ.MQTT.QoS"
	// ContentTypeProperty carries an MQTT 5 Content Type (ActiveMQ has no
	// MQTT 5; the name follows its MQTT properties).
	ContentTypeProperty = "ActiveMQ.MQTT.ContentType"
)

// maxOutstandingSends bounds the publishes of one connection the engine
// has not completed; past it the connection stops being read until half
// are done (STOMP does the same).
const maxOutstandingSends = 1024

// Tokens tell completions apart: the QoS and packet id of the publish.
func sendToken(qos byte, pid uint16) uint64 { return 1<<24 | uint64(qos)<<16 | uint64(pid) }

func (s *session) onPublish(p *wire.Packet) {
	topic := p.Topic
	if s.version == wire.Version5 && p.Props != nil && p.Props.HasTopicAlias {
		a := p.Props.TopicAlias
		if a == 0 || a > s.srv.opts.TopicAliasMaximum {
			s.protocolError(wire.ReasonTopicAliasInvalid, "topic alias out of range [MQTT-3.3.2-9]")
			return
		}
		x := s.ext()
		if topic != "" {
			if x.aliases == nil {
				x.aliases = map[uint16]string{}
			}
			x.aliases[a] = strings.Clone(topic)
		} else if topic = x.aliases[a]; topic == "" {
			s.protocolError(wire.ReasonProtocolError, "topic alias not set [MQTT-3.3.4-7]")
			return
		}
	}
	if err := wire.ValidTopicName(topic); err != nil {
		// ActiveMQ closes the connection on a topic name with wildcards.
		s.protocolError(wire.ReasonTopicNameInvalid, err.Error())
		return
	}
	if p.QoS > 0 && s.version == wire.Version5 && s.ext().inflightIn.Load() >= int64(s.srv.opts.ReceiveMaximum) {
		s.protocolError(wire.ReasonReceiveMaximumExceeded, "more unacknowledged QoS 1 and 2 publishes than the Receive Maximum [MQTT-3.3.4-9]")
		return
	}
	if p.QoS == 2 {
		s.srv.mu.Lock()
		dup := s.cs.xIfMade().inQoS2[p.PacketID]
		s.srv.mu.Unlock()
		if dup {
			// Stored already; PUBREL has not come. A re-sent PUBLISH is
			// acknowledged again, not stored twice [MQTT-4.3.3-10].
			// DEVIATION: ActiveMQ stores it again.
			s.writeAck(wire.PUBREC, p.PacketID, 0)
			return
		}
	}
	if strings.HasPrefix(topic, "$") && !s.srv.opts.PublishDollarTopics {
		// ActiveMQ drops publishes to $ topics, acknowledging them.
		s.logger().Debug("publish to a $ topic dropped", "topic", topic)
		s.acknowledgePublish(p.QoS, p.PacketID)
		return
	}
	m := s.toMessage(s.publishDest(topic), p.QoS, p.Retain, p.Payload, p.Props)
	var token uint64
	x := s.ext()
	if p.QoS > 0 {
		token = sendToken(p.QoS, p.PacketID)
		x.inflightIn.Add(1)
	}
	x.flow.Started()
	if err := s.conn.Send(m, "", s, token); err != nil {
		x.flow.Done()
		if p.QoS > 0 {
			x.inflightIn.Add(-1)
		}
		s.publishFailed(p.QoS, p.PacketID, err)
	}
}

// acknowledgePublish answers a stored (or dropped) publish: PUBACK for QoS
// 1, PUBREC for QoS 2, after which the packet id waits for PUBREL.
func (s *session) acknowledgePublish(qos byte, pid uint16) {
	switch qos {
	case 1:
		s.writeAck(wire.PUBACK, pid, 0)
	case 2:
		s.srv.mu.Lock()
		cx := s.cs.x()
		if cx.inQoS2 == nil {
			cx.inQoS2 = map[uint16]bool{}
		}
		cx.inQoS2[pid] = true
		s.srv.mu.Unlock()
		s.writeAck(wire.PUBREC, pid, 0)
	}
}

// publishFailed reports a publish the engine refused. MQTT 5 has reason
// codes for it. MQTT 3.x has none: a publish refused for authorization is
// dropped and acknowledged as if stored (PUBACK for QoS 1, PUBREC for QoS
// 2, nothing for QoS 0) and the connection stays open, as ActiveMQ 5.17
// does (MQTTProtocolConverter.createResponseHandler logs "Failed to send
// MQTT Publish" and acknowledges anyway; observed on ActiveMQ 5.17.2,
// conformance/security-reference.md). Other failures close the connection.
func (s *session) publishFailed(qos byte, pid uint16, err error) {
	if ok, held := s.srv.refusedPub.Allow(time.Now()); ok {
		s.logger().Warn("publish refused", "err", err, "suppressed", held)
	}
	if s.version != wire.Version5 {
		if errors.Is(err, engine.ErrNotAuthorized) {
			if qos == 2 {
				// acknowledgePublish leaves a QoS 2 exchange in flight
				// until PUBREL, which takes it out again.
				s.ext().inflightIn.Add(1)
			}
			s.acknowledgePublish(qos, pid)
			return
		}
		s.tc.Close()
		return
	}
	reason := wire.ReasonUnspecifiedError
	switch {
	case errors.Is(err, engine.ErrNotAuthorized):
		reason = wire.ReasonNotAuthorized
	case errors.Is(err, engine.ErrBadDestination):
		reason = wire.ReasonTopicNameInvalid
	case errors.Is(err, engine.ErrResourceAllocation):
		reason = wire.ReasonQuotaExceeded
	}
	switch qos {
	case 1:
		s.writeAck(wire.PUBACK, pid, reason)
	case 2:
		s.writeAck(wire.PUBREC, pid, reason)
	}
}

// Complete is told by the engine when a publish is stored (or accepted).
// It runs on a shard goroutine.
func (s *session) Complete(token uint64, err error) {
	x := s.ext() // made by the publish
	x.flow.Done()
	if token == 0 || s.closed() {
		return
	}
	qos, pid := byte(token>>16&0xff), uint16(token)
	if err != nil {
		x.inflightIn.Add(-1)
		s.publishFailed(qos, pid, err)
		return
	}
	if qos == 1 {
		x.inflightIn.Add(-1)
	}
	s.acknowledgePublish(qos, pid)
}

func (s *session) onPubRel(p *wire.Packet) {
	s.srv.mu.Lock()
	cx := s.cs.xIfMade()
	known := cx.inQoS2[p.PacketID]
	delete(cx.inQoS2, p.PacketID) // a no-op on the nil map of a clientExt never made
	s.srv.mu.Unlock()
	var reason byte
	if known {
		s.ext().inflightIn.Add(-1)
	} else if s.version == wire.Version5 {
		reason = wire.ReasonPacketIDNotFound
	}
	s.writeAck(wire.PUBCOMP, p.PacketID, reason)
}

// toMessage maps a PUBLISH (or a will) to a JMS message as ActiveMQ does
// (MQTTProtocolConverter.convertMessage): a BytesMessage, persistent for
// QoS 1 and 2, with ActiveMQ.MQTT.QoS and, for RETAIN, ActiveMQ.Retain.
// MQTT 5 properties map to their JMS counterparts: Response Topic to
// JMSReplyTo, Correlation Data to JMSCorrelationID, Message Expiry to
// JMSExpiration, User Properties to string properties, and a UTF-8 Payload
// Format to a TextMessage. dest is the engine topic of the PUBLISH's topic
// name (topicFor).
func (s *session) toMessage(dest message.Destination, qos byte, retain bool, payload []byte, pr *wire.Properties) *message.Message {
	now := time.Now().UnixMilli()
	// The message and room for its two usual properties in one
	// allocation: they live as long as each other.
	mp := &struct {
		m     message.Message
		props [2]message.Property
	}{}
	m := &mp.m
	*m = message.Message{
		Destination: dest,
		Priority:    message.DefaultPriority,
		Persistent:  qos > 0,
		Timestamp:   now,
		BodyType:    message.BytesBody,
		Body:        payload,
		Props:       mp.props[:0],
	}
	m.Props = append(m.Props, message.Property{Name: QoSProperty, Value: message.IntValue(int32(qos))})
	if retain {
		m.Props = append(m.Props, message.Property{Name: engine.RetainProperty, Value: message.BoolValue(true)})
	}
	if pr == nil {
		return m
	}
	if pr.HasPayloadFormat && pr.PayloadFormat == 1 {
		m.BodyType = message.TextBody
	}
	if pr.HasMessageExpiry && pr.MessageExpiry > 0 {
		m.Expiration = now + int64(pr.MessageExpiry)*1000
	}
	if pr.ContentType != "" {
		m.Props = append(m.Props, message.Property{Name: ContentTypeProperty, Value: message.StringValue(pr.ContentType)})
	}
	if pr.ResponseTopic != "" {
		m.ReplyTo = s.topicFor(pr.ResponseTopic)
	}
	if pr.CorrelationData != nil {
		m.CorrelationID = string(pr.CorrelationData)
	}
	for _, u := range pr.User {
		m.Props.Set(u.Key, message.StringValue(u.Value))
	}
	return m
}

// willMessage is the message a will publishes.
func (s *session) willMessage(c *wire.Connect) *message.Message {
	payload := append([]byte(nil), c.WillPayload...)
	return s.toMessage(s.topicFor(strings.Clone(c.WillTopic)), c.WillQoS, c.WillRetain, payload, c.WillProps)
}
