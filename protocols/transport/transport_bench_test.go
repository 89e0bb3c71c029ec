package transport

import (
	"io"
	"log/slog"
	"net"
	"sync/atomic"
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

// BenchmarkTransportWriteBurst is a broker's fan-out side: a goroutine
// that is not the event loop (a shard) writes 1 KiB frames to one
// connection faster than the loop flushes them, so the outbound queue
// holds bursts; the client reads them all. allocs/op shows what queueing
// costs per frame.
func BenchmarkTransportWriteBurst(b *testing.B) {
	const size = 1 << 10
	conns := make(chan Conn, 1)
	l, err := Listen("127.0.0.1:0", func(c Conn) Handler {
		conns <- c
		return &funcHandler{onData: func([]byte) error { return nil }}
	}, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	c := <-conns
	msg := make([]byte, size)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	// The writer stays at most window bytes ahead of the reader, as a
	// consumer's prefetch bounds a shard, far below the outbound cap.
	const window = 4 << 20
	var read atomic.Int64
	more := make(chan struct{}, 1)
	rerr := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for total := int64(b.N) * size; read.Load() < total; {
			n, err := nc.Read(buf)
			read.Add(int64(n))
			select {
			case more <- struct{}{}:
			default:
			}
			if err != nil {
				rerr <- err
				return
			}
		}
		rerr <- nil
	}()
	for i := range int64(b.N) {
		for i*size-read.Load() > window {
			<-more
		}
		if err := c.Write(msg); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-rerr; err != nil {
		b.Fatal(err)
	}
}
