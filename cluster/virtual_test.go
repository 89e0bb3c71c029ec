package cluster_test

import (
	"fmt"
	"slices"
	"testing"

	"wharf/protocols/openwire/client"
)

// Seed 001's virtual destinations across the network. B has
// useVirtualDestSubs, the default virtual topic and the seed's composite
// topic include.bar forwarding to queue include.bar.forward; A bridges to
// B with VirtualTopic.> and include.bar dynamically included. B's consumers
// are on the consumer queue Consumer.A.VirtualTopic.Orders and on
// include.bar.forward, never on the topics. With the connector's
// useVirtualDestSubs they are demand on A for the topics, and what is
// published to them on A reaches B's queues; without, A has no demand and
// those messages are not forwarded (a later direct topic consumer on B
// lets an end marker through, which arrives first).
func TestClusterVirtualDestSubs(t *testing.T) {
	const bCfg = `use_virtual_dest_subs: true
destination_interceptors:
  virtual_topics: [{name: "VirtualTopic.>", prefix: "Consumer.*."}]
  composites: [{topic: include.bar, forward_only: false, forward_to: [{queue: include.bar.forward}]}]
`
	for _, use := range []bool{true, false} {
		t.Run(fmt.Sprintf("useVirtualDestSubs=%v", use), func(t *testing.T) {
			b := startNode(t, "B", 0, bCfg)
			a := startNode(t, "A", 0, network(static(b),
				fmt.Sprintf("use_virtual_dest_subs: %v", use),
				`dynamically_included_destinations: [{topic: "VirtualTopic.>"}, {topic: include.bar}, {topic: T.BAR}]`))
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
			cases := []struct{ topic, queue string }{
				{"topic://VirtualTopic.Orders", "queue://Consumer.A.VirtualTopic.Orders"},
				{"topic://include.bar", "queue://include.bar.forward"},
			}
			var ks []*client.Consumer
			for _, c := range cases {
				ks = append(ks, b.consumer(c.queue, client.ConsumerOptions{}))
			}
			// Barrier: A has read B's advisories up to a later consumer.
			b.consumer("topic://T.BAR", client.ConsumerOptions{})
			a.waitDemand("topic://T.BAR", 1)
			for i, c := range cases {
				n := a.countLog(`"msg":"network demand added".*"dest":"` + c.topic + `"`)
				if use && n != 1 || !use && n != 0 {
					t.Fatalf("A has %d demands for %s", n, c.topic)
				}
				a.send(c.topic, "v", 10, true)
				want := seq("v", 10)
				if !use {
					// A direct topic consumer on B is demand either way.
					b.consumer(c.topic, client.ConsumerOptions{})
					a.waitDemand(c.topic, 1)
					a.send(c.topic, "end", 1, true)
					want = []string{"end0"}
				}
				if got := receive(t, ks[i], len(want)); !slices.Equal(got, want) {
					t.Fatalf("B's consumer on %s got %v, want %v", c.queue, got, want)
				}
			}
			if use {
				// The consumer goes: so does A's demand for the topic.
				if err := ks[0].Close(); err != nil {
					t.Fatal(err)
				}
				a.waitLog(`"msg":"network demand removed".*"dest":"topic://VirtualTopic.Orders"`)
			}
		})
	}
}
