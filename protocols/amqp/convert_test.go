package amqp

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"wharf/engine"
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
// Inbound

// Every row of the body table of mappings.md §3.3, then the
// x-opt-jms-msg-type choices Wharf adds.
func TestAMQPConvertInboundBody(t *testing.T) {
	const native = -1
	mapIn := wire.NewMap("s", "v", "i", int32(7), "b", []byte{1, 2}, "n", nil, "c", wire.Char('é'), "s", "last")
	cases := []struct {
		name string
		in   *wire.Message
		typ  message.BodyType
		body []byte
		mapv message.Properties
		list []message.Value
		enc  int16 // native: the native mapping
	}{
		{"no body, serialized object", amqpIn(contentTypeSerialized, nil), message.ObjectBody, nil, nil, nil, encNull},
		{"no body, octet-stream", amqpIn(contentTypeOctetStream, nil), message.BytesBody, nil, nil, nil, encNull},
		{"no body, no content type", amqpIn("", nil), message.BytesBody, nil, nil, nil, encNull},
		{"no body, textual", amqpIn("text/plain", nil), message.TextBody, nil, nil, nil, encNull},
		{"no body, textual latin-1", amqpIn("text/plain; charset=ISO-8859-1", nil), message.TextBody, nil, nil, nil, encNull},
		{"no body, unknown charset", amqpIn("text/plain; charset=klingon", nil), message.NoBody, nil, nil, nil, encNull},
		{"no body, other type", amqpIn("image/png", nil), message.NoBody, nil, nil, nil, encNull},
		{"data, serialized object", amqpIn(contentTypeSerialized, data([]byte{0xac, 0xed})), message.ObjectBody, []byte{0xac, 0xed}, nil, nil, encData},
		{"data, octet-stream", amqpIn(contentTypeOctetStream, data([]byte("abc"))), message.BytesBody, []byte("abc"), nil, nil, encData},
		{"data, text utf-8", amqpIn("text/plain;charset=utf-8", data([]byte("héllo"))), message.TextBody, []byte("héllo"), nil, nil, encData},
		{"data, text utf8 alias quoted", amqpIn(`text/plain; charset="UTF8"`, data([]byte("x"))), message.TextBody, []byte("x"), nil, nil, encData},
		{"data, json", amqpIn("application/json", data([]byte("{}"))), message.TextBody, []byte("{}"), nil, nil, encData},
		{"data, +xml", amqpIn("application/atom+xml", data([]byte("<a/>"))), message.TextBody, []byte("<a/>"), nil, nil, encData},
		{"data, text not utf-8", amqpIn("text/plain", data([]byte{0xff, 0xfe})), message.BytesBody, []byte{0xff, 0xfe}, nil, nil, encData},
		{"data, text latin-1", amqpIn("text/plain;charset=iso-8859-1", data([]byte("abc"))), message.BytesBody, []byte("abc"), nil, nil, encData},
		{"data, no content type", amqpIn("", data([]byte("abc"))), message.BytesBody, []byte("abc"), nil, nil, encData},
		{"data, other type", amqpIn("image/png", data([]byte("abc"))), message.BytesBody, []byte("abc"), nil, nil, encData},
		{"data sections joined", amqpIn("", data([]byte("ab"), []byte("cd"))), message.BytesBody, []byte("abcd"), nil, nil, encData},
		{"amqp-sequence sections joined", amqpIn("", sequence([]any{"a", int32(1)}, []any{true})), message.StreamBody, nil, nil,
			[]message.Value{str("a"), message.IntValue(1), vTrue}, encSequence},
		{"amqp-value null", amqpIn("", value(nil)), message.TextBody, nil, nil, nil, encValueNull},
		{"amqp-value string", amqpIn("", value("hi")), message.TextBody, []byte("hi"), nil, nil, encValueString},
		{"amqp-value empty string", amqpIn("", value("")), message.TextBody, []byte{}, nil, nil, encValueString},
		{"amqp-value binary", amqpIn("", value([]byte{9})), message.BytesBody, []byte{9}, nil, nil, encValueBinary},
		{"amqp-value binary, serialized object", amqpIn(contentTypeSerialized, value([]byte{9})), message.ObjectBody, []byte{9}, nil, nil, encValueBinary},
		{"amqp-value map", amqpIn("", value(mapIn)), message.MapBody, nil,
			props("s", str("last"), "i", message.IntValue(7), "b", message.BytesValue([]byte{1, 2}), "n", message.Value{}, "c", message.CharValue('é')), nil, encValueMap},
		{"amqp-value list", amqpIn("", value([]any{int64(1), float64(2.5), nil})), message.StreamBody, nil, nil,
			[]message.Value{message.LongValue(1), message.DoubleValue(2.5), {}}, encValueList},
		{"amqp-value int: native", amqpIn("", value(int32(5))), message.BytesBody, nil, nil, nil, native},
		{"amqp-value symbol: native", amqpIn("", value(wire.Symbol("s"))), message.BytesBody, nil, nil, nil, native},
		{"map with a non-string key: native", amqpIn("", value(wire.NewMap(wire.Symbol("k"), "v"))), message.BytesBody, nil, nil, nil, native},
		{"map with an unsigned value: native", amqpIn("", value(wire.NewMap("k", uint8(1)))), message.BytesBody, nil, nil, nil, native},
		{"list with a nested list: native", amqpIn("", value([]any{[]any{}})), message.BytesBody, nil, nil, nil, native},
		{"sequence with a timestamp: native", amqpIn("", sequence([]any{wire.Timestamp(1)})), message.BytesBody, nil, nil, nil, native},

		// x-opt-jms-msg-type (a DEVIATION: ActiveMQ 5.17 ignores it).
		{"msg-type text on data", typed(amqpIn("", data([]byte("t"))), int8(5)), message.TextBody, []byte("t"), nil, nil, encData},
		{"msg-type text on invalid utf-8 data: section decides", typed(amqpIn("", data([]byte{0xff})), int8(5)), message.BytesBody, []byte{0xff}, nil, nil, encData},
		{"msg-type text on binary value", typed(amqpIn("", value([]byte("t"))), int8(5)), message.TextBody, []byte("t"), nil, nil, encValueBinary},
		{"msg-type text, no body", typed(amqpIn("", nil), int8(5)), message.TextBody, nil, nil, nil, encNull},
		{"msg-type bytes on textual data", typed(amqpIn("text/plain", data([]byte("t"))), int8(3)), message.BytesBody, []byte("t"), nil, nil, encData},
		{"msg-type bytes, value null", typed(amqpIn("", value(nil)), int8(3)), message.BytesBody, nil, nil, nil, encValueNull},
		{"msg-type object on data", typed(amqpIn("", data([]byte{1})), int8(1)), message.ObjectBody, []byte{1}, nil, nil, encData},
		{"msg-type map, no body", typed(amqpIn("", nil), int8(2)), message.MapBody, nil, nil, nil, encNull},
		{"msg-type map on a list: section decides", typed(amqpIn("", value([]any{"x"})), int8(2)), message.StreamBody, nil, nil, []message.Value{str("x")}, encValueList},
		{"msg-type stream, no body", typed(amqpIn("", nil), int8(4)), message.StreamBody, nil, nil, nil, encNull},
		{"msg-type stream on a sequence", typed(amqpIn("", sequence([]any{"x"})), int8(4)), message.StreamBody, nil, nil, []message.Value{str("x")}, encSequence},
		{"msg-type message, textual, no body", typed(amqpIn("text/plain", nil), int8(0)), message.NoBody, nil, nil, nil, encNull},
		{"msg-type message on data: section decides", typed(amqpIn("", data([]byte{1})), int8(0)), message.BytesBody, []byte{1}, nil, nil, encData},
		{"msg-type as ubyte", typed(amqpIn("", data([]byte("t"))), uint8(5)), message.TextBody, []byte("t"), nil, nil, encData},
		{"msg-type out of range ignored", typed(amqpIn("", data([]byte("t"))), int8(9)), message.BytesBody, []byte("t"), nil, nil, encData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := reencode(t, tc.in)
			m, err := ToMessage(in, testQueue, testNow)
			if err != nil {
				t.Fatalf("ToMessage: %v", err)
			}
			if m.BodyType != tc.typ {
				t.Errorf("BodyType = %v, want %v", m.BodyType, tc.typ)
			}
			if tc.enc == native {
				if v, _ := m.Props.Get(propNative); !v.Bool() {
					t.Errorf("%s not set: %s", propNative, fmtProps(m.Props))
				}
				if !bytes.Equal(m.Body, wire.AppendMessage(nil, tc.in)) {
					t.Errorf("native body is not the encoded message")
				}
				if _, ok := m.Props.Get(propOriginalEncoding); ok {
					t.Errorf("native message has %s", propOriginalEncoding)
				}
				return
			}
			if !bytes.Equal(m.Body, tc.body) || (m.Body == nil) != (tc.body == nil) {
				t.Errorf("Body = %q (nil %v), want %q (nil %v)", m.Body, m.Body == nil, tc.body, tc.body == nil)
			}
			if !reflect.DeepEqual(m.Map, tc.mapv) {
				t.Errorf("Map = %s, want %s", fmtProps(m.Map), fmtProps(tc.mapv))
			}
			if len(m.List) != 0 || len(tc.list) != 0 {
				if !reflect.DeepEqual(m.List, tc.list) {
					t.Errorf("List = %s, want %s", fmtValues(m.List), fmtValues(tc.list))
				}
			}
			if v, ok := m.Props.Get(propOriginalEncoding); !ok || v.Kind != message.Short || v.Int() != int64(tc.enc) {
				t.Errorf("%s = %s, want short(%d)", propOriginalEncoding, fmtValue(v), tc.enc)
			}
		})
	}
}

// The header and properties table of mappings.md §3.3, message
// annotations, application properties and footer.
func TestAMQPConvertInbound(t *testing.T) {
	uuid := wire.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	text := func(am *wire.Message) *wire.Message { am.BodyKind, am.Value = wire.BodyValue, "x"; return am }
	base := func(m *message.Message) *message.Message {
		if m.Destination.IsZero() {
			m.Destination = testQueue
		}
		if m.Priority == 0 {
			m.Priority = message.DefaultPriority
		}
		m.BodyType, m.Body = message.TextBody, []byte("x")
		m.Props = append(props(propOriginalEncoding, enc(encValueString)), m.Props...)
		return m
	}
	cases := []struct {
		name   string
		in     *wire.Message
		target message.Destination // testQueue unless anonymous
		anon   bool
		want   *message.Message
	}{
		{
			name: "no header: non-persistent, default priority",
			in:   text(&wire.Message{}),
			want: base(&message.Message{}),
		},
		{
			name: "header: durable, priority, first-acquirer, delivery-count",
			in:   text(&wire.Message{Header: &wire.Header{Durable: true, Priority: 7, FirstAcquirer: true, DeliveryCount: 3}}),
			want: base(&message.Message{Persistent: true, Priority: 7, RedeliveryCounter: 3,
				Props: props(propHeader, vTrue, propFirstAcquirer, vTrue)}),
		},
		{
			name: "header not durable, priority above 9 clamped",
			in:   text(&wire.Message{Header: &wire.Header{Priority: 200}}),
			want: base(&message.Message{Priority: 9, Props: props(propHeader, vTrue)}),
		},
		{
			name: "priority 0 kept",
			in:   text(&wire.Message{Header: &wire.Header{Priority: 0}}),
			want: func() *message.Message {
				m := base(&message.Message{Props: props(propHeader, vTrue)})
				m.Priority = 0
				return m
			}(),
		},
		{
			name: "ttl counts from now",
			in:   text(&wire.Message{Header: &wire.Header{Priority: 4, TTL: 5 * time.Second}}),
			want: base(&message.Message{Expiration: testNow + 5000, Props: props(propHeader, vTrue)}),
		},
		{
			name: "absolute-expiry-time wins over ttl",
			in: text(&wire.Message{Header: &wire.Header{Priority: 4, TTL: 5 * time.Second},
				Properties: &wire.Properties{AbsoluteExpiryTime: 42}}),
			want: base(&message.Message{Expiration: 42, Props: props(propHeader, vTrue, propProperties, vTrue)}),
		},
		{
			name: "properties: every field",
			in: text(&wire.Message{Properties: &wire.Properties{
				MessageID: "m-1", UserID: []byte("alice"), To: "queue://ignored", Subject: "order", ReplyTo: "topic://replies",
				CorrelationID: uint64(9), ContentType: "text/plain", ContentEncoding: "gzip", CreationTime: 123,
				GroupID: "g", GroupSequence: 3, ReplyToGroupID: "rg",
			}}),
			want: base(&message.Message{UserID: "alice", Type: "order", ReplyTo: message.TopicDest("replies"),
				CorrelationID: "AMQP_ULONG:9", Timestamp: 123, GroupID: "g", GroupSeq: 3,
				Props: props(propProperties, vTrue, propMessageID, str("m-1"), propContentType, str("text/plain"),
					propContentEncoding, str("gzip"), propReplyToGroupID, str("rg"))}),
		},
		{
			name: "message-id uuid, correlation-id binary",
			in:   text(&wire.Message{Properties: &wire.Properties{MessageID: uuid, CorrelationID: []byte{0x0a, 0xff}}}),
			want: base(&message.Message{CorrelationID: "AMQP_BINARY:0AFF",
				Props: props(propProperties, vTrue, propMessageID, str("AMQP_UUID:12345678-9abc-def0-0123-456789abcdef"))}),
		},
		{
			name: "message-id ulong, correlation-id string with a prefix escaped",
			in:   text(&wire.Message{Properties: &wire.Properties{MessageID: uint64(1 << 63), CorrelationID: "AMQP_UUID:x"}}),
			want: base(&message.Message{CorrelationID: "AMQP_STRING:AMQP_UUID:x",
				Props: props(propProperties, vTrue, propMessageID, str("AMQP_ULONG:9223372036854775808"))}),
		},
		{
			name: "group-sequence above int wraps as Java's intValue",
			in:   text(&wire.Message{Properties: &wire.Properties{GroupSequence: math.MaxUint32}}),
			want: base(&message.Message{GroupSeq: -1, Props: props(propProperties, vTrue)}),
		},
		{
			name: "invalid utf-8 user-id replaced",
			in:   text(&wire.Message{Properties: &wire.Properties{UserID: []byte{'a', 0xff}}}),
			want: base(&message.Message{UserID: "a\uFFFD", Props: props(propProperties, vTrue)}),
		},
		{
			name: "anonymous relay: to decides",
			anon: true,
			in:   text(&wire.Message{Properties: &wire.Properties{To: "topic://prices"}}),
			want: base(&message.Message{Destination: message.TopicDest("prices"), Props: props(propProperties, vTrue)}),
		},
		{
			name: "anonymous relay: bare to is a queue",
			anon: true,
			in:   text(&wire.Message{Properties: &wire.Properties{To: "orders"}}),
			want: base(&message.Message{Destination: message.QueueDest("orders"), Props: props(propProperties, vTrue)}),
		},
		{
			name: "anonymous relay: bare to typed by x-opt-jms-dest",
			anon: true,
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annJMSDest), int8(1)),
				Properties: &wire.Properties{To: "prices"}}),
			want: base(&message.Message{Destination: message.TopicDest("prices"),
				Props: props(prefixMA+annJMSDest, message.ByteValue(1), propProperties, vTrue)}),
		},
		{
			name: "anonymous relay: prefix wins over x-opt-jms-dest",
			anon: true,
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annJMSDest), int8(1)),
				Properties: &wire.Properties{To: "queue://orders"}}),
			want: base(&message.Message{Destination: message.QueueDest("orders"),
				Props: props(prefixMA+annJMSDest, message.ByteValue(1), propProperties, vTrue)}),
		},
		{
			name: "anonymous relay: legacy x-opt-to-type",
			anon: true,
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annToType), wire.Symbol("topic")),
				Properties: &wire.Properties{To: "prices"}}),
			want: base(&message.Message{Destination: message.TopicDest("prices"),
				Props: props(prefixMA+annToType, str("topic"), propProperties, vTrue)}),
		},
		{
			name: "anonymous relay without to: no destination",
			anon: true,
			in:   text(&wire.Message{}),
			want: base(&message.Message{Destination: message.Destination{}}),
		},
		{
			name: "a link target overrides to, even an invalid one",
			in:   text(&wire.Message{Properties: &wire.Properties{To: "queue://"}}),
			want: base(&message.Message{Props: props(propProperties, vTrue)}),
		},
		{
			name: "bare reply-to typed by x-opt-jms-reply-to",
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annJMSReplyTo), int8(3)),
				Properties: &wire.Properties{ReplyTo: "r"}}),
			want: base(&message.Message{ReplyTo: message.Destination{Type: message.TempTopic, Name: "r"},
				Props: props(prefixMA+annJMSReplyTo, message.ByteValue(3), propProperties, vTrue)}),
		},
		{
			name: "bare reply-to typed by x-opt-jms-reply-type",
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annJMSReplyType), int8(1)),
				Properties: &wire.Properties{ReplyTo: "r"}}),
			want: base(&message.Message{ReplyTo: message.TopicDest("r"),
				Props: props(prefixMA+annJMSReplyType, message.ByteValue(1), propProperties, vTrue)}),
		},
		{
			name: "bare reply-to typed by legacy x-opt-reply-type; x-opt-jms-reply-to wins",
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annReplyType), "temporary,queue", wire.Symbol(annJMSReplyTo), int8(1)),
				Properties: &wire.Properties{ReplyTo: "r"}}),
			want: base(&message.Message{ReplyTo: message.TopicDest("r"),
				Props: props(prefixMA+annReplyType, str("temporary,queue"), prefixMA+annJMSReplyTo, message.ByteValue(1), propProperties, vTrue)}),
		},
		{
			name: "bare reply-to typed by legacy x-opt-reply-type",
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annReplyType), "temporary,queue"),
				Properties: &wire.Properties{ReplyTo: "r"}}),
			want: base(&message.Message{ReplyTo: message.Destination{Type: message.TempQueue, Name: "r"},
				Props: props(prefixMA+annReplyType, str("temporary,queue"), propProperties, vTrue)}),
		},
		{
			name: "message annotations and scheduling",
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(
				wire.Symbol("x-opt-custom"), wire.Symbol("sym"),
				uint64(77), int32(1),
				wire.Symbol(annDeliveryTime), wire.Timestamp(testNow+2500),
				wire.Symbol(annRepeat), uint32(3),
				wire.Symbol(annPeriod), int64(1000),
				wire.Symbol(annCron), "* * * * *",
				wire.Symbol("x-opt-enqueued"), wire.Timestamp(99),
			)}),
			want: base(&message.Message{Props: props(
				prefixMA+"x-opt-custom", str("sym"),
				prefixMA+"77", message.IntValue(1),
				engine.ScheduledDelay, message.LongValue(2500),
				prefixMA+annDeliveryTime, message.LongValue(testNow+2500),
				engine.ScheduledRepeat, message.IntValue(3),
				prefixMA+annRepeat, message.IntValue(3),
				engine.ScheduledPeriod, message.LongValue(1000),
				prefixMA+annPeriod, message.LongValue(1000),
				engine.ScheduledCron, str("* * * * *"),
				prefixMA+annCron, str("* * * * *"),
				prefixMA+"x-opt-enqueued", message.LongValue(99),
			)}),
		},
		{
			name: "delivery time in the past and non-positive delay schedule nothing",
			in: text(&wire.Message{MessageAnnotations: wire.NewMap(
				wire.Symbol(annDeliveryTime), int64(testNow-1), wire.Symbol(annDelay), int64(0))}),
			want: base(&message.Message{Props: props(
				prefixMA+annDeliveryTime, message.LongValue(testNow-1), prefixMA+annDelay, message.LongValue(0))}),
		},
		{
			name: "delivery delay",
			in:   text(&wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annDelay), int64(300))}),
			want: base(&message.Message{Props: props(engine.ScheduledDelay, message.LongValue(300), prefixMA+annDelay, message.LongValue(300))}),
		},
		{
			name: "application properties: JMS types and widened unsigned",
			in: text(&wire.Message{ApplicationProperties: wire.NewMap(
				"bool", true, "byte", int8(-1), "short", int16(-2), "int", int32(-3), "long", int64(-4),
				"float", float32(1.5), "double", 2.5, "string", "s", "char", wire.Char('x'), "null", nil,
				"ubyte-small", uint8(127), "ubyte-big", uint8(200),
				"ushort-small", uint16(32767), "ushort-big", uint16(40000),
				"uint-small", uint32(math.MaxInt32), "uint-big", uint32(3e9),
				"ulong", uint64(5), "ulong-huge", uint64(math.MaxUint64),
				"symbol", wire.Symbol("sym"), "binary", []byte{1},
				"dec32", wire.Decimal32{0x32, 0x00, 0x00, 0x0f},
				"dec64", wire.Decimal64{0x31, 0xc0, 0, 0, 0, 0, 0, 0x07},
				"dec128", wire.Decimal128{0x30, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02},
			)}),
			want: base(&message.Message{Props: props(
				"bool", vTrue, "byte", message.ByteValue(-1), "short", message.ShortValue(-2), "int", message.IntValue(-3),
				"long", message.LongValue(-4), "float", message.FloatValue(1.5), "double", message.DoubleValue(2.5),
				"string", str("s"), "char", message.CharValue('x'), "null", message.Value{},
				"ubyte-small", message.ByteValue(127), "ubyte-big", message.ShortValue(200),
				"ushort-small", message.ShortValue(32767), "ushort-big", message.IntValue(40000),
				"uint-small", message.IntValue(math.MaxInt32), "uint-big", message.LongValue(3e9),
				"ulong", message.LongValue(5), "ulong-huge", message.LongValue(-1),
				"symbol", str("sym"), "binary", message.BytesValue([]byte{1}),
				"dec32", message.FloatValue(1.5), "dec64", message.DoubleValue(7), "dec128", message.DoubleValue(2),
			)}),
		},
		{
			name: "application properties naming JMS headers set the headers",
			in: text(&wire.Message{ApplicationProperties: wire.NewMap(
				"JMSXGroupID", "g1", "JMSXGroupSeq", "4", "JMSPriority", int32(8), "JMSDeliveryMode", "PERSISTENT",
				"JMSType", "t", "JMSCorrelationID", "c", "JMSReplyTo", "topic://r", "JMSExpiration", int64(77),
				"JMSTimestamp", int64(66), "JMSXDeliveryCount", int32(3), "JMSRedelivered", true, "JMSType2", "kept",
			)}),
			want: base(&message.Message{GroupID: "g1", GroupSeq: 4, Priority: 8, Persistent: true, Type: "t", CorrelationID: "c",
				ReplyTo: message.TopicDest("r"), Expiration: 77, Timestamp: 66, RedeliveryCounter: 2,
				Props: props("JMSType2", str("kept"))}),
		},
		{
			name: "the properties section overrides application properties",
			in: text(&wire.Message{ApplicationProperties: wire.NewMap("JMSXGroupID", "app"),
				Properties: &wire.Properties{GroupID: "section"}}),
			want: base(&message.Message{GroupID: "section", Props: props(propProperties, vTrue)}),
		},
		{
			name: "repeated application property: first place, last value",
			in:   text(&wire.Message{ApplicationProperties: wire.NewMap("a", "1", "b", "2", "a", "3")}),
			want: base(&message.Message{Props: props("a", str("3"), "b", str("2"))}),
		},
		{
			name: "footer",
			in:   text(&wire.Message{Footer: wire.NewMap(wire.Symbol("hash"), []byte{0xab}, wire.Symbol("at"), wire.Timestamp(5))}),
			want: base(&message.Message{Props: props(prefixFT+"hash", message.BytesValue([]byte{0xab}), prefixFT+"at", message.LongValue(5))}),
		},
		{
			name: "delivery annotations are dropped",
			in:   text(&wire.Message{DeliveryAnnotations: wire.NewMap(wire.Symbol("x-opt-hop"), int32(1))}),
			want: base(&message.Message{}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := testQueue
			if tc.anon {
				target = message.Destination{}
			} else if !tc.target.IsZero() {
				target = tc.target
			}
			if tc.anon && tc.want.Destination == testQueue {
				tc.want.Destination = message.Destination{}
			}
			m, err := ToMessage(reencode(t, tc.in), target, testNow)
			if err != nil {
				t.Fatalf("ToMessage: %v", err)
			}
			if d := diffMessage(m, tc.want); d != "" {
				t.Errorf("ToMessage differs:%s", d)
			}
		})
	}
}

// Many properties, repeated names: built in linear time with Java map
// semantics.
func TestAMQPConvertInboundManyProperties(t *testing.T) {
	const n = 5000
	ap := &wire.Map{}
	for i := 0; i < n; i++ {
		ap.Entries = append(ap.Entries, wire.MapEntry{Key: fmt.Sprint("p", i%(n/2)), Value: int32(i)})
	}
	m, err := ToMessage(&wire.Message{ApplicationProperties: ap}, testQueue, testNow)
	if err != nil {
		t.Fatal(err)
	}
	// ORIGINAL_ENCODING plus n/2 distinct names.
	if len(m.Props) != 1+n/2 {
		t.Fatalf("%d properties, want %d", len(m.Props), 1+n/2)
	}
	if v, _ := m.Props.Get("p7"); v.Int() != n/2+7 {
		t.Errorf("p7 = %s, want the last value %d", fmtValue(v), n/2+7)
	}
	if m.Props[1].Name != "p0" {
		t.Errorf("first property %q, want p0", m.Props[1].Name)
	}
}

func TestAMQPConvertInboundErrors(t *testing.T) {
	cases := []struct {
		name  string
		in    *wire.Message
		anon  bool
		is    error
		names string // the error names this
	}{
		{"timestamp application property", &wire.Message{ApplicationProperties: wire.NewMap("when", wire.Timestamp(1))}, false, ErrPropertyType, `application property "when"`},
		{"uuid application property", &wire.Message{ApplicationProperties: wire.NewMap("id", wire.UUID{})}, false, ErrPropertyType, "id"},
		{"list application property", &wire.Message{ApplicationProperties: wire.NewMap("l", []any{})}, false, ErrPropertyType, "l"},
		{"char outside the BMP", &wire.Message{ApplicationProperties: wire.NewMap("c", wire.Char(0x1F600))}, false, ErrPropertyType, "c"},
		{"map annotation", &wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol("x-opt-m"), wire.NewMap())}, false, ErrPropertyType, `message annotation "x-opt-m"`},
		{"described footer", &wire.Message{Footer: wire.NewMap(wire.Symbol("f"), wire.Described{Descriptor: uint64(1), Value: "x"})}, false, ErrPropertyType, `footer "f"`},
		{"delivery time not a number", &wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annDeliveryTime), "soon")}, false, ErrPropertyType, annDeliveryTime},
		{"cron not a string", &wire.Message{MessageAnnotations: wire.NewMap(wire.Symbol(annCron), int32(1))}, false, ErrPropertyType, annCron},
		{"JMSPriority not a number", &wire.Message{ApplicationProperties: wire.NewMap("JMSPriority", "high")}, false, ErrPropertyType, "JMSPriority"},
		{"JMSXGroupSeq a long", &wire.Message{ApplicationProperties: wire.NewMap("JMSXGroupSeq", int64(1))}, false, ErrPropertyType, "JMSXGroupSeq"},
		{"JMSReplyTo empty", &wire.Message{ApplicationProperties: wire.NewMap("JMSReplyTo", "queue://")}, false, ErrBadAddress, "JMSReplyTo"},
		{"anonymous relay, empty to", &wire.Message{Properties: &wire.Properties{To: "queue://"}}, true, ErrBadAddress, "properties.to"},
		{"empty reply-to", &wire.Message{Properties: &wire.Properties{ReplyTo: "topic:// "}}, false, ErrBadAddress, "reply-to"},
		{"bad property in a native message", &wire.Message{BodyKind: wire.BodyValue, Value: int32(1),
			ApplicationProperties: wire.NewMap("when", wire.Timestamp(1))}, false, ErrPropertyType, "when"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target := testQueue
			if tc.anon {
				target = message.Destination{}
			}
			m, err := ToMessage(reencode(t, tc.in), target, testNow)
			if !errors.Is(err, tc.is) {
				t.Fatalf("ToMessage = %v, %v; want an error wrapping %v", m, err, tc.is)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Errorf("error %q does not name %q", err, tc.names)
			}
			t.Log(err)
		})
	}
	if _, err := ToMessage(nil, testQueue, testNow); err == nil {
		t.Error("ToMessage(nil) succeeded")
	}
}

func TestAMQPConvertMessageFormat(t *testing.T) {
	m, err := ToMessage(&wire.Message{BodyKind: wire.BodyData, Data: [][]byte{{1}}}, testQueue, testNow)
	if err != nil {
		t.Fatal(err)
	}
	SetMessageFormat(m, 0)
	if _, ok := m.Props.Get(propMessageFormat); ok || MessageFormat(m) != 0 {
		t.Errorf("format 0 recorded: %s", fmtProps(m.Props))
	}
	SetMessageFormat(m, 0x80013700)
	if v, _ := m.Props.Get(propMessageFormat); v.Kind != message.Long || v.Int() != 0x80013700 {
		t.Errorf("%s = %s, want long(%d)", propMessageFormat, fmtValue(v), 0x80013700)
	}
	if got := MessageFormat(m); got != 0x80013700 {
		t.Errorf("MessageFormat = %#x, want 0x80013700", got)
	}
	// It never reaches the application properties.
	if am := FromMessage(m, 0, testNow); am.ApplicationProperties != nil {
		t.Errorf("application properties %s", render(am))
	}
	for _, v := range []message.Value{str("12"), message.IntValue(12)} {
		m.Props.Set(propMessageFormat, v)
		if got := MessageFormat(m); got != 12 {
			t.Errorf("MessageFormat with %s = %d, want 12", fmtValue(v), got)
		}
	}
	for _, v := range []message.Value{str("x"), message.LongValue(-1), message.LongValue(1 << 40), vTrue} {
		m.Props.Set(propMessageFormat, v)
		if got := MessageFormat(m); got != 0 {
			t.Errorf("MessageFormat with %s = %d, want 0", fmtValue(v), got)
		}
	}
}

// ---------------------------------------------------------------------
// Outbound

func TestAMQPConvertOutbound(t *testing.T) {
	hdr := func(f func(h *wire.Header)) *wire.Header {
		h := wire.NewHeader()
		f(h)
		return h
	}
	ann := func(kv ...any) *wire.Map { return wire.NewMap(kv...) }
	tq := message.Destination{Type: message.TempQueue, Name: "tq"}
	tt := message.Destination{Type: message.TempTopic, Name: "tt"}
	sMsgType, sDest, sReply := wire.Symbol(annJMSMsgType), wire.Symbol(annJMSDest), wire.Symbol(annJMSReplyTo)
	qProps := func(f func(p *wire.Properties)) *wire.Properties {
		p := &wire.Properties{MessageID: "ID:1", To: "queue://q"}
		if f != nil {
			f(p)
		}
		return p
	}
	base := func(m *message.Message) *message.Message {
		m.ID = "ID:1"
		if m.Destination.IsZero() {
			m.Destination = testQueue
		}
		if m.Priority == 0 {
			m.Priority = message.DefaultPriority
		}
		return m
	}
	advisory := &message.Message{ID: "ID:adv", Destination: message.TopicDest("ActiveMQ.Advisory.Connection"), Priority: 4,
		Advisory: &message.Advisory{Command: "ConnectionInfo", Fields: props("ConnectionId", str("c1"), "ClientId", str("cl"))}}
	cases := []struct {
		name         string
		m            *message.Message
		redeliveries int32
		want         *wire.Message
	}{
		{
			name: "STOMP text message with string properties",
			m: &message.Message{ID: "ID:stomp-1:1:1:1", Destination: testQueue, Priority: 4, Timestamp: 1000,
				BodyType: message.TextBody, Body: []byte("hello"), Props: props("color", str("red"), "size", str("L"))},
			want: &wire.Message{
				MessageAnnotations:    ann(sMsgType, int8(5), sDest, int8(0)),
				Properties:            &wire.Properties{MessageID: "ID:stomp-1:1:1:1", To: "queue://q", CreationTime: 1000},
				ApplicationProperties: wire.NewMap("color", "red", "size", "L"),
				BodyKind:              wire.BodyValue, Value: "hello",
			},
		},
		{
			name: "MQTT bytes message with its QoS property",
			m: &message.Message{ID: "ID:mqtt-1:1:1:2", Destination: message.TopicDest("a.b"), Priority: 4, Persistent: true, Timestamp: 1000,
				BodyType: message.BytesBody, Body: []byte{1, 2, 3}, Props: props("ActiveMQ.MQTT.QoS", message.IntValue(1))},
			want: &wire.Message{
				Header:                hdr(func(h *wire.Header) { h.Durable = true }),
				MessageAnnotations:    ann(sMsgType, int8(3), sDest, int8(1)),
				Properties:            &wire.Properties{MessageID: "ID:mqtt-1:1:1:2", To: "topic://a.b", CreationTime: 1000},
				ApplicationProperties: wire.NewMap("ActiveMQ.MQTT.QoS", int32(1)),
				BodyKind:              wire.BodyData, Data: [][]byte{{1, 2, 3}},
			},
		},
		{
			name:         "header: priority, expiration, delivery count",
			m:            base(&message.Message{Priority: 7, Expiration: testNow + 5000, BodyType: message.BytesBody}),
			redeliveries: 2,
			want: &wire.Message{
				Header:             hdr(func(h *wire.Header) { h.Priority, h.TTL, h.DeliveryCount = 7, 5*time.Second, 2 }),
				MessageAnnotations: ann(sMsgType, int8(3), sDest, int8(0)),
				Properties:         qProps(func(p *wire.Properties) { p.AbsoluteExpiryTime = wire.Timestamp(testNow + 5000) }),
				BodyKind:           wire.BodyData, Data: [][]byte{{}},
			},
		},
		{
			name: "an expired message gets a ttl of 1",
			m:    base(&message.Message{Expiration: testNow - 10, BodyType: message.NoBody}),
			want: &wire.Message{
				Header:             hdr(func(h *wire.Header) { h.TTL = time.Millisecond }),
				MessageAnnotations: ann(sMsgType, int8(0), sDest, int8(0)),
				Properties:         qProps(func(p *wire.Properties) { p.AbsoluteExpiryTime = wire.Timestamp(testNow - 10) }),
			},
		},
		{
			name: "JMS headers to properties; reply-to kinds",
			m: base(&message.Message{Type: "order", ReplyTo: tt, CorrelationID: "corr", UserID: "alice", GroupID: "g", GroupSeq: 5,
				Destination: tq, BodyType: message.NoBody}),
			want: &wire.Message{
				MessageAnnotations: ann(sMsgType, int8(0), sDest, int8(2), sReply, int8(3)),
				Properties: &wire.Properties{MessageID: "ID:1", To: "temp-queue://tq", Subject: "order", ReplyTo: "temp-topic://tt",
					CorrelationID: "corr", UserID: []byte("alice"), GroupID: "g", GroupSequence: 5},
			},
		},
		{
			name: "reply-to queue and topic",
			m:    base(&message.Message{ReplyTo: message.TopicDest("r"), Destination: message.QueueDest("d"), BodyType: message.NoBody}),
			want: &wire.Message{
				MessageAnnotations: ann(sMsgType, int8(0), sDest, int8(0), sReply, int8(1)),
				Properties:         &wire.Properties{MessageID: "ID:1", To: "queue://d", ReplyTo: "topic://r"},
			},
		},
		{
			name: "typed correlation ids and the AMQP message id",
			m: base(&message.Message{CorrelationID: "AMQP_UUID:12345678-9abc-def0-0123-456789abcdef", BodyType: message.NoBody,
				Props: props(propMessageID, str("AMQP_ULONG:42"))}),
			want: &wire.Message{
				MessageAnnotations: ann(sMsgType, int8(0), sDest, int8(0)),
				Properties: qProps(func(p *wire.Properties) {
					p.MessageID = uint64(42)
					p.CorrelationID = wire.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
				}),
			},
		},
		{
			name: "JMS_AMQP_ properties restored into their sections",
			m: base(&message.Message{BodyType: message.TextBody, Body: []byte("t"), Props: props(
				propHeader, vTrue, propProperties, vTrue, propOriginalEncoding, enc(encData), propNative, message.BoolValue(false),
				propMessageFormat, message.LongValue(7), propFirstAcquirer, str("true"),
				propContentType, str("text/plain"), propContentEncoding, str("gzip"), propReplyToGroupID, str("rg"),
				prefixMA+"x-opt-a", message.IntValue(1), prefixDA+"x-opt-d", str("d"), prefixFT+"sig", message.BytesValue([]byte{9}),
				"JMS_AMQP_Other", str("o"), "app", message.LongValue(5),
				engine.ScheduledDelay, message.LongValue(100), engine.ScheduledCron, str("* * * * *"),
			)}),
			want: &wire.Message{
				Header:              hdr(func(h *wire.Header) { h.FirstAcquirer = true }),
				DeliveryAnnotations: ann(wire.Symbol("x-opt-d"), "d"),
				MessageAnnotations:  ann(wire.Symbol("x-opt-a"), int32(1), sMsgType, int8(5), sDest, int8(0)),
				Properties: qProps(func(p *wire.Properties) {
					p.ContentType, p.ContentEncoding, p.ReplyToGroupID = "text/plain", "gzip", "rg"
				}),
				ApplicationProperties: wire.NewMap("JMS_AMQP_Other", "o", "app", int64(5)),
				BodyKind:              wire.BodyData, Data: [][]byte{[]byte("t")},
				Footer: ann(wire.Symbol("sig"), []byte{9}),
			},
		},
		{
			name: "carried JMS annotations keep their place and take the message's values",
			m: base(&message.Message{Destination: message.QueueDest("DLQ"), BodyType: message.BytesBody, Body: []byte{1},
				Props: props(prefixMA+annJMSDest, message.ByteValue(1), prefixMA+annJMSMsgType, message.ByteValue(5),
					prefixMA+annJMSReplyTo, message.ByteValue(1))}),
			want: &wire.Message{
				MessageAnnotations: ann(sDest, int8(0), sMsgType, int8(3), sReply, int8(1)),
				Properties:         &wire.Properties{MessageID: "ID:1", To: "queue://DLQ"},
				BodyKind:           wire.BodyData, Data: [][]byte{{1}},
			},
		},
		{
			name: "text originally data",
			m:    base(&message.Message{BodyType: message.TextBody, Body: []byte("t"), Props: props(propOriginalEncoding, enc(encData))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(5), sDest, int8(0)), Properties: qProps(nil),
				BodyKind: wire.BodyData, Data: [][]byte{[]byte("t")}},
		},
		{
			name: "text originally without a body",
			m:    base(&message.Message{BodyType: message.TextBody, Props: props(propOriginalEncoding, enc(encNull))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(5), sDest, int8(0)), Properties: qProps(nil)},
		},
		{
			name: "text originally a null value",
			m:    base(&message.Message{BodyType: message.TextBody, Props: props(propOriginalEncoding, enc(encValueNull))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(5), sDest, int8(0)), Properties: qProps(nil), BodyKind: wire.BodyValue},
		},
		{
			name: "empty text from another protocol is an empty string",
			m:    base(&message.Message{BodyType: message.TextBody}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(5), sDest, int8(0)), Properties: qProps(nil), BodyKind: wire.BodyValue, Value: ""},
		},
		{
			name: "bytes originally a binary value",
			m:    base(&message.Message{BodyType: message.BytesBody, Body: []byte{7}, Props: props(propOriginalEncoding, enc(encValueBinary))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(3), sDest, int8(0)), Properties: qProps(nil), BodyKind: wire.BodyValue, Value: []byte{7}},
		},
		{
			name: "bytes originally without a body",
			m:    base(&message.Message{BodyType: message.BytesBody, Props: props(propOriginalEncoding, enc(encNull))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(3), sDest, int8(0)), Properties: qProps(nil)},
		},
		{
			name: "map message",
			m: base(&message.Message{BodyType: message.MapBody, Map: props("s", str("v"), "b", message.BytesValue([]byte{1}),
				"c", message.CharValue('c'), "n", message.Value{}, "f", message.FloatValue(0.5), "sh", message.ShortValue(3))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(2), sDest, int8(0)), Properties: qProps(nil),
				BodyKind: wire.BodyValue, Value: wire.NewMap("s", "v", "b", []byte{1}, "c", wire.Char('c'), "n", nil, "f", float32(0.5), "sh", int16(3))},
		},
		{
			name: "empty map message",
			m:    base(&message.Message{BodyType: message.MapBody}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(2), sDest, int8(0)), Properties: qProps(nil),
				BodyKind: wire.BodyValue, Value: &wire.Map{Entries: []wire.MapEntry{}}},
		},
		{
			name: "stream message",
			m:    base(&message.Message{BodyType: message.StreamBody, List: []message.Value{str("a"), message.ByteValue(1), message.DoubleValue(2)}}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(4), sDest, int8(0)), Properties: qProps(nil),
				BodyKind: wire.BodyValue, Value: []any{"a", int8(1), float64(2)}},
		},
		{
			name: "stream message originally a sequence",
			m: base(&message.Message{BodyType: message.StreamBody, List: []message.Value{str("a")},
				Props: props(propOriginalEncoding, enc(encSequence))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(4), sDest, int8(0)), Properties: qProps(nil),
				BodyKind: wire.BodySequence, Sequence: [][]any{{"a"}}},
		},
		{
			name: "object message gets the serialized content type",
			m:    base(&message.Message{BodyType: message.ObjectBody, Body: []byte{0xac, 0xed}}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(1), sDest, int8(0)),
				Properties: qProps(func(p *wire.Properties) { p.ContentType = contentTypeSerialized }),
				BodyKind:   wire.BodyData, Data: [][]byte{{0xac, 0xed}}},
		},
		{
			name: "object message originally a binary value keeps its content type",
			m: base(&message.Message{BodyType: message.ObjectBody, Body: []byte{1},
				Props: props(propOriginalEncoding, enc(encValueBinary), propContentType, str("application/x-thing"))}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(1), sDest, int8(0)),
				Properties: qProps(func(p *wire.Properties) { p.ContentType = "application/x-thing" }),
				BodyKind:   wire.BodyValue, Value: []byte{1}},
		},
		{
			name: "plain message has no body",
			m:    base(&message.Message{BodyType: message.NoBody, Persistent: true}),
			want: &wire.Message{Header: hdr(func(h *wire.Header) { h.Durable = true }),
				MessageAnnotations: ann(sMsgType, int8(0), sDest, int8(0)), Properties: qProps(nil)},
		},
		{
			name: "advisory: the fields as a map, and the command",
			m:    advisory,
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(2), sDest, int8(1)),
				Properties:            &wire.Properties{MessageID: "ID:adv", To: "topic://ActiveMQ.Advisory.Connection"},
				ApplicationProperties: wire.NewMap(propDataStructureType, "ConnectionInfo"),
				BodyKind:              wire.BodyValue, Value: wire.NewMap("ConnectionId", "c1", "ClientId", "cl")},
		},
		{
			name: "advisory about a message names the message's class",
			m: base(&message.Message{BodyType: message.NoBody, Props: props("orignalMessageId", str("ID:x")),
				Advisory: &message.Advisory{Command: "Message", Message: &message.Message{BodyType: message.TextBody}}}),
			want: &wire.Message{MessageAnnotations: ann(sMsgType, int8(2), sDest, int8(0)), Properties: qProps(nil),
				ApplicationProperties: wire.NewMap("orignalMessageId", "ID:x", propDataStructureType, "ActiveMQTextMessage"),
				BodyKind:              wire.BodyValue, Value: &wire.Map{Entries: []wire.MapEntry{}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := FromMessage(tc.m, tc.redeliveries, testNow)
			sameAMQP(t, got, tc.want)
			// What goes out decodes.
			if _, err := wire.DecodeMessage(wire.AppendMessage(nil, got)); err != nil {
				t.Errorf("encoded message does not decode: %v", err)
			}
		})
	}
}

// FromMessage must not change the shared engine message.
func TestAMQPConvertOutboundLeavesMessage(t *testing.T) {
	m := &message.Message{ID: "ID:1", Destination: testQueue, Priority: 4, BodyType: message.ObjectBody, Body: []byte{1},
		Props: props("a", str("b"))}
	before := *m
	before.Props = append(message.Properties(nil), m.Props...)
	FromMessage(m, 3, testNow)
	if d := diffMessage(m, &before); d != "" {
		t.Errorf("FromMessage changed the message:%s", d)
	}
}

// FromMessage runs on every shard goroutine that delivers a shared
// message (topic fan-out): it only reads it.
func TestAMQPConvertOutboundConcurrent(t *testing.T) {
	text, err := ToMessage(reencode(t, &wire.Message{Header: &wire.Header{Priority: 4},
		MessageAnnotations: wire.NewMap(wire.Symbol("x-opt-a"), int32(1)), ApplicationProperties: wire.NewMap("k", "v"),
		BodyKind: wire.BodyValue, Value: "x"}), testQueue, testNow)
	if err != nil {
		t.Fatal(err)
	}
	native, err := ToMessage(reencode(t, &wire.Message{BodyKind: wire.BodyValue, Value: int32(1)}), testQueue, testNow)
	if err != nil {
		t.Fatal(err)
	}
	want := [2][]byte{wire.AppendMessage(nil, FromMessage(text, 1, testNow)), wire.AppendMessage(nil, FromMessage(native, 1, testNow))}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			var err error
			for i := 0; i < 200 && err == nil; i++ {
				for j, m := range []*message.Message{text, native} {
					if got := wire.AppendMessage(nil, FromMessage(m, 1, testNow)); !bytes.Equal(got, want[j]) {
						err = fmt.Errorf("message %d encoded differently", j)
					}
				}
			}
			done <- err
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
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
