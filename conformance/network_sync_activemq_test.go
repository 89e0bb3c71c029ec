package conformance

import (
	"fmt"
	"regexp"
	"testing"

	"wharf/protocols/openwire/client"
)

// syncDurableSubs across a network mixing Wharf and ActiveMQ 5.17, the
// all-ActiveMQ pair first as the reference. B has a durable subscription
// on NET.SYNC whose subscriber is offline when A's bridge (syncDurableSubs,
// NET.SYNC dynamically included) connects: B's BrokerSubscriptionInfo
// (ActiveMQ's or Wharf's) makes A's bridge subscribe NC-DS_A_NET.SYNC at
// once, so the 10 messages published on A meanwhile reach the subscriber
// when it returns, in every pairing as in the reference.
func TestConformanceNetworkSyncDurableSubsMixed(t *testing.T) {
	skipWithoutActiveMQ(t)
	const topic = "topic://NET.SYNC"
	for _, pair := range [][2]string{{"activemq", "activemq"}, {"wharf", "activemq"}, {"activemq", "wharf"}} {
		t.Run(pair[0]+"->"+pair[1], func(t *testing.T) {
			var bAddr string
			if pair[1] == "wharf" {
				bAddr = startWharfNetwork(t, "B", "").openwire
			} else {
				bAddr = startActiveMQXML(t, amqNetworkXML("B", "")).openwire
			}
			sub := func() (*client.Conn, *client.Consumer) {
				c := dialOW(t, bAddr, "sync-client")
				s, err := c.Session(false)
				if err != nil {
					t.Fatal(err)
				}
				d, _ := client.ParseDestination(topic)
				k, err := s.Consumer(d, client.ConsumerOptions{DurableName: "D1"})
				if err != nil {
					t.Fatal(err)
				}
				return c, k
			}
			c, k := sub()
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			var aAddr string
			if pair[0] == "wharf" {
				w := startWharfNetwork(t, "A", fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)\"\n    sync_durable_subs: true\n    dynamically_included_destinations: [{topic: NET.SYNC}]\n", bAddr))
				w.waitLine(regexp.MustCompile(`"msg":"network bridge synchronised durable subscriptions".*"subscriptions":1`), procStartTimeout)
				aAddr = w.openwire
			} else {
				a := startActiveMQXML(t, amqNetworkXML("A", fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)" syncDurableSubs="true">
  <dynamicallyIncludedDestinations><topic physicalName="NET.SYNC"/></dynamicallyIncludedDestinations>
</networkConnector></networkConnectors>`, bAddr)))
				a.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
				aAddr = a.openwire
			}
			// A's NC-DS_ subscription, a network consumer on A, made from
			// B's BrokerSubscriptionInfo alone: its subscriber is offline.
			waitNetworkConsumers(t, aAddr, topic, 1)
			netSendP(t, aAddr, topic, "off", 10)
			c, k = sub()
			// All 10, in order, as in the reference (which fails the same
			// way if ActiveMQ does not deliver them).
			netReceiveP(t, k, "off", 10)
		})
	}
}
