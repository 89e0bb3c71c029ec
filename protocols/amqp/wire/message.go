package wire

import (
	"time"
)

// BodyKind says which body sections a message has (AMQP 1.0 §3.2).
type BodyKind uint8

// Body kinds.
const (
	// BodyNone: no body section. The spec requires one; ActiveMQ accepts
	// bodiless messages and maps them by content-type, so this does too.
	BodyNone BodyKind = iota
	// BodyData: one or more data sections (Message.Data).
	BodyData
	// BodySequence: one or more amqp-sequence sections (Message.Sequence).
	BodySequence
	// BodyValue: one amqp-value section (Message.Value, which may be nil).
	BodyValue
)

// Section names the sections of a message, in their wire order.
type Section uint8

// Message sections (AMQP 1.0 §3.2). SectionBody covers all body sections.
const (
	SectionHeader Section = iota
	SectionDeliveryAnnotations
	SectionMessageAnnotations
	SectionProperties
	SectionApplicationProperties
	SectionBody
	SectionFooter
	numSections
)

// Header is the header section (AMQP 1.0 §3.2.1): transport headers.
// NewHeader returns one with the default priority.
type Header struct {
	// Durable asks for the message to survive an intermediary restart.
	Durable bool
	// Priority, 0..255; default 4.
	Priority uint8
	// TTL is the message's time to live (sent in milliseconds); 0 when
	// absent.
	TTL time.Duration
	// FirstAcquirer is set when no other link has acquired the message.
	FirstAcquirer bool
	// DeliveryCount is the number of failed delivery attempts; default 0.
	DeliveryCount uint32
}

// NewHeader returns a Header with the spec's default priority 4.
func NewHeader() *Header { return &Header{Priority: 4} }

// Properties is the properties section (AMQP 1.0 §3.2.4): the immutable
// properties of the message. Absent fields are zero values: nil ids, nil
// UserID, "" strings and symbols, 0 times and GroupSequence.
type Properties struct {
	// MessageID is nil, uint64, UUID, []byte or string (§3.2.11-§3.2.15).
	MessageID any
	// UserID is the identity of the user producing the message.
	UserID []byte
	// To is the address of the node the message is destined for.
	To string
	// Subject (ActiveMQ: JMSType).
	Subject string
	// ReplyTo is the node to send replies to.
	ReplyTo string
	// CorrelationID is nil, uint64, UUID, []byte or string.
	CorrelationID any
	// ContentType is a MIME type, ContentEncoding a content coding.
	ContentType     Symbol
	ContentEncoding Symbol
	// AbsoluteExpiryTime and CreationTime are timestamps; 0 when absent.
	AbsoluteExpiryTime Timestamp
	CreationTime       Timestamp
	// GroupID is the group the message belongs to.
	GroupID string
	// GroupSequence is the message's position in its group.
	GroupSequence uint32
	// ReplyToGroupID is the group replies belong to.
	ReplyToGroupID string
}

// Message is an AMQP message (AMQP 1.0 §3.2): an annotated message made of
// header, delivery-annotations and message-annotations around the bare
// message (properties, application-properties, body), then a footer.
//
// A Message from DecodeMessage remembers its encoding: Encoded and Raw
// return the bytes it was decoded from, and AppendMessage writes the bare
// message back verbatim, because §3.2 makes the bare message immutable
// (intermediaries may change the annotations, header and footer only). To
// change a decoded message's properties, application-properties or body,
// call ResetEncoding first, or AppendMessage will ignore the change.
type Message struct {
	// Header is nil when absent.
	Header *Header
	// DeliveryAnnotations, MessageAnnotations and Footer are annotations:
	// symbol (or ulong) keys. nil when absent.
	DeliveryAnnotations *Map
	MessageAnnotations  *Map
	// Properties is nil when absent.
	Properties *Properties
	// ApplicationProperties have string keys and simple values; nil when
	// absent.
	ApplicationProperties *Map
	// BodyKind selects Data, Sequence or Value.
	BodyKind BodyKind
	// Data are the data sections of a BodyData message.
	Data [][]byte
	// Sequence are the amqp-sequence sections of a BodySequence message.
	Sequence [][]any
	// Value is the amqp-value of a BodyValue message.
	Value any
	// Footer is nil when absent.
	Footer *Map

	// scratch, set by a MessageDecoder, holds the header and properties
	// it decodes into, reused by its next Decode.
	scratch *msgScratch
	raw     []byte // what DecodeMessage decoded; nil for a built message
	decoded bool
	spans   [numSections][2]int // [start, end) of each section in raw
}

// Encoded returns the bytes the message was decoded from (aliasing
// DecodeMessage's input), or nil for a message built in Go or after
// ResetEncoding.
func (m *Message) Encoded() []byte {
	if !m.decoded {
		return nil
	}
	return m.raw
}

// Raw returns the encoded bytes of one section as decoded (for SectionBody,
// all body sections), or nil when the section was absent or the message
// was not decoded.
func (m *Message) Raw(s Section) []byte {
	if !m.decoded || s >= numSections {
		return nil
	}
	sp := m.spans[s]
	if sp[1] == 0 {
		return nil
	}
	return m.raw[sp[0]:sp[1]:sp[1]]
}

// Bare returns the encoded bare message (properties through body) as
// decoded; nil when the message was not decoded or had no bare sections.
func (m *Message) Bare() []byte {
	if !m.decoded {
		return nil
	}
	start, end := -1, 0
	for s := SectionProperties; s <= SectionBody; s++ {
		if sp := m.spans[s]; sp[1] != 0 {
			if start < 0 {
				start = sp[0]
			}
			end = sp[1]
		}
	}
	if start < 0 {
		return nil
	}
	return m.raw[start:end:end]
}

// ResetEncoding forgets the decoded bytes, so that AppendMessage encodes
// every section from the fields.
func (m *Message) ResetEncoding() {
	m.raw, m.decoded, m.spans = nil, false, [numSections][2]int{}
}

// DecodeMessage decodes an encoded message (the payload of a delivery's
// transfer frames, joined) with DefaultLimits. The message aliases b: its
// Data sections, binary values and raw bytes point into b, which must not
// change while the message is in use.
func DecodeMessage(b []byte) (*Message, error) {
	return DecodeMessageWithLimits(b, DefaultLimits())
}

// DecodeMessageWithLimits is DecodeMessage with nesting and element limits
// (MaxFrameSize is not used).
func DecodeMessageWithLimits(b []byte, l Limits) (*Message, error) {
	l = l.withDefaults()
	r := newReader(b, &l, true)
	m := &Message{}
	if err := m.decode(&r, b); err != nil {
		return nil, err
	}
	return m, nil
}

// MessageDecoder decodes messages as DecodeMessageWithLimits does, into a
// Message and reader it reuses: the Message Decode returns is valid until
// the next Decode. A connection decodes every message a client sends with
// one, so that the common path allocates only what the message holds
// (BenchmarkAMQPWireDecodeTransfer). The zero MessageDecoder uses the
// DefaultLimits. Not safe for concurrent use.
type MessageDecoder struct {
	lim     Limits
	limOK   bool
	m       Message
	r       reader
	scratch msgScratch
}

// msgScratch is where a MessageDecoder decodes the header and properties.
type msgScratch struct {
	hdr   Header
	props Properties
}

// NewMessageDecoder returns a MessageDecoder with limits l (zero fields
// take the DefaultLimits values; MaxFrameSize is not used).
func NewMessageDecoder(l Limits) *MessageDecoder {
	return &MessageDecoder{lim: l.withDefaults(), limOK: true}
}

// Decode decodes the encoded message b. Binary values alias b, as with
// DecodeMessage; the Message itself is reused by the next Decode.
func (d *MessageDecoder) Decode(b []byte) (*Message, error) {
	if !d.limOK {
		d.lim, d.limOK = d.lim.withDefaults(), true
	}
	data := d.m.Data
	clear(data)
	d.m = Message{Data: data[:0], scratch: &d.scratch}
	d.r = newReader(b, &d.lim, true)
	err := d.m.decode(&d.r, b)
	d.r.b = nil // do not pin the caller's input
	if err != nil {
		return nil, err
	}
	return &d.m, nil
}

// decode reads b's sections into m, which is zero but for a Data slice to
// append to.
func (m *Message) decode(r *reader, b []byte) error {
	m.raw, m.decoded = b, true
	last := Section(0)
	seen := false
	for r.i < len(b) {
		start := r.i
		c, err := r.byte1()
		if err != nil {
			return err
		}
		if c != codeDescribed {
			return newError(ErrCondDecodeError, ErrInvalidField,
				"message section at offset %d has constructor 0x%02x, not a described section", start, c)
		}
		if err := r.enter(); err != nil {
			return err
		}
		code, err := r.descriptorCode()
		if err != nil {
			return err
		}
		s, kind, ok := sectionOf(code)
		if !ok {
			return newError(ErrCondDecodeError, ErrInvalidField,
				"%s (descriptor 0x%x) at offset %d is not a message section", codeName(code), code, start)
		}
		// §3.2: sections come in a fixed order, each at most once, except
		// that data and amqp-sequence sections repeat.
		if seen && (s < last || s == last && (s != SectionBody || kind != m.BodyKind || kind == BodyValue)) {
			return newError(ErrCondDecodeError, ErrInvalidField,
				"%s section at offset %d is out of order or repeated", codeName(code), start)
		}
		if err := m.section(r, code); err != nil {
			return err
		}
		r.leave()
		if m.spans[s][1] == 0 {
			m.spans[s][0] = start
		}
		m.spans[s][1] = r.i
		last, seen = s, true
	}
	return nil
}

func sectionOf(code uint64) (Section, BodyKind, bool) {
	switch code {
	case codeHeader:
		return SectionHeader, 0, true
	case codeDeliveryAnnots:
		return SectionDeliveryAnnotations, 0, true
	case codeMessageAnnots:
		return SectionMessageAnnotations, 0, true
	case codeProperties:
		return SectionProperties, 0, true
	case codeApplicationProps:
		return SectionApplicationProperties, 0, true
	case codeData:
		return SectionBody, BodyData, true
	case codeAmqpSequence:
		return SectionBody, BodySequence, true
	case codeAmqpValue:
		return SectionBody, BodyValue, true
	case codeFooter:
		return SectionFooter, 0, true
	}
	return 0, 0, false
}

// section decodes the value of one section after its descriptor.
func (m *Message) section(r *reader, code uint64) error {
	switch code {
	case codeHeader:
		if m.scratch != nil {
			m.Header = &m.scratch.hdr
			return decodeHeaderInto(r, m.Header)
		}
		h, err := decodeHeader(r)
		m.Header = h
		return err
	case codeProperties:
		if m.scratch != nil {
			m.Properties = &m.scratch.props
			return decodePropertiesInto(r, m.Properties)
		}
		p, err := decodeProperties(r)
		m.Properties = p
		return err
	case codeDeliveryAnnots, codeMessageAnnots, codeFooter, codeApplicationProps:
		at := r.i
		c, err := r.byte1()
		if err != nil {
			return err
		}
		// §3.2.10 annotations: keys are symbols or ulongs; §3.2.5
		// application-properties: keys are strings. DEVIATION: Proton-J
		// decodes any key and ActiveMQ then fails on a cast; refusing the
		// message up front names the problem.
		keyOK := annotationKey
		if code == codeApplicationProps {
			keyOK = stringKey
		}
		if c != codeMap8 && c != codeMap32 {
			if c == codeNull {
				return nil // a null section body is an empty section
			}
			return newError(ErrCondDecodeError, ErrInvalidField, "%s at offset %d is not a map (constructor 0x%02x)", codeName(code), at, c)
		}
		mp, err := r.mapOf(c, keyOK)
		if err != nil {
			return err
		}
		switch code {
		case codeDeliveryAnnots:
			m.DeliveryAnnotations = mp
		case codeMessageAnnots:
			m.MessageAnnotations = mp
		case codeApplicationProps:
			m.ApplicationProperties = mp
		default:
			m.Footer = mp
		}
		return nil
	case codeData:
		at := r.i
		c, err := r.byte1()
		if err != nil {
			return err
		}
		if c != codeVbin8 && c != codeVbin32 {
			return newError(ErrCondDecodeError, ErrInvalidField, "data section at offset %d is not a binary (constructor 0x%02x)", at, c)
		}
		d, err := r.binaryOf(c)
		if err != nil {
			return err
		}
		m.BodyKind = BodyData
		m.Data = append(m.Data, d)
		return nil
	case codeAmqpSequence:
		at := r.i
		c, err := r.byte1()
		if err != nil {
			return err
		}
		if c != codeList0 && c != codeList8 && c != codeList32 {
			return newError(ErrCondDecodeError, ErrInvalidField, "amqp-sequence section at offset %d is not a list (constructor 0x%02x)", at, c)
		}
		l, err := r.listOf(c)
		if err != nil {
			return err
		}
		m.BodyKind = BodySequence
		m.Sequence = append(m.Sequence, l)
		return nil
	}
	v, err := r.value() // amqp-value
	m.BodyKind, m.Value = BodyValue, v
	return err
}

func decodeHeader(r *reader) (*Header, error) {
	h := &Header{}
	if err := decodeHeaderInto(r, h); err != nil {
		return nil, err
	}
	return h, nil
}

// decodeHeaderInto decodes a header into h, which it overwrites.
func decodeHeaderInto(r *reader, h *Header) error {
	f, err := r.composite("header", 5)
	if err != nil {
		return err
	}
	*h = Header{Priority: 4}
	h.Durable = f.bool("durable")
	if v, ok := f.ubyte("priority"); ok {
		h.Priority = v
	}
	h.TTL = f.millis("ttl")
	h.FirstAcquirer = f.bool("first-acquirer")
	h.DeliveryCount = f.uint("delivery-count", 0)
	return f.finish()
}

func decodeProperties(r *reader) (*Properties, error) {
	p := &Properties{}
	if err := decodePropertiesInto(r, p); err != nil {
		return nil, err
	}
	return p, nil
}

// decodePropertiesInto decodes a properties section into p, which it
// overwrites.
func decodePropertiesInto(r *reader, p *Properties) error {
	f, err := r.composite("properties", 13)
	if err != nil {
		return err
	}
	*p = Properties{}
	p.MessageID = messageID(&f, "message-id")
	p.UserID = f.binary("user-id")
	p.To = addressNamed(&f, "to")
	p.Subject = f.string("subject")
	p.ReplyTo = addressNamed(&f, "reply-to")
	p.CorrelationID = messageID(&f, "correlation-id")
	p.ContentType = f.symbol("content-type")
	p.ContentEncoding = f.symbol("content-encoding")
	p.AbsoluteExpiryTime = f.timestamp("absolute-expiry-time")
	p.CreationTime = f.timestamp("creation-time")
	p.GroupID = f.string("group-id")
	p.GroupSequence = f.uint("group-sequence", 0)
	p.ReplyToGroupID = f.string("reply-to-group-id")
	return f.finish()
}

// addressNamed reads an address-typed field; see addressField.
func addressNamed(f *fields, name string) string {
	c, ok := f.next()
	if !ok {
		return ""
	}
	if c != codeStr8 && c != codeStr32 {
		f.wrongType(name, "string", c)
		return ""
	}
	s, err := f.r.stringOf(c)
	f.check(err)
	return s
}

// messageID reads a message-id or correlation-id: ulong, uuid, binary or
// string (AMQP 1.0 §3.2.10-§3.2.15).
//
// DEVIATION: Proton-J accepts any type here and ActiveMQ's
// AMQPMessageIdHelper then falls back to toString(); the four types are the
// only ones the spec allows and the only ones ActiveMQ maps back to AMQP,
// so anything else is refused as amqp:decode-error.
func messageID(f *fields, name string) any {
	c, ok := f.next()
	if !ok {
		return nil
	}
	switch c {
	case codeUlong, codeSmallUlong, codeUlong0:
		v, err := f.r.ulongOf(c)
		f.check(err)
		return v
	case codeUUID, codeVbin8, codeVbin32, codeStr8, codeStr32:
		v, err := f.r.primitive(c)
		if !f.check(err) {
			return nil
		}
		return v
	}
	f.wrongType(name, "ulong, uuid, binary or string", c)
	return nil
}

// AppendMessage appends the encoding of m: each section present, in the
// order of AMQP 1.0 §3.2. For a decoded message the bare message is copied
// verbatim (see Message); everything else is encoded from the fields.
func AppendMessage(dst []byte, m *Message) []byte {
	if m.Header != nil {
		dst = m.Header.append(dst)
	}
	if m.DeliveryAnnotations != nil {
		dst = appendMap(appendSectionDescriptor(dst, codeDeliveryAnnots), m.DeliveryAnnotations)
	}
	if m.MessageAnnotations != nil {
		dst = appendMap(appendSectionDescriptor(dst, codeMessageAnnots), m.MessageAnnotations)
	}
	if m.decoded {
		dst = append(dst, m.Bare()...)
	} else {
		dst = m.appendBare(dst)
	}
	if m.Footer != nil {
		dst = appendMap(appendSectionDescriptor(dst, codeFooter), m.Footer)
	}
	return dst
}

func (m *Message) appendBare(dst []byte) []byte {
	if m.Properties != nil {
		dst = m.Properties.append(dst)
	}
	if m.ApplicationProperties != nil {
		dst = appendMap(appendSectionDescriptor(dst, codeApplicationProps), m.ApplicationProperties)
	}
	switch m.BodyKind {
	case BodyData:
		for _, d := range m.Data {
			dst = appendBinary(appendSectionDescriptor(dst, codeData), d)
		}
	case BodySequence:
		for _, l := range m.Sequence {
			dst = appendList(appendSectionDescriptor(dst, codeAmqpSequence), l)
		}
	case BodyValue:
		dst = AppendValue(appendSectionDescriptor(dst, codeAmqpValue), m.Value)
	}
	return dst
}

func appendSectionDescriptor(dst []byte, code uint64) []byte {
	return append(dst, codeDescribed, codeSmallUlong, byte(code))
}

func (h *Header) append(dst []byte) []byte {
	dst, w := beginList(dst, codeHeader)
	dst = w.bool(dst, h.Durable)
	dst = w.ubyte(dst, h.Priority, h.Priority == 4)
	dst = w.millis(dst, h.TTL)
	dst = w.bool(dst, h.FirstAcquirer)
	dst = w.uint(dst, h.DeliveryCount, h.DeliveryCount == 0)
	return w.end(dst)
}

func (p *Properties) append(dst []byte) []byte {
	dst, w := beginList(dst, codeProperties)
	dst = w.value(dst, p.MessageID)
	dst = w.binary(dst, p.UserID, false)
	dst = w.string(dst, p.To, false)
	dst = w.string(dst, p.Subject, false)
	dst = w.string(dst, p.ReplyTo, false)
	dst = w.value(dst, p.CorrelationID)
	dst = w.symbol(dst, p.ContentType, false)
	dst = w.symbol(dst, p.ContentEncoding, false)
	dst = w.timestamp(dst, p.AbsoluteExpiryTime)
	dst = w.timestamp(dst, p.CreationTime)
	dst = w.string(dst, p.GroupID, false)
	dst = w.uint(dst, p.GroupSequence, p.GroupSequence == 0)
	dst = w.string(dst, p.ReplyToGroupID, false)
	return w.end(dst)
}
