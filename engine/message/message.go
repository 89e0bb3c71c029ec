package message

import (
	"sync"
	"sync/atomic"
)

// BodyType is the JMS message type, fixed by the body.
type BodyType uint8

// The JMS message types.
const (
	NoBody     BodyType = iota // javax.jms.Message
	TextBody                   // TextMessage: Body holds UTF-8 text
	BytesBody                  // BytesMessage: Body holds the bytes
	MapBody                    // MapMessage: Map holds the entries
	StreamBody                 // StreamMessage: List holds the values
	ObjectBody                 // ObjectMessage: Body holds the serialized object
)

var bodyNames = [...]string{"message", "text", "bytes", "map", "stream", "object"}

func (b BodyType) String() string {
	if int(b) < len(bodyNames) {
		return bodyNames[b]
	}
	return "body?"
}

// DefaultPriority is JMS's default priority.
const DefaultPriority = 4

// Encoded is a message's original wire form, kept so that delivery over the
// protocol it arrived on need not re-encode it.
type Encoded struct {
	Protocol string // "openwire", "amqp"...; empty when none is kept
	Bytes    []byte
	// memo, set by NewEncoded, remembers the protocol's decoded form of
	// Bytes (Decoded); copies of the Encoded share it.
	memo *decodedMemo
}

type decodedMemo struct {
	uses atomic.Int32
	once sync.Once
	v    any
	// kept: v was given by NewKept, and Decoded shares it from the first
	// call. encode then makes Bytes from v on demand (Marshalled).
	kept   bool
	encode func(any) []byte
}

// NewEncoded is Bytes b in protocol's encoding, with room to remember
// their decoded form (Decoded).
func NewEncoded(protocol string, b []byte) Encoded {
	return Encoded{Protocol: protocol, Bytes: b, memo: &decodedMemo{}}
}

// NewKept is an Encoded in protocol's encoding that keeps v, the message
// as the protocol decoded it on arrival, instead of its bytes: Decoded
// shares v from the first call, and Marshalled makes the bytes with
// encode(v) each time something needs them (a spill). Bytes is empty: code
// that needs the encoded form calls Marshalled. It serves a protocol
// whose messages are mostly delivered and seldom stored, for which encoding
// every message on arrival and decoding it again at delivery costs more
// than the decoded form it keeps.
func NewKept(protocol string, v any, encode func(any) []byte) Encoded {
	return Encoded{Protocol: protocol, memo: &decodedMemo{kept: true, v: v, encode: encode}}
}

// Marshalled is the encoded form: Bytes, or for an Encoded made by NewKept
// the bytes made afresh from its value (nil when that fails; not kept, so
// a spilled message does not hold both forms). Safe from any goroutine;
// the result must not be changed.
func (e Encoded) Marshalled() []byte {
	if len(e.Bytes) > 0 || e.memo == nil || e.memo.encode == nil {
		return e.Bytes
	}
	return e.memo.encode(e.memo.v)
}

// Kept reports whether e holds an encoded form: bytes, or a value whose
// bytes Marshalled makes.
func (e Encoded) Kept() bool {
	return len(e.Bytes) > 0 || (e.memo != nil && e.memo.kept)
}

// Decoded returns decode(e.Bytes). The first call on an Encoded made by
// NewEncoded (or a copy) decodes afresh and returns the caller's own value
// (shared false): most messages are delivered once, and keeping that value
// would only cost a copy and memory. From the second call on, it decodes
// once more, keeps that value with the message and returns it, to any
// goroutine, with shared true: a fan-out decodes its message twice, not
// once per delivery. A shared value must be treated as read-only (copy it
// to change it); it lives as long as the message. A zero-memo Encoded
// decodes afresh on every call; one made by NewKept returns its value,
// shared, without decoding.
func (e Encoded) Decoded(decode func([]byte) any) (v any, shared bool) {
	if e.memo != nil && e.memo.kept {
		return e.memo.v, true
	}
	if e.memo == nil || e.memo.uses.Add(1) == 1 {
		return decode(e.Bytes), false
	}
	e.memo.once.Do(func() { e.memo.v = decode(e.Bytes) })
	return e.memo.v, true
}

// Message is a JMS message as ActiveMQ models it. See the package comment for
// who may change it and when.
type Message struct {
	ID            string // JMSMessageID, "ID:<producer id>:<seq>"
	Destination   Destination
	ReplyTo       Destination
	CorrelationID string
	Type          string // JMSType
	Priority      uint8  // 0-9
	Persistent    bool
	Timestamp     int64 // JMSTimestamp, ms since the epoch
	Expiration    int64 // absolute, ms since the epoch; 0 never expires
	UserID        string
	GroupID       string // JMSXGroupID
	GroupSeq      int32  // JMSXGroupSeq

	// OriginalDestination is set on DLQ copies and virtual-destination copies.
	OriginalDestination Destination

	// RedeliveryCounter as the message was stored or received; the engine's
	// per-delivery count starts from it.
	RedeliveryCounter int32

	Props Properties

	BodyType BodyType
	Body     []byte     // text (UTF-8), bytes or serialized object
	Map      Properties // MapBody entries
	List     []Value    // StreamBody values

	// Retain is set on a message that was published to be retained (MQTT
	// RETAIN, ActiveMQ.Retain) once the engine has taken the property off,
	// so that MQTT 5 retain-as-published can still tell. It is not a JMS
	// header and is not stored.
	Retain bool

	// Origin is the id of the connection that sent the message (for noLocal).
	// It is not a header and never leaves the broker.
	Origin string

	Original Encoded

	// BrokerPath are the ids of the brokers the message was forwarded
	// from by network bridges, the first broker first (OpenWire's
	// Message.brokerPath); nil for a message sent to this broker by a
	// client. Shared by copies: never changed in place.
	BrokerPath []string

	// Advisory is the payload of an advisory message (ActiveMQ's
	// Message.DataStructure), nil for every other message.
	Advisory *Advisory
}

// Advisory describes the command an advisory message carries, neutrally:
// OpenWire marshals it as that command, STOMP renders it as JSON.
type Advisory struct {
	// Command is the OpenWire type: "ConnectionInfo", "RemoveInfo",
	// "DestinationInfo", "ConsumerInfo", "ProducerInfo",
	// "RemoveSubscriptionInfo", or "Message" when Message is the payload
	// (expired, dead-lettered, delivered, consumed and discarded messages).
	Command string
	// Fields are the command's fields by their OpenWire names
	// ("ConnectionId", "ClientId", "Destination", "OperationType" ...).
	Fields Properties
	// Message is the payload message (a copy) for Command "Message".
	Message *Message
}

// Expired reports whether the message's expiration has passed at now (ms).
func (m *Message) Expired(nowMS int64) bool {
	return m.Expiration > 0 && m.Expiration <= nowMS
}

// Size is the approximate memory the message holds, in bytes; usage limits
// and statistics count it.
func (m *Message) Size() int {
	n := 128 + len(m.ID) + len(m.Destination.Name) + len(m.CorrelationID) + len(m.Type) + len(m.GroupID)
	n += len(m.Body)
	for i := range m.Props {
		n += 16 + len(m.Props[i].Name) + len(m.Props[i].Value.str) + len(m.Props[i].Value.raw)
	}
	for i := range m.Map {
		n += 16 + len(m.Map[i].Name) + len(m.Map[i].Value.str) + len(m.Map[i].Value.raw)
	}
	for i := range m.List {
		n += 16 + len(m.List[i].str) + len(m.List[i].raw)
	}
	return n
}

// Clone returns a copy that may be changed without touching m. The body bytes
// are shared: nothing changes them in place.
func (m *Message) Clone() *Message {
	c := *m
	c.Props = append(Properties(nil), m.Props...)
	c.Map = append(Properties(nil), m.Map...)
	c.List = append([]Value(nil), m.List...)
	c.Original = Encoded{}
	return &c
}

// Header names as selectors and JMS see them.
const (
	JMSMessageID      = "JMSMessageID"
	JMSDestination    = "JMSDestination"
	JMSReplyTo        = "JMSReplyTo"
	JMSCorrelationID  = "JMSCorrelationID"
	JMSDeliveryMode   = "JMSDeliveryMode"
	JMSExpiration     = "JMSExpiration"
	JMSPriority       = "JMSPriority"
	JMSTimestamp      = "JMSTimestamp"
	JMSType           = "JMSType"
	JMSRedelivered    = "JMSRedelivered"
	JMSXDeliveryCount = "JMSXDeliveryCount"
	JMSXGroupID       = "JMSXGroupID"
	JMSXGroupSeq      = "JMSXGroupSeq"
	JMSXUserID        = "JMSXUserID"
)

// Field resolves an identifier the way ActiveMQ's selector PropertyExpression
// does: JMS header names first, then properties. redeliveries is the
// delivery's redelivery counter (which lives outside the message). The second
// result is false when the identifier names nothing (SQL NULL).
func (m *Message) Field(name string, redeliveries int32) (Value, bool) {
	if len(name) > 3 && name[0] == 'J' && name[1] == 'M' && name[2] == 'S' {
		switch name {
		case JMSMessageID:
			return strOrNull(m.ID)
		case JMSDestination:
			return strOrNull(m.Destination.String())
		case JMSReplyTo:
			return strOrNull(m.ReplyTo.String())
		case JMSCorrelationID:
			return strOrNull(m.CorrelationID)
		case JMSDeliveryMode:
			if m.Persistent {
				return StringValue("PERSISTENT"), true
			}
			return StringValue("NON_PERSISTENT"), true
		case JMSExpiration:
			return LongValue(m.Expiration), true
		case JMSPriority:
			return IntValue(int32(m.Priority)), true
		case JMSTimestamp:
			return LongValue(m.Timestamp), true
		case JMSType:
			return strOrNull(m.Type)
		case JMSRedelivered:
			return BoolValue(redeliveries > 0), true
		case JMSXDeliveryCount:
			return IntValue(redeliveries + 1), true
		case JMSXGroupID:
			return strOrNull(m.GroupID)
		case JMSXGroupSeq:
			return IntValue(m.GroupSeq), true
		case JMSXUserID:
			return strOrNull(m.UserID)
		}
	}
	return m.Props.Get(name)
}

func strOrNull(s string) (Value, bool) {
	if s == "" {
		return Value{}, false
	}
	return StringValue(s), true
}
