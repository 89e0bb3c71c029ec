package marshal

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
)

// convWireFormat is what a Java 5.17 client negotiates by default: the
// frames a producer's message arrives in are tight and cached.
var convWireFormat = wire.Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true}

// convTransmit sends ds through an encoder and decoder of format f, as it
// would cross a connection.
func convTransmit(t *testing.T, f wire.Format, ds wire.DataStructure) wire.DataStructure {
	t.Helper()
	b, err := wire.NewEncoder(f).Append(nil, ds)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	d := wire.NewDecoder(f, wire.Limits{})
	d.Feed(b)
	got, err := d.Next()
	if err != nil || got == nil {
		t.Fatalf("decode: %v (%T)", err, got)
	}
	return got
}

func convTransmitMessage(t *testing.T, w *wire.Message) *wire.Message {
	t.Helper()
	got, ok := convTransmit(t, convWireFormat, w).(*wire.Message)
	if !ok {
		t.Fatalf("decoded %T, want *wire.Message", got)
	}
	return got
}

// convAllKinds has a value of every message.Value kind.
func convAllKinds() message.Properties {
	return message.Properties{
		{Name: "aBool", Value: message.BoolValue(true)},
		{Name: "aByte", Value: message.ByteValue(-7)},
		{Name: "aBytes", Value: message.BytesValue([]byte{0, 1, 0xff})},
		{Name: "aChar", Value: message.CharValue('é')},
		{Name: "aDouble", Value: message.DoubleValue(math.Pi)},
		{Name: "aFloat", Value: message.FloatValue(-1.5)},
		{Name: "aInt", Value: message.IntValue(-100000)},
		{Name: "aLong", Value: message.LongValue(math.MinInt64)},
		{Name: "aNull", Value: message.Value{}},
		{Name: "aShort", Value: message.ShortValue(-300)},
		{Name: "aString", Value: message.StringValue("grüß 😀")},
		{Name: "bigString", Value: message.StringValue(strings.Repeat("x", 9000))},
	}
}

// convAllPrimitives has a value of every primitive-map type tag but map
// and list, as wire's Go types.
func convAllPrimitives() map[string]any {
	return map[string]any{
		"aBool": true, "aByte": int8(-7), "aBytes": []byte{0, 1, 0xff}, "aChar": wire.Char('é'),
		"aDouble": math.Pi, "aFloat": float32(-1.5), "aInt": int32(-100000), "aLong": int64(math.MinInt64),
		"aNull": nil, "aShort": int16(-300), "aString": "grüß 😀", "bigString": strings.Repeat("x", 9000),
	}
}

// convHeaders returns an engine message with every header set.
func convHeaders() *message.Message {
	return &message.Message{
		ID:                  "ID:host-1234-5678-1:3:1:7:42",
		Destination:         message.QueueDest("orders.eu"),
		ReplyTo:             message.Destination{Type: message.TempQueue, Name: "ID:host-1234-5678-1:3:1"},
		OriginalDestination: message.TopicDest("orders"),
		CorrelationID:       "corr-1",
		Type:                "order",
		Priority:            7,
		Persistent:          true,
		Timestamp:           1700000000123,
		Expiration:          1700000060123,
		UserID:              "alice",
		GroupID:             "g1",
		GroupSeq:            3,
		RedeliveryCounter:   2,
		Props:               convAllKinds(),
	}
}

// convNormal makes engine messages comparable: properties in name order,
// empty slices nil, no original form.
func convNormal(m *message.Message) *message.Message {
	c := *m
	c.Original = message.Encoded{}
	c.Props = slices.Clone(m.Props)
	slices.SortFunc(c.Props, func(a, b message.Property) int { return strings.Compare(a.Name, b.Name) })
	if len(c.Props) == 0 {
		c.Props = nil
	}
	if len(c.Body) == 0 {
		c.Body = nil
	}
	if len(c.Map) == 0 {
		c.Map = nil
	}
	if len(c.List) == 0 {
		c.List = nil
	}
	if c.Advisory != nil && c.Advisory.Message != nil {
		a := *c.Advisory
		a.Message = convNormal(a.Message)
		c.Advisory = &a
	}
	return &c
}

func convEqual(t *testing.T, got, want *message.Message) {
	t.Helper()
	g, w := convNormal(got), convNormal(want)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("message differs\n got: %+v\nwant: %+v", g, w)
	}
}

func convBodies() []struct {
	name string
	set  func(m *message.Message)
} {
	return []struct {
		name string
		set  func(m *message.Message)
	}{
		{"no body", func(m *message.Message) {}},
		{"text", func(m *message.Message) { m.BodyType, m.Body = message.TextBody, []byte("hello, wörld 😀\x00end") }},
		{"empty text", func(m *message.Message) { m.BodyType = message.TextBody }},
		{"bytes", func(m *message.Message) { m.BodyType, m.Body = message.BytesBody, []byte{0, 1, 2, 0xff, 0xfe} }},
		{"map", func(m *message.Message) { m.BodyType, m.Map = message.MapBody, convAllKinds() }},
		{"empty map", func(m *message.Message) { m.BodyType = message.MapBody }},
		{"stream", func(m *message.Message) {
			m.BodyType = message.StreamBody
			for _, p := range convAllKinds() {
				m.List = append(m.List, p.Value)
			}
		}},
		{"object", func(m *message.Message) {
			m.BodyType, m.Body = message.ObjectBody, []byte{0xac, 0xed, 0, 5, 't', 0, 1, 'x'}
		}},
	}
}

func TestOpenWireConvertEngineRoundTrip(t *testing.T) {
	for _, tc := range convBodies() {
		t.Run(tc.name, func(t *testing.T) {
			m := convHeaders()
			tc.set(m)
			w, err := FromEngine(m, m.RedeliveryCounter)
			if err != nil {
				t.Fatalf("FromEngine: %v", err)
			}
			sent := convTransmitMessage(t, w)
			back, err := ToEngine(sent)
			if err != nil {
				t.Fatalf("ToEngine: %v", err)
			}
			convEqual(t, back, m)
			// The kept form's bytes (a spill's, a store's) are the
			// producer's message marshalled in StoreFormat.
			want, err := wire.Marshal(sent, wire.StoreFormat())
			if err != nil {
				t.Fatal(err)
			}
			if back.Original.Protocol != "openwire" || !bytes.Equal(back.Original.Marshalled(), want) {
				t.Errorf("Original = %q, %x; want openwire %x", back.Original.Protocol, back.Original.Marshalled(), want)
			}
		})
	}
}

func TestOpenWireConvertWireRoundTrip(t *testing.T) {
	type body struct {
		name  string
		set   func(w *wire.Message) error
		check func(t *testing.T, got, want *wire.Message)
	}
	lim := wire.Limits{}
	sameBody := func(t *testing.T, got, want *wire.Message) {
		t.Helper()
		g, err1 := got.Body(lim)
		w, err2 := want.Body(lim)
		if err1 != nil || err2 != nil || !bytes.Equal(g, w) {
			t.Errorf("body = %q (%v), want %q (%v)", g, err1, w, err2)
		}
	}
	bodies := []body{
		{"message", func(w *wire.Message) error { return nil }, sameBody},
		{"text", func(w *wire.Message) error { w.SetText("text 😀 ok", false); return nil }, sameBody},
		{"bytes", func(w *wire.Message) error { w.SetBytes([]byte{9, 8, 7}, false); return nil }, sameBody},
		{"map", func(w *wire.Message) error { return w.SetMap(convAllPrimitives(), false) },
			func(t *testing.T, got, want *wire.Message) {
				g, err := got.Map(lim)
				w, _ := want.Map(lim)
				if err != nil || !reflect.DeepEqual(g, w) {
					t.Errorf("map = %v (%v), want %v", g, err, w)
				}
			}},
		{"stream", func(w *wire.Message) error {
			return w.SetStream([]any{true, int8(1), wire.Char('x'), int16(2), int32(3), int64(4), float32(5), 6.0, "s", []byte{7}, nil}, false)
		}, func(t *testing.T, got, want *wire.Message) {
			g, err := got.Stream(lim)
			w, _ := want.Stream(lim)
			if err != nil || !reflect.DeepEqual(g, w) {
				t.Errorf("stream = %v (%v), want %v", g, err, w)
			}
		}},
		{"object", func(w *wire.Message) error {
			w.Kind, w.Content = wire.TypeActiveMQObjectMessage, []byte{0xac, 0xed, 0, 5, 1}
			return nil
		}, sameBody},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			in := convWireMessage(t)
			if err := tc.set(in); err != nil {
				t.Fatal(err)
			}
			if err := in.SetProperties(convAllPrimitives()); err != nil {
				t.Fatal(err)
			}
			recv := convTransmitMessage(t, in)
			m, err := ToEngine(recv)
			if err != nil {
				t.Fatalf("ToEngine: %v", err)
			}
			check := func(t *testing.T, out *wire.Message) {
				t.Helper()
				if out.DataStructureType() != in.DataStructureType() {
					t.Fatalf("type = %s, want %s", wire.TypeName(out.DataStructureType()), wire.TypeName(in.DataStructureType()))
				}
				if got, want := convHeaderView(out), convHeaderView(in); !reflect.DeepEqual(got, want) {
					t.Errorf("headers\n got: %+v\nwant: %+v", got, want)
				}
				gp, err := out.Properties(lim)
				if err != nil || !reflect.DeepEqual(gp, convAllPrimitives()) {
					t.Errorf("properties = %v (%v), want %v", gp, err, convAllPrimitives())
				}
				tc.check(t, out, in)
				// What the session sends must encode.
				convTransmitMessage(t, out)
			}
			t.Run("original", func(t *testing.T) {
				out, err := FromEngine(m, 5)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Content, in.Content) || !bytes.Equal(out.MarshalledProperties, in.MarshalledProperties) {
					t.Errorf("original form not kept: content %x props %x", out.Content, out.MarshalledProperties)
				}
				if out.RedeliveryCounter != 5 || out.Raw != nil {
					t.Errorf("RedeliveryCounter = %d, Raw %d bytes; want 5 and none", out.RedeliveryCounter, len(out.Raw))
				}
				in.RedeliveryCounter = 5
				check(t, out)
				in.RedeliveryCounter = 0
			})
			t.Run("converted", func(t *testing.T) {
				out, err := FromEngine(m.Clone(), 0)
				if err != nil {
					t.Fatal(err)
				}
				check(t, out)
			})
		})
	}
}

// convWireMessage is a producer's message with every header field set.
func convWireMessage(t *testing.T) *wire.Message {
	t.Helper()
	pid := &wire.ProducerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7}
	return &wire.Message{
		BaseCommand:         wire.BaseCommand{CommandId: 9, ResponseRequired: true},
		ProducerId:          pid,
		Destination:         wire.NewQueue("orders"),
		OriginalDestination: wire.NewTopic("orders.all"),
		MessageId:           &wire.MessageId{ProducerId: pid, ProducerSequenceId: 42},
		GroupID:             "g",
		GroupSequence:       2,
		CorrelationId:       "c",
		Persistent:          true,
		Expiration:          99,
		Priority:            8,
		ReplyTo:             wire.NewTempTopic("ID:host-1234-5678-1:3:5"),
		Timestamp:           1700000000000,
		Type:                "t",
		UserID:              "bob",
	}
}

type convHeaders2 struct {
	ID, Dest, OrigDest, ReplyTo, Group, Corr, Type, User string
	Seq, Redeliveries                                    int32
	Persistent                                           bool
	Expiration, Timestamp                                int64
	Priority                                             byte
}

func convHeaderView(w *wire.Message) convHeaders2 {
	s := func(d *wire.Destination) string {
		if d == nil {
			return ""
		}
		return d.String()
	}
	return convHeaders2{
		ID: w.MessageId.String(), Dest: s(w.Destination), OrigDest: s(w.OriginalDestination), ReplyTo: s(w.ReplyTo),
		Group: w.GroupID, Corr: w.CorrelationId, Type: w.Type, User: w.UserID, Seq: w.GroupSequence,
		Redeliveries: w.RedeliveryCounter, Persistent: w.Persistent, Expiration: w.Expiration,
		Timestamp: w.Timestamp, Priority: w.Priority,
	}
}

func TestOpenWireConvertEmoji(t *testing.T) {
	const text = "smile 😀, 𝄞 clef, 中文, NUL\x00."
	t.Run("STOMP text to a JMS consumer", func(t *testing.T) {
		// A STOMP SEND without content-length: a TextMessage whose text is
		// the body bytes as UTF-8.
		m := &message.Message{ID: "ID:b-1-2-3:1:1:1:1", Destination: message.QueueDest("q"), BodyType: message.TextBody, Body: []byte(text)}
		w, err := FromEngine(m, 0)
		if err != nil {
			t.Fatal(err)
		}
		w = convTransmitMessage(t, w)
		got, ok, err := w.Text(wire.Limits{})
		if err != nil || !ok || got != text {
			t.Errorf("Text() = %q, %v, %v; want %q", got, ok, err, text)
		}
		// Java's readUTF8 refuses 4-byte sequences: none may be written.
		for _, c := range w.Content {
			if c >= 0xF0 {
				t.Fatalf("content holds a 4-byte UTF-8 lead byte: % x", w.Content)
			}
		}
	})
	t.Run("JMS text to the engine", func(t *testing.T) {
		w := &wire.Message{MessageId: &wire.MessageId{TextView: "ID:x"}, Destination: wire.NewQueue("q")}
		w.SetText(text, false)
		m, err := ToEngine(convTransmitMessage(t, w))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Body) != text || m.BodyType != message.TextBody {
			t.Errorf("body = %v %q, want text %q", m.BodyType, m.Body, text)
		}
		if !utf8.Valid(m.Body) {
			t.Errorf("engine text is not UTF-8: % x", m.Body)
		}
	})
	t.Run("standard UTF-8 written verbatim is accepted", func(t *testing.T) {
		// What ActiveMQ's LegacyFrameTranslator puts in a TextMessage.
		b := append([]byte{0, 0, 0, byte(len(text))}, text...)
		w := &wire.Message{Kind: wire.TypeActiveMQTextMessage, Destination: wire.NewQueue("q"), Content: b}
		m, err := ToEngine(w)
		if err != nil || string(m.Body) != text {
			t.Errorf("ToEngine = %q, %v; want %q", m.Body, err, text)
		}
	})
	t.Run("malformed text is refused", func(t *testing.T) {
		w := &wire.Message{Kind: wire.TypeActiveMQTextMessage, Destination: wire.NewQueue("q"), Content: []byte{0, 0, 0, 2, 0xff, 0xfe}}
		if _, err := ToEngine(w); err == nil {
			t.Error("ToEngine accepted malformed text")
		}
	})
}

func TestOpenWireConvertCompressed(t *testing.T) {
	text := strings.Repeat("compress me 😀 ", 200)
	raw := bytes.Repeat([]byte{1, 2, 3, 4}, 500)
	cases := []struct {
		name string
		set  func(w *wire.Message)
		want func(t *testing.T, m *message.Message)
	}{
		{"text", func(w *wire.Message) { w.SetText(text, true) }, func(t *testing.T, m *message.Message) {
			if m.BodyType != message.TextBody || string(m.Body) != text {
				t.Errorf("body = %v %.40q..., want the text", m.BodyType, m.Body)
			}
		}},
		{"bytes", func(w *wire.Message) { w.SetBytes(raw, true) }, func(t *testing.T, m *message.Message) {
			if m.BodyType != message.BytesBody || !bytes.Equal(m.Body, raw) {
				t.Errorf("body = %v %d bytes, want the %d bytes", m.BodyType, len(m.Body), len(raw))
			}
		}},
		{"map", func(w *wire.Message) { w.SetMap(map[string]any{"k": text}, true) }, func(t *testing.T, m *message.Message) {
			if v, _ := m.Map.Get("k"); m.BodyType != message.MapBody || v.Str() != text {
				t.Errorf("map = %v %v, want k=text", m.BodyType, m.Map)
			}
		}},
		{"stream", func(w *wire.Message) { w.SetStream([]any{text, int32(1)}, true) }, func(t *testing.T, m *message.Message) {
			if m.BodyType != message.StreamBody || len(m.List) != 2 || m.List[0].Str() != text || m.List[1].Int() != 1 {
				t.Errorf("stream = %v %v, want [text 1]", m.BodyType, m.List)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &wire.Message{MessageId: &wire.MessageId{TextView: "ID:z"}, Destination: wire.NewQueue("q")}
			tc.set(in)
			if !in.Compressed {
				t.Fatal("test message is not compressed")
			}
			m, err := ToEngine(convTransmitMessage(t, in))
			if err != nil {
				t.Fatal(err)
			}
			tc.want(t, m)
			// Forwarded unchanged: the compressed original.
			out, err := FromEngine(m, 0)
			if err != nil {
				t.Fatal(err)
			}
			if !out.Compressed || !bytes.Equal(out.Content, in.Content) {
				t.Errorf("forwarded: compressed=%v, content kept=%v; want the compressed original", out.Compressed, bytes.Equal(out.Content, in.Content))
			}
			// Changed (cloned): plain body, same content once inflated.
			out, err = FromEngine(m.Clone(), 0)
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := out.Body(wire.Limits{})
			wb, _ := in.Body(wire.Limits{})
			if out.Compressed || !bytes.Equal(gb, wb) {
				t.Errorf("converted: compressed=%v, body equal=%v; want plain, equal", out.Compressed, bytes.Equal(gb, wb))
			}
		})
	}
}

func TestOpenWireConvertBombRefused(t *testing.T) {
	// A 4-byte header claiming more than the body limit.
	w := &wire.Message{Kind: wire.TypeActiveMQBytesMessage, Destination: wire.NewQueue("q"), Compressed: true,
		Content: []byte{0x7f, 0xff, 0xff, 0xff, 0x78, 0x9c, 3, 0, 0, 0, 0, 1}}
	if _, err := ToEngine(w); err == nil {
		t.Error("ToEngine accepted a body over the limit")
	}
}

func TestOpenWireConvertSTOMPShaped(t *testing.T) {
	cases := []struct {
		name string
		m    *message.Message
		kind byte
	}{
		{"no content-length is text", &message.Message{BodyType: message.TextBody, Body: []byte("hi there")}, wire.TypeActiveMQTextMessage},
		{"empty text frame is empty text", &message.Message{BodyType: message.TextBody}, wire.TypeActiveMQTextMessage},
		{"content-length is bytes", &message.Message{BodyType: message.BytesBody, Body: []byte("hi\x00there")}, wire.TypeActiveMQBytesMessage},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.m.ID = "ID:broker-1-2-3-4:1:1:1:9"
			tc.m.Destination = message.TopicDest("news")
			tc.m.Props = message.Properties{{Name: "hdr", Value: message.StringValue("v")}}
			w, err := FromEngine(tc.m, 1)
			if err != nil {
				t.Fatal(err)
			}
			w = convTransmitMessage(t, w)
			if w.DataStructureType() != tc.kind {
				t.Fatalf("type = %s, want %s", wire.TypeName(w.DataStructureType()), wire.TypeName(tc.kind))
			}
			if tc.kind == wire.TypeActiveMQTextMessage {
				s, ok, err := w.Text(wire.Limits{})
				if err != nil || !ok || s != string(tc.m.Body) {
					t.Errorf("Text() = %q, %v, %v; want %q", s, ok, err, tc.m.Body)
				}
			} else if b, err := w.Bytes(wire.Limits{}); err != nil || !bytes.Equal(b, tc.m.Body) {
				t.Errorf("Bytes() = %q, %v; want %q", b, err, tc.m.Body)
			}
			if p, _ := w.Properties(wire.Limits{}); !reflect.DeepEqual(p, map[string]any{"hdr": "v"}) {
				t.Errorf("properties = %v, want hdr=v", p)
			}
			if w.MessageId.String() != tc.m.ID || w.MessageId.TextView != "" {
				t.Errorf("MessageId = %q (TextView %q), want %q structured", w.MessageId.String(), w.MessageId.TextView, tc.m.ID)
			}
			if w.RedeliveryCounter != 1 || w.Destination.String() != "topic://news" {
				t.Errorf("RedeliveryCounter %d, Destination %s; want 1, topic://news", w.RedeliveryCounter, w.Destination)
			}
		})
	}
}

func TestOpenWireConvertGroupFirst(t *testing.T) {
	m := &message.Message{ID: "ID:b-1:1:1:1:1", Destination: message.QueueDest("q"), GroupID: "g", Props: message.Properties{
		{Name: "a", Value: message.IntValue(1)},
		{Name: "JMSXGroupFirstForConsumer", Value: message.BoolValue(true)},
		{Name: "a", Value: message.IntValue(2)}, // a duplicate: the first wins, as Properties.Get
	}}
	w, err := FromEngine(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	w = convTransmitMessage(t, w)
	p, err := w.Properties(wire.Limits{})
	if !w.JMSXGroupFirstForConsumer || err != nil || !reflect.DeepEqual(p, map[string]any{"a": int32(1)}) {
		t.Errorf("JMSXGroupFirstForConsumer = %v, properties %v (%v); want the field set and a=1 only", w.JMSXGroupFirstForConsumer, p, err)
	}
	back, err := ToEngine(w)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := back.Props.Get("JMSXGroupFirstForConsumer"); !ok || !v.Bool() {
		t.Errorf("engine JMSXGroupFirstForConsumer = %v, %v; want true", v, ok)
	}
}

func TestOpenWireConvertNestedProperties(t *testing.T) {
	w := &wire.Message{MessageId: &wire.MessageId{TextView: "ID:n"}, Destination: wire.NewQueue("q")}
	if err := w.SetProperties(map[string]any{"m": map[string]any{"b": []any{"x", int32(2)}, "a": int32(1)}}); err != nil {
		t.Fatal(err)
	}
	m, err := ToEngine(w)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := m.Props.Get("m"); v.Kind != message.String || v.Str() != "{a=1, b=[x, 2]}" {
		t.Errorf("m = %v %q, want the Java string {a=1, b=[x, 2]}", v.Kind, v.Str())
	}
	// An OpenWire consumer still gets the map while the original is kept.
	out, err := FromEngine(m, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := out.Properties(wire.Limits{}); !reflect.DeepEqual(p, map[string]any{"m": map[string]any{"b": []any{"x", int32(2)}, "a": int32(1)}}) {
		t.Errorf("forwarded properties = %v, want the nested map", p)
	}
}

func TestOpenWireConvertOriginal(t *testing.T) {
	w := convWireMessage(t)
	w.SetText("x", false)
	m, err := ToEngine(convTransmitMessage(t, w))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Original(m); !ok {
		t.Fatal("Original of an unchanged message: not found")
	}
	c := m.Clone()
	if _, ok := Original(c); ok {
		t.Error("Original of a clone: found")
	}
	// A composite or virtual copy: the engine keeps Original and changes
	// only where the message goes; the copy is sent where it goes.
	moved := *m
	moved.Destination = message.QueueDest("elsewhere")
	moved.OriginalDestination = m.Destination
	out, err := FromEngine(&moved, 0)
	if err != nil || out.Destination.String() != "queue://elsewhere" || out.OriginalDestination.String() != "queue://orders" {
		t.Errorf("FromEngine of a virtual copy: destination %v, original %v, %v; want queue://elsewhere from queue://orders",
			out.Destination, out.OriginalDestination, err)
	}
	if out.Content == nil || string(out.Content[4:]) != "x" {
		t.Errorf("FromEngine of a virtual copy: content %q, want the original text", out.Content)
	}
	// Changed without Clone (a bug elsewhere): the guard notices.
	renamed := *m
	renamed.ID = "ID:other-1:1:1:1:1"
	if _, ok := Original(&renamed); ok {
		t.Error("Original of a message whose id changed: found")
	}
	if _, ok := Original(&message.Message{Original: message.Encoded{Protocol: "openwire", Bytes: []byte{0, 0, 0, 1, 23}}}); ok {
		t.Error("Original of garbage: found")
	}
	if _, ok := Original(&message.Message{Original: message.Encoded{Protocol: "amqp", Bytes: m.Original.Marshalled()}}); ok {
		t.Error("Original of another protocol's bytes: found")
	}
}

// TestOpenWireConvertKeptEqualsStored: a message kept as its producer's
// connection decoded it (ToEngine) is delivered exactly as the same message
// kept as StoreFormat bytes (read back from KahaDB, or spilled): the same
// wire.Message for every body type, at the first delivery and the later
// ones, and marshalled for a store into the same bytes.
func TestOpenWireConvertKeptEqualsStored(t *testing.T) {
	for _, tc := range convBodies() {
		t.Run(tc.name, func(t *testing.T) {
			m := convHeaders()
			tc.set(m)
			w, err := FromEngine(m, m.RedeliveryCounter)
			if err != nil {
				t.Fatal(err)
			}
			w.BrokerPath = []*wire.BrokerId{{Value: "ID:peer-1"}}
			sent := convTransmitMessage(t, w)
			kept, err := ToEngine(sent)
			if err != nil {
				t.Fatal(err)
			}
			if len(kept.Original.Bytes) != 0 {
				t.Fatalf("ToEngine kept %d bytes; want the decoded form only", len(kept.Original.Bytes))
			}
			b := kept.Original.Marshalled()
			if b2 := kept.Original.Marshalled(); !bytes.Equal(b, b2) {
				t.Fatal("Marshalled differs between calls")
			}
			stored, err := ToEngineStored(sent, b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 { // the first delivery, then shared forms
				a, err1 := FromEngine(kept, 2)
				c, err2 := FromEngine(stored, 2)
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !reflect.DeepEqual(a, c) {
					t.Errorf("delivery %d: kept form\n%+v\nstored form\n%+v", i, a, c)
				}
				ea, _ := wire.Marshal(a, convWireFormat)
				ec, _ := wire.Marshal(c, convWireFormat)
				if !bytes.Equal(ea, ec) || len(ea) == 0 {
					t.Errorf("delivery %d: frames differ:\n%x\n%x", i, ea, ec)
				}
				// A delivery's changes do not reach the kept form, nor,
				// once it is handed back, the next delivery (which may
				// reuse it).
				a.RedeliveryCounter, a.Destination = 99, wire.NewQueue("changed")
				a.Content, c.Content = []byte("stale"), []byte("stale")
				Release(a)
				Release(c)
			}
			if o, ok := Original(kept); !ok || o.RedeliveryCounter == 99 || o.Destination.String() == "queue://changed" {
				t.Errorf("kept form changed by a delivery: %+v, %v", o, ok)
			}
		})
	}
}

// TestOpenWireConvertFromEngineShared: a dispatch that changes nothing in
// the kept form encodes that form itself (shared, no copy) into the same
// frame FromEngine's copy gives; a redelivery, a moved copy or a message
// without a kept form gets the caller's own message, as from FromEngine.
func TestOpenWireConvertFromEngineShared(t *testing.T) {
	w := convWireMessage(t)
	w.SetText("x", false)
	m, err := ToEngine(convTransmitMessage(t, w))
	if err != nil {
		t.Fatal(err)
	}
	frame := func(w *wire.Message) []byte {
		t.Helper()
		b, err := wire.Marshal(&wire.MessageDispatch{Message: w, Destination: w.Destination}, convWireFormat)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	check := func(name string, m *message.Message, redeliveries int32, wantShared bool) {
		t.Helper()
		got, shared, err := FromEngineShared(m, redeliveries)
		if err != nil || shared != wantShared {
			t.Fatalf("%s: shared %v (%v), want %v", name, shared, err, wantShared)
		}
		want, err := FromEngine(m, redeliveries)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := frame(got), frame(want); !bytes.Equal(g, w) {
			t.Errorf("%s: frame\n%x\nwant FromEngine's\n%x", name, g, w)
		}
		if shared {
			if o, _ := Original(m); got == o {
				t.Errorf("%s: Original returned the shared form itself", name)
			}
			if again, _, _ := FromEngineShared(m, redeliveries); again != got {
				t.Errorf("%s: a second delivery got another form", name)
			}
		}
	}
	check("first delivery", m, m.RedeliveryCounter, true)
	check("redelivery", m, m.RedeliveryCounter+1, false)
	moved := *m
	moved.Destination = message.QueueDest("elsewhere")
	moved.OriginalDestination = m.Destination
	check("virtual copy", &moved, m.RedeliveryCounter, false)
	stored, err := ToEngineStored(convTransmitMessage(t, w), m.Original.Marshalled())
	if err != nil {
		t.Fatal(err)
	}
	check("stored, first delivery", stored, m.RedeliveryCounter, false) // its own decode
	check("stored, later", stored, m.RedeliveryCounter, true)
	check("no kept form", m.Clone(), m.RedeliveryCounter, false)
}

func TestOpenWireConvertDestinations(t *testing.T) {
	for _, d := range []message.Destination{
		message.QueueDest("q.a"), message.TopicDest("t.>"),
		{Type: message.TempQueue, Name: "ID:x:1:1"}, {Type: message.TempTopic, Name: "ID:x:1:2"},
		message.QueueDest("a,topic://b"),
	} {
		w := DestFromEngine(d)
		if w.String() != d.String() {
			t.Errorf("DestFromEngine(%s) = %s", d, w)
		}
		if got := DestToEngine(w); got != d {
			t.Errorf("DestToEngine(DestFromEngine(%s)) = %s", d, got)
		}
	}
	if DestFromEngine(message.Destination{}) != nil || !DestToEngine(nil).IsZero() {
		t.Error("the zero destination does not map to nil and back")
	}
}

func TestOpenWireConvertIDs(t *testing.T) {
	check := func(id string, wantProducer *wire.ProducerId, wantSeq int64) {
		t.Helper()
		mid := convMessageID(id)
		want := id
		if !strings.HasPrefix(id, "ID:") {
			want = "ID:" + id // MessageId.toString prefixes a TextView
		}
		if mid.String() != want {
			t.Errorf("convMessageID(%q).String() = %q, want %q", id, mid.String(), want)
		}
		if wantProducer == nil {
			if mid.TextView != id {
				t.Errorf("convMessageID(%q): TextView %q, want the id", id, mid.TextView)
			}
			return
		}
		if mid.TextView != "" || !reflect.DeepEqual(mid.ProducerId, wantProducer) || mid.ProducerSequenceId != wantSeq {
			t.Errorf("convMessageID(%q) = %+v %+v, want %+v seq %d", id, mid, mid.ProducerId, wantProducer, wantSeq)
		}
	}
	check("ID:host-1234-5678-1:3:1:7:42", &wire.ProducerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7}, 42)
	check("ID:host-1234-5678-1:3:-1:7:0", &wire.ProducerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: -1, Value: 7}, 0)
	check("ID:AMQP-custom-id", nil, 0)
	check("ID:x:1:01:5", nil, 0)                                                       // not canonical: Java would print it back differently
	check("ID:1:2:3", &wire.ProducerId{ConnectionId: "ID", SessionId: 1, Value: 2}, 3) // as MessageId(String) parses it
	check("1:2:3", nil, 0)                                                             // no connection part
	check("urn:uuid:6e8bc430", nil, 0)
	if convMessageID("") != nil {
		t.Error("convMessageID(\"\") is not nil")
	}

	// Through the wire, before and after v10 (TextView is v10+).
	for _, id := range []string{"ID:host-1234-5678-1:3:1:7:42", "ID:AMQP-custom-id"} {
		w := &wire.Message{MessageId: convMessageID(id), Destination: wire.NewQueue("q")}
		got := convTransmit(t, convWireFormat, w).(*wire.Message)
		if got.MessageId.String() != id {
			t.Errorf("v12 MessageId %q -> %q", id, got.MessageId.String())
		}
		got = convTransmit(t, wire.Format{Version: 9}, w).(*wire.Message)
		if s := got.MessageId.String(); s == "" {
			t.Errorf("v9 MessageId %q -> empty", id)
		}
	}

	cid := convConsumerID("ID:host-1234-5678-1:3:1:7")
	if !reflect.DeepEqual(cid, &wire.ConsumerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7}) || cid.String() != "ID:host-1234-5678-1:3:1:7" {
		t.Errorf("convConsumerID = %+v", cid)
	}
	pid := convProducerID("ID:host-1234-5678-1:3:2:9")
	if !reflect.DeepEqual(pid, &wire.ProducerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 2, Value: 9}) || pid.String() != "ID:host-1234-5678-1:3:2:9" {
		t.Errorf("convProducerID = %+v", pid)
	}

	noTopic := message.Destination{}
	for _, tc := range []struct {
		id    string
		topic message.Destination
		want  wire.DataStructure
	}{
		{"ID:host-1234-5678-1:3", noTopic, &wire.ConnectionId{Value: "ID:host-1234-5678-1:3"}},
		{"ID:host-1234-5678-1:3:1", noTopic, &wire.SessionId{ConnectionId: "ID:host-1234-5678-1:3", Value: 1}},
		{"ID:host-1234-5678-1:3:1:7", noTopic, &wire.ConsumerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7}},
		{"ID:host-1234-5678-1:3:1:7", message.TopicDest("ActiveMQ.Advisory.Producer.Queue.q"),
			&wire.ProducerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7}},
		{"ID:client:chosen:1:2", message.TopicDest("ActiveMQ.Advisory.Connection"), &wire.ConnectionId{Value: "ID:client:chosen:1:2"}},
		{"my-connection", noTopic, &wire.ConnectionId{Value: "my-connection"}},
	} {
		if got := convObjectID(tc.id, tc.topic); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("convObjectID(%q, %s) = %#v, want %#v", tc.id, tc.topic, got, tc.want)
		}
	}
}

func TestOpenWireConvertAdvisory(t *testing.T) {
	str := func(n, v string) message.Property { return message.Property{Name: n, Value: message.StringValue(v)} }
	adv := func(topic string, a *message.Advisory) *message.Message {
		return &message.Message{
			ID: "ID:broker-1-2-3:0:0:1:5", Destination: message.TopicDest(topic), Type: "Advisory", Advisory: a,
			Props: message.Properties{str("originBrokerName", "localhost")},
		}
	}
	payload := &message.Message{ID: "ID:host-1-2-3:1:1:1:3", Destination: message.QueueDest("q"), BodyType: message.TextBody, RedeliveryCounter: 1}
	cases := []struct {
		name  string
		m     *message.Message
		check func(t *testing.T, ds wire.DataStructure)
	}{
		{"ConnectionInfo", adv("ActiveMQ.Advisory.Connection", &message.Advisory{Command: "ConnectionInfo", Fields: message.Properties{
			str("ConnectionId", "ID:host-1234-5678-1:3"), str("ClientId", "c1"), str("UserName", "u"), str("ClientIp", "tcp://1.2.3.4:5"),
		}}), func(t *testing.T, ds wire.DataStructure) {
			want := &wire.ConnectionInfo{ConnectionId: &wire.ConnectionId{Value: "ID:host-1234-5678-1:3"}, ClientId: "c1", UserName: "u", ClientIp: "tcp://1.2.3.4:5"}
			if !reflect.DeepEqual(ds, want) {
				t.Errorf("got %+v, want %+v", ds, want)
			}
		}},
		{"ConsumerInfo", adv("ActiveMQ.Advisory.Consumer.Queue.q", &message.Advisory{Command: "ConsumerInfo", Fields: message.Properties{
			str("ConsumerId", "ID:host-1234-5678-1:3:1:7"), str("Destination", "queue://q"),
			{Name: "PrefetchSize", Value: message.IntValue(1000)}, str("Selector", "a > 1"), str("SubscriptionName", ""),
			str("ClientId", "c1"), {Name: "NoLocal", Value: message.BoolValue(true)},
			{Name: "Exclusive", Value: message.BoolValue(false)}, {Name: "Browser", Value: message.BoolValue(false)},
			{Name: "Priority", Value: message.ByteValue(3)},
		}}), func(t *testing.T, ds wire.DataStructure) {
			want := &wire.ConsumerInfo{
				ConsumerId:  &wire.ConsumerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7},
				Destination: wire.NewQueue("q"), PrefetchSize: 1000, Selector: "a > 1", ClientId: "c1", NoLocal: true, Priority: 3,
			}
			if !reflect.DeepEqual(ds, want) {
				t.Errorf("got %+v, want %+v", ds, want)
			}
		}},
		{"ProducerInfo", adv("ActiveMQ.Advisory.Producer.Topic.t", &message.Advisory{Command: "ProducerInfo", Fields: message.Properties{
			str("ProducerId", "ID:host-1234-5678-1:3:1:2"), str("Destination", "topic://t"),
		}}), func(t *testing.T, ds wire.DataStructure) {
			want := &wire.ProducerInfo{ProducerId: &wire.ProducerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 2}, Destination: wire.NewTopic("t")}
			if !reflect.DeepEqual(ds, want) {
				t.Errorf("got %+v, want %+v", ds, want)
			}
		}},
		{"DestinationInfo", adv("ActiveMQ.Advisory.TempQueue", &message.Advisory{Command: "DestinationInfo", Fields: message.Properties{
			str("Destination", "temp-queue://ID:x:1:1"), {Name: "OperationType", Value: message.ByteValue(1)},
		}}), func(t *testing.T, ds wire.DataStructure) {
			want := &wire.DestinationInfo{Destination: wire.NewTempQueue("ID:x:1:1"), OperationType: wire.DestinationRemove}
			if !reflect.DeepEqual(ds, want) {
				t.Errorf("got %+v, want %+v", ds, want)
			}
		}},
		{"RemoveInfo consumer", adv("ActiveMQ.Advisory.Consumer.Queue.q", &message.Advisory{Command: "RemoveInfo", Fields: message.Properties{
			str("ObjectId", "ID:host-1234-5678-1:3:1:7"),
		}}), func(t *testing.T, ds wire.DataStructure) {
			ri, ok := ds.(*wire.RemoveInfo)
			if !ok || !reflect.DeepEqual(ri.ObjectId, &wire.ConsumerId{ConnectionId: "ID:host-1234-5678-1:3", SessionId: 1, Value: 7}) {
				t.Errorf("got %+v, want a RemoveInfo of the consumer", ds)
			}
		}},
		{"RemoveInfo connection", adv("ActiveMQ.Advisory.Connection", &message.Advisory{Command: "RemoveInfo", Fields: message.Properties{
			str("ObjectId", "ID:host-1234-5678-1:3"),
		}}), func(t *testing.T, ds wire.DataStructure) {
			ri, ok := ds.(*wire.RemoveInfo)
			if !ok || !reflect.DeepEqual(ri.ObjectId, &wire.ConnectionId{Value: "ID:host-1234-5678-1:3"}) {
				t.Errorf("got %+v, want a RemoveInfo of the connection", ds)
			}
		}},
		{"RemoveSubscriptionInfo", adv("ActiveMQ.Advisory.Topic", &message.Advisory{Command: "RemoveSubscriptionInfo", Fields: message.Properties{
			str("ConnectionId", "ID:h-1:1"), str("SubscriptionName", "sub"), str("ClientId", "c"),
		}}), func(t *testing.T, ds wire.DataStructure) {
			want := &wire.RemoveSubscriptionInfo{ConnectionId: &wire.ConnectionId{Value: "ID:h-1:1"}, SubscriptionName: "sub", ClientId: "c"}
			if !reflect.DeepEqual(ds, want) {
				t.Errorf("got %+v, want %+v", ds, want)
			}
		}},
		{"Message", adv("ActiveMQ.Advisory.Expired.Queue.q", &message.Advisory{Command: "Message", Message: payload}),
			func(t *testing.T, ds wire.DataStructure) {
				pm, ok := ds.(*wire.Message)
				if !ok || pm.DataStructureType() != wire.TypeActiveMQTextMessage || pm.MessageId.String() != payload.ID || pm.RedeliveryCounter != 1 {
					t.Errorf("got %+v, want the payload as a TextMessage", ds)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w, err := FromEngine(tc.m, 0)
			if err != nil {
				t.Fatal(err)
			}
			if w.DataStructureType() != wire.TypeActiveMQMessage || w.Type != "Advisory" {
				t.Errorf("advisory is %s type %q, want ActiveMQMessage of type Advisory", wire.TypeName(w.DataStructureType()), w.Type)
			}
			if w.DataStructure == nil || wire.TypeName(w.DataStructure.DataStructureType()) != tc.m.Advisory.Command &&
				!(tc.m.Advisory.Command == "Message" && w.DataStructure.DataStructureType() == wire.TypeActiveMQTextMessage) {
				t.Fatalf("DataStructure = %T, want %s", w.DataStructure, tc.m.Advisory.Command)
			}
			tc.check(t, w.DataStructure)
			// It crosses a connection, and the engine view comes back.
			got := convTransmitMessage(t, w)
			back, err := ToEngine(got)
			if err != nil {
				t.Fatal(err)
			}
			if back.Advisory == nil || back.Advisory.Command != tc.m.Advisory.Command {
				t.Fatalf("ToEngine advisory = %+v, want %s", back.Advisory, tc.m.Advisory.Command)
			}
			for _, f := range back.Advisory.Fields {
				if want, ok := tc.m.Advisory.Fields.Get(f.Name); ok && !reflect.DeepEqual(f.Value, want) {
					t.Errorf("field %s = %v, want %v", f.Name, f.Value, want)
				}
			}
			if tc.m.Advisory.Message != nil {
				convEqual(t, back.Advisory.Message, payload)
			}
		})
	}
	if _, err := FromEngine(adv("ActiveMQ.Advisory.X", &message.Advisory{Command: "Bogus"}), 0); err == nil {
		t.Error("FromEngine accepted an unknown advisory command")
	}
}

// BenchmarkOpenWireConvertFromEngine measures a delivery of a 1 KiB text
// message with 5 properties: converted from the engine's fields (a STOMP
// producer's message, or a changed one), and from the kept original form
// (an OpenWire producer's message forwarded unchanged).
func BenchmarkOpenWireConvertFromEngine(b *testing.B) {
	m := &message.Message{
		ID: "ID:host-1234-5678-1:3:1:7:42", Destination: message.QueueDest("orders.eu"),
		Priority: 4, Persistent: true, Timestamp: 1700000000000,
		Props: message.Properties{
			{Name: "region", Value: message.StringValue("eu-west")},
			{Name: "count", Value: message.IntValue(1234)},
			{Name: "total", Value: message.DoubleValue(99.5)},
			{Name: "urgent", Value: message.BoolValue(true)},
			{Name: "seq", Value: message.LongValue(1 << 40)},
		},
		BodyType: message.TextBody, Body: bytes.Repeat([]byte("0123456789abcdef"), 64),
	}
	b.Run("path=convert", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			if _, err := FromEngine(m, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	w, err := FromEngine(m, 0)
	if err != nil {
		b.Fatal(err)
	}
	orig, err := ToEngine(w)
	if err != nil {
		b.Fatal(err)
	}
	// A message sent over OpenWire is kept as it was decoded: each delivery
	// copies that form.
	b.Run("path=original", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			if _, err := FromEngine(orig, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The session hands each dispatched message back (Release) once
	// encoded: the copy then reuses it.
	b.Run("path=original-released", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			w, err := FromEngine(orig, 0)
			if err != nil {
				b.Fatal(err)
			}
			Release(w)
		}
	})
	// The session's dispatch of a delivery that changes nothing encodes
	// the kept form itself (FromEngineShared).
	b.Run("path=original-shared", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			if _, shared, err := FromEngineShared(orig, 0); err != nil || !shared {
				b.Fatal(err, shared)
			}
		}
	})
	// A message read back from a store keeps its StoreFormat bytes: its
	// first delivery decodes them (aliasing the kept bytes); later
	// deliveries, a fan-out's included, copy the decoded form.
	stored, err := ToEngineStored(w, orig.Original.Marshalled())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("path=stored-first", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		fresh := *stored
		for b.Loop() {
			fresh.Original = message.NewEncoded(stored.Original.Protocol, stored.Original.Bytes)
			if _, err := FromEngine(&fresh, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=stored", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(m.Body)))
		for b.Loop() {
			if _, err := FromEngine(stored, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkOpenWireConvertToEngine measures what a received 1 KiB bytes
// message costs to enter the engine: its fields converted and its original
// form kept (as decoded from a producer's tight, cached frame), and, for
// path=spill, its StoreFormat bytes made as a spill or a store makes them.
func BenchmarkOpenWireConvertToEngine(b *testing.B) {
	prod := &wire.ProducerId{ConnectionId: "ID:host-1234-1700000000000-1:1", SessionId: 1, Value: 1}
	src := &wire.Message{
		Kind: wire.TypeActiveMQBytesMessage, ProducerId: prod, Destination: wire.NewQueue("orders.in"),
		MessageId: &wire.MessageId{ProducerId: prod, ProducerSequenceId: 1}, Priority: 4,
		Timestamp: 1700000000123, Content: bytes.Repeat([]byte{7}, 1024),
	}
	f := wire.Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, CacheSize: 1024}
	frame, err := wire.NewEncoder(f).Append(nil, src)
	if err != nil {
		b.Fatal(err)
	}
	d := wire.NewDecoder(f, wire.Limits{})
	d.Feed(frame)
	ds, err := d.Next()
	if err != nil {
		b.Fatal(err)
	}
	w := ds.(*wire.Message)
	b.Run("path=kept", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(w.Content)))
		for b.Loop() {
			if _, err := ToEngine(w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("path=spill", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(w.Content)))
		for b.Loop() {
			m, err := ToEngine(w)
			if err != nil || m.Original.Marshalled() == nil {
				b.Fatal(err)
			}
		}
	})
}
