package cluster_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
)

// dialClient connects to n with a client id (durable subscriptions).
func (n *node) dialClient(clientID string) *client.Conn {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := client.DefaultOptions()
	o.ClientID = clientID
	// Acknowledgements on disk before Ack returns: the test stops B
	// right after its subscriber's last one.
	o.SyncAcks = true
	c, err := client.Dial(ctx, n.addr, o)
	if err != nil {
		n.t.Fatal(err)
	}
	n.t.Cleanup(func() { c.Close() })
	return c
}

// A durable subscriber on B, bridged from A (DurableConduitBridge): what
// is published on A while the subscriber is offline — the bridge up, then
// B itself down — reaches it when it comes back, in order, once; its
// unsubscribe destroys A's NC-DS_ subscription.
func TestClusterDurableSubscription(t *testing.T) {
	b := startNode(t, "B", 0, "")
	a := startNode(t, "A", 0, network(static(b)))
	a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
	const topic = "topic://T.DUR"

	sub := func() (*client.Conn, *client.Consumer) {
		c := b.dialClient("durable-client")
		return c, b.consumerAs(c, topic, client.ConsumerOptions{DurableName: "D1", AckMode: client.AckClient})
	}
	// take receives n messages and acknowledges them.
	take := func(k *client.Consumer, n int) []string {
		t.Helper()
		var got []string
		for range n {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			m, err := k.Receive(ctx)
			cancel()
			if err != nil {
				t.Fatalf("after %v: %v", got, err)
			}
			got = append(got, text(t, m))
			if err := k.Ack(m); err != nil {
				t.Fatal(err)
			}
		}
		return got
	}
	c, k := sub()
	a.waitDemand(topic, 1)
	a.waitLog(`"msg":"network demand added".*"dest":"topic://T.DUR".*"durable":"NC-DS_A_T.DUR"`)
	a.send(topic, "on", 10, true)
	if got := take(k, 10); !slices.Equal(got, seq("on", 10)) {
		t.Fatalf("online: B's subscriber got %v", got)
	}

	// 1. The subscriber goes offline, the bridge stays up. A barrier: B's
	// consumer advisories reach A in order, so once A has the demand of a
	// later consumer it has seen the durable subscriber go.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	bar := b.consumer("topic://T.BARRIER1", client.ConsumerOptions{})
	a.waitDemand("topic://T.BARRIER1", 1)
	_ = bar
	a.send(topic, "off", 10, true)
	c, k = sub()
	if got := take(k, 10); !slices.Equal(got, seq("off", 10)) {
		t.Fatalf("published while the subscriber was offline: B's subscriber got %v", got)
	}

	// 2. The subscriber offline and B down: A's NC-DS_A_T.DUR keeps what
	// is published, and forwards it once the subscriber is back.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	a.waitLog(`"msg":"network bridge stopped".*"remote_broker":"B"`)
	a.send(topic, "down", 10, true)
	b.start()
	deadline := time.Now().Add(30 * time.Second)
	for a.countLog(`"msg":"network bridge started".*"remote_broker":"B"`) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("A did not reconnect to B; log:\n%s", a.p.Tail(20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	c, k = sub()
	if got := take(k, 10); !slices.Equal(got, seq("down", 10)) {
		t.Fatalf("published while B was down: B's subscriber got %v", got)
	}
	// Nothing more: the next message is one sent after, so no message
	// came twice (one bridge subscription forwards in order).
	a.send(topic, "end", 1, true)
	if got := take(k, 1); got[0] != "end0" {
		t.Fatalf("after the 30 messages B's subscriber got %v, want end0", got)
	}

	// 3. Unsubscribe on B destroys A's durable subscription.
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe("D1"); err != nil {
		t.Fatal(err)
	}
	a.waitLog(`"msg":"network durable demand removed".*"subscription":"NC-DS_A_T.DUR"`)
	if n := a.countLog(`removing the local durable subscription failed`); n != 0 {
		t.Fatalf("A failed to remove its durable subscription %d times", n)
	}
}
