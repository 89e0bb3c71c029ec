package conformance

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wharf/conform"
	"wharf/storage/kahadb/journal"
)

// The master/slave tests (failover_*_test.go) run every broker as its own
// process on one KahaDB directory: the master holds the directory's lock,
// a slave waits for it with its connectors closed, and takes over when the
// master dies. A slave's connectors are on fixed loopback ports (picked
// free by the test) so that the test can show nothing listens there
// until it is master, and so that one failover: URL names every broker.

// failoverRetry is the lockAcquireSleepInterval of the master/slave tests:
// a takeover must happen within it and one second more (issue 20).
const failoverRetry = 500 * time.Millisecond

// takeoverLimit bounds a takeover: failoverRetry and one second more, the
// target of issue 20, which `make failover` checks. Under the race
// detector (`make test`, on a machine whose cores other tests share) the
// new master's start-up is several times slower (replaying ActiveMQ's
// preallocated 32 MiB journal file took 2 s there), so the bound is
// failoverRetry and 5 s more; the measured takeover is logged either way.
func takeoverLimit() time.Duration {
	if raceEnabled {
		return failoverRetry + 5*time.Second
	}
	return failoverRetry + time.Second
}

// failoverConfig is a broker of a master/slave pair: the KahaDB
// directory, its lockAcquireSleepInterval, further kahadb keys, and the
// OpenWire, STOMP and MQTT ports.
const failoverConfig = `persistence:
  kahadb:
    directory: %q
    lock_acquire_sleep_interval: %s
%s
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:%d"}
  - {name: stomp, uri: "stomp://127.0.0.1:%d"}
  - {name: mqtt, uri: "mqtt://127.0.0.1:%d"}
`

// brokerPorts are the OpenWire, STOMP and MQTT ports of one broker.
type brokerPorts [3]int

func (p brokerPorts) openwire() string { return "127.0.0.1:" + strconv.Itoa(p[0]) }
func (p brokerPorts) stomp() string    { return "127.0.0.1:" + strconv.Itoa(p[1]) }
func (p brokerPorts) mqtt() string     { return "127.0.0.1:" + strconv.Itoa(p[2]) }

// freePorts picks a broker's three ports: each bound on loopback port 0
// and released, so free a moment ago.
func freePorts(t *testing.T) brokerPorts {
	t.Helper()
	var p brokerPorts
	var lns []net.Listener
	for i := range p {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		p[i] = ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	return p
}

// writeFailoverConfig writes a master/slave broker's YAML and returns its
// path; kahadb are further persistence.kahadb keys ("key: value").
func writeFailoverConfig(t *testing.T, dir string, ports brokerPorts, kahadb ...string) string {
	t.Helper()
	var extra strings.Builder
	for _, kv := range kahadb {
		extra.WriteString("    " + kv + "\n")
	}
	p := filepath.Join(t.TempDir(), "wharf.yaml")
	yml := fmt.Sprintf(failoverConfig, dir, failoverRetry, extra.String(), ports[0], ports[1], ports[2])
	if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// spawnWharf starts `wharf run` on cfg and returns at once: a slave logs
// that it waits for the lock, a master that it started.
func spawnWharf(t *testing.T, name, cfg string) *proc {
	t.Helper()
	return startProc(t, name, exec.Command(wharfBinary(t), "run", "--config", cfg, "--log-format", "json", "--http=false"))
}

// slaveModeLine is ActiveMQ's words, which a Wharf slave logs once.
var slaveModeLine = regexp.MustCompile(regexp.QuoteMeta(`"msg":"`+journal.SlaveModeMessage+`"`) + `.*"holder":"pid (\d+)`)

// waitSlave waits until p logs that it is a slave, and checks that the
// holder it names is the process holder and that none of its ports
// listens.
func waitSlave(t *testing.T, p *proc, holder int, ports brokerPorts) {
	t.Helper()
	m := p.waitLine(slaveModeLine, procStartTimeout)
	if m[1] != strconv.Itoa(holder) {
		t.Fatalf("%s waits for pid %s, want the master's pid %d", p.name, m[1], holder)
	}
	for _, a := range []string{ports.openwire(), ports.stomp(), ports.mqtt()} {
		mustNotListen(t, a)
	}
	lines, _ := p.log.snapshot()
	for _, l := range lines {
		if wharfListening.MatchString(l) || strings.Contains(l, `"msg":"broker started"`) {
			t.Fatalf("%s started a connector while waiting for the lock: %s", p.name, l)
		}
	}
}

// mustNotListen fails the test when something accepts a connection at
// addr.
func mustNotListen(t *testing.T, addr string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("something listens on %s, where a slave waits for the lock", addr)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
}

// takeover waits until the slave p has started after its master was
// killed at killed, checks that it listens on ports and that it took no
// longer than takeoverLimit, and returns it and the time it took.
func takeover(t *testing.T, p *proc, killed time.Time, ports brokerPorts) (*wharfProc, time.Duration) {
	t.Helper()
	w := wharfStarted(t, p)
	took := time.Since(killed)
	if w.openwire != ports.openwire() || w.stomp != ports.stomp() || w.mqtt != ports.mqtt() {
		t.Fatalf("new master listens on %s %s %s, want %v", w.openwire, w.stomp, w.mqtt, ports)
	}
	if limit := takeoverLimit(); took > limit {
		t.Fatalf("takeover took %v, want at most %v (lockAcquireSleepInterval %v); log:\n%s", took, limit, failoverRetry, p.log.tail(30))
	}
	if len(w.logged("journal directory lock acquired")) != 1 {
		t.Fatalf("new master did not log the lock's acquisition; log:\n%s", p.log.tail(30))
	}
	return w, took
}

// TestConformanceFailoverKahaDBMasterSlave: two wharf processes on one
// KahaDB directory. The second waits for the lock: it says so once in
// ActiveMQ's words, naming the master's pid, and nothing listens on its
// ports. The master acknowledges persistent messages (STOMP receipts),
// is SIGKILLed, and the slave becomes master within takeoverLimit
// (lockAcquireSleepInterval + 1 s without the race detector), listening
// on its ports, with every acknowledged message, in order. Both have lockKeepAlivePeriod: the
// slave's attempts to lock do not make the master stop.
func TestConformanceFailoverKahaDBMasterSlave(t *testing.T) {
	dir := t.TempDir()
	pa, pb := freePorts(t), freePorts(t)
	// The keep-alive on both: a slave's attempts do not make the master
	// think it lost the lock (it would stop).
	const keep = "lock_keep_alive_period: 20ms"
	mp := spawnWharf(t, "master", writeFailoverConfig(t, dir, pa, keep))
	master := wharfStarted(t, mp)
	slave := spawnWharf(t, "slave", writeFailoverConfig(t, dir, pb, keep))
	waitSlave(t, slave, master.cmd.Process.Pid, pb)

	q := queue(t, "")
	p, _ := conform.ConnectRaw(t, master.stomp, "1.2")
	const n = 50
	for i := range n {
		p.SendMsg(q, "m"+strconv.Itoa(i), "persistent:true")
	}
	killed := time.Now()
	master.kill()
	w, took := takeover(t, slave, killed, pb)
	t.Logf("takeover after SIGKILL: %v", took)
	c, _ := conform.ConnectRaw(t, w.stomp, "1.2")
	c.Subscribe("s", q)
	for i := range n {
		c.ExpectMessage("m" + strconv.Itoa(i))
	}
	c.MustSync()
}

// TestConformanceFailoverKahaDBLockLostStopsBroker: a master with
// lockKeepAlivePeriod whose lock file another broker modified (as its
// takeover would, writing its time stamp) stops at its next check, as
// ActiveMQ stops a broker whose keep-alive fails: it logs why and exits
// with status 1, the exit path of the JDBC lease locker.
func TestConformanceFailoverKahaDBLockLostStopsBroker(t *testing.T) {
	dir := t.TempDir()
	w := startWharfArgs(t, "--config", writeFailoverConfig(t, dir, freePorts(t), "lock_keep_alive_period: 100ms"))
	later := time.Now().Add(5 * time.Second)
	if err := os.Chtimes(filepath.Join(dir, journal.LockFileName), later, later); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.exited:
	case <-time.After(procStartTimeout):
		t.Fatalf("wharf still runs %v after its lock file was modified; log:\n%s", procStartTimeout, w.log.tail(20))
	}
	var exit *exec.ExitError
	if !errors.As(w.err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("wharf's exit: got %v, want status 1; log:\n%s", w.err, w.log.tail(20))
	}
	if rec := w.logged("lost the directory lock: this broker stores nothing more (every persistent send and ack fails)"); len(rec) != 1 || !strings.Contains(fmt.Sprint(rec[0]["err"]), "has been modified") {
		t.Fatalf("wharf's log: got %v, want one line saying the lock file was modified; log:\n%s", rec, w.log.tail(20))
	}
	if rec := w.logged("stopping"); len(rec) != 1 || !strings.Contains(fmt.Sprint(rec[0]["reason"]), "lost the database lock") {
		t.Fatalf("wharf's log: got %v, want one \"stopping\" naming the lost lock; log:\n%s", rec, w.log.tail(20))
	}
}
