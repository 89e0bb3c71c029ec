package conformance

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"wharf/engine/brokertest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// The AMQP 1.0 ↔ JMS mapping of ActiveMQ 5.17 (shared/reference/mappings.md
// §3.3 inbound, JMSMappingInboundTransformer; §3.4 outbound,
// JMSMappingOutboundTransformer), driven across protocols on one in-process
// broker: go-amqp on the AMQP side, Wharf's OpenWire client (the JMS wire
// protocol, standing in for a JMS client) on the other.
//
// Each cell asserts the body (type and bytes), the JMS headers and every
// property exactly. Where Wharf maps differently from ActiveMQ the test
// asserts what Wharf does under a "KNOWN DIFFERENCE:" comment that gives
// ActiveMQ's behaviour, so that the suite stays green and a change of
// either side shows.
//
// Limits of the tools: go-amqp cannot decode an AMQP char (nor decimals),
// so no JMS char property or stream element is sent to it; it decodes
// symbols as strings, so a symbol and a string look alike on receipt.

// ajEnv is one broker with an AMQP session and an OpenWire session on it.
type ajEnv struct {
	b  *brokertest.Broker
	as *amqp.Session
	oc *client.Conn
	ow *client.Session
}

func ajStart(t *testing.T) *ajEnv {
	t.Helper()
	b := amqpBroker(t, nil)
	a := b.Addr("openwire")
	if a == nil {
		t.Fatal("the broker has no OpenWire connector")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	oc, err := client.Dial(ctx, a.String(), client.DefaultOptions())
	if err != nil {
		t.Fatalf("OpenWire dial %s: %v", a, err)
	}
	t.Cleanup(func() { oc.Close() })
	ow, err := oc.Session(false)
	if err != nil {
		t.Fatalf("OpenWire session: %v", err)
	}
	return &ajEnv{b: b, as: amqpSession(t, amqpDial(t, b.AMQPAddr(), nil)), oc: oc, ow: ow}
}

func (e *ajEnv) consumer(t *testing.T, d *wire.Destination) *client.Consumer {
	t.Helper()
	k, err := e.ow.Consumer(d, client.ConsumerOptions{})
	if err != nil {
		t.Fatalf("OpenWire consumer on %s: %v", d, err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func (e *ajEnv) producer(t *testing.T, d *wire.Destination) *client.Producer {
	t.Helper()
	p, err := e.ow.Producer(d)
	if err != nil {
		t.Fatalf("OpenWire producer on %s: %v", d, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func ajReceive(t *testing.T, k *client.Consumer) *wire.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	m, err := k.Receive(ctx)
	if err != nil {
		t.Fatalf("OpenWire receive on %s: %v", k.Destination(), err)
	}
	return m
}

func ajSend(t *testing.T, p *client.Producer, m *wire.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.Send(ctx, m, true); err != nil {
		t.Fatalf("OpenWire send to %s: %v", p.Destination(), err)
	}
}

// ajAMQPRecv receives one message and accepts it.
func ajAMQPRecv(t *testing.T, r *amqp.Receiver) *amqp.Message {
	t.Helper()
	m := amqpRecv(t, r)
	if err := r.AcceptMessage(amqpCtx(t), m); err != nil {
		t.Fatalf("AMQP accept: %v", err)
	}
	return m
}

func ajPtr[T any](v T) *T { return &v }

// ---------------------------------------------------------------------
// What a JMS consumer sees

// ajJMS is an OpenWire message as a JMS application sees it.
type ajJMS struct {
	Type string // the ActiveMQ message class
	Body any    // string, []byte, map[string]any, []any, or nil
	// TextView is the JMSMessageID's text view: where ActiveMQ keeps an
	// AMQP producer's message-id.
	TextView      string
	Destination   string // qualified name
	Persistent    bool
	Priority      byte
	JMSType       string
	CorrelationID string
	ReplyTo       string // qualified name, "" for none
	GroupID       string
	GroupSeq      int32
	UserID        string
	Timestamp     int64
	Expiration    int64
	Props         map[string]any
}

func ajDest(d *wire.Destination) string {
	if d == nil {
		return ""
	}
	return d.String()
}

func ajJMSOf(t *testing.T, m *wire.Message) ajJMS {
	t.Helper()
	v := ajJMS{
		Type:          wire.TypeName(m.DataStructureType()),
		Destination:   ajDest(m.Destination),
		Persistent:    m.Persistent,
		Priority:      m.Priority,
		JMSType:       m.Type,
		CorrelationID: m.CorrelationId,
		ReplyTo:       ajDest(m.ReplyTo),
		GroupID:       m.GroupID,
		GroupSeq:      m.GroupSequence,
		UserID:        m.UserID,
		Timestamp:     m.Timestamp,
		Expiration:    m.Expiration,
	}
	if m.MessageId != nil {
		v.TextView = m.MessageId.TextView
	}
	lim := wire.Limits{} // the decoder's defaults
	var err error
	switch m.DataStructureType() {
	case wire.TypeActiveMQTextMessage:
		var s string
		var ok bool
		if s, ok, err = m.Text(lim); ok {
			v.Body = s
		}
	case wire.TypeActiveMQBytesMessage:
		var b []byte
		if b, err = m.Bytes(lim); b == nil {
			b = []byte{} // an empty body, however it is encoded
		}
		v.Body = b
	case wire.TypeActiveMQMapMessage:
		v.Body, err = m.Map(lim)
	case wire.TypeActiveMQStreamMessage:
		v.Body, err = m.Stream(lim)
	}
	if err != nil {
		t.Fatalf("decode %s body: %v", v.Type, err)
	}
	if v.Props, err = m.Properties(lim); err != nil {
		t.Fatalf("decode properties: %v", err)
	}
	return v
}

// ajProps is the property set ActiveMQ's inbound transformer gives: the
// original body encoding (JMS_AMQP_ORIGINAL_ENCODING) and more.
func ajProps(enc int16, more map[string]any) map[string]any {
	p := map[string]any{"JMS_AMQP_ORIGINAL_ENCODING": enc}
	for k, v := range more {
		p[k] = v
	}
	return p
}

// Values of JMS_AMQP_ORIGINAL_ENCODING (AmqpMessageSupport).
const (
	ajEncNull        int16 = 1
	ajEncData        int16 = 2
	ajEncSequence    int16 = 3
	ajEncValueString int16 = 5
	ajEncValueBinary int16 = 6
	ajEncValueMap    int16 = 7
	ajEncValueList   int16 = 8
)

// ajDiff lists the fields of two structs of the same type that differ,
// map fields key by key, as "field: got …, want …".
func ajDiff(got, want any) []string {
	var out []string
	gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := 0; i < gv.NumField(); i++ {
		name := gv.Type().Field(i).Name
		g, w := gv.Field(i).Interface(), wv.Field(i).Interface()
		if reflect.DeepEqual(g, w) {
			continue
		}
		gm, gok := g.(map[string]any)
		wm, wok := w.(map[string]any)
		if !gok || !wok {
			ga, gok := g.(amqp.Annotations)
			wa, wok := w.(amqp.Annotations)
			if gok && wok {
				gm, wm = ajAnnMap(ga), ajAnnMap(wa)
			}
		}
		if gm == nil && wm == nil {
			out = append(out, fmt.Sprintf("%s: got %s, want %s", name, ajFmt(g), ajFmt(w)))
			continue
		}
		keys := map[string]bool{}
		for k := range gm {
			keys[k] = true
		}
		for k := range wm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			gx, gin := gm[k]
			wx, win := wm[k]
			switch {
			case !win:
				out = append(out, fmt.Sprintf("%s[%q]: got %s, want absent", name, k, ajFmt(gx)))
			case !gin:
				out = append(out, fmt.Sprintf("%s[%q]: absent, want %s", name, k, ajFmt(wx)))
			case !reflect.DeepEqual(gx, wx):
				out = append(out, fmt.Sprintf("%s[%q]: got %s, want %s", name, k, ajFmt(gx), ajFmt(wx)))
			}
		}
	}
	return out
}

func ajAnnMap(a amqp.Annotations) map[string]any {
	if a == nil {
		return nil
	}
	m := make(map[string]any, len(a))
	for k, v := range a {
		m[fmt.Sprint(k)] = v
	}
	return m
}

// ajFmt renders a value with its Go type, so that int8(5) and int32(5)
// read differently.
func ajFmt(v any) string {
	if v == nil {
		return "nil"
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%T(%#v)", v, v)
}

func ajCheck(t *testing.T, what string, got, want any) {
	t.Helper()
	if d := ajDiff(got, want); len(d) > 0 {
		t.Errorf("%s differs:\n  %s", what, strings.Join(d, "\n  "))
	}
}

// ---------------------------------------------------------------------
// AMQP → JMS (mappings.md §3.3)

func TestConformanceAMQPJMSInbound(t *testing.T) {
	e := ajStart(t)
	created := time.UnixMilli(1_700_000_000_123)
	absExpiry := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	uuid := amqp.UUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	hdr := func(durable bool, prio uint8) *amqp.MessageHeader {
		return &amqp.MessageHeader{Durable: durable, Priority: prio}
	}
	cases := []struct {
		name  string
		topic bool
		msg   *amqp.Message
		// ttl, when set, makes JMSExpiration arrival time + ttl.
		ttl  time.Duration
		want ajJMS // Destination is filled in
	}{
		{
			name: "data section without header is a non-persistent BytesMessage",
			msg:  &amqp.Message{Data: [][]byte{{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff}}},
			want: ajJMS{Type: "ActiveMQBytesMessage", Body: []byte{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff}, Priority: 4,
				Props: ajProps(ajEncData, nil)},
		},
		{
			name: "amqp-value string is a TextMessage",
			msg:  &amqp.Message{Value: "héllo wörld ✓ \U0001F600 \x00 end"},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "héllo wörld ✓ \U0001F600 \x00 end", Priority: 4,
				Props: ajProps(ajEncValueString, nil)},
		},
		{
			name: "amqp-value map is a MapMessage with typed entries",
			msg: &amqp.Message{Value: map[string]any{
				"str": "s", "bool": true, "byte": int8(-8), "short": int16(-16), "int": int32(-32),
				"long": int64(-64), "float": float32(1.5), "double": 2.25, "bin": []byte{1, 2, 3}, "null": nil,
			}},
			want: ajJMS{Type: "ActiveMQMapMessage", Priority: 4, Props: ajProps(ajEncValueMap, nil),
				Body: map[string]any{
					"str": "s", "bool": true, "byte": int8(-8), "short": int16(-16), "int": int32(-32),
					"long": int64(-64), "float": float32(1.5), "double": 2.25, "bin": []byte{1, 2, 3}, "null": nil,
				}},
		},
		{
			name: "amqp-value list is a StreamMessage",
			msg: &amqp.Message{Value: []any{"s", true, int8(1), int16(2), int32(3), int64(4), float32(0.5), 0.25,
				[]byte{9, 8}, nil}},
			want: ajJMS{Type: "ActiveMQStreamMessage", Priority: 4, Props: ajProps(ajEncValueList, nil),
				Body: []any{"s", true, int8(1), int16(2), int32(3), int64(4), float32(0.5), 0.25, []byte{9, 8}, nil}},
		},
		{
			name: "amqp-sequence is a StreamMessage",
			msg:  &amqp.Message{Sequence: [][]any{{"a", int32(1), true}}},
			want: ajJMS{Type: "ActiveMQStreamMessage", Priority: 4, Props: ajProps(ajEncSequence, nil),
				Body: []any{"a", int32(1), true}},
		},
		{
			name: "amqp-value binary is a BytesMessage",
			msg:  &amqp.Message{Value: []byte{1, 2, 3}},
			want: ajJMS{Type: "ActiveMQBytesMessage", Priority: 4, Props: ajProps(ajEncValueBinary, nil),
				Body: []byte{1, 2, 3}},
		},
		{
			name: "no body section is an empty BytesMessage",
			msg:  &amqp.Message{Header: hdr(false, 4)},
			want: ajJMS{Type: "ActiveMQBytesMessage", Body: []byte{}, Priority: 4,
				Props: ajProps(ajEncNull, map[string]any{"JMS_AMQP_HEADER": true})},
		},
		{
			name: "data with a textual UTF-8 content type is a TextMessage",
			msg: &amqp.Message{Data: [][]byte{[]byte("plain ✓")},
				Properties: &amqp.MessageProperties{ContentType: ajPtr("text/plain;charset=utf-8")}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "plain ✓", Priority: 4,
				Props: ajProps(ajEncData, map[string]any{"JMS_AMQP_PROPERTIES": true,
					"JMS_AMQP_ContentType": "text/plain;charset=utf-8"})},
		},
		{
			name: "data with octet-stream content type and an encoding is a BytesMessage",
			msg: &amqp.Message{Data: [][]byte{[]byte("zz")}, Properties: &amqp.MessageProperties{
				ContentType: ajPtr("application/octet-stream"), ContentEncoding: ajPtr("gzip")}},
			want: ajJMS{Type: "ActiveMQBytesMessage", Body: []byte("zz"), Priority: 4,
				Props: ajProps(ajEncData, map[string]any{"JMS_AMQP_PROPERTIES": true,
					"JMS_AMQP_ContentType": "application/octet-stream", "JMS_AMQP_ContentEncoding": "gzip"})},
		},
		{
			name: "durable header is persistent",
			msg:  &amqp.Message{Header: hdr(true, 4), Value: "d"},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "d", Persistent: true, Priority: 4,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_HEADER": true})},
		},
		{
			name: "header with durable false is non-persistent",
			msg:  &amqp.Message{Header: hdr(false, 4), Value: "n"},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "n", Priority: 4,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_HEADER": true})},
		},
		{
			name: "header priority and first-acquirer",
			msg:  &amqp.Message{Header: &amqp.MessageHeader{Durable: true, Priority: 9, FirstAcquirer: true}, Value: "p"},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "p", Persistent: true, Priority: 9,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_HEADER": true, "JMS_AMQP_FirstAcquirer": true})},
		},
		{
			name: "header priority 0",
			msg:  &amqp.Message{Header: hdr(false, 0), Value: "p0"},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "p0", Priority: 0,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_HEADER": true})},
		},
		{
			name: "header ttl sets JMSExpiration from arrival",
			msg:  &amqp.Message{Header: &amqp.MessageHeader{Priority: 4, TTL: time.Minute}, Value: "ttl"},
			ttl:  time.Minute,
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "ttl", Priority: 4,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_HEADER": true})},
		},
		{
			name: "absolute-expiry-time is JMSExpiration and wins over ttl",
			msg: &amqp.Message{Header: &amqp.MessageHeader{Priority: 4, TTL: time.Minute}, Value: "abs",
				Properties: &amqp.MessageProperties{AbsoluteExpiryTime: &absExpiry}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "abs", Priority: 4, Expiration: absExpiry.UnixMilli(),
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_HEADER": true, "JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "properties section maps to the JMS headers",
			msg: &amqp.Message{Value: "props", Properties: &amqp.MessageProperties{
				UserID:         []byte("alice"),
				Subject:        ajPtr("order.created"),
				ReplyTo:        ajPtr("queue://ajreply.q"),
				CorrelationID:  "corr-1",
				CreationTime:   &created,
				GroupID:        ajPtr("group-a"),
				GroupSequence:  ajPtr(uint32(7)),
				ReplyToGroupID: ajPtr("reply-group"),
			}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "props", Priority: 4, JMSType: "order.created",
				CorrelationID: "corr-1", ReplyTo: "queue://ajreply.q", GroupID: "group-a", GroupSeq: 7,
				UserID: "alice", Timestamp: created.UnixMilli(),
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true,
					"JMS_AMQP_ReplyToGroupID": "reply-group"})},
		},
		{
			name: "message-id is kept as the JMSMessageID's text view",
			msg:  &amqp.Message{Value: "id", Properties: &amqp.MessageProperties{MessageID: "msg-1"}},
			// KNOWN DIFFERENCE: ActiveMQ sets JMSMessageID from the
			// message-id's string form and AmqpReceiver keeps it as the
			// TextView of the broker-assigned MessageId, so a JMS client
			// reads JMSMessageID "ID:msg-1" and no extra property:
			// TextView "msg-1", Props without JMS_AMQP_MessageID.
			// Wharf (protocols/amqp/convert.go, propMessageID and
			// inbound.properties, documented as a DEVIATION) keeps the
			// engine's id and carries the AMQP id in the property
			// JMS_AMQP_MessageID.
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "id", Priority: 4,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true, "JMS_AMQP_MessageID": "msg-1"})},
		},
		{
			name: "reply-to topic",
			msg:  &amqp.Message{Value: "r", Properties: &amqp.MessageProperties{ReplyTo: ajPtr("topic://ajreply.t")}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "r", Priority: 4, ReplyTo: "topic://ajreply.t",
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "bare reply-to is a queue",
			msg:  &amqp.Message{Value: "r", Properties: &amqp.MessageProperties{ReplyTo: ajPtr("ajreply.bare")}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "r", Priority: 4, ReplyTo: "queue://ajreply.bare",
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "ulong correlation-id",
			msg:  &amqp.Message{Value: "c", Properties: &amqp.MessageProperties{CorrelationID: uint64(42)}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "c", Priority: 4, CorrelationID: "AMQP_ULONG:42",
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "uuid correlation-id",
			msg:  &amqp.Message{Value: "c", Properties: &amqp.MessageProperties{CorrelationID: uuid}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "c", Priority: 4,
				CorrelationID: "AMQP_UUID:12345678-9abc-def0-0123-456789abcdef",
				Props:         ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "binary correlation-id",
			msg:  &amqp.Message{Value: "c", Properties: &amqp.MessageProperties{CorrelationID: []byte{0xab, 0x01, 0xff}}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "c", Priority: 4, CorrelationID: "AMQP_BINARY:AB01FF",
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "string correlation-id that looks typed is escaped",
			msg:  &amqp.Message{Value: "c", Properties: &amqp.MessageProperties{CorrelationID: "AMQP_ULONG:7"}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "c", Priority: 4, CorrelationID: "AMQP_STRING:AMQP_ULONG:7",
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_PROPERTIES": true})},
		},
		{
			name: "application properties keep their types and unsigned ones widen",
			msg: &amqp.Message{Value: "ap", ApplicationProperties: map[string]any{
				"str": "s", "bool": false, "byte": int8(-1), "short": int16(-2), "int": int32(-3), "long": int64(-4),
				"float": float32(1.25), "double": 2.5,
				"ubyte": uint8(127), "ubyteBig": uint8(200),
				"ushort": uint16(32767), "ushortBig": uint16(40000),
				"uint": uint32(5), "uintBig": uint32(3_000_000_000),
				"ulong":  uint64(1 << 40),
				"symbol": amqp.Symbol("sym"),
			}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "ap", Priority: 4, Props: ajProps(ajEncValueString, map[string]any{
				"str": "s", "bool": false, "byte": int8(-1), "short": int16(-2), "int": int32(-3), "long": int64(-4),
				"float": float32(1.25), "double": 2.5,
				"ubyte": int8(127), "ubyteBig": int16(200),
				"ushort": int16(32767), "ushortBig": int32(40000),
				"uint": int32(5), "uintBig": int64(3_000_000_000),
				"ulong":  int64(1 << 40),
				"symbol": "sym",
			})},
		},
		{
			name: "binary application property",
			msg:  &amqp.Message{Value: "bin", ApplicationProperties: map[string]any{"bin": []byte{'a', 'b', '\\', 0x01}}},
			// KNOWN DIFFERENCE: ActiveMQ's InboundTransformer.setProperty
			// stores a Binary as the String of Proton's Binary.toString()
			// ("ab\x5c\x01": printable ASCII kept, other bytes and the
			// backslash as \xNN), so a JMS client reads a String property.
			// Wharf (protocols/amqp/convert.go, propertyValue) keeps the
			// bytes (a byte[] property, documented there as a DEVIATION).
			// Reference: Props["bin"] = `ab\x5c\x01` (a string).
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "bin", Priority: 4,
				Props: ajProps(ajEncValueString, map[string]any{"bin": []byte{'a', 'b', '\\', 0x01}})},
		},
		{
			name: "message annotations are JMS_AMQP_MA_ properties",
			msg: &amqp.Message{Value: "ma", Annotations: amqp.Annotations{
				"x-opt-str": "v", "x-opt-long": int64(5), "x-opt-uint": uint32(6), "x-opt-bool": true,
			}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "ma", Priority: 4, Props: ajProps(ajEncValueString, map[string]any{
				"JMS_AMQP_MA_x-opt-str": "v", "JMS_AMQP_MA_x-opt-long": int64(5), "JMS_AMQP_MA_x-opt-uint": int32(6),
				"JMS_AMQP_MA_x-opt-bool": true,
			})},
		},
		{
			name: "footer entries are JMS_AMQP_FT_ properties",
			msg:  &amqp.Message{Value: "ft", Footer: amqp.Annotations{"x-opt-sig": "abc"}},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "ft", Priority: 4,
				Props: ajProps(ajEncValueString, map[string]any{"JMS_AMQP_FT_x-opt-sig": "abc"})},
		},
		{
			name: "x-opt-jms-msg-type does not choose the JMS type",
			msg:  &amqp.Message{Data: [][]byte{[]byte("typed")}, Annotations: amqp.Annotations{"x-opt-jms-msg-type": int8(5)}},
			// KNOWN DIFFERENCE: ActiveMQ 5.17 ignores x-opt-jms-msg-type
			// (mappings.md §3.4): a data section without content type is
			// a BytesMessage, body []byte("typed"). Wharf
			// (protocols/amqp/convert.go, inbound.scanAnnotations and
			// typedBody, documented as a DEVIATION) lets the annotation
			// pick the type, as Qpid JMS does on receipt: a TextMessage.
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "typed", Priority: 4,
				Props: ajProps(ajEncData, map[string]any{"JMS_AMQP_MA_x-opt-jms-msg-type": int8(5)})},
		},
		{
			name:  "topic target is the JMSDestination",
			topic: true,
			msg:   &amqp.Message{Value: "to a topic"},
			want: ajJMS{Type: "ActiveMQTextMessage", Body: "to a topic", Priority: 4,
				Props: ajProps(ajEncValueString, nil)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := uniq(t)
			dest := wire.NewQueue(name)
			if tc.topic {
				dest = wire.NewTopic(name)
			}
			k := e.consumer(t, dest)
			snd := amqpSender(t, e.as, dest.String(), nil)
			before := time.Now().UnixMilli()
			amqpSend(t, snd, tc.msg)
			after := time.Now().UnixMilli()
			got := ajJMSOf(t, ajReceive(t, k))
			want := tc.want
			want.Destination = dest.String()
			if tc.ttl > 0 {
				lo, hi := before+tc.ttl.Milliseconds(), after+tc.ttl.Milliseconds()
				if got.Expiration < lo || got.Expiration > hi {
					t.Errorf("JMSExpiration %d, want arrival + %v in [%d, %d]", got.Expiration, tc.ttl, lo, hi)
				}
				got.Expiration = 0
			}
			ajCheck(t, "JMS message", got, want)
		})
	}
}

// ---------------------------------------------------------------------
// JMS → AMQP (mappings.md §3.4)

// ajAMQP is an AMQP message as a receiving application sees it, its
// properties section as a map of the fields present.
type ajAMQP struct {
	Header                *amqp.MessageHeader
	DeliveryAnnotations   amqp.Annotations
	Annotations           amqp.Annotations
	Properties            map[string]any
	ApplicationProperties map[string]any
	Data                  [][]byte
	Value                 any
	Sequence              [][]any
	Footer                amqp.Annotations
}

func ajAMQPOf(m *amqp.Message) ajAMQP {
	v := ajAMQP{
		Header:                m.Header,
		DeliveryAnnotations:   m.DeliveryAnnotations,
		Annotations:           m.Annotations,
		ApplicationProperties: m.ApplicationProperties,
		Data:                  m.Data,
		Value:                 m.Value,
		Sequence:              m.Sequence,
		Footer:                m.Footer,
	}
	if p := m.Properties; p != nil {
		v.Properties = map[string]any{}
		set := func(k string, ok bool, x any) {
			if ok {
				v.Properties[k] = x
			}
		}
		set("message-id", p.MessageID != nil, p.MessageID)
		set("user-id", p.UserID != nil, p.UserID)
		set("to", p.To != nil, ajStr(p.To))
		set("subject", p.Subject != nil, ajStr(p.Subject))
		set("reply-to", p.ReplyTo != nil, ajStr(p.ReplyTo))
		set("correlation-id", p.CorrelationID != nil, p.CorrelationID)
		set("content-type", p.ContentType != nil, ajStr(p.ContentType))
		set("content-encoding", p.ContentEncoding != nil, ajStr(p.ContentEncoding))
		if p.AbsoluteExpiryTime != nil {
			v.Properties["absolute-expiry-time"] = p.AbsoluteExpiryTime.UnixMilli()
		}
		if p.CreationTime != nil {
			v.Properties["creation-time"] = p.CreationTime.UnixMilli()
		}
		set("group-id", p.GroupID != nil, ajStr(p.GroupID))
		if p.GroupSequence != nil {
			v.Properties["group-sequence"] = *p.GroupSequence
		}
		set("reply-to-group-id", p.ReplyToGroupID != nil, ajStr(p.ReplyToGroupID))
	}
	return v
}

func ajStr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ajCheckTTL checks a header ttl against the expiration it was computed
// from (expiration − dispatch time, dispatch being after sent) and clears
// it for the comparison of the rest.
func ajCheckTTL(t *testing.T, h *amqp.MessageHeader, expiration, sent int64) {
	t.Helper()
	if h == nil {
		t.Errorf("no header, want one with ttl for expiration %d", expiration)
		return
	}
	limit := time.Duration(expiration-sent) * time.Millisecond
	if h.TTL <= 0 || h.TTL > limit {
		t.Errorf("header ttl %v, want in (0, %v] (expiration − dispatch time)", h.TTL, limit)
	}
	h.TTL = 0
}

func TestConformanceAMQPJMSOutbound(t *testing.T) {
	e := ajStart(t)
	text := func(s string) *wire.Message {
		m := client.NewTextMessage(s)
		m.Persistent = false
		return m
	}
	cases := []struct {
		name  string
		topic bool
		// build makes the JMS message.
		build func(t *testing.T) *wire.Message
		// want is the AMQP message for the one sent (after Send filled in
		// its MessageId and Timestamp), to the qualified destination to.
		want func(sent *wire.Message, to string) ajAMQP
	}{
		{
			name: "persistent TextMessage is an amqp-value string with a durable header",
			build: func(t *testing.T) *wire.Message {
				return client.NewTextMessage("héllo ✓ \U0001F600")
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Header:      &amqp.MessageHeader{Durable: true, Priority: 4},
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, nil),
					Value:       "héllo ✓ \U0001F600",
				}
			},
		},
		{
			name: "non-persistent BytesMessage is a data section without header",
			build: func(t *testing.T) *wire.Message {
				m := client.NewBytesMessage([]byte{0, 1, 0xfe, 0xff})
				m.Persistent = false
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(3)},
					Properties:  ajOutProps(sent, to, nil),
					Data:        [][]byte{{0, 1, 0xfe, 0xff}},
				}
			},
		},
		{
			name: "MapMessage is an amqp-value map",
			build: func(t *testing.T) *wire.Message {
				m, err := client.NewMapMessage(map[string]any{
					"str": "s", "bool": true, "byte": int8(-1), "short": int16(-2), "int": int32(-3), "long": int64(-4),
					"float": float32(0.5), "double": 0.25, "bin": []byte{7, 8}, "null": nil,
				})
				if err != nil {
					t.Fatal(err)
				}
				m.Persistent = false
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(2)},
					Properties:  ajOutProps(sent, to, nil),
					Value: map[string]any{
						"str": "s", "bool": true, "byte": int8(-1), "short": int16(-2), "int": int32(-3), "long": int64(-4),
						"float": float32(0.5), "double": 0.25, "bin": []byte{7, 8}, "null": nil,
					},
				}
			},
		},
		{
			name: "StreamMessage is an amqp-value list",
			build: func(t *testing.T) *wire.Message {
				m := client.NewMessage()
				m.Persistent = false
				if err := m.SetStream([]any{"s", true, int8(1), int16(2), int32(3), int64(4), float32(0.5), 0.25, []byte{9}, nil}, false); err != nil {
					t.Fatal(err)
				}
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(4)},
					Properties:  ajOutProps(sent, to, nil),
					Value:       []any{"s", true, int8(1), int16(2), int32(3), int64(4), float32(0.5), 0.25, []byte{9}, nil},
				}
			},
		},
		{
			name: "priority and expiration go to the header and absolute-expiry-time",
			build: func(t *testing.T) *wire.Message {
				m := client.NewTextMessage("exp")
				m.Priority = 8
				m.Expiration = time.Now().Add(5 * time.Minute).UnixMilli()
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Header:      &amqp.MessageHeader{Durable: true, Priority: 8}, // ttl checked apart
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, map[string]any{"absolute-expiry-time": sent.Expiration}),
					Value:       "exp",
				}
			},
		},
		{
			name: "non-persistent priority 0 has a header for the priority only",
			build: func(t *testing.T) *wire.Message {
				m := text("p0")
				m.Priority = 0
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Header:      &amqp.MessageHeader{Priority: 0},
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, nil),
					Value:       "p0",
				}
			},
		},
		{
			name: "JMS headers map to the properties section",
			build: func(t *testing.T) *wire.Message {
				m := text("hdrs")
				m.Type = "order.created"
				m.CorrelationId = "corr-7"
				m.ReplyTo = wire.NewQueue("ajreply.q")
				m.GroupID = "group-b"
				m.GroupSequence = 3
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-reply-to": int8(0), "x-opt-jms-msg-type": int8(5)},
					Properties: ajOutProps(sent, to, map[string]any{
						"subject": "order.created", "correlation-id": "corr-7", "reply-to": "queue://ajreply.q",
						"group-id": "group-b", "group-sequence": uint32(3),
					}),
					// No JMSXGroupFirstForConsumer: see ajGroupFirst.
					Value: "hdrs",
				}
			},
		},
		{
			name: "reply-to topic",
			build: func(t *testing.T) *wire.Message {
				m := text("rt")
				m.ReplyTo = wire.NewTopic("ajreply.t")
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-reply-to": int8(1), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, map[string]any{"reply-to": "topic://ajreply.t"}),
					Value:       "rt",
				}
			},
		},
		{
			name: "reply-to temporary queue",
			build: func(t *testing.T) *wire.Message {
				tmp, err := e.oc.CreateTempQueue()
				if err != nil {
					t.Fatalf("create temporary queue: %v", err)
				}
				m := text("tmp")
				m.ReplyTo = tmp
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-reply-to": int8(2), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, map[string]any{"reply-to": sent.ReplyTo.String()}),
					Value:       "tmp",
				}
			},
		},
		{
			name:  "topic destination",
			topic: true,
			build: func(t *testing.T) *wire.Message { return text("on a topic") },
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(1), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, nil),
					Value:       "on a topic",
				}
			},
		},
		{
			name: "JMS properties are application properties with their types",
			build: func(t *testing.T) *wire.Message {
				m := text("ap")
				if err := m.SetProperties(map[string]any{
					"str": "s", "bool": true, "byte": int8(-1), "short": int16(-2), "int": int32(-3), "long": int64(-4),
					"float": float32(1.5), "double": 2.5,
				}); err != nil {
					t.Fatal(err)
				}
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, nil),
					ApplicationProperties: map[string]any{
						"str": "s", "bool": true, "byte": int8(-1), "short": int16(-2), "int": int32(-3), "long": int64(-4),
						"float": float32(1.5), "double": 2.5,
					},
					Value: "ap",
				}
			},
		},
		{
			name: "JMS_AMQP_ properties go back into their sections",
			build: func(t *testing.T) *wire.Message {
				m := client.NewBytesMessage([]byte("x"))
				m.Persistent = false
				if err := m.SetProperties(map[string]any{
					"JMS_AMQP_MA_x-opt-custom":   "c",
					"JMS_AMQP_FT_x-opt-sig":      "s",
					"JMS_AMQP_ContentType":       "application/octet-stream",
					"JMS_AMQP_ContentEncoding":   "gzip",
					"JMS_AMQP_ReplyToGroupID":    "rg",
					"JMS_AMQP_FirstAcquirer":     true,
					"JMS_AMQP_ORIGINAL_ENCODING": ajEncValueBinary,
				}); err != nil {
					t.Fatal(err)
				}
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Header:      &amqp.MessageHeader{Priority: 4, FirstAcquirer: true},
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(3), "x-opt-custom": "c"},
					Properties: ajOutProps(sent, to, map[string]any{
						"content-type": "application/octet-stream", "content-encoding": "gzip", "reply-to-group-id": "rg",
					}),
					Value:  []byte("x"), // original encoding amqp-value binary
					Footer: amqp.Annotations{"x-opt-sig": "s"},
				}
			},
		},
		{
			name: "typed correlation ids go back to their AMQP types",
			build: func(t *testing.T) *wire.Message {
				m := text("cid")
				m.CorrelationId = "AMQP_ULONG:42"
				return m
			},
			want: func(sent *wire.Message, to string) ajAMQP {
				return ajAMQP{
					Annotations: amqp.Annotations{"x-opt-jms-dest": int8(0), "x-opt-jms-msg-type": int8(5)},
					Properties:  ajOutProps(sent, to, map[string]any{"correlation-id": uint64(42)}),
					Value:       "cid",
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := uniq(t)
			dest := wire.NewQueue(name)
			if tc.topic {
				dest = wire.NewTopic(name)
			}
			r := amqpReceiver(t, e.as, dest.String(), nil)
			p := e.producer(t, dest)
			m := tc.build(t)
			before := time.Now().UnixMilli()
			ajSend(t, p, m)
			got := ajAMQPOf(ajAMQPRecv(t, r))
			if m.Expiration != 0 {
				ajCheckTTL(t, got.Header, m.Expiration, before)
			}
			ajCheck(t, "AMQP message", got, tc.want(m, dest.String()))
		})
	}
}

// ajGroupFirst documents a difference found and fixed. A message with a
// JMSXGroupID that opens its group for a consumer is flagged
// JMSXGroupFirstForConsumer by the broker. In ActiveMQ that flag is a field
// of ActiveMQMessage (setJMSXGroupFirstForConsumer), not an entry of
// getProperties(), which is all JMSMappingOutboundTransformer copies to
// application-properties: an AMQP consumer never sees it. Wharf keeps it
// as an engine property (engine/groups.go, markFirstInGroup) and
// protocols/amqp/convert.go FromMessage copies it to application-properties
// as JMSXGroupFirstForConsumer=true until it was told to skip it, as
// protocols/stomp/subscribe.go does. Reference: no such application property.
const ajGroupFirst = "JMSXGroupFirstForConsumer"

// ajOutProps is the properties section every message from OpenWire has
// (message-id = the JMSMessageID string, to = the qualified destination,
// creation-time = JMSTimestamp), plus more.
func ajOutProps(sent *wire.Message, to string, more map[string]any) map[string]any {
	p := map[string]any{
		"message-id":    sent.MessageId.String(),
		"to":            to,
		"creation-time": sent.Timestamp,
	}
	for k, v := range more {
		p[k] = v
	}
	return p
}

// ---------------------------------------------------------------------
// AMQP → broker → AMQP

func TestConformanceAMQPJMSRoundTrip(t *testing.T) {
	e := ajStart(t)
	created := time.UnixMilli(1_700_000_000_456)
	cases := []struct {
		name string
		// body sets the body section (and content type) of the message.
		body func(m *amqp.Message)
		// msgType is Wharf's x-opt-jms-msg-type for the JMS type the body
		// maps to.
		msgType int8
	}{
		{"data section", func(m *amqp.Message) {
			m.Data = [][]byte{{0, 1, 2, 0xff}}
			m.Properties.ContentType = ajPtr("application/octet-stream")
			m.Properties.ContentEncoding = ajPtr("gzip")
		}, 3},
		{"data section with text content type", func(m *amqp.Message) {
			m.Data = [][]byte{[]byte("text as data ✓")}
			m.Properties.ContentType = ajPtr("text/plain;charset=utf-8")
		}, 5},
		{"amqp-value string", func(m *amqp.Message) { m.Value = "value ✓ \U0001F600" }, 5},
		{"amqp-value binary", func(m *amqp.Message) { m.Value = []byte{4, 5, 6} }, 3},
		{"amqp-value map", func(m *amqp.Message) {
			m.Value = map[string]any{"s": "v", "i": int32(1), "l": int64(2), "b": true, "d": 1.5, "bin": []byte{1}, "null": nil}
		}, 2},
		{"amqp-value list", func(m *amqp.Message) { m.Value = []any{"a", int32(1), true, []byte{2}, nil} }, 4},
		{"amqp-sequence", func(m *amqp.Message) { m.Sequence = [][]any{{"a", int64(1), false}} }, 4},
		{"no body", func(m *amqp.Message) {}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := "queue://" + uniq(t)
			expiry := time.Now().Add(time.Minute).Truncate(time.Millisecond)
			m := &amqp.Message{
				Header:              &amqp.MessageHeader{Durable: true, Priority: 6, TTL: time.Minute, FirstAcquirer: true},
				DeliveryAnnotations: amqp.Annotations{"x-opt-da": "d"},
				Annotations:         amqp.Annotations{"x-opt-a": "a", "x-opt-n": int64(9)},
				Properties: &amqp.MessageProperties{
					MessageID:          "rt-1",
					UserID:             []byte("alice"),
					Subject:            ajPtr("subj"),
					ReplyTo:            ajPtr("queue://ajreply.rt"),
					CorrelationID:      uint64(77),
					AbsoluteExpiryTime: &expiry,
					CreationTime:       &created,
					GroupID:            ajPtr("g"),
					GroupSequence:      ajPtr(uint32(4)),
					ReplyToGroupID:     ajPtr("rg"),
				},
				ApplicationProperties: map[string]any{"s": "v", "i": int32(1), "l": int64(2), "b": true, "d": 1.5, "u8": uint8(7)},
				Footer:                amqp.Annotations{"x-opt-f": "foot"},
			}
			tc.body(m)
			want := ajAMQP{
				Header: &amqp.MessageHeader{Durable: true, Priority: 6, FirstAcquirer: true}, // ttl checked apart
				// Delivery annotations are not part of the inbound mapping
				// (InboundTransformer.populateMessage reads none): they end
				// at the broker.
				DeliveryAnnotations: nil,
				Annotations: amqp.Annotations{
					"x-opt-a": "a", "x-opt-n": int64(9),
					"x-opt-jms-dest":     int8(0), // computed from the destination
					"x-opt-jms-reply-to": int8(0), // computed from the reply-to
					// DEVIATION (documented, protocols/amqp/convert.go
					// FromMessage): Wharf adds x-opt-jms-msg-type; ActiveMQ
					// 5.17 does not.
					"x-opt-jms-msg-type": tc.msgType,
				},
				Properties: map[string]any{
					"message-id":           "rt-1",
					"user-id":              []byte("alice"),
					"to":                   q, // the link target, qualified
					"subject":              "subj",
					"reply-to":             "queue://ajreply.rt",
					"correlation-id":       uint64(77),
					"absolute-expiry-time": expiry.UnixMilli(),
					"creation-time":        created.UnixMilli(),
					"group-id":             "g",
					"group-sequence":       uint32(4),
					"reply-to-group-id":    "rg",
				},
				// An unsigned application property comes back as the
				// Java type it widened to (ubyte 7 → byte).
				// No JMSXGroupFirstForConsumer although the message has a
				// group id: see ajGroupFirst.
				ApplicationProperties: map[string]any{"s": "v", "i": int32(1), "l": int64(2), "b": true, "d": 1.5, "u8": int8(7)},
				Data:                  m.Data,
				Value:                 m.Value,
				Sequence:              m.Sequence,
				Footer:                amqp.Annotations{"x-opt-f": "foot"},
			}
			for _, k := range []string{"content-type", "content-encoding"} {
				var p *string
				if k == "content-type" {
					p = m.Properties.ContentType
				} else {
					p = m.Properties.ContentEncoding
				}
				if p != nil {
					want.Properties[k] = *p
				}
			}
			r := amqpReceiver(t, e.as, q, nil)
			before := time.Now().UnixMilli()
			amqpSend(t, amqpSender(t, e.as, q, nil), m)
			got := ajAMQPOf(ajAMQPRecv(t, r))
			ajCheckTTL(t, got.Header, expiry.UnixMilli(), before)
			ajCheck(t, "AMQP message after the round trip", got, want)
		})
	}
}
