package amqp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
)

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
	// The message and room for its usual few properties in one
	// allocation; more grow the list as append does.
	mp := &messageWithProps{m: message.Message{Priority: message.DefaultPriority}}
	m := &mp.m
	in.m = m
	if n := propCount(am); n > len(mp.props) {
		in.props.list = make(message.Properties, 0, n)
	} else {
		in.props.list = mp.props[:0]
	}
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

// messageWithProps is an inbound message with the room its properties
// usually take (JMS_AMQP_ORIGINAL_ENCODING, JMS_AMQP_HEADER,
// JMS_AMQP_PROPERTIES and a few more): ToMessage allocates both at once.
type messageWithProps struct {
	m     message.Message
	props [4]message.Property
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
