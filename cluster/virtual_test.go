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

// useVirtualDestSubsOnCreation on B (with useVirtualDestSubs): B's
// virtual topic consumer queue and the composite's forwardTo queue are
// demand on A for the virtual destinations from their creation, with no
// consumer on them. What is published to the topics on A is forwarded and
// waits in B's queues; after B restarts, its queues recovered from KahaDB
// are demand again. Without the option, the queues are no demand and A
// forwards nothing until a topic consumer on B lets an end marker
// through.
func TestClusterVirtualDestSubsOnCreation(t *testing.T) {
	const bCfg = `use_virtual_dest_subs: true
use_virtual_dest_subs_on_creation: %v
destination_interceptors:
  virtual_topics: [{name: "VirtualTopic.>", prefix: "Consumer.*."}]
  composites: [{topic: include.bar, forward_only: false, forward_to: [{queue: include.bar.forward}]}]
`
	cases := []struct{ topic, queue string }{
		{"topic://VirtualTopic.Orders", "queue://Consumer.A.VirtualTopic.Orders"},
		{"topic://include.bar", "queue://include.bar.forward"},
	}
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("onCreation=%v", on), func(t *testing.T) {
			b := startNode(t, "B", 0, fmt.Sprintf(bCfg, on))
			// The queues exist on B before any bridge, with no consumer.
			for _, c := range cases {
				b.send(c.queue, "pre", 1, true)
			}
			a := startNode(t, "A", 0, network(static(b),
				"use_virtual_dest_subs: true",
				`dynamically_included_destinations: [{topic: "VirtualTopic.>"}, {topic: include.bar}, {topic: T.BAR}]`))
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
			if !on {
				// Barrier: A has read B's advisories up to a later consumer.
				b.consumer("topic://T.BAR", client.ConsumerOptions{})
				a.waitDemand("topic://T.BAR", 1)
				for _, c := range cases {
					if n := a.countLog(`"msg":"network demand added".*"dest":"` + c.topic + `"`); n != 0 {
						t.Fatalf("A has %d demands for %s with no consumer on B", n, c.topic)
					}
					a.send(c.topic, "v", 10, true)
					b.consumer(c.topic, client.ConsumerOptions{})
					a.waitDemand(c.topic, 1)
					a.send(c.topic, "end", 1, true)
					k := b.consumer(c.queue, client.ConsumerOptions{})
					if got, want := receive(t, k, 2), []string{"pre0", "end0"}; !slices.Equal(got, want) {
						t.Fatalf("B's %s got %v, want %v", c.queue, got, want)
					}
				}
				return
			}
			// expect takes want from B's queue with a consumer that then
			// goes (A's bridge forwards topic messages from a non-durable
			// subscription: those still in flight when B stops are gone,
			// as in ActiveMQ, so each batch is received before B stops).
			expect := func(c struct{ topic, queue string }, want []string) {
				t.Helper()
				conn := b.dial()
				k := b.consumerAs(conn, c.queue, client.ConsumerOptions{})
				if got := receive(t, k, len(want)); !slices.Equal(got, want) {
					t.Fatalf("B's %s got %v, want %v", c.queue, got, want)
				}
				if err := conn.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range cases {
				a.waitDemand(c.topic, 1)
				a.send(c.topic, "v", 10, true)
				expect(c, append([]string{"pre0"}, seq("v", 10)...))
			}
			// B restarts: A's bridge comes back, and the queues recovered
			// from B's store, with no consumer, are demand again (the
			// consumers above each added and removed a demand of their own).
			before := map[string]int{}
			for _, c := range cases {
				before[c.topic] = a.countLog(`"msg":"network demand added".*"dest":"` + c.topic + `"`)
			}
			b.restart()
			for _, c := range cases {
				a.waitDemand(c.topic, before[c.topic]+1)
				a.send(c.topic, "w", 5, true)
				expect(c, seq("w", 5))
			}
		})
	}
}
