package bench

import (
	"context"
	"os"
	"testing"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// openwireTarget is the broker to measure: WHARF_BENCH_OPENWIRE_ADDR names an
// external one (ActiveMQ), else a fresh in-process Wharf.
func openwireTarget(b *testing.B) string {
	if a := os.Getenv("WHARF_BENCH_OPENWIRE_ADDR"); a != "" {
		return a
	}
	return brokertest.Start(b, wiring.Factories()).Addr("openwire").String()
}

// BenchmarkOpenWireSyncSend is the round trip of a synchronous send (what a
// JMS persistent send does): the producer waits for the broker's Response
// before the next send. 1 KiB text, no consumer; ns/op is the latency.
func BenchmarkOpenWireSyncSend(b *testing.B) {
	ctx := context.Background()
	c, err := client.Dial(ctx, openwireTarget(b), client.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	s, err := c.Session(false)
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.Producer(wire.NewQueue("bench.sync." + b.Name()))
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m := client.NewBytesMessage(body)
		if err := p.Send(ctx, m, true); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkOpenWireQueueAsync is the non-persistent queue of
// `make bench-compare` in one process: a producer sending asynchronously
// (as the JMS client sends non-persistent messages) and an auto-acknowledging
// consumer (one STANDARD ack per message, prefetch 1000), each on its own
// connection, 1 KiB bytes messages. One op is a message sent and received;
// allocs/op counts the client's and (in-process) the broker's allocations.
func BenchmarkOpenWireQueueAsync(b *testing.B) {
	ctx := context.Background()
	addr := openwireTarget(b)
	dial := func() *client.Session {
		c, err := client.Dial(ctx, addr, client.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		s, err := c.Session(false)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	q := wire.NewQueue("bench.async." + b.Name())
	k, err := dial().Consumer(q, client.ConsumerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := dial().Producer(q)
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	b.ReportAllocs()
	b.ResetTimer()
	got := make(chan error, 1)
	go func() {
		for i := 0; i < b.N; i++ {
			if _, err := k.Receive(ctx); err != nil {
				got <- err
				return
			}
		}
		got <- nil
	}()
	for i := 0; i < b.N; i++ {
		if err := p.Send(ctx, client.NewBytesMessage(body), false); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-got; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
