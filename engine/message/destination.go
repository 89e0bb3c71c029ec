package message

import "strings"

// DestType is the kind of a destination. Queues and topics live in separate
// namespaces: queue://X and topic://X are different destinations.
type DestType uint8

// The destination kinds, numbered as OpenWire and AMQP's x-opt-jms-dest number
// them (0 queue, 1 topic, 2 temporary queue, 3 temporary topic).
const (
	Queue DestType = iota
	Topic
	TempQueue
	TempTopic
)

// IsTopic reports whether messages sent to the kind fan out to every subscriber.
func (t DestType) IsTopic() bool { return t == Topic || t == TempTopic }

// IsTemp reports whether the kind is a temporary destination owned by a connection.
func (t DestType) IsTemp() bool { return t == TempQueue || t == TempTopic }

// Prefix is the ActiveMQ qualified-name prefix of the kind ("queue://"...).
func (t DestType) Prefix() string {
	switch t {
	case Topic:
		return "topic://"
	case TempQueue:
		return "temp-queue://"
	case TempTopic:
		return "temp-topic://"
	}
	return "queue://"
}

// String names the kind as ActiveMQ's JMX does (Queue, Topic, TempQueue, TempTopic).
func (t DestType) String() string {
	switch t {
	case Topic:
		return "Topic"
	case TempQueue:
		return "TempQueue"
	case TempTopic:
		return "TempTopic"
	}
	return "Queue"
}

// Destination names a queue or topic. The zero value (empty Name) means "none".
type Destination struct {
	Type DestType
	Name string // physical name, e.g. "orders.eu"; "." separates path elements
}

// QueueDest and TopicDest are shorthands for the common kinds.
func QueueDest(name string) Destination { return Destination{Type: Queue, Name: name} }

// TopicDest returns the topic of that name.
func TopicDest(name string) Destination { return Destination{Type: Topic, Name: name} }

// IsZero reports whether d names no destination.
func (d Destination) IsZero() bool { return d.Name == "" }

// String is the qualified name, as AMQP and ActiveMQ's toString write it
// ("queue://orders").
func (d Destination) String() string {
	if d.Name == "" {
		return ""
	}
	return d.Type.Prefix() + d.Name
}

// IsWildcard reports whether the name is a subscription pattern: an element
// that is "*" or ">". A name containing "," is a composite and never a pattern
// (ActiveMQDestination.isPattern).
func (d Destination) IsWildcard() bool {
	if strings.IndexByte(d.Name, ',') >= 0 {
		return false
	}
	// Scanned in place: Send asks this of every message.
	n := d.Name
	for i := 0; i < len(n); i++ {
		if (n[i] == '*' || n[i] == '>') && (i == 0 || n[i-1] == '.') && (i+1 == len(n) || n[i+1] == '.') {
			return true
		}
	}
	return false
}

// ParseQualified parses "queue://X", "topic://X", "temp-queue://X",
// "temp-topic://X"; a name without a prefix takes def.
func ParseQualified(s string, def DestType) Destination {
	for _, t := range []DestType{Queue, Topic, TempQueue, TempTopic} {
		if p := t.Prefix(); strings.HasPrefix(s, p) {
			return Destination{Type: t, Name: s[len(p):]}
		}
	}
	return Destination{Type: def, Name: s}
}

// Matches reports whether the destination d is matched by the pattern p, with
// ActiveMQ's rules (DestinationFilter): "." separates elements, "*" matches one
// element, ">" matches zero or more trailing elements, and queues never match
// topic patterns or the other way round (temporary kinds match their own
// kind only).
func (p Destination) Matches(d Destination) bool {
	if p.IsComposite() {
		for _, el := range p.Elements() {
			if el.Matches(d) {
				return true
			}
		}
		return false
	}
	if p.Type != d.Type {
		return false
	}
	if p.Name == d.Name {
		return true
	}
	if !p.IsWildcard() {
		return false
	}
	return MatchName(p.Name, d.Name)
}

// MatchName matches a dotted name against a dotted pattern.
func MatchName(pattern, name string) bool {
	for {
		pe, prest, pmore := cut(pattern)
		if pe == ">" {
			return true
		}
		ne, nrest, nmore := cut(name)
		if pe != "*" && pe != ne {
			return false
		}
		if !pmore || !nmore {
			if !pmore && !nmore {
				return true
			}
			// "A.>" matches "A": the pattern may end with a lone ">".
			return pmore && prest == ">"
		}
		pattern, name = prest, nrest
	}
}

func cut(s string) (elem, rest string, more bool) {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// IsComposite reports whether the name lists several destinations
// ("A,B,topic://C"): a send goes to each, a consumer takes from all.
func (d Destination) IsComposite() bool { return strings.IndexByte(d.Name, ',') >= 0 }

// Elements returns a composite's destinations, each of the composite's kind
// unless it carries its own prefix (ActiveMQDestination.createDestination);
// a plain destination is its own single element. Empty elements are dropped.
func (d Destination) Elements() []Destination {
	if !d.IsComposite() {
		return []Destination{d}
	}
	var out []Destination
	for _, part := range strings.Split(d.Name, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		out = append(out, ParseQualified(part, d.Type))
	}
	return out
}
