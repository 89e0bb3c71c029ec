package amqp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"wharf/engine"
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
// Inbound: AMQP → JMS

// ToMessage maps a message a client sent on a sender link to an engine
// message, as JMSMappingInboundTransformer does (mappings.md §3.3), at
// now (ms since the epoch; header ttl and x-opt-delivery-time count from
// it). target is the link's target; for the anonymous relay (the zero
// Destination) properties.to decides, and a message without one comes
// back with a zero Destination for the caller to reject. m.ID is left
// empty for the engine to assign (see propMessageID). A body JMS cannot
// represent (an amqp-value that is not null, string, binary, list or map,
// or whose elements are not JMS types) gives a BytesMessage holding the
// whole encoded message, JMS_AMQP_NATIVE=true, as ActiveMQ's native
// transformer does. An application property, annotation or footer value
// JMS cannot hold is an error wrapping ErrPropertyType; an invalid to or
// reply-to is an error wrapping ErrBadAddress. The transfer's
// message-format is not part of am: record it with SetMessageFormat.
func ToMessage(am *wire.Message, target message.Destination, now int64) (*message.Message, error) {
	if am == nil {
		return nil, errors.New("amqp: no message")
	}
	in := inbound{am: am, target: target, now: now}
	in.scanAnnotations()
	m := &message.Message{Priority: message.DefaultPriority}
	in.m = m
	in.props.list = make(message.Properties, 0, propCount(am))
	if err := in.body(); err != nil {
		if !errors.Is(err, errNative) {
			return nil, err
		}
		// AMQPNativeInboundTransformer: the encoded message as the body
		// of a BytesMessage, then the same header/properties mapping.
		*m = message.Message{Priority: message.DefaultPriority, Timestamp: now, BodyType: message.BytesBody}
		m.Body = am.Encoded()
		if m.Body == nil {
			m.Body = wire.AppendMessage(nil, am)
		}
		in.props.list = in.props.list[:0]
		in.props.index = nil
		in.props.set(propNative, message.BoolValue(true))
	}
	if err := in.populate(); err != nil {
		return nil, err
	}
	if !target.IsZero() {
		// AmqpReceiver: the link's target overrides properties.to.
		m.Destination = target
	}
	if len(in.props.list) > 0 {
		m.Props = in.props.list
	}
	return m, nil
}

// SetMessageFormat records the message-format of the transfer that
// carried m (AMQP 1.0 §2.7.5) as ActiveMQ does: JMS_AMQP_MESSAGE_FORMAT,
// a long, when it is not 0. Call it before the message is sent to the
// engine.
func SetMessageFormat(m *message.Message, format uint32) {
	if format != 0 {
		m.Props.Set(propMessageFormat, message.LongValue(int64(format)))
	}
}

// MessageFormat is the message-format for the transfer carrying m: its
// JMS_AMQP_MESSAGE_FORMAT (converted as TypeConversionSupport converts to
// Long; anything else, or a value outside uint, counts as absent), else 0.
func MessageFormat(m *message.Message) uint32 {
	v, ok := m.Props.Get(propMessageFormat)
	if !ok {
		return 0
	}
	n, err := valueLong(v)
	if err != nil || n < 0 || n > math.MaxUint32 {
		return 0
	}
	return uint32(n)
}

// inbound is the state of one ToMessage call.
type inbound struct {
	am     *wire.Message
	m      *message.Message
	target message.Destination
	now    int64
	props  propSet

	// From the message annotations (scanAnnotations).
	msgType             int8 // x-opt-jms-msg-type; -1 when absent or not 0..5
	destType, replyType message.DestType
	hasDest, hasReply   bool
}

// propCount is a guess at how many properties the message will need.
func propCount(am *wire.Message) int {
	n := 2 + am.ApplicationProperties.Len() + am.MessageAnnotations.Len() + am.Footer.Len()
	if am.Properties != nil {
		n += 4
	}
	return n
}

// scanAnnotations reads the annotations that decide the JMS type and the
// kinds of bare to / reply-to addresses. When several give a kind, the
// current Qpid JMS annotation wins over the older names.
func (in *inbound) scanAnnotations() {
	in.msgType = -1
	ma := in.am.MessageAnnotations
	if ma == nil {
		return
	}
	destRank, replyRank := 0, 0
	for i := range ma.Entries {
		e := &ma.Entries[i]
		k, ok := e.Key.(wire.Symbol)
		if !ok {
			continue
		}
		switch k {
		case annJMSMsgType:
			// DEVIATION: ActiveMQ 5.17 neither produces nor reads
			// x-opt-jms-msg-type (it only carries it as
			// JMS_AMQP_MA_x-opt-jms-msg-type, mappings.md §3.4). Wharf
			// lets it choose the JMS type, as Qpid JMS does on receipt,
			// when the body section can hold that type (see typedBody).
			if n, ok := annotationInt(e.Value); ok && n >= 0 && n <= 5 {
				in.msgType = int8(n)
			}
		case annJMSDest:
			// DEVIATION: ActiveMQ 5.17 only carries x-opt-jms-dest and
			// x-opt-jms-reply-to; Wharf also lets them give the kind of a
			// bare to / reply-to address, as Qpid JMS does on receipt
			// (an address with a queue:// ... prefix keeps its prefix's).
			if t, ok := destTypeByte(e.Value); ok && destRank <= 2 {
				in.destType, in.hasDest, destRank = t, true, 2
			}
		case annToType:
			// DEVIATION: the legacy Qpid AMQP 1.0 JMS client's string
			// annotations ("queue", "topic", "temporary,queue",
			// "temporary,topic"), which ActiveMQ 5.17 only carries.
			if t, ok := legacyDestType(e.Value); ok && destRank <= 1 {
				in.destType, in.hasDest, destRank = t, true, 1
			}
		case annJMSReplyTo:
			if t, ok := destTypeByte(e.Value); ok && replyRank <= 3 {
				in.replyType, in.hasReply, replyRank = t, true, 3
			}
		case annJMSReplyType:
			// DEVIATION: x-opt-jms-reply-type is read as a byte (like
			// x-opt-jms-reply-to) or a legacy type string (like
			// x-opt-reply-type); ActiveMQ 5.17 only carries it.
			t, ok := destTypeByte(e.Value)
			if !ok {
				t, ok = legacyDestType(e.Value)
			}
			if ok && replyRank <= 2 {
				in.replyType, in.hasReply, replyRank = t, true, 2
			}
		case annReplyType:
			if t, ok := legacyDestType(e.Value); ok && replyRank <= 1 {
				in.replyType, in.hasReply, replyRank = t, true, 1
			}
		}
	}
}

// destTypeByte reads an x-opt-jms-dest style value: 0 queue, 1 topic,
// 2 temporary queue, 3 temporary topic.
func destTypeByte(v any) (message.DestType, bool) {
	n, ok := annotationInt(v)
	if !ok || n < 0 || n > 3 {
		return 0, false
	}
	return message.DestType(n), true
}

// legacyDestType reads a comma-separated list of "queue", "topic" and
// "temporary".
func legacyDestType(v any) (message.DestType, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case wire.Symbol:
		s = string(x)
	default:
		return 0, false
	}
	var queue, topic, temp bool
	for _, part := range strings.Split(s, ",") {
		switch strings.TrimSpace(part) {
		case "queue":
			queue = true
		case "topic":
			topic = true
		case "temporary":
			temp = true
		}
	}
	switch {
	case queue == topic:
		return 0, false
	case topic && temp:
		return message.TempTopic, true
	case topic:
		return message.Topic, true
	case temp:
		return message.TempQueue, true
	}
	return message.Queue, true
}

// annotationInt reads any AMQP integer.
func annotationInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), true
	}
	return 0, false
}

// body maps the body section to the JMS type and body (mappings.md §3.3
// body table) and records JMS_AMQP_ORIGINAL_ENCODING. It returns errNative
// for a body JMS cannot represent.
func (in *inbound) body() error {
	am, m := in.am, in.m
	var enc int16
	switch am.BodyKind {
	case wire.BodyNone:
		enc = encNull
	case wire.BodyData:
		enc = encData
	case wire.BodySequence:
		enc = encSequence
	case wire.BodyValue:
		switch am.Value.(type) {
		case nil:
			enc = encValueNull
		case string:
			enc = encValueString
		case []byte:
			enc = encValueBinary
		case *wire.Map:
			enc = encValueMap
		case []any:
			enc = encValueList
		default:
			return errNative
		}
	}
	in.props.set(propOriginalEncoding, message.ShortValue(enc))
	if in.msgType >= 0 {
		ok, err := in.typedBody()
		if ok || err != nil {
			return err
		}
	}
	ct := ""
	if am.Properties != nil {
		ct = string(am.Properties.ContentType)
	}
	switch am.BodyKind {
	case wire.BodyNone:
		switch charset, textual := textualCharset(ct); {
		case ct == contentTypeSerialized:
			m.BodyType = message.ObjectBody
		case ct == contentTypeOctetStream || ct == "":
			m.BodyType = message.BytesBody
		case textual && knownCharset(charset):
			m.BodyType = message.TextBody
		default:
			m.BodyType = message.NoBody
		}
	case wire.BodyData:
		m.Body = in.data()
		switch {
		case ct == contentTypeSerialized:
			m.BodyType = message.ObjectBody
		case ct == contentTypeOctetStream:
			m.BodyType = message.BytesBody
		default:
			// Text when the type is textual, the charset UTF-8 and the
			// bytes decode (a CharacterCodingException makes bytes).
			m.BodyType = message.BytesBody
			if charset, textual := textualCharset(ct); textual && isUTF8(charset) && utf8.Valid(m.Body) {
				m.BodyType = message.TextBody
			}
		}
	case wire.BodySequence:
		m.BodyType = message.StreamBody
		return in.sequence()
	case wire.BodyValue:
		switch v := am.Value.(type) {
		case nil:
			m.BodyType = message.TextBody
		case string:
			m.BodyType, m.Body = message.TextBody, []byte(v)
		case []byte:
			m.BodyType, m.Body = message.BytesBody, v
			if ct == contentTypeSerialized {
				m.BodyType = message.ObjectBody
			}
		case *wire.Map:
			m.BodyType = message.MapBody
			return in.mapBody(v)
		case []any:
			m.BodyType = message.StreamBody
			return in.list(v)
		}
	}
	return nil
}

// typedBody applies x-opt-jms-msg-type when the body section can hold the
// type it names; otherwise it reports false and the section decides, as
// in ActiveMQ.
func (in *inbound) typedBody() (bool, error) {
	am, m := in.am, in.m
	none := am.BodyKind == wire.BodyNone || am.BodyKind == wire.BodyValue && am.Value == nil
	var bin []byte // the bytes of a data or binary body, for the byte-bodied types
	isBin := false
	if in.msgType == msgTypeObject || in.msgType == msgTypeBytes || in.msgType == msgTypeText {
		switch am.BodyKind {
		case wire.BodyData:
			bin, isBin = in.data(), true
		case wire.BodyValue:
			bin, isBin = am.Value.([]byte)
		}
	}
	switch in.msgType {
	case msgTypeMessage:
		if none {
			m.BodyType = message.NoBody
			return true, nil
		}
	case msgTypeObject:
		if none || isBin {
			m.BodyType, m.Body = message.ObjectBody, bin
			return true, nil
		}
	case msgTypeBytes:
		if none || isBin {
			m.BodyType, m.Body = message.BytesBody, bin
			return true, nil
		}
	case msgTypeText:
		if s, ok := am.Value.(string); ok && am.BodyKind == wire.BodyValue {
			m.BodyType, m.Body = message.TextBody, []byte(s)
			return true, nil
		}
		if none || isBin && utf8.Valid(bin) {
			m.BodyType, m.Body = message.TextBody, bin
			return true, nil
		}
	case msgTypeMap:
		if mp, ok := am.Value.(*wire.Map); ok && am.BodyKind == wire.BodyValue {
			m.BodyType = message.MapBody
			return true, in.mapBody(mp)
		}
		if none {
			m.BodyType = message.MapBody
			return true, nil
		}
	case msgTypeStream:
		if am.BodyKind == wire.BodySequence {
			m.BodyType = message.StreamBody
			return true, in.sequence()
		}
		if l, ok := am.Value.([]any); ok && am.BodyKind == wire.BodyValue {
			m.BodyType = message.StreamBody
			return true, in.list(l)
		}
		if none {
			m.BodyType = message.StreamBody
			return true, nil
		}
	}
	return false, nil
}

// data is the message's data sections as one byte slice; a single section
// is shared, not copied.
//
// DEVIATION: Proton-J keeps only the first body section of a message (and
// drops the footer after a second one), so ActiveMQ loses every data or
// amqp-sequence section but the first. Wharf joins them, as AMQP 1.0
// §3.2 makes the body their concatenation.
func (in *inbound) data() []byte {
	d := in.am.Data
	switch len(d) {
	case 0:
		return nil
	case 1:
		return d[0]
	}
	n := 0
	for _, s := range d {
		n += len(s)
	}
	b := make([]byte, 0, n)
	for _, s := range d {
		b = append(b, s...)
	}
	return b
}

// sequence maps amqp-sequence sections to a StreamMessage's values.
func (in *inbound) sequence() error {
	n := 0
	for _, s := range in.am.Sequence {
		n += len(s)
	}
	in.m.List = make([]message.Value, 0, n)
	for _, s := range in.am.Sequence {
		if err := in.appendList(s); err != nil {
			return err
		}
	}
	return nil
}

func (in *inbound) list(l []any) error {
	in.m.List = make([]message.Value, 0, len(l))
	return in.appendList(l)
}

// appendList adds stream values as ActiveMQStreamMessage.writeObject
// takes them; any other element fails the JMS mapping.
func (in *inbound) appendList(l []any) error {
	for _, v := range l {
		mv, ok := bodyValue(v)
		if !ok {
			return errNative
		}
		in.m.List = append(in.m.List, mv)
	}
	return nil
}

// mapBody maps an amqp-value map to a MapMessage's entries as
// ActiveMQMapMessage.setObject takes them: string keys, JMS-typed values,
// binary as byte[]. Anything else fails the JMS mapping (in ActiveMQ, a
// ClassCastException or MessageFormatException that the transformer chain
// answers with the native mapping). A repeated key keeps its first place
// and its last value, as a Java map built from the pairs does.
func (in *inbound) mapBody(mp *wire.Map) error {
	var ps propSet
	ps.list = make(message.Properties, 0, len(mp.Entries))
	for i := range mp.Entries {
		e := &mp.Entries[i]
		k, ok := e.Key.(string)
		if !ok {
			return errNative
		}
		v, ok := bodyValue(e.Value)
		if !ok {
			return errNative
		}
		ps.set(k, v)
	}
	in.m.Map = ps.list
	return nil
}

// bodyValue converts a map or stream element: the types a JMS map or
// stream holds, no unsigned or symbol (ActiveMQ refuses them there).
func bodyValue(v any) (message.Value, bool) {
	switch x := v.(type) {
	case nil:
		return message.Value{}, true
	case bool:
		return message.BoolValue(x), true
	case int8:
		return message.ByteValue(x), true
	case int16:
		return message.ShortValue(x), true
	case int32:
		return message.IntValue(x), true
	case int64:
		return message.LongValue(x), true
	case float32:
		return message.FloatValue(x), true
	case float64:
		return message.DoubleValue(x), true
	case string:
		return message.StringValue(x), true
	case []byte:
		return message.BytesValue(x), true
	case wire.Char:
		if x >= 0 && x <= 0xFFFF {
			return message.CharValue(uint16(x)), true
		}
	}
	return message.Value{}, false
}

// populate maps the header, annotations, application properties,
// properties and footer (InboundTransformer.populateMessage), in
// ActiveMQ's order, which decides what overrides what.
func (in *inbound) populate() error {
	am, m := in.am, in.m
	if h := am.Header; h != nil {
		in.props.set(propHeader, message.BoolValue(true))
		m.Persistent = h.Durable
		m.Priority = jmsPriority(int64(h.Priority))
		if h.FirstAcquirer {
			in.props.set(propFirstAcquirer, message.BoolValue(true))
		}
		m.RedeliveryCounter = int32(h.DeliveryCount)
	}
	if ma := am.MessageAnnotations; ma != nil {
		for i := range ma.Entries {
			e := &ma.Entries[i]
			if err := in.annotation(e); err != nil {
				return fmt.Errorf("message annotation %q: %w", annotationKey(e.Key), err)
			}
		}
	}
	if ap := am.ApplicationProperties; ap != nil {
		for i := range ap.Entries {
			e := &ap.Entries[i]
			name, _ := e.Key.(string) // the decoder allows string keys only
			v, err := propertyValue(e.Value)
			if err != nil {
				return fmt.Errorf("application property %q: %w", name, err)
			}
			if err := in.appProperty(name, v); err != nil {
				return fmt.Errorf("application property %q: %w", name, err)
			}
		}
	}
	if p := am.Properties; p != nil {
		if err := in.properties(p); err != nil {
			return err
		}
	}
	// ttl only when absolute-expiry-time gave no expiration.
	if h := am.Header; h != nil && m.Expiration == 0 && h.TTL > 0 {
		m.Expiration = in.now + h.TTL.Milliseconds()
	}
	if ft := am.Footer; ft != nil {
		for i := range ft.Entries {
			e := &ft.Entries[i]
			key := annotationKey(e.Key)
			v, err := annotationValue(e.Value)
			if err != nil {
				return fmt.Errorf("footer %q: %w", key, err)
			}
			in.props.set(prefixFT+key, v)
		}
	}
	return nil
}

// jmsPriority clamps a priority to JMS's 0-9.
//
// DEVIATION: ActiveMQ casts the AMQP ubyte (0-255) to a Java byte and
// keeps it; the engine's priorities are 0-9, so larger ones become 9 (as
// the OpenWire adapter clamps them).
func jmsPriority(p int64) uint8 {
	return uint8(min(max(p, 0), 9))
}

// annotation maps one message annotation: JMS_AMQP_MA_<key>, and the
// delivery-time family to ActiveMQ's scheduling properties.
func (in *inbound) annotation(e *wire.MapEntry) error {
	key := annotationKey(e.Key)
	name := maName(key)
	if e.Value != nil {
		switch key {
		case annDeliveryTime, annDelay:
			n, err := scheduleNumber(e.Value)
			if err != nil {
				return err
			}
			if key == annDeliveryTime {
				n -= in.now
			}
			if n > 0 {
				in.props.set(engine.ScheduledDelay, message.LongValue(n))
			}
		case annRepeat:
			n, err := scheduleNumber(e.Value)
			if err != nil {
				return err
			}
			if int32(n) > 0 { // Number.intValue
				in.props.set(engine.ScheduledRepeat, message.IntValue(int32(n)))
			}
		case annPeriod:
			n, err := scheduleNumber(e.Value)
			if err != nil {
				return err
			}
			if n > 0 {
				in.props.set(engine.ScheduledPeriod, message.LongValue(n))
			}
		case annCron:
			switch s := e.Value.(type) {
			case string:
				in.props.set(engine.ScheduledCron, message.StringValue(s))
			case wire.Symbol:
				// DEVIATION: ActiveMQ's (String) cast refuses a symbol.
				in.props.set(engine.ScheduledCron, message.StringValue(string(s)))
			default:
				return fmt.Errorf("%w: %s is not a string", ErrPropertyType, typeName(e.Value))
			}
		}
	}
	v, err := annotationValue(e.Value)
	if err != nil {
		return err
	}
	in.props.set(name, v)
	return nil
}

// annotationValue converts an annotation or footer value: as
// propertyValue, and a timestamp as a long.
//
// DEVIATION: ActiveMQ's setObjectProperty refuses the Date Proton-J
// decodes a timestamp to, and the transformer falls back on the native
// mapping, then on the raw one, which keeps no property at all; Wharf
// keeps the milliseconds (TypeConversionSupport's Date → Long), since
// brokers (x-opt-enqueued-time...) put timestamps in annotations.
func annotationValue(v any) (message.Value, error) {
	if t, ok := v.(wire.Timestamp); ok {
		return message.LongValue(int64(t)), nil
	}
	return propertyValue(v)
}

// scheduleNumber reads a delivery-time annotation as Number.longValue.
//
// DEVIATION: a timestamp is taken too (Proton-J decodes it as a Date,
// which ActiveMQ's Number cast refuses).
func scheduleNumber(v any) (int64, error) {
	switch x := v.(type) {
	case float32:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case wire.Timestamp:
		return int64(x), nil
	}
	if n, ok := annotationInt(v); ok {
		return n, nil
	}
	return 0, fmt.Errorf("%w: %s is not a number", ErrPropertyType, typeName(v))
}

// maName is JMS_AMQP_MA_<key>, without allocating for the annotations
// JMS clients send on every message.
func maName(key string) string {
	switch key {
	case annJMSMsgType:
		return prefixMA + annJMSMsgType
	case annJMSDest:
		return prefixMA + annJMSDest
	case annJMSReplyTo:
		return prefixMA + annJMSReplyTo
	case annDeliveryTime:
		return prefixMA + annDeliveryTime
	case annDelay:
		return prefixMA + annDelay
	}
	return prefixMA + key
}

// annotationKey is an annotation key as Java's toString writes it: the
// symbol, or the ulong in decimal.
func annotationKey(k any) string {
	switch x := k.(type) {
	case wire.Symbol:
		return string(x)
	case uint64:
		return strconv.FormatUint(x, 10)
	case string:
		return x
	}
	return fmt.Sprint(k)
}

// appProperty sets one application property. Names of JMS headers go to
// the header, as ActiveMQMessage.setObjectProperty's JMS_PROPERTY_SETERS
// send them (a null value is kept as a property).
func (in *inbound) appProperty(name string, v message.Value) error {
	m := in.m
	if v.Kind == message.Null || len(name) < 7 || name[:3] != "JMS" {
		in.props.set(name, v)
		return nil
	}
	var err error
	switch name {
	case message.JMSXDeliveryCount:
		var n int32
		if n, err = valueInt(v); err == nil {
			m.RedeliveryCounter = n - 1
		}
	case message.JMSXGroupID:
		m.GroupID, err = valueString(v)
	case message.JMSXGroupSeq:
		m.GroupSeq, err = valueInt(v)
	case message.JMSCorrelationID:
		m.CorrelationID, err = valueString(v)
	case message.JMSDeliveryMode:
		m.Persistent, err = valueDeliveryMode(v)
	case message.JMSExpiration:
		m.Expiration, err = valueLong(v)
	case message.JMSPriority:
		var n int32
		if n, err = valueInt(v); err == nil {
			m.Priority = jmsPriority(int64(n))
		}
	case message.JMSRedelivered:
		// The redelivered flag is the engine's, from the delivery count.
		_, err = valueBool(v)
	case message.JMSReplyTo:
		var s string
		if s, err = valueString(v); err == nil {
			m.ReplyTo, err = ParseAddress(s)
		}
	case message.JMSTimestamp:
		m.Timestamp, err = valueLong(v)
	case message.JMSType:
		m.Type, err = valueString(v)
	default:
		in.props.set(name, v)
	}
	return err
}

// properties maps the properties section.
func (in *inbound) properties(p *wire.Properties) error {
	m := in.m
	in.props.set(propProperties, message.BoolValue(true))
	if p.MessageID != nil {
		in.props.set(propMessageID, message.StringValue(idString(p.MessageID)))
	}
	if p.UserID != nil {
		// new String(bytes, UTF_8) replaces malformed input.
		m.UserID = strings.ToValidUTF8(string(p.UserID), "\uFFFD")
	}
	// With a link target, to is not read (AmqpReceiver overrides it).
	if p.To != "" && in.target.IsZero() {
		t := message.Queue
		if in.hasDest {
			t = in.destType
		}
		d, err := parseAddressAs(p.To, t)
		if err != nil {
			return fmt.Errorf("properties.to: %w", err)
		}
		m.Destination = d
	}
	if p.Subject != "" {
		m.Type = p.Subject
	}
	if p.ReplyTo != "" {
		t := message.Queue
		if in.hasReply {
			t = in.replyType
		}
		d, err := parseAddressAs(p.ReplyTo, t)
		if err != nil {
			return fmt.Errorf("properties.reply-to: %w", err)
		}
		m.ReplyTo = d
	}
	if p.CorrelationID != nil {
		m.CorrelationID = idString(p.CorrelationID)
	}
	if p.ContentType != "" {
		in.props.set(propContentType, message.StringValue(string(p.ContentType)))
	}
	if p.ContentEncoding != "" {
		in.props.set(propContentEncoding, message.StringValue(string(p.ContentEncoding)))
	}
	if p.CreationTime != 0 {
		m.Timestamp = int64(p.CreationTime)
	}
	if p.GroupID != "" {
		m.GroupID = p.GroupID
	}
	if p.GroupSequence != 0 {
		m.GroupSeq = int32(p.GroupSequence) // Java intValue
	}
	if p.ReplyToGroupID != "" {
		in.props.set(propReplyToGroupID, message.StringValue(p.ReplyToGroupID))
	}
	if p.AbsoluteExpiryTime != 0 {
		m.Expiration = int64(p.AbsoluteExpiryTime)
	}
	return nil
}

// propertyValue converts an application property, annotation or footer
// value as InboundTransformer.setProperty does: unsigned integers widened
// to the smallest Java type that holds them (a ulong above 2^63-1 wraps,
// as Java's longValue does), symbols as strings, decimals as float
// (decimal32) or double; the signed integers, bool, float, double, string
// and char as they are. Anything else is an error wrapping
// ErrPropertyType that names the AMQP type; callers add the property.
func propertyValue(v any) (message.Value, error) {
	switch x := v.(type) {
	case uint8:
		if x <= math.MaxInt8 {
			return message.ByteValue(int8(x)), nil
		}
		return message.ShortValue(int16(x)), nil
	case uint16:
		if x <= math.MaxInt16 {
			return message.ShortValue(int16(x)), nil
		}
		return message.IntValue(int32(x)), nil
	case uint32:
		if x <= math.MaxInt32 {
			return message.IntValue(int32(x)), nil
		}
		return message.LongValue(int64(x)), nil
	case uint64:
		return message.LongValue(int64(x)), nil
	case wire.Symbol:
		return message.StringValue(string(x)), nil
	case []byte:
		// DEVIATION: ActiveMQ stores Proton's Binary.toString() (an
		// escaped rendering) as a string property; the engine's values
		// hold bytes, so the bytes are kept and go out as binary again.
		return message.BytesValue(x), nil
	case wire.Decimal32:
		// DEVIATION: Proton-J decodes every decimal as 0 (its
		// Decimal32/64/128 conversions are unimplemented); Wharf decodes
		// the IEEE 754-2008 BID value.
		return message.FloatValue(float32(decimalFloat(uint64(binary.BigEndian.Uint32(x[:])), 0, 32))), nil
	case wire.Decimal64:
		return message.DoubleValue(decimalFloat(binary.BigEndian.Uint64(x[:]), 0, 64)), nil
	case wire.Decimal128:
		return message.DoubleValue(decimalFloat(binary.BigEndian.Uint64(x[8:]), binary.BigEndian.Uint64(x[:8]), 128)), nil
	}
	if mv, ok := bodyValue(v); ok {
		return mv, nil
	}
	if c, ok := v.(wire.Char); ok {
		return message.Value{}, fmt.Errorf("%w: char %U is outside Java's 16-bit char", ErrPropertyType, rune(c))
	}
	return message.Value{}, fmt.Errorf("%w: %s", ErrPropertyType, typeName(v))
}

// typeName names the AMQP type of a value for error messages.
func typeName(v any) string {
	if t, ok := wire.TypeOf(v); ok {
		return t.String()
	}
	switch v.(type) {
	case wire.Described:
		return "described value"
	}
	return fmt.Sprintf("%T", v)
}

// decimalFloat converts an IEEE 754-2008 decimal in the binary integer
// decimal encoding (AMQP 1.0 §1.6.13-§1.6.15) to the nearest float64. lo
// holds a decimal32 or decimal64, or the low half of a decimal128 whose
// high half is hi. A non-canonical coefficient is zero (IEEE 754-2008
// §3.5.2).
func decimalFloat(lo, hi uint64, bits int) float64 {
	var sign bool
	var exp int
	var coef, maxCoef *big.Int
	var c uint64
	switch bits {
	case 32:
		b := uint32(lo)
		sign = b>>31 != 0
		switch {
		case b>>27&0xF == 0xF:
			return specialDecimal(sign, b>>26&1 != 0)
		case b>>29&3 == 3:
			exp, c = int(b>>21&0xFF), uint64(b&0x1FFFFF|0x800000)
		default:
			exp, c = int(b>>23&0xFF), uint64(b&0x7FFFFF)
		}
		if c > 9999999 {
			c = 0
		}
		exp -= 101
	case 64:
		sign = lo>>63 != 0
		switch {
		case lo>>59&0xF == 0xF:
			return specialDecimal(sign, lo>>58&1 != 0)
		case lo>>61&3 == 3:
			exp, c = int(lo>>51&0x3FF), lo&(1<<51-1)|1<<53
		default:
			exp, c = int(lo>>53&0x3FF), lo&(1<<53-1)
		}
		if c > 9999999999999999 {
			c = 0
		}
		exp -= 398
	default:
		sign = hi>>63 != 0
		switch {
		case hi>>59&0xF == 0xF:
			return specialDecimal(sign, hi>>58&1 != 0)
		case hi>>61&3 == 3:
			// The coefficient would exceed 10^34-1: non-canonical.
			return signed(0, sign)
		}
		exp = int(hi>>49&0x3FFF) - 6176
		coef = new(big.Int).SetUint64(hi & (1<<49 - 1))
		coef.Lsh(coef, 64).Or(coef, new(big.Int).SetUint64(lo))
		maxCoef = new(big.Int).Exp(big.NewInt(10), big.NewInt(34), nil)
		if coef.Cmp(maxCoef) >= 0 {
			return signed(0, sign)
		}
	}
	digits := strconv.FormatUint(c, 10)
	if coef != nil {
		digits = coef.String()
	}
	size := 64
	if bits == 32 {
		size = 32
	}
	f, _ := strconv.ParseFloat(digits+"e"+strconv.Itoa(exp), size) // ±Inf or 0 out of range
	return signed(f, sign)
}

func specialDecimal(sign, nan bool) float64 {
	if nan {
		return math.NaN()
	}
	return signed(math.Inf(1), sign)
}

func signed(f float64, neg bool) float64 {
	if neg {
		return -f
	}
	return f
}

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

// ---------------------------------------------------------------------
// Content types (AmqpContentTypeSupport)

// textualCharset parses a content type: whether it is textual (text/*,
// application/ xml, json, javascript, ecmascript, xml-dtd, +xml, +json),
// and its charset parameter, upper case, "UTF-8" when absent.
func textualCharset(ct string) (charset string, textual bool) {
	if strings.TrimSpace(ct) == "" {
		return "", false
	}
	typ, rest, ok := strings.Cut(ct, "/")
	if !ok {
		return "", false
	}
	typ = strings.ToLower(strings.TrimSpace(typ))
	sub, params, _ := strings.Cut(strings.ToLower(rest), ";")
	sub = strings.TrimSpace(sub)
	if sub == "" {
		return "", false
	}
	switch {
	case typ == "text":
	case typ == "application" && (sub == "xml" || sub == "json" || sub == "javascript" || sub == "ecmascript" ||
		sub == "xml-dtd" || strings.HasSuffix(sub, "+xml") || strings.HasSuffix(sub, "+json")):
	default:
		return "", false
	}
	charset = "UTF-8"
	for _, p := range strings.Split(params, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(name), "charset") {
			if len(value) > 1 && value[0] == '"' && value[len(value)-1] == '"' {
				value = value[1 : len(value)-1]
			}
			charset = strings.ToUpper(value)
			break
		}
	}
	return charset, true
}

// isUTF8 reports whether Java's Charset.forName(charset) is UTF-8.
func isUTF8(charset string) bool {
	return charset == "UTF-8" || charset == "UTF8" || charset == "UNICODE-1-1-UTF-8"
}

// knownCharset approximates Charset.forName succeeding: the charsets every
// Java runtime has, by their usual names.
//
// DEVIATION: Java knows many more charsets; a textual bodiless message
// naming another one is a plain Message here, a TextMessage in ActiveMQ.
func knownCharset(charset string) bool {
	switch charset {
	case "UTF-8", "UTF8", "UNICODE-1-1-UTF-8", "US-ASCII", "ASCII", "ISO-8859-1", "ISO8859-1", "ISO8859_1", "LATIN1",
		"UTF-16", "UTF-16BE", "UTF-16LE", "UTF-32", "UTF-32BE", "UTF-32LE", "WINDOWS-1252", "CP1252":
		return true
	}
	return false
}

// ---------------------------------------------------------------------
// Outbound: JMS → AMQP

// outMessage holds a mapped message and its usual sections in one
// allocation.
type outMessage struct {
	msg   wire.Message
	hdr   wire.Header
	props wire.Properties
	ma    wire.Map
	ap    wire.Map
	data  [1][]byte
	maBuf [4]wire.MapEntry
	apBuf [6]wire.MapEntry
}

// FromMessage maps an engine message to the AMQP message sent to a
// client's receiver link, as JMSMappingOutboundTransformer does
// (mappings.md §3.4), at now (ms since the epoch, for the header ttl).
// redeliveries is the delivery's redelivery counter (header
// delivery-count). A message ToMessage kept in native form
// (JMS_AMQP_NATIVE) goes out as it came, with its delivery-count updated
// (AMQPNativeOutboundTransformer). Send it with the message-format
// MessageFormat(m). The result shares m's body and must not be changed.
func FromMessage(m *message.Message, redeliveries int32, now int64) *wire.Message {
	if m.BodyType == message.BytesBody {
		if v, ok := m.Props.Get(propNative); ok && v.Bool() {
			if am, err := wire.DecodeMessage(m.Body); err == nil {
				if redeliveries > 0 {
					if am.Header == nil {
						am.Header = wire.NewHeader()
					}
					am.Header.DeliveryCount = uint32(redeliveries)
				}
				return am
			}
			// Not an AMQP message after all: map it as a BytesMessage.
		}
	}
	o := &outMessage{}
	am := &o.msg
	h := &o.hdr
	h.Priority = m.Priority
	needHeader := m.Persistent || m.Priority != message.DefaultPriority || m.Expiration != 0 || redeliveries > 0
	h.Durable = m.Persistent
	if m.Expiration != 0 {
		ttl := min(max(m.Expiration-now, 1), math.MaxUint32)
		h.TTL = time.Duration(ttl) * time.Millisecond
		o.props.AbsoluteExpiryTime = wire.Timestamp(m.Expiration)
	}
	if redeliveries > 0 {
		h.DeliveryCount = uint32(redeliveries)
	}
	p := &o.props
	am.Properties = p
	p.Subject = m.Type
	p.To = FormatAddress(m.Destination)
	p.ReplyTo = FormatAddress(m.ReplyTo)
	if m.CorrelationID != "" {
		p.CorrelationID = idObject(m.CorrelationID)
	}
	p.CreationTime = wire.Timestamp(m.Timestamp)
	if m.UserID != "" {
		p.UserID = []byte(m.UserID)
	}
	p.GroupID = m.GroupID
	if m.GroupSeq > 0 {
		p.GroupSequence = uint32(m.GroupSeq)
	}

	// The JMS annotations, computed from the message: they take the place
	// of carried JMS_AMQP_MA_ copies, so that a message whose destination
	// changed (a DLQ, a composite) does not carry a stale type.
	//
	// DEVIATION: ActiveMQ puts the carried copy last, over the computed
	// value.
	dest, reply := m.Destination, m.ReplyTo
	msgType := jmsMsgType(m)
	var haveDest, haveReply, haveType bool
	o.ma.Entries = o.maBuf[:0]
	o.ap.Entries = o.apBuf[:0]
	enc, msgID := encUnknown, ""
	var da, ft *wire.Map
	for i := range m.Props {
		pr := &m.Props[i]
		name := pr.Name
		if !strings.HasPrefix(name, propPrefix) {
			if strings.HasPrefix(name, "AMQ_SCHEDULED_") {
				continue // ActiveMQ strips them
			}
			if name == "JMSXGroupFirstForConsumer" {
				continue // a message field in ActiveMQ, not a property: never sent
			}
			o.ap.Entries = append(o.ap.Entries, wire.MapEntry{Key: name, Value: wireValue(pr.Value)})
			continue
		}
		switch rest := name[len(propPrefix):]; {
		case rest == "NATIVE", rest == "MESSAGE_FORMAT":
		case rest == "ORIGINAL_ENCODING":
			if pr.Value.IsInteger() {
				enc = int16(pr.Value.Int())
			}
		case rest == "HEADER":
			needHeader = true
		case rest == "PROPERTIES":
		case rest == "MessageID":
			msgID = pr.Value.Text()
		case rest == "FirstAcquirer":
			b, _ := valueBool(pr.Value)
			h.FirstAcquirer, needHeader = b, true
		case rest == "ContentType":
			p.ContentType = wire.Symbol(pr.Value.Text())
		case rest == "ContentEncoding":
			p.ContentEncoding = wire.Symbol(pr.Value.Text())
		case rest == "ReplyToGroupID":
			p.ReplyToGroupID = pr.Value.Text()
		case strings.HasPrefix(rest, "MA_"):
			key := rest[3:]
			switch {
			case key == annJMSDest && !dest.IsZero():
				o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: keyJMSDest, Value: int8(dest.Type)})
				haveDest = true
			case key == annJMSReplyTo && !reply.IsZero():
				o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: keyJMSReplyTo, Value: int8(reply.Type)})
				haveReply = true
			case key == annJMSMsgType:
				o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: keyJMSMsgType, Value: msgType})
				haveType = true
			default:
				o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: wire.Symbol(key), Value: wireValue(pr.Value)})
			}
		case strings.HasPrefix(rest, "DA_"):
			if da == nil {
				da = &wire.Map{}
			}
			da.Entries = append(da.Entries, wire.MapEntry{Key: wire.Symbol(rest[3:]), Value: wireValue(pr.Value)})
		case strings.HasPrefix(rest, "FT_"):
			if ft == nil {
				ft = &wire.Map{}
			}
			ft.Entries = append(ft.Entries, wire.MapEntry{Key: wire.Symbol(rest[3:]), Value: wireValue(pr.Value)})
		default:
			// An unknown JMS_AMQP_ name is an application property, as
			// in ActiveMQ.
			o.ap.Entries = append(o.ap.Entries, wire.MapEntry{Key: name, Value: wireValue(pr.Value)})
		}
	}
	// DEVIATION: x-opt-jms-msg-type is produced for every message (Qpid
	// JMS's values); ActiveMQ 5.17 only carries a producer's copy.
	if !haveType {
		o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: keyJMSMsgType, Value: msgType})
	}
	if !haveDest && !dest.IsZero() {
		o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: keyJMSDest, Value: int8(dest.Type)})
	}
	if !haveReply && !reply.IsZero() {
		o.ma.Entries = append(o.ma.Entries, wire.MapEntry{Key: keyJMSReplyTo, Value: int8(reply.Type)})
	}
	am.MessageAnnotations = &o.ma
	am.DeliveryAnnotations = da
	am.Footer = ft
	if needHeader {
		am.Header = h
	}
	if msgID != "" {
		p.MessageID = idObject(msgID)
	} else if m.ID != "" {
		p.MessageID = m.ID
	}
	if m.Advisory != nil {
		o.ap.Entries = append(o.ap.Entries, wire.MapEntry{Key: propDataStructureType, Value: advisoryType(m.Advisory)})
	}
	if len(o.ap.Entries) > 0 {
		am.ApplicationProperties = &o.ap
	}
	o.body(m, enc)
	return am
}

// jmsMsgType is the x-opt-jms-msg-type of m's JMS type. An advisory's
// body is a map (see advisoryMap), so it is announced as a MapMessage, the
// type Qpid JMS infers for that body when the annotation is absent.
func jmsMsgType(m *message.Message) int8 {
	if m.Advisory != nil {
		return msgTypeMap
	}
	switch m.BodyType {
	case message.TextBody:
		return msgTypeText
	case message.BytesBody:
		return msgTypeBytes
	case message.MapBody:
		return msgTypeMap
	case message.StreamBody:
		return msgTypeStream
	case message.ObjectBody:
		return msgTypeObject
	}
	return msgTypeMessage
}

// body writes the body section for m's JMS type, honouring the original
// encoding (JMSMappingOutboundTransformer.convertBody).
//
// DEVIATION: ActiveMQ honours a bodiless original (encNull) for bytes and
// text only, and an amqp-value null (encValueNull) for text only. Wharf
// gives every empty message of those encodings the section it came with
// (no body, amqp-value null), and a text that came as amqp-value binary
// (which only x-opt-jms-msg-type makes) goes out as one, so that the
// JMS type annotations round-trip.
func (o *outMessage) body(m *message.Message, enc int16) {
	am := &o.msg
	if m.Advisory != nil {
		am.BodyKind, am.Value = wire.BodyValue, advisoryMap(m.Advisory)
		return
	}
	empty := len(m.Body) == 0 && len(m.Map) == 0 && len(m.List) == 0
	switch {
	case enc == encNull && empty:
		return // no body section
	case enc == encValueNull && empty:
		am.BodyKind = wire.BodyValue
		return
	}
	switch m.BodyType {
	case message.BytesBody:
		switch enc {
		case encNull:
		case encValueBinary:
			am.BodyKind, am.Value = wire.BodyValue, nonNil(m.Body)
		default:
			o.data[0] = nonNil(m.Body)
			am.BodyKind, am.Data = wire.BodyData, o.data[:]
		}
	case message.TextBody:
		switch enc {
		case encNull:
		case encData:
			o.data[0] = nonNil(m.Body)
			am.BodyKind, am.Data = wire.BodyData, o.data[:]
		case encValueBinary:
			am.BodyKind, am.Value = wire.BodyValue, nonNil(m.Body)
		default:
			am.BodyKind, am.Value = wire.BodyValue, string(m.Body)
		}
	case message.MapBody:
		mp := &wire.Map{Entries: make([]wire.MapEntry, len(m.Map))}
		for i := range m.Map {
			mp.Entries[i] = wire.MapEntry{Key: m.Map[i].Name, Value: wireValue(m.Map[i].Value)}
		}
		am.BodyKind, am.Value = wire.BodyValue, mp
	case message.StreamBody:
		l := make([]any, len(m.List))
		for i := range m.List {
			l[i] = wireValue(m.List[i])
		}
		if enc == encSequence {
			am.BodyKind, am.Sequence = wire.BodySequence, [][]any{l}
		} else {
			am.BodyKind, am.Value = wire.BodyValue, l
		}
	case message.ObjectBody:
		if enc == encValueBinary {
			am.BodyKind, am.Value = wire.BodyValue, nonNil(m.Body)
		} else {
			o.data[0] = nonNil(m.Body)
			am.BodyKind, am.Data = wire.BodyData, o.data[:]
		}
		// A hint for AMQP clients of what a non-AMQP object is.
		if o.props.ContentType == "" {
			o.props.ContentType = contentTypeSerialized
		}
	}
}

// nonNil keeps an empty body a binary rather than a null.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// wireValue converts a property or body value to the AMQP type of its
// Java type.
func wireValue(v message.Value) any {
	switch v.Kind {
	case message.Bool:
		return v.Bool()
	case message.Byte:
		return int8(v.Int())
	case message.Short:
		return int16(v.Int())
	case message.Int:
		return int32(v.Int())
	case message.Long:
		return v.Int()
	case message.Float:
		return float32(v.Float())
	case message.Double:
		return v.Float()
	case message.String:
		return v.Str()
	case message.Bytes:
		return nonNil(v.Raw())
	case message.Char:
		return wire.Char(v.Int())
	}
	return nil
}

// advisoryType names an advisory's command as the Java class's simple
// name (ActiveMqDataStructureType): the command, or the payload message's
// class.
func advisoryType(a *message.Advisory) string {
	if a.Command != "Message" || a.Message == nil {
		return a.Command
	}
	switch a.Message.BodyType {
	case message.TextBody:
		return "ActiveMQTextMessage"
	case message.BytesBody:
		return "ActiveMQBytesMessage"
	case message.MapBody:
		return "ActiveMQMapMessage"
	case message.StreamBody:
		return "ActiveMQStreamMessage"
	case message.ObjectBody:
		return "ActiveMQObjectMessage"
	}
	return "ActiveMQMessage"
}

// advisoryMap is an advisory's body: its command's fields by their
// OpenWire names.
//
// DEVIATION: ActiveMQ writes a body for ConnectionInfo (ConnectionId,
// ClientId, ClientIp, UserName and five flags) and RemoveInfo (the removed
// id's parts) only, and no body for other commands; Wharf writes every
// advisory's fields as the engine gives them (RemoveInfo as ObjectId).
func advisoryMap(a *message.Advisory) *wire.Map {
	mp := &wire.Map{Entries: make([]wire.MapEntry, len(a.Fields))}
	for i := range a.Fields {
		mp.Entries[i] = wire.MapEntry{Key: a.Fields[i].Name, Value: wireValue(a.Fields[i].Value)}
	}
	return mp
}

// ---------------------------------------------------------------------

// propSet builds a property list with Java map semantics (a repeated name
// keeps its place and takes the new value) in linear time: past a few
// entries it indexes the names.
type propSet struct {
	list  message.Properties
	index map[string]int
}

// propIndexAt is the length past which propSet keeps an index.
const propIndexAt = 16

func (p *propSet) set(name string, v message.Value) {
	if p.index == nil {
		for i := range p.list {
			if p.list[i].Name == name {
				p.list[i].Value = v
				return
			}
		}
		p.list = append(p.list, message.Property{Name: name, Value: v})
		if len(p.list) > propIndexAt {
			p.index = make(map[string]int, 2*len(p.list))
			for i := range p.list {
				p.index[p.list[i].Name] = i
			}
		}
		return
	}
	if i, ok := p.index[name]; ok {
		p.list[i].Value = v
		return
	}
	p.index[name] = len(p.list)
	p.list = append(p.list, message.Property{Name: name, Value: v})
}
