package cluster_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// A static bridge A->B forwards on demand: a consumer on B makes A
// forward what is sent to A, queues and topics, persistent and not, with
// nothing lost, duplicated or reordered (one producer, one consumer).
func TestClusterForwardOnDemand(t *testing.T) {
	b := startNode(t, "B", 0, "")
	a := startNode(t, "A", 0, network(static(b)))
	a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)

	for _, tc := range []struct {
		dest       string
		persistent bool
	}{
		{"queue://Q.P", true}, {"queue://Q.N", false}, {"topic://T.P", true}, {"topic://T.N", false},
	} {
		t.Run(fmt.Sprintf("%s persistent=%v", tc.dest, tc.persistent), func(t *testing.T) {
			k := b.consumer(tc.dest, client.ConsumerOptions{})
			a.waitDemand(tc.dest, 1)
			a.send(tc.dest, "m", 200, tc.persistent)
			got := receive(t, k, 200)
			want := make([]string, 200)
			for i := range want {
				want[i] = fmt.Sprintf("m%d", i)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("B received %v..., want m0..m199 in order", got[:min(5, len(got))])
			}
		})
	}
	// Demand goes with the consumer: the bridge's local subscription is
	// closed, so a queue message sent to A after that stays on A.
	k := b.consumer("queue://Q.GONE", client.ConsumerOptions{})
	a.waitDemand("queue://Q.GONE", 1)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	a.waitLog(`"msg":"network demand removed".*"dest":"queue://Q.GONE"`)
	a.send("queue://Q.GONE", "stay", 3, true)
	local := a.consumer("queue://Q.GONE", client.ConsumerOptions{})
	if got := receive(t, local, 3); !slices.Equal(got, []string{"stay0", "stay1", "stay2"}) {
		t.Fatalf("A kept %v", got)
	}
}

// Seed 001's conduit example: one consumer on A, two on B, 30 messages
// sent to A's Q.TEST. With conduitSubscriptions (the default) B's two
// consumers are one subscription to A: 15 stay on A, 15 cross. Without,
// each of the three consumers gets 10.
func TestClusterConduitSplit(t *testing.T) {
	for _, tc := range []struct {
		conduit         bool
		demands         int
		wantA, wantBoth int
	}{
		{true, 1, 15, 15},
		{false, 2, 10, 20},
	} {
		t.Run(fmt.Sprintf("conduit=%v", tc.conduit), func(t *testing.T) {
			b := startNode(t, "B", 0, "")
			a := startNode(t, "A", 0, network(static(b), fmt.Sprintf("conduit_subscriptions: %v", tc.conduit)))
			a.waitLog(`"msg":"network bridge started"`)
			ka := a.consumer("queue://Q.TEST", client.ConsumerOptions{})
			kb1 := b.consumer("queue://Q.TEST", client.ConsumerOptions{})
			kb2 := b.consumer("queue://Q.TEST", client.ConsumerOptions{})
			a.waitDemand("queue://Q.TEST", tc.demands)
			a.send("queue://Q.TEST", "m", 30, true)
			counts := countSplit(t, 30, ka, kb1, kb2)
			if counts[0] != tc.wantA || counts[1]+counts[2] != tc.wantBoth {
				t.Fatalf("A's consumer got %d, B's %d and %d; want %d on A and %d on B", counts[0], counts[1], counts[2], tc.wantA, tc.wantBoth)
			}
			if !tc.conduit && (counts[1] != 10 || counts[2] != 10) {
				t.Fatalf("B's consumers got %d and %d, want 10 each", counts[1], counts[2])
			}
			t.Logf("conduit=%v: A %d, B %d + %d", tc.conduit, counts[0], counts[1], counts[2])
		})
	}
}

// countSplit receives from every consumer at once until total messages
// have arrived, and returns how many each got; a message that arrives
// twice fails the test.
func countSplit(t *testing.T, total int, ks ...*client.Consumer) []int {
	t.Helper()
	counts := make([]int, len(ks))
	var mu sync.Mutex
	seen := map[string]bool{}
	var n atomic.Int64
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				m, err := k.Receive(ctx)
				if err != nil {
					return
				}
				s, _, _ := m.Text(wire.DefaultLimits())
				mu.Lock()
				if seen[s] {
					t.Errorf("%s received twice", s)
				}
				seen[s] = true
				counts[i]++
				mu.Unlock()
				if n.Add(1) == int64(total) {
					close(done)
				}
			}
		}()
	}
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d messages received", n.Load(), total)
	}
	cancel()
	wg.Wait()
	return counts
}
