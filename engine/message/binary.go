package message

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The binary form is Wharf's own, for the temp store that non-persistent
// messages spill to (DESIGN.md "Storage"). The temp store is wiped at every
// start, so the form is never read by another version of Wharf, nor by
// anything else: it needs no compatibility, only to keep every field —
// Origin (noLocal) and Original (same-protocol delivery without
// re-encoding) included.
//
//	version byte (binaryVersion)
//	then the fields in the order AppendBinary writes them; strings and byte
//	slices as a uvarint length and the bytes, integers as (zigzag) varints.

// binaryVersion 2 added BrokerPath (network bridges, issue 20): a
// forwarded message that spilled must still not go back to a broker it
// came through.
const binaryVersion = 2

// maxAdvisoryDepth bounds the nesting of advisory payload messages (an
// advisory about a message carries a copy of it; that copy is never itself
// an advisory about an advisory, but a hostile input could nest forever).
const maxAdvisoryDepth = 2

// ErrBinary is wrapped by every error of UnmarshalBinary.
var ErrBinary = errors.New("message: bad binary form")

// AppendBinary appends the binary form of m to b.
func (m *Message) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, binaryVersion)
	return m.appendFields(b, 0)
}

func (m *Message) appendFields(b []byte, depth int) ([]byte, error) {
	if m.Advisory != nil && depth >= maxAdvisoryDepth {
		return nil, fmt.Errorf("message: advisory payloads nested deeper than %d", maxAdvisoryDepth)
	}
	b = appendString(b, m.ID)
	b = appendDest(b, m.Destination)
	b = appendDest(b, m.ReplyTo)
	b = appendString(b, m.CorrelationID)
	b = appendString(b, m.Type)
	b = append(b, m.Priority)
	var flags byte
	if m.Persistent {
		flags |= 1
	}
	if m.Retain {
		flags |= 2
	}
	if m.Advisory != nil {
		flags |= 4
	}
	b = append(b, flags)
	b = binary.AppendVarint(b, m.Timestamp)
	b = binary.AppendVarint(b, m.Expiration)
	b = appendString(b, m.UserID)
	b = appendString(b, m.GroupID)
	b = binary.AppendVarint(b, int64(m.GroupSeq))
	b = appendDest(b, m.OriginalDestination)
	b = binary.AppendVarint(b, int64(m.RedeliveryCounter))
	b = appendProps(b, m.Props)
	b = append(b, byte(m.BodyType))
	b = appendBytes(b, m.Body)
	b = appendProps(b, m.Map)
	b = binary.AppendUvarint(b, uint64(len(m.List)))
	for i := range m.List {
		b = appendValue(b, m.List[i])
	}
	b = appendString(b, m.Origin)
	b = appendString(b, m.Original.Protocol)
	b = appendBytes(b, m.Original.Marshalled())
	b = binary.AppendUvarint(b, uint64(len(m.BrokerPath)))
	for _, id := range m.BrokerPath {
		b = appendString(b, id)
	}
	if a := m.Advisory; a != nil {
		b = appendString(b, a.Command)
		b = appendProps(b, a.Fields)
		if a.Message == nil {
			b = append(b, 0)
		} else {
			b = append(b, 1)
			var err error
			if b, err = a.Message.appendFields(b, depth+1); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBytes(b []byte, p []byte) []byte {
	// A nil slice and an empty one are kept apart: a STOMP frame with
	// content-length:0 and one without a body are not the same message.
	if p == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(p))+1)
	return append(b, p...)
}

func appendDest(b []byte, d Destination) []byte {
	b = append(b, byte(d.Type))
	return appendString(b, d.Name)
}

func appendProps(b []byte, ps Properties) []byte {
	if ps == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(ps))+1)
	for i := range ps {
		b = appendString(b, ps[i].Name)
		b = appendValue(b, ps[i].Value)
	}
	return b
}

func appendValue(b []byte, v Value) []byte {
	b = append(b, byte(v.Kind))
	switch v.Kind {
	case Null:
	case String:
		b = appendString(b, v.str)
	case Bytes:
		b = appendBytes(b, v.raw)
	case Float, Double:
		b = binary.LittleEndian.AppendUint64(b, v.num)
	default:
		b = binary.AppendVarint(b, int64(v.num))
	}
	return b
}

// UnmarshalBinary decodes a message written by AppendBinary. Byte slices of
// the message (the body, bytes properties, the original encoding) share
// data, which the caller must not change afterwards. It never panics:
// malformed input is an error wrapping ErrBinary, and no count read from the
// input allocates more than the input could hold.
func UnmarshalBinary(data []byte) (*Message, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrBinary)
	}
	if data[0] != binaryVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrBinary, data[0], binaryVersion)
	}
	r := reader{b: data, off: 1}
	m := r.message(0)
	if r.err == nil && r.off != len(r.b) {
		r.fail("%d bytes after the message", len(r.b)-r.off)
	}
	if r.err != nil {
		return nil, r.err
	}
	return m, nil
}

type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at %d: %s", ErrBinary, r.off, fmt.Sprintf(format, args...))
	}
}

func (r *reader) byte1(what string) byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("truncated %s", what)
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.off += n
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail("bad %s", what)
		return 0
	}
	r.off += n
	return v
}

func (r *reader) int32(what string) int32 {
	v := r.varint(what)
	if v < math.MinInt32 || v > math.MaxInt32 {
		r.fail("%s %d out of range", what, v)
		return 0
	}
	return int32(v)
}

// take returns the next n bytes, checking n against what is left.
func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail("%s of %d bytes, %d left", what, n, len(r.b)-r.off)
		return nil
	}
	p := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return p
}

func (r *reader) string(what string) string {
	return string(r.take(r.uvarint(what), what))
}

func (r *reader) bytes(what string) []byte {
	n := r.uvarint(what)
	if n == 0 || r.err != nil {
		return nil
	}
	p := r.take(n-1, what)
	if p == nil && r.err == nil {
		p = []byte{}
	}
	return p
}

// count reads a list length; each element takes at least min bytes, so a
// count the rest of the input cannot hold is refused before allocating.
func (r *reader) count(what string, min int) uint64 {
	n := r.uvarint(what)
	if r.err == nil && n > uint64((len(r.b)-r.off)/min) {
		r.fail("%s %d exceeds what %d bytes can hold", what, n, len(r.b)-r.off)
		return 0
	}
	return n
}

func (r *reader) dest(what string) Destination {
	t := r.byte1(what)
	if t > byte(TempTopic) {
		r.fail("%s type %d", what, t)
	}
	return Destination{Type: DestType(t), Name: r.string(what)}
}

func (r *reader) props(what string) Properties {
	n := r.uvarint(what)
	if n == 0 || r.err != nil {
		return nil
	}
	n--
	// A property takes at least a name length and a kind.
	if n > uint64((len(r.b)-r.off)/2) {
		r.fail("%s count %d exceeds what %d bytes can hold", what, n, len(r.b)-r.off)
		return nil
	}
	ps := make(Properties, 0, n)
	for i := uint64(0); i < n && r.err == nil; i++ {
		name := r.string(what + " name")
		ps = append(ps, Property{Name: name, Value: r.value(what)})
	}
	return ps
}

func (r *reader) value(what string) Value {
	k := Kind(r.byte1(what + " kind"))
	v := Value{Kind: k}
	switch k {
	case Null:
	case String:
		v.str = r.string(what)
	case Bytes:
		v.raw = r.bytes(what)
	case Float, Double:
		if p := r.take(8, what); p != nil {
			v.num = binary.LittleEndian.Uint64(p)
		}
	case Bool, Byte, Short, Int, Long, Char:
		v.num = uint64(r.varint(what))
	default:
		r.fail("%s kind %d", what, k)
	}
	return v
}

func (r *reader) message(depth int) *Message {
	m := &Message{}
	m.ID = r.string("message id")
	m.Destination = r.dest("destination")
	m.ReplyTo = r.dest("reply-to")
	m.CorrelationID = r.string("correlation id")
	m.Type = r.string("type")
	m.Priority = r.byte1("priority")
	flags := r.byte1("flags")
	if flags&^7 != 0 {
		r.fail("flags %#x", flags)
	}
	m.Persistent = flags&1 != 0
	m.Retain = flags&2 != 0
	m.Timestamp = r.varint("timestamp")
	m.Expiration = r.varint("expiration")
	m.UserID = r.string("user id")
	m.GroupID = r.string("group id")
	m.GroupSeq = r.int32("group seq")
	m.OriginalDestination = r.dest("original destination")
	m.RedeliveryCounter = r.int32("redelivery counter")
	m.Props = r.props("properties")
	m.BodyType = BodyType(r.byte1("body type"))
	if m.BodyType > ObjectBody {
		r.fail("body type %d", m.BodyType)
	}
	m.Body = r.bytes("body")
	m.Map = r.props("map body")
	if n := r.count("stream body", 1); n > 0 {
		m.List = make([]Value, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			m.List = append(m.List, r.value("stream body"))
		}
	}
	m.Origin = r.string("origin")
	m.Original.Protocol = r.string("original protocol")
	m.Original.Bytes = r.bytes("original bytes")
	if n := r.count("broker path", 1); n > 0 {
		m.BrokerPath = make([]string, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			m.BrokerPath = append(m.BrokerPath, r.string("broker path"))
		}
	}
	if flags&4 != 0 && depth >= maxAdvisoryDepth {
		r.fail("advisory payloads nested deeper than %d", maxAdvisoryDepth)
	}
	if flags&4 != 0 && r.err == nil {
		a := &Advisory{Command: r.string("advisory command"), Fields: r.props("advisory fields")}
		switch r.byte1("advisory payload") {
		case 0:
		case 1:
			a.Message = r.message(depth + 1)
		default:
			r.fail("advisory payload flag")
		}
		m.Advisory = a
	}
	if r.err != nil {
		return nil
	}
	return m
}
