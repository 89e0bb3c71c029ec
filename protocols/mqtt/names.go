package mqtt

import (
	"strings"

	"wharf/engine/message"
)

// convertName swaps MQTT's topic separators and wildcards with ActiveMQ's,
// in both directions (MQTTProtocolSupport.convertMQTTToActiveMQ and back):
// '/' <-> '.', '+' <-> '*', '#' <-> '>'. The swap is its own inverse.
func convertName(s string) string {
	i := strings.IndexAny(s, "/.+*#>")
	if i < 0 {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		switch b[i] {
		case '/':
			b[i] = '.'
		case '.':
			b[i] = '/'
		case '+':
			b[i] = '*'
		case '*':
			b[i] = '+'
		case '#':
			b[i] = '>'
		case '>':
			b[i] = '#'
		}
	}
	return string(b)
}

// virtualTopicPrefix is what the virtual-topic subscription strategy adds
// to every topic.
const virtualTopicPrefix = "VirtualTopic."

// topicFor is the engine topic an MQTT topic name or filter maps to.
func (s *session) topicFor(mqttTopic string) message.Destination {
	name := convertName(mqttTopic)
	if s.srv.opts.VirtualTopics && !strings.HasPrefix(name, virtualTopicPrefix) {
		name = virtualTopicPrefix + name
	}
	return message.TopicDest(name)
}

// mqttTopic is the MQTT topic name of a message delivered from d; orig is
// the message's original destination, which names the topic when d is the
// queue a virtual topic copied it to.
func (s *session) mqttTopic(d, orig message.Destination) string {
	if !d.Type.IsTopic() && orig.Type.IsTopic() {
		d = orig
	}
	name := d.Name
	if s.srv.opts.VirtualTopics {
		name = strings.TrimPrefix(name, virtualTopicPrefix)
	}
	return convertName(name)
}

// topicCache remembers the last conversion of a topic name between its
// MQTT and its engine form, which would otherwise cost two allocations per
// message (convertName copies the name to swap '/' and '.'): a fan-out
// sends every subscriber the same topic, and a publisher mostly publishes
// to one. Each is owned by one side of the session (sessionExt says which
// lock guards it).
//
// Only a conversion that made a new string is cached, and the name it was
// made from is not kept: a later name hits when converting it would give
// conv (swapped), so a miss costs what convertName costs and nothing
// more, and the cache never holds on to a string it did not make (a
// packet's buffer, a decoded frame's).
type topicCache struct {
	conv string // the converted name
	full string // the result: conv, or the engine name conv is the end of
}

// swapped reports whether convertName(a) == b, without converting.
func swapped(a, b string) bool {
	if len(a) != len(b) || a == "" {
		return false
	}
	for i := 0; i < len(a); i++ {
		if nameSwap[a[i]] != b[i] {
			return false
		}
	}
	return true
}

// nameSwap is convertName's byte mapping.
var nameSwap = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for _, p := range [][2]byte{{'/', '.'}, {'+', '*'}, {'#', '>'}} {
		t[p[0]], t[p[1]] = p[1], p[0]
	}
	return t
}()

// publishDest is the engine destination of a PUBLISH to MQTT topic name
// topic: topicFor, through the session's inbound cache. Called with mu
// held.
func (s *session) publishDest(topic string) message.Destination {
	c := &s.ext().inTopic
	if swapped(topic, c.conv) {
		return message.TopicDest(c.full)
	}
	d := s.topicFor(topic)
	if d.Name != topic {
		// topicFor made d.Name (swapped, or prefixed): keep it, and its
		// end, which is the topic converted (convertName keeps lengths).
		c.conv, c.full = d.Name[len(d.Name)-len(topic):], d.Name
	}
	return d
}

// deliveryTopic is mqttTopic(d, orig) through the session's outbound
// cache. Called with outMu held.
func (s *session) deliveryTopic(d, orig message.Destination) string {
	if !d.Type.IsTopic() && orig.Type.IsTopic() {
		d = orig
	}
	name := d.Name
	if s.srv.opts.VirtualTopics {
		name = strings.TrimPrefix(name, virtualTopicPrefix)
	}
	c := &s.ext().outTopic
	if swapped(name, c.conv) {
		return c.full
	}
	t := convertName(name)
	if t != name {
		c.conv, c.full = t, t // made by convertName
	}
	return t
}

// qosNames are the names ActiveMQ gives its durable subscriptions, by QoS
// (the QoS enum of the fusesource client it uses).
var qosNames = [3]string{"AT_MOST_ONCE", "AT_LEAST_ONCE", "EXACTLY_ONCE"}

// durableName is the durable subscription name of filter at qos:
// "AT_LEAST_ONCE:sensors/+/temp".
func durableName(qos byte, filter string) string { return qosNames[qos] + ":" + filter }

// parseDurableName splits a durable subscription name made by durableName.
func parseDurableName(name string) (qos byte, filter string, ok bool) {
	q, f, found := strings.Cut(name, ":")
	if !found || f == "" {
		return 0, "", false
	}
	for i, n := range qosNames {
		if n == q {
			return byte(i), f, true
		}
	}
	return 0, "", false
}
