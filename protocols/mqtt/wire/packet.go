package wire

import "strconv"

// Type is an MQTT control packet type: the high nibble of the fixed header's
// first byte (MQTT 5 §2.1.2, MQTT 3.1.1 §2.2.1).
type Type uint8

// Control packet types. 0 is reserved in every version; 15 (AUTH) exists only
// in MQTT 5 and is reserved in 3.1 and 3.1.1.
const (
	CONNECT     Type = 1  // client to server: connection request
	CONNACK     Type = 2  // server to client: connect acknowledgement
	PUBLISH     Type = 3  // both ways: application message
	PUBACK      Type = 4  // both ways: QoS 1 acknowledgement
	PUBREC      Type = 5  // both ways: QoS 2 delivery part 1
	PUBREL      Type = 6  // both ways: QoS 2 delivery part 2
	PUBCOMP     Type = 7  // both ways: QoS 2 delivery part 3
	SUBSCRIBE   Type = 8  // client to server: subscribe request
	SUBACK      Type = 9  // server to client: subscribe acknowledgement
	UNSUBSCRIBE Type = 10 // client to server: unsubscribe request
	UNSUBACK    Type = 11 // server to client: unsubscribe acknowledgement
	PINGREQ     Type = 12 // client to server: keep-alive request
	PINGRESP    Type = 13 // server to client: keep-alive response
	DISCONNECT  Type = 14 // client to server (both ways in 5): disconnect notification
	AUTH        Type = 15 // both ways, MQTT 5 only: authentication exchange
)

var typeNames = [...]string{
	CONNECT: "CONNECT", CONNACK: "CONNACK", PUBLISH: "PUBLISH", PUBACK: "PUBACK",
	PUBREC: "PUBREC", PUBREL: "PUBREL", PUBCOMP: "PUBCOMP", SUBSCRIBE: "SUBSCRIBE",
	SUBACK: "SUBACK", UNSUBSCRIBE: "UNSUBSCRIBE", UNSUBACK: "UNSUBACK",
	PINGREQ: "PINGREQ", PINGRESP: "PINGRESP", DISCONNECT: "DISCONNECT", AUTH: "AUTH",
}

// String returns the packet type's name as the specification spells it
// ("PUBLISH"), or "Type(n)" for a reserved value.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// Protocol levels: the CONNECT packet's Protocol Level byte.
const (
	Version31  byte = 3 // MQTT 3.1, protocol name "MQIsdp"
	Version311 byte = 4 // MQTT 3.1.1, protocol name "MQTT"
	Version5   byte = 5 // MQTT 5.0, protocol name "MQTT"
)

// Protocol names carried by CONNECT [MQTT-3.1.2-1].
const (
	ProtocolName31 = "MQIsdp" // MQTT 3.1
	ProtocolName   = "MQTT"   // MQTT 3.1.1 and 5
)

// Packet is one decoded (or to be encoded) MQTT control packet of any type
// and any version. Only the fields of its Type are meaningful; the others
// are zero after decoding and ignored by the encoder.
//
// Memory: a decoded packet owns its strings and byte slices; they never
// alias the bytes given to Decoder.Feed or the decoder's buffers. All of
// them point into one allocation per packet (the packet's body), so keeping
// any one of them keeps the whole body alive: a session that keeps a string
// much longer than the packet (a topic alias table, a client ID in a
// registry) should strings.Clone it. The byte slices are capped at their
// length, so appending to one never overwrites another field.
type Packet struct {
	Type Type

	// Fixed header flags of PUBLISH (MQTT 5 §3.3.1). QoS is 0, 1 or 2.
	Dup    bool
	QoS    byte
	Retain bool

	// PacketID is the Packet Identifier of PUBLISH with QoS > 0, PUBACK,
	// PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, SUBACK, UNSUBSCRIBE and UNSUBACK.
	// It is never 0 in a decoded packet [MQTT-2.3.1-1].
	PacketID uint16

	// Topic is the PUBLISH Topic Name. It is empty only in an MQTT 5 PUBLISH
	// that carries a Topic Alias; resolving the alias is the session's job.
	Topic string
	// Payload is the PUBLISH payload; nil when empty.
	Payload []byte

	// ReasonCode is the CONNACK return code (3.x, see ConnAccepted...) or
	// reason code (5), and the MQTT 5 reason code of PUBACK, PUBREC, PUBREL,
	// PUBCOMP, DISCONNECT and AUTH. 0 is success (or normal disconnection),
	// also when the packet's short form omitted the byte.
	ReasonCode byte
	// SessionPresent is the CONNACK Session Present flag (3.1.1 and 5).
	SessionPresent bool

	// Connect holds the CONNECT variable header and payload; nil for every
	// other type.
	Connect *Connect

	// Subscriptions are the SUBSCRIBE payload, in packet order (at least one).
	Subscriptions []Subscription
	// ReasonCodes are the SUBACK return codes (granted QoS 0-2, or 0x80
	// failure in 3.1.1) or reason codes (5), and the UNSUBACK reason codes
	// (5 only), one per topic filter in request order.
	ReasonCodes []byte
	// Topics are the UNSUBSCRIBE topic filters, in packet order.
	Topics []string

	// Props are the MQTT 5 properties of the packet (for CONNECT, the
	// connect properties; the will properties are Connect.WillProps). Nil
	// when the packet carried none, and always nil below version 5.
	Props *Properties
}

// Connect is the content of a CONNECT packet after its fixed header
// (MQTT 5 §3.1.2, §3.1.3; MQTT 3.1.1 §3.1.2, §3.1.3).
type Connect struct {
	// ProtocolName is "MQIsdp" (level 3) or "MQTT" (levels 4 and 5).
	ProtocolName string
	// ProtocolLevel is Version31, Version311 or Version5.
	ProtocolLevel byte

	// CleanSession is Clean Session (3.x) or Clean Start (5).
	CleanSession bool
	// KeepAlive is the keep-alive interval in seconds; 0 disables it.
	KeepAlive uint16
	// ClientID is the Client Identifier; it may be empty [MQTT-3.1.3-6].
	ClientID string

	// The will message, present when WillFlag is set. WillQoS is 0..2;
	// WillQoS and WillRetain are zero when WillFlag is not set
	// [MQTT-3.1.2-11]. WillPayload is nil when empty. WillProps are the
	// MQTT 5 will properties, nil when none.
	WillFlag    bool
	WillQoS     byte
	WillRetain  bool
	WillTopic   string
	WillPayload []byte
	WillProps   *Properties

	// Credentials. The flags say whether the fields are present; Password
	// is nil when empty, also when PasswordFlag is set.
	UsernameFlag bool
	Username     string
	PasswordFlag bool
	Password     []byte
}

// Subscription is one topic filter and its options in a SUBSCRIBE packet
// (MQTT 5 §3.8.3.1).
type Subscription struct {
	// Filter is the topic filter as sent, "$share/group/..." included; the
	// decoder does not validate it (see ValidTopicFilter and ParseShared),
	// because an invalid filter is answered in the SUBACK, not by closing.
	Filter string
	// QoS is the requested maximum QoS, 0..2.
	QoS byte
	// MQTT 5 subscription options; zero below version 5.
	NoLocal           bool
	RetainAsPublished bool
	RetainHandling    byte // 0, 1 or 2
}

// UserProperty is one MQTT 5 User Property: a UTF-8 string pair. A packet
// may carry several with the same key; their order is significant
// [MQTT-3.3.2-18].
type UserProperty struct {
	Key, Value string
}

// Properties holds every MQTT 5 property (MQTT 5 §2.2.2.2). A property whose
// zero value is legal has a Has flag saying whether it was present. String
// properties are absent when empty: an empty Content Type, Reason String and
// so on carry no information, so the decoder treats a present-but-empty
// string as absent and the encoder omits empty strings. Binary properties
// (CorrelationData, AuthData) are absent when nil and present, possibly
// empty, when non-nil.
//
// Which properties a packet may carry is fixed by the specification; the
// decoder refuses any other (a malformed packet, §2.2.2.2), and the encoder
// writes whatever is set, so the session must only set legal ones.
type Properties struct {
	// PayloadFormat is the Payload Format Indicator (0x01): 0 unspecified
	// bytes, 1 UTF-8. PUBLISH, will.
	PayloadFormat    byte
	HasPayloadFormat bool
	// MessageExpiry is the Message Expiry Interval (0x02) in seconds.
	// PUBLISH, will.
	MessageExpiry    uint32
	HasMessageExpiry bool
	// ContentType (0x03): PUBLISH, will.
	ContentType string
	// ResponseTopic (0x08): PUBLISH, will.
	ResponseTopic string
	// CorrelationData (0x09): PUBLISH, will.
	CorrelationData []byte
	// SubscriptionIDs are the Subscription Identifiers (0x0B), each
	// 1..268,435,455: one per matching subscription in a PUBLISH, at most
	// one in a SUBSCRIBE.
	SubscriptionIDs []uint32
	// SessionExpiry is the Session Expiry Interval (0x11) in seconds.
	// CONNECT, CONNACK, DISCONNECT.
	SessionExpiry    uint32
	HasSessionExpiry bool
	// AssignedClientID is the Assigned Client Identifier (0x12): CONNACK.
	AssignedClientID string
	// ServerKeepAlive is the Server Keep Alive (0x13) in seconds: CONNACK.
	ServerKeepAlive    uint16
	HasServerKeepAlive bool
	// AuthMethod is the Authentication Method (0x15): CONNECT, CONNACK, AUTH.
	AuthMethod string
	// AuthData is the Authentication Data (0x16): CONNECT, CONNACK, AUTH.
	AuthData []byte
	// RequestProblemInfo is Request Problem Information (0x17), 0 or 1:
	// CONNECT.
	RequestProblemInfo    byte
	HasRequestProblemInfo bool
	// WillDelay is the Will Delay Interval (0x18) in seconds: will.
	WillDelay    uint32
	HasWillDelay bool
	// RequestResponseInfo is Request Response Information (0x19), 0 or 1:
	// CONNECT.
	RequestResponseInfo    byte
	HasRequestResponseInfo bool
	// ResponseInfo is Response Information (0x1A): CONNACK.
	ResponseInfo string
	// ServerReference (0x1C): CONNACK, DISCONNECT.
	ServerReference string
	// ReasonString (0x1F): CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK,
	// UNSUBACK, DISCONNECT, AUTH.
	ReasonString string
	// ReceiveMaximum (0x21), never 0 (count of QoS 1 and 2 PUBLISH in
	// flight): CONNECT, CONNACK.
	ReceiveMaximum    uint16
	HasReceiveMaximum bool
	// TopicAliasMaximum (0x22), count: CONNECT, CONNACK.
	TopicAliasMaximum    uint16
	HasTopicAliasMaximum bool
	// TopicAlias (0x23), never 0: PUBLISH.
	TopicAlias    uint16
	HasTopicAlias bool
	// MaximumQoS (0x24), 0 or 1: CONNACK.
	MaximumQoS    byte
	HasMaximumQoS bool
	// RetainAvailable (0x25), 0 or 1: CONNACK.
	RetainAvailable    byte
	HasRetainAvailable bool
	// MaximumPacketSize (0x27) in bytes, never 0: CONNECT, CONNACK.
	MaximumPacketSize    uint32
	HasMaximumPacketSize bool
	// WildcardSubAvailable is Wildcard Subscription Available (0x28), 0 or
	// 1: CONNACK.
	WildcardSubAvailable    byte
	HasWildcardSubAvailable bool
	// SubIDAvailable is Subscription Identifiers Available (0x29), 0 or 1:
	// CONNACK.
	SubIDAvailable    byte
	HasSubIDAvailable bool
	// SharedSubAvailable is Shared Subscription Available (0x2A), 0 or 1:
	// CONNACK.
	SharedSubAvailable    byte
	HasSharedSubAvailable bool
	// User are the User Properties (0x26) in packet order: every packet
	// type that has properties, and the will.
	User []UserProperty
}
