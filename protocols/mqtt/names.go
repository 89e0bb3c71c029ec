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
// lock guards it). An empty from means nothing is cached.
type topicCache struct {
	from string
	to   string
}

// publishDest is the engine destination of a PUBLISH to MQTT topic name
// topic: topicFor, through the session's inbound cache. topic may share
// the packet's buffer: the cache keeps a copy. Called with mu held.
func (s *session) publishDest(topic string) message.Destination {
	c := &s.ext().inTopic
	if topic != c.from || topic == "" {
		// From a copy: convertName returns a name without separators
		// as it is, which would keep the packet alive in the cache.
		c.from = strings.Clone(topic)
		d := s.topicFor(c.from)
		c.to = d.Name
		return d
	}
	return message.TopicDest(c.to)
}

// deliveryTopic is mqttTopic(d, orig) through the session's outbound
// cache. Called with outMu held.
func (s *session) deliveryTopic(d, orig message.Destination) string {
	if !d.Type.IsTopic() && orig.Type.IsTopic() {
		d = orig
	}
	c := &s.ext().outTopic
	if d.Name != c.from || d.Name == "" {
		t := s.mqttTopic(d, message.Destination{})
		// A copy: the engine's name may share a larger buffer (a
		// decoded frame) that the cache would otherwise keep alive.
		c.from, c.to = strings.Clone(d.Name), t
		if t == d.Name {
			c.to = c.from
		}
		return t
	}
	return c.to
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
