package cluster_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// Request/reply across two brokers (bridgeTempDestinations, the
// default): the requester on B sends to queue REQ with JMSReplyTo its
// temporary queue; the responder on A answers there; the reply crosses
// back. With bridgeTempDestinations="false" the responder's reply is
// refused: the temporary queue does not exist on A.
func TestClusterRequestReplyTempQueue(t *testing.T) {
	for _, bridged := range []bool{true, false} {
		t.Run(fmt.Sprintf("bridgeTempDestinations=%v", bridged), func(t *testing.T) {
			pa, pb := freePort(t), freePort(t)
			uri := func(p int) string { return fmt.Sprintf("static:(tcp://127.0.0.1:%d)", p) }
			attr := fmt.Sprintf("bridge_temp_destinations: %v", bridged)
			a := startNode(t, "A", pa, network(uri(pb), attr))
			b := startNode(t, "B", pb, network(uri(pa), attr))
			a.waitLog(`"msg":"network bridge started".*"remote_broker":"B"`)
			b.waitLog(`"msg":"network bridge started".*"remote_broker":"A"`)

			// The responder on A; B forwards REQ to it.
			ra := a.dial()
			rs, err := ra.Session(false)
			if err != nil {
				t.Fatal(err)
			}
			req := a.consumerAs(ra, "queue://REQ", client.ConsumerOptions{})
			b.waitDemand("queue://REQ", 1)

			// The requester on B, with its temporary reply queue.
			rq := b.dial()
			tq, err := rq.CreateTempQueue()
			if err != nil {
				t.Fatal(err)
			}
			qs, err := rq.Session(false)
			if err != nil {
				t.Fatal(err)
			}
			replies, err := qs.Consumer(tq, client.ConsumerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tname := marshal.DestToEngine(tq).String()
			if bridged {
				a.waitLog(`"msg":"network bridge added temporary destination".*"dest":"` + regexp.QuoteMeta(tname) + `"`)
				a.waitDemand(tname, 1)
			}
			p, err := qs.Producer(mustDest(t, "queue://REQ"))
			if err != nil {
				t.Fatal(err)
			}
			const n = 20
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for i := range n {
				m := client.NewTextMessage(fmt.Sprintf("q%d", i))
				m.ReplyTo = tq
				m.CorrelationId = fmt.Sprintf("c%d", i)
				if err := p.Send(ctx, m, true); err != nil {
					t.Fatal(err)
				}
			}
			for i := range n {
				m, err := req.Receive(ctx)
				if err != nil {
					t.Fatalf("responder on A, request %d: %v", i, err)
				}
				if got := text(t, m); got != fmt.Sprintf("q%d", i) || m.ReplyTo == nil || m.ReplyTo.String() != tq.String() {
					t.Fatalf("request %d on A: %q reply to %v, want q%d reply to %v", i, got, m.ReplyTo, i, tq)
				}
				rp, err := rs.Producer(m.ReplyTo)
				if !bridged {
					// ActiveMQ's answer too: the destination does not
					// exist on A (on the producer or on its first send).
					if err == nil {
						r := client.NewTextMessage("r")
						err = rp.Send(ctx, r, true)
					}
					if err == nil {
						t.Fatal("without bridgeTempDestinations A took a reply to B's temporary queue")
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				r := client.NewTextMessage("r" + text(t, m))
				r.CorrelationId = m.CorrelationId
				if err := rp.Send(ctx, r, true); err != nil {
					t.Fatalf("reply %d on A: %v", i, err)
				}
				rp.Close()
			}
			for i := range n {
				m, err := replies.Receive(ctx)
				if err != nil {
					t.Fatalf("requester on B, reply %d: %v", i, err)
				}
				if got, want := text(t, m), fmt.Sprintf("rq%d", i); got != want || m.CorrelationId != fmt.Sprintf("c%d", i) {
					t.Fatalf("reply %d on B: %q (correlation %q), want %q", i, got, m.CorrelationId, want)
				}
			}
			// The requester's temporary queue goes, and A's copy with it.
			if err := replies.Close(); err != nil {
				t.Fatal(err)
			}
			if err := rq.DeleteTempDestination(tq); err != nil {
				t.Fatal(err)
			}
			a.waitLog(`"msg":"network bridge removed temporary destination".*"dest":"` + regexp.QuoteMeta(tname) + `"`)
			// B's own temporary queue, announced back by A, was left
			// alone by B's bridge.
			if c := b.countLog(`"msg":"network bridge added temporary destination"`); c != 0 {
				t.Fatalf("B's bridge made %d temporary destinations of its own broker's", c)
			}
		})
	}
}

func mustDest(t *testing.T, s string) *wire.Destination {
	t.Helper()
	d, err := client.ParseDestination(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
