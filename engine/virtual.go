package engine

import (
	"strings"

	"wharf/engine/message"
	"wharf/engine/selector"
)

// VirtualTopic is ActiveMQ's virtual topic interceptor: a message published
// to a topic matching Name is also copied to every existing queue named
// Prefix + topic + Postfix, where the prefix's "*" stands for a consumer
// group ("Consumer.A.VirtualTopic.Orders").
type VirtualTopic struct {
	Name    string // topic pattern, "VirtualTopic.>" by default
	Prefix  string // "Consumer.*."
	Postfix string // ""
	// SelectorAware copies a message only to queues with a consumer whose
	// selector accepts it. Not supported yet: every queue gets every message.
	SelectorAware bool
}

// DefaultVirtualTopic is the interceptor ActiveMQ installs when none is
// configured (BrokerService.createDefaultDestinationInterceptor).
func DefaultVirtualTopic() VirtualTopic {
	return VirtualTopic{Name: "VirtualTopic.>", Prefix: "Consumer.*."}
}

// Composite is a configured <compositeQueue> or <compositeTopic>: a send to
// it is copied to each forward destination (those with a selector only when
// it matches), and also kept on the composite itself unless ForwardOnly.
type Composite struct {
	ForwardOnly bool
	Forwards    []Forward
}

// Forward is one <forwardTo> target.
type Forward struct {
	Destination message.Destination
	Selector    *selector.Selector
}

// topicOfQueue returns the topic a virtual-topic consumer queue reads,
// and whether the queue name is one.
func (vt *VirtualTopic) topicOfQueue(queue string) (string, bool) {
	prefix := strings.Split(strings.TrimSuffix(vt.Prefix, "."), ".")
	els := strings.Split(queue, ".")
	if vt.Prefix == "" {
		prefix = nil
	}
	if len(els) <= len(prefix) {
		return "", false
	}
	for i, p := range prefix {
		if p != "*" && p != ">" && p != els[i] {
			return "", false
		}
	}
	topic := strings.Join(els[len(prefix):], ".")
	if vt.Postfix != "" {
		if !strings.HasSuffix(topic, vt.Postfix) {
			return "", false
		}
		topic = strings.TrimSuffix(topic, vt.Postfix)
	}
	if topic == "" || !message.MatchName(vt.Name, topic) || message.TopicDest(topic).IsWildcard() {
		return "", false
	}
	return topic, true
}

// registerVirtualQueue adds (or removes) a queue to the virtual-topic
// registry when its name makes it a consumer queue of a virtual topic.
// Called by the queue's shard when the queue is created or removed; the
// registry is the one place every shard reads to fan a virtual topic out,
// hence its mutex (never held across anything but the map update).
func (e *Engine) registerVirtualQueue(d message.Destination, add bool) {
	if d.Type != message.Queue || len(e.opts.VirtualTopics) == 0 {
		return
	}
	for i := range e.opts.VirtualTopics {
		topic, ok := e.opts.VirtualTopics[i].topicOfQueue(d.Name)
		if !ok {
			continue
		}
		e.vtMu.Lock()
		set := e.vtQueues[topic]
		if add {
			if set == nil {
				set = map[message.Destination]struct{}{}
				e.vtQueues[topic] = set
			}
			set[d] = struct{}{}
		} else if set != nil {
			delete(set, d)
			if len(set) == 0 {
				delete(e.vtQueues, topic)
			}
		}
		e.vtMu.Unlock()
		return
	}
}

// virtualCopies returns the consumer queues a message published to topic
// must also go to.
func (e *Engine) virtualCopies(topic message.Destination) []message.Destination {
	if topic.Type != message.Topic || len(e.opts.VirtualTopics) == 0 {
		return nil
	}
	matched := false
	for i := range e.opts.VirtualTopics {
		if message.MatchName(e.opts.VirtualTopics[i].Name, topic.Name) {
			matched = true
			break
		}
	}
	if !matched {
		return nil
	}
	e.vtMu.Lock()
	defer e.vtMu.Unlock()
	set := e.vtQueues[topic.Name]
	if len(set) == 0 {
		return nil
	}
	out := make([]message.Destination, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	return out
}
