package amqp

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
)

// testNow is the clock of every conversion in these tests (ms).
const testNow = int64(1_700_000_000_000)

var testQueue = message.QueueDest("q")

// ---------------------------------------------------------------------
// Helpers

// props builds properties from name, value pairs.
func props(kv ...any) message.Properties {
	ps := make(message.Properties, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		ps = append(ps, message.Property{Name: kv[i].(string), Value: kv[i+1].(message.Value)})
	}
	return ps
}

func enc(n int16) message.Value { return message.ShortValue(n) }

var (
	vTrue = message.BoolValue(true)
	str   = message.StringValue
)

// amqpIn builds an inbound AMQP message with a content type (none when
// ct is "") and the body set by body.
func amqpIn(ct string, body func(am *wire.Message)) *wire.Message {
	am := &wire.Message{}
	if ct != "" {
		am.Properties = &wire.Properties{ContentType: wire.Symbol(ct)}
	}
	if body != nil {
		body(am)
	}
	return am
}

func data(sections ...[]byte) func(*wire.Message) {
	return func(am *wire.Message) { am.BodyKind, am.Data = wire.BodyData, sections }
}

func value(v any) func(*wire.Message) {
	return func(am *wire.Message) { am.BodyKind, am.Value = wire.BodyValue, v }
}

func sequence(ls ...[]any) func(*wire.Message) {
	return func(am *wire.Message) { am.BodyKind, am.Sequence = wire.BodySequence, ls }
}

// typed adds x-opt-jms-msg-type.
func typed(am *wire.Message, t any) *wire.Message {
	am.MessageAnnotations = wire.NewMap(wire.Symbol(annJMSMsgType), t)
	return am
}

// reencode decodes the encoding of am, so that conversions see a message
// as the session does.
func reencode(t testing.TB, am *wire.Message) *wire.Message {
	t.Helper()
	d, err := wire.DecodeMessage(wire.AppendMessage(nil, am))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return d
}

// diffMessage lists the fields in which two engine messages differ.
func diffMessage(got, want *message.Message) string {
	var b strings.Builder
	gv, wv := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := 0; i < gv.NumField(); i++ {
		f := gv.Type().Field(i)
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if reflect.DeepEqual(g, w) {
			continue
		}
		switch f.Name {
		case "Props", "Map":
			fmt.Fprintf(&b, "\n%s: got  %s\n%*s want %s", f.Name, fmtProps(g.(message.Properties)), len(f.Name), "", fmtProps(w.(message.Properties)))
		case "List":
			fmt.Fprintf(&b, "\n%s: got %s, want %s", f.Name, fmtValues(g.([]message.Value)), fmtValues(w.([]message.Value)))
		case "Body":
			fmt.Fprintf(&b, "\nBody: got %q (nil %v), want %q (nil %v)", g, g.([]byte) == nil, w, w.([]byte) == nil)
		default:
			fmt.Fprintf(&b, "\n%s: got %+v, want %+v", f.Name, g, w)
		}
	}
	return b.String()
}

func fmtProps(ps message.Properties) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.Name + "=" + fmtValue(p.Value)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtValues(vs []message.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmtValue(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtValue(v message.Value) string {
	if v.Kind == message.Bytes {
		return fmt.Sprintf("bytes(%x)", v.Raw())
	}
	return v.Kind.String() + "(" + v.Text() + ")"
}

// render shows an AMQP message section by section, for failure messages.
func render(am *wire.Message) string {
	var b strings.Builder
	if am.Header != nil {
		fmt.Fprintf(&b, "\n  header %+v", *am.Header)
	}
	section := func(name string, m *wire.Map) {
		if m == nil {
			return
		}
		fmt.Fprintf(&b, "\n  %s {", name)
		for _, e := range m.Entries {
			fmt.Fprintf(&b, " %v(%T)=%#v(%T)", e.Key, e.Key, e.Value, e.Value)
		}
		b.WriteString(" }")
	}
	section("delivery-annotations", am.DeliveryAnnotations)
	section("message-annotations", am.MessageAnnotations)
	if am.Properties != nil {
		fmt.Fprintf(&b, "\n  properties %+v (message-id %T, correlation-id %T)", *am.Properties, am.Properties.MessageID, am.Properties.CorrelationID)
	}
	section("application-properties", am.ApplicationProperties)
	switch am.BodyKind {
	case wire.BodyData:
		fmt.Fprintf(&b, "\n  data %q", am.Data)
	case wire.BodySequence:
		fmt.Fprintf(&b, "\n  amqp-sequence %#v", am.Sequence)
	case wire.BodyValue:
		if mp, ok := am.Value.(*wire.Map); ok {
			section("amqp-value map", mp)
		} else {
			fmt.Fprintf(&b, "\n  amqp-value %#v", am.Value)
		}
	}
	section("footer", am.Footer)
	return b.String()
}

// sameAMQP reports whether two AMQP messages encode to the same bytes.
func sameAMQP(t *testing.T, got, want *wire.Message) {
	t.Helper()
	gb, wb := wire.AppendMessage(nil, got), wire.AppendMessage(nil, want)
	if !bytes.Equal(gb, wb) {
		t.Errorf("AMQP message differs\ngot:%s\nwant:%s", render(got), render(want))
	}
}

// ---------------------------------------------------------------------
// Native

func TestAMQPConvertNative(t *testing.T) {
	in := &wire.Message{
		Header:                &wire.Header{Durable: true, Priority: 6},
		MessageAnnotations:    wire.NewMap(wire.Symbol("x-opt-a"), int32(1)),
		Properties:            &wire.Properties{MessageID: "m", CreationTime: 5, To: "somewhere"},
		ApplicationProperties: wire.NewMap("k", "v"),
		BodyKind:              wire.BodyValue, Value: wire.UUID{1},
		Footer: wire.NewMap(wire.Symbol("f"), "x"),
	}
	raw := wire.AppendMessage(nil, in)
	dec, err := wire.DecodeMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ToMessage(dec, testQueue, testNow)
	if err != nil {
		t.Fatal(err)
	}
	SetMessageFormat(m, 3)
	want := &message.Message{Destination: testQueue, Priority: 6, Persistent: true, Timestamp: 5,
		BodyType: message.BytesBody, Body: raw,
		Props: props(propNative, vTrue, propHeader, vTrue, prefixMA+"x-opt-a", message.IntValue(1), "k", str("v"),
			propProperties, vTrue, propMessageID, str("m"), prefixFT+"f", str("x"), propMessageFormat, message.LongValue(3))}
	if d := diffMessage(m, want); d != "" {
		t.Fatalf("ToMessage differs:%s", d)
	}
	// Out as it came in, with the message-format it came with.
	sameAMQP(t, FromMessage(m, 0, testNow), in)
	if MessageFormat(m) != 3 {
		t.Errorf("MessageFormat = %d, want 3", MessageFormat(m))
	}
	// A redelivery updates the delivery count, nothing else.
	redelivered := *in
	h := *in.Header
	h.DeliveryCount = 2
	redelivered.Header = &h
	sameAMQP(t, FromMessage(m, 2, testNow), &redelivered)

	// Without a header, one is added for the count.
	noHeader := &wire.Message{BodyKind: wire.BodyValue, Value: int64(1)}
	m2, err := ToMessage(reencode(t, noHeader), testQueue, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Timestamp != testNow {
		t.Errorf("native Timestamp = %d, want now %d", m2.Timestamp, testNow)
	}
	withCount := &wire.Message{Header: &wire.Header{Priority: 4, DeliveryCount: 1}, BodyKind: wire.BodyValue, Value: int64(1)}
	sameAMQP(t, FromMessage(m2, 1, testNow), withCount)

	// A native-marked message whose body is not AMQP goes out as bytes.
	bogus := &message.Message{ID: "ID:1", Destination: testQueue, Priority: 4, BodyType: message.BytesBody, Body: []byte{0xff},
		Props: props(propNative, vTrue)}
	sameAMQP(t, FromMessage(bogus, 0, testNow), &wire.Message{
		MessageAnnotations: wire.NewMap(wire.Symbol(annJMSMsgType), int8(3), wire.Symbol(annJMSDest), int8(0)),
		Properties:         &wire.Properties{MessageID: "ID:1", To: "queue://q"},
		BodyKind:           wire.BodyData, Data: [][]byte{{0xff}},
	})
}

// ---------------------------------------------------------------------
// Round trips

// A message in the form FromMessage writes comes back byte for byte.
func TestAMQPConvertRoundTrip(t *testing.T) {
	uuid := wire.UUID{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	jms := func(msgType int8, extra ...any) *wire.Map {
		return wire.NewMap(append([]any{wire.Symbol(annJMSMsgType), msgType, wire.Symbol(annJMSDest), int8(0)}, extra...)...)
	}
	full := func(am *wire.Message) *wire.Message {
		if am.Properties == nil {
			am.Properties = &wire.Properties{}
		}
		am.Properties.To = "queue://q"
		return am
	}
	cases := []struct {
		name         string
		in           *wire.Message
		redeliveries int32
	}{
		{"text value, every field", full(&wire.Message{
			Header:             &wire.Header{Durable: true, Priority: 7, TTL: 10 * time.Second, FirstAcquirer: true, DeliveryCount: 2},
			MessageAnnotations: jms(5, wire.Symbol(annJMSReplyTo), int8(1), wire.Symbol("x-opt-custom"), "c"),
			Properties: &wire.Properties{MessageID: uuid, UserID: []byte("bob"), Subject: "subj", ReplyTo: "topic://replies",
				CorrelationID: []byte{1, 2}, ContentType: "text/plain", ContentEncoding: "identity",
				AbsoluteExpiryTime: wire.Timestamp(testNow + 10000), CreationTime: wire.Timestamp(testNow - 5),
				GroupID: "grp", GroupSequence: 9, ReplyToGroupID: "rgrp"},
			ApplicationProperties: wire.NewMap("b", true, "i8", int8(-8), "i16", int16(-16), "i32", int32(-32), "i64", int64(-64),
				"f", float32(0.25), "d", 0.125, "s", "str", "bin", []byte{0}, "ch", wire.Char('z'), "nil", nil),
			BodyKind: wire.BodyValue, Value: "hello",
			Footer: wire.NewMap(wire.Symbol("sig"), "abc"),
		}), 2},
		{"bytes data", full(&wire.Message{Header: &wire.Header{Durable: true, Priority: 4}, MessageAnnotations: jms(3),
			Properties: &wire.Properties{MessageID: "ID:abc:1:1:1", ContentType: contentTypeOctetStream},
			BodyKind:   wire.BodyData, Data: [][]byte{bytes.Repeat([]byte{7}, 300)}}), 0},
		{"text as data", full(&wire.Message{MessageAnnotations: jms(5),
			Properties: &wire.Properties{MessageID: uint64(12), ContentType: "text/plain; charset=utf-8"},
			BodyKind:   wire.BodyData, Data: [][]byte{[]byte("text")}}), 0},
		{"text null value", full(&wire.Message{MessageAnnotations: jms(5), BodyKind: wire.BodyValue}), 0},
		{"text empty string", full(&wire.Message{MessageAnnotations: jms(5), BodyKind: wire.BodyValue, Value: ""}), 0},
		{"text as binary value", full(&wire.Message{MessageAnnotations: jms(5), BodyKind: wire.BodyValue, Value: []byte("t")}), 0},
		{"bytes binary value", full(&wire.Message{MessageAnnotations: jms(3), BodyKind: wire.BodyValue, Value: []byte{1, 2}}), 0},
		{"bytes without a body", full(&wire.Message{MessageAnnotations: jms(3)}), 0},
		{"map", full(&wire.Message{MessageAnnotations: jms(2), BodyKind: wire.BodyValue,
			Value: wire.NewMap("a", int32(1), "b", "x", "c", []byte{3}, "d", nil, "e", wire.Char('e'))}), 0},
		{"map without a body", full(&wire.Message{MessageAnnotations: jms(2)}), 0},
		{"list", full(&wire.Message{MessageAnnotations: jms(4), BodyKind: wire.BodyValue, Value: []any{int64(1), "two", false}}), 0},
		{"sequence", full(&wire.Message{MessageAnnotations: jms(4), BodyKind: wire.BodySequence, Sequence: [][]any{{int16(1), 2.0}}}), 0},
		{"object data", full(&wire.Message{MessageAnnotations: jms(1), Properties: &wire.Properties{ContentType: contentTypeSerialized},
			BodyKind: wire.BodyData, Data: [][]byte{{0xac, 0xed, 0, 5}}}), 0},
		{"object binary value", full(&wire.Message{MessageAnnotations: jms(1), Properties: &wire.Properties{ContentType: contentTypeSerialized},
			BodyKind: wire.BodyValue, Value: []byte{0xac}}), 0},
		{"plain message", full(&wire.Message{MessageAnnotations: jms(0)}), 0},
		{"plain message, null value", full(&wire.Message{MessageAnnotations: jms(0), BodyKind: wire.BodyValue}), 0},
		{"string id with an id prefix", full(&wire.Message{MessageAnnotations: jms(0),
			Properties: &wire.Properties{MessageID: "AMQP_ULONG:1", CorrelationID: "AMQP_STRING:x"}}), 0},
		{"delivery annotations-free message with a footer only", full(&wire.Message{MessageAnnotations: jms(3),
			BodyKind: wire.BodyData, Data: [][]byte{{1}}, Footer: wire.NewMap(wire.Symbol("a"), int64(1), wire.Symbol("b"), []byte{2})}), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ToMessage(reencode(t, tc.in), testQueue, testNow)
			if err != nil {
				t.Fatalf("ToMessage: %v", err)
			}
			sameAMQP(t, FromMessage(m, tc.redeliveries, testNow), tc.in)
		})
	}
}

// What the mapping cannot keep, and what it changes instead.
func TestAMQPConvertRoundTripLossy(t *testing.T) {
	cases := []struct {
		name   string
		in     *wire.Message
		anon   bool
		target message.Destination
		want   *wire.Message
	}{
		{
			name: "unsigned and symbol values become their Java types; JMS annotations and to are added",
			in: &wire.Message{ApplicationProperties: wire.NewMap("u8", uint8(200), "u16", uint16(1), "u32", uint32(5), "u64", uint64(6), "sym", wire.Symbol("s")),
				MessageAnnotations: wire.NewMap(wire.Symbol("x-opt-s"), wire.Symbol("v"), wire.Symbol("x-opt-t"), wire.Timestamp(3)),
				BodyKind:           wire.BodyValue, Value: "x"},
			want: &wire.Message{
				MessageAnnotations:    wire.NewMap(wire.Symbol("x-opt-s"), "v", wire.Symbol("x-opt-t"), int64(3), wire.Symbol(annJMSMsgType), int8(5), wire.Symbol(annJMSDest), int8(0)),
				Properties:            &wire.Properties{To: "queue://q"},
				ApplicationProperties: wire.NewMap("u8", int16(200), "u16", int16(1), "u32", int32(5), "u64", int64(6), "sym", "s"),
				BodyKind:              wire.BodyValue, Value: "x",
			},
		},
		{
			name: "ttl also sets absolute-expiry-time; a bare to is qualified",
			anon: true,
			in:   &wire.Message{Header: &wire.Header{Priority: 4, TTL: time.Second}, Properties: &wire.Properties{To: "orders"}, BodyKind: wire.BodyData, Data: [][]byte{{1}}},
			want: &wire.Message{
				Header:             &wire.Header{Priority: 4, TTL: time.Second},
				MessageAnnotations: wire.NewMap(wire.Symbol(annJMSMsgType), int8(3), wire.Symbol(annJMSDest), int8(0)),
				Properties:         &wire.Properties{To: "queue://orders", AbsoluteExpiryTime: wire.Timestamp(testNow + 1000)},
				BodyKind:           wire.BodyData, Data: [][]byte{{1}},
			},
		},
		{
			name:   "the link's target replaces to; data sections are joined",
			target: message.TopicDest("t"),
			in:     &wire.Message{Properties: &wire.Properties{To: "queue://elsewhere"}, BodyKind: wire.BodyData, Data: [][]byte{{1}, {2}}},
			want: &wire.Message{
				MessageAnnotations: wire.NewMap(wire.Symbol(annJMSMsgType), int8(3), wire.Symbol(annJMSDest), int8(1)),
				Properties:         &wire.Properties{To: "topic://t"},
				BodyKind:           wire.BodyData, Data: [][]byte{{1, 2}},
			},
		},
		{
			name: "a bodiless serialized object goes out bodiless; priority above 9 becomes 9",
			in:   &wire.Message{Header: &wire.Header{Priority: 255}, Properties: &wire.Properties{ContentType: contentTypeSerialized}},
			want: &wire.Message{
				Header:             &wire.Header{Priority: 9},
				MessageAnnotations: wire.NewMap(wire.Symbol(annJMSMsgType), int8(1), wire.Symbol(annJMSDest), int8(0)),
				Properties:         &wire.Properties{To: "queue://q", ContentType: contentTypeSerialized},
			},
		},
		{
			name: "delivery annotations do not pass; scheduling properties are not sent",
			in: &wire.Message{DeliveryAnnotations: wire.NewMap(wire.Symbol("x-opt-d"), int32(1)),
				MessageAnnotations: wire.NewMap(wire.Symbol(annDelay), int64(5)), BodyKind: wire.BodyValue, Value: "x"},
			want: &wire.Message{
				MessageAnnotations: wire.NewMap(wire.Symbol(annDelay), int64(5), wire.Symbol(annJMSMsgType), int8(5), wire.Symbol(annJMSDest), int8(0)),
				Properties:         &wire.Properties{To: "queue://q"},
				BodyKind:           wire.BodyValue, Value: "x",
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := testQueue
			switch {
			case tc.anon:
				target = message.Destination{}
			case !tc.target.IsZero():
				target = tc.target
			}
			m, err := ToMessage(reencode(t, tc.in), target, testNow)
			if err != nil {
				t.Fatalf("ToMessage: %v", err)
			}
			sameAMQP(t, FromMessage(m, 0, testNow), tc.want)
		})
	}
}

// ---------------------------------------------------------------------
// Pieces

func TestAMQPConvertMessageIDs(t *testing.T) {
	uuid := wire.UUID{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	cases := []struct {
		id   any
		form string
	}{
		{"plain", "plain"},
		{"ID:c-1:1:1:1", "ID:c-1:1:1:1"},
		{"AMQP_ULONG:5", "AMQP_STRING:AMQP_ULONG:5"},
		{"AMQP_STRING:x", "AMQP_STRING:AMQP_STRING:x"},
		{"AMQP_other", "AMQP_other"},
		{"", ""},
		{uint64(0), "AMQP_ULONG:0"},
		{uint64(math.MaxUint64), "AMQP_ULONG:18446744073709551615"},
		{uuid, "AMQP_UUID:deadbeef-0102-0304-0506-0708090a0b0c"},
		{[]byte{0x00, 0xAB, 0xff}, "AMQP_BINARY:00ABFF"},
		{[]byte{}, "AMQP_BINARY:"},
	}
	for _, tc := range cases {
		if got := idString(tc.id); got != tc.form {
			t.Errorf("idString(%#v) = %q, want %q", tc.id, got, tc.form)
		}
		if got := idObject(tc.form); !wire.Equal(got, tc.id) {
			t.Errorf("idObject(%q) = %#v, want %#v", tc.form, got, tc.id)
		}
	}
	// Forms that do not parse go out as the strings they are.
	for _, s := range []string{"AMQP_ULONG:x", "AMQP_ULONG:-1", "AMQP_UUID:1-2-3-4-5", "AMQP_UUID:zzzzzzzz-0102-0304-0506-0708090a0b0c",
		"AMQP_BINARY:ABC", "AMQP_BINARY:GG"} {
		if got := idObject(s); got != s {
			t.Errorf("idObject(%q) = %#v, want the string", s, got)
		}
	}
	// Lower-case hex is read too.
	if got := idObject("AMQP_BINARY:0aff"); !wire.Equal(got, []byte{0x0a, 0xff}) {
		t.Errorf("idObject(lower-case hex) = %#v", got)
	}
}

func TestAMQPConvertContentType(t *testing.T) {
	cases := []struct {
		ct      string
		charset string
		textual bool
	}{
		{"text/plain", "UTF-8", true},
		{"TEXT/HTML; charset=ISO-8859-1", "ISO-8859-1", true},
		{"text/plain;charset=\"utf-16\"", "UTF-16", true},
		{"text/plain; format=flowed; charset=us-ascii", "US-ASCII", true},
		{"application/json", "UTF-8", true},
		{"application/xml", "UTF-8", true},
		{"application/javascript", "UTF-8", true},
		{"application/ecmascript", "UTF-8", true},
		{"application/xml-dtd", "UTF-8", true},
		{"application/soap+xml", "UTF-8", true},
		{"application/ld+json", "UTF-8", true},
		{"application/octet-stream", "", false},
		{"image/png", "", false},
		{"text", "", false},
		{"text/", "", false},
		{"text/;charset=utf-8", "", false},
		{"", "", false},
		{"   ", "", false},
	}
	for _, tc := range cases {
		charset, textual := textualCharset(tc.ct)
		if charset != tc.charset || textual != tc.textual {
			t.Errorf("textualCharset(%q) = %q, %v; want %q, %v", tc.ct, charset, textual, tc.charset, tc.textual)
		}
	}
}

func TestAMQPConvertDecimal(t *testing.T) {
	u32 := func(b uint32) wire.Decimal32 {
		var d wire.Decimal32
		d[0], d[1], d[2], d[3] = byte(b>>24), byte(b>>16), byte(b>>8), byte(b)
		return d
	}
	u64 := func(b uint64) wire.Decimal64 {
		var d wire.Decimal64
		for i := range d {
			d[i] = byte(b >> (56 - 8*i))
		}
		return d
	}
	u128 := func(hi, lo uint64) wire.Decimal128 {
		var d wire.Decimal128
		h, l := u64(hi), u64(lo)
		copy(d[:8], h[:])
		copy(d[8:], l[:])
		return d
	}
	cases := []struct {
		name string
		in   any
		want float64
	}{
		{"decimal32 1.5", u32(0x3200000F), 1.5},
		{"decimal32 -1.5", u32(0xB200000F), -1.5},
		{"decimal32 large coefficient form", u32(0x6CB8967F), 9999999},
		{"decimal32 zero", u32(0x32800000), 0},
		{"decimal32 non-canonical is zero", u32(0x6CBFFFFF), 0},
		{"decimal32 infinity", u32(0x78000000), math.Inf(1)},
		{"decimal32 -infinity", u32(0xF8000000), math.Inf(-1)},
		{"decimal64 7", u64(0x31C0000000000007), 7},
		{"decimal64 12.345", u64(0x3160000000003039), 12.345},
		{"decimal64 large coefficient form", u64(0x6C7386F26FC0FFFF), 9999999999999999},
		{"decimal128 2", u128(0x3040000000000000, 2), 2},
		{"decimal128 -0.5", u128(0xB03E000000000000, 5), -0.5},
		{"decimal128 1e-10", u128(0x302C000000000000, 1), 1e-10},
		{"decimal128 non-canonical", u128(0x6000000000000000, 0), 0},
	}
	for _, tc := range cases {
		v, err := propertyValue(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := v.Float()
		wantKind := message.Double
		if _, ok := tc.in.(wire.Decimal32); ok {
			wantKind = message.Float
		}
		if v.Kind != wantKind || got != tc.want {
			t.Errorf("%s: %v %v, want %v %v", tc.name, v.Kind, got, wantKind, tc.want)
		}
	}
	for _, nan := range []any{u32(0x7C000000), u64(0x7C00000000000000), u128(0x7C00000000000000, 0)} {
		if v, err := propertyValue(nan); err != nil || !math.IsNaN(v.Float()) {
			t.Errorf("%x: %v, %v; want NaN", nan, v.Float(), err)
		}
	}
}

// ---------------------------------------------------------------------
// Benchmarks

// benchAMQP is a BytesMessage as Qpid JMS sends it: 1 KiB of data and
// three application properties.
func benchAMQP(b *testing.B) *wire.Message {
	am := &wire.Message{
		Header:             &wire.Header{Durable: true, Priority: 4},
		MessageAnnotations: wire.NewMap(wire.Symbol(annJMSMsgType), int8(3), wire.Symbol(annJMSDest), int8(0)),
		Properties: &wire.Properties{MessageID: "ID:7c1e0f53-9f54-4a36-9be4-2f0c2c1b0a11:1:1:1-1", To: "queue://bench",
			ContentType: contentTypeOctetStream, CreationTime: wire.Timestamp(testNow)},
		ApplicationProperties: wire.NewMap("trace-id", "4bf92f3577b34da6", "attempt", int32(1), "urgent", true),
		BodyKind:              wire.BodyData, Data: [][]byte{bytes.Repeat([]byte{'x'}, 1024)},
	}
	return reencode(b, am)
}

func BenchmarkAMQPToMessage(b *testing.B) {
	am := benchAMQP(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(am.Encoded())))
	for b.Loop() {
		if _, err := ToMessage(am, testQueue, testNow); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAMQPFromMessage(b *testing.B) {
	m, err := ToMessage(benchAMQP(b), testQueue, testNow)
	if err != nil {
		b.Fatal(err)
	}
	m.ID = "ID:wharf-1:1:1:1"
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			FromMessage(m, 0, testNow)
		}
	})
	// Mapping and encoding: what a delivery costs the adapter.
	b.Run("map+encode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		var buf []byte
		for b.Loop() {
			buf = wire.AppendMessage(buf[:0], FromMessage(m, 0, testNow))
		}
	})
}
