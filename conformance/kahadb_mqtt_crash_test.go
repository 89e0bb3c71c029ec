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
// say: a message comes again only if its acknowledgement may not have
// been written at the kill, and then with DUP set if its delivery was
// written (the broker stores how far it delivered with each turn's store
// batch; a kill before that batch is written resends without DUP).
//
// When is an acknowledgement written? MQTT confirms none (a PUBACK from a
// subscriber gets no answer), so the test proves it from what the broker
// did after it, not from a time since it was sent (a loaded machine once
// took over 3 s to read and write one):
//   - the broker has at most mqttCrashWindow deliveries of the durable
//     subscription unacknowledged, so when it delivered the message the
//     subscriber received at position i, it had processed the PUBACKs of
//     those received at positions up to i-mqttCrashWindow (the subscriber
//     acknowledges each as it receives it, in order);
//   - a publish the publisher sent after that receipt reached the topic's
//     shard after those acknowledgements, so its store batch comes at or
//     after theirs, and its PUBACK comes once that batch is written.
// So a publish PUBACKed before the kill confirms the acknowledgements of
// the messages received mqttCrashWindow or more positions before the last
// receipt that came before it was sent (only those may never come back),
// and the deliveries of all received before it was sent (those come back
// with DUP).

const (
	mqttCrashTopic    = "kdb/crash/mqtt"
	mqttCrashClientID = "kdb-crash-sub"
	// mqttCrashWindow is the prefetch of an MQTT durable subscription
	// (ActiveMQ's MQTTSubscriptionStrategy: 100; protocols/mqtt's
	// durablePrefetch), which the test's brokers keep.
	mqttCrashWindow = 100
)

// mqttCrashLedger is what the publisher and the subscriber know.
type mqttCrashLedger struct {
	mu sync.Mutex
	// The publisher: PUBACKed publishes, and those sent whose PUBACK had
	// not come at the kill.
	published, pubInflight map[string]bool
	pubCount, pubTarget    int
	reached                chan struct{} // closed when pubCount reaches pubTarget

	// The subscriber: the cycle each message was first received in; per
	// cycle, when each receipt came (in order), and where each message was
	// last received.
	firstCycle map[string]int
	recvAt     [][]time.Time
	lastRecv   map[string]recvPos
	kills      []time.Time // when each kill was sent
	// confirmed[c]: in cycle c, the receipts at positions below it had
	// their acknowledgements confirmed written before the kill (see the
	// top of the file); marked[c]: those below it their delivery. Both
	// set at the kill.
	confirmed, marked []int
	noDupMarked       int // redelivered without DUP although marked
	// pubConfirms[c]: the publisher's PUBACKs in cycle c, each with when
	// its publish was sent.
	pubConfirms [][]pubConfirm

	// Per cycle after the first: messages received again, of them the ones
	// without DUP, the ones whose acknowledgement was confirmed written
	// before a kill; the messages whose acknowledgement was not confirmed
	// at the kill before it (received in it or earlier, since their last
	// receipt); first receipts carrying DUP.
	redelivered, noDup, ackedConfirmed, unconfirmed, dupFirst []int
	bad                                                       []string
	unknown                                                   []string
	end                                                       chan struct{} // closed when the "end" marker arrives
}

// recvPos is where a message was received: the cycle and the position
// among that cycle's receipts.
type recvPos struct{ cycle, i int }

// pubConfirm is one PUBACK the publisher got: when its publish was sent
// and when the PUBACK came.
type pubConfirm struct{ sent, at time.Time }

// confirm sets l.confirmed[cycle] at the kill of cycle (l.mu held): the
// last publish PUBACKed before the kill was sent after some receipts,
// and the acknowledgements of all but the last mqttCrashWindow of those
// are written.
func (l *mqttCrashLedger) confirm(cycle int) {
	kill := l.kills[cycle]
	var sent time.Time
	for _, pc := range l.pubConfirms[cycle] {
		if pc.at.Before(kill) && pc.sent.After(sent) {
			sent = pc.sent
		}
	}
	before, _ := slices.BinarySearchFunc(l.recvAt[cycle], sent, func(at, sent time.Time) int { return at.Compare(sent) })
	l.marked[cycle] = before
	l.confirmed[cycle] = max(before-mqttCrashWindow, 0)
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
	prev, seenBefore := l.lastRecv[key]
	l.lastRecv[key] = recvPos{cycle, len(l.recvAt[cycle])}
	l.recvAt[cycle] = append(l.recvAt[cycle], time.Now())
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
		// The broker stores how far it delivered with the batch of the
		// turn that delivered (engine's markDelivered): a kill before
		// that batch is written resends without DUP. Once a publish sent
		// after the receipt was PUBACKed, the mark was written.
		l.noDup[cycle]++
		if prev.i < l.marked[prev.cycle] {
			l.noDupMarked++
			l.bad = append(l.bad, fmt.Sprintf("%s redelivered in cycle %d without DUP: received in cycle %d at position %d, its delivery confirmed written (positions below %d) before the kill",
				key, cycle, prev.cycle, prev.i, l.marked[prev.cycle]))
		}
	}
	// Its acknowledgement, sent when it was last received, was confirmed
	// written at the kill that ended that cycle.
	if seenBefore && prev.i < l.confirmed[prev.cycle] {
		l.ackedConfirmed[cycle]++
		if len(l.bad) < 20 {
			l.bad = append(l.bad, fmt.Sprintf("%s redelivered in cycle %d: received in cycle %d at position %d, its PUBACK confirmed written (positions below %d) before the kill",
				key, cycle, prev.cycle, prev.i, l.confirmed[prev.cycle]))
		}
	}
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
		sent := time.Now()
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
		l.pubConfirms[cycle] = append(l.pubConfirms[cycle], pubConfirm{sent, time.Now()})
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
		firstCycle: map[string]int{}, lastRecv: map[string]recvPos{},
		recvAt: make([][]time.Time, crashCycles+1), confirmed: make([]int, crashCycles+1), marked: make([]int, crashCycles+1), pubConfirms: make([][]pubConfirm, crashCycles+1),
		redelivered: make([]int, crashCycles+1), noDup: make([]int, crashCycles+1),
		ackedConfirmed: make([]int, crashCycles+1), unconfirmed: make([]int, crashCycles+1),
		dupFirst: make([]int, crashCycles+1), end: make(chan struct{}),
	}
	start := time.Now()
	// The brokers' warnings and errors, each cycle's: a failed store
	// write drops the acknowledgements it held, so it fails the test; the
	// rest is shown when something else fails.
	var brokerLog []string
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
		brokerLog = append(brokerLog, warnLines(w, cycle)...)
		cancel()
		if err := <-errs; err != nil {
			t.Fatalf("cycle %d: publisher: %v", cycle, err)
		}
		sub.Disconnect(0)
		l.mu.Lock()
		l.confirm(cycle)
		for _, pos := range l.lastRecv {
			if pos.i >= l.confirmed[pos.cycle] {
				l.unconfirmed[cycle+1]++
			}
		}
		t.Logf("cycle %d: killed after %d acknowledged publishes and %d receipts, the acknowledgements of the first %d confirmed written; %d redelivered after the previous kill (%d without DUP, %d confirmed written before it)",
			cycle, l.pubCount, len(l.recvAt[cycle]), l.confirmed[cycle], l.redelivered[cycle], l.noDup[cycle], l.ackedConfirmed[cycle])
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
	brokerLog = append(brokerLog, warnLines(w, crashCycles)...)
	t.Cleanup(func() {
		if t.Failed() && len(brokerLog) > 0 {
			t.Logf("the brokers' warnings and errors:\n  %s", strings.Join(brokerLog, "\n  "))
		}
	})
	for _, line := range brokerLog {
		if strings.Contains(line, `"msg":"store write failed"`) {
			t.Errorf("a store write failed (its acknowledgements are lost): %s", line)
		}
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []string
	for key := range l.published {
		if _, ok := l.firstCycle[key]; !ok {
			lost = append(lost, key)
		}
	}
	slices.Sort(lost)
	var redelivered, noDup, confirmed, unconfirmed, dupFirst int
	for c := range crashCycles + 1 {
		redelivered += l.redelivered[c]
		noDup += l.noDup[c]
		confirmed += l.ackedConfirmed[c]
		unconfirmed += l.unconfirmed[c]
		dupFirst += l.dupFirst[c]
	}
	t.Logf("%d kills in %v: %d publishes acknowledged, %d in flight at a kill; %d messages received, %d lost; summed over the kills %d received without their acknowledgement confirmed written; after them %d redelivered (%d without DUP, %d whose acknowledgement was confirmed written), %d first receipts with DUP",
		crashCycles, time.Since(start).Round(time.Millisecond), len(l.published), len(l.pubInflight), len(l.firstCycle), len(lost),
		unconfirmed, redelivered, noDup, confirmed, dupFirst)
	t.Logf("per restart: redelivered %v; received without their acknowledgement confirmed at the kill %v",
		l.redelivered[1:], l.unconfirmed[1:])
	if len(lost) > 0 {
		t.Errorf("%d acknowledged publishes never delivered: %v", len(lost), head(lost, 20))
	}
	if len(l.unknown) > 0 {
		t.Errorf("%d messages delivered that were never published: %v", len(l.unknown), head(l.unknown, 20))
	}
	for c := 1; c <= crashCycles; c++ {
		if n := l.unconfirmed[c]; l.redelivered[c] > n {
			t.Errorf("restart %d redelivered %d messages, more than the %d whose acknowledgement was not confirmed written at the kill", c, l.redelivered[c], n)
		}
	}
	if len(l.bad) > 0 {
		t.Errorf("%d violations (%d whose acknowledgement was confirmed written before a kill, %d without DUP whose delivery was), first ones:\n  %s",
			len(l.bad), confirmed, l.noDupMarked, strings.Join(head(l.bad, 20), "\n  "))
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

// warnLines returns w's log lines at level WARN or ERROR, each prefixed
// with the cycle it ran in.
func warnLines(w *wharfProc, cycle int) []string {
	lines, _ := w.log.snapshot()
	var out []string
	for _, line := range lines {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, fmt.Sprintf("cycle %d: %s", cycle, line))
		}
	}
	return out
}
