package wire

import (
	"fmt"
	"testing"
)

var benchSizes = []struct {
	name string
	n    int
}{{"size=16B", 16}, {"size=1KiB", 1024}, {"size=64KiB", 64 * 1024}}

// benchPublish is a QoS 1 PUBLISH as a broker receives and delivers it; in
// MQTT 5 with the properties a typical client sets.
func benchPublish(n int, v byte) Packet {
	p := Packet{Type: PUBLISH, QoS: 1, PacketID: 4711, Topic: "sensors/building-7/floor-3/temperature", Payload: make([]byte, n)}
	if v == Version5 {
		p.Props = &Properties{PayloadFormat: 1, HasPayloadFormat: true, MessageExpiry: 3600, HasMessageExpiry: true,
			ContentType: "application/json", User: []UserProperty{{"trace-id", "4bf92f3577b34da6"}}}
	}
	return p
}

// BenchmarkMQTTWireDecodePublish decodes one QoS 1 PUBLISH per Feed, the
// whole packet in one read.
func BenchmarkMQTTWireDecodePublish(b *testing.B) {
	for _, v := range []byte{Version311, Version5} {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("v%d/%s", v, sz.name), func(b *testing.B) {
				p := benchPublish(sz.n, v)
				raw := AppendPacket(nil, &p, v)
				d := NewDecoder(DefaultLimits())
				d.SetVersion(v)
				out := make([]Packet, 0, 1)
				b.ReportAllocs()
				b.SetBytes(int64(len(raw)))
				for b.Loop() {
					var err error
					out, err = d.Feed(raw, out[:0])
					if err != nil || len(out) != 1 {
						b.Fatal(err, len(out))
					}
				}
			})
		}
	}
}

// BenchmarkMQTTWireEncodePublish encodes one QoS 1 PUBLISH into a reused
// buffer: the broker's per-delivery cost.
func BenchmarkMQTTWireEncodePublish(b *testing.B) {
	for _, v := range []byte{Version311, Version5} {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("v%d/%s", v, sz.name), func(b *testing.B) {
				p := benchPublish(sz.n, v)
				buf := AppendPacket(nil, &p, v)
				b.ReportAllocs()
				b.SetBytes(int64(len(buf)))
				for b.Loop() {
					buf = AppendPacket(buf[:0], &p, v)
				}
			})
		}
	}
}
