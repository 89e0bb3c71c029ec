package cluster_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/internal/wharfproc"
	"wharf/protocols/openwire/client"
)

// Multicast on loopback is unreliable, so the multicast test puts each
// broker on its own host: a network namespace joined to a bridge in the
// test's namespace by a veth pair, one address each on a /24 and a
// multicast route. Each broker is `ip netns exec NS wharf run`; the test
// reaches them through the bridge's address. It needs root and ip(8).

// mcastLab is the namespaces and links of one test.
type mcastLab struct {
	t      *testing.T
	id     string // short random tag of every name
	subnet string // "10.213.N"
	bridge string
	ns     []string
}

// ipCmd runs ip(8) with args and fails the test on error.
func (l *mcastLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

func newMcastLab(t *testing.T) *mcastLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("multicast discovery needs network namespaces: run as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("multicast discovery needs ip(8) for network namespaces")
	}
	l := &mcastLab{t: t, id: fmt.Sprintf("%06x", rand.IntN(1<<24))}
	l.subnet = fmt.Sprintf("10.213.%d", 1+rand.IntN(250))
	l.bridge = "wdb" + l.id
	t.Cleanup(func() {
		for _, ns := range l.ns {
			exec.Command("ip", "netns", "del", ns).Run() // takes its veth end along
		}
		exec.Command("ip", "link", "del", l.bridge).Run()
	})
	l.ip("link", "add", l.bridge, "type", "bridge", "mcast_snooping", "0")
	l.ip("addr", "add", l.subnet+".254/24", "dev", l.bridge)
	l.ip("link", "set", l.bridge, "up")
	return l
}

// host makes namespace number i (1..253) with address subnet.i and
// returns its name and address.
func (l *mcastLab) host(i int) (ns, ip string) {
	ns = fmt.Sprintf("wdn%s%d", l.id, i)
	in, out := fmt.Sprintf("wdi%s%d", l.id, i), fmt.Sprintf("wdo%s%d", l.id, i)
	ip = fmt.Sprintf("%s.%d", l.subnet, i)
	l.ip("netns", "add", ns)
	l.ns = append(l.ns, ns)
	l.ip("link", "add", out, "type", "veth", "peer", "name", in)
	l.ip("link", "set", in, "netns", ns)
	l.ip("link", "set", out, "master", l.bridge)
	l.ip("link", "set", out, "up")
	l.ip("-n", ns, "addr", "add", ip+"/24", "dev", in)
	l.ip("-n", ns, "link", "set", in, "up")
	l.ip("-n", ns, "link", "set", "lo", "up")
	l.ip("-n", ns, "route", "add", "224.0.0.0/4", "dev", in)
	return ns, ip
}

const mcastConfig = `broker_name: %s
data_directory: %q
shards: 1
%s
persistence:
  kahadb:
    directory: %q
transport_connectors:
  - {name: openwire, uri: "tcp://%s:61616", discovery_uri: "multicast://default?group=%s"}
network_connectors:
  - uri: "multicast://default?group=%s&initialReconnectDelay=100&maxReconnectDelay=1000"
`

// mcastNode starts broker name on host i of the lab, advertising and
// discovering on group.
func (l *mcastLab) node(name string, i int, group, extra string) *node {
	t := l.t
	t.Helper()
	ns, ip := l.host(i)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wharf.yaml")
	body := fmt.Sprintf(mcastConfig, name, filepath.Join(dir, "data"), extra, filepath.Join(dir, "kahadb"), ip, group, group)
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := wharfproc.Start("ip", time.Minute, "netns", "exec", ns, wharfBinary(t),
		"run", "--log-format", "json", "--http=false", "--trusted-network", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, name: name, port: 61616, dir: dir, p: p, addr: ip + ":61616"}
	t.Cleanup(func() {
		select {
		case <-p.Exited():
		default:
			if err := p.Stop(30 * time.Second); err != nil {
				t.Errorf("stopping %s: %v", name, err)
			}
		}
	})
	return n
}

// Three brokers, each on its own host, advertise their OpenWire
// connector on multicast://default (one group) and discover each other
// with <networkConnector uri="multicast://default">: each bridges to the
// two others and not to itself; a queue message published on A reaches a
// consumer on C, a topic message published on A reaches the subscribers
// on B and C once each; a broker that stops says it is dead and the
// others stop their bridges to it; one SIGKILLed is dropped once silent.
func TestClusterMulticastDiscovery(t *testing.T) {
	lab := newMcastLab(t)
	group := "g" + lab.id
	a := lab.node("A", 1, group, "network_connector_start_async: true")
	b := lab.node("B", 2, group, "")
	c := lab.node("C", 3, group, "")
	for _, n := range []*node{a, b, c} {
		n.waitLog(`"msg":"multicast discovery: advertising".*"service":"tcp://` + strings.ReplaceAll(n.addr, ".", `\.`) + `"`)
	}
	// Each hears the two others: two bridges started, none to itself.
	for _, n := range []*node{a, b, c} {
		for _, o := range []*node{a, b, c} {
			if o == n {
				continue
			}
			n.waitLog(`"msg":"network bridge started".*"remote_addr":"` + strings.ReplaceAll(o.addr, ".", `\.`) + `"`)
		}
	}
	for _, n := range []*node{a, b, c} {
		if k := n.countLog(`"msg":"multicast discovery: service found`); k != 2 {
			t.Errorf("%s found %d services, want the 2 others; log:\n%s", n.name, k, n.p.Tail(30))
		}
		if k := n.countLog(`"msg":"network bridge (started|not started)".*"remote_addr":"` + strings.ReplaceAll(n.addr, ".", `\.`) + `"`); k != 0 {
			t.Errorf("%s bridged to itself", n.name)
		}
	}

	kq := c.consumer("queue://MC.Q", client.ConsumerOptions{})
	a.waitDemand("queue://MC.Q", 1)
	a.send("queue://MC.Q", "q", 10, true)
	if got := receive(t, kq, 10); !slices.Equal(got, seq("q", 10)) {
		t.Fatalf("C's consumer received %v", got)
	}

	kb := b.consumer("topic://MC.T", client.ConsumerOptions{})
	kc := c.consumer("topic://MC.T", client.ConsumerOptions{})
	a.waitDemand("topic://MC.T", 2)
	a.send("topic://MC.T", "t", 5, false)
	if got := receive(t, kb, 5); !slices.Equal(got, seq("t", 5)) {
		t.Fatalf("B's subscriber received %v", got)
	}
	if got := receive(t, kc, 5); !slices.Equal(got, seq("t", 5)) {
		t.Fatalf("C's subscriber received %v", got)
	}
	// A barrier on each: a later message arrives with nothing before it.
	a.send("topic://MC.T", "end", 1, false)
	for _, k := range []*client.Consumer{kb, kc} {
		if got := receive(t, k, 1); got[0] != "end0" {
			t.Fatalf("after the 5 messages: %v, want end0 (no duplicate)", got)
		}
	}

	// C stops: its dead datagram makes A and B stop their bridges to it.
	if err := c.p.Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, n := range []*node{a, b} {
		n.waitLog(`"msg":"multicast discovery: service gone, bridge stopped".*"service":"tcp://` + strings.ReplaceAll(c.addr, ".", `\.`) + `".*"why":"advertised dead"`)
	}
	// B is SIGKILLed: it says nothing, and A drops it after ten missed
	// advertisements (MulticastDiscoveryAgent's 10 x 500 ms).
	b.p.Kill()
	a.waitLog(`"msg":"multicast discovery: service gone, bridge stopped".*"service":"tcp://` + strings.ReplaceAll(b.addr, ".", `\.`) + `".*"why":"no advertisement for 5s"`)
}
