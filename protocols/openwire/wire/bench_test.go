package wire

import (
	"strings"
	"testing"
)

func benchMessage() *Message {
	prod := &ProducerId{ConnectionId: "ID:host-1234-1700000000000-1:1", SessionId: 1, Value: 1}
	m := &Message{
		BaseCommand: BaseCommand{CommandId: 6, ResponseRequired: true},
		ProducerId:  prod, Destination: NewQueue("orders.in"),
		MessageId: &MessageId{ProducerId: prod, ProducerSequenceId: 1}, Persistent: true, Priority: 4,
		Timestamp: 1700000000123,
	}
	m.SetText(strings.Repeat("0123456789abcdef", 64), false)
	if err := m.SetProperties(map[string]any{"a": int32(1), "b": "two", "c": true, "d": int64(4), "e": 5.5}); err != nil {
		panic(err)
	}
	return m
}

func benchFormats() []struct {
	name string
	f    Format
} {
	return []struct {
		name string
		f    Format
	}{
		{"tight-cache", Format{Version: 12, TightEncodingEnabled: true, CacheEnabled: true, StackTraceEnabled: true}},
		{"loose", Format{Version: 12, StackTraceEnabled: true}},
	}
}

func BenchmarkOpenWireWireEncodeTextMessage1KiB(b *testing.B) {
	for _, bf := range benchFormats() {
		b.Run("size=1KiB/"+bf.name, func(b *testing.B) {
			m := benchMessage()
			e := NewEncoder(bf.f)
			buf, _ := e.Append(nil, m)
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var err error
				if buf, err = e.Append(buf[:0], m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpenWireWireDecodeTextMessage1KiB(b *testing.B) {
	for _, bf := range benchFormats() {
		b.Run("size=1KiB/"+bf.name, func(b *testing.B) {
			e := NewEncoder(bf.f)
			first, _ := e.Append(nil, benchMessage())
			frame, _ := e.Append(nil, benchMessage()) // steady state: ids are cache references
			d := NewDecoder(bf.f, Limits{})
			d.Feed(first)
			if _, err := d.Next(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d.Feed(frame)
				ds, err := d.Next()
				if err != nil || ds == nil {
					b.Fatal(err)
				}
			}
		})
	}
}
