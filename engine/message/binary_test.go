package message

import (
	"errors"
	"math"
	"reflect"
	"testing"
)

// binaryGolden are the messages the round-trip test checks and the fuzz
// target starts from.
func binaryGolden() []*Message {
	full := &Message{
		ID:                  "ID:host-1-2-3:1:1:1:7",
		Destination:         QueueDest("orders.eu"),
		ReplyTo:             Destination{Type: TempQueue, Name: "ID:host-1-2-3:1:1"},
		CorrelationID:       "corr-1",
		Type:                "order",
		Priority:            9,
		Persistent:          true,
		Timestamp:           1700000000123,
		Expiration:          1700000060123,
		UserID:              "alice",
		GroupID:             "g1",
		GroupSeq:            -1,
		OriginalDestination: TopicDest("a.b"),
		RedeliveryCounter:   3,
		Props: Properties{
			{"null", Value{}},
			{"bool", BoolValue(true)},
			{"byte", ByteValue(-7)},
			{"short", ShortValue(-300)},
			{"int", IntValue(math.MinInt32)},
			{"long", LongValue(math.MaxInt64)},
			{"float", FloatValue(-1.5)},
			{"double", DoubleValue(math.Inf(-1))},
			{"string", StringValue("héllo")},
			{"bytes", BytesValue([]byte{0, 1, 2})},
			{"char", CharValue('€')},
		},
		BodyType:   TextBody,
		Body:       []byte("hello\x00world"),
		Retain:     true,
		Origin:     "conn-9",
		Original:   Encoded{Protocol: "stomp", Bytes: []byte("SEND\n\nhello\x00")},
		BrokerPath: []string{"ID:broker-a-1", "ID:broker-b-2"},
	}
	mapMsg := &Message{ID: "m", Destination: TopicDest("t"), BodyType: MapBody,
		Map: Properties{{"k", StringValue("v")}, {"n", DoubleValue(math.NaN())}, {"e", BytesValue([]byte{})}}}
	stream := &Message{ID: "s", Destination: QueueDest("q"), BodyType: StreamBody,
		List: []Value{IntValue(1), StringValue(""), {}, BytesValue(nil)}, Body: []byte{}}
	adv := &Message{ID: "a", Destination: TopicDest("ActiveMQ.Advisory.Expired.Queue.q"),
		Advisory: &Advisory{Command: "Message", Fields: Properties{{"Destination", StringValue("queue://q")}}, Message: full}}
	advInAdv := &Message{ID: "aa", Destination: TopicDest("ActiveMQ.Advisory.X"),
		Advisory: &Advisory{Command: "Message", Message: &Message{ID: "inner", Advisory: &Advisory{Command: "ConnectionInfo"}}}}
	return []*Message{{}, full, mapMsg, stream, adv, advInAdv}
}

func TestMessageBinaryRoundTrip(t *testing.T) {
	for i, m := range binaryGolden() {
		b, err := m.AppendBinary([]byte("prefix"))
		if err != nil {
			t.Fatalf("%d: AppendBinary: %v", i, err)
		}
		if string(b[:6]) != "prefix" {
			t.Fatalf("%d: AppendBinary did not append", i)
		}
		got, err := UnmarshalBinary(b[6:])
		if err != nil {
			t.Fatalf("%d: UnmarshalBinary: %v", i, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("%d: round trip\n got %+v\nwant %+v", i, got, m)
		}
		if got.Size() != m.Size() {
			t.Errorf("%d: Size %d, want %d", i, got.Size(), m.Size())
		}
	}
}

func TestMessageBinaryErrors(t *testing.T) {
	good, _ := binaryGolden()[1].AppendBinary(nil)
	cases := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"unknown version", []byte{9}},
		{"truncated", good[:len(good)/2]},
		{"trailing bytes", append(append([]byte(nil), good...), 0)},
		{"huge string length", []byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"huge property count", append([]byte{1, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0xff, 0xff, 0xff, 0x0f)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := UnmarshalBinary(tc.in)
			if !errors.Is(err, ErrBinary) || m != nil {
				t.Fatalf("UnmarshalBinary = %v, %v; want ErrBinary", m, err)
			}
		})
	}
	deep := &Message{Advisory: &Advisory{Message: &Message{Advisory: &Advisory{Message: &Message{Advisory: &Advisory{}}}}}}
	if _, err := deep.AppendBinary(nil); err == nil {
		t.Error("AppendBinary accepted advisories nested three deep")
	}
}

// FuzzMessageBinaryDecode: UnmarshalBinary never panics, and what it
// accepts encodes back to a message that decodes the same.
func FuzzMessageBinaryDecode(f *testing.F) {
	for _, m := range binaryGolden() {
		b, err := m.AppendBinary(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := UnmarshalBinary(in)
		if err != nil {
			if !errors.Is(err, ErrBinary) || m != nil {
				t.Fatalf("error %v does not wrap ErrBinary (message %v)", err, m)
			}
			return
		}
		b, err := m.AppendBinary(nil)
		if err != nil {
			t.Fatalf("AppendBinary of a decoded message: %v", err)
		}
		if len(b) > len(in) {
			t.Fatalf("re-encoding grew from %d to %d bytes", len(in), len(b))
		}
		m2, err := UnmarshalBinary(b)
		if err != nil {
			t.Fatalf("decode of re-encoding: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-decoded message differs\n got %+v\nwant %+v", m2, m)
		}
	})
}
