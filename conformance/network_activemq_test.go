package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Networks of brokers that mix Wharf and Debian's ActiveMQ 5.17: each a
// process of its own, bridged over OpenWire.

// amqNetworkXML is an ActiveMQ broker with one OpenWire connector on a
// loopback port of its choosing and the network connectors nc;
// persistent, KahaDB with its defaults in its data directory, as the
// Wharf brokers of these tests are.
func amqNetworkXML(name, nc string) []byte {
	return fmt.Appendf(nil, `<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
<bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer"/>
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="%s" persistent="true" useJmx="false" dataDirectory="${activemq.data}">
  %s
  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:0"/>
  </transportConnectors>
</broker>
</beans>`, name, nc)
}

func startWharfNetwork(t testing.TB, name, network string) *wharfProc {
	t.Helper()
	return startWharfYAML(t, fmt.Sprintf("broker_name: %s\n", name)+fmt.Sprintf(wharfConfig, filepath.Join(t.TempDir(), "kahadb"), "")+network)
}

func netConsumer(t testing.TB, addr, dest string) *client.Consumer {
	t.Helper()
	c := dialOW(t, addr, "")
	s, err := c.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := client.ParseDestination(dest)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Consumer(d, client.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func netSend(t testing.TB, addr, dest string, n int) {
	t.Helper()
	netSendP(t, addr, dest, "m", n)
}

// netSendP sends n messages "<prefix>0".. to dest.
func netSendP(t testing.TB, addr, dest, prefix string, n int) {
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
		if err := p.Send(context.Background(), client.NewTextMessage(fmt.Sprintf("%s%d", prefix, i)), true); err != nil {
			t.Fatal(err)
		}
	}
}

func netReceive(t testing.TB, k *client.Consumer, n int) {
	t.Helper()
	netReceiveP(t, k, "m", n)
}

// netReceiveP receives n messages and checks they are "<prefix>0".. in
// order.
func netReceiveP(t testing.TB, k *client.Consumer, prefix string, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := k.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d of %d: %v", i, n, err)
		}
		if s, _, _ := m.Text(wire.DefaultLimits()); s != fmt.Sprintf("%s%d", prefix, i) {
			t.Fatalf("message %d is %q", i, s)
		}
	}
}

// Wharf -> ActiveMQ: Wharf's bridge subscribes to ActiveMQ's consumer
// advisories and forwards what a consumer on ActiveMQ asks for.
func TestConformanceNetworkWharfToActiveMQ(t *testing.T) {
	amq := startActiveMQXML(t, amqNetworkXML("amq", ""))
	w := startWharfNetwork(t, "wharf", fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)\"\n", amq.openwire))
	w.waitLine(regexp.MustCompile(`"msg":"network bridge started".*"remote_broker":"amq"`), procStartTimeout)
	for _, dest := range []string{"queue://NET.Q", "topic://NET.T"} {
		k := netConsumer(t, amq.openwire, dest)
		w.waitLine(regexp.MustCompile(`"msg":"network demand added".*"dest":"`+regexp.QuoteMeta(dest)+`"`), procStartTimeout)
		netSend(t, w.openwire, dest, 50)
		netReceive(t, k, 50)
	}
}

// ActiveMQ -> Wharf: ActiveMQ's own bridge subscribes to Wharf's consumer
// advisories and forwards what a consumer on Wharf asks for.
func TestConformanceNetworkActiveMQToWharf(t *testing.T) {
	w := startWharfNetwork(t, "wharf", "")
	amq := startActiveMQXML(t, amqNetworkXML("amq", fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)"/></networkConnectors>`, w.openwire)))
	amq.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	w.waitLine(regexp.MustCompile(`"msg":"network bridge connected".*"remote_broker":"amq"`), procStartTimeout)
	for _, dest := range []string{"queue://NET.Q", "topic://NET.T"} {
		k := netConsumer(t, w.openwire, dest)
		// No event tells when ActiveMQ's bridge has made its demand
		// subscription; a queue message sent before it stays on
		// ActiveMQ until it does, so the queue case needs no wait. For
		// the topic, wait for the bridge's consumer on ActiveMQ through
		// its own advisory.
		if dest == "topic://NET.T" {
			adv := netConsumer(t, amq.openwire, "topic://ActiveMQ.Advisory.Consumer.Topic.NET.T")
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				m, err := adv.Receive(ctx)
				cancel()
				if err != nil {
					t.Fatalf("no network consumer on ActiveMQ for %s: %v", dest, err)
				}
				if ci, ok := m.DataStructure.(*wire.ConsumerInfo); ok && ci.NetworkSubscription {
					break
				}
			}
		}
		netSend(t, amq.openwire, dest, 50)
		netReceive(t, k, 50)
	}
}

// netNode is one broker of a mixed network: Wharf or ActiveMQ.
type netNode struct {
	kind string // "wharf" or "activemq"
	addr string // OpenWire host:port
	p    *proc
}

// startNetNode starts broker name of kind with a network connector to
// peer when peer is not nil; attrs are the connector's attributes in
// ActiveMQ's XML spelling (conduitSubscriptions="false" ...), yaml the same
// in Wharf's YAML. It returns once a bridge to peer is up.
func startNetNode(t testing.TB, kind, name string, peer *netNode, attrs, yaml string) *netNode {
	t.Helper()
	if kind == "wharf" {
		nc := ""
		if peer != nil {
			nc = fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)\"\n%s", peer.addr, yaml)
		}
		w := startWharfNetwork(t, name, nc)
		if peer != nil {
			w.waitLine(regexp.MustCompile(`"msg":"network bridge started"`), procStartTimeout)
		}
		return &netNode{kind: kind, addr: w.openwire, p: w.proc}
	}
	nc := ""
	if peer != nil {
		nc = fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)" %s/></networkConnectors>`, peer.addr, attrs)
	}
	a := startActiveMQXML(t, amqNetworkXML(name, nc))
	if peer != nil {
		a.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	}
	return &netNode{kind: kind, addr: a.openwire, p: a.proc}
}

// waitNetworkConsumers waits until the broker at addr has n network
// consumers on dest ("queue://Q"), as its consumer advisories say: the
// bridges' demand subscriptions, whoever runs them.
func waitNetworkConsumers(t testing.TB, addr, dest string, n int) {
	t.Helper()
	d, _ := client.ParseDestination(dest)
	kind := "Queue."
	if d.Kind == wire.TypeActiveMQTopic {
		kind = "Topic."
	}
	adv := netConsumer(t, addr, "topic://ActiveMQ.Advisory.Consumer."+kind+d.PhysicalName)
	defer adv.Close()
	live := map[string]bool{}
	for len(live) < n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := adv.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: %d of %d network consumers on %s: %v", addr, len(live), n, dest, err)
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
}

// jmsSplit runs seed 001's conduit example on brokers a (one consumer)
// and b (two consumers), a bridged to b, with ActiveMQ's JMS client: 30
// persistent messages sent to a's Q.TEST. It returns how many each
// consumer got.
func jmsSplit(t *testing.T, a, b *netNode, demands int) [3]int {
	t.Helper()
	got := jmsSplitURLs(t, a, demands, a, b, b)
	return [3]int{got[0], got[1], got[2]}
}

// jmsSplitURLs sends 30 persistent messages to a's Q.TEST once a has
// demands network consumers on it and returns how many each consumer,
// one per node of on, got.
func jmsSplitURLs(t *testing.T, a *netNode, demands int, on ...*netNode) []int {
	t.Helper()
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	java := func(args ...string) *exec.Cmd {
		return exec.Command("java", append([]string{"-cp", classes + string(os.PathListSeparator) + cp, "wharf.conformance.NetClient"}, args...)...)
	}
	args := []string{"split", "queue://Q.TEST", "30"}
	for _, n := range on {
		args = append(args, "tcp://"+n.addr)
	}
	split := startProc(t, "split", java(args...))
	split.waitLine(regexp.MustCompile(`^READY$`), procStartTimeout)
	waitNetworkConsumers(t, a.addr, "queue://Q.TEST", demands)
	prod := startProc(t, "produce", java("produce", "queue://Q.TEST", "30", "true", "tcp://"+a.addr))
	prod.waitLine(regexp.MustCompile(`^SENT 30$`), procStartTimeout)
	m := split.waitLine(regexp.MustCompile(`^(COUNTS|TIMEOUT)((?: \d+)+)$`), procStartTimeout)
	if m[1] != "COUNTS" {
		t.Fatalf("split: %s; log:\n%s", m[0], split.log.tail(20))
	}
	fields := strings.Fields(m[2])
	lines, _ := split.log.snapshot()
	for _, l := range lines {
		if strings.HasPrefix(l, "DUP ") {
			t.Errorf("split: %s", l)
		}
	}
	out := make([]int, len(fields))
	for i, f := range fields {
		out[i], _ = strconv.Atoi(f)
	}
	if len(out) != len(on) {
		t.Fatalf("split: %s, want %d counts", m[0], len(on))
	}
	return out
}

// Seed 001's conduit example on every pairing of Wharf and ActiveMQ, the
// all-ActiveMQ network first as the reference: with conduitSubscriptions
// A's consumer gets 15 and B's two 15 between them; without, 10 each.
func TestConformanceNetworkConduitSplitMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, conduit := range []bool{true, false} {
		demands, wantA := 1, 15
		if !conduit {
			demands, wantA = 2, 10
		}
		var ref [3]int
		for _, pair := range [][2]string{{"activemq", "activemq"}, {"wharf", "activemq"}, {"activemq", "wharf"}} {
			t.Run(fmt.Sprintf("conduit=%v/%s->%s", conduit, pair[0], pair[1]), func(t *testing.T) {
				b := startNetNode(t, pair[1], "B", nil, "", "")
				a := startNetNode(t, pair[0], "A", b, fmt.Sprintf(`conduitSubscriptions="%v"`, conduit), fmt.Sprintf("    conduit_subscriptions: %v\n", conduit))
				got := jmsSplit(t, a, b, demands)
				t.Logf("A %d, B %d + %d", got[0], got[1], got[2])
				if got[0] != wantA || got[1]+got[2] != 30-wantA {
					t.Fatalf("A's consumer got %d, B's %d and %d; want %d on A, %d on B", got[0], got[1], got[2], wantA, 30-wantA)
				}
				if pair[0] == "activemq" && pair[1] == "activemq" {
					ref = got
				} else if ref[0] != 0 && got[0] != ref[0] {
					t.Fatalf("A's consumer got %d, %d in the all-ActiveMQ network", got[0], ref[0])
				}
			})
		}
	}
}

// A three-broker line A->B->C mixing Wharf and ActiveMQ, every connector
// with networkTTL 2: a JMS consumer on C gets what a JMS producer sends to
// A, as in the all-ActiveMQ line (run first): C's consumer is demand two
// hops from A, which networkTTL 2 lets through (cluster's
// TestClusterLineTTL shows networkTTL 1 stopping it).
func TestConformanceNetworkLineMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	java := func(args ...string) *exec.Cmd {
		return exec.Command("java", append([]string{"-cp", classes + string(os.PathListSeparator) + cp, "wharf.conformance.NetClient"}, args...)...)
	}
	for _, line := range [][3]string{
		{"activemq", "activemq", "activemq"},
		{"wharf", "activemq", "wharf"},
		{"activemq", "wharf", "activemq"},
	} {
		t.Run(strings.Join(line[:], "->"), func(t *testing.T) {
			c := startNetNode(t, line[2], "C", nil, "", "")
			b := startNetNode(t, line[1], "B", c, `networkTTL="2"`, "    network_ttl: 2\n")
			a := startNetNode(t, line[0], "A", b, `networkTTL="2"`, "    network_ttl: 2\n")
			split := startProc(t, "consume", java("split", "queue://LINE", "20", "tcp://"+c.addr))
			split.waitLine(regexp.MustCompile(`^READY$`), procStartTimeout)
			waitNetworkConsumers(t, b.addr, "queue://LINE", 1)
			waitNetworkConsumers(t, a.addr, "queue://LINE", 1)
			prod := startProc(t, "produce", java("produce", "queue://LINE", "20", "true", "tcp://"+a.addr))
			prod.waitLine(regexp.MustCompile(`^SENT 20$`), procStartTimeout)
			m := split.waitLine(regexp.MustCompile(`^(COUNTS|TIMEOUT) (\d+)$`), procStartTimeout)
			if m[0] != "COUNTS 20" {
				t.Fatalf("C's consumer: %s, want COUNTS 20", m[0])
			}
		})
	}
}

// decreaseNetworkConsumerPriority on A's connector: the bridge's consumer
// ranks below A's own, which gets all 30 messages; the all-ActiveMQ pair
// (run first) does the same.
func TestConformanceNetworkDecreasePriorityMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, pair := range [][2]string{{"activemq", "activemq"}, {"wharf", "activemq"}, {"activemq", "wharf"}} {
		t.Run(pair[0]+"->"+pair[1], func(t *testing.T) {
			b := startNetNode(t, pair[1], "B", nil, "", "")
			a := startNetNode(t, pair[0], "A", b, `decreaseNetworkConsumerPriority="true"`, "    decrease_network_consumer_priority: true\n")
			got := jmsSplitURLs(t, a, 1, a, b)
			if got[0] != 30 || got[1] != 0 {
				t.Fatalf("A's consumer got %d, B's %d; want 30 and 0", got[0], got[1])
			}
		})
	}
}

// Wharf's duplex bridge to ActiveMQ: both ways over Wharf's one
// connection, JMS producers and consumers, each topic message once on each
// side.
func TestConformanceNetworkWharfDuplexToActiveMQ(t *testing.T) {
	amq := startActiveMQXML(t, amqNetworkXML("amq", ""))
	w := startWharfNetwork(t, "wharf", fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)\"\n    duplex: true\n", amq.openwire))
	w.waitLine(regexp.MustCompile(`"msg":"network bridge started".*"remote_broker":"amq".*"duplex":true`), procStartTimeout)
	wn := &netNode{kind: "wharf", addr: w.openwire}
	an := &netNode{kind: "activemq", addr: amq.openwire}
	// Into Wharf from ActiveMQ: the demand is Wharf's consumer, served by
	// a network consumer on ActiveMQ.
	got := jmsSplitURLs(t, an, 1, wn)
	if got[0] != 30 {
		t.Fatalf("Wharf's consumer got %d of 30 sent to ActiveMQ", got[0])
	}
	// And the other way.
	got = jmsSplitURLs(t, wn, 1, an)
	if got[0] != 30 {
		t.Fatalf("ActiveMQ's consumer got %d of 30 sent to Wharf", got[0])
	}
	// A topic with a consumer on each side: a message published on
	// either reaches both once. ActiveMQ applies the NetworkBridgeFilter
	// of Wharf's consumer on it, so Wharf's own messages do not come back.
	tw := netConsumer(t, w.openwire, "topic://DUP.T")
	ta := netConsumer(t, amq.openwire, "topic://DUP.T")
	waitNetworkConsumers(t, amq.openwire, "topic://DUP.T", 1)
	waitNetworkConsumers(t, w.openwire, "topic://DUP.T", 1)
	netSendP(t, w.openwire, "topic://DUP.T", "w", 10)
	netReceiveP(t, tw, "w", 10)
	netReceiveP(t, ta, "w", 10)
	// An echo of Wharf's messages would come before these.
	netSendP(t, amq.openwire, "topic://DUP.T", "a", 10)
	netReceiveP(t, tw, "a", 10)
	netReceiveP(t, ta, "a", 10)
}
