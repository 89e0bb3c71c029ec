package conformance

import (
	"context"
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// A duplex network connector started by ActiveMQ 5.17 into another broker
// (<networkConnector duplex="true">): the accepting broker runs the
// reverse bridge over the accepted connection. Each case runs against an
// ActiveMQ acceptor first, the reference, then against Wharf.

// startDuplexPair starts the acceptor B (Wharf or ActiveMQ) and an
// ActiveMQ broker A whose duplex connector dials B, with the connector
// attributes attrs; it returns once both ends of the bridge are up.
func startDuplexPair(t *testing.T, acceptor, attrs string) (a *amqProc, b *netNode) {
	t.Helper()
	b = startNetNode(t, acceptor, "B", nil, "", "")
	var wb *proc
	if acceptor == "wharf" {
		wb = b.p
	}
	a = startActiveMQXML(t, amqNetworkXML("A", fmt.Sprintf(`<networkConnectors><networkConnector name="dup" duplex="true" uri="static:(tcp://%s)" %s/></networkConnectors>`, b.addr, attrs)))
	a.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	if wb != nil {
		wb.waitLine(regexp.MustCompile(`"msg":"network bridge started".*"created_by_duplex":true`), procStartTimeout)
	} else {
		b.p.waitLine(regexp.MustCompile(`Started responder end of duplex bridge dup@`), procStartTimeout)
	}
	return a, b
}

// Messages both ways over ActiveMQ's duplex connection, JMS clients on
// each side: consumer on B and producer on A (the initiator's own bridge),
// consumer on A and producer on B (the reverse bridge the acceptor runs),
// the conduit split of a queue with a consumer on each side, and a topic
// with a subscriber on each side that gets every message once. The counts
// are the all-ActiveMQ pair's.
func TestConformanceNetworkDuplexFromActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	var ref [3][]int
	for _, acceptor := range []string{"activemq", "wharf"} {
		t.Run("acceptor="+acceptor, func(t *testing.T) {
			a, b := startDuplexPair(t, acceptor, "")
			an := &netNode{kind: "activemq", addr: a.openwire, p: a.proc}
			var got [3][]int
			// A -> B: the initiator's bridge serves B's consumer.
			got[0] = jmsSplitURLs(t, an, 1, b)
			// B -> A: the acceptor's reverse bridge serves A's consumer.
			got[1] = jmsSplitURLs(t, b, 1, an)
			// A queue on B with a consumer on each side: B's own and the
			// reverse bridge's conduit share the 30.
			got[2] = jmsSplitURLs(t, b, 1, b, an)
			t.Logf("A->B %v, B->A %v, split on B %v", got[0], got[1], got[2])
			if got[0][0] != 30 || got[1][0] != 30 || got[2][0]+got[2][1] != 30 || got[2][1] == 0 {
				t.Fatalf("A->B %v, B->A %v, split on B %v: want 30, 30 and 30 shared with A", got[0], got[1], got[2])
			}
			if acceptor == "activemq" {
				ref = got
			} else if fmt.Sprint(got) != fmt.Sprint(ref) {
				t.Fatalf("counts %v, %v in the all-ActiveMQ pair", got, ref)
			}

			// A topic with a subscriber on each side: each message once on
			// each side, whichever side publishes (an echo back over the
			// connection would come before the second batch).
			tb := netConsumer(t, b.addr, "topic://DUPLEX.T")
			ta := netConsumer(t, a.openwire, "topic://DUPLEX.T")
			waitNetworkConsumers(t, a.openwire, "topic://DUPLEX.T", 1)
			waitNetworkConsumers(t, b.addr, "topic://DUPLEX.T", 1)
			netSendP(t, b.addr, "topic://DUPLEX.T", "b", 10)
			netReceiveP(t, tb, "b", 10)
			netReceiveP(t, ta, "b", 10)
			netSendP(t, a.openwire, "topic://DUPLEX.T", "a", 10)
			netReceiveP(t, tb, "a", 10)
			netReceiveP(t, ta, "a", 10)
			for _, k := range []*client.Consumer{ta, tb} {
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				if m, err := k.Receive(ctx); err == nil {
					cancel()
					s, _, _ := m.Text(wire.DefaultLimits())
					t.Fatalf("a topic message came twice: %q", s)
				}
				cancel()
			}
		})
	}
}

// A consumer on A that goes takes its demand on B with it: the reverse
// bridge's subscription on B is removed (B's own advisory says so), and
// what is then sent to B stays there for B's consumer.
func TestConformanceNetworkDuplexFromActiveMQDemandRemoved(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, acceptor := range []string{"activemq", "wharf"} {
		t.Run("acceptor="+acceptor, func(t *testing.T) {
			a, b := startDuplexPair(t, acceptor, "")
			const dest = "queue://DUPLEX.GONE"
			adv := netConsumer(t, b.addr, "topic://ActiveMQ.Advisory.Consumer.Queue.DUPLEX.GONE")
			ka := dialOW(t, a.openwire, "")
			s, err := ka.Session(false)
			if err != nil {
				t.Fatal(err)
			}
			d, _ := client.ParseDestination(dest)
			k, err := s.Consumer(d, client.ConsumerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The reverse bridge's network consumer appears on B ...
			var netID string
			for netID == "" {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				m, err := adv.Receive(ctx)
				cancel()
				if err != nil {
					t.Fatalf("no network consumer on B for A's consumer: %v", err)
				}
				if ci, ok := m.DataStructure.(*wire.ConsumerInfo); ok && ci.NetworkSubscription {
					netID = ci.ConsumerId.String()
				}
			}
			// ... and goes when A's consumer does.
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				m, err := adv.Receive(ctx)
				cancel()
				if err != nil {
					t.Fatalf("B's network consumer %s stayed after A's consumer closed: %v", netID, err)
				}
				if ri, ok := m.DataStructure.(*wire.RemoveInfo); ok {
					if id, ok := ri.ObjectId.(*wire.ConsumerId); ok && id.String() == netID {
						break
					}
				}
			}
			// Nothing forwarded any more: B's own consumer gets all.
			netSend(t, b.addr, dest, 20)
			netReceive(t, netConsumer(t, b.addr, dest), 20)
		})
	}
}

// ActiveMQ, the initiator, stops (SIGTERM: an orderly shutdown) or dies
// (SIGKILL: the socket just closes): Wharf's reverse bridge stops with the
// connection (its log says so, and ActiveMQ.Advisory.NetworkBridge
// started=false, createdByDuplex), and its subscriptions are gone: what
// is sent to the queue A's consumer had asked for stays on Wharf, all of
// it for Wharf's consumer. A broker A that connects again is served.
func TestConformanceNetworkDuplexFromActiveMQStopped(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			a, b := startDuplexPair(t, "wharf", "")
			nb := netConsumer(t, b.addr, "topic://ActiveMQ.Advisory.NetworkBridge")
			const dest = "queue://DUPLEX.STOP"
			_ = netConsumer(t, a.openwire, dest)
			waitNetworkConsumers(t, b.addr, dest, 1)
			a.signal(sig, 143)
			b.p.waitLine(regexp.MustCompile(`"msg":"network bridge stopped".*"created_by_duplex":true`), procStartTimeout)
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				m, err := nb.Receive(ctx)
				cancel()
				if err != nil {
					t.Fatalf("no NetworkBridge advisory with started=false: %v", err)
				}
				props, err := m.Properties(wire.DefaultLimits())
				if err != nil {
					t.Fatal(err)
				}
				if props["started"] == false {
					if props["createdByDuplex"] != true {
						t.Fatalf("NetworkBridge advisory without createdByDuplex: %v", props)
					}
					break
				}
			}
			netSend(t, b.addr, dest, 20)
			netReceive(t, netConsumer(t, b.addr, dest), 20)

			// A broker A again, with the same connector: its reverse
			// bridge takes the same client ids here, which the old one
			// let go, and serves it.
			a2 := startActiveMQXML(t, amqNetworkXML("A", fmt.Sprintf(`<networkConnectors><networkConnector name="dup" duplex="true" uri="static:(tcp://%s)"/></networkConnectors>`, b.addr)))
			a2.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
			if got := jmsSplitURLs(t, b, 1, &netNode{kind: "activemq", addr: a2.openwire, p: a2.proc}); got[0] != 30 {
				t.Fatalf("the restarted A's consumer got %d of 30 sent to Wharf", got[0])
			}
		})
	}
}

// The reverse bridge takes its settings from the initiator's connector
// (BrokerInfo.networkProperties), as ActiveMQ's acceptor does: with
// conduitSubscriptions="false" on A's connector, B serves A's two queue
// consumers with one network consumer each, so B's own consumer and A's
// two get 10 of 30 each (with a conduit, 15 and 15 between A's two, as
// TestConformanceNetworkDuplexFromActiveMQ shows for one).
func TestConformanceNetworkDuplexFromActiveMQSettings(t *testing.T) {
	skipWithoutActiveMQ(t)
	var ref []int
	for _, acceptor := range []string{"activemq", "wharf"} {
		t.Run("acceptor="+acceptor, func(t *testing.T) {
			a, b := startDuplexPair(t, acceptor, `conduitSubscriptions="false"`)
			an := &netNode{kind: "activemq", addr: a.openwire, p: a.proc}
			got := jmsSplitURLs(t, b, 2, b, an, an)
			t.Logf("B %d, A %d + %d", got[0], got[1], got[2])
			if got[0] != 10 || got[1] != 10 || got[2] != 10 {
				t.Fatalf("B's consumer got %d, A's %d and %d; want 10 each", got[0], got[1], got[2])
			}
			if acceptor == "activemq" {
				ref = got
			} else if fmt.Sprint(got) != fmt.Sprint(ref) {
				t.Fatalf("counts %v, %v in the all-ActiveMQ pair", got, ref)
			}
		})
	}
}

// BenchmarkNetworkDuplexReverse measures the reverse direction of
// ActiveMQ's duplex connector: A (ActiveMQ 5.17) dials B duplex; a
// producer on B, a consumer on A, so B's reverse bridge forwards over the
// accepted connection. B is Wharf, with an ActiveMQ B in the same run as
// the reference. msgs/s is the rate at A; persistent queue messages are
// sent to B synchronously, non-persistent topic messages asynchronously.
//
//	go test -run '^$' -bench NetworkDuplexReverse -benchtime 3000x ./conformance
func BenchmarkNetworkDuplexReverse(b *testing.B) {
	skipWithoutActiveMQ(b)
	pairs := map[string][2]string{}
	pair := func(acceptor, attrs string) [2]string {
		if p, ok := pairs[acceptor+attrs]; ok {
			return p
		}
		bn := startNetNode(b, acceptor, "B", nil, "", "")
		a := startActiveMQXML(b, amqNetworkXML("A", fmt.Sprintf(`<networkConnectors><networkConnector name="dup" duplex="true" uri="static:(tcp://%s)" %s/></networkConnectors>`, bn.addr, attrs)))
		a.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
		pairs[acceptor+attrs] = [2]string{a.openwire, bn.addr}
		return pairs[acceptor+attrs]
	}
	seq := 0
	for _, tc := range []struct {
		name       string
		dest       string
		persistent bool
		attrs      string // of A's connector, which B's reverse bridge takes
	}{
		{"queue-persistent", "queue://DBENCH.Q", true, ""},
		// alwaysSyncSend is true by default in 5.17's
		// NetworkBridgeConfiguration: non-persistent messages are sent
		// synchronously too.
		{"topic-nonpersistent", "topic://DBENCH.T", false, ""},
		{"topic-nonpersistent-async", "topic://DBENCH.TA", false, `alwaysSyncSend="false"`},
	} {
		for _, acceptor := range []string{"activemq", "wharf"} {
			b.Run(tc.name+"/acceptor="+acceptor, func(b *testing.B) {
				p := pair(acceptor, tc.attrs)
				seq++
				dest := fmt.Sprintf("%s.%d", tc.dest, seq)
				k := netConsumer(b, p[0], dest)
				waitNetworkConsumers(b, p[1], dest, 1)
				c := dialOW(b, p[1], "")
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
