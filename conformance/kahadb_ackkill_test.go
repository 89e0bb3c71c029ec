package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// The kill test of issue 13 item 9 ("How it is checked"): consumers that
// wait for each acknowledgement to be confirmed — stomp.py acknowledging
// each message with an ACK that carries a receipt, and ActiveMQ's JMS
// client, once with client acknowledgement and jms.sendAcksAsync=false
// (MessageAck with responseRequired) and once in a transacted session that
// commits each message — while a real wharf process on a KahaDB directory
// is SIGKILLed at random moments (after a seeded random number of confirmed
// acks). No message whose acknowledgement was confirmed may be delivered
// again, in any later cycle or in the final drain; no message that was
// never acknowledged may be lost.

// ackKillCycles is how many times TestConformanceKahaDBAckKill kills wharf.
const ackKillCycles = 8

// ackKillPerQueue is how many messages each consumer's queue is loaded
// with: more than the consumers confirm in all cycles.
const ackKillPerQueue = 1500

// ackKillClientWait bounds how long a cycle waits for the confirmed acks
// it kills after (a JVM start included).
const ackKillClientWait = 45 * time.Second

// stomppy is the Python with Debian's stomp.py (python3-stomp).
const (
	stomppy            = "/usr/bin/python3"
	stomppyInstallHint = "apt-get install -y python3 python3-stomp"
)

// ackKillConsumers name the consumers (and the prefix of their messages'
// keys): stomp.py, the JMS client-acknowledge session, the transacted one.
var ackKillConsumers = []string{"stomp", "jms-client", "jms-tx"}

// ackLine is one line a consumer printed, with which consumer.
type ackLine struct {
	from string
	text string
}

// ackClient is a consumer process whose stdout lines go to a channel,
// which is closed at EOF (every line read).
type ackClient struct {
	name   string
	cmd    *exec.Cmd
	stderr bytes.Buffer
	eof    chan struct{}
}

func startAckClient(t *testing.T, name string, cmd *exec.Cmd, lines chan<- ackLine) *ackClient {
	t.Helper()
	c := &ackClient{name: name, cmd: cmd, eof: make(chan struct{})}
	cmd.Stderr = &c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		defer close(c.eof)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- ackLine{from: name, text: sc.Text()}
		}
	}()
	t.Cleanup(c.kill)
	return c
}

// kill ends the process (its work is done once the broker is killed) and
// waits for it; every line it printed has been read once eof is closed.
func (c *ackClient) kill() {
	if c.cmd.ProcessState != nil {
		return
	}
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// ackLedger is what the consumers were told, per message key.
type ackLedger struct {
	confirmed  map[string]int      // the cycle in which its ack was confirmed
	acking     map[string]bool     // an ack was sent (confirmed or not)
	delivered  map[string]int      // deliveries seen
	back       []string            // confirmed, then delivered again
	confirms   map[string]int      // confirmed acks per consumer (stomp, jms-client, jms-tx)
	again      int                 // deliveries of a key delivered before (unconfirmed)
	againFlag  int                 // ... of them with the redelivered flag
	cycleCount int                 // confirmed acks in the current cycle
	last       map[string][]string // the last lines of each consumer process, for failures
}

func (l *ackLedger) note(t *testing.T, cycle int, ln ackLine) {
	t.Helper()
	last := append(l.last[ln.from], ln.text)
	if len(last) > 10 {
		last = last[1:]
	}
	l.last[ln.from] = last
	verb, rest, _ := strings.Cut(ln.text, " ")
	switch verb {
	case "GOT":
		key, red, _ := strings.Cut(rest, " ")
		if c, ok := l.confirmed[key]; ok {
			l.back = append(l.back, fmt.Sprintf("%s (confirmed in cycle %d, delivered again to %s in cycle %d, redelivered=%s)", key, c, ln.from, cycle, red))
		} else if l.delivered[key] > 0 {
			l.again++
			if red == "true" {
				l.againFlag++
			}
		}
		l.delivered[key]++
	case "ACKING":
		l.acking[rest] = true
	case "CONFIRMED":
		if _, ok := l.confirmed[rest]; !ok {
			l.confirmed[rest] = cycle
		}
		l.confirms[rest[:max(strings.LastIndexByte(rest, '-'), 0)]]++
		l.cycleCount++
	case "DONE":
	default:
		t.Logf("%s: %s", ln.from, ln.text)
	}
}

// TestConformanceKahaDBAckKill: see the comment at the top of the file.
func TestConformanceKahaDBAckKill(t *testing.T) {
	if _, err := exec.LookPath(stomppy); err != nil {
		t.Skipf("%s not found (%s)", stomppy, stomppyInstallHint)
	}
	if out, err := exec.Command(stomppy, "-c", "import stomp").CombinedOutput(); err != nil {
		t.Skipf("stomp.py not importable: %v %s (%s)", err, out, stomppyInstallHint)
	}
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	script, err := filepath.Abs(filepath.FromSlash("ackclients/stomp_acker.py"))
	if err != nil {
		t.Fatal(err)
	}

	rng := seededRand(t, "WHARF_ACKKILL_SEED")
	start := time.Now()

	dir := filepath.Join(t.TempDir(), "kahadb")
	queues := map[string]string{"stomp": "kdb.ackkill.stomp", "jms-client": "kdb.ackkill.jms", "jms-tx": "kdb.ackkill.tx"}
	w := startWharf(t, dir)
	preloadAckKill(t, w.openwire, queues)

	l := &ackLedger{confirmed: map[string]int{}, acking: map[string]bool{}, delivered: map[string]int{}, confirms: map[string]int{}, last: map[string][]string{}}
	for cycle := range ackKillCycles {
		if cycle > 0 {
			w = startWharf(t, dir)
		}
		target := 20 + rng.IntN(100) // confirmed acks, all consumers together
		lines := make(chan ackLine, 1024)
		// The JVM starts first; stomp.py, which acknowledges faster, once
		// the JVM's consumers are at work, so that all three have a share
		// of the acks around the kill.
		javaC := startAckClient(t, "jms", exec.Command("java", "-cp", classes+string(os.PathListSeparator)+cp,
			"wharf.conformance.AckClient", "tcp://"+w.openwire, queues["jms-client"], queues["jms-tx"]), lines)
		var stompC *ackClient
		clients := map[string]*ackClient{"jms": javaC}
		l.cycleCount = 0
		before := map[string]int{}
		for k, v := range l.confirms {
			before[k] = v
		}
		// Kill once target acks were confirmed and each consumer has had
		// its own random share of them confirmed in this cycle.
		least := map[string]int{}
		for _, consumer := range ackKillConsumers {
			least[consumer] = 1 + rng.IntN(40)
		}
		waiting := func() bool {
			for _, consumer := range ackKillConsumers {
				if l.confirms[consumer]-before[consumer] < least[consumer] {
					return true
				}
			}
			return l.cycleCount < target
		}
		deadline := time.After(ackKillClientWait)
		for waiting() {
			select {
			case ln := <-lines:
				l.note(t, cycle, ln)
				if strings.HasPrefix(ln.text, "DONE") {
					t.Fatalf("cycle %d: %s ended before the kill: %s; stderr:\n%s", cycle, ln.from, ln.text, tail(clients[ln.from].stderr.String(), 3000))
				}
				if stompC == nil && strings.HasPrefix(ln.text, "CONFIRMED") {
					stompC = startAckClient(t, "stomp", exec.Command(stomppy, script, w.stomp, queues["stomp"]), lines)
					clients["stomp"] = stompC
				}
			case <-deadline:
				stderr := func(name string) string {
					if c := clients[name]; c != nil {
						return tail(c.stderr.String(), 2000)
					}
					return "(not started)"
				}
				t.Fatalf("cycle %d: %d of %d confirmed acks (stomp %d, jms-client %d, jms-tx %d) within %v; stomp's last lines %q, stderr:\n%s\njms's last lines %q, stderr:\n%s\nwharf:\n%s",
					cycle, l.cycleCount, target, l.confirms["stomp"]-before["stomp"], l.confirms["jms-client"]-before["jms-client"],
					l.confirms["jms-tx"]-before["jms-tx"], ackKillClientWait,
					l.last["stomp"], stderr("stomp"), l.last["jms"], stderr("jms"), w.log.tail(40))
			}
		}
		w.kill()
		// Every line printed before the kills: a CONFIRMED among them had
		// its confirmation from the broker before it died.
		for _, c := range clients {
			c.kill()
		}
		for _, c := range clients {
			for open := true; open; {
				select {
				case ln := <-lines:
					l.note(t, cycle, ln)
				case <-c.eof:
					open = false
				}
			}
		}
		for len(lines) > 0 {
			l.note(t, cycle, <-lines)
		}
		t.Logf("cycle %d: killed after %d confirmed acks (target %d)", cycle, l.cycleCount, target)
	}

	// What is left: every message never acknowledged, none whose ack was
	// confirmed.
	w = startWharf(t, dir)
	left := map[string]int{}
	for _, q := range queues {
		for _, key := range drainAckKill(t, w.openwire, q) {
			left[key]++
		}
	}
	w.stop()
	var lost, backAtEnd, dup []string
	for _, q := range ackKillConsumers {
		for i := range ackKillPerQueue {
			key := ackKillKey(q, i)
			switch n := left[key]; {
			case n > 1:
				dup = append(dup, fmt.Sprintf("%s×%d", key, n))
			case n == 1 && hasKey(l.confirmed, key):
				backAtEnd = append(backAtEnd, key)
			case n == 0 && !l.acking[key]:
				lost = append(lost, key)
			}
		}
	}
	slices.Sort(lost)
	slices.Sort(backAtEnd)
	t.Logf("%d kills in %v: confirmed acks: stomp %d, jms client-ack %d, jms transacted %d; %d deliveries of unconfirmed messages seen again (%d with the redelivered flag); %d messages left, none confirmed: %v",
		ackKillCycles, time.Since(start).Round(time.Millisecond), l.confirms["stomp"], l.confirms["jms-client"], l.confirms["jms-tx"],
		l.again, l.againFlag, len(left), len(backAtEnd) == 0)
	if len(l.back) > 0 {
		t.Errorf("%d messages whose acknowledgement was confirmed were delivered again: %v", len(l.back), head(l.back, 20))
	}
	if len(backAtEnd) > 0 {
		t.Errorf("%d messages whose acknowledgement was confirmed are still stored: %v", len(backAtEnd), head(backAtEnd, 20))
	}
	if len(lost) > 0 {
		t.Errorf("%d messages never acknowledged are lost: %v", len(lost), head(lost, 20))
	}
	if len(dup) > 0 {
		t.Errorf("%d messages stored more than once: %v", len(dup), head(dup, 20))
	}
}

func hasKey(m map[string]int, k string) bool {
	_, ok := m[k]
	return ok
}

func ackKillKey(consumer string, i int) string { return fmt.Sprintf("%s-%04d", consumer, i) }

// preloadAckKill stores ackKillPerQueue persistent messages on each queue,
// in transactions of 250.
func preloadAckKill(t *testing.T, addr string, queues map[string]string) {
	t.Helper()
	c := dialOW(t, addr, "")
	s := must(c.Session(true))(t)
	for consumer, q := range queues {
		p := must(s.Producer(wire.NewQueue(q)))(t)
		for i := range ackKillPerQueue {
			ctx, cancel := context.WithTimeout(context.Background(), kdbWait)
			err := p.Send(ctx, client.NewTextMessage(ackKillKey(consumer, i)), false)
			cancel()
			if err != nil {
				t.Fatalf("preload %s: %v", q, err)
			}
			if i%250 == 249 {
				if err := s.Commit(); err != nil {
					t.Fatalf("preload %s: commit: %v", q, err)
				}
			}
		}
	}
	if err := s.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()
}

// drainAckKill receives everything queue q holds (up to a marker sent
// after subscribing) and returns the keys.
func drainAckKill(t *testing.T, addr, q string) []string {
	t.Helper()
	c := dialOW(t, addr, "")
	s := must(c.Session(false))(t)
	k := must(s.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
	owSend(t, must(s.Producer(wire.NewQueue(q)))(t), client.NewTextMessage("end"))
	var keys []string
	for {
		m := receiveN(t, k, "drain "+q, 1)[0]
		text, _, err := m.Text(wire.DefaultLimits())
		if err != nil {
			t.Fatalf("drain %s: %v", q, err)
		}
		if text == "end" {
			break
		}
		keys = append(keys, text)
	}
	c.Close()
	return keys
}
