package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// replayPolicy is seed 001's stuck-message policy in each broker's form.
const (
	replayPolicyXML = `<destinationPolicy><policyMap><policyEntries>
    <policyEntry queue="TEST.>" enableAudit="false"><networkBridgeFilterFactory>
      <conditionalNetworkBridgeFilterFactory replayWhenNoConsumers="true"/>
    </networkBridgeFilterFactory></policyEntry>
  </policyEntries></policyMap></destinationPolicy>`
	replayPolicyYAML = "destination_policy:\n  - {queue: \"TEST.>\", replay_when_no_consumers: true, enable_audit: false}\n"
)

// startReplayNode starts broker name of kind on port (0: any) with the
// replay policy and a network connector to peerAddr.
func startReplayNode(t *testing.T, kind, name string, port int, peerAddr string) *netNode {
	t.Helper()
	if kind == "wharf" {
		yml := fmt.Sprintf("broker_name: %s\n", name) + fmt.Sprintf(wharfConfig, filepath.Join(t.TempDir(), "kahadb"), "") +
			fmt.Sprintf("network_connectors:\n  - uri: \"static:(tcp://%s)?initialReconnectDelay=200&useExponentialBackOff=false\"\n", peerAddr) + replayPolicyYAML
		if port != 0 {
			yml = strings.Replace(yml, `{name: openwire, uri: "tcp://127.0.0.1:0"}`, fmt.Sprintf(`{name: openwire, uri: "tcp://127.0.0.1:%d"}`, port), 1)
		}
		w := startWharfYAML(t, yml)
		return &netNode{kind: kind, addr: w.openwire, p: w.proc}
	}
	xml := amqNetworkXML(name, replayPolicyXML+fmt.Sprintf(`<networkConnectors><networkConnector uri="static:(tcp://%s)?initialReconnectDelay=200&amp;useExponentialBackOff=false"/></networkConnectors>`, peerAddr))
	if port != 0 {
		xml = bytes.Replace(xml, []byte("tcp://127.0.0.1:0"), fmt.Appendf(nil, "tcp://127.0.0.1:%d", port), 1)
	}
	a := startActiveMQXML(t, xml)
	return &netNode{kind: kind, addr: a.openwire, p: a.proc}
}

// Seed 001's stuck messages on every pairing of Wharf and ActiveMQ, the
// all-ActiveMQ pair first as the reference: A and B bridged both ways,
// both with replayWhenNoConsumers; 20 messages sent to A reach B's
// consumer, which leaves without acknowledging them; a consumer on A then
// gets all 20 back from B, and a marker sent to B after them.
func TestConformanceNetworkReplayMixed(t *testing.T) {
	for _, kinds := range [][2]string{{"activemq", "activemq"}, {"wharf", "activemq"}, {"activemq", "wharf"}} {
		t.Run(kinds[0]+"<->"+kinds[1], func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			bPort := l.Addr().(*net.TCPAddr).Port
			l.Close()
			a := startReplayNode(t, kinds[0], "A", 0, fmt.Sprintf("127.0.0.1:%d", bPort))
			b := startReplayNode(t, kinds[1], "B", bPort, a.addr)
			const q = "queue://TEST.STUCK"

			cb := dialOW(t, b.addr, "")
			sb, err := cb.Session(false)
			if err != nil {
				t.Fatal(err)
			}
			qd, _ := client.ParseDestination(q)
			kb, err := sb.Consumer(qd, client.ConsumerOptions{AckMode: client.AckClient})
			if err != nil {
				t.Fatal(err)
			}
			waitNetworkConsumers(t, a.addr, q, 1)
			netSendP(t, a.addr, q, "m", 20)
			got := receiveTexts(t, kb, 20)
			if !slices.Equal(got, seqTexts("m", 20)) {
				t.Fatalf("B's consumer got %v", got)
			}
			if err := kb.Close(); err != nil {
				t.Fatal(err)
			}

			ka := netConsumer(t, a.addr, q)
			waitNetworkConsumers(t, b.addr, q, 1)
			netSendP(t, b.addr, q, "marker", 1)
			got = receiveTexts(t, ka, 21)
			slices.Sort(got)
			want := append(seqTexts("m", 20), "marker0")
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("A's consumer got %v, want %v", got, want)
			}
			netSendP(t, b.addr, q, "end", 1)
			if got := receiveTexts(t, ka, 1); got[0] != "end0" {
				t.Fatalf("after the 21 A's consumer got %v, want end0", got)
			}
		})
	}
}

func seqTexts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}

func receiveTexts(t *testing.T, k *client.Consumer, n int) []string {
	t.Helper()
	var out []string
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := k.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %v: %v", out, err)
		}
		s, _, _ := m.Text(wire.DefaultLimits())
		out = append(out, s)
	}
	return out
}
