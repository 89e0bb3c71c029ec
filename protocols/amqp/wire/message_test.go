package wire

import (
	"bytes"
	"reflect"
	"testing"
)

// TestAMQPWireMessageBareIsVerbatim: a decoded message is re-sent with its
// bare message byte for byte (AMQP 1.0 §3.2: the bare message is
// immutable), even when the sender used wider encodings than ours, while
// the header and annotations are encoded from the fields.
func TestAMQPWireMessageBareIsVerbatim(t *testing.T) {
	props := described(0x73, list32(hx(`b1 00 00 00 02 "id"`), null, hx(`b1 00 00 00 01 "q"`)))
	appProps := described(0x74, map32(hx(`b1 00 00 00 01 "k"`), hx("70 00 00 00 01")))
	body := cat(described(0x75, hx("b0 00 00 00 01 61")), described(0x75, bin8('b')))
	raw := cat(described(0x70, list8(fals1, []byte{0x50, 4})), props, appProps, body, described(0x78, map8()))
	m, err := DecodeMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[Section][]byte{
		SectionHeader:                described(0x70, list8(fals1, []byte{0x50, 4})),
		SectionDeliveryAnnotations:   nil,
		SectionProperties:            props,
		SectionApplicationProperties: appProps,
		SectionBody:                  body,
		SectionFooter:                described(0x78, map8()),
	} {
		if got := m.Raw(s); !bytes.Equal(got, want) {
			t.Errorf("Raw(%d) = % x, want % x", s, got, want)
		}
	}
	if !bytes.Equal(m.Bare(), cat(props, appProps, body)) {
		t.Errorf("Bare = % x", m.Bare())
	}

	m.Header.DeliveryCount++            // what a broker does on redelivery
	m.Properties.To = "queue://ignored" // bare message: kept as received
	enc := AppendMessage(nil, m)
	want := cat(described(0x70, list8(null, null, null, null, smallUint(1))), props, appProps, body, described(0x78, hx("c1 01 00")))
	if !bytes.Equal(enc, want) {
		t.Fatalf("AppendMessage:\n got % x\nwant % x", enc, want)
	}

	m.ResetEncoding()
	if m.Encoded() != nil || m.Raw(SectionBody) != nil || m.Bare() != nil {
		t.Fatal("ResetEncoding kept the encoding")
	}
	m2, err := DecodeMessage(AppendMessage(nil, m))
	if err != nil || m2.Properties.To != "queue://ignored" || !reflect.DeepEqual(m2.Data, [][]byte{[]byte("a"), []byte("b")}) {
		t.Fatalf("after ResetEncoding: %+v, %v", m2.Properties, err)
	}
	if got := (&Message{}).Raw(SectionBody); got != nil {
		t.Errorf("Raw of a built message = % x", got)
	}
}

// TestAMQPWireMessageAliasesInput documents that a decoded message points
// into its input rather than copying the body.
func TestAMQPWireMessageAliasesInput(t *testing.T) {
	raw := described(0x75, bin8('a', 'b'))
	m, err := DecodeMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] = 'z'
	if string(m.Data[0]) != "az" {
		t.Fatalf("Data = %q, want it to alias the input", m.Data[0])
	}
	if cap(m.Data[0]) != 2 {
		t.Errorf("Data capacity %d lets an append overwrite the input", cap(m.Data[0]))
	}
}

func TestAMQPWireMessageBuilt(t *testing.T) {
	m := &Message{Header: NewHeader(), BodyKind: BodySequence, Sequence: [][]any{{int64(1)}, {"x"}},
		Properties: &Properties{MessageID: UUID{1}, CorrelationID: uint64(7)}}
	enc := AppendMessage(nil, m)
	want := cat(described(0x70, list0),
		described(0x73, list8(cat([]byte{0x98, 1}, make([]byte, 15)), null, null, null, null, smallUlong(7))),
		described(0x76, list8(hx("55 01"))), described(0x76, list8(str8("x"))))
	if !bytes.Equal(enc, want) {
		t.Fatalf("AppendMessage:\n got % x\nwant % x", enc, want)
	}
	got, err := DecodeMessage(enc)
	if err != nil || !reflect.DeepEqual(stripped(got), m) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}
