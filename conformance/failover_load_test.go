package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// envFailoverKills sets how many masters TestConformanceFailoverJMSUnderLoad
// kills in a row: 3 in `make test`, 10 in `make failover` (issue 20).
const envFailoverKills = "WHARF_FAILOVER_KILLS"

// failoverProgress is how many more messages the JMS producer must have
// sent, and the consumer received, on each new master before the next
// kill: the clients continued there.
const failoverProgress = 50

var (
	loadProgress = regexp.MustCompile(`^PROGRESS sent=(\d+) received=(\d+)$`)
	loadResult   = regexp.MustCompile(`^RESULT sent=(\d+) failed=(\d+) received=(\d+) distinct=(\d+) duplicates=(\d+) lost=(\d+) maxSendGapMs=(\d+)$`)
)

// waitLoad waits until the load client has sent and received at least
// the given counts (its PROGRESS lines) and returns what it last said.
func waitLoad(t *testing.T, p *proc, sent, received int) (int, int) {
	t.Helper()
	deadline := time.After(procStartTimeout)
	for {
		lines, grew := p.log.snapshot()
		for i := len(lines) - 1; i >= 0; i-- {
			if m := loadProgress.FindStringSubmatch(lines[i]); m != nil {
				s, _ := strconv.Atoi(m[1])
				r, _ := strconv.Atoi(m[2])
				if s >= sent && r >= received {
					return s, r
				}
				break
			}
		}
		select {
		case <-grew:
		case <-p.exited:
			t.Fatalf("JMS load client exited (%v); output:\n%s", p.err, p.log.tail(40))
		case <-deadline:
			t.Fatalf("JMS load client did not reach sent=%d received=%d in %v; output:\n%s", sent, received, procStartTimeout, p.log.tail(40))
		}
	}
}

// TestConformanceFailoverJMSUnderLoad: a master/slave pair of wharf
// processes on one KahaDB directory under a continuous synchronous
// persistent JMS producer and a consumer, both ActiveMQ's JMS client on
// failover:(tcp://a,tcp://b). The master is SIGKILLed $WHARF_FAILOVER_KILLS
// times in a row (3 by default); each time the slave takes over within
// takeoverLimit, both clients continue on it (50 more
// messages sent and received), and a new slave is started on the dead
// master's ports. At the end no acknowledged message is lost; the
// takeover times (median, max) and duplicate deliveries are reported.
// (Without the race detector, as `make failover` runs it, a takeover must
// come within lockAcquireSleepInterval + 1 s; see takeoverLimit.)
func TestConformanceFailoverJMSUnderLoad(t *testing.T) {
	kills := 3
	if v := os.Getenv(envFailoverKills); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", envFailoverKills, v)
		}
		kills = n
	}
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	dir := t.TempDir()
	ports := []brokerPorts{freePorts(t), freePorts(t)}
	cfgs := []string{writeFailoverConfig(t, dir, ports[0]), writeFailoverConfig(t, dir, ports[1])}
	master := wharfStarted(t, spawnWharf(t, "wharf 0", cfgs[0]))
	slave := spawnWharf(t, "wharf 1", cfgs[1])
	waitSlave(t, slave, master.cmd.Process.Pid, ports[1])

	url := fmt.Sprintf("failover:(tcp://%s,tcp://%s)?randomize=false&initialReconnectDelay=50&maxReconnectDelay=500&useExponentialBackOff=false",
		ports[0].openwire(), ports[1].openwire())
	cmd := exec.Command("java", "-cp", classes+string(os.PathListSeparator)+cp, "wharf.conformance.FailoverLoad", url, "failover.load."+uniq(t))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	load := startProc(t, "JMS load client", cmd)
	sent, received := waitLoad(t, load, failoverProgress, failoverProgress)

	var took []time.Duration
	cur := 0 // index of the master's ports and config
	for i := range kills {
		killed := time.Now()
		master.kill()
		next := 1 - cur
		w, d := takeover(t, slave, killed, ports[next])
		took = append(took, d)
		t.Logf("kill %d: the slave on %s took over in %v (client had sent %d, received %d)", i+1, ports[next].openwire(), d, sent, received)
		master = w
		// A new slave where the dead master was.
		slave = spawnWharf(t, "wharf "+strconv.Itoa(i+2), cfgs[cur])
		waitSlave(t, slave, master.cmd.Process.Pid, ports[cur])
		cur = next
		sent, received = waitLoad(t, load, sent+failoverProgress, received+failoverProgress)
	}

	if _, err := stdin.Write([]byte("stop\n")); err != nil {
		t.Fatal(err)
	}
	m := load.waitLine(loadResult, procStartTimeout)
	n := make([]int, len(m)-1)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	gotSent, failed, gotReceived, distinct, dups, lost, gap := n[0], n[1], n[2], n[3], n[4], n[5], n[6]
	slices.Sort(took)
	median := took[len(took)/2]
	if len(took)%2 == 0 {
		median = (took[len(took)/2-1] + took[len(took)/2]) / 2
	}
	t.Logf("FAILOVER kills=%d lockAcquireSleepInterval=%v takeover_median=%v takeover_max=%v sent=%d failed_sends=%d received=%d distinct=%d duplicates=%d lost=%d client_max_send_gap=%dms",
		kills, failoverRetry, median, took[len(took)-1], gotSent, failed, gotReceived, distinct, dups, lost, gap)
	if lost != 0 {
		lines, _ := load.log.snapshot()
		t.Fatalf("%d acknowledged messages lost; client output:\n%s", lost, lines[len(lines)-1])
	}
	if gotSent < sent || distinct < gotSent {
		t.Fatalf("sent %d (at least %d seen in progress), %d distinct received: want every acknowledged one", gotSent, sent, distinct)
	}
	if gotReceived != distinct+dups {
		t.Fatalf("received %d = %d distinct + %d duplicates: the client's counts disagree", gotReceived, distinct, dups)
	}
	select {
	case <-load.exited:
	case <-time.After(procStopTimeout):
		t.Fatalf("JMS load client did not exit after its RESULT; output:\n%s", load.log.tail(20))
	}
	if load.err != nil {
		t.Fatalf("JMS load client: %v; output:\n%s", load.err, load.log.tail(20))
	}
}
