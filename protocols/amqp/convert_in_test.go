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
