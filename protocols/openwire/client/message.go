package client

import (
	"fmt"
	"strings"

	"wharf/protocols/openwire/wire"
)

// JMS defaults for new messages (javax.jms.Message.DEFAULT_PRIORITY,
// DEFAULT_DELIVERY_MODE).
const (
	DefaultPriority   = 4
	DefaultPersistent = true
)

// NewMessage returns an ActiveMQMessage without body, persistent with
// priority 4 like a JMS send with default arguments.
func NewMessage() *wire.Message {
	return &wire.Message{Kind: wire.TypeActiveMQMessage, Persistent: DefaultPersistent, Priority: DefaultPriority}
}

// NewTextMessage returns a TextMessage holding text (any Unicode; it is
// sent as Java modified UTF-8).
func NewTextMessage(text string) *wire.Message {
	m := NewMessage()
	m.SetText(text, false)
	return m
}

// NewBytesMessage returns a BytesMessage holding b.
func NewBytesMessage(b []byte) *wire.Message {
	m := NewMessage()
	m.SetBytes(b, false)
	return m
}

// NewMapMessage returns a MapMessage holding v (value types as in
// wire.AppendPrimitive).
func NewMapMessage(v map[string]any) (*wire.Message, error) {
	m := NewMessage()
	if err := m.SetMap(v, false); err != nil {
		return nil, err
	}
	return m, nil
}

// ParseDestination reads "queue://name", "topic://name",
// "temp-queue://name" or "temp-topic://name" (the Java toString forms);
// a name without a scheme is a queue.
func ParseDestination(s string) (*wire.Destination, error) {
	kinds := []struct {
		prefix string
		kind   byte
	}{
		{"queue://", wire.TypeActiveMQQueue},
		{"topic://", wire.TypeActiveMQTopic},
		{"temp-queue://", wire.TypeActiveMQTempQueue},
		{"temp-topic://", wire.TypeActiveMQTempTopic},
	}
	name, kind := s, wire.TypeActiveMQQueue
	for _, k := range kinds {
		if rest, ok := strings.CutPrefix(s, k.prefix); ok {
			name, kind = rest, k.kind
			break
		}
	}
	if name == "" || strings.Contains(name, "://") {
		return nil, fmt.Errorf("%w: %q", ErrBadDestination, s)
	}
	return &wire.Destination{Kind: kind, PhysicalName: name}, nil
}
