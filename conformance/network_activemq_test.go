package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Networks of brokers that mix Wharf and Debian's ActiveMQ 5.17: each a
// process of its own, bridged over OpenWire.

// amqNetworkXML is an ActiveMQ broker with one OpenWire connector on a
// loopback port of its choosing and the network connectors nc.
func amqNetworkXML(name, nc string) []byte {
	return fmt.Appendf(nil, `<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="%s" persistent="false" useJmx="false">
  %s
  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:0"/>
  </transportConnectors>
</broker>
</beans>`, name, nc)
}

func startWharfNetwork(t *testing.T, name, network string) *wharfProc {
	t.Helper()
	return startWharfYAML(t, fmt.Sprintf("broker_name: %s\n", name)+fmt.Sprintf(wharfConfig, filepath.Join(t.TempDir(), "kahadb"), "")+network)
}

func netConsumer(t *testing.T, addr, dest string) *client.Consumer {
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

func netSend(t *testing.T, addr, dest string, n int) {
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
		if err := p.Send(context.Background(), client.NewTextMessage(fmt.Sprintf("m%d", i)), true); err != nil {
			t.Fatal(err)
		}
	}
}

func netReceive(t *testing.T, k *client.Consumer, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := k.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d of %d: %v", i, n, err)
		}
		if s, _, _ := m.Text(wire.DefaultLimits()); s != fmt.Sprintf("m%d", i) {
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
