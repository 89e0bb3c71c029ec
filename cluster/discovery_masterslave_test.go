package cluster_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"wharf/internal/wharfproc"
	"wharf/protocols/openwire/client"
)

// pairConfig is one broker of a master/slave pair on the shared KahaDB
// directory: its data directory, the shared directory and its port.
const pairConfig = `broker_name: %s
data_directory: %q
shards: 1
persistence:
  kahadb:
    directory: %q
    lock_acquire_sleep_interval: 300ms
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:%d"}
`

// startPairBroker starts `wharf run` of a master/slave pair and returns
// a channel that yields it once it is master (has logged "broker
// started"); a slave waits on the shared directory's lock until then.
func startPairBroker(t *testing.T, name, shared string, port int) <-chan *node {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wharf.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, pairConfig, name, filepath.Join(dir, "data"), shared, port), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := wharfBinary(t)
	ch := make(chan *node, 1)
	go func() {
		p, err := wharfproc.Start(bin, 3*time.Minute, "run", "--log-format", "json", "--http=false", "--config", cfg)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			close(ch)
			return
		}
		ch <- &node{t: t, name: name, port: port, dir: dir, p: p, addr: "127.0.0.1:" + strconv.Itoa(port)}
	}()
	return ch
}

// A masterslave:(tcp://m,tcp://s) connector bridges to whichever of a
// master/slave pair on one KahaDB directory is master, and to the other
// once the master is SIGKILLed: messages sent on the third broker reach a
// consumer on the master, then one on the new master.
func TestClusterMasterSlaveDiscovery(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "kahadb")
	pm, ps := freePort(t), freePort(t)
	master, ok := <-startPairBroker(t, "M", shared, pm)
	if !ok {
		t.FailNow()
	}
	slaveCh := startPairBroker(t, "S", shared, ps)
	var slave *node
	t.Cleanup(func() {
		select {
		case <-master.p.Exited():
		default:
			master.p.Kill() // lets the slave start, so that it can be stopped
		}
		if slave == nil {
			slave = <-slaveCh
		}
		if slave != nil {
			if err := slave.p.Stop(30 * time.Second); err != nil {
				t.Errorf("stopping the slave: %v", err)
			}
		}
	})
	uri := fmt.Sprintf("masterslave:(tcp://127.0.0.1:%d,tcp://127.0.0.1:%d)?initialReconnectDelay=100&maxReconnectDelay=500", pm, ps)
	c := startNode(t, "C", 0, network(uri))
	c.waitLog(`"msg":"network bridge started".*"remote_addr":"127.0.0.1:` + strconv.Itoa(pm) + `"`)

	k1 := master.consumer("queue://MS", client.ConsumerOptions{})
	c.waitDemand("queue://MS", 1)
	c.send("queue://MS", "a", 10, true)
	if got := receive(t, k1, 10); got[0] != "a0" || got[9] != "a9" {
		t.Fatalf("the master's consumer received %v", got)
	}
	// A barrier for the consumer's acknowledgements (one-way, like the
	// Java client's auto-acks): closing it is a request the master
	// answers after them.
	if err := k1.Close(); err != nil {
		t.Fatal(err)
	}
	// The slave waits on the lock: nothing listens on its port.
	if conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(ps), 2*time.Second); err == nil {
		conn.Close()
		t.Fatalf("the slave listens on %d while the master holds the lock", ps)
	}

	master.p.Kill()
	// Sent while the pair has no master: C keeps them (no demand).
	c.send("queue://MS", "b", 10, true)
	var ok2 bool
	slave, ok2 = <-slaveCh
	if !ok2 {
		t.FailNow()
	}
	c.waitLog(`"msg":"network bridge started".*"remote_addr":"127.0.0.1:` + strconv.Itoa(ps) + `"`)
	k2 := slave.consumer("queue://MS", client.ConsumerOptions{})
	c.send("queue://MS", "c", 5, true)
	// The new master recovered the store: b and c in order, and
	// possibly some of a again: an acknowledgement the master had not
	// written when it was killed is redelivered (at least once, as
	// ActiveMQ's master/slave gives).
	var got, again []string
	for len(got) < 15 {
		m := receive(t, k2, 1)[0]
		if m[0] == 'a' {
			again = append(again, m)
			continue
		}
		got = append(got, m)
	}
	if want := append(seq("b", 10), seq("c", 5)...); !slices.Equal(got, want) {
		t.Fatalf("the new master's consumer received %v, want %v", got, want)
	}
	if len(again) > 10 || !slices.IsSorted(again) {
		t.Fatalf("redelivered %v, want at most a0..a9 once each", again)
	}
	t.Logf("redelivered after the kill: %d of a0..a9", len(again))
	// One bridge per connector, to the master of the moment: two starts
	// in all (the master, then the slave).
	if n := c.countLog(`"msg":"network bridge started"`); n != 2 {
		t.Fatalf("C started %d bridges, want 2 (the master, then the new master)", n)
	}
}

// seq is prefix0 .. prefix<n-1>.
func seq(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, prefix+strconv.Itoa(i))
	}
	return out
}
