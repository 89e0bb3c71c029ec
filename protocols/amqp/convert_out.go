package amqp

import (
	"math"
	"strings"
	"time"

	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
)

// ---------------------------------------------------------------------
// Outbound: JMS → AMQP

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

// addrCache keeps the last destination formatted as an address, so that a
// link whose deliveries all come from one destination (the usual case)
// formats it once, not once per message.
type addrCache struct {
	d message.Destination
	s string
}

// format returns FormatAddress(d), from the cache when d is the last one.
func (a *addrCache) format(d message.Destination) string {
	if d.IsZero() {
		return ""
	}
	if a.s == "" || a.d != d {
		a.d, a.s = d, FormatAddress(d)
	}
	return a.s
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
	return fromMessage(&outMessage{}, nil, m, redeliveries, now)
}

// fromMessage is FromMessage into o, which must be zero (a delivery maps
// into a reused one: link.Deliver), formatting properties.to through to
// when it is not nil. The result points into o, or is a decoded native
// message that does not.
func fromMessage(o *outMessage, to *addrCache, m *message.Message, redeliveries int32, now int64) *wire.Message {
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
	if to != nil {
		p.To = to.format(m.Destination)
	} else {
		p.To = FormatAddress(m.Destination)
	}
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
