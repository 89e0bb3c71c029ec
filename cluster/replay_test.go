package cluster_test

import (
	"fmt"
	"slices"
	"testing"

	"wharf/protocols/openwire/client"
)

// Seed 001's stuck messages: A and B bridged both ways; 20 messages sent
// to A go to B's consumer, which leaves without acknowledging them. They
// are back on B's queue, their brokerPath naming A, and a consumer now
// waits on A. Without replayWhenNoConsumers they stay on B (the network
// filter never sends a message back where it came from): A's consumer
// gets only a marker sent to B after them. With it (replayDelay 1 s) B
// sends them back, and A's consumer gets all 20 before the marker, once
// each.
func TestClusterReplayWhenNoConsumers(t *testing.T) {
	for _, replay := range []bool{false, true} {
		t.Run(fmt.Sprintf("replayWhenNoConsumers=%v", replay), func(t *testing.T) {
			const q = "queue://TEST.STUCK"
			pa, pb := freePort(t), freePort(t)
			uri := func(p int) string { return fmt.Sprintf("static:(tcp://127.0.0.1:%d)", p) }
			policy := ""
			if replay {
				policy = "destination_policy:\n  - {queue: \"TEST.>\", replay_when_no_consumers: true, replay_delay: 1s, enable_audit: false}\n"
			}
			a := startNode(t, "A", pa, network(uri(pb))+policy)
			b := startNode(t, "B", pb, network(uri(pa))+policy)
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
			b.waitLog(`"msg":"network bridge started".*"remote_broker":"A"`)

			// B's consumer takes all 20 without acknowledging them.
			kb := b.consumer(q, client.ConsumerOptions{AckMode: client.AckClient})
			a.waitDemand(q, 1)
			a.send(q, "m", 20, true)
			if got := receive(t, kb, 20); !slices.Equal(got, seq("m", 20)) {
				t.Fatalf("B's consumer got %v", got)
			}
			if err := kb.Close(); err != nil {
				t.Fatal(err)
			}
			a.waitLog(`"msg":"network demand removed".*"dest":"queue://TEST.STUCK"`)

			// The consumer is on A now.
			ka := a.consumer(q, client.ConsumerOptions{})
			b.waitDemand(q, 1)
			b.send(q, "marker", 1, true)
			want := []string{"marker0"}
			if replay {
				want = append(seq("m", 20), "marker0")
			}
			got := receive(t, ka, len(want))
			if replay {
				// B's queue keeps the 20 in order, but the marker may
				// overtake the ones waiting out replayDelay.
				slices.Sort(got)
				slices.Sort(want)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("A's consumer got %v, want %v", got, want)
			}
			// Nothing more: a second marker is the next message.
			b.send(q, "end", 1, true)
			if got := receive(t, ka, 1); got[0] != "end0" {
				t.Fatalf("after %d messages A's consumer got %v, want end0", len(want), got)
			}
		})
	}
}
