package cluster_test

import (
	"fmt"
	"slices"
	"testing"

	"wharf/protocols/openwire/client"
)

// A triangle with two paths from A to C: A bridges to B and to C, B to C,
// every connector with networkTTL 2. A consumer on C is demand on A twice,
// directly (brokerPath [C]) and through B's network subscription
// ([C,B]). Without duplicate suppression A serves both: A has two
// network consumers for C's one on the queue and on the topic, and each
// topic message published on A reaches C's consumer twice. With
// suppressDuplicateTopicSubscriptions (the default) and
// suppressDuplicateQueueSubscriptions A serves it once and each message
// arrives once; with decreaseNetworkConsumerPriority the demand through B
// (priority -8) always loses to the direct one (-5), whichever came
// first.
func TestClusterSuppressDuplicateSubscriptions(t *testing.T) {
	for _, tc := range []struct {
		name               string
		suppress, decrease bool
	}{
		{"suppressed", true, false},
		{"not suppressed", false, false},
		{"suppressed, shorter path preferred", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startNode(t, "C", 0, "")
			b := startNode(t, "B", 0, network(static(c), "network_ttl: 2"))
			a := startNode(t, "A", 0, network(static(b, c), "network_ttl: 2",
				fmt.Sprintf("suppress_duplicate_topic_subscriptions: %v", tc.suppress),
				fmt.Sprintf("suppress_duplicate_queue_subscriptions: %v", tc.suppress),
				fmt.Sprintf("decrease_network_consumer_priority: %v", tc.decrease)))
			b.waitLog(`"msg":"network bridge started".*"remote_broker":"C"`)
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"C"`)

			kt := c.consumer("topic://TRI.T", client.ConsumerOptions{})
			kq := c.consumer("queue://TRI.Q", client.ConsumerOptions{})
			c.consumer("topic://TRI.BAR", client.ConsumerOptions{})
			// Barrier: each of A's bridges reads its peer's advisories in
			// order, so once both have decided on TRI.BAR they have decided
			// on TRI.T and TRI.Q.
			const added, suppressed = `"msg":"network demand added".*"dest":"%s"`, `"msg":"network demand (suppressed|replaced)".*"dest":"%s"`
			if tc.suppress {
				a.waitDemand("topic://TRI.BAR", 1)
				a.waitLog(fmt.Sprintf(suppressed, "topic://TRI.BAR"))
			} else {
				a.waitDemand("topic://TRI.BAR", 2)
			}
			for _, dest := range []string{"topic://TRI.T", "queue://TRI.Q"} {
				n, s := a.countLog(fmt.Sprintf(added, dest)), a.countLog(fmt.Sprintf(suppressed, dest))
				// Replaced: one added, dropped, then the other added.
				replaced := a.countLog(`"msg":"network demand replaced".*"dest":"` + dest + `"`)
				if tc.suppress && (n-replaced != 1 || s != 1) {
					t.Fatalf("%s: A added %d demands (%d replaced), suppressed %d; want one served", dest, n, replaced, s)
				}
				if !tc.suppress && (n != 2 || s != 0) {
					t.Fatalf("%s: A added %d demands, suppressed %d; want 2 (both paths) and 0", dest, n, s)
				}
			}
			if tc.decrease {
				// The demand through B lost, on whichever bridge decided.
				if n := a.countLog(`"msg":"network demand (suppressed|replaced)".*"remote_broker":"C"`); n != 0 {
					t.Fatalf("the direct demand from C lost %d times; log:\n%s", n, a.p.Tail(30))
				}
			}

			const n = 10
			a.send("topic://TRI.T", "t", n, false)
			copies := 1
			if !tc.suppress {
				copies = 2
			}
			got := receive(t, kt, n*copies)
			count := map[string]int{}
			for _, s := range got {
				count[s]++
			}
			for _, s := range seq("t", n) {
				if count[s] != copies {
					t.Fatalf("C's topic consumer got %s %d times, want %d; all: %v", s, count[s], copies, got)
				}
			}
			// Nothing more: a later message arrives next on every path.
			a.send("topic://TRI.T", "end", 1, false)
			for range copies {
				if got := receive(t, kt, 1); got[0] != "end0" {
					t.Fatalf("after the %d copies C's consumer got %v, want end0", n*copies, got)
				}
			}

			// The queue: every message once whatever the demand.
			a.send("queue://TRI.Q", "q", 20, true)
			got = receive(t, kq, 20)
			slices.Sort(got)
			want := seq("q", 20)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("C's queue consumer got %v", got)
			}
		})
	}
}
