package transport

import (
	"io"
	"log/slog"
	"net"
	"testing"
)

// BenchmarkTransportEcho pipelines 1 KiB messages through an echo handler
// over loopback: one goroutine writes, the benchmark goroutine reads the
// echo back. Throughput is per direction.
func BenchmarkTransportEcho(b *testing.B) {
	const size = 1 << 10
	b.Run("size=1KiB", func(b *testing.B) {
		l, err := Listen("127.0.0.1:0", echoFactory, Options{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		nc, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		msg := make([]byte, size)
		buf := make([]byte, size)
		b.SetBytes(size)
		b.ReportAllocs()
		b.ResetTimer()
		werr := make(chan error, 1)
		go func() {
			for range b.N {
				if _, err := nc.Write(msg); err != nil {
					werr <- err
					return
				}
			}
			werr <- nil
		}()
		for range b.N {
			if _, err := io.ReadFull(nc, buf); err != nil {
				b.Fatal(err)
			}
		}
		if err := <-werr; err != nil {
			b.Fatal(err)
		}
	})
}
