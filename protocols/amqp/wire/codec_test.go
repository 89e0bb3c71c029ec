package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Byte builders. They lay bytes out by hand (sizes and counts computed
// here, never by the encoder under test), so the golden inputs stay
// independent of AppendValue.

// hx parses hex bytes separated by spaces; a token in double quotes is
// ASCII text.
func hx(s string) []byte {
	var out []byte
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \n\t")
		if s == "" {
			break
		}
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			out = append(out, s[1:1+end]...)
			s = s[end+2:]
			continue
		}
		tok := s
		if i := strings.IndexAny(s, " \n\t"); i >= 0 {
			tok, s = s[:i], s[i:]
		} else {
			s = ""
		}
		b, err := hex.DecodeString(tok)
		if err != nil {
			panic(err)
		}
		out = append(out, b...)
	}
	return out
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// Encodings of single values.
func str8(s string) []byte { return cat([]byte{0xa1, byte(len(s))}, []byte(s)) }
func sym8(s string) []byte { return cat([]byte{0xa3, byte(len(s))}, []byte(s)) }
func bin8(b ...byte) []byte {
	return cat([]byte{0xa0, byte(len(b))}, b)
}
func smallUint(v byte) []byte  { return []byte{0x52, v} }
func smallUlong(v byte) []byte { return []byte{0x53, v} }
func uint32b(v uint32) []byte  { return binary.BigEndian.AppendUint32([]byte{0x70}, v) }
func ushortb(v uint16) []byte  { return binary.BigEndian.AppendUint16([]byte{0x60}, v) }

var (
	null  = []byte{0x40}
	true1 = []byte{0x41}
	fals1 = []byte{0x42}
	list0 = []byte{0x45}
)

// fits8 guards the 8-bit builders against silently wrapping a size.
func fits8(body []byte, count int) {
	if len(body)+1 > 255 || count > 255 {
		panic("test builder: use the 32-bit form")
	}
}

func list8(items ...[]byte) []byte {
	body := cat(items...)
	fits8(body, len(items))
	return cat([]byte{0xc0, byte(len(body) + 1), byte(len(items))}, body)
}

func list32(items ...[]byte) []byte {
	body := cat(items...)
	h := binary.BigEndian.AppendUint32([]byte{0xd0}, uint32(len(body)+4))
	return cat(binary.BigEndian.AppendUint32(h, uint32(len(items))), body)
}

func map8(kv ...[]byte) []byte {
	body := cat(kv...)
	fits8(body, len(kv))
	return cat([]byte{0xc1, byte(len(body) + 1), byte(len(kv))}, body)
}

func map32(kv ...[]byte) []byte {
	body := cat(kv...)
	h := binary.BigEndian.AppendUint32([]byte{0xd1}, uint32(len(body)+4))
	return cat(binary.BigEndian.AppendUint32(h, uint32(len(kv))), body)
}

// array8 lays out an array: ctor is the element constructor (with its
// descriptor for a described array), elems the element data.
func array8(ctor []byte, elems ...[]byte) []byte {
	body := cat(ctor, cat(elems...))
	fits8(body, len(elems))
	return cat([]byte{0xe0, byte(len(body) + 1), byte(len(elems))}, body)
}

func array32(ctor []byte, elems ...[]byte) []byte {
	body := cat(ctor, cat(elems...))
	h := binary.BigEndian.AppendUint32([]byte{0xf0}, uint32(len(body)+4))
	return cat(binary.BigEndian.AppendUint32(h, uint32(len(elems))), body)
}

// symArray8 is an array of sym8 symbols, as Proton sends capabilities.
func symArray8(syms ...string) []byte {
	var elems [][]byte
	for _, s := range syms {
		elems = append(elems, cat([]byte{byte(len(s))}, []byte(s)))
	}
	return array8([]byte{0xa3}, elems...)
}

// described prefixes v with a smallulong descriptor.
func described(code byte, v []byte) []byte { return cat([]byte{0x00, 0x53, code}, v) }

// frame lays out a frame with doff 2.
func frame(typ byte, channel uint16, body ...[]byte) []byte {
	b := cat(body...)
	h := binary.BigEndian.AppendUint32(nil, uint32(8+len(b)))
	h = append(h, 2, typ, byte(channel>>8), byte(channel))
	return cat(h, b)
}

func amqpFrame(channel uint16, body ...[]byte) []byte { return frame(0, channel, body...) }
func saslFrame(body ...[]byte) []byte                 { return frame(1, 0, body...) }

var (
	hdrAMQP = []byte(HeaderAMQP)
	hdrSASL = []byte(HeaderSASL)
	hdrTLS  = []byte(HeaderTLS)
)

// Decoded-value helpers.
func u32p(v uint32) *uint32 { return &v }
func u16p(v uint16) *uint16 { return &v }
func boolp(v bool) *bool    { return &v }

func headerFrame(p ProtocolID) Frame { return Frame{Type: FrameHeader, Protocol: p} }
func amqp(ch uint16, p Performative, payload ...byte) Frame {
	f := Frame{Type: FrameAMQP, Channel: ch, Body: p}
	if len(payload) > 0 {
		f.Payload = payload
	}
	return f
}
func sasl(p Performative) Frame { return Frame{Type: FrameSASL, Body: p} }

// caseKind selects the decoder a golden case runs through.
type caseKind uint8

const (
	kindStream  caseKind = iota // Decoder.Feed from a fresh decoder
	kindValue                   // DecodeValue
	kindMessage                 // DecodeMessage
)

// goldenCase is one row of the AMQP codec golden table. The same table
// seeds FuzzAMQPWireDecode.
type goldenCase struct {
	name   string
	kind   caseKind
	raw    []byte
	limits *Limits // nil: DefaultLimits
	frames []Frame // kindStream: frames before any error
	value  any     // kindValue
	msg    *Message
	err    error  // sentinel the decoder must return
	cond   Symbol // condition the error must carry, when set
}

func lim(fn func(*Limits)) *Limits {
	l := DefaultLimits()
	fn(&l)
	return &l
}

func (tc goldenCase) limitsOrDefault() Limits {
	if tc.limits != nil {
		return *tc.limits
	}
	return DefaultLimits()
}

// Performatives as real clients send them.

// qpidJMSOpen is the Open of Qpid JMS 1.x (Proton-J): container-id,
// hostname, max-frame-size 1 MiB, channel-max 32767, idle-time-out 60 s,
// desired capabilities and the product properties.
var qpidJMSOpen = described(0x10, list32(
	str8("ID:5e4c1a02-3b1f-4a8e-9c77-1f0b2c3d4e5f:1"),
	str8("localhost"),
	uint32b(1048576),
	ushortb(32767),
	uint32b(60000),
	null, null, null,
	symArray8("sole-connection-for-container", "DELAYED_DELIVERY", "SHARED-SUBS", "ANONYMOUS-RELAY"),
	map8(sym8("product"), str8("QpidJMS"), sym8("version"), str8("1.10.0"), sym8("platform"), str8("JVM: 17.0.9, 17.0.9+9, Eclipse Adoptium, OS: Linux, 6.1.0, amd64")),
))

var qpidJMSOpenWant = &Open{
	ContainerID:         "ID:5e4c1a02-3b1f-4a8e-9c77-1f0b2c3d4e5f:1",
	Hostname:            "localhost",
	MaxFrameSize:        1048576,
	ChannelMax:          32767,
	IdleTimeOut:         60 * time.Second,
	DesiredCapabilities: []Symbol{"sole-connection-for-container", "DELAYED_DELIVERY", "SHARED-SUBS", "ANONYMOUS-RELAY"},
	Properties: NewMap(Symbol("product"), "QpidJMS", Symbol("version"), "1.10.0",
		Symbol("platform"), "JVM: 17.0.9, 17.0.9+9, Eclipse Adoptium, OS: Linux, 6.1.0, amd64"),
}

// goAMQPOpen is the Open of Azure go-amqp 1.x: container-id, hostname,
// max-frame-size 65536, channel-max 65535 written out, and idle-time-out
// written with the smallest uint encoding (go-amqp writes uint 0 as 0x43).
var goAMQPOpen = described(0x10, list8(
	str8("f9cf6f3a4b7c4c37a1b2c3d4e5f60718"),
	str8("broker.example"),
	uint32b(65536),
	ushortb(65535),
	[]byte{0x43},
))

// qpidJMSBegin: next-outgoing-id 1, windows 2047 and MaxInt, handle-max 65535.
var qpidJMSBegin = described(0x11, list8(null, smallUint(1), uint32b(2047), uint32b(0x7fffffff), uint32b(65535)))

// qpidJMSReceiverAttach: a consumer on queue://orders with a JMS selector
// filter (descriptor 0x0000468C00000004, apache.org:selector-filter:string),
// the outcomes Qpid JMS supports and default-outcome modified(failed).
var selectorFilter = cat(hx("00 80 00 00 46 8c 00 00 00 04"), str8("color = 'red'"))

var qpidJMSReceiverAttach = described(0x12, list32(
	str8("qpid-jms:receiver:ID:1:1:1:1:orders"),
	[]byte{0x43},
	true1,
	null, null,
	described(0x28, list32(
		str8("queue://orders"),
		[]byte{0x43},
		sym8("link-detach"),
		[]byte{0x43},
		fals1,
		null,
		null,
		map8(sym8("jms-selector"), selectorFilter),
		described(0x27, list8(true1)),
		symArray8("amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list"),
		symArray8("queue"),
	)),
	described(0x29, list0),
))

var qpidJMSReceiverAttachWant = &Attach{
	Name:          "qpid-jms:receiver:ID:1:1:1:1:orders",
	Handle:        0,
	Role:          RoleReceiver,
	SndSettleMode: SndSettleMixed,
	RcvSettleMode: RcvSettleFirst,
	Source: &Source{
		Address:        "queue://orders",
		ExpiryPolicy:   ExpiryLinkDetach,
		Filter:         NewMap(Symbol("jms-selector"), Described{Descriptor: uint64(0x0000468C00000004), Value: "color = 'red'"}),
		DefaultOutcome: &Modified{DeliveryFailed: true},
		Outcomes:       []Symbol{"amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list"},
		Capabilities:   []Symbol{"queue"},
	},
	Target: &Target{ExpiryPolicy: ExpirySessionEnd},
}

// senderAttach: a producer link with settled/first modes written out and
// an initial-delivery-count, target with a durable address.
var senderAttach = described(0x12, list8(
	str8("sender-1"),
	smallUint(1),
	fals1,
	[]byte{0x50, 0x01},
	[]byte{0x50, 0x00},
	described(0x28, list8(str8("client"))),
	described(0x29, list8(str8("topic://prices"), smallUint(2), sym8("never"), smallUint(30))),
	null,
	null,
	[]byte{0x43},
	[]byte{0x80, 0, 0, 0, 0, 0, 0x10, 0, 0},
))

var transferPayload = cat(
	described(0x70, list8(true1)),
	described(0x73, list8(str8("msg-1"), null, str8("queue://orders"))),
	described(0x75, bin8('h', 'e', 'l', 'l', 'o')),
)

func goldenCases() []goldenCase {
	var deepList []byte = list0
	for range 40 {
		deepList = list8(deepList)
	}
	cases := []goldenCase{
		// ---- primitives, every encoding (AMQP 1.0 §1.6) ----
		{name: "null", kind: kindValue, raw: hx("40"), value: nil},
		{name: "boolean true", kind: kindValue, raw: hx("41"), value: true},
		{name: "boolean false", kind: kindValue, raw: hx("42"), value: false},
		{name: "boolean 0x56 true", kind: kindValue, raw: hx("56 01"), value: true},
		{name: "boolean 0x56 false", kind: kindValue, raw: hx("56 00"), value: false},
		{name: "boolean 0x56 other byte is refused", kind: kindValue, raw: hx("56 02"), err: ErrMalformed, cond: ErrCondDecodeError},
		{name: "ubyte", kind: kindValue, raw: hx("50 ff"), value: uint8(255)},
		{name: "ushort", kind: kindValue, raw: hx("60 12 34"), value: uint16(0x1234)},
		{name: "uint", kind: kindValue, raw: hx("70 00 01 00 00"), value: uint32(65536)},
		{name: "smalluint", kind: kindValue, raw: hx("52 ff"), value: uint32(255)},
		{name: "uint0", kind: kindValue, raw: hx("43"), value: uint32(0)},
		{name: "ulong", kind: kindValue, raw: hx("80 01 02 03 04 05 06 07 08"), value: uint64(0x0102030405060708)},
		{name: "smallulong", kind: kindValue, raw: hx("53 07"), value: uint64(7)},
		{name: "ulong0", kind: kindValue, raw: hx("44"), value: uint64(0)},
		{name: "byte", kind: kindValue, raw: hx("51 ff"), value: int8(-1)},
		{name: "short", kind: kindValue, raw: hx("61 ff fe"), value: int16(-2)},
		{name: "int", kind: kindValue, raw: hx("71 ff ff ff fd"), value: int32(-3)},
		{name: "smallint", kind: kindValue, raw: hx("54 fc"), value: int32(-4)},
		{name: "long", kind: kindValue, raw: hx("81 7f ff ff ff ff ff ff ff"), value: int64(math.MaxInt64)},
		{name: "smalllong", kind: kindValue, raw: hx("55 80"), value: int64(-128)},
		{name: "float", kind: kindValue, raw: hx("72 3f c0 00 00"), value: float32(1.5)},
		{name: "double", kind: kindValue, raw: hx("82 3f f8 00 00 00 00 00 00"), value: float64(1.5)},
		{name: "decimal32", kind: kindValue, raw: hx("74 22 50 00 01"), value: Decimal32{0x22, 0x50, 0, 1}},
		{name: "decimal64", kind: kindValue, raw: hx("84 22 38 00 00 00 00 00 07"), value: Decimal64{0x22, 0x38, 0, 0, 0, 0, 0, 7}},
		{name: "decimal128", kind: kindValue, raw: hx("94 22 08 00 00 00 00 00 00 00 00 00 00 00 00 00 09"),
			value: Decimal128{0x22, 0x08, 15: 9}},
		{name: "char", kind: kindValue, raw: hx("73 00 01 f6 00"), value: Char('😀')},
		{name: "char surrogate is refused", kind: kindValue, raw: hx("73 00 00 d8 00"), err: ErrMalformed},
		{name: "timestamp", kind: kindValue, raw: hx("83 00 00 01 8b cf e5 68 00"), value: Timestamp(1699999999999 + 1)},
		{name: "uuid", kind: kindValue, raw: hx("98 12 3e 45 67 e8 9b 12 d3 a4 56 42 66 14 17 40 00"),
			value: UUID{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00}},
		{name: "vbin8", kind: kindValue, raw: hx("a0 03 01 02 03"), value: []byte{1, 2, 3}},
		{name: "vbin8 empty", kind: kindValue, raw: hx("a0 00"), value: []byte{}},
		{name: "vbin32", kind: kindValue, raw: hx("b0 00 00 00 02 aa bb"), value: []byte{0xaa, 0xbb}},
		{name: "str8", kind: kindValue, raw: hx(`a1 06 "h" c3 a9 "llo"`), value: "héllo"},
		{name: "str32", kind: kindValue, raw: hx(`b1 00 00 00 03 "abc"`), value: "abc"},
		{name: "string with bad UTF-8 is refused", kind: kindValue, raw: hx("a1 02 c3 28"), err: ErrMalformed, cond: ErrCondDecodeError},
		{name: "sym8", kind: kindValue, raw: hx(`a3 05 "PLAIN"`), value: Symbol("PLAIN")},
		{name: "sym32", kind: kindValue, raw: hx(`b3 00 00 00 09 "ANONYMOUS"`), value: Symbol("ANONYMOUS")},
		{name: "symbol with non-ASCII is refused", kind: kindValue, raw: hx(`a3 02 "a" ff`), err: ErrMalformed},
		{name: "list0", kind: kindValue, raw: hx("45"), value: []any{}},
		{name: "list8", kind: kindValue, raw: list8(smallUint(1), str8("a"), null), value: []any{uint32(1), "a", nil}},
		{name: "list32", kind: kindValue, raw: list32(true1, list0), value: []any{true, []any{}}},
		{name: "map8", kind: kindValue, raw: map8(sym8("k"), smallUlong(1), str8("s"), null),
			value: NewMap(Symbol("k"), uint64(1), "s", nil)},
		{name: "map32 with non-string keys", kind: kindValue, raw: map32(smallUint(1), true1, []byte{0x45}, fals1),
			value: NewMap(uint32(1), true, []any{}, false)},
		{name: "map8 empty", kind: kindValue, raw: hx("c1 01 00"), value: &Map{}},
		{name: "array8 of sym8", kind: kindValue, raw: symArray8("a", "bc"),
			value: Array{Type: TypeSymbol, Elems: []any{Symbol("a"), Symbol("bc")}}},
		{name: "array32 of uint", kind: kindValue, raw: array32([]byte{0x70}, hx("00 00 00 01"), hx("00 01 00 00")),
			value: Array{Type: TypeUint, Elems: []any{uint32(1), uint32(65536)}}},
		{name: "array of smallint", kind: kindValue, raw: array8([]byte{0x54}, hx("ff"), hx("01")),
			value: Array{Type: TypeInt, Elems: []any{int32(-1), int32(1)}}},
		{name: "array of boolean 0x56", kind: kindValue, raw: array8([]byte{0x56}, hx("01"), hx("00")),
			value: Array{Type: TypeBoolean, Elems: []any{true, false}}},
		{name: "array of true", kind: kindValue, raw: hx("e0 02 03 41"),
			value: Array{Type: TypeBoolean, Elems: []any{true, true, true}}},
		{name: "array of null", kind: kindValue, raw: hx("e0 02 02 40"), value: Array{Type: TypeNull, Elems: []any{nil, nil}}},
		{name: "empty array keeps its type", kind: kindValue, raw: hx("e0 02 00 a1"), value: Array{Type: TypeString, Elems: []any{}}},
		{name: "array of described", kind: kindValue,
			raw:   array8(cat(hx("00 53 26"), []byte{0x45})),
			value: Array{Type: TypeList, Descriptor: uint64(0x26), Elems: []any{}}},
		{name: "array of described lists", kind: kindValue,
			raw:   array8(cat(hx("00 a3 03"), []byte("x:y"), []byte{0xc0}), hx("02 01 41"), hx("01 00")),
			value: Array{Type: TypeList, Descriptor: Symbol("x:y"), Elems: []any{[]any{true}, []any{}}}},
		{name: "array of arrays", kind: kindValue,
			raw: array8([]byte{0xe0}, hx("04 02 52 01 02"), hx(`03 01 a1 00`)),
			value: Array{Type: TypeArray, Elems: []any{
				Array{Type: TypeUint, Elems: []any{uint32(1), uint32(2)}},
				Array{Type: TypeString, Elems: []any{""}},
			}}},
		{name: "array of maps", kind: kindValue, raw: array8([]byte{0xc1}, hx(`05 02 a3 01 "k" 41`)),
			value: Array{Type: TypeMap, Elems: []any{NewMap(Symbol("k"), true)}}},
		{name: "described with numeric descriptor", kind: kindValue, raw: described(0x77, str8("hi")),
			value: Described{Descriptor: uint64(0x77), Value: "hi"}},
		{name: "described with symbolic descriptor", kind: kindValue, raw: cat([]byte{0}, sym8("com.example:x"), smallUint(3)),
			value: Described{Descriptor: Symbol("com.example:x"), Value: uint32(3)}},
		{name: "described with full ulong descriptor", kind: kindValue, raw: cat(hx("00 80 00 00 46 8c 00 00 00 03"), list0),
			value: Described{Descriptor: uint64(0x0000468C00000003), Value: []any{}}},

		// ---- malformed values ----
		{name: "unknown constructor", kind: kindValue, raw: hx("57"), err: ErrMalformed, cond: ErrCondDecodeError},
		{name: "truncated uint", kind: kindValue, raw: hx("70 00 00"), err: ErrMalformed},
		{name: "truncated str8", kind: kindValue, raw: hx(`a1 05 "abc"`), err: ErrMalformed},
		{name: "vbin32 length past the end", kind: kindValue, raw: hx("b0 7f ff ff ff 00"), err: ErrMalformed},
		{name: "list count lying", kind: kindValue, raw: hx("c0 03 05 41 42"), err: ErrMalformed},
		{name: "list32 count lying", kind: kindValue, raw: hx("d0 00 00 00 05 00 00 00 05 41"), err: ErrMalformed},
		{name: "list size past the end", kind: kindValue, raw: hx("c0 10 01 41"), err: ErrMalformed},
		{name: "list with bytes left over", kind: kindValue, raw: hx("c0 04 01 41 42 43"), err: ErrMalformed},
		{name: "list element running past the list", kind: kindValue, raw: hx(`c0 03 01 a1 05 "hello"`), err: ErrMalformed},
		{name: "list size zero", kind: kindValue, raw: hx("c0 00"), err: ErrMalformed},
		{name: "map with odd count", kind: kindValue, raw: map8(sym8("k"), true1, sym8("j")), err: ErrMalformed},
		{name: "array with mixed constructors", kind: kindValue,
			raw: array8([]byte{0xa1}, str8("ab"), str8("c")), err: ErrMalformed},
		{name: "array count lying", kind: kindValue, raw: hx("e0 03 09 52 01"), err: ErrMalformed},
		{name: "array without constructor", kind: kindValue, raw: hx("e0 01 00"), err: ErrMalformed},
		{name: "array with unknown constructor", kind: kindValue, raw: hx("e0 02 01 57"), err: ErrMalformed},
		{name: "array doubly described", kind: kindValue, raw: hx("e0 06 01 00 53 01 00 53"), err: ErrMalformed},
		{name: "zero-width array beyond the element limit", kind: kindValue, raw: hx("f0 00 00 00 05 00 01 00 00 40"),
			limits: lim(func(l *Limits) { l.MaxContainerCount = 1000 }), err: ErrTooManyElements},
		{name: "zero-width arrays share one budget", kind: kindValue,
			raw:    list8(hx("e0 02 06 40"), hx("e0 02 06 40")),
			limits: lim(func(l *Limits) { l.MaxContainerCount = 10 }), err: ErrTooManyElements},
		{name: "list over the element limit", kind: kindValue, raw: list8(true1, true1, true1),
			limits: lim(func(l *Limits) { l.MaxContainerCount = 2 }), err: ErrTooManyElements},
		{name: "nesting too deep", kind: kindValue, raw: deepList, err: ErrNestingTooDeep, cond: ErrCondDecodeError},
		{name: "described nesting too deep", kind: kindValue,
			raw:    bytes.Repeat(hx("00 53 01"), 5),
			limits: lim(func(l *Limits) { l.MaxNesting = 4 }), err: ErrNestingTooDeep},
		{name: "descriptor of the wrong type", kind: kindValue, raw: cat([]byte{0}, str8("x"), null), err: ErrMalformed},
		{name: "empty input", kind: kindValue, raw: nil, err: ErrMalformed},

		// ---- protocol headers (AMQP 1.0 §2.2, §5.1, §5.2) ----
		{name: "amqp header", raw: hdrAMQP, frames: []Frame{headerFrame(ProtocolAMQP)}},
		{name: "tls header", raw: hdrTLS, frames: []Frame{headerFrame(ProtocolTLS)}},
		{name: "tls header then the header inside TLS", raw: cat(hdrTLS, hdrSASL),
			frames: []Frame{headerFrame(ProtocolTLS), headerFrame(ProtocolSASL)}},
		{name: "http request is not amqp", raw: []byte("GET / HTTP/1.1\r\n"), err: ErrProtocolHeader},
		{name: "amqp 0-9-1 header is refused", raw: hx(`"AMQP" 00 00 09 01`), err: ErrProtocolHeader},
		{name: "amqp 1.0.1 header is refused", raw: hx(`"AMQP" 00 01 00 01`), err: ErrProtocolHeader},
		{name: "unknown protocol id is refused", raw: hx(`"AMQP" 01 01 00 00`), err: ErrProtocolHeader},

		// ---- SASL (AMQP 1.0 §5.3) ----
		{name: "activemq sasl-mechanisms, literal bytes",
			raw: cat(hdrSASL, hx(`00 00 00 22 02 01 00 00 00 53 40 c0 15 01 e0 12 02 a3 05 "PLAIN" 09 "ANONYMOUS"`)),
			frames: []Frame{headerFrame(ProtocolSASL),
				sasl(&SASLMechanisms{Mechanisms: []Symbol{"PLAIN", "ANONYMOUS"}})}},
		{name: "sasl-init plain then amqp header and open",
			raw: cat(hdrSASL,
				saslFrame(described(0x41, list8(sym8("PLAIN"), bin8(0, 'g', 'u', 'e', 's', 't', 0, 'p', 'w'), str8("localhost")))),
				hdrAMQP,
				amqpFrame(0, described(0x10, list8(str8("c1"))))),
			frames: []Frame{headerFrame(ProtocolSASL),
				sasl(&SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("\x00guest\x00pw"), Hostname: "localhost"}),
				headerFrame(ProtocolAMQP),
				amqp(0, &Open{ContainerID: "c1", MaxFrameSize: math.MaxUint32, ChannelMax: math.MaxUint16})}},
		{name: "sasl-init anonymous with a single symbol",
			raw:    cat(hdrSASL, saslFrame(described(0x41, list8(sym8("ANONYMOUS"))))),
			frames: []Frame{headerFrame(ProtocolSASL), sasl(&SASLInit{Mechanism: "ANONYMOUS"})}},
		{name: "sasl-mechanisms as a single symbol",
			raw:    cat(hdrSASL, saslFrame(described(0x40, list8(sym8("EXTERNAL"))))),
			frames: []Frame{headerFrame(ProtocolSASL), sasl(&SASLMechanisms{Mechanisms: []Symbol{"EXTERNAL"}})}},
		{name: "client side: mechanisms, challenge, outcome, header",
			raw: cat(hdrSASL,
				saslFrame(described(0x40, list8(symArray8("SCRAM-SHA-256")))),
				saslFrame(described(0x42, list8(bin8('r', '=', 'x')))),
				saslFrame(described(0x44, list8([]byte{0x50, 0}, bin8('v', '=', 'y')))),
				hdrAMQP),
			frames: []Frame{headerFrame(ProtocolSASL),
				sasl(&SASLMechanisms{Mechanisms: []Symbol{"SCRAM-SHA-256"}}),
				sasl(&SASLChallenge{Challenge: []byte("r=x")}),
				sasl(&SASLOutcome{Code: SASLOK, AdditionalData: []byte("v=y")}),
				headerFrame(ProtocolAMQP)}},
		{name: "sasl-response", raw: cat(hdrSASL, saslFrame(described(0x43, list8(bin8('p')))), hdrAMQP),
			frames: []Frame{headerFrame(ProtocolSASL), sasl(&SASLResponse{Response: []byte("p")}), headerFrame(ProtocolAMQP)}},
		{name: "sasl-outcome auth failure", raw: cat(hdrSASL, saslFrame(described(0x44, list8([]byte{0x50, 1})))),
			frames: []Frame{headerFrame(ProtocolSASL), sasl(&SASLOutcome{Code: SASLAuth})}},
		{name: "sasl-outcome with a bad code", raw: cat(hdrSASL, saslFrame(described(0x44, list8([]byte{0x50, 9})))),
			frames: []Frame{headerFrame(ProtocolSASL)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "sasl-init without mechanism", raw: cat(hdrSASL, saslFrame(described(0x41, list8(null)))),
			frames: []Frame{headerFrame(ProtocolSASL)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "header bytes read as a frame when SASL is not ended",
			raw:    cat(hdrSASL, saslFrame(described(0x40, list8(sym8("PLAIN")))), hdrAMQP),
			frames: []Frame{headerFrame(ProtocolSASL), sasl(&SASLMechanisms{Mechanisms: []Symbol{"PLAIN"}})},
			err:    ErrFrameTooLarge, cond: ErrCondFramingError},
		{name: "empty sasl frame", raw: cat(hdrSASL, saslFrame()), frames: []Frame{headerFrame(ProtocolSASL)}, err: ErrMalformedFrame},
		{name: "amqp frame during sasl", raw: cat(hdrSASL, amqpFrame(0, described(0x10, list8(str8("c"))))),
			frames: []Frame{headerFrame(ProtocolSASL)}, err: ErrMalformedFrame, cond: ErrCondFramingError},
		{name: "sasl frame after the amqp header", raw: cat(hdrAMQP, saslFrame(described(0x41, list8(sym8("PLAIN"))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformedFrame},
		{name: "performative in a sasl frame", raw: cat(hdrSASL, saslFrame(described(0x10, list8(str8("c"))))),
			frames: []Frame{headerFrame(ProtocolSASL)}, err: ErrInvalidField, cond: ErrCondDecodeError},

		// ---- frames and performatives (AMQP 1.0 §2.3, §2.7) ----
		{name: "heartbeat, literal bytes", raw: cat(hdrAMQP, hx("00 00 00 08 02 00 00 00")),
			frames: []Frame{headerFrame(ProtocolAMQP), {Type: FrameAMQP}}},
		{name: "extended header is skipped",
			raw:    cat(hdrAMQP, hx("00 00 00 10 03 00 00 05 de ad be ef 00 53 17 45")),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(5, &End{})}},
		{name: "empty frame with an extended header", raw: cat(hdrAMQP, hx("00 00 00 0c 03 00 00 01 00 00 00 00")),
			frames: []Frame{headerFrame(ProtocolAMQP), {Type: FrameAMQP, Channel: 1}}},
		{name: "qpid jms open", raw: cat(hdrAMQP, amqpFrame(0, qpidJMSOpen)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, qpidJMSOpenWant)}},
		{name: "go-amqp open", raw: cat(hdrAMQP, amqpFrame(0, goAMQPOpen)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Open{ContainerID: "f9cf6f3a4b7c4c37a1b2c3d4e5f60718",
				Hostname: "broker.example", MaxFrameSize: 65536, ChannelMax: 65535})}},
		{name: "open with list0 misses container-id", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, list0))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "open with null container-id", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, list8(null, str8("h"))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "open with container-id of the wrong type", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, list8(sym8("c"))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondDecodeError},
		{name: "open with too many fields",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x10, list8(str8("c"), null, null, null, null, null, null, null, null, null, null)))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "open with bytes after it", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, list8(str8("c"))), hx("00"))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformed},
		{name: "open with a symbolic descriptor",
			raw:    cat(hdrAMQP, amqpFrame(0, []byte{0}, sym8("amqp:open:list"), list8(str8("c"), null, smallUint(0)))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Open{ContainerID: "c", MaxFrameSize: 0, ChannelMax: 65535})}},
		{name: "qpid jms begin", raw: cat(hdrAMQP, amqpFrame(1, qpidJMSBegin)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Begin{NextOutgoingID: 1, IncomingWindow: 2047,
				OutgoingWindow: 0x7fffffff, HandleMax: 65535})}},
		{name: "broker begin answering channel 1",
			raw: cat(hdrAMQP, amqpFrame(0, described(0x11, list8(ushortb(1), []byte{0x43}, uint32b(1000), uint32b(1000))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Begin{RemoteChannel: u16p(1), IncomingWindow: 1000,
				OutgoingWindow: 1000, HandleMax: math.MaxUint32})}},
		{name: "begin missing incoming-window", raw: cat(hdrAMQP, amqpFrame(0, described(0x11, list8(null, smallUint(1))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "qpid jms receiver attach with selector", raw: cat(hdrAMQP, amqpFrame(1, qpidJMSReceiverAttach)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, qpidJMSReceiverAttachWant)}},
		{name: "sender attach", raw: cat(hdrAMQP, amqpFrame(0, senderAttach)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Attach{Name: "sender-1", Handle: 1, Role: RoleSender,
				SndSettleMode: SndSettleSettled, RcvSettleMode: RcvSettleFirst,
				Source:               &Source{Address: "client", ExpiryPolicy: ExpirySessionEnd},
				Target:               &Target{Address: "topic://prices", Durable: DurableUnsettledState, ExpiryPolicy: ExpiryNever, Timeout: 30 * time.Second},
				InitialDeliveryCount: u32p(0), MaxMessageSize: 1 << 20})}},
		{name: "coordinator attach",
			raw: cat(hdrAMQP, amqpFrame(0, described(0x12, list8(str8("txn"), smallUint(2), fals1, null, null,
				described(0x28, list0), described(0x30, list8(symArray8("amqp:local-transactions"))))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Attach{Name: "txn", Handle: 2, SndSettleMode: SndSettleMixed,
				Source: &Source{ExpiryPolicy: ExpirySessionEnd},
				Target: &Coordinator{Capabilities: []Symbol{"amqp:local-transactions"}}})}},
		{name: "attach with bad snd-settle-mode",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x12, list8(str8("l"), smallUint(0), fals1, []byte{0x50, 3})))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "attach with a delivery state as target",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x12, list8(str8("l"), smallUint(0), fals1, null, null, null, described(0x24, list0))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondDecodeError},
		{name: "attach with an unknown expiry policy",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x12, list8(str8("l"), smallUint(0), fals1, null, null, described(0x28, list8(null, null, sym8("sometimes"))))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "flow granting credit",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x13, list8(smallUint(1), uint32b(2047), smallUint(1), uint32b(0x7fffffff),
				[]byte{0x43}, []byte{0x43}, uint32b(1000), null, fals1, true1)))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Flow{NextIncomingID: u32p(1), IncomingWindow: 2047, NextOutgoingID: 1,
				OutgoingWindow: 0x7fffffff, Handle: u32p(0), DeliveryCount: u32p(0), LinkCredit: u32p(1000), Echo: true})}},
		{name: "session flow without handle",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x13, list8(null, smallUint(10), smallUint(0), smallUint(10))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Flow{IncomingWindow: 10, OutgoingWindow: 10})}},
		{name: "transfer with a message payload",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x14, list8([]byte{0x43}, []byte{0x43}, bin8(0, 0, 0, 1), []byte{0x43}, fals1)), transferPayload)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Transfer{DeliveryID: u32p(0), DeliveryTag: []byte{0, 0, 0, 1},
				MessageFormat: u32p(0), Settled: boolp(false)}, transferPayload...)}},
		{name: "continuation transfer and abort",
			raw: cat(hdrAMQP,
				amqpFrame(1, described(0x14, list8(smallUint(3), smallUint(9), bin8(1), []byte{0x43}, null, true1)), []byte("part1")),
				amqpFrame(1, described(0x14, list8(smallUint(3), null, null, null, null, true1)), []byte("part2")),
				amqpFrame(1, described(0x14, list8(smallUint(3), null, null, null, true1, fals1, null, null, null, true1)))),
			frames: []Frame{headerFrame(ProtocolAMQP),
				amqp(1, &Transfer{Handle: 3, DeliveryID: u32p(9), DeliveryTag: []byte{1}, MessageFormat: u32p(0), More: true}, []byte("part1")...),
				amqp(1, &Transfer{Handle: 3, More: true}, []byte("part2")...),
				amqp(1, &Transfer{Handle: 3, Settled: boolp(true), Aborted: true})}},
		{name: "transfer with transactional state and rcv-settle-mode",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x14, list8([]byte{0x43}, smallUint(1), bin8(7), []byte{0x43}, fals1, fals1,
				[]byte{0x50, 1}, described(0x34, list8(bin8(0, 0, 0, 0, 0, 0, 0, 5))))), []byte{0x00, 0x53, 0x77, 0x40})),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Transfer{DeliveryID: u32p(1), DeliveryTag: []byte{7}, MessageFormat: u32p(0),
				Settled: boolp(false), RcvSettleMode: new(RcvSettleSecond),
				State: &TransactionalState{TxnID: []byte{0, 0, 0, 0, 0, 0, 0, 5}}}, 0x00, 0x53, 0x77, 0x40)}},
		{name: "transfer missing handle", raw: cat(hdrAMQP, amqpFrame(0, described(0x14, list0))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "transfer with an unknown delivery state",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x14, list8([]byte{0x43}, null, null, null, null, null, null, described(0x99, list0))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "disposition accepted",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x15, list8(true1, smallUint(5), smallUint(9), true1, described(0x24, list0))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Disposition{Role: RoleReceiver, First: 5, Last: u32p(9),
				Settled: true, State: &Accepted{}})}},
		{name: "disposition modified",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x15, list8(true1, []byte{0x43}, null, true1,
				described(0x27, list8(true1, true1, map8(sym8("x-opt-reason"), str8("slow")))))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Disposition{Role: RoleReceiver, Settled: true,
				State: &Modified{DeliveryFailed: true, UndeliverableHere: true, MessageAnnotations: NewMap(Symbol("x-opt-reason"), "slow")}})}},
		{name: "disposition rejected, released, received, declared",
			raw: cat(hdrAMQP,
				amqpFrame(1, described(0x15, list8(fals1, smallUint(1), null, true1,
					described(0x25, list8(described(0x1d, list8(sym8("amqp:not-allowed"), str8("no")))))))),
				amqpFrame(1, described(0x15, list8(fals1, smallUint(2), null, true1, described(0x26, list0)))),
				amqpFrame(1, described(0x15, list8(fals1, smallUint(3), null, fals1, described(0x23, list8(smallUint(1), smallUlong(20)))))),
				amqpFrame(1, described(0x15, list8(fals1, smallUint(4), null, true1, described(0x33, list8(bin8(0, 0, 0, 0, 0, 0, 0, 1))))))),
			frames: []Frame{headerFrame(ProtocolAMQP),
				amqp(1, &Disposition{First: 1, Settled: true, State: &Rejected{Error: &Error{Condition: ErrCondNotAllowed, Description: "no"}}}),
				amqp(1, &Disposition{First: 2, Settled: true, State: &Released{}}),
				amqp(1, &Disposition{First: 3, State: &Received{SectionNumber: 1, SectionOffset: 20}}),
				amqp(1, &Disposition{First: 4, Settled: true, State: &Declared{TxnID: []byte{0, 0, 0, 0, 0, 0, 0, 1}}})}},
		{name: "detach closed with an error",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x16, list8(smallUint(2), true1,
				described(0x1d, list8(sym8("amqp:not-found"), str8("no queue"), map8(sym8("invalid-field"), sym8("address")))))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &Detach{Handle: 2, Closed: true, Error: &Error{Condition: ErrCondNotFound,
				Description: "no queue", Info: NewMap(Symbol("invalid-field"), Symbol("address"))}})}},
		{name: "error without condition", raw: cat(hdrAMQP, amqpFrame(0, described(0x18, list8(described(0x1d, list8(null, str8("x"))))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondInvalidField},
		{name: "end and close",
			raw: cat(hdrAMQP, amqpFrame(1, described(0x17, list0)),
				amqpFrame(0, described(0x18, list8(described(0x1d, list8(sym8("amqp:connection:forced"))))))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(1, &End{}),
				amqp(0, &Close{Error: &Error{Condition: ErrCondConnectionForced}})}},
		{name: "close with a symbolic descriptor", raw: cat(hdrAMQP, amqpFrame(0, []byte{0}, sym8("amqp:close:list"), list0)),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &Close{})}},

		// ---- malformed frames ----
		{name: "frame size below 8", raw: cat(hdrAMQP, hx("00 00 00 07 02 00 00 00")),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformedFrame, cond: ErrCondFramingError},
		{name: "doff below 2", raw: cat(hdrAMQP, hx("00 00 00 08 01 00 00 00")),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformedFrame, cond: ErrCondFramingError},
		{name: "doff past the frame", raw: cat(hdrAMQP, hx("00 00 00 0c 04 00 00 00 00 00 00 00")),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformedFrame},
		{name: "unknown frame type", raw: cat(hdrAMQP, hx("00 00 00 08 02 02 00 00")),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformedFrame},
		{name: "frame larger than max-frame-size", raw: cat(hdrAMQP, hx("00 00 02 01 02 00 00 00")),
			limits: lim(func(l *Limits) { l.MaxFrameSize = 512 }),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrFrameTooLarge, cond: ErrCondFramingError},
		{name: "frame body not described", raw: cat(hdrAMQP, amqpFrame(0, list0)),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField, cond: ErrCondDecodeError},
		{name: "delivery state in an amqp frame", raw: cat(hdrAMQP, amqpFrame(0, described(0x24, list0))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "unknown performative", raw: cat(hdrAMQP, amqpFrame(0, described(0x19, list0))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "unknown symbolic descriptor", raw: cat(hdrAMQP, amqpFrame(0, []byte{0}, sym8("amqp:nope:list"), list0)),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "performative as a map", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, map8()))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "performative list count lying", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, hx(`c0 04 09 a1 01 "c"`)))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrMalformed},
		{name: "properties map with a string key", raw: cat(hdrAMQP, amqpFrame(0, described(0x10, list8(str8("c"), null, null, null, null, null, null, null, null, map8(str8("k"), null))))),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrInvalidField},
		{name: "frames after an error are not returned",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x17, list0)), hx("00 00 00 04"), amqpFrame(0, described(0x17, list0))),
			frames: []Frame{headerFrame(ProtocolAMQP), amqp(0, &End{})}, err: ErrMalformedFrame},
		{name: "nesting too deep in a performative",
			raw:    cat(hdrAMQP, amqpFrame(0, described(0x10, list8(str8("c"), null, null, null, null, null, null, null, null, map8(sym8("k"), list8(list8(list0))))))),
			limits: lim(func(l *Limits) { l.MaxNesting = 4 }),
			frames: []Frame{headerFrame(ProtocolAMQP)}, err: ErrNestingTooDeep},

		// ---- messages (AMQP 1.0 §3.2) ----
		{name: "data message with header and properties", kind: kindMessage,
			raw: cat(
				described(0x70, list8(true1, []byte{0x50, 7}, uint32b(60000), null, smallUint(2))),
				described(0x71, map8(sym8("x-opt-trace"), str8("t1"))),
				described(0x72, map8(sym8("x-opt-jms-dest"), []byte{0x51, 0}, smallUlong(9), true1)),
				described(0x73, list8(
					str8("ID:msg-1"), bin8('u'), str8("queue://orders"), str8("order"), str8("queue://replies"),
					cat([]byte{0x98}, bytes.Repeat([]byte{0xab}, 16)), sym8("application/json"), sym8("gzip"),
					hx("83 00 00 01 8b cf e5 68 00"), hx("83 00 00 01 8b cf e5 67 00"), str8("g"), smallUint(3), str8("rg"))),
				described(0x74, map8(str8("color"), str8("red"), str8("count"), hx("71 00 00 00 05"))),
				described(0x75, bin8('{', '}')),
				described(0x78, map8(sym8("sig"), bin8(1, 2)))),
			msg: &Message{
				Header:              &Header{Durable: true, Priority: 7, TTL: time.Minute, DeliveryCount: 2},
				DeliveryAnnotations: NewMap(Symbol("x-opt-trace"), "t1"),
				MessageAnnotations:  NewMap(Symbol("x-opt-jms-dest"), int8(0), uint64(9), true),
				Properties: &Properties{MessageID: "ID:msg-1", UserID: []byte("u"), To: "queue://orders", Subject: "order",
					ReplyTo: "queue://replies", CorrelationID: UUID(bytes.Repeat([]byte{0xab}, 16)),
					ContentType: "application/json", ContentEncoding: "gzip",
					AbsoluteExpiryTime: 1700000000000, CreationTime: 1699999999744, GroupID: "g", GroupSequence: 3, ReplyToGroupID: "rg"},
				ApplicationProperties: NewMap("color", "red", "count", int32(5)),
				BodyKind:              BodyData,
				Data:                  [][]byte{[]byte("{}")},
				Footer:                NewMap(Symbol("sig"), []byte{1, 2}),
			}},
		{name: "message ids of every type", kind: kindMessage,
			raw: cat(described(0x73, list8(smallUlong(42), null, null, null, null, bin8(9, 9)))),
			msg: &Message{Properties: &Properties{MessageID: uint64(42), CorrelationID: []byte{9, 9}}}},
		{name: "message-id of the wrong type", kind: kindMessage,
			raw: described(0x73, list8(sym8("id"))), err: ErrInvalidField, cond: ErrCondDecodeError},
		{name: "amqp-value string", kind: kindMessage, raw: described(0x77, str8("hello")),
			msg: &Message{BodyKind: BodyValue, Value: "hello"}},
		{name: "amqp-value null", kind: kindMessage, raw: described(0x77, null),
			msg: &Message{BodyKind: BodyValue}},
		{name: "amqp-value map", kind: kindMessage, raw: described(0x77, map8(str8("a"), smallUlong(1))),
			msg: &Message{BodyKind: BodyValue, Value: NewMap("a", uint64(1))}},
		{name: "two amqp-sequence sections", kind: kindMessage,
			raw: cat(described(0x76, list8(smallUint(1))), described(0x76, list0)),
			msg: &Message{BodyKind: BodySequence, Sequence: [][]any{{uint32(1)}, {}}}},
		{name: "three data sections", kind: kindMessage,
			raw: cat(described(0x75, bin8('a')), described(0x75, bin8()), described(0x75, hx("b0 00 00 00 01 62"))),
			msg: &Message{BodyKind: BodyData, Data: [][]byte{[]byte("a"), {}, []byte("b")}}},
		{name: "declare on a coordinator link", kind: kindMessage, raw: described(0x77, described(0x31, list0)),
			msg: &Message{BodyKind: BodyValue, Value: Described{Descriptor: uint64(0x31), Value: []any{}}}},
		{name: "empty message", kind: kindMessage, raw: nil, msg: &Message{}},
		{name: "header with defaults", kind: kindMessage, raw: described(0x70, list0),
			msg: &Message{Header: &Header{Priority: 4}}},
		{name: "sections out of order", kind: kindMessage,
			raw: cat(described(0x73, list0), described(0x70, list0)), err: ErrInvalidField},
		{name: "header twice", kind: kindMessage,
			raw: cat(described(0x70, list0), described(0x70, list0)), err: ErrInvalidField},
		{name: "two amqp-value sections", kind: kindMessage,
			raw: cat(described(0x77, null), described(0x77, null)), err: ErrInvalidField},
		{name: "data then amqp-sequence", kind: kindMessage,
			raw: cat(described(0x75, bin8()), described(0x76, list0)), err: ErrInvalidField},
		{name: "section after the footer", kind: kindMessage,
			raw: cat(described(0x78, map8()), described(0x75, bin8())), err: ErrInvalidField},
		{name: "application-properties with a symbol key", kind: kindMessage,
			raw: described(0x74, map8(sym8("k"), null)), err: ErrInvalidField},
		{name: "message-annotations with a string key", kind: kindMessage,
			raw: described(0x72, map8(str8("k"), null)), err: ErrInvalidField},
		{name: "data section that is not binary", kind: kindMessage,
			raw: described(0x75, str8("x")), err: ErrInvalidField},
		{name: "section that is not described", kind: kindMessage, raw: str8("x"), err: ErrInvalidField},
		{name: "unknown section", kind: kindMessage, raw: described(0x10, list0), err: ErrInvalidField},
		{name: "truncated section", kind: kindMessage, raw: described(0x75, hx("a0 05 01")), err: ErrMalformed},
	}
	return cases
}

// decodeStream feeds chunks to a fresh decoder the way a session would:
// it ends SASL (SetExpectHeader) after a sasl-init, sasl-response or
// sasl-outcome, and decodes held bytes with Feed(nil). Each chunk is
// overwritten after use, to prove no frame aliases the input.
func decodeStream(l Limits, chunks [][]byte) ([]Frame, error) {
	d := NewDecoder(l)
	var out []Frame
	for _, c := range chunks {
		buf := append([]byte(nil), c...)
		in := buf
		for {
			n := len(out)
			var err error
			out, err = d.Feed(in, out)
			if err != nil {
				return out, err
			}
			for _, f := range out[n:] {
				switch f.Body.(type) {
				case *SASLInit, *SASLResponse, *SASLOutcome:
					d.SetExpectHeader()
				}
			}
			if d.Buffered() == 0 {
				break
			}
			in = nil
		}
		for i := range buf {
			buf[i] = 0xEE
		}
	}
	return out, nil
}

// encodeFrames is the canonical encoding of a frame list, used to compare
// decodes without tripping over NaN (reflect.DeepEqual finds NaN != NaN).
func encodeFrames(fs []Frame) []byte {
	var b []byte
	for i := range fs {
		b = appendAnyFrame(b, &fs[i])
	}
	return b
}

func appendAnyFrame(dst []byte, f *Frame) []byte {
	if f.Type == FrameHeader {
		return AppendHeader(dst, f.Protocol)
	}
	if f.Body == nil && f.Type == FrameSASL {
		panic("empty SASL frame decoded")
	}
	return AppendFrame(dst, f.Channel, f.Body, f.Payload)
}

func dump(v any) string {
	switch x := v.(type) {
	case []Frame:
		var b strings.Builder
		for _, f := range x {
			fmt.Fprintf(&b, "{%v ch%d %s payload %x} ", f.Type, f.Channel, dump(f.Body), f.Payload)
		}
		return b.String()
	case *Map:
		if x == nil {
			return "nil map"
		}
		var b strings.Builder
		b.WriteString("map{")
		for _, e := range x.Entries {
			fmt.Fprintf(&b, "%s: %s, ", dump(e.Key), dump(e.Value))
		}
		return b.String() + "}"
	case nil:
		return "nil"
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct {
		return fmt.Sprintf("&%T%+v", rv.Elem().Interface(), rv.Elem().Interface())
	}
	return fmt.Sprintf("%T(%#v)", v, v)
}

func checkErr(t *testing.T, tc goldenCase, err error) {
	t.Helper()
	if tc.err == nil {
		if err != nil {
			t.Fatalf("error = %v, want none", err)
		}
		return
	}
	if !errors.Is(err, tc.err) {
		t.Fatalf("error = %v, want %v", err, tc.err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not an *Error", err)
	}
	if tc.cond != "" && e.Condition != tc.cond {
		t.Fatalf("condition = %s, want %s (error %v)", e.Condition, tc.cond, err)
	}
	if e.Condition == "" || !strings.HasPrefix(err.Error(), "amqp: ") {
		t.Fatalf("error %q has no condition or lacks the amqp: prefix", err)
	}
}

// stripped returns the fields of m without its remembered encoding.
func stripped(m *Message) *Message {
	if m == nil {
		return nil
	}
	c := *m
	c.ResetEncoding()
	return &c
}

func TestAMQPWireGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.kind {
			case kindValue:
				v, n, err := DecodeValue(tc.raw, tc.limitsOrDefault())
				checkErr(t, tc, err)
				if err != nil {
					return
				}
				if n != len(tc.raw) {
					t.Errorf("decoded %d of %d bytes", n, len(tc.raw))
				}
				if !reflect.DeepEqual(v, tc.value) {
					t.Fatalf("value:\n got %s\nwant %s", dump(v), dump(tc.value))
				}
			case kindMessage:
				m, err := DecodeMessageWithLimits(tc.raw, tc.limitsOrDefault())
				checkErr(t, tc, err)
				if err != nil {
					return
				}
				if got := stripped(m); !reflect.DeepEqual(got, tc.msg) {
					t.Fatalf("message:\n got %+v\nwant %+v", got, tc.msg)
				}
				if !bytes.Equal(m.Encoded(), tc.raw) {
					t.Errorf("Encoded() = %x, want the input", m.Encoded())
				}
			default:
				got, err := decodeStream(tc.limitsOrDefault(), [][]byte{tc.raw})
				checkErr(t, tc, err)
				if !reflect.DeepEqual(got, tc.frames) && !(len(got) == 0 && len(tc.frames) == 0) {
					t.Fatalf("frames:\n got %s\nwant %s", dump(got), dump(tc.frames))
				}
			}
		})
	}
}

// TestAMQPWireSplit feeds every golden stream in every 2-way split and one
// byte at a time; the frames and error text must be those of the whole
// input.
func TestAMQPWireSplit(t *testing.T) {
	for _, tc := range goldenCases() {
		if tc.kind != kindStream {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			l := tc.limitsOrDefault()
			whole, wholeErr := decodeStream(l, [][]byte{tc.raw})
			same := func(how string, got []Frame, err error) {
				t.Helper()
				if !reflect.DeepEqual(got, whole) || fmt.Sprint(err) != fmt.Sprint(wholeErr) {
					t.Fatalf("%s: got %s err %v; whole input gave %s err %v", how, dump(got), err, dump(whole), wholeErr)
				}
			}
			for i := 0; i <= len(tc.raw); i++ {
				got, err := decodeStream(l, [][]byte{tc.raw[:i], tc.raw[i:]})
				same(fmt.Sprintf("split at %d", i), got, err)
			}
			bytewise := make([][]byte, len(tc.raw))
			for i := range tc.raw {
				bytewise[i] = tc.raw[i : i+1]
			}
			got, err := decodeStream(l, bytewise)
			same("byte by byte", got, err)
		})
	}
}

// TestAMQPWireRoundTrip re-encodes everything the golden table decodes and
// decodes it again: the result must be equal, and encoding it once more
// must give the same bytes.
func TestAMQPWireRoundTrip(t *testing.T) {
	for _, tc := range goldenCases() {
		if tc.err != nil {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			l := tc.limitsOrDefault()
			switch tc.kind {
			case kindValue:
				enc := AppendValue(nil, tc.value)
				v, n, err := DecodeValue(enc, l)
				if err != nil || n != len(enc) || !reflect.DeepEqual(v, tc.value) {
					t.Fatalf("re-decoding %x: %s, %d bytes, %v; want %s", enc, dump(v), n, err, dump(tc.value))
				}
			case kindMessage:
				m, err := DecodeMessage(tc.raw)
				if err != nil {
					t.Fatal(err)
				}
				enc := AppendMessage(nil, m)
				m2, err := DecodeMessage(enc)
				if err != nil || !reflect.DeepEqual(stripped(m2), tc.msg) {
					t.Fatalf("re-decoding %x: %+v, %v", enc, stripped(m2), err)
				}
				m.ResetEncoding()
				fresh := AppendMessage(nil, m)
				m3, err := DecodeMessage(fresh)
				if err != nil || !reflect.DeepEqual(stripped(m3), tc.msg) {
					t.Fatalf("re-decoding from fields %x: %+v, %v", fresh, stripped(m3), err)
				}
			default:
				enc := encodeFrames(tc.frames)
				got, err := decodeStream(l, [][]byte{enc})
				if err != nil || !reflect.DeepEqual(got, tc.frames) {
					t.Fatalf("re-decoding %x:\n got %s err %v\nwant %s", enc, dump(got), err, dump(tc.frames))
				}
				if again := encodeFrames(got); !bytes.Equal(again, enc) {
					t.Fatalf("second encoding differs:\n%x\n%x", again, enc)
				}
			}
		})
	}
}
