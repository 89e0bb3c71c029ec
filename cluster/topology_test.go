package cluster_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// A line A->B->C: a consumer on C is demand on A only when the
// connectors' networkTTL lets it cross two brokers. With networkTTL 2
// A's messages reach C; with the default 1, B's demand on A (made for
// C's consumer, brokerPath [C]) is refused by A's consumerTTL, and
// nothing leaves A.
func TestClusterLineTTL(t *testing.T) {
	t.Run("networkTTL=2", func(t *testing.T) {
		c := startNode(t, "C", 0, "")
		b := startNode(t, "B", 0, network(static(c), "network_ttl: 2"))
		a := startNode(t, "A", 0, network(static(b), "network_ttl: 2"))
		k := c.consumer("queue://LINE", client.ConsumerOptions{})
		b.waitDemand("queue://LINE", 1)
		a.waitDemand("queue://LINE", 1)
		a.waitLog(`"msg":"network demand added".*"broker_path":"[^"]*,[^"]*"`) // two hops
		a.send("queue://LINE", "m", 20, true)
		if got := receive(t, k, 20); got[0] != "m0" || got[19] != "m19" {
			t.Fatalf("C received %v", got)
		}
	})
	t.Run("consumerTTL=2 messageTTL=1", func(t *testing.T) {
		// The demand crosses two brokers, the messages only one: A
		// forwards to B, whose bridge to C may not take a message that
		// already crossed a broker; it waits on B.
		c := startNode(t, "C", 0, "")
		b := startNode(t, "B", 0, network(static(c), "consumer_ttl: 2", "message_ttl: 1"))
		a := startNode(t, "A", 0, network(static(b), "consumer_ttl: 2", "message_ttl: 1"))
		c.consumer("queue://LINE", client.ConsumerOptions{})
		b.waitDemand("queue://LINE", 1)
		a.waitDemand("queue://LINE", 1)
		a.send("queue://LINE", "m", 5, true)
		// B's own consumer gets all five although B's bridge to C has a
		// window open on the same queue: none may go on to C.
		kb := b.consumer("queue://LINE", client.ConsumerOptions{})
		if got := receive(t, kb, 5); got[0] != "m0" || got[4] != "m4" {
			t.Fatalf("B kept %v", got)
		}
	})
	t.Run("networkTTL=1", func(t *testing.T) {
		c := startNode(t, "C", 0, "")
		b := startNode(t, "B", 0, network(static(c)))
		a := startNode(t, "A", 0, network(static(b)))
		a.waitLog(`"msg":"network bridge started"`)
		k := c.consumer("queue://LINE", client.ConsumerOptions{})
		b.waitDemand("queue://LINE", 1)
		// A barrier: a consumer on B made after C's is demand on A. A's
		// advisories arrive in order, so by then C's (via B) was judged.
		kb := b.consumer("queue://LINE.B", client.ConsumerOptions{})
		a.waitDemand("queue://LINE.B", 1)
		if n := a.countLog(`"msg":"network demand added".*"dest":"queue://LINE"`); n != 0 {
			t.Fatalf("A took %d demands for LINE from two hops away with consumerTTL 1", n)
		}
		a.send("queue://LINE", "m", 5, true)
		a.send("queue://LINE.B", "b", 1, true)
		receive(t, kb, 1)
		k.Close()
		// Everything is still on A.
		if got := receive(t, a.consumer("queue://LINE", client.ConsumerOptions{}), 5); got[0] != "m0" {
			t.Fatalf("A kept %v", got)
		}
	})
}

// A triangle A->B->C->A with networkTTL 3, a topic consumer on each
// broker: a message published on A reaches each consumer exactly once
// (brokerPath stops the loop), and so does one published on B.
func TestClusterTriangleNoLoop(t *testing.T) {
	pa, pb, pc := freePort(t), freePort(t), freePort(t)
	uri := func(p int) string { return fmt.Sprintf("static:(tcp://127.0.0.1:%d)", p) }
	a := startNode(t, "A", pa, network(uri(pb), "network_ttl: 3"))
	b := startNode(t, "B", pb, network(uri(pc), "network_ttl: 3"))
	c := startNode(t, "C", pc, network(uri(pa), "network_ttl: 3"))
	nodes := []*node{a, b, c}
	ks := make([]*client.Consumer, 3)
	for i, n := range nodes {
		ks[i] = n.consumer("topic://RING", client.ConsumerOptions{})
	}
	// Each broker serves the other two consumers: one directly, one
	// through its peer (and refuses its own, which came round the ring).
	for _, n := range nodes {
		n.waitDemand("topic://RING", 2)
	}
	for _, from := range []*node{a, b} {
		from.send("topic://RING", from.name, 10, false)
		for i, k := range ks {
			got := receive(t, k, 10)
			want := make([]string, 10)
			for j := range want {
				want[j] = fmt.Sprintf("%s%d", from.name, j)
			}
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("consumer on %s got %v from %s, want %v", nodes[i].name, got, from.name, want)
			}
		}
	}
	// Barrier: a marker sent after the batches arrives at each consumer
	// as the next message; a copy that looped would come before it.
	a.send("topic://RING", "marker", 1, false)
	for i, k := range ks {
		if got := receive(t, k, 1); got[0] != "marker0" {
			t.Fatalf("consumer on %s: %q before the marker: a message went round the ring", nodes[i].name, got[0])
		}
	}
}

// decreaseNetworkConsumerPriority: the bridge's consumer has priority -5,
// so A's own consumer (priority 0) gets every message while it has
// room; without it they share.
func TestClusterDecreaseNetworkConsumerPriority(t *testing.T) {
	b := startNode(t, "B", 0, "")
	a := startNode(t, "A", 0, network(static(b), "decrease_network_consumer_priority: true"))
	a.waitLog(`"msg":"network bridge started"`)
	ka := a.consumer("queue://PRIO", client.ConsumerOptions{})
	kb := b.consumer("queue://PRIO", client.ConsumerOptions{})
	a.waitDemand("queue://PRIO", 1)
	a.send("queue://PRIO", "m", 30, true)
	counts := countSplit(t, 30, ka, kb)
	if counts[0] != 30 || counts[1] != 0 {
		t.Fatalf("A's consumer got %d, B's %d; want all 30 on A", counts[0], counts[1])
	}
}

// A peer that goes away and comes back: the bridge logs the loss,
// reconnects with back-off, and serves the demand B's new consumer makes.
func TestClusterReconnect(t *testing.T) {
	b := startNode(t, "B", freePort(t), "")
	a := startNode(t, "A", 0, network(static(b)+"?initialReconnectDelay=50&maxReconnectDelay=200"))
	a.waitLog(`"msg":"network bridge started"`)
	adv := a.consumer("topic://ActiveMQ.Advisory.NetworkBridge", client.ConsumerOptions{})
	b.restart()
	a.waitLog(`"msg":"network bridge stopped"`)
	a.waitLog(`"msg":"network bridge failed, reconnecting"`)
	// ActiveMQ.Advisory.NetworkBridge: stopped, then started again, each
	// with B's BrokerInfo.
	for _, want := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := adv.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("NetworkBridge advisory (started=%v): %v", want, err)
		}
		props, _ := m.Properties(wire.DefaultLimits())
		bi, ok := m.DataStructure.(*wire.BrokerInfo)
		if !ok || bi.BrokerName != "B" || props["started"] != want || props["createdByDuplex"] != false {
			t.Fatalf("NetworkBridge advisory %T %+v, properties %v; want B's BrokerInfo, started=%v", m.DataStructure, m.DataStructure, props, want)
		}
	}
	k := b.consumer("queue://AGAIN", client.ConsumerOptions{})
	a.waitDemand("queue://AGAIN", 1)
	if n := a.countLog(`"msg":"network bridge started"`); n < 2 {
		t.Fatalf("bridge started %d times, want a second start after B's restart", n)
	}
	a.send("queue://AGAIN", "m", 10, true)
	if got := receive(t, k, 10); got[9] != "m9" {
		t.Fatalf("B received %v", got)
	}
}

// Bad peers: nobody listening (bounded attempts, then a clear Error), a
// peer speaking another protocol, and a peer refusing the credentials.
func TestClusterBadPeers(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		a := startNode(t, "A", 0, network(fmt.Sprintf("static:(tcp://127.0.0.1:%d)?initialReconnectDelay=20&maxReconnectAttempts=2", freePort(t))))
		a.waitLog(`"level":"ERROR","msg":"network bridge gave up: reconnect attempts exhausted".*"attempts":2`)
		if n := a.countLog(`"msg":"network bridge failed, reconnecting".*connection refused`); n != 2 {
			t.Fatalf("%d reconnect lines, want 2", n)
		}
	})
	t.Run("another protocol", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"))
				c.Close()
			}
		}()
		a := startNode(t, "A", 0, network("static:(tcp://"+l.Addr().String()+")?initialReconnectDelay=20&maxReconnectAttempts=1"))
		a.waitLog(`"msg":"network bridge failed, reconnecting".*handshake`)
		a.waitLog(`"msg":"network bridge gave up`)
	})
	t.Run("refused credentials", func(t *testing.T) {
		b := startNode(t, "B", 0, `security:
  authentication:
    kind: simple
    users:
      - {username: bridge, password: right, groups: [admins]}
`)
		a := startNode(t, "A", 0, network(static(b)+"?initialReconnectDelay=20&maxReconnectAttempts=1", "user_name: bridge", "password: wrong"))
		a.waitLog(`"msg":"network bridge failed, reconnecting".*SecurityException`)
		a.waitLog(`"msg":"network bridge gave up`)
		for _, l := range a.p.Lines() {
			if strings.Contains(l, `"wrong"`) {
				t.Fatalf("the password is in the log: %s", l)
			}
		}
	})
}

// The peer is SIGKILLed while the bridge forwards persistent queue
// messages to it. A message is acknowledged on A only once B has stored
// it, so after B restarts (KahaDB) every message is on B or still on A:
// none is lost. Duplicates are counted and logged: a message B stored
// whose acknowledgement to A was lost with B is forwarded again, as with
// ActiveMQ.
func TestClusterPeerKilledMidForward(t *testing.T) {
	b := startNode(t, "B", freePort(t), "")
	a := startNode(t, "A", 0, network(static(b)+"?initialReconnectDelay=50&maxReconnectDelay=200"))
	a.waitLog(`"msg":"network bridge started"`)
	const total = 400
	got := map[string]int{}
	k := b.consumer("queue://KILL", client.ConsumerOptions{Prefetch: 1})
	a.waitDemand("queue://KILL", 1)
	a.send("queue://KILL", "m", total, true)
	// Some messages have crossed when B dies.
	for _, s := range receive(t, k, 50) {
		got[s]++
	}
	b.p.Kill()
	b.start()
	k = b.consumer("queue://KILL", client.ConsumerOptions{})
	a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
	// What B stored and what A still has come to B's new consumer.
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < total && time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := k.Receive(ctx)
		cancel()
		if err != nil {
			break
		}
		s, _, _ := m.Text(wire.DefaultLimits())
		got[s]++
	}
	if len(got) != total {
		t.Fatalf("%d distinct messages of %d arrived: lost some", len(got), total)
	}
	dups := 0
	for _, n := range got {
		dups += n - 1
	}
	t.Logf("%d messages, %d duplicates after B was killed mid-forward", total, dups)
}

// Destination filters: A's connector includes queues "inc.>" dynamically,
// excludes "inc.no" and forwards "always" statically. B's consumers on
// inc.yes make demand; on inc.no and other.q they do not; and messages
// sent to A's "always" queue go to B with no consumer anywhere.
func TestClusterDestinationFilters(t *testing.T) {
	b := startNode(t, "B", 0, "")
	a := startNode(t, "A", 0, network(static(b),
		`dynamically_included_destinations: [{queue: "inc.>"}]`,
		`excluded_destinations: [{queue: inc.no}]`,
		`statically_included_destinations: [{queue: always}]`))
	a.waitLog(`"msg":"network bridge forwards statically".*"dest":"queue://always"`)
	a.waitLog(`"msg":"network bridge started"`)
	b.consumer("queue://inc.no", client.ConsumerOptions{})
	b.consumer("queue://other.q", client.ConsumerOptions{})
	yes := b.consumer("queue://inc.yes", client.ConsumerOptions{})
	// inc.yes's demand comes after the others' advisories (B, with one
	// shard, publishes them in order): by then A has judged them.
	a.waitDemand("queue://inc.yes", 1)
	for _, d := range []string{"queue://inc.no", "queue://other.q"} {
		if n := a.countLog(`"msg":"network demand added".*"dest":"` + d + `"`); n != 0 {
			t.Errorf("A made %d demands for %s", n, d)
		}
	}
	a.send("queue://always", "s", 5, true)
	a.send("queue://inc.yes", "y", 5, true)
	receive(t, yes, 5)
	// The static queue's messages wait on B for a consumer.
	if got := receive(t, b.consumer("queue://always", client.ConsumerOptions{}), 5); got[0] != "s0" || got[4] != "s4" {
		t.Fatalf("B's always queue: %v", got)
	}
	// With the filter, A asked B only for the included destinations'
	// advisories: B never told A of other.q's consumer at all.
	if n := a.countLog(`"dest":"queue://other.q"`); n != 0 {
		t.Errorf("A logged %d lines about other.q", n)
	}
}

// B refuses the bridge's user to write one queue: the messages A's bridge
// forwards there are refused with a SecurityException and go to A's dead
// letter queue (ActiveMQ's poison ack), and the bridge carries on with
// the queues it may write.
func TestClusterRemoteRefusesMessage(t *testing.T) {
	b := startNode(t, "B", 0, `security:
  authentication:
    kind: simple
    users:
      - {username: bridge, password: pw, groups: [bridges]}
      - {username: app, password: pw, groups: [apps]}
  authorization:
    entries:
      - {queue: ">", read: [apps], write: [apps], admin: [apps]}
      - {queue: "ok.>", read: [apps], write: [apps, bridges], admin: [apps, bridges]}
      - {topic: "ActiveMQ.Advisory.>", read: [apps, bridges], write: [apps, bridges], admin: [apps, bridges]}
`)
	a := startNode(t, "A", 0, network(static(b), "user_name: bridge", "password: pw"))
	a.waitLog(`"msg":"network bridge started"`)
	app := b.dialAs("app", "pw")
	// Demand only: B refuses the bridge's writes to secret.
	b.consumerAs(app, "queue://secret", client.ConsumerOptions{})
	ok := b.consumerAs(app, "queue://ok.q", client.ConsumerOptions{})
	a.waitDemand("queue://secret", 1)
	a.waitDemand("queue://ok.q", 1)
	a.send("queue://secret", "s", 3, true)
	a.send("queue://ok.q", "o", 3, true)
	if got := receive(t, ok, 3); got[2] != "o2" {
		t.Fatalf("ok.q on B: %v", got)
	}
	dlq := a.consumer("queue://ActiveMQ.DLQ", client.ConsumerOptions{})
	if got := receive(t, dlq, 3); !slices.Equal(got, []string{"s0", "s1", "s2"}) {
		t.Fatalf("A's DLQ holds %v, want s0..s2", got)
	}
	if n := a.countLog(`"msg":"network bridge: remote broker refused a message; it goes to the dead letter queue"`); n != 3 {
		t.Fatalf("%d refusal lines, want 3", n)
	}
}

// duplex: A's one connection to B carries both ways. A consumer on A gets
// what is sent to B, a consumer on B what is sent to A; a topic consumer
// on each broker gets each message once (no echo over the two
// directions).
func TestClusterDuplex(t *testing.T) {
	b := startNode(t, "B", 0, "")
	a := startNode(t, "A", 0, network(static(b), "duplex: true"))
	a.waitLog(`"msg":"network bridge started".*"duplex":true`)
	ka := a.consumer("queue://DUP.A", client.ConsumerOptions{})
	kb := b.consumer("queue://DUP.B", client.ConsumerOptions{})
	a.waitLog(`"msg":"duplex demand added".*"dest":"queue://DUP.A"`)
	a.waitDemand("queue://DUP.B", 1)
	b.send("queue://DUP.A", "toA", 20, true)
	a.send("queue://DUP.B", "toB", 20, true)
	if got := receive(t, ka, 20); got[0] != "toA0" || got[19] != "toA19" {
		t.Fatalf("A's consumer got %v", got)
	}
	if got := receive(t, kb, 20); got[0] != "toB0" || got[19] != "toB19" {
		t.Fatalf("B's consumer got %v", got)
	}
	ta := a.consumer("topic://DUP.T", client.ConsumerOptions{})
	tb := b.consumer("topic://DUP.T", client.ConsumerOptions{})
	a.waitLog(`"msg":"duplex demand added".*"dest":"topic://DUP.T"`)
	a.waitDemand("topic://DUP.T", 1)
	a.send("topic://DUP.T", "a", 5, false)
	b.send("topic://DUP.T", "b", 5, false)
	b.send("topic://DUP.T", "marker", 1, false)
	for name, k := range map[string]*client.Consumer{"A": ta, "B": tb} {
		got := receive(t, k, 11)
		slices.Sort(got)
		want := []string{"a0", "a1", "a2", "a3", "a4", "b0", "b1", "b2", "b3", "b4", "marker0"}
		if !slices.Equal(got, want) {
			t.Fatalf("topic consumer on %s got %v, want %v", name, got, want)
		}
	}
}

// destinationFilter, as seed 001 writes it: the advisory topics the
// bridge reads are the attribute's, the consumer advisory prefix put in
// front. "Queue.df.>" makes demand for df.> queues only, and A never
// hears of other consumers; "NO_DESTINATION" makes no demand at all, so
// only the statically included queue is forwarded and a dynamic queue's
// messages stay on A.
func TestClusterDestinationFilterAttribute(t *testing.T) {
	t.Run("filter", func(t *testing.T) {
		b := startNode(t, "B", 0, "")
		a := startNode(t, "A", 0, network(static(b), `destination_filter: "Queue.df.>"`))
		a.waitLog(`"msg":"network bridge started"`)
		b.consumer("queue://other.q", client.ConsumerOptions{})
		yes := b.consumer("queue://df.yes", client.ConsumerOptions{})
		// B (one shard) publishes the advisories in order: by the time
		// df.yes's demand is made, other.q's advisory would have come.
		a.waitDemand("queue://df.yes", 1)
		if n := a.countLog(`"dest":"queue://other.q"`); n != 0 {
			t.Errorf("A logged %d lines about other.q: it read advisories outside its destinationFilter", n)
		}
		a.send("queue://df.yes", "y", 5, true)
		if got := receive(t, yes, 5); got[0] != "y0" || got[4] != "y4" {
			t.Fatalf("B's df.yes: %v", got)
		}
	})
	t.Run("NO_DESTINATION", func(t *testing.T) {
		b := startNode(t, "B", 0, "")
		a := startNode(t, "A", 0, network(static(b), `destination_filter: NO_DESTINATION`,
			`statically_included_destinations: [{queue: always}]`))
		a.waitLog(`"msg":"network bridge started"`)
		dyn := b.consumer("queue://dyn", client.ConsumerOptions{})
		always := b.consumer("queue://always", client.ConsumerOptions{})
		a.send("queue://always", "s", 3, true)
		if got := receive(t, always, 3); got[2] != "s2" {
			t.Fatalf("B's always queue: %v", got)
		}
		// B's dyn consumer made no demand on A: what is sent there stays.
		a.send("queue://dyn", "d", 3, true)
		if got := receive(t, a.consumer("queue://dyn", client.ConsumerOptions{}), 3); got[0] != "d0" || got[2] != "d2" {
			t.Fatalf("A's dyn queue: %v", got)
		}
		if got := drain(dyn, 0); len(got) != 0 {
			t.Fatalf("B's dyn consumer got %v through a bridge with no demand", got)
		}
		if n := a.countLog(`"msg":"network demand added"`); n != 0 {
			t.Fatalf("A made %d demands", n)
		}
	})
}
