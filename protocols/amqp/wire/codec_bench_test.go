package wire

import (
	"bytes"
	"testing"
)

// benchMessage is a typical JMS BytesMessage from Qpid JMS: durable header,
// the JMS message annotations, properties, three application properties
// and a 1 KiB data section.
func benchMessage() *Message {
	return &Message{
		Header:             &Header{Durable: true, Priority: 4},
		MessageAnnotations: NewMap(Symbol("x-opt-jms-dest"), int8(0), Symbol("x-opt-jms-msg-type"), int8(3)),
		Properties: &Properties{MessageID: "ID:host-1234-1:1:1:1:1", To: "queue://orders.incoming",
			ContentType: "application/octet-stream", CreationTime: 1700000000000},
		ApplicationProperties: NewMap("region", "eu-west", "priority", int32(4), "retry", false),
		BodyKind:              BodyData,
		Data:                  [][]byte{bytes.Repeat([]byte{'x'}, 1024)},
	}
}

func benchTransfer() *Transfer {
	return &Transfer{Handle: 1, DeliveryID: new(uint32(12345)), DeliveryTag: []byte{0, 0, 0, 0, 0, 0, 0x30, 0x39},
		MessageFormat: new(uint32(0)), Settled: new(false)}
}

// BenchmarkAMQPWireDecodeTransfer decodes one transfer frame carrying the
// 1 KiB message, fed as one read; "message" also decodes the payload.
func BenchmarkAMQPWireDecodeTransfer(b *testing.B) {
	raw := AppendFrame(nil, 1, benchTransfer(), AppendMessage(nil, benchMessage()))
	for _, mode := range []string{"frame", "frame+message", "frame+message-reused"} {
		withMessage := mode != "frame"
		name := mode
		var md MessageDecoder
		b.Run(name, func(b *testing.B) {
			d := NewDecoder(DefaultLimits())
			out, err := d.Feed(hdrAMQP, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				out, err = d.Feed(raw, out[:0])
				if err != nil || len(out) != 1 {
					b.Fatal(err, len(out))
				}
				if withMessage {
					decode := DecodeMessage
					if mode == "frame+message-reused" {
						decode = md.Decode
					}
					m, err := decode(out[0].Payload)
					if err != nil || len(m.Data) != 1 {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkAMQPWireEncodeTransfer encodes the 1 KiB message and its
// transfer frame into reused buffers.
func BenchmarkAMQPWireEncodeTransfer(b *testing.B) {
	m, t := benchMessage(), benchTransfer()
	msg := AppendMessage(nil, m)
	buf := AppendFrame(nil, 1, t, msg)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		msg = AppendMessage(msg[:0], m)
		buf = AppendFrame(buf[:0], 1, t, msg)
	}
}

// BenchmarkAMQPWireAppendTransfer frames the encoded 1 KiB message as one
// transfer, as a delivery is written (AppendTransfer, max-frame-size
// 64 KiB).
func BenchmarkAMQPWireAppendTransfer(b *testing.B) {
	msg, t := AppendMessage(nil, benchMessage()), benchTransfer()
	buf, err := AppendTransfer(nil, 1, t, msg, 65536)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf, _ = AppendTransfer(buf[:0], 1, t, msg, 65536)
	}
}
