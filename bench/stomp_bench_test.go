package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
)

// BenchmarkSTOMPQueue is send -> dispatch -> consume over STOMP on loopback:
// one producer connection pipelining SEND frames (1 KiB, non-persistent, no
// receipts) and one consumer connection, with ack:auto and with
// ack:client-individual (an ACK frame per message). It reports messages per
// second and the broker-side allocations per message (the benchmark's own
// client is in the same process and allocates little: it reuses buffers).
func BenchmarkSTOMPQueue(b *testing.B) {
	for _, ack := range []string{"auto", "client-individual"} {
		b.Run("ack="+ack, func(b *testing.B) { benchSTOMP(b, ack) })
	}
}

func dial(b *testing.B, addr string) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Write([]byte("CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00")); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReaderSize(c, 1<<16)
	if f := readFrame(b, r); !bytes.HasPrefix(f, []byte("CONNECTED")) {
		b.Fatalf("connect: %q", f)
	}
	return c, r
}

// readFrame reads up to the NUL that ends a frame (bodies here have none).
func readFrame(b *testing.B, r *bufio.Reader) []byte {
	for {
		f, err := r.ReadSlice(0)
		if err != nil {
			b.Fatalf("read: %v", err)
		}
		f = bytes.TrimLeft(f, "\r\n")
		if len(f) > 1 {
			return f
		}
	}
}

// stompTarget is the broker to measure: WHARF_BENCH_STOMP_ADDR names an
// external one (ActiveMQ, for a side-by-side figure), else a fresh in-process
// Wharf.
func stompTarget(b *testing.B) string {
	if a := os.Getenv("WHARF_BENCH_STOMP_ADDR"); a != "" {
		return a
	}
	return brokertest.Start(b, wiring.Factories()).STOMPAddr()
}

func benchSTOMP(b *testing.B, ack string) {
	addr := stompTarget(b)
	// A queue per run, so that runs against a long-lived external broker do
	// not see each other's leftovers.
	queue := fmt.Sprintf("/queue/bench.%d.%d", os.Getpid(), time.Now().UnixNano())
	prod, _ := dial(b, addr)
	defer prod.Close()
	cons, cr := dial(b, addr)
	defer cons.Close()
	fmt.Fprintf(cons, "SUBSCRIBE\nid:1\ndestination:%s\nack:%s\nreceipt:r\n\n\x00", queue, ack)
	if f := readFrame(b, cr); !bytes.HasPrefix(f, []byte("RECEIPT")) {
		b.Fatalf("subscribe: %q", f)
	}
	body := bytes.Repeat([]byte("x"), 1024)
	frame := []byte("SEND\ndestination:" + queue + "\ncontent-type:text/plain\n\n")
	frame = append(append(frame, body...), 0)
	done := make(chan error, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	go func() {
		w := bufio.NewWriterSize(cons, 1<<16)
		for i := 0; i < b.N; i++ {
			f, err := cr.ReadSlice(0)
			for err == nil && len(bytes.TrimLeft(f, "\r\n")) <= 1 {
				f, err = cr.ReadSlice(0)
			}
			if err != nil {
				done <- err
				return
			}
			if ack == "auto" {
				continue
			}
			i := bytes.Index(f, []byte("\nack:"))
			if i < 0 {
				done <- fmt.Errorf("no ack header in %q", f)
				return
			}
			id := f[i+5:]
			id = id[:bytes.IndexByte(id, '\n')]
			w.WriteString("ACK\nid:")
			w.Write(id)
			w.WriteString("\n\n\x00")
			// Flush unless another whole frame is already buffered: the
			// broker may be waiting for these acks to send more.
			if peek, _ := cr.Peek(cr.Buffered()); bytes.IndexByte(peek, 0) < 0 {
				w.Flush()
			}
		}
		w.Flush()
		done <- nil
	}()
	pw := bufio.NewWriterSize(prod, 1<<16)
	for i := 0; i < b.N; i++ {
		pw.Write(frame)
	}
	pw.Flush()
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(5 * time.Minute):
		b.Fatal("consumer did not finish")
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
