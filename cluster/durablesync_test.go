package cluster_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
)

// syncDurableSubs: B has a durable subscription on T.SYNC whose
// subscriber is offline when A's bridge connects. With syncDurableSubs,
// B's BrokerSubscriptionInfo tells A's bridge of it, A serves it at once
// (NC-DS_A_T.SYNC), and what is published on A meanwhile waits in B's
// subscription: the subscriber gets it on its return. Without, A learns
// of the subscription only when its subscriber is back, and those
// messages had no demand on A (ActiveMQ loses them the same way).
//
// Then, with syncDurableSubs and <durableDestinations>: A stops, the
// subscription is removed on B while A is down, A restarts: its NC-DS_
// subscription is restored at start, and destroyed by the sync since B
// no longer has the durable subscription.
func TestClusterSyncDurableSubs(t *testing.T) {
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("syncDurableSubs=%v", sync), func(t *testing.T) {
			const topic = "topic://T.SYNC"
			b := startNode(t, "B", 0, "")
			c := b.dialClient("sync-client")
			k := b.consumerAs(c, topic, client.ConsumerOptions{DurableName: "D1"})
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			a := startNode(t, "A", 0, network(static(b),
				fmt.Sprintf("sync_durable_subs: %v", sync),
				"dynamically_included_destinations: [{topic: T.SYNC}, {topic: T.BAR}]",
				"durable_destinations: [{topic: T.SYNC}]"))
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
			// Barrier: a consumer B has now is demand on A once A has read
			// the advisories B replays.
			b.consumer("topic://T.BAR", client.ConsumerOptions{})
			a.waitDemand("topic://T.BAR", 1)
			if sync {
				a.waitLog(`"msg":"network bridge synchronised durable subscriptions".*"subscriptions":1`)
				a.waitLog(`"msg":"network demand added".*"dest":"topic://T.SYNC".*"durable":"NC-DS_A_T.SYNC"`)
			} else if n := a.countLog(`"msg":"network demand added".*"dest":"topic://T.SYNC"`); n != 0 {
				t.Fatalf("without syncDurableSubs A made %d demands for the offline subscription", n)
			}
			a.send(topic, "off", 10, true)
			c = b.dialClient("sync-client")
			k = b.consumerAs(c, topic, client.ConsumerOptions{DurableName: "D1"})
			if !sync {
				a.waitDemand(topic, 1)
			}
			a.send(topic, "end", 1, true)
			want := []string{"end0"}
			if sync {
				want = append(seq("off", 10), "end0")
			}
			if got := receive(t, k, len(want)); !slices.Equal(got, want) {
				t.Fatalf("B's durable subscriber got %v, want %v", got, want)
			}
			if !sync {
				return
			}

			// The subscription goes while A is down.
			if err := a.p.Stop(30 * time.Second); err != nil {
				t.Fatal(err)
			}
			if err := k.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Unsubscribe("D1"); err != nil {
				t.Fatal(err)
			}
			a.start()
			a.waitLog(`"msg":"network durable demand restored".*"subscription":"NC-DS_A_T.SYNC"`)
			a.waitLog(`"msg":"network durable demand removed".*"subscription":"NC-DS_A_T.SYNC"`)
			if n := a.countLog(`removing the local durable subscription failed`); n != 0 {
				t.Fatalf("A failed to remove its durable subscription %d times", n)
			}
		})
	}
}
