package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"regexp"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// Durable subscriptions and temporary destinations across a network that
// mixes Wharf and ActiveMQ 5.17 (cluster/durable.go, cluster/temp.go).

// Wharf -> ActiveMQ with a durable subscriber on ActiveMQ: Wharf's bridge
// makes its NC-DS_ durable subscription and keeps forwarding while the
// subscriber is offline, so it gets on its return what Wharf took
// meanwhile; its unsubscribe on ActiveMQ (ActiveMQ's
// RemoveSubscriptionInfo advisory) destroys Wharf's.
func TestConformanceNetworkDurableWharfToActiveMQ(t *testing.T) {
	amq := startActiveMQXML(t, amqNetworkXML("amq", ""))
	w := startWharfNetwork(t, "wharf", fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)\"\n", amq.openwire))
	w.waitLine(regexp.MustCompile(`"msg":"network bridge started".*"remote_broker":"amq"`), procStartTimeout)
	const topic = "topic://NET.DUR"
	sub := func() (*client.Conn, *client.Consumer) {
		c := dialOW(t, amq.openwire, "dur-client")
		s, err := c.Session(false)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := client.ParseDestination(topic)
		k, err := s.Consumer(d, client.ConsumerOptions{DurableName: "D1"})
		if err != nil {
			t.Fatal(err)
		}
		return c, k
	}
	c, k := sub()
	w.waitLine(regexp.MustCompile(`"msg":"network demand added".*"dest":"topic://NET.DUR".*"durable":"NC-DS_wharf_NET.DUR"`), procStartTimeout)
	netSendP(t, w.openwire, topic, "on", 10)
	netReceiveP(t, k, "on", 10)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// ActiveMQ's consumer advisories reach Wharf in order: once Wharf has
	// a later consumer's demand it has seen the subscriber go.
	netConsumer(t, amq.openwire, "topic://NET.BARRIER")
	w.waitLine(regexp.MustCompile(`"msg":"network demand added".*"dest":"topic://NET.BARRIER"`), procStartTimeout)
	netSendP(t, w.openwire, topic, "off", 10)
	c, k = sub()
	netReceiveP(t, k, "off", 10)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe("D1"); err != nil {
		t.Fatal(err)
	}
	w.waitLine(regexp.MustCompile(`"msg":"network durable demand removed".*"subscription":"NC-DS_wharf_NET.DUR"`), procStartTimeout)
}

// Request/reply between Wharf and ActiveMQ bridged both ways, each way
// round: the requester's JMSReplyTo is a temporary queue on its broker,
// the responder on the other answers there. Wharf's bridge learns
// ActiveMQ's temporary queues from its advisories; ActiveMQ's bridge
// (bridgeTempDestinations, its default too) learns Wharf's.
func TestConformanceNetworkRequestReplyActiveMQ(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	amqPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	w := startWharfNetwork(t, "wharf", fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://127.0.0.1:%d)?initialReconnectDelay=200&useExponentialBackOff=false\"\n", amqPort))
	xml := amqNetworkXML("amq", fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)"/></networkConnectors>`, w.openwire))
	xml = bytes.Replace(xml, []byte("tcp://127.0.0.1:0"), fmt.Appendf(nil, "tcp://127.0.0.1:%d", amqPort), 1)
	amq := startActiveMQXML(t, xml)
	amq.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	w.waitLine(regexp.MustCompile(`"msg":"network bridge started".*"remote_broker":"amq"`), procStartTimeout)

	for _, tc := range []struct {
		name                 string
		requester, responder string
	}{
		{"requester on ActiveMQ", amq.openwire, w.openwire},
		{"requester on Wharf", w.openwire, amq.openwire},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqQ := "queue://REQ." + map[bool]string{true: "A", false: "W"}[tc.requester == amq.openwire]
			rc := dialOW(t, tc.responder, "")
			rs, err := rc.Session(false)
			if err != nil {
				t.Fatal(err)
			}
			rd, _ := client.ParseDestination(reqQ)
			reqs, err := rs.Consumer(rd, client.ConsumerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The requester's broker forwards the requests once it has
			// the responder's demand.
			waitNetworkConsumers(t, tc.requester, reqQ, 1)

			qc := dialOW(t, tc.requester, "")
			tq, err := qc.CreateTempQueue()
			if err != nil {
				t.Fatal(err)
			}
			qs, err := qc.Session(false)
			if err != nil {
				t.Fatal(err)
			}
			replies, err := qs.Consumer(tq, client.ConsumerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The responder's broker forwards replies once it has the
			// requester's demand on the temporary queue.
			waitNetworkConsumers(t, tc.responder, "queue://"+tq.PhysicalName, 1)
			if tc.responder == w.openwire {
				w.waitLine(regexp.MustCompile(`"msg":"network bridge added temporary destination".*"dest":"`+regexp.QuoteMeta(marshal.DestToEngine(tq).String())+`"`), procStartTimeout)
			}
			p, err := qs.Producer(rd)
			if err != nil {
				t.Fatal(err)
			}
			const n = 10
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
				m, err := reqs.Receive(ctx)
				if err != nil {
					t.Fatalf("responder, request %d: %v", i, err)
				}
				if m.ReplyTo == nil || m.ReplyTo.String() != tq.String() {
					t.Fatalf("request %d replies to %v, want %v", i, m.ReplyTo, tq)
				}
				rp, err := rs.Producer(m.ReplyTo)
				if err != nil {
					t.Fatal(err)
				}
				body, _, _ := m.Text(wire.DefaultLimits())
				r := client.NewTextMessage("r" + body)
				r.CorrelationId = m.CorrelationId
				if err := rp.Send(ctx, r, true); err != nil {
					t.Fatalf("reply %d: %v", i, err)
				}
				rp.Close()
			}
			for i := range n {
				m, err := replies.Receive(ctx)
				if err != nil {
					t.Fatalf("requester, reply %d: %v", i, err)
				}
				body, _, _ := m.Text(wire.DefaultLimits())
				if want := fmt.Sprintf("rq%d", i); body != want || m.CorrelationId != fmt.Sprintf("c%d", i) {
					t.Fatalf("reply %d: %q (correlation %q), want %q", i, body, m.CorrelationId, want)
				}
			}
		})
	}
}

// ActiveMQ -> Wharf with a durable subscriber on Wharf: ActiveMQ's own
// DurableConduitBridge reads the subscription name from Wharf's consumer
// advisory and keeps forwarding while the subscriber is offline, so it
// gets on its return what ActiveMQ took meanwhile.
func TestConformanceNetworkDurableActiveMQToWharf(t *testing.T) {
	w := startWharfNetwork(t, "wharf", "")
	amq := startActiveMQXML(t, amqNetworkXML("amq", fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)"/></networkConnectors>`, w.openwire)))
	amq.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	const topic = "topic://NET.DUR"
	sub := func() (*client.Conn, *client.Consumer) {
		c := dialOW(t, w.openwire, "dur-client")
		s, err := c.Session(false)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := client.ParseDestination(topic)
		k, err := s.Consumer(d, client.ConsumerOptions{DurableName: "D1"})
		if err != nil {
			t.Fatal(err)
		}
		return c, k
	}
	c, k := sub()
	waitNetworkConsumers(t, amq.openwire, topic, 1)
	netSendP(t, amq.openwire, topic, "on", 10)
	netReceiveP(t, k, "on", 10)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Barrier: ActiveMQ's bridge has seen the subscriber go once it has
	// made the demand of a later consumer on Wharf.
	netConsumer(t, w.openwire, "topic://NET.BARRIER")
	waitNetworkConsumers(t, amq.openwire, "topic://NET.BARRIER", 1)
	netSendP(t, amq.openwire, topic, "off", 10)
	_, k = sub()
	netReceiveP(t, k, "off", 10)
}
