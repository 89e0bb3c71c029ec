package cluster_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"wharf/internal/wharfproc"
	"wharf/protocols/openwire/client"
)

// startWebNode starts broker name like startNode, with its web server
// (Jolokia API, console) on a free loopback port without logins, and
// returns the node and the web server's base URL.
func startWebNode(t *testing.T, name, extra string) (*node, string) {
	t.Helper()
	web := freePort(t)
	n := &node{t: t, name: name, dir: t.TempDir(), extra: extra}
	cfg := filepath.Join(n.dir, "wharf.yaml")
	body := fmt.Sprintf(nodeConfig, n.name, filepath.Join(n.dir, "data"), filepath.Join(n.dir, "kahadb"), 0, extra) +
		fmt.Sprintf("http: {enabled: true, host: 127.0.0.1, port: %d, authenticate: false}\n", web)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := wharfproc.Start(wharfBinary(t), time.Minute, "run", "--log-format", "json", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.p = p
	t.Cleanup(func() {
		select {
		case <-p.Exited():
		default:
			if err := p.Stop(30 * time.Second); err != nil {
				t.Errorf("stopping %s: %v", name, err)
			}
		}
	})
	for _, line := range p.Lines() {
		var rec struct{ Msg, Connector, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "Listening for connections at" && rec.Connector == "openwire" {
			n.addr = rec.Addr
		}
	}
	if n.addr == "" {
		t.Fatalf("%s started without logging its listener; log:\n%s", name, p.Tail(20))
	}
	fmt.Sscanf(n.addr[strings.LastIndex(n.addr, ":")+1:], "%d", &n.port)
	return n, fmt.Sprintf("http://127.0.0.1:%d", web)
}

// brokerID is the id the node logged at start-up.
func (n *node) brokerID() string {
	n.t.Helper()
	for _, line := range n.p.Lines() {
		var rec struct{ Msg, ID string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "broker started" && rec.ID != "" {
			return rec.ID
		}
	}
	n.t.Fatalf("%s logged no broker id", n.name)
	return ""
}

// jolokia posts a Jolokia request and returns the answer's value, failing
// on any status but 200.
func jolokia(t *testing.T, base string, req map[string]any) any {
	t.Helper()
	body, _ := json.Marshal(req)
	resp, err := http.Post(base+"/api/jolokia/", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out["status"] != float64(200) {
		t.Fatalf("jolokia %v: %v", req, out)
	}
	return out["value"]
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", url, resp.StatusCode, b)
	}
	return string(b)
}

// eventually polls cond every 20 ms until it holds, failing with what
// after 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not after 30 s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNetworkViews: broker A bridges to B (two wharf processes). A's
// Jolokia API has the network connector's bean (NetworkConnectorViewMBean)
// with the configured settings and, while the bridge is up, its bridge's
// (NetworkBridgeViewMBean) naming B, B's id and address, with the
// messages A forwarded counted; the console's network.jsp lists the
// bridge up with its demand (B's consumer's queue). When B stops, the
// bridge bean goes and the page says the bridge is down and why.
func TestNetworkViews(t *testing.T) {
	b := startNode(t, "nv-b", 0, "")
	a, web := startWebNode(t, "nv-a", network(static(b), "name: tob", "prefetch_size: 7", "message_ttl: 3"))
	a.waitLog(`"msg":"network bridge started"`)
	k := b.consumer("queue://nv.orders", client.ConsumerOptions{})
	a.waitDemand("queue://nv.orders", 1)

	const conn = "org.apache.activemq:type=Broker,brokerName=nv-a,connector=networkConnectors,networkConnectorName=tob"
	names := jolokia(t, web, map[string]any{"type": "search", "mbean": "org.apache.activemq:type=Broker,brokerName=nv-a,connector=networkConnectors,*"}).([]any)
	bridge := fmt.Sprintf("org.apache.activemq:brokerName=nv-a,connector=networkConnectors,networkBridge=tcp_//127.0.0.1_%d,networkConnectorName=tob,type=Broker", b.port)
	want := map[string]bool{"org.apache.activemq:brokerName=nv-a,connector=networkConnectors,networkConnectorName=tob,type=Broker": true, bridge: true}
	if len(names) != 2 || !want[names[0].(string)] || !want[names[1].(string)] {
		t.Fatalf("network beans %v, want the connector's and the bridge's %v", names, want)
	}
	cv := jolokia(t, web, map[string]any{"type": "read", "mbean": conn}).(map[string]any)
	for attr, v := range map[string]any{"Name": "tob", "Duplex": false, "ConduitSubscriptions": true, "DynamicOnly": false,
		"DecreaseNetworkConsumerPriority": false, "PrefetchSize": float64(7), "MessageTTL": float64(3), "ConsumerTTL": float64(1),
		"UserName": nil, "Password": "****"} {
		if cv[attr] != v {
			t.Errorf("connector %s = %#v, want %#v", attr, cv[attr], v)
		}
	}

	a.send("queue://nv.orders", "m", 5, true)
	if got := receive(t, k, 5); got[0] != "m0" || got[4] != "m4" {
		t.Fatalf("B's consumer got %v", got)
	}
	var bv map[string]any
	eventually(t, "the bridge counts 5 dequeued", func() bool {
		bv = jolokia(t, web, map[string]any{"type": "read", "mbean": bridge}).(map[string]any)
		return bv["DequeueCounter"] == float64(5)
	})
	for attr, v := range map[string]any{"RemoteBrokerName": "nv-b", "RemoteBrokerId": b.brokerID(), "LocalBrokerName": "nv-a",
		"RemoteAddress": fmt.Sprintf("tcp://127.0.0.1:%d", b.port), "LocalAddress": "vm://nv-a",
		"EnqueueCounter": float64(5), "DequeueCounter": float64(5), "ReceivedCounter": float64(0), "CreatedByDuplex": false} {
		if bv[attr] != v {
			t.Errorf("bridge %s = %#v, want %#v", attr, bv[attr], v)
		}
	}
	// resetStats zeroes the bridge's counters and its destination's.
	jolokia(t, web, map[string]any{"type": "exec", "mbean": bridge, "operation": "resetStats"})
	bv = jolokia(t, web, map[string]any{"type": "read", "mbean": bridge}).(map[string]any)
	dv := jolokia(t, web, map[string]any{"type": "read", "mbean": bridge + ",direction=outbound,destinationType=Queue,destinationName=nv.orders"}).(map[string]any)
	if bv["EnqueueCounter"] != float64(0) || bv["DequeueCounter"] != float64(0) || bv["ReceivedCounter"] != float64(0) || dv["Count"] != float64(0) {
		t.Errorf("after resetStats: bridge %v, destination %v; want the counters 0", bv, dv)
	}
	metrics := getPage(t, web+"/metrics")
	for _, s := range []string{
		fmt.Sprintf(`wharf_network_bridge_up{connector="tob",peer="127.0.0.1:%d"} 1`, b.port),
		fmt.Sprintf(`wharf_network_bridge_forwarded_messages_total{connector="tob",peer="127.0.0.1:%d"} 5`, b.port),
		fmt.Sprintf(`wharf_network_bridge_connections_total{connector="tob",peer="127.0.0.1:%d"} 1`, b.port),
	} {
		if !strings.Contains(metrics, s) {
			t.Errorf("/metrics has no %s", s)
		}
	}
	page := getPage(t, web+"/admin/network.jsp")
	for _, s := range []string{"Network connector <span class=\"mono\">tob</span>", `<span class="tag bridge-up">up</span>`,
		`<td class="remote-broker" title="` + b.brokerID() + `">nv-b</td>`, `<td class="demand-dest">queue://nv.orders</td>`, `<td class="num dequeued">0</td>`, `<td class="num forwarded">5</td>`} {
		if !strings.Contains(page, s) {
			t.Errorf("network.jsp has no %q:\n%s", s, page)
		}
	}

	if err := b.p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	a.waitLog(`"msg":"network bridge stopped"`)
	eventually(t, "the bridge bean goes with the bridge", func() bool {
		v := jolokia(t, web, map[string]any{"type": "search", "mbean": "org.apache.activemq:type=Broker,brokerName=nv-a,connector=networkConnectors,*"}).([]any)
		return len(v) == 1
	})
	if m := getPage(t, web+"/metrics"); !strings.Contains(m, fmt.Sprintf(`wharf_network_bridge_up{connector="tob",peer="127.0.0.1:%d"} 0`, b.port)) {
		t.Errorf("/metrics does not say the bridge is down")
	}
	page = getPage(t, web+"/admin/network.jsp")
	if !strings.Contains(page, `<span class="tag bridge-down">down</span>`) || !regexp.MustCompile(`bridge-error">[^<]+<`).MatchString(page) {
		t.Errorf("network.jsp after B stopped shows no bridge down with its error:\n%s", page)
	}
}

// TestNetworkViewsDuplex: over A's duplex bridge to B, what B's producer
// sends to A's consumer is the bridge's ReceivedCounter, what A sends to
// B's consumer its Enqueue and DequeueCounter; the connector says
// Duplex.
func TestNetworkViewsDuplex(t *testing.T) {
	b := startNode(t, "nvd-b", 0, "")
	a, web := startWebNode(t, "nvd-a", network(static(b), "name: dup", "duplex: true"))
	a.waitLog(`"msg":"network bridge started".*"duplex":true`)
	ka := a.consumer("queue://nvd.in", client.ConsumerOptions{})
	a.waitLog(`"msg":"duplex demand added".*"dest":"queue://nvd.in"`)
	kb := b.consumer("queue://nvd.out", client.ConsumerOptions{})
	a.waitDemand("queue://nvd.out", 1)
	b.send("queue://nvd.in", "in", 3, true)
	receive(t, ka, 3)
	a.send("queue://nvd.out", "out", 2, true)
	receive(t, kb, 2)

	bridge := fmt.Sprintf("org.apache.activemq:type=Broker,brokerName=nvd-a,connector=networkConnectors,networkConnectorName=dup,networkBridge=tcp_//127.0.0.1_%d", b.port)
	var bv map[string]any
	eventually(t, "the bridge counts 3 received and 2 dequeued", func() bool {
		bv = jolokia(t, web, map[string]any{"type": "read", "mbean": bridge}).(map[string]any)
		return bv["ReceivedCounter"] == float64(3) && bv["DequeueCounter"] == float64(2)
	})
	if bv["EnqueueCounter"] != float64(2) || bv["CreatedByDuplex"] != false {
		t.Errorf("bridge %v: want EnqueueCounter 2, CreatedByDuplex false", bv)
	}
	cv := jolokia(t, web, map[string]any{"type": "read", "mbean": "org.apache.activemq:type=Broker,brokerName=nvd-a,connector=networkConnectors,networkConnectorName=dup", "attribute": "Duplex"})
	if cv != true {
		t.Errorf("connector Duplex = %v", cv)
	}
	out := jolokia(t, web, map[string]any{"type": "read", "mbean": bridge + ",direction=outbound,destinationType=Queue,destinationName=nvd.out", "attribute": "Count"})
	if out != float64(2) {
		t.Errorf("outbound nvd.out Count = %v, want 2", out)
	}
}
