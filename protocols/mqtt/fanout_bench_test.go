package mqtt

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
	"wharf/protocols/transport"
)

// BenchmarkFanOut is the broker's MQTT fan-out path end to end (issue 18):
// one publisher, 10 subscribers, 1 KiB messages, at QoS 0 and QoS 1, over
// loopback sockets through the transport and a real engine, as `wharf
// bench --scenario topic --subscribers 10` runs it. One op is one message
// published and delivered to all 10 subscribers (allocs/op are the broker's
// for ten deliveries, plus the clients', which allocate nothing per
// message). The clients are minimal (a frame reader and a PUBACK writer),
// so that the broker's share of the CPU is larger than under Paho;
// cpu-ns/delivery is the process's CPU time (broker and clients) per
// delivery.
func BenchmarkFanOut(b *testing.B) {
	for _, qos := range []byte{0, 1} {
		b.Run(fmt.Sprintf("qos=%d", qos), func(b *testing.B) { benchFanOut(b, qos, 10) })
	}
}

func benchFanOut(b *testing.B, qos byte, subscribers int) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{NumEventLoop: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	addr := l.Addr().String()
	topic := "bench/fanout"

	var wg sync.WaitGroup
	var fail error
	var failOnce sync.Once
	setFail := func(err error) { failOnce.Do(func() { fail = err }) }
	counts := make(chan int, subscribers)
	var conns []net.Conn
	b.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range subscribers {
		c, r := benchConnect(b, addr, fmt.Sprintf("sub-%d", i))
		conns = append(conns, c)
		sub := wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: topic, QoS: qos}}}
		if _, err := c.Write(wire.AppendPacket(nil, &sub, wire.Version311)); err != nil {
			b.Fatal(err)
		}
		if h, _, err := benchFrame(r, nil); err != nil || h>>4 != byte(wire.SUBACK) {
			b.Fatalf("SUBACK: header %#x, %v", h, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			buf := make([]byte, 0, 2048)
			var ack [4]byte
			for n < b.N {
				h, body, err := benchFrame(r, buf)
				if err != nil {
					setFail(fmt.Errorf("subscriber: %w after %d of %d", err, n, b.N))
					break
				}
				if h>>4 != byte(wire.PUBLISH) {
					continue
				}
				n++
				if (h>>1)&3 == 1 {
					tl := int(binary.BigEndian.Uint16(body))
					ack = [4]byte{byte(wire.PUBACK) << 4, 2, body[2+tl], body[3+tl]}
					if _, err := c.Write(ack[:]); err != nil {
						setFail(err)
						break
					}
				}
			}
			counts <- n
		}()
	}

	pc, pr := benchConnect(b, addr, "pub")
	conns = append(conns, pc)
	// The publisher keeps at most window QoS 1 publishes unacknowledged.
	const window = 1000
	credit := make(chan struct{}, window)
	for range window {
		credit <- struct{}{}
	}
	if qos == 1 {
		go func() {
			buf := make([]byte, 0, 64)
			for {
				h, _, err := benchFrame(pr, buf)
				if err != nil {
					return
				}
				if h>>4 == byte(wire.PUBACK) {
					credit <- struct{}{}
				}
			}
		}()
	}
	payload := make([]byte, 1024)
	p := wire.Packet{Type: wire.PUBLISH, QoS: qos, Topic: topic, Payload: payload}
	out := make([]byte, 0, 1200)
	w := bufio.NewWriterSize(pc, 64<<10)

	b.ReportAllocs()
	b.SetBytes(int64(len(payload) * subscribers))
	b.ResetTimer()
	cpu0 := processCPU()
	for i := range b.N {
		if qos == 1 {
			if len(credit) == 0 {
				w.Flush()
			}
			<-credit
			p.PacketID = uint16(i%65535 + 1)
		}
		out = wire.AppendPacket(out[:0], &p, wire.Version311)
		if _, err := w.Write(out); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	wg.Wait()
	cpu := processCPU() - cpu0
	b.StopTimer()
	if fail != nil {
		b.Fatal(fail)
	}
	for range subscribers {
		if n := <-counts; n != b.N {
			b.Fatalf("a subscriber got %d of %d messages", n, b.N)
		}
	}
	b.ReportMetric(float64(b.N*subscribers)/b.Elapsed().Seconds(), "deliveries/s")
	// CPU time is steadier than wall time on a shared machine.
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*subscribers), "cpu-ns/delivery")
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchConnect opens an MQTT 3.1.1 connection (clean session, no
// keep-alive) and reads its CONNACK.
func benchConnect(b *testing.B, addr, clientID string) (net.Conn, *bufio.Reader) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	p := wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{
		ProtocolName: wire.ProtocolName, ProtocolLevel: wire.Version311, ClientID: clientID, CleanSession: true,
	}}
	if _, err := c.Write(wire.AppendPacket(nil, &p, wire.Version311)); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReaderSize(c, 64<<10)
	if h, body, err := benchFrame(r, nil); err != nil || h != 0x20 || len(body) != 2 || body[1] != 0 {
		b.Fatalf("CONNACK: header %#x body % x, %v", h, body, err)
	}
	return c, r
}

// benchFrame reads one MQTT packet into buf: its first byte and its body.
func benchFrame(r *bufio.Reader, buf []byte) (byte, []byte, error) {
	h, err := r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, shift := 0, 0
	for {
		c, err := r.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		n |= int(c&0x7f) << shift
		if c < 0x80 {
			break
		}
		shift += 7
	}
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	_, err = io.ReadFull(r, buf)
	return h, buf, err
}
