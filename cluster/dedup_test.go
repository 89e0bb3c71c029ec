package cluster_test

import (
	"context"
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
)

// The forwarding broker A is SIGKILLed while its bridge forwards
// persistent queue messages to B. A message B stored whose
// acknowledgement A had not yet taken is forwarded again when A comes
// back, with its original MessageId. On a connector with
// auditNetworkProducers="true", B's producer audit drops every such
// resend: every message A acknowledged to its producer reaches B's
// consumer exactly once. So does B's queue cursor audit (policy
// enableAudit, on by default, while B runs). With neither (the queue's
// enableAudit="false", the connector's auditNetworkProducers off) a
// resend is stored and delivered again: counted and logged, not
// asserted, since whether the kill hits that window varies from run to
// run (conformance/dedup_test.go shows the mechanisms deterministically,
// across a restart too).
func TestClusterForwarderKilledMidForwardAudit(t *testing.T) {
	for _, c := range []struct {
		name          string
		audit, cursor bool
	}{
		{"auditNetworkProducers", true, false},
		{"cursorAudit", false, true},
		{"none", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			audit := c.audit
			// B's second connector, the one A's bridge uses: a second
			// entry of the harness's transport_connectors list.
			port := freePort(t)
			extra := fmt.Sprintf("  - {name: bridges, uri: \"tcp://127.0.0.1:%d\", audit_network_producers: %v}\n", port, audit)
			if !c.cursor {
				extra += "destination_policy:\n  - {queue: KILLFWD, enable_audit: false}\n"
			}
			b := startNode(t, "B", 0, extra)
			a := startNode(t, "A", 0, network(fmt.Sprintf("static:(tcp://127.0.0.1:%d)?initialReconnectDelay=50&maxReconnectDelay=200", port)))
			a.waitLog(`"msg":"network bridge started"`)
			const q = "queue://KILLFWD"
			k := b.consumer(q, client.ConsumerOptions{Prefetch: 1})
			a.waitDemand(q, 1)

			// Producers on A send until A dies, several at once so that
			// the bridge has several forwards in flight; acked holds what
			// A acknowledged (stored).
			const producers = 8
			acked := make(chan string, 200000)
			done := make(chan error, producers)
			for w := range producers {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
					defer cancel()
					c, err := client.Dial(ctx, a.addr, client.DefaultOptions())
					if err != nil {
						done <- err
						return
					}
					defer c.Close()
					s, err := c.Session(false)
					if err != nil {
						done <- err
						return
					}
					d, _ := client.ParseDestination(q)
					p, err := s.Producer(d)
					if err != nil {
						done <- err
						return
					}
					for i := 0; i < 20000; i++ {
						body := "m" + strconv.Itoa(w) + "-" + strconv.Itoa(i)
						m := client.NewTextMessage(body)
						m.Persistent = true
						if err := p.Send(ctx, m, true); err != nil {
							done <- nil // A was killed
							return
						}
						acked <- body
					}
					done <- fmt.Errorf("A was not killed before 20000 messages were sent")
				}()
			}
			got := map[string]int{}
			for _, s := range receive(t, k, 200) {
				got[s]++
			}
			// Frozen first, then killed: the responses B sends for the
			// forwards in flight at the SIGSTOP are never read by A, as
			// when A dies between B's store and its own ack (a bare
			// SIGKILL hits that window only now and then).
			if err := syscall.Kill(a.p.PID(), syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			a.p.Kill()
			for range producers {
				if err := <-done; err != nil {
					t.Fatal(err)
				}
			}
			close(acked)
			var sent []string
			for s := range acked {
				sent = append(sent, s)
			}
			a.start()
			a.waitLog(`"msg":"network bridge started"`)
			// The barrier: a last message sent on A after its restart
			// comes to B after everything A still held.
			a.send(q, "marker", 1, true)
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				m, err := k.Receive(ctx)
				cancel()
				if err != nil {
					t.Fatalf("waiting for the marker: %v (%d distinct messages so far)", err, len(got))
				}
				s := text(t, m)
				if s == "marker0" {
					break
				}
				got[s]++
			}
			for _, s := range sent {
				if got[s] == 0 {
					t.Errorf("%s: A acknowledged it to its producer; B never delivered it", s)
				}
			}
			dups := 0
			for _, n := range got {
				dups += n - 1
			}
			suppressed := b.countLog(`"msg":"suppressing duplicate message send"`)
			dropped := b.countLog(`"msg":"cursor got duplicate send"`)
			t.Logf("%d messages acknowledged by A before the kill, %d delivered by B, %d duplicates, %d resends suppressed by B's producer audit, %d by its cursor audit",
				len(sent), len(got), dups, suppressed, dropped)
			if (audit || c.cursor) && dups != 0 {
				t.Errorf("%d duplicates with %s", dups, c.name)
			}
			if !audit && suppressed != 0 {
				t.Errorf("B's producer audit suppressed %d sends without auditNetworkProducers", suppressed)
			}
			if !c.cursor && dropped != 0 {
				t.Errorf("B's cursor audit dropped %d sends with enableAudit=\"false\"", dropped)
			}
		})
	}
}
