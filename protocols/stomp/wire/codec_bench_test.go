package wire

import (
	"bytes"
	"strconv"
	"testing"
)

func benchSend(withLength bool) []byte {
	f := fr("SEND", "", "destination", "/queue/orders.incoming", "persistent", "true",
		"receipt", "message-12345", "content-type", "application/octet-stream")
	f.Body = bytes.Repeat([]byte{'x'}, 1024)
	if withLength {
		f.Set(HdrContentLength, strconv.Itoa(len(f.Body)))
	} else {
		f.Set("priority", "4")
	}
	return AppendFrame(nil, &f, V12)
}

// BenchmarkSTOMPWireDecodeSend decodes a 1.2 SEND with 5 headers and a 1 KiB
// body, fed as one read.
func BenchmarkSTOMPWireDecodeSend(b *testing.B) {
	for _, bc := range []struct {
		name       string
		withLength bool
	}{{"content-length", true}, {"nul-terminated", false}} {
		b.Run(bc.name, func(b *testing.B) {
			raw := benchSend(bc.withLength)
			d := NewDecoder(DefaultLimits())
			d.SetVersion(V12)
			out := make([]Frame, 0, 1)
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				var err error
				out, _, err = d.Feed(raw, out[:0])
				if err != nil || len(out) != 1 {
					b.Fatal(err, len(out))
				}
			}
		})
	}
}

// BenchmarkSTOMPWireEncodeMessage encodes a 1.2 MESSAGE with 8 headers and a
// 1 KiB body into a reused buffer.
func BenchmarkSTOMPWireEncodeMessage(b *testing.B) {
	f := fr("MESSAGE", "", "subscription", "0", "message-id", "ID:host-1234-1:1:1:1:1",
		"destination", "/queue/orders.incoming", "expires", "0", "priority", "4",
		"timestamp", "1700000000000", "persistent", "true", "content-length", "1024")
	f.Body = bytes.Repeat([]byte{'x'}, 1024)
	buf := AppendFrame(nil, &f, V12)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		buf = AppendFrame(buf[:0], &f, V12)
	}
}
