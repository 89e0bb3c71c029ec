package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"

	"wharf/conform"
)

// The MQTT persistent session kill test of issue 13 item 10: a paho QoS 1
// subscriber with clean_session=false acknowledging every message, a paho
// QoS 1 publisher, and a wharf process SIGKILLed at random moments. After
// each crash the session must resume where the acknowledgements on disk
// say: a message comes again only if it was in flight at the kill, and
// then with DUP set.

const (
	mqttCrashTopic    = "kdb/crash/mqtt"
	mqttCrashClientID = "kdb-crash-sub"
	// mqttCrashAckGrace: a PUBACK that paho had handed to its writer this
	// long before the kill has reached the broker's journal (a write, not a
	// sync: a SIGKILL keeps it); the issue saw messages acknowledged more
	// than a second before a kill come back. A message acknowledged later
	// than that is still in flight as far as the test knows (a loaded
	// machine may take that long to write an ack).
	mqttCrashAckGrace = time.Second
)

// mqttCrashLedger is what the publisher and the subscriber know.
type mqttCrashLedger struct {
	mu sync.Mutex
	// The publisher: PUBACKed publishes, and those sent whose PUBACK had
	// not come at the kill.
	published, pubInflight map[string]bool
	pubCount, pubTarget    int
	reached                chan struct{} // closed when pubCount reaches pubTarget

	// The subscriber: the cycle each message was first received in, and
	// when paho last handed its PUBACK to the connection.
	firstCycle map[string]int
	lastAck    map[string]time.Time
	kills      []time.Time // when each kill was sent

	// Per cycle after the first: messages received again, of them the ones
	// without DUP, the ones whose PUBACK was sent long before the kill; the
	// messages in flight at the kill (received, no PUBACK before it), those whose PUBACK went within mqttCrashAckGrace of it, and first
	// receipts carrying DUP.
	redelivered, noDup, ackedLongBefore, inflightAtKill, ackedLate, dupFirst []int
	bad                                                                      []string
	unknown                                                                  []string
	end                                                                      chan struct{} // closed when the "end" marker arrives
}

func (l *mqttCrashLedger) received(cycle int, m paho.Message) {
	key := string(m.Payload())
	l.mu.Lock()
	defer l.mu.Unlock()
	if key == "end" {
		select {
		case <-l.end:
		default:
			close(l.end)
		}
		return
	}
	if !l.published[key] && !l.pubInflight[key] {
		l.unknown = append(l.unknown, key)
		return
	}
	first, seen := l.firstCycle[key]
	if !seen {
		l.firstCycle[key] = cycle
		if m.Duplicate() {
			l.dupFirst[cycle]++
		}
		return
	}
	if first == cycle {
		// No crash between the two receipts: nothing may come twice on one
		// connection of a session acknowledging everything.
		l.bad = append(l.bad, fmt.Sprintf("%s received twice in cycle %d", key, cycle))
		return
	}
	l.redelivered[cycle]++
	if !m.Duplicate() {
		l.noDup[cycle]++
		if len(l.bad) < 20 {
			l.bad = append(l.bad, fmt.Sprintf("%s redelivered in cycle %d without DUP", key, cycle))
		}
	}
	kill := l.kills[cycle-1]
	if at, ok := l.lastAck[key]; ok && at.Before(kill.Add(-mqttCrashAckGrace)) {
		l.ackedLongBefore[cycle]++
		if len(l.bad) < 20 {
			l.bad = append(l.bad, fmt.Sprintf("%s redelivered in cycle %d: its PUBACK was sent %v before the kill",
				key, cycle, kill.Sub(at).Round(time.Millisecond)))
		}
	}
}

func (l *mqttCrashLedger) acked(key string) {
	l.mu.Lock()
	l.lastAck[key] = time.Now()
	l.mu.Unlock()
}

// mqttCrashPublish publishes numbered QoS 1 messages one at a time until
// ctx ends or a publish fails (the broker was killed).
func mqttCrashPublish(ctx context.Context, addr string, cycle int, l *mqttCrashLedger) error {
	o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(fmt.Sprintf("kdb-crash-pub-%d", cycle)).
		SetAutoReconnect(false).SetConnectRetry(false).SetProtocolVersion(4).SetConnectTimeout(wait)
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(wait) || tok.Error() != nil {
		return fmt.Errorf("publisher connect: %v", tok.Error())
	}
	defer c.Disconnect(0)
	for n := 0; ; n++ {
		key := fmt.Sprintf("c%d-%d", cycle, n)
		l.mu.Lock()
		l.pubInflight[key] = true
		l.mu.Unlock()
		tok := c.Publish(mqttCrashTopic, 1, false, key)
		select {
		case <-tok.Done():
		case <-ctx.Done():
			return nil
		}
		if tok.Error() != nil {
			return nil // the broker went away: key stays in flight
		}
		l.mu.Lock()
		delete(l.pubInflight, key)
		l.published[key] = true
		l.pubCount++
		if l.pubCount == l.pubTarget {
			close(l.reached)
		}
		l.mu.Unlock()
	}
}

// mqttCrashSubscriber connects the persistent session (subscribing in the
// first cycle) and acknowledges every message after recording it.
func mqttCrashSubscriber(t *testing.T, addr string, cycle int, l *mqttCrashLedger) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(mqttCrashClientID).
		SetCleanSession(false).SetAutoAckDisabled(true).SetOrderMatters(true).
		SetAutoReconnect(false).SetConnectRetry(false).SetProtocolVersion(4).
		SetConnectTimeout(wait).SetKeepAlive(30 * time.Second).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) {
			l.received(cycle, m)
			m.Ack()
			l.acked(string(m.Payload()))
		})
	c := paho.NewClient(o)
	tok := c.Connect()
	if !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("cycle %d: subscriber connect: %v", cycle, tok.Error())
	}
	ct := tok.(*paho.ConnectToken)
	if want := cycle > 0; ct.SessionPresent() != want {
		t.Fatalf("cycle %d: CONNACK session_present=%v, want %v", cycle, ct.SessionPresent(), want)
	}
	if cycle == 0 {
		st := c.Subscribe(mqttCrashTopic, 1, nil)
		if !st.WaitTimeout(wait) || st.Error() != nil {
			t.Fatalf("subscribe: %v", st.Error())
		}
		if got := st.(*paho.SubscribeToken).Result()[mqttCrashTopic]; got != 1 {
			t.Fatalf("SUBACK granted QoS %d, want 1", got)
		}
	}
	return c
}

// runMQTTCrash is the MQTT persistent-session crash test on the store of
// the wharf processes start runs (each on the same directory).
func runMQTTCrash(t *testing.T, seedEnv string, startWharf func() *wharfProc) {
	rng := seededRand(t, seedEnv)
	l := &mqttCrashLedger{
		published: map[string]bool{}, pubInflight: map[string]bool{},
		firstCycle: map[string]int{}, lastAck: map[string]time.Time{},
		redelivered: make([]int, crashCycles+1), noDup: make([]int, crashCycles+1),
		ackedLongBefore: make([]int, crashCycles+1), inflightAtKill: make([]int, crashCycles+1), ackedLate: make([]int, crashCycles+1),
		dupFirst: make([]int, crashCycles+1), end: make(chan struct{}),
	}
	start := time.Now()
	for cycle := range crashCycles {
		w := startWharf()
		sub := mqttCrashSubscriber(t, w.mqtt, cycle, l)
		l.mu.Lock()
		l.pubCount, l.pubTarget, l.reached = 0, 20+rng.IntN(100), make(chan struct{})
		reached := l.reached
		l.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs := make(chan error, 1)
		go func() { errs <- mqttCrashPublish(ctx, w.mqtt, cycle, l) }()
		// The kill comes at a random moment once the publisher is going,
		// late enough that most acknowledgements are long on disk by then.
		// (A nil channel once done: the loop waits for both, in either
		// order.)
		timer := time.NewTimer(time.Duration(1200+rng.IntN(1800)) * time.Millisecond)
		runFor := timer.C
		for reached != nil || runFor != nil {
			select {
			case <-reached:
				reached = nil
			case <-runFor:
				runFor = nil
			case err := <-errs:
				cancel()
				t.Fatalf("cycle %d: publisher stopped before the kill: %v", cycle, err)
			case <-ctx.Done():
				t.Fatalf("cycle %d: %d acknowledged publishes not reached in time", cycle, l.pubTarget)
			}
		}
		l.mu.Lock()
		l.kills = append(l.kills, time.Now())
		l.mu.Unlock()
		w.kill()
		cancel()
		if err := <-errs; err != nil {
			t.Fatalf("cycle %d: publisher: %v", cycle, err)
		}
		sub.Disconnect(0)
		l.mu.Lock()
		kill := l.kills[cycle]
		for key, c := range l.firstCycle {
			at, ok := l.lastAck[key]
			switch {
			case c > cycle:
			case !ok || !at.Before(kill):
				l.inflightAtKill[cycle+1]++
			case !at.Before(kill.Add(-mqttCrashAckGrace)):
				l.ackedLate[cycle+1]++
			}
		}
		t.Logf("cycle %d: killed after %d acknowledged publishes; %d received messages unacknowledged at the kill, %d acknowledged within %v before it; %d redelivered after the previous kill (%d without DUP, %d acked long before it)",
			cycle, l.pubCount, l.inflightAtKill[cycle+1], l.ackedLate[cycle+1], mqttCrashAckGrace, l.redelivered[cycle], l.noDup[cycle], l.ackedLongBefore[cycle])
		l.mu.Unlock()
	}

	// The last start: the session resumes, a marker published after the
	// restart comes after everything the session still owed.
	w := startWharf()
	sub := mqttCrashSubscriber(t, w.mqtt, crashCycles, l)
	pub := conform.MQTTConnect(t, w.mqtt, "kdb-crash-pub-end")
	conform.MQTTWait(t, pub.Publish(mqttCrashTopic, 1, false, "end"), "publish the end marker")
	select {
	case <-l.end:
	case <-time.After(kdbWait):
		t.Fatal("the end marker did not arrive")
	}
	sub.Disconnect(50)
	w.stop()

	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []string
	for key := range l.published {
		if _, ok := l.firstCycle[key]; !ok {
			lost = append(lost, key)
		}
	}
	slices.Sort(lost)
	var redelivered, noDup, longBefore, inflight, late, dupFirst int
	for c := range crashCycles + 1 {
		redelivered += l.redelivered[c]
		noDup += l.noDup[c]
		longBefore += l.ackedLongBefore[c]
		inflight += l.inflightAtKill[c]
		late += l.ackedLate[c]
		dupFirst += l.dupFirst[c]
	}
	t.Logf("%d kills in %v: %d publishes acknowledged, %d in flight at a kill; %d messages received, %d lost; at the kills %d received and unacknowledged, %d acknowledged within %v; after them %d redelivered (%d without DUP, %d acked long before the kill), %d first receipts with DUP",
		crashCycles, time.Since(start).Round(time.Millisecond), len(l.published), len(l.pubInflight), len(l.firstCycle), len(lost),
		inflight, late, mqttCrashAckGrace, redelivered, noDup, longBefore, dupFirst)
	t.Logf("per restart: redelivered %v; unacknowledged at the kill %v; acknowledged within %v of it %v",
		l.redelivered[1:], l.inflightAtKill[1:], mqttCrashAckGrace, l.ackedLate[1:])
	if len(lost) > 0 {
		t.Errorf("%d acknowledged publishes never delivered: %v", len(lost), head(lost, 20))
	}
	if len(l.unknown) > 0 {
		t.Errorf("%d messages delivered that were never published: %v", len(l.unknown), head(l.unknown, 20))
	}
	for c := 1; c <= crashCycles; c++ {
		if n := l.inflightAtKill[c] + l.ackedLate[c]; l.redelivered[c] > n {
			t.Errorf("restart %d redelivered %d messages, more than the %d in flight at the kill", c, l.redelivered[c], n)
		}
	}
	if len(l.bad) > 0 {
		t.Errorf("%d violations (%d acked long before a kill, %d without DUP), first ones:\n  %s",
			len(l.bad), longBefore, noDup, strings.Join(head(l.bad, 20), "\n  "))
	}
}

// TestConformanceKahaDBCrashSTOMPDurableColonName: the same crash with a
// STOMP durable subscriber (go-stomp) whose activemq.subscriptionName holds
// a colon, which the replay also failed to match: after a SIGKILL the
// subscription resumes after its acknowledged messages, and those it had
// been handed without acknowledging come again with redelivered:true.
func TestConformanceKahaDBCrashSTOMPDurableColonName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kahadb")
	const dest = "/topic/kdb.crash.stomp"
	durable := func(w *wharfProc) (*stomp.Conn, *stomp.Subscription) {
		c, err := stomp.Dial("tcp", w.stomp, stomp.ConnOpt.Host("localhost"), stomp.ConnOpt.HeartBeat(0, 0),
			stomp.ConnOpt.Header("client-id", "kdb-crash-stomp"))
		if err != nil {
			t.Fatalf("stomp connect: %v", err)
		}
		return c, sub(t, c, dest, stomp.AckClientIndividual, subHdr("activemq.subscriptionName", "audit:all"))
	}
	w := startWharf(t, dir)
	c, s := durable(w)
	for i := 1; i <= 10; i++ {
		send(t, c, dest, fmt.Sprint("m", i), hdr("persistent", "true"))
	}
	for i := 1; i <= 10; i++ {
		m := recvBody(t, s, fmt.Sprint("m", i))
		if i <= 6 {
			if err := c.Ack(m); err != nil {
				t.Fatalf("ACK: %v", err)
			}
		}
	}
	// A persistent send on the same connection and topic after the ACKs is
	// handled by the topic's shard after them: its receipt comes once a
	// batch holding the acknowledgements is written.
	send(t, c, dest, "barrier", hdr("persistent", "true"))
	w.kill()

	w = startWharf(t, dir)
	c, s = durable(w)
	defer c.Disconnect()
	for i := 7; i <= 10; i++ {
		m := recvBody(t, s, fmt.Sprint("m", i)) // m1..m6 first would be acknowledged ones again
		if got := m.Header.Get("redelivered"); got != "true" {
			t.Errorf("m%d after the crash: redelivered %q, want true (it was handed out before)", i, got)
		}
		ack(t, c, m)
	}
	ack(t, c, recvBody(t, s, "barrier"))
	send(t, c, dest, "end", hdr("persistent", "true"))
	if m := recvBody(t, s, "end"); m.Header.Get("redelivered") != "" {
		t.Errorf("a message sent after the restart came with redelivered %q", m.Header.Get("redelivered"))
	}
	w.stop()
}
