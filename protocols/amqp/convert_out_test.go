package amqp

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
)

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
