package conformance

import (
	"context"
	"fmt"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
)

// BenchmarkNetworkForward measures forwarding across one static bridge:
// a producer on A, a consumer on B, A bridged to B, for a pair of Wharf
// processes and a pair of ActiveMQ 5.17 brokers in the same run (the
// reference). Each message is sent to A and received on B; msgs/s is
// the rate at B. Persistent queue messages are sent synchronously, as
// JMS sends them; non-persistent topic messages asynchronously.
//
//	go test -run '^$' -bench NetworkForward -benchtime 5000x ./conformance
func BenchmarkNetworkForward(b *testing.B) {
	skipWithoutActiveMQ(b)
	pairs := map[string][2]*netNode{}
	pair := func(kind string) [2]*netNode {
		if p, ok := pairs[kind]; ok {
			return p
		}
		bn := startNetNode(b, kind, "B", nil, "", "")
		an := startNetNode(b, kind, "A", bn, "", "")
		pairs[kind] = [2]*netNode{an, bn}
		return pairs[kind]
	}
	seq := 0
	for _, tc := range []struct {
		name       string
		dest       string
		persistent bool
	}{
		{"queue-persistent", "queue://BENCH.Q", true},
		{"topic-nonpersistent", "topic://BENCH.T", false},
	} {
		for _, kind := range []string{"activemq", "wharf"} {
			b.Run(tc.name+"/"+kind, func(b *testing.B) {
				p := pair(kind)
				seq++
				dest := fmt.Sprintf("%s.%d", tc.dest, seq)
				k := netConsumer(b, p[1].addr, dest)
				waitNetworkConsumers(b, p[0].addr, dest, 1)
				c := dialOW(b, p[0].addr, "")
				s, err := c.Session(false)
				if err != nil {
					b.Fatal(err)
				}
				d, _ := client.ParseDestination(dest)
				prod, err := s.Producer(d)
				if err != nil {
					b.Fatal(err)
				}
				body := make([]byte, 256)
				b.SetBytes(int64(len(body)))
				b.ResetTimer()
				start := time.Now()
				errc := make(chan error, 1)
				go func() {
					for range b.N {
						m := client.NewBytesMessage(body)
						m.Persistent = tc.persistent
						if err := prod.Send(context.Background(), m, tc.persistent); err != nil {
							errc <- err
							return
						}
					}
					errc <- nil
				}()
				for i := range b.N {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					_, err := k.Receive(ctx)
					cancel()
					if err != nil {
						b.Fatalf("after %d of %d: %v", i, b.N, err)
					}
				}
				if err := <-errc; err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
			})
		}
	}
}
