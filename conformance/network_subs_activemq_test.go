package conformance

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Duplicate suppression and virtual destination demand across networks
// mixing Wharf and ActiveMQ 5.17, each against the same topology
// all-ActiveMQ (run first, the reference).

// triNode starts broker name (kind wharf or activemq) bridged to peers
// with networkTTL 2 and the connector attributes given in both spellings.
func triNode(t *testing.T, kind, name string, peers []string, amqAttrs, wharfYAML string) string {
	t.Helper()
	if kind == "wharf" {
		nc := ""
		if len(peers) > 0 {
			nc = "network_connectors:\n  - uri: \"static:(" + joinTCP(peers) + ")\"\n    network_ttl: 2\n" + wharfYAML
		}
		w := startWharfNetwork(t, name, nc)
		for range peers {
			w.waitLine(regexp.MustCompile(`"msg":"network bridge started"`), procStartTimeout)
		}
		return w.openwire
	}
	nc := ""
	if len(peers) > 0 {
		nc = fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(%s)" networkTTL="2" %s/></networkConnectors>`, joinTCP(peers), amqAttrs)
	}
	a := startActiveMQXML(t, amqNetworkXML(name, nc))
	for range peers {
		a.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	}
	return a.openwire
}

func joinTCP(addrs []string) string {
	var b bytes.Buffer
	for i, a := range addrs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("tcp://" + a)
	}
	return b.String()
}

// A triangle A->B, A->C, B->C (networkTTL 2): C's topic consumer is demand
// on A directly and through B. With suppressDuplicateTopicSubscriptions
// (ActiveMQ's default) A serves it once and each message published on A
// reaches C's consumer once; with it false, twice. The consumer is
// Wharf's OpenWire client, which has no duplicate audit, so copies are
// counted as the brokers deliver them. A Wharf between ActiveMQ brokers
// (B) must advertise C's original consumer (networkConsumerPath) for
// ActiveMQ's A to see the duplicate.
func TestConformanceNetworkSuppressDuplicatesMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, suppress := range []bool{true, false} {
		copies := 1
		if !suppress {
			copies = 2
		}
		for _, kinds := range [][3]string{
			{"activemq", "activemq", "activemq"},
			{"wharf", "activemq", "activemq"},
			{"activemq", "wharf", "activemq"},
			{"activemq", "activemq", "wharf"},
		} {
			t.Run(fmt.Sprintf("suppress=%v/A=%s,B=%s,C=%s", suppress, kinds[0], kinds[1], kinds[2]), func(t *testing.T) {
				c := triNode(t, kinds[2], "C", nil, "", "")
				b := triNode(t, kinds[1], "B", []string{c}, "", "")
				a := triNode(t, kinds[0], "A", []string{b, c},
					fmt.Sprintf(`suppressDuplicateTopicSubscriptions="%v"`, suppress),
					fmt.Sprintf("    suppress_duplicate_topic_subscriptions: %v\n", suppress))
				kt := netConsumer(t, c, "topic://TRI.T")
				// Barrier: queue duplicates are not suppressed (the default),
				// so once A has C's queue consumer as demand from both
				// bridges, both have read past the topic consumer.
				netConsumer(t, c, "queue://TRI.CQ")
				waitNetworkConsumers(t, a, "queue://TRI.CQ", 2)
				const n = 10
				nonPersistentSend(t, a, "topic://TRI.T", "t", n)
				count := map[string]int{}
				for range n * copies {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					m, err := kt.Receive(ctx)
					cancel()
					if err != nil {
						t.Fatalf("C's consumer after %v: %v", count, err)
					}
					s, _, _ := m.Text(wire.DefaultLimits())
					count[s]++
				}
				for i := range n {
					if s := fmt.Sprintf("t%d", i); count[s] != copies {
						t.Fatalf("C's consumer got %s %d times, want %d: %v", s, count[s], copies, count)
					}
				}
				// Nothing more on any path: the next ones are the marker.
				nonPersistentSend(t, a, "topic://TRI.T", "end", 1)
				for range copies {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					m, err := kt.Receive(ctx)
					cancel()
					if err != nil {
						t.Fatal(err)
					}
					if s, _, _ := m.Text(wire.DefaultLimits()); s != "end0" {
						t.Fatalf("after %d messages C's consumer got %q, want end0", n*copies, s)
					}
				}
			})
		}
	}
}

func nonPersistentSend(t *testing.T, addr, dest, prefix string, n int) {
	t.Helper()
	c := dialOW(t, addr, "")
	s, err := c.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := client.ParseDestination(dest)
	p, err := s.Producer(d)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		m := client.NewTextMessage(fmt.Sprintf("%s%d", prefix, i))
		m.Persistent = false
		if err := p.Send(context.Background(), m, true); err != nil {
			t.Fatal(err)
		}
	}
}

// Seed 001's virtual topic across the network: B (useVirtualDestSubs on
// the broker) has a consumer on the consumer queue
// Consumer.A.VirtualTopic.Orders only; A's connector (useVirtualDestSubs,
// VirtualTopic.> dynamically included) makes it demand for the topic
// VirtualTopic.Orders, so the 10 messages published there on A reach
// B's consumer, in every pairing as in the all-ActiveMQ one; when that
// consumer goes, A's demand goes too.
func TestConformanceNetworkVirtualDestSubsMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, pair := range [][2]string{{"activemq", "activemq"}, {"wharf", "activemq"}, {"activemq", "wharf"}} {
		t.Run(pair[0]+"->"+pair[1], func(t *testing.T) {
			bAddr := startVirtualB(t, pair[1], "use_virtual_dest_subs: true\n", `useVirtualDestSubs="true"`)
			aAddr := startVirtualA(t, pair[0], bAddr)
			k := netConsumer(t, bAddr, "queue://Consumer.A.VirtualTopic.Orders")
			waitNetworkConsumers(t, aAddr, "topic://VirtualTopic.Orders", 1)
			netSendP(t, aAddr, "topic://VirtualTopic.Orders", "v", 10)
			netReceiveP(t, k, "v", 10)
			// The consumer goes: so does A's network consumer for the
			// topic (the peer's RemoveInfo on the virtual destination
			// advisory topic).
			adv := netConsumer(t, aAddr, "topic://ActiveMQ.Advisory.Consumer.Topic.VirtualTopic.Orders")
			live := map[string]bool{}
			closed := false
			for !closed || len(live) > 0 {
				if !closed && len(live) == 1 {
					if err := k.Close(); err != nil {
						t.Fatal(err)
					}
					closed = true
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				m, err := adv.Receive(ctx)
				cancel()
				if err != nil {
					t.Fatalf("A's network consumers on VirtualTopic.Orders %v (consumer closed: %v): %v", live, closed, err)
				}
				switch x := m.DataStructure.(type) {
				case *wire.ConsumerInfo:
					if x.NetworkSubscription {
						live[x.ConsumerId.String()] = true
					}
				case *wire.RemoveInfo:
					if id, ok := x.ObjectId.(*wire.ConsumerId); ok {
						delete(live, id.String())
					}
				}
			}
		})
	}
}

// useVirtualDestSubsOnCreation on B (with useVirtualDestSubs): B's
// consumer queue Consumer.A.VirtualTopic.Orders exists with no consumer
// (a message sent to it made it) and is demand for VirtualTopic.Orders on
// A from the start, so the 10 messages published there on A wait in B's
// queue for a consumer that comes later, in every pairing as in the
// all-ActiveMQ one.
func TestConformanceNetworkVirtualDestSubsOnCreationMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	const queue = "queue://Consumer.A.VirtualTopic.Orders"
	for _, pair := range [][2]string{{"activemq", "activemq"}, {"activemq", "wharf"}, {"wharf", "activemq"}} {
		t.Run(pair[0]+"->"+pair[1], func(t *testing.T) {
			bAddr := startVirtualB(t, pair[1], "use_virtual_dest_subs: true\nuse_virtual_dest_subs_on_creation: true\n",
				`useVirtualDestSubs="true" useVirtualDestSubsOnCreation="true"`)
			netSendP(t, bAddr, queue, "pre", 1)
			aAddr := startVirtualA(t, pair[0], bAddr)
			waitNetworkConsumers(t, aAddr, "topic://VirtualTopic.Orders", 1)
			netSendP(t, aAddr, "topic://VirtualTopic.Orders", "v", 10)
			k := netConsumer(t, bAddr, queue)
			netReceiveP(t, k, "pre", 1)
			netReceiveP(t, k, "v", 10)
		})
	}
}

// startVirtualB starts broker B of the virtual destination tests: Wharf
// ("wharf") with wharfYAML, or ActiveMQ with amqAttrs on its <broker>;
// it returns B's OpenWire address.
func startVirtualB(t *testing.T, kind, wharfYAML, amqAttrs string) string {
	t.Helper()
	if kind == "wharf" {
		return startWharfNetwork(t, "B", wharfYAML).openwire
	}
	xml := bytes.Replace(amqNetworkXML("B", ""), []byte(`brokerName="B"`), []byte(`brokerName="B" `+amqAttrs), 1)
	return startActiveMQXML(t, xml).openwire
}

// startVirtualA starts broker A (kind "wharf" or "activemq") with a
// network connector to bAddr, useVirtualDestSubs on and VirtualTopic.>
// dynamically included, waits for its bridge, and returns A's OpenWire
// address.
func startVirtualA(t *testing.T, kind, bAddr string) string {
	t.Helper()
	if kind == "wharf" {
		w := startWharfNetwork(t, "A", fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)\"\n    use_virtual_dest_subs: true\n    dynamically_included_destinations: [{topic: \"VirtualTopic.>\"}]\n", bAddr))
		w.waitLine(regexp.MustCompile(`"msg":"network bridge started"`), procStartTimeout)
		return w.openwire
	}
	a := startActiveMQXML(t, amqNetworkXML("A", fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)" useVirtualDestSubs="true">
  <dynamicallyIncludedDestinations><topic physicalName="VirtualTopic.>"/></dynamicallyIncludedDestinations>
</networkConnector></networkConnectors>`, bAddr)))
	a.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	return a.openwire
}
