package amqp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
)

// The JMS mapping of AMQP messages: ActiveMQ 5.17's JMSMappingInboundTransformer
// (AMQP → JMS), JMSMappingOutboundTransformer under AutoOutboundTransformer
// (JMS → AMQP) and the native transformer they fall back on
// (reference/mappings.md §3.3, §3.4).
//
// What the engine's message cannot hold travels in JMS_AMQP_* properties, as
// ActiveMQ keeps it: the header and properties sections' presence, the
// body's original encoding, content type and encoding, first-acquirer,
// reply-to-group-id, message annotations (JMS_AMQP_MA_<key>), footer
// (JMS_AMQP_FT_<key>) and the transfer's message-format. Outbound, those
// properties go back into their sections, so that a message from an AMQP
// producer reaches an AMQP consumer section by section as it was sent, but
// for what the JMS model loses: unsigned, symbol and decimal values become
// the Java types ActiveMQ widens them to, a header ttl also sets
// absolute-expiry-time, properties.to becomes the qualified name of the
// destination, and the JMS annotations (x-opt-jms-dest, x-opt-jms-reply-to,
// x-opt-jms-msg-type) are added.
//
// Ownership: ToMessage's result shares byte slices (a single data section,
// binary values) with the wire.Message, which itself aliases the delivery's
// payload, so that payload must not be reused once the message is sent.
// FromMessage's result shares the engine message's body and never changes
// it. Both are pure functions, safe from any goroutine.

// Property names of ActiveMQ's AMQP mapping (AmqpMessageSupport).
const (
	propPrefix           = "JMS_AMQP_"
	propHeader           = "JMS_AMQP_HEADER"
	propProperties       = "JMS_AMQP_PROPERTIES"
	propOriginalEncoding = "JMS_AMQP_ORIGINAL_ENCODING"
	propMessageFormat    = "JMS_AMQP_MESSAGE_FORMAT"
	propNative           = "JMS_AMQP_NATIVE"
	propFirstAcquirer    = "JMS_AMQP_FirstAcquirer"
	propContentType      = "JMS_AMQP_ContentType"
	propContentEncoding  = "JMS_AMQP_ContentEncoding"
	propReplyToGroupID   = "JMS_AMQP_ReplyToGroupID"
	prefixMA             = "JMS_AMQP_MA_"
	prefixDA             = "JMS_AMQP_DA_"
	prefixFT             = "JMS_AMQP_FT_"

	// propMessageID keeps the producer's properties.message-id in its
	// AMQPMessageIdHelper string form.
	//
	// DEVIATION: ActiveMQ keeps it as the TextView of the broker-assigned
	// MessageId, so that OpenWire consumers see it as JMSMessageID while
	// KahaDB keys the message by producer id and sequence. The engine's
	// message has one ID, which KahaDB indexes and deduplicates on replay,
	// so a client's id (not unique across producers, often "1", "2"...)
	// cannot be it: the engine assigns m.ID and the AMQP id rides in this
	// property, which FromMessage turns back into properties.message-id.
	propMessageID = "JMS_AMQP_MessageID"

	// propDataStructureType names an advisory's command for AMQP
	// consumers (JMSMappingOutboundTransformer).
	propDataStructureType = "ActiveMqDataStructureType"
)

// Message annotations of the JMS mapping.
const (
	annJMSDest      = "x-opt-jms-dest"
	annJMSReplyTo   = "x-opt-jms-reply-to"
	annJMSMsgType   = "x-opt-jms-msg-type"
	annJMSReplyType = "x-opt-jms-reply-type" // see replyToType
	annToType       = "x-opt-to-type"        // legacy Qpid AMQP 1.0 JMS client
	annReplyType    = "x-opt-reply-type"     // legacy Qpid AMQP 1.0 JMS client
	annDeliveryTime = "x-opt-delivery-time"
	annDelay        = "x-opt-delivery-delay"
	annRepeat       = "x-opt-delivery-repeat"
	annPeriod       = "x-opt-delivery-period"
	annCron         = "x-opt-delivery-cron"
)

// Boxed annotation keys, so that FromMessage does not allocate them.
var (
	keyJMSDest    any = wire.Symbol(annJMSDest)
	keyJMSReplyTo any = wire.Symbol(annJMSReplyTo)
	keyJMSMsgType any = wire.Symbol(annJMSMsgType)
)

// Original body encodings, the values of JMS_AMQP_ORIGINAL_ENCODING
// (AmqpMessageSupport.AMQP_*).
const (
	encUnknown     int16 = 0
	encNull        int16 = 1
	encData        int16 = 2
	encSequence    int16 = 3
	encValueNull   int16 = 4
	encValueString int16 = 5
	encValueBinary int16 = 6
	encValueMap    int16 = 7
	encValueList   int16 = 8
)

// JMS message types as Qpid JMS numbers them in x-opt-jms-msg-type.
const (
	msgTypeMessage int8 = 0
	msgTypeObject  int8 = 1
	msgTypeMap     int8 = 2
	msgTypeBytes   int8 = 3
	msgTypeStream  int8 = 4
	msgTypeText    int8 = 5
)

// Content types ActiveMQ tests for (AmqpMessageSupport).
const (
	contentTypeSerialized  = "application/x-java-serialized-object"
	contentTypeOctetStream = "application/octet-stream"
)

// Prefixes of the string forms of typed message ids (AMQPMessageIdHelper).
const (
	idPrefixString = "AMQP_STRING:"
	idPrefixUUID   = "AMQP_UUID:"
	idPrefixUlong  = "AMQP_ULONG:"
	idPrefixBinary = "AMQP_BINARY:"
)

// ErrPropertyType is returned for a property, annotation or footer value
// JMS cannot hold (timestamp, uuid, list, map, array, described...). The
// error names the property.
var ErrPropertyType = errors.New("amqp: value type not supported by JMS")

// errNative makes ToMessage fall back on the native mapping (a body JMS
// cannot represent), as ActiveMQ's transformer chain does.
var errNative = errors.New("amqp: body not representable in JMS")

// ---------------------------------------------------------------------
// Value conversions

// Conversions of TypeConversionSupport, for the JMS header setters.

func valueString(v message.Value) (string, error) {
	switch v.Kind {
	case message.Bool, message.Byte, message.Short, message.Int, message.Long, message.Float, message.Double, message.String:
		return v.Text(), nil
	}
	return "", fmt.Errorf("%w: %s is not a string", ErrPropertyType, v.Kind)
}

func valueInt(v message.Value) (int32, error) {
	switch v.Kind {
	case message.Byte, message.Short, message.Int:
		return int32(v.Int()), nil
	case message.String:
		n, err := strconv.ParseInt(v.Str(), 10, 32)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not an int", ErrPropertyType, v.Str())
		}
		return int32(n), nil
	}
	return 0, fmt.Errorf("%w: %s is not an int", ErrPropertyType, v.Kind)
}

func valueLong(v message.Value) (int64, error) {
	switch v.Kind {
	case message.Byte, message.Short, message.Int, message.Long:
		return v.Int(), nil
	case message.String:
		n, err := strconv.ParseInt(v.Str(), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %q is not a long", ErrPropertyType, v.Str())
		}
		return n, nil
	}
	return 0, fmt.Errorf("%w: %s is not a long", ErrPropertyType, v.Kind)
}

func valueBool(v message.Value) (bool, error) {
	switch v.Kind {
	case message.Bool:
		return v.Bool(), nil
	case message.String:
		return strings.EqualFold(v.Str(), "true"), nil // Boolean.valueOf
	}
	return false, fmt.Errorf("%w: %s is not a boolean", ErrPropertyType, v.Kind)
}

// valueDeliveryMode is the JMSDeliveryMode setter: an int (2 persistent),
// "PERSISTENT" / "NON_PERSISTENT", or a boolean.
func valueDeliveryMode(v message.Value) (bool, error) {
	if v.Kind == message.String {
		switch s := v.Str(); {
		case strings.EqualFold(s, "PERSISTENT"):
			return true, nil
		case strings.EqualFold(s, "NON_PERSISTENT"):
			return false, nil
		}
	}
	if n, err := valueInt(v); err == nil {
		return n == 2, nil
	} else if v.Kind == message.String {
		return false, err
	}
	return valueBool(v)
}

// ---------------------------------------------------------------------
// Message ids

// idString is the string form of a message-id or correlation-id
// (AMQPMessageIdHelper.toBaseMessageIdString).
func idString(id any) string {
	switch x := id.(type) {
	case string:
		if hasIDPrefix(x) {
			return idPrefixString + x
		}
		return x
	case wire.UUID:
		return idPrefixUUID + x.String()
	case uint64:
		return idPrefixUlong + strconv.FormatUint(x, 10)
	case []byte:
		const hexDigits = "0123456789ABCDEF"
		b := make([]byte, len(idPrefixBinary), len(idPrefixBinary)+2*len(x))
		copy(b, idPrefixBinary)
		for _, c := range x {
			b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
		}
		return string(b)
	}
	return fmt.Sprint(id) // the decoder gives no other type
}

func hasIDPrefix(s string) bool {
	return strings.HasPrefix(s, "AMQP_") && (strings.HasPrefix(s, idPrefixString) || strings.HasPrefix(s, idPrefixUUID) ||
		strings.HasPrefix(s, idPrefixUlong) || strings.HasPrefix(s, idPrefixBinary))
}

// idObject turns a string form back into the typed id
// (AMQPMessageIdHelper.toIdObject); a prefixed form that does not parse
// goes out as the string it is, as JMSMappingOutboundTransformer sends it.
func idObject(s string) any {
	if !strings.HasPrefix(s, "AMQP_") {
		return s
	}
	switch {
	case strings.HasPrefix(s, idPrefixString):
		return s[len(idPrefixString):]
	case strings.HasPrefix(s, idPrefixUUID):
		if u, ok := parseUUID(s[len(idPrefixUUID):]); ok {
			return u
		}
	case strings.HasPrefix(s, idPrefixUlong):
		if n, err := strconv.ParseUint(s[len(idPrefixUlong):], 10, 64); err == nil {
			return n
		}
	case strings.HasPrefix(s, idPrefixBinary):
		if b, ok := parseHex(s[len(idPrefixBinary):]); ok {
			return b
		}
	}
	return s
}

// parseUUID parses the 8-4-4-4-12 form.
//
// DEVIATION: Java's UUID.fromString also takes shortened groups
// ("1-2-3-4-5"); only the canonical form is taken here.
func parseUUID(s string) (wire.UUID, bool) {
	var u wire.UUID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	b, ok := parseHex(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:])
	if !ok {
		return u, false
	}
	copy(u[:], b)
	return u, true
}

func parseHex(s string) ([]byte, bool) {
	if len(s)%2 != 0 {
		return nil, false
	}
	b := make([]byte, len(s)/2)
	for i := range b {
		h, ok1 := hexNibble(s[2*i])
		l, ok2 := hexNibble(s[2*i+1])
		if !ok1 || !ok2 {
			return nil, false
		}
		b[i] = h<<4 | l
	}
	return b, true
}

func hexNibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
