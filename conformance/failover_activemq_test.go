package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// A master/slave pair of one Wharf and one ActiveMQ 5.17 on one KahaDB
// directory: ActiveMQ's SharedFileLocker takes <dir>/lock with Java's
// FileChannel.tryLock, a POSIX record lock (fcntl) on Linux, and so does
// Wharf (journal.Lock), so each excludes the other: the second waits as a
// slave with nothing listening, and takes over when the first is killed.

// amqSlaveMode is what ActiveMQ's SharedFileLocker logs once while
// another broker holds the lock.
var amqSlaveMode = regexp.MustCompile(`Database (\S+) is locked by another server\. This broker is now in slave mode waiting a lock to be acquired`)

// amqAttempt is the debug line of each attempt of ActiveMQ's locker
// while the lock is held.
var amqAttempt = regexp.MustCompile(`is locked\.\.\. waiting \d+ seconds for the database to be unlocked`)

// countLines counts p's lines matching re so far.
func countLines(p *proc, re *regexp.Regexp) int {
	lines, _ := p.log.snapshot()
	n := 0
	for _, l := range lines {
		if re.MatchString(l) {
			n++
		}
	}
	return n
}

// waitCount waits until p has logged n lines matching re.
func waitCount(t *testing.T, p *proc, re *regexp.Regexp, n int) {
	t.Helper()
	deadline := time.After(procStartTimeout)
	for {
		_, grew := p.log.snapshot()
		if countLines(p, re) >= n {
			return
		}
		select {
		case <-grew:
		case <-p.exited:
			t.Fatalf("%s exited (%v) before logging %d lines matching %q; log:\n%s", p.name, p.err, n, re, p.log.tail(40))
		case <-deadline:
			t.Fatalf("%s logged fewer than %d lines matching %q in %v; log:\n%s", p.name, n, re, procStartTimeout, p.log.tail(40))
		}
	}
}

// failoverActiveMQXML is conformance/kahadb/activemq.xml with a
// <shared-file-locker> retrying every failoverRetry and its OpenWire
// connector on port.
func failoverActiveMQXML(t *testing.T, port int) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash("kahadb/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	x := strings.Replace(string(b), `<kahaDB directory="${wharf.kahadb.dir}"/>`,
		fmt.Sprintf(`<kahaDB directory="${wharf.kahadb.dir}"><locker><shared-file-locker lockAcquireSleepInterval="%d"/></locker></kahaDB>`, failoverRetry.Milliseconds()), 1)
	x = strings.Replace(x, `uri="tcp://127.0.0.1:0"`, fmt.Sprintf(`uri="tcp://127.0.0.1:%d"`, port), 1)
	if strings.Count(x, "shared-file-locker") != 1 || !strings.Contains(x, fmt.Sprintf(":%d\"", port)) {
		t.Fatal("kahadb/activemq.xml: no <kahaDB> or connector to change")
	}
	return []byte(x)
}

// failoverMessages sends n messages of priority 4 (so they come back in
// the order sent) to q with p, each stored when it returns.
func failoverMessages(t *testing.T, p *client.Producer, q string, n int) []*wire.Message {
	t.Helper()
	var want []*wire.Message
	for i := range n {
		m := richMessage(q+"-"+strconv.Itoa(i), i)
		m.Priority = 4
		owSend(t, p, m)
		want = append(want, m)
	}
	return want
}

// TestConformanceFailoverActiveMQSlaveOfWharf: Wharf is master of the
// directory (one shard: a plain KahaDB journal); ActiveMQ started on the
// same directory logs that it is a slave and listens on nothing. Wharf
// acknowledges messages and is SIGKILLed; ActiveMQ takes the lock,
// recovers Wharf's journal and delivers every message. Wharf runs with
// lockKeepAlivePeriod: ActiveMQ's attempts to lock do not make it stop.
func TestConformanceFailoverActiveMQSlaveOfWharf(t *testing.T) {
	skipWithoutActiveMQ(t)
	dir := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, []byte("shards: 1\n"+fmt.Sprintf(failoverConfig, dir, failoverRetry, "    lock_keep_alive_period: 20ms\n", 0, 0, 0)), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWharfArgs(t, "--config", cfg)
	amqPort := freePorts(t)[0]
	// Each attempt of ActiveMQ's locker is logged at debug.
	amq := spawnActiveMQXMLLog(t, failoverActiveMQXML(t, amqPort), "log4j.logger.org.apache.activemq.store.SharedFileLocker=DEBUG", "wharf.kahadb.dir="+dir)
	if m := amq.waitLine(amqSlaveMode, procStartTimeout); m[1] != filepath.Join(dir, "lock") {
		t.Fatalf("ActiveMQ waits for %s, want %s", m[1], filepath.Join(dir, "lock"))
	}
	mustNotListen(t, "127.0.0.1:"+strconv.Itoa(amqPort))

	const q = "failover.wharf.master"
	c := dialOW(t, w.openwire, "")
	want := failoverMessages(t, must(must(c.Session(false))(t).Producer(wire.NewQueue(q)))(t), q, 10)
	if l := amq.log.String(); amqListening.MatchString(l) {
		t.Fatalf("ActiveMQ listens while Wharf holds the lock:\n%s", l)
	}
	// Two more attempts of ActiveMQ's: between them (failoverRetry
	// apart) Wharf's keep-alive checked its lock many times over, and
	// found it its own: it logged no loss and still stores.
	waitCount(t, amq, amqAttempt, countLines(amq, amqAttempt)+2)
	if len(w.logged("lost the directory lock: this broker stores nothing more (every persistent send and ack fails)")) != 0 {
		t.Fatalf("Wharf's keep-alive tripped over ActiveMQ's attempts; log:\n%s", w.log.tail(20))
	}
	failoverMessages(t, must(must(c.Session(false))(t).Producer(wire.NewQueue(q+".after")))(t), q+".after", 1)
	killed := time.Now()
	w.kill()
	amq.waitLine(amqListening, procStartTimeout)
	amq.waitLine(regexp.MustCompile(`Apache ActiveMQ \S+ \(.*\) started`), procStartTimeout)
	t.Logf("ActiveMQ took over %v after Wharf's SIGKILL", time.Since(killed))
	ac := dialOW(t, "127.0.0.1:"+strconv.Itoa(amqPort), "")
	as := must(ac.Session(false))(t)
	k := must(as.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
	checkMessages(t, "ActiveMQ taking over from Wharf", receiveN(t, k, q, len(want)), want)
	expectMarkerNext(t, must(as.Producer(wire.NewQueue(q)))(t), k, q)
}

// TestConformanceFailoverWharfSlaveOfActiveMQ: ActiveMQ is master of the
// directory; Wharf started on it logs that it is a slave, naming
// ActiveMQ's pid, and listens on nothing. ActiveMQ acknowledges messages
// and is SIGKILLed; Wharf takes over within takeoverLimit
// and delivers every message.
func TestConformanceFailoverWharfSlaveOfActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	dir := t.TempDir()
	amqPort := freePorts(t)[0]
	ap := spawnActiveMQXML(t, failoverActiveMQXML(t, amqPort), "wharf.kahadb.dir="+dir)
	ap.waitLine(regexp.MustCompile(`Apache ActiveMQ \S+ \(.*\) started`), procStartTimeout)
	amq := &amqProc{proc: ap, openwire: "127.0.0.1:" + strconv.Itoa(amqPort)}

	ports := freePorts(t)
	slave := spawnWharf(t, "wharf slave", writeFailoverConfig(t, dir, ports))
	waitSlave(t, slave, amq.cmd.Process.Pid, ports)

	const q = "failover.activemq.master"
	c := dialOW(t, amq.openwire, "")
	want := failoverMessages(t, must(must(c.Session(false))(t).Producer(wire.NewQueue(q)))(t), q, 10)
	killed := time.Now()
	amq.kill()
	w, took := takeover(t, slave, killed, ports)
	t.Logf("Wharf took over %v after ActiveMQ's SIGKILL", took)
	wc := dialOW(t, w.openwire, "")
	ws := must(wc.Session(false))(t)
	k := must(ws.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
	checkMessages(t, "Wharf taking over from ActiveMQ", receiveN(t, k, q, len(want)), want)
	expectMarkerNext(t, must(ws.Producer(wire.NewQueue(q)))(t), k, q)
}
