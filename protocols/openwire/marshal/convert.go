package marshal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
)

// Conversion between OpenWire messages (ActiveMQMessage and its subtypes)
// and the engine's protocol-neutral message.
//
// Header mapping (reference openwire.md §11): MessageId.toString <-> ID,
// Destination, ReplyTo, OriginalDestination, CorrelationId, Type, Priority,
// Persistent, Timestamp, Expiration, UserID, GroupID/GroupSequence and
// RedeliveryCounter map one to one. Properties (§9.1) map tag by tag onto
// message.Value kinds; bodies (§9.2) map by type code onto BodyType, and
// compressed bodies (§9.3) are inflated into the engine.
//
// Original form. A message that arrived over OpenWire keeps, in
// m.Original, its own OpenWire form so that an OpenWire consumer is sent
// exactly what the producer sent (compressed body, property types the
// engine cannot hold, BrokerPath, TransactionId, TextView...).
//
// ToEngine keeps the message as the producer's connection decoded it
// (message.NewKept), as ActiveMQ keeps its decoded message, and no codec
// pass is made for the engine: the session's dispatch encodes that form as
// it is when the delivery changes nothing in it (FromEngineShared), any
// other delivery costs a shallow copy of it (reused once handed back:
// Release).
// What a queued message holds for it: the decoded wire.Message (448 B),
// its ids and destinations (shared with the connection's marshal cache
// when it has one) and the frame it arrived in (wire.Message.Raw, which
// its Content and MarshalledProperties alias) instead of a StoreFormat
// copy of that frame. The engine message's body already aliased that
// frame, so a queued message holds less than before: 1,250 B against
// 1,994 B for a 1 KiB BytesMessage from a tight, cached connection
// (heap measured over 20,000 queued messages). Stores that need bytes
// make them: KahaDB writes
// wire.StoreFormat (v11, loose, uncached, size-prefixed) through
// FromEngine, which returns this same form, so the record is the bytes
// that marshalling the producer's message gives (as ToEngine used to keep
// them); the temp store a non-persistent message spills to gets them from
// Encoded.Marshalled. wire.Message.Raw itself cannot serve as stored
// bytes: it is in the producer connection's negotiated format, usually
// tight and cached, which cannot be decoded without that connection's
// marshal cache.
//
// A message read back from a store (ToEngineStored), spilled, or carrying
// an advisory payload keeps the StoreFormat bytes instead: its first
// delivery decodes them (wire.UnmarshalShared: the ids and strings, the
// body aliasing the kept bytes), and a message delivered again (a
// fan-out, a redelivery) is decoded once more and that form kept with
// it, so each later delivery costs a shallow copy. The engine clears Original whenever it clones a message to
// change it (but for the destination of composite and virtual copies,
// which Original applies), and Original also refuses bytes whose message
// id is not the message's, so a changed message is re-encoded from its
// fields.

const convProtocol = "openwire"

// convMaxDepth bounds advisory payload nesting (an advisory about a message
// that carries an advisory...).
const convMaxDepth = 8

// ToEngine converts a decoded OpenWire message (as a producer sent it) into
// an engine message. Compressed bodies are inflated (at most
// wire.DefaultLimits().MaxBodySize bytes); the message's original form is
// kept in m.Original (see Original), so anything the session changes must be
// changed on w before the call, or m.Original cleared after it. Byte slices
// of w (bodies) may be shared with the result; w must not be changed
// afterwards.
func ToEngine(w *wire.Message) (*message.Message, error) {
	m, err := convToEngine(w, 0)
	if err != nil {
		return nil, err
	}
	if w.DataStructure != nil {
		// An advisory payload: marshalled now, as its StoreFormat form may
		// not exist (a v12-only type). A marshal failure only costs the
		// original form: the message is then re-encoded from its fields.
		if b, err := marshalStore(w); err == nil {
			m.Original = message.NewEncoded(convProtocol, b)
		}
		return m, nil
	}
	m.Original = message.NewKept(convProtocol, &original{w: w, id: m.ID, dest: m.Destination, origDest: m.OriginalDestination}, encodeOriginal)
	return m, nil
}

// encodeOriginal is the StoreFormat frame of an original kept decoded
// (message.Encoded.Marshalled, for the temp store a message spills to).
func encodeOriginal(v any) []byte {
	o, _ := v.(*original)
	if o == nil {
		return nil
	}
	b, err := marshalStore(o.w)
	if err != nil {
		return nil
	}
	return b
}

// storeEncoders are StoreFormat encoders (no marshal cache, so any may
// encode any message), reused across messages.
var storeEncoders = sync.Pool{New: func() any { return wire.NewEncoder(wire.StoreFormat()) }}

// marshalStore is wire.Marshal(w, wire.StoreFormat()) with a pooled
// encoder, into a buffer sized once from the frame w arrived in (or its
// body and properties): the loose form is larger than the tight one by
// its ids and flags, a few hundred bytes (one more allocation when not).
func marshalStore(w *wire.Message) ([]byte, error) {
	e := storeEncoders.Get().(*wire.Encoder)
	defer storeEncoders.Put(e)
	n := len(w.Raw)
	if n == 0 {
		n = len(w.Content) + len(w.MarshalledProperties)
	}
	return e.Append(make([]byte, 0, n+256), w)
}

// ToEngineStored is ToEngine for a message read back from a store that
// keeps it as the StoreFormat frame b (KahaDB): b becomes the original form
// as it is, without marshalling the message again.
func ToEngineStored(w *wire.Message, b []byte) (*message.Message, error) {
	m, err := convToEngine(w, 0)
	if err != nil {
		return nil, err
	}
	m.Original = message.NewEncoded(convProtocol, b)
	return m, nil
}

func convToEngine(w *wire.Message, depth int) (*message.Message, error) {
	if w == nil {
		return nil, errors.New("openwire: no message")
	}
	if depth > convMaxDepth {
		return nil, fmt.Errorf("openwire: message: %w", wire.ErrTooDeep)
	}
	lim := wire.DefaultLimits()
	m := &message.Message{
		Destination:         DestToEngine(w.Destination),
		ReplyTo:             DestToEngine(w.ReplyTo),
		OriginalDestination: DestToEngine(w.OriginalDestination),
		CorrelationID:       w.CorrelationId,
		Type:                w.Type,
		// DEVIATION: the engine's priorities are 0-9 (JMS's range; Java
		// clients refuse others) and ActiveMQ passes any byte on. A larger
		// one from a hostile client is clamped to 9 so that no engine code
		// indexes past its priority levels; OpenWire consumers still get
		// the byte sent while the original form is kept.
		Priority:          min(w.Priority, 9),
		Persistent:        w.Persistent,
		Timestamp:         w.Timestamp,
		Expiration:        w.Expiration,
		UserID:            w.UserID,
		GroupID:           w.GroupID,
		GroupSeq:          w.GroupSequence,
		RedeliveryCounter: w.RedeliveryCounter,
		BrokerPath:        brokerPathToEngine(w.BrokerPath),
	}
	if w.MessageId != nil {
		m.ID = w.MessageId.String()
	}
	props, err := w.Properties(lim)
	if err != nil {
		return nil, err
	}
	if len(props) > 0 {
		m.Props = convPropsToEngine(props, len(props)+1)
	}
	if w.JMSXGroupFirstForConsumer {
		// Java reads the flag as a property (PropertyExpression); the engine
		// and the other protocols see it as one.
		m.Props.Set("JMSXGroupFirstForConsumer", message.BoolValue(true))
	}
	if err := convBodyToEngine(w, m, lim); err != nil {
		return nil, err
	}
	if w.DataStructure != nil {
		a, err := convAdvisoryToEngine(w.DataStructure, depth)
		if err != nil {
			return nil, err
		}
		m.Advisory = a
	}
	return m, nil
}

func convBodyToEngine(w *wire.Message, m *message.Message, lim wire.Limits) error {
	switch w.DataStructureType() {
	case wire.TypeActiveMQTextMessage:
		m.BodyType = message.TextBody
		return convTextToEngine(w, m, lim)
	case wire.TypeActiveMQBytesMessage:
		m.BodyType = message.BytesBody
		b, err := w.Bytes(lim)
		if err != nil {
			return err
		}
		m.Body = b
	case wire.TypeActiveMQMapMessage:
		m.BodyType = message.MapBody
		mp, err := w.Map(lim)
		if err != nil {
			return err
		}
		if len(mp) > 0 {
			m.Map = convPropsToEngine(mp, len(mp))
		}
	case wire.TypeActiveMQStreamMessage:
		m.BodyType = message.StreamBody
		vs, err := w.Stream(lim)
		if err != nil {
			return err
		}
		if len(vs) > 0 {
			m.List = make([]message.Value, len(vs))
			for i, v := range vs {
				m.List[i] = convValueToEngine(v)
			}
		}
	case wire.TypeActiveMQObjectMessage:
		m.BodyType = message.ObjectBody
		b, err := w.ObjectBytes(lim)
		if err != nil {
			return err
		}
		m.Body = b
	default:
		// ActiveMQMessage, and ActiveMQBlobMessage whose body is at
		// RemoteBlobUrl: no body the engine can carry. The original form
		// keeps the blob fields for OpenWire consumers.
		m.BodyType = message.NoBody
	}
	return nil
}

// convTextToEngine decodes a TextMessage body (int32 byte length, -1 for
// null, then modified UTF-8) into UTF-8, as wire.Message.Text does, but
// without copying plain ASCII text: Body then shares the frame's buffer.
// Null text becomes "": the engine has no null text, and STOMP renders both
// as an empty body.
func convTextToEngine(w *wire.Message, m *message.Message, lim wire.Limits) error {
	b, err := w.Body(lim)
	if err != nil || len(b) == 0 {
		return err
	}
	if len(b) < 4 {
		return fmt.Errorf("openwire: %w: text body of %d bytes", wire.ErrCorruptBody, len(b))
	}
	n := int64(int32(binary.BigEndian.Uint32(b)))
	if n < 0 {
		return nil
	}
	if n > int64(len(b)-4) {
		return fmt.Errorf("openwire: %w: text length %d exceeds body", wire.ErrCorruptBody, n)
	}
	t := b[4 : 4+n : 4+n]
	if convPlainASCII(t) {
		m.Body = t
		return nil
	}
	s, err := wire.DecodeModifiedUTF8(t)
	if err == nil {
		m.Body = []byte(s)
		return nil
	}
	// Java's readUTF8 refuses 4-byte UTF-8 sequences, but a non-Java client
	// (or a bridge copying a STOMP body verbatim, as ActiveMQ's
	// LegacyFrameTranslator does) may write standard UTF-8. The broker never
	// decodes text itself, so it is accepted when it is valid UTF-8.
	if utf8.Valid(t) {
		m.Body = t
		return nil
	}
	return fmt.Errorf("openwire: text body: %w", err)
}

// convPlainASCII reports whether b is ASCII without NUL, the bytes that
// are the same in UTF-8 and in Java's modified UTF-8.
func convPlainASCII(b []byte) bool {
	for _, c := range b {
		if c == 0 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// convPropsToEngine converts a primitive map, in key order so that the
// engine's (ordered) properties do not depend on map iteration.
func convPropsToEngine(p map[string]any, capacity int) message.Properties {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(message.Properties, len(keys), capacity)
	for i, k := range keys {
		out[i] = message.Property{Name: k, Value: convValueToEngine(p[k])}
	}
	return out
}

// convValueToEngine converts one primitive (wire/primitive.go's Go types).
//
// DEVIATION: ActiveMQ allows nested maps and lists in properties and map
// bodies (nestedMapAndListEnabled); the engine's values are scalars, so they
// become the String Java's toString would give ("{a=1, b=[x, y]}", keys
// sorted), which is what ActiveMQ's STOMP converter shows for them. OpenWire
// consumers still get the nested value while the original form is kept.
func convValueToEngine(v any) message.Value {
	switch x := v.(type) {
	case nil:
		return message.Value{}
	case bool:
		return message.BoolValue(x)
	case int8:
		return message.ByteValue(x)
	case wire.Char:
		return message.CharValue(uint16(x))
	case int16:
		return message.ShortValue(x)
	case int32:
		return message.IntValue(x)
	case int64:
		return message.LongValue(x)
	case float32:
		return message.FloatValue(x)
	case float64:
		return message.DoubleValue(x)
	case string:
		return message.StringValue(x)
	case []byte:
		return message.BytesValue(x)
	}
	var sb strings.Builder
	convJavaString(&sb, v)
	return message.StringValue(sb.String())
}

func convJavaString(sb *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(k)
			sb.WriteByte('=')
			convJavaString(sb, x[k])
		}
		sb.WriteByte('}')
	case []any:
		sb.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				sb.WriteString(", ")
			}
			convJavaString(sb, e)
		}
		sb.WriteByte(']')
	default:
		sb.WriteString(convValueToEngine(v).Text())
	}
}

// FromEngine builds the OpenWire message to dispatch for an engine message
// (any protocol's), with redeliveries as RedeliveryCounter. A message that
// arrived over OpenWire and was not changed is sent in its original form
// (see Original). The result may share byte slices with m; it is the
// caller's to change (its Raw is nil).
func FromEngine(m *message.Message, redeliveries int32) (*wire.Message, error) {
	if w, ok := Original(m); ok {
		w.RedeliveryCounter = redeliveries
		w.Raw = nil // the frame it was decoded from, now stale
		return w, nil
	}
	return convFromEngine(m, redeliveries, 0)
}

func convFromEngine(m *message.Message, redeliveries int32, depth int) (*wire.Message, error) {
	if m == nil {
		return nil, errors.New("openwire: no message")
	}
	if depth > convMaxDepth {
		return nil, fmt.Errorf("openwire: advisory payload: %w", wire.ErrTooDeep)
	}
	mid := convMessageID(m.ID)
	w := &wire.Message{
		Kind:                wire.TypeActiveMQMessage,
		Destination:         DestFromEngine(m.Destination),
		OriginalDestination: DestFromEngine(m.OriginalDestination),
		MessageId:           mid,
		GroupID:             m.GroupID,
		GroupSequence:       m.GroupSeq,
		CorrelationId:       m.CorrelationID,
		Persistent:          m.Persistent,
		Expiration:          m.Expiration,
		Priority:            m.Priority,
		ReplyTo:             DestFromEngine(m.ReplyTo),
		Timestamp:           m.Timestamp,
		Type:                m.Type,
		RedeliveryCounter:   redeliveries,
		UserID:              m.UserID,
		BrokerPath:          BrokerPathFromEngine(m.BrokerPath),
	}
	if mid != nil {
		w.ProducerId = mid.ProducerId // as Java sets both from one producer
	}
	if len(m.Props) > 0 {
		b, first, err := convAppendProps(make([]byte, 0, convPropsSize(m.Props)), m.Props, true)
		if err != nil {
			return nil, fmt.Errorf("openwire: properties: %w", err)
		}
		w.MarshalledProperties = b
		w.JMSXGroupFirstForConsumer = first
	}
	if err := convBodyFromEngine(m, w); err != nil {
		return nil, err
	}
	if m.Advisory != nil {
		ds, err := convAdvisoryFromEngine(m, depth)
		if err != nil {
			return nil, err
		}
		w.DataStructure = ds
	}
	return w, nil
}

func convBodyFromEngine(m *message.Message, w *wire.Message) error {
	switch m.BodyType {
	case message.TextBody:
		// Body is UTF-8 whatever protocol wrote it (a STOMP SEND without
		// content-length is a TextMessage whose text is the body bytes).
		// DEVIATION: ActiveMQ's LegacyFrameTranslator copies STOMP bytes
		// verbatim after the length, so a non-BMP character reaches Java's
		// readUTF8 as a 4-byte sequence it refuses; Wharf writes the
		// modified UTF-8 (surrogate pairs) Java expects, so the JMS
		// consumer reads the same string. For other text the two forms
		// differ only in how NUL is written, which Java reads either way.
		w.Kind = wire.TypeActiveMQTextMessage
		w.Content = convAppendText(nil, m.Body)
	case message.BytesBody:
		w.SetBytes(m.Body, false)
	case message.MapBody:
		w.Kind = wire.TypeActiveMQMapMessage
		// Java leaves the content null for an empty map.
		if len(m.Map) > 0 {
			b, _, err := convAppendProps(make([]byte, 0, convPropsSize(m.Map)), m.Map, false)
			if err != nil {
				return fmt.Errorf("openwire: map body: %w", err)
			}
			w.Content = b
		}
	case message.StreamBody:
		w.Kind = wire.TypeActiveMQStreamMessage
		b := []byte{}
		var err error
		for i, v := range m.List {
			if b, err = convAppendValue(b, v); err != nil {
				return fmt.Errorf("openwire: stream body element %d: %w", i, err)
			}
		}
		w.Content = b
	case message.ObjectBody:
		w.Kind = wire.TypeActiveMQObjectMessage
		w.Content = m.Body // the serialized object, never looked into
	}
	return nil
}

// convAppendText appends a TextMessage body (MarshallingSupport.writeUTF8:
// int32 byte length, modified UTF-8) for UTF-8 text b.
func convAppendText(dst []byte, b []byte) []byte {
	if convPlainASCII(b) {
		dst = binary.BigEndian.AppendUint32(slices.Grow(dst, 4+len(b)), uint32(len(b)))
		return append(dst, b...)
	}
	// string(b) copies; only text that is not plain ASCII pays for it.
	s := string(b)
	n := wire.ModifiedUTF8Len(s)
	dst = binary.BigEndian.AppendUint32(slices.Grow(dst, 4+n), uint32(n))
	return wire.AppendModifiedUTF8(dst, s)
}

// convAppendProps appends ps as a primitive map (reference §9.1), in the
// engine's order. A name that appears twice is written once, with its first
// value, as Properties.Get reads it. With groupFlag set, a
// JMSXGroupFirstForConsumer property is not written but returned: ActiveMQ
// carries it as the message field of that name (v10+), never as a property.
func convAppendProps(dst []byte, ps message.Properties, groupFlag bool) ([]byte, bool, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0) // count, patched below
	n := 0
	first := false
	var err error
next:
	for i := range ps {
		p := &ps[i]
		for j := range i {
			if ps[j].Name == p.Name {
				continue next
			}
		}
		if groupFlag && p.Name == "JMSXGroupFirstForConsumer" {
			first = p.Value.Bool()
			continue
		}
		if dst, err = wire.AppendUTF(dst, p.Name); err != nil {
			return dst[:start], false, fmt.Errorf("name %.32q: %w", p.Name, err)
		}
		if dst, err = convAppendValue(dst, p.Value); err != nil {
			return dst[:start], false, fmt.Errorf("%.32q: %w", p.Name, err)
		}
		n++
	}
	if n == 0 && groupFlag {
		return nil, first, nil
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(n))
	return dst, first, nil
}

// convPropsSize estimates the marshalled size of ps (exact for ASCII), so
// that the buffer is allocated once.
func convPropsSize(ps message.Properties) int {
	n := 4
	for i := range ps {
		n += 2 + len(ps[i].Name) + 9 + len(ps[i].Value.Str()) + len(ps[i].Value.Raw())
	}
	return n
}

// convBigStringUnits is MarshallingSupport's threshold (Short.MAX_VALUE / 4
// UTF-16 units) from which a string is written with tag 13 (int32 length)
// instead of tag 9 (u16 length); wire.AppendPrimitive applies the same.
const convBigStringUnits = 1<<15/4 - 1

// convAppendValue appends one tagged primitive (reference §9.1). It writes
// the tags itself rather than boxing into wire.AppendPrimitive's any, which
// would allocate per value on every delivery.
func convAppendValue(dst []byte, v message.Value) ([]byte, error) {
	be := binary.BigEndian
	switch v.Kind {
	case message.Null:
		return append(dst, wire.PrimitiveNull), nil
	case message.Bool:
		b := byte(0)
		if v.Bool() {
			b = 1
		}
		return append(dst, wire.PrimitiveBoolean, b), nil
	case message.Byte:
		return append(dst, wire.PrimitiveByte, byte(v.Int())), nil
	case message.Char:
		return be.AppendUint16(append(dst, wire.PrimitiveChar), uint16(v.Int())), nil
	case message.Short:
		return be.AppendUint16(append(dst, wire.PrimitiveShort), uint16(v.Int())), nil
	case message.Int:
		return be.AppendUint32(append(dst, wire.PrimitiveInt), uint32(v.Int())), nil
	case message.Long:
		return be.AppendUint64(append(dst, wire.PrimitiveLong), uint64(v.Int())), nil
	case message.Float:
		return be.AppendUint32(append(dst, wire.PrimitiveFloat), math.Float32bits(float32(v.Float()))), nil
	case message.Double:
		return be.AppendUint64(append(dst, wire.PrimitiveDouble), math.Float64bits(v.Float())), nil
	case message.String:
		s := v.Str()
		if wire.UTF16Len(s) < convBigStringUnits {
			return wire.AppendUTF(append(dst, wire.PrimitiveString), s)
		}
		return wire.AppendUTF8(append(dst, wire.PrimitiveBigString), s), nil
	case message.Bytes:
		r := v.Raw()
		if int64(len(r)) > math.MaxInt32 {
			return dst, wire.ErrBodyTooLarge
		}
		dst = be.AppendUint32(append(dst, wire.PrimitiveByteArray), uint32(len(r)))
		return append(dst, r...), nil
	}
	return dst, fmt.Errorf("%w: %s", wire.ErrUnsupportedPrimitive, v.Kind)
}

// Original returns the message as it arrived over OpenWire, decoded from
// m.Original, when the engine has not changed it: m.Original holds
// OpenWire bytes (the engine clears it on every Clone made to change a
// message) and their message id is still m's. The engine keeps Original
// on the copies that composite and virtual destinations make, whose only
// change is where they go, so Destination and OriginalDestination are
// taken from m, as ActiveMQ's copies set them. A message kept decoded
// (ToEngine) is returned as a shallow copy of that form. For kept bytes,
// the first call decodes them for itself; from the second on, they are
// decoded once more and kept (message.Encoded.Decoded), and every call
// returns a shallow copy of that decoded form. Either way the caller may
// set the result's fields, but must not change what they point to (ids,
// destinations, byte slices: the kept bytes, and every later delivery's).
// Its Raw is the frame it was decoded from (the producer's, or the
// StoreFormat one), not something to send on a connection.
func Original(m *message.Message) (*wire.Message, bool) {
	o, shared := originalOf(m)
	if o == nil {
		return nil, false
	}
	return o.writable(m, shared), true
}

// originalOf is m's decoded original form, with shared true when other
// deliveries share it (read-only); nil when m has none or was changed.
func originalOf(m *message.Message) (o *original, shared bool) {
	if m == nil || m.Original.Protocol != convProtocol || !m.Original.Kept() {
		return nil, false
	}
	v, shared := m.Original.Decoded(decodeOriginal)
	o, _ = v.(*original)
	if o == nil || o.id != m.ID { // the id guards against code that changed a message without Clone
		return nil, false
	}
	return o, shared
}

// writable is o's message for a delivery of m that may change it: o's own
// when not shared, else a (pooled) shallow copy; with m's destinations.
func (o *original) writable(m *message.Message, shared bool) *wire.Message {
	w := o.w
	if shared {
		w = deliveries.Get().(*wire.Message)
		*w = *o.w
	}
	if o.dest != m.Destination {
		w.Destination = DestFromEngine(m.Destination)
	}
	if o.origDest != m.OriginalDestination {
		w.OriginalDestination = DestFromEngine(m.OriginalDestination)
	}
	return w
}

// FromEngineShared is FromEngine for a caller that only encodes the result
// (the session's dispatch): when the message's kept form needs no change
// for this delivery (the same destinations and redelivery counter), it is
// returned itself, shared with every other delivery, with shared true —
// no copy of it is made (for a fan-out, one 448-byte copy, with its write
// barriers, per delivery). A shared result must not be changed nor
// handed to Release; any other result is the caller's, as FromEngine's.
func FromEngineShared(m *message.Message, redeliveries int32) (w *wire.Message, shared bool, err error) {
	o, sh := originalOf(m)
	if o == nil {
		w, err = convFromEngine(m, redeliveries, 0)
		return w, false, err
	}
	if sh && o.w.RedeliveryCounter == redeliveries && o.dest == m.Destination && o.origDest == m.OriginalDestination {
		// Its Raw (the frame it was decoded from) is left: encoders
		// never read it.
		return o.w, true, nil
	}
	w = o.writable(m, sh)
	w.RedeliveryCounter = redeliveries
	w.Raw = nil
	return w, false, nil
}

// deliveries are the wire.Messages of deliveries handed back by Release.
var deliveries = sync.Pool{New: func() any { return new(wire.Message) }}

// Release hands back a message FromEngine returned, once the caller has
// encoded it and holds nothing of it (the session's dispatch, whose
// encoder copies what it keeps): the next delivery's copy of a kept form
// reuses it instead of allocating one (448 B) per delivery. Callers that
// keep the message simply do not call it.
func Release(w *wire.Message) {
	if w == nil {
		return
	}
	*w = wire.Message{} // drop what it points to
	deliveries.Put(w)
}

// original is the decoded form of an original frame, shared by every
// delivery of the message: never changed after decodeOriginal.
type original struct {
	w              *wire.Message
	id             string // w.MessageId.String(), "" when none
	dest, origDest message.Destination
}

// decodeOriginal decodes a StoreFormat frame for Original; nil when it is
// not a message.
func decodeOriginal(b []byte) any {
	// The bytes are our own, made by ToEngine from a message that passed
	// the connection's limits; the frame limit only needs to admit them.
	lim := wire.DefaultLimits()
	lim.MaxFrameSize = max(lim.MaxFrameSize, int64(len(b)))
	ds, err := wire.UnmarshalShared(b, wire.StoreFormat(), lim)
	if err != nil {
		return (*original)(nil)
	}
	w, ok := ds.(*wire.Message)
	if !ok {
		return (*original)(nil)
	}
	o := &original{w: w, dest: DestToEngine(w.Destination), origDest: DestToEngine(w.OriginalDestination)}
	if w.MessageId != nil {
		o.id = w.MessageId.String()
	}
	return o
}

// DestToEngine converts an OpenWire destination; nil is the zero
// Destination. A composite's comma-separated name is kept as it is.
func DestToEngine(d *wire.Destination) message.Destination {
	if d == nil {
		return message.Destination{}
	}
	t := message.Queue
	switch d.DataStructureType() {
	case wire.TypeActiveMQTopic:
		t = message.Topic
	case wire.TypeActiveMQTempQueue:
		t = message.TempQueue
	case wire.TypeActiveMQTempTopic:
		t = message.TempTopic
	}
	return message.Destination{Type: t, Name: d.PhysicalName}
}

// DestFromEngine converts an engine destination; the zero Destination is
// nil (a null field on the wire).
func DestFromEngine(d message.Destination) *wire.Destination {
	if d.IsZero() {
		return nil
	}
	k := wire.TypeActiveMQQueue
	switch d.Type {
	case message.Topic:
		k = wire.TypeActiveMQTopic
	case message.TempQueue:
		k = wire.TypeActiveMQTempQueue
	case message.TempTopic:
		k = wire.TypeActiveMQTempTopic
	}
	return &wire.Destination{Kind: k, PhysicalName: d.Name}
}

// Ids. ActiveMQ's ids are strings with numeric tails
// (ConsumerId/ProducerId.toString "conn:session:value", MessageId
// "producerId:seq"); the constructors that parse them (MessageId(String),
// ProducerId(String)) take the numbers from the right, so the connection
// id may itself hold colons ("ID:host-1234-5678-1:3").

// convTail splits s into a prefix and its last n ":"-separated decimal
// numbers. ok is false unless every number is in canonical form
// (Long.toString would write it back the same) and the prefix is not empty.
func convTail(s string, nums []int64) (prefix string, ok bool) {
	for i := len(nums) - 1; i >= 0; i-- {
		p := strings.LastIndexByte(s, ':')
		if p <= 0 {
			return "", false
		}
		v, err := strconv.ParseInt(s[p+1:], 10, 64)
		if err != nil || strconv.FormatInt(v, 10) != s[p+1:] {
			return "", false
		}
		nums[i] = v
		s = s[:p]
	}
	return s, true
}

// convMessageID parses a JMSMessageID. One in ActiveMQ's shape
// ("<producer id>:<seq>", as Java clients and the engine make them) becomes
// the structured id Java sends, with no TextView. Any other id (from AMQP,
// say) travels as TextView (OpenWire v10+, which Java 5.17 and current NMS
// clients use); older versions only see the placeholder producer id, whose
// ConnectionId is the whole id, with sequence 0.
func convMessageID(id string) *wire.MessageId {
	if id == "" {
		return nil
	}
	var n [3]int64
	if conn, ok := convTail(id, n[:]); ok {
		return &wire.MessageId{
			ProducerId:         &wire.ProducerId{ConnectionId: conn, SessionId: n[0], Value: n[1]},
			ProducerSequenceId: n[2],
		}
	}
	return &wire.MessageId{TextView: id, ProducerId: &wire.ProducerId{ConnectionId: id}}
}

// MessageIDFromEngine is the OpenWire MessageId of an engine message id,
// as convMessageID makes it: the structured id (no TextView) when id has
// ActiveMQ's "<producer id>:<seq>" shape, so that its toProducerKey is id.
func MessageIDFromEngine(id string) *wire.MessageId { return convMessageID(id) }

// convConsumerID parses "conn:session:value"; an id of another shape is kept
// whole as the connection part.
func convConsumerID(s string) *wire.ConsumerId {
	if s == "" {
		return nil
	}
	var n [2]int64
	if conn, ok := convTail(s, n[:]); ok {
		return &wire.ConsumerId{ConnectionId: conn, SessionId: n[0], Value: n[1]}
	}
	return &wire.ConsumerId{ConnectionId: s}
}

// convProducerID parses "conn:session:value" (ProducerId.toString; the wire
// order differs, see wire.ProducerId).
func convProducerID(s string) *wire.ProducerId {
	if s == "" {
		return nil
	}
	var n [2]int64
	if conn, ok := convTail(s, n[:]); ok {
		return &wire.ProducerId{ConnectionId: conn, SessionId: n[0], Value: n[1]}
	}
	return &wire.ProducerId{ConnectionId: s}
}

func convConnectionID(s string) *wire.ConnectionId {
	if s == "" {
		return nil
	}
	return &wire.ConnectionId{Value: s}
}

// convObjectID parses a RemoveInfo's ObjectId. The shapes overlap (a
// consumer and a producer id look alike, and a client chooses its own
// connection id), so the advisory topic decides when it can: ActiveMQ fires
// RemoveInfo on the Connection, Consumer.* and Producer.* advisory topics
// (AdvisoryBroker.removeConnection/removeConsumer/removeProducer). On any
// other topic the number of ":"-separated parts after "ID:" decides, as
// ActiveMQ's generated ids have them: 2 connection, 3 session, 4 consumer.
func convObjectID(s string, topic message.Destination) wire.DataStructure {
	const adv = "ActiveMQ.Advisory."
	switch name := topic.Name; {
	case name == adv+"Connection":
		return convConnectionID(s)
	case strings.HasPrefix(name, adv+"Consumer."):
		return convConsumerID(s)
	case strings.HasPrefix(name, adv+"Producer."):
		return convProducerID(s)
	}
	var n [2]int64
	switch strings.Count(strings.TrimPrefix(s, "ID:"), ":") {
	case 0, 1:
	case 2:
		if conn, ok := convTail(s, n[:1]); ok {
			return &wire.SessionId{ConnectionId: conn, Value: n[0]}
		}
	default:
		if conn, ok := convTail(s, n[:]); ok {
			return &wire.ConsumerId{ConnectionId: conn, SessionId: n[0], Value: n[1]}
		}
	}
	return convConnectionID(s)
}

// convAdvisoryFromEngine builds the command an advisory message carries
// (ActiveMQ's Message.DataStructure) from the engine's neutral description.
// Fields the command does not have are ignored; destinations are qualified
// names ("queue://X").
func convAdvisoryFromEngine(m *message.Message, depth int) (wire.DataStructure, error) {
	a := m.Advisory
	fs := a.Fields
	str := func(name string) string { v, _ := fs.Get(name); return v.Str() }
	num := func(name string) int64 { v, _ := fs.Get(name); return v.Int() }
	flag := func(name string) bool { v, _ := fs.Get(name); return v.Bool() }
	dest := func(name string) *wire.Destination {
		s := str(name)
		if s == "" {
			return nil
		}
		return DestFromEngine(message.ParseQualified(s, message.Queue))
	}
	switch a.Command {
	case "ConnectionInfo":
		// The password is never copied into an advisory.
		return &wire.ConnectionInfo{
			ConnectionId: convConnectionID(str("ConnectionId")),
			ClientId:     str("ClientId"),
			UserName:     str("UserName"),
			ClientIp:     str("ClientIp"),
			Manageable:   flag("Manageable"),
			ClientMaster: flag("ClientMaster"),
		}, nil
	case "ConsumerInfo":
		return &wire.ConsumerInfo{
			ConsumerId:                 convConsumerID(str("ConsumerId")),
			Browser:                    flag("Browser"),
			Destination:                dest("Destination"),
			PrefetchSize:               int32(num("PrefetchSize")),
			MaximumPendingMessageLimit: int32(num("MaximumPendingMessageLimit")),
			DispatchAsync:              flag("DispatchAsync"),
			Selector:                   str("Selector"),
			ClientId:                   str("ClientId"),
			SubscriptionName:           str("SubscriptionName"),
			NoLocal:                    flag("NoLocal"),
			Exclusive:                  flag("Exclusive"),
			Retroactive:                flag("Retroactive"),
			Priority:                   int8(num("Priority")),
			NetworkSubscription:        flag("NetworkSubscription"),
			BrokerPath:                 BrokerPathFromEngine(splitPath(str("BrokerPath"))),
			NetworkConsumerPath:        consumerPathFromEngine(splitPath(str("NetworkConsumerPath"))),
		}, nil
	case "ProducerInfo":
		return &wire.ProducerInfo{
			ProducerId:    convProducerID(str("ProducerId")),
			Destination:   dest("Destination"),
			DispatchAsync: flag("DispatchAsync"),
			WindowSize:    int32(num("WindowSize")),
		}, nil
	case "DestinationInfo":
		return &wire.DestinationInfo{
			ConnectionId:  convConnectionID(str("ConnectionId")),
			Destination:   dest("Destination"),
			OperationType: byte(num("OperationType")),
			Timeout:       num("Timeout"),
		}, nil
	case "RemoveInfo":
		return &wire.RemoveInfo{
			ObjectId: convObjectID(str("ObjectId"), m.Destination),
			// RemoveInfo's default: no last delivered sequence (v5+).
			LastDeliveredSequenceId: -1,
		}, nil
	case "BrokerInfo":
		// The NetworkBridge advisory's payload: the remote broker.
		bi := &wire.BrokerInfo{
			BrokerName:        str("BrokerName"),
			BrokerURL:         str("BrokerURL"),
			NetworkConnection: flag("NetworkConnection"),
			DuplexConnection:  flag("DuplexConnection"),
		}
		if id := str("BrokerId"); id != "" {
			bi.BrokerId = &wire.BrokerId{Value: id}
		}
		return bi, nil
	case "RemoveSubscriptionInfo":
		return &wire.RemoveSubscriptionInfo{
			ConnectionId:     convConnectionID(str("ConnectionId")),
			SubscriptionName: str("SubscriptionName"),
			ClientId:         str("ClientId"),
		}, nil
	case "Message":
		if a.Message == nil {
			return nil, nil
		}
		return convFromEngine(a.Message, a.Message.RedeliveryCounter, depth+1)
	}
	return nil, fmt.Errorf("openwire: advisory command %q: %w", a.Command, wire.ErrUnknownType)
}

// convAdvisoryToEngine describes an advisory payload received over OpenWire
// (from a network bridge, say) with the field names FromEngine reads, so
// that other protocols can render it. A payload of another type keeps its
// type name and no fields; OpenWire consumers get it whole from the
// original form.
func convAdvisoryToEngine(ds wire.DataStructure, depth int) (*message.Advisory, error) {
	s := message.StringValue
	b := message.BoolValue
	dest := func(d *wire.Destination) message.Value {
		if d == nil {
			return s("")
		}
		return s(d.String())
	}
	idStr := func(id interface{ String() string }, isNil bool) message.Value {
		if isNil {
			return s("")
		}
		return s(id.String())
	}
	p := func(name string, v message.Value) message.Property { return message.Property{Name: name, Value: v} }
	switch x := ds.(type) {
	case *wire.ConnectionInfo:
		return &message.Advisory{Command: "ConnectionInfo", Fields: message.Properties{
			p("ConnectionId", idStr(x.ConnectionId, x.ConnectionId == nil)),
			p("ClientId", s(x.ClientId)), p("UserName", s(x.UserName)), p("ClientIp", s(x.ClientIp)),
		}}, nil
	case *wire.ConsumerInfo:
		a := &message.Advisory{Command: "ConsumerInfo", Fields: message.Properties{
			p("ConsumerId", idStr(x.ConsumerId, x.ConsumerId == nil)),
			p("Destination", dest(x.Destination)),
			p("PrefetchSize", message.IntValue(x.PrefetchSize)),
			p("Selector", s(x.Selector)),
			p("SubscriptionName", s(x.SubscriptionName)),
			p("ClientId", s(x.ClientId)),
			p("NoLocal", b(x.NoLocal)), p("Exclusive", b(x.Exclusive)), p("Browser", b(x.Browser)),
			p("Priority", message.ByteValue(x.Priority)),
		}}
		if x.NetworkSubscription || len(x.BrokerPath) > 0 {
			a.Fields = append(a.Fields, p("NetworkSubscription", b(x.NetworkSubscription)),
				p("BrokerPath", s(strings.Join(brokerPathToEngine(x.BrokerPath), ","))))
		}
		if cp := ConsumerPathToEngine(x.NetworkConsumerPath); len(cp) > 0 {
			a.Fields = append(a.Fields, p("NetworkConsumerPath", s(strings.Join(cp, ","))))
		}
		return a, nil
	case *wire.BrokerInfo:
		id := ""
		if x.BrokerId != nil {
			id = x.BrokerId.Value
		}
		return &message.Advisory{Command: "BrokerInfo", Fields: message.Properties{
			p("BrokerId", s(id)), p("BrokerName", s(x.BrokerName)), p("BrokerURL", s(x.BrokerURL)),
			p("NetworkConnection", b(x.NetworkConnection)), p("DuplexConnection", b(x.DuplexConnection)),
		}}, nil
	case *wire.ProducerInfo:
		return &message.Advisory{Command: "ProducerInfo", Fields: message.Properties{
			p("ProducerId", idStr(x.ProducerId, x.ProducerId == nil)),
			p("Destination", dest(x.Destination)),
		}}, nil
	case *wire.DestinationInfo:
		return &message.Advisory{Command: "DestinationInfo", Fields: message.Properties{
			p("Destination", dest(x.Destination)),
			p("OperationType", message.ByteValue(int8(x.OperationType))),
		}}, nil
	case *wire.RemoveInfo:
		id := ""
		switch o := x.ObjectId.(type) {
		case *wire.ConnectionId:
			id = o.String()
		case *wire.SessionId:
			id = o.String()
		case *wire.ConsumerId:
			id = o.String()
		case *wire.ProducerId:
			id = o.String()
		}
		return &message.Advisory{Command: "RemoveInfo", Fields: message.Properties{p("ObjectId", s(id))}}, nil
	case *wire.RemoveSubscriptionInfo:
		return &message.Advisory{Command: "RemoveSubscriptionInfo", Fields: message.Properties{
			p("ConnectionId", idStr(x.ConnectionId, x.ConnectionId == nil)),
			p("SubscriptionName", s(x.SubscriptionName)),
			p("ClientId", s(x.ClientId)),
		}}, nil
	case *wire.Message:
		pm, err := convToEngine(x, depth+1)
		if err != nil {
			return nil, fmt.Errorf("advisory payload: %w", err)
		}
		return &message.Advisory{Command: "Message", Message: pm}, nil
	}
	return &message.Advisory{Command: wire.TypeName(ds.DataStructureType())}, nil
}

// brokerPathToEngine lists the ids of an OpenWire brokerPath (nil ids
// skipped); nil for an empty path.
func brokerPathToEngine(path []*wire.BrokerId) []string {
	var out []string
	for _, id := range path {
		if id != nil {
			out = append(out, id.Value)
		}
	}
	return out
}

// BrokerPathFromEngine is the OpenWire brokerPath of broker ids; nil for
// none.
func BrokerPathFromEngine(ids []string) []*wire.BrokerId {
	if len(ids) == 0 {
		return nil
	}
	out := make([]*wire.BrokerId, len(ids))
	for i, id := range ids {
		out[i] = &wire.BrokerId{Value: id}
	}
	return out
}

// splitPath reads the comma-separated BrokerPath of a ConsumerInfo
// advisory's fields.
func splitPath(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// ConsumerPathToEngine is a ConsumerInfo's networkConsumerPath as consumer
// id strings (engine.NetworkSpec.ConsumerPath).
func ConsumerPathToEngine(ids []*wire.ConsumerId) []string {
	var out []string
	for _, id := range ids {
		if id != nil {
			out = append(out, id.String())
		}
	}
	return out
}

// consumerPathFromEngine is the inverse of ConsumerPathToEngine; nil for
// none.
func consumerPathFromEngine(ids []string) []*wire.ConsumerId {
	var out []*wire.ConsumerId
	for _, id := range ids {
		if c := convConsumerID(id); c != nil {
			out = append(out, c)
		}
	}
	return out
}
