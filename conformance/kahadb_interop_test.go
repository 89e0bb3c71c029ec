package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb/command"
)

// The two directions of issue 4 item 5: a KahaDB directory written by
// ActiveMQ 5.17 is recovered by Wharf (TestConformanceKahaDBFromActiveMQ),
// and a single-shard Wharf journal by ActiveMQ
// (TestConformanceKahaDBToActiveMQ); each once after a clean stop and once
// after SIGKILL. The messages are checked field by field with the Go
// OpenWire client: identity, headers, properties of every type, and body.

// kdbWait bounds each receive from a broker that has just recovered a store.
const kdbWait = 15 * time.Second

// richMessage is message i of a scenario: a TextMessage with non-BMP text,
// a BytesMessage or a MapMessage (i mod 3), with a property of every
// primitive type, the priority i mod 10, and JMS headers set.
func richMessage(key string, i int) *wire.Message {
	var m *wire.Message
	switch i % 3 {
	case 0:
		m = client.NewTextMessage("héllo 🌍 wörld ✓ " + key + " \u0000 end")
	case 1:
		m = client.NewBytesMessage(append([]byte{0, 1, 2, 0xff, 0xfe, 0x80}, key...))
	default:
		var err error
		m, err = client.NewMapMessage(map[string]any{
			"key": key, "n": int32(i), "pi": 3.25, "ok": true,
			"raw": []byte{9, 8, 7, 0}, "emoji": "🚢 ⚓", "big": int64(-1) << 50,
		})
		if err != nil {
			panic(err)
		}
	}
	m.Priority = byte(i % 10)
	m.CorrelationId = "corr-" + key
	m.Type = "kahadb-interop"
	m.ReplyTo = wire.NewQueue("kdb.reply")
	m.Expiration = time.Now().Add(2 * time.Hour).UnixMilli()
	if err := m.SetProperties(map[string]any{
		"key":    key,
		"i":      int32(i),
		"long":   int64(1)<<40 + int64(i),
		"flag":   i%2 == 0,
		"double": 1.5 * float64(i),
		"float":  float32(i) / 4,
		"short":  int16(-i),
		"byte":   int8(i),
		"text":   "日本語 ✓ 😀",
	}); err != nil {
		panic(err)
	}
	return m
}

// markerMessage is sent after the expected messages have been received:
// the next message must be it, so nothing else (an acknowledged or
// rolled-back message come back) was left. Priority 0 puts it behind any
// stray message even on a prioritized destination.
func markerMessage(key string) *wire.Message {
	m := client.NewTextMessage("marker " + key)
	m.Priority = 0
	if err := m.SetProperties(map[string]any{"key": key, "i": int32(1000)}); err != nil {
		panic(err)
	}
	return m
}

// propKey is the "key" property, which names every test message.
func propKey(m *wire.Message) string {
	p, err := m.Properties(wire.DefaultLimits())
	if err != nil {
		return fmt.Sprintf("<properties: %v>", err)
	}
	k, _ := p["key"].(string)
	return k
}

func keysOf(ms []*wire.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = propKey(m)
	}
	return out
}

func destString(d *wire.Destination) string {
	if d == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s(%s)", wire.TypeName(d.Kind), d.PhysicalName)
}

// diffMessage lists how got differs from want in what a store must keep:
// the message id, type, destination, JMS headers, properties and body.
func diffMessage(got, want *wire.Message) []string {
	var d []string
	check := func(what string, g, w any) {
		if !reflect.DeepEqual(g, w) {
			d = append(d, fmt.Sprintf("%s: got %#v, want %#v", what, g, w))
		}
	}
	lim := wire.DefaultLimits()
	if want.MessageId != nil {
		check("message id", got.MessageId.String(), want.MessageId.String())
	}
	check("type", wire.TypeName(got.Kind), wire.TypeName(want.Kind))
	check("destination", destString(got.Destination), destString(want.Destination))
	check("JMSCorrelationID", got.CorrelationId, want.CorrelationId)
	check("JMSType", got.Type, want.Type)
	check("JMSPriority", got.Priority, want.Priority)
	check("JMSDeliveryMode persistent", got.Persistent, want.Persistent)
	check("JMSExpiration", got.Expiration, want.Expiration)
	if want.Timestamp != 0 {
		check("JMSTimestamp", got.Timestamp, want.Timestamp)
	}
	if want.ReplyTo != nil {
		check("JMSReplyTo", destString(got.ReplyTo), destString(want.ReplyTo))
	}
	gp, err := got.Properties(lim)
	if err != nil {
		d = append(d, "properties: "+err.Error())
	}
	wp, _ := want.Properties(lim)
	check("properties", gp, wp)
	if got.Kind != want.Kind {
		return d
	}
	switch want.Kind {
	case wire.TypeActiveMQTextMessage:
		g, _, err := got.Text(lim)
		if err != nil {
			d = append(d, "text body: "+err.Error())
		}
		w, _, _ := want.Text(lim)
		check("text body", g, w)
	case wire.TypeActiveMQBytesMessage:
		g, err := got.Bytes(lim)
		if err != nil {
			d = append(d, "bytes body: "+err.Error())
		}
		w, _ := want.Bytes(lim)
		check("bytes body", g, w)
	case wire.TypeActiveMQMapMessage:
		g, err := got.Map(lim)
		if err != nil {
			d = append(d, "map body: "+err.Error())
		}
		w, _ := want.Map(lim)
		check("map body", g, w)
	}
	return d
}

// checkMessages compares received messages with the expected ones, in
// order.
func checkMessages(t *testing.T, what string, got, want []*wire.Message) {
	t.Helper()
	if !reflect.DeepEqual(keysOf(got), keysOf(want)) {
		t.Errorf("%s: got messages %q, want %q", what, keysOf(got), keysOf(want))
		return
	}
	for i := range want {
		if d := diffMessage(got[i], want[i]); len(d) > 0 {
			t.Errorf("%s: message %s differs:\n  %s", what, propKey(want[i]), strings.Join(d, "\n  "))
		}
	}
}

// receiveN receives n messages, failing when one does not come within
// kdbWait.
func receiveN(t *testing.T, k *client.Consumer, what string, n int) []*wire.Message {
	t.Helper()
	var out []*wire.Message
	for len(out) < n {
		ctx, cancel := context.WithTimeout(context.Background(), kdbWait)
		m, err := k.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: message %d of %d: %v (received %q)", what, len(out)+1, n, err, keysOf(out))
		}
		out = append(out, m)
	}
	return out
}

// expectMarkerNext sends a marker to dest with p and checks that it is the
// next message k receives.
func expectMarkerNext(t *testing.T, p *client.Producer, k *client.Consumer, what string) {
	t.Helper()
	key := "marker-" + what
	owSend(t, p, markerMessage(key))
	got := receiveN(t, k, what+" marker", 1)[0]
	if propKey(got) != key {
		t.Errorf("%s: after the expected messages got %q (priority %d), want the marker %q", what, propKey(got), got.Priority, key)
	}
}

// owSend sends m synchronously: the broker has stored it when send returns.
func owSend(t *testing.T, p *client.Producer, m *wire.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), kdbWait)
	defer cancel()
	if err := p.Send(ctx, m, true); err != nil {
		t.Fatalf("send %s to %s: %v", propKey(m), destString(p.Destination()), err)
	}
}

// must(f())(t) is f's value, or the test fails with f's error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// --- ActiveMQ → Wharf ---------------------------------------------------

// fromAMQExpect is what Wharf must recover from the ActiveMQ directory.
type fromAMQExpect struct {
	queue, txQueue, sub1, sub2 []*wire.Message
}

const (
	fromQueue    = "kdb.from.q"
	fromTxQueue  = "kdb.from.tx"
	fromTopic    = "kdb.from.t"
	fromBarrier  = "kdb.from.barrier"
	fromClientID = "kdb-from-amq"
	sub2Selector = "i >= 3"
)

// writeWithActiveMQ runs the scenario against ActiveMQ: persistent
// messages to a queue, partly acknowledged (CLIENT ack of a prefix, then
// one INDIVIDUAL ack); local transactions committed and rolled back, one
// left open; two offline durable subscriptions (one with a selector) with
// a backlog, the first partly acknowledged. It returns what is pending.
func writeWithActiveMQ(t *testing.T, addr string) fromAMQExpect {
	t.Helper()
	var exp fromAMQExpect
	c := dialOW(t, addr, fromClientID)
	s := must(c.Session(false))(t)
	q, tq, top := wire.NewQueue(fromQueue), wire.NewQueue(fromTxQueue), wire.NewTopic(fromTopic)

	// Queue: 12 messages; a CLIENT-ack consumer takes 6 and acknowledges
	// the first 4; an INDIVIDUAL-ack one then acks only the second it gets.
	qp := must(s.Producer(q))(t)
	var sent []*wire.Message
	for i := range 12 {
		m := richMessage(fmt.Sprintf("q%02d", i), i)
		owSend(t, qp, m)
		sent = append(sent, m)
	}
	k := must(s.Consumer(q, client.ConsumerOptions{AckMode: client.AckClient, Prefetch: 6}))(t)
	got := receiveN(t, k, "client-ack consumer", 6)
	if err := k.Ack(got[3]); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	k = must(s.Consumer(q, client.ConsumerOptions{AckMode: client.AckIndividual, Prefetch: 3}))(t)
	got = receiveN(t, k, "individual-ack consumer", 3)
	checkMessages(t, "ActiveMQ redelivery", got, sent[4:7])
	if err := k.Ack(got[1]); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	exp.queue = append([]*wire.Message{sent[4]}, sent[6:]...)

	// Transactions: t0-t2 committed, t3-t4 rolled back, t5 committed; a
	// transacted consumer commits t0 and rolls back t1; t6 stays in an
	// open transaction (rolled back by recovery).
	ts := must(c.Session(true))(t)
	tp := must(ts.Producer(tq))(t)
	var tsent []*wire.Message
	for i := range 7 {
		m := richMessage(fmt.Sprintf("t%d", i), i)
		owSend(t, tp, m)
		tsent = append(tsent, m)
		switch i {
		case 2, 5:
			if err := ts.Commit(); err != nil {
				t.Fatal(err)
			}
		case 4:
			if err := ts.Rollback(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cs := must(c.Session(true))(t)
	tk := must(cs.Consumer(tq, client.ConsumerOptions{Prefetch: client.PrefetchPull}))(t)
	checkMessages(t, "ActiveMQ transacted receive", receiveN(t, tk, "transacted consumer", 1), tsent[:1])
	if err := cs.Commit(); err != nil {
		t.Fatal(err)
	}
	checkMessages(t, "ActiveMQ transacted receive", receiveN(t, tk, "transacted consumer", 1), tsent[1:2])
	if err := cs.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := tk.Close(); err != nil {
		t.Fatal(err)
	}
	exp.txQueue = []*wire.Message{tsent[1], tsent[2], tsent[5]}

	// Durable subscriptions, offline while 8 messages are published; sub1
	// then takes 3 and acknowledges 2.
	for name, sel := range map[string]string{"sub1": "", "sub2": sub2Selector} {
		d := must(s.Consumer(top, client.ConsumerOptions{DurableName: name, Selector: sel, AckMode: client.AckClient}))(t)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tpub := must(s.Producer(top))(t)
	var pub []*wire.Message
	for i := range 8 {
		m := richMessage(fmt.Sprintf("d%d", i), i)
		owSend(t, tpub, m)
		pub = append(pub, m)
	}
	d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", AckMode: client.AckClient, Prefetch: 3}))(t)
	got = receiveN(t, d, "sub1", 3)
	checkMessages(t, "ActiveMQ sub1", got, pub[:3])
	if err := d.Ack(got[1]); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	exp.sub1 = pub[2:]
	exp.sub2 = pub[3:]

	// Acks are written to the journal without waiting for a sync; a
	// synchronous persistent send after them on the same connection is
	// stored after them, so once it is answered they are on disk.
	owSend(t, must(s.Producer(wire.NewQueue(fromBarrier)))(t), markerMessage("barrier"))
	return exp
}

// checkRecoveredFromAMQ consumes what Wharf recovered and compares it with
// what ActiveMQ had pending.
func checkRecoveredFromAMQ(t *testing.T, addr string, exp fromAMQExpect) {
	t.Helper()
	c := dialOW(t, addr, fromClientID)
	s := must(c.Session(false))(t)
	for _, tc := range []struct {
		name string
		dest *wire.Destination
		want []*wire.Message
	}{
		{"queue " + fromQueue, wire.NewQueue(fromQueue), exp.queue},
		{"queue " + fromTxQueue, wire.NewQueue(fromTxQueue), exp.txQueue},
	} {
		k := must(s.Consumer(tc.dest, client.ConsumerOptions{}))(t)
		checkMessages(t, tc.name, receiveN(t, k, tc.name, len(tc.want)), tc.want)
		expectMarkerNext(t, must(s.Producer(tc.dest))(t), k, tc.name)
	}
	top := wire.NewTopic(fromTopic)
	subs := map[string]*client.Consumer{}
	for _, sc := range []struct {
		name, sel string
		want      []*wire.Message
	}{{"sub1", "", exp.sub1}, {"sub2", sub2Selector, exp.sub2}} {
		k := must(s.Consumer(top, client.ConsumerOptions{DurableName: sc.name, Selector: sc.sel}))(t)
		checkMessages(t, "durable "+sc.name, receiveN(t, k, sc.name, len(sc.want)), sc.want)
		subs[sc.name] = k
	}
	p := must(s.Producer(top))(t)
	owSend(t, p, markerMessage("marker-topic"))
	for name, k := range subs {
		if got := receiveN(t, k, name+" marker", 1)[0]; propKey(got) != "marker-topic" {
			t.Errorf("durable %s: after its backlog got %q, want the marker", name, propKey(got))
		}
	}
}

// TestConformanceKahaDBFromActiveMQ: Wharf started on a KahaDB directory
// that ActiveMQ 5.17 wrote recovers every pending queue message and
// durable subscription backlog, intact, and nothing that was acknowledged
// or rolled back.
func TestConformanceKahaDBFromActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, how := range []string{"clean stop", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kahadb")
			amq := startActiveMQ(t, dir)
			exp := writeWithActiveMQ(t, amq.openwire)
			if how == "SIGKILL" {
				amq.kill()
			} else {
				amq.stop()
			}
			// Whether t1 (received in a transaction that rolled back, then
			// its consumer closed) is still in ActiveMQ's journal varies from
			// run to run on ActiveMQ's side. The reference for what Wharf
			// must recover is what ActiveMQ itself recovers from the same
			// files: restart ActiveMQ on a copy and browse.
			exp.txQueue = activeMQRecovers(t, dir, exp.txQueue)
			w := startWharf(t, dir)
			for _, rec := range w.logged("Recovery replayed operations from the journal") {
				t.Logf("wharf: Recovery replayed operations from the journal: records=%v skipped=%v messages=%v subscriptions=%v",
					rec["records"], rec["skipped"], rec["messages"], rec["subscriptions"])
			}
			if recs := w.logged("journal record skipped"); len(recs) > 0 {
				t.Errorf("wharf skipped %d records of ActiveMQ's journal, e.g. %v", len(recs), recs[0])
			}
			checkRecoveredFromAMQ(t, w.openwire, exp)
			w.stop()
		})
	}
}

// --- Wharf → ActiveMQ ---------------------------------------------------

const (
	toQueue    = "kdb.to.q"
	toTopic    = "kdb.to.t"
	toClientID = "kdb-to-amq"
)

// stompExpect is a message sent over STOMP as an OpenWire consumer should
// see it: a TextMessage without content-length, else a BytesMessage; the
// custom headers become string properties.
func stompExpect(key, body string, text bool, dest *wire.Destination) *wire.Message {
	var m *wire.Message
	if text {
		m = client.NewTextMessage(body)
	} else {
		m = client.NewBytesMessage([]byte(body))
	}
	m.Destination = dest
	m.Priority = 4
	m.CorrelationId = "corr-" + key
	if err := m.SetProperties(map[string]any{"key": key, "color": "red ✓"}); err != nil {
		panic(err)
	}
	return m
}

// stompSend sends a persistent message over STOMP with a receipt.
func stompSend(t *testing.T, c *stomp.Conn, dest, key, body string, text bool, tx *stomp.Transaction) {
	t.Helper()
	opts := []func(*frame.Frame) error{
		stomp.SendOpt.Header("persistent", "true"),
		stomp.SendOpt.Header("key", key),
		stomp.SendOpt.Header("color", "red ✓"),
		stomp.SendOpt.Header("correlation-id", "corr-"+key),
	}
	if text {
		opts = append(opts, stomp.SendOpt.NoContentLength)
	}
	var err error
	if tx != nil {
		err = tx.Send(dest, "", []byte(body), opts...)
	} else {
		err = c.Send(dest, "", []byte(body), append(opts, stomp.SendOpt.Receipt)...)
	}
	if err != nil {
		t.Fatalf("STOMP send %s: %v", key, err)
	}
}

// toAMQExpect is what ActiveMQ must recover from the Wharf directory.
type toAMQExpect struct{ queue, sub []*wire.Message }

// writeWithWharf runs the scenario against Wharf: persistent messages over
// OpenWire and STOMP to a queue (partly acknowledged, a STOMP transaction
// committed and one aborted) and to a topic with an offline durable
// subscription (partly acknowledged).
func writeWithWharf(t *testing.T, w *wharfProc) toAMQExpect {
	t.Helper()
	var exp toAMQExpect
	c := dialOW(t, w.openwire, toClientID)
	s := must(c.Session(false))(t)
	q, top := wire.NewQueue(toQueue), wire.NewTopic(toTopic)
	d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", AckMode: client.AckClient}))(t)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	qp, tp := must(s.Producer(q))(t), must(s.Producer(top))(t)
	var qsent, tsent []*wire.Message
	for i := range 10 {
		m := richMessage(fmt.Sprintf("ow%02d", i), i)
		owSend(t, qp, m)
		qsent = append(qsent, m)
	}
	for i := range 6 {
		m := richMessage(fmt.Sprintf("owt%d", i), i)
		owSend(t, tp, m)
		tsent = append(tsent, m)
	}

	sc := dial(t, w.stomp)
	for i := range 4 {
		key, text := fmt.Sprintf("st%d", i), i%2 == 0
		body := fmt.Sprintf("stomp %s é 🌍", key)
		stompSend(t, sc, "/queue/"+toQueue, key, body, text, nil)
		qsent = append(qsent, stompExpect(key, body, text, q))
	}
	for i := range 3 {
		key, text := fmt.Sprintf("stt%d", i), i%2 == 1
		body := fmt.Sprintf("stomp topic %s ⚓", key)
		stompSend(t, sc, "/topic/"+toTopic, key, body, text, nil)
		tsent = append(tsent, stompExpect(key, body, text, top))
	}
	tx := must(sc.BeginWithError())(t)
	for i := range 2 {
		key := fmt.Sprintf("stx%d", i)
		body := "stomp tx " + key
		stompSend(t, sc, "/queue/"+toQueue, key, body, true, tx)
		qsent = append(qsent, stompExpect(key, body, true, q))
	}
	if err := tx.CommitWithReceipt(); err != nil {
		t.Fatal(err)
	}
	tx = must(sc.BeginWithError())(t)
	stompSend(t, sc, "/queue/"+toQueue, "aborted", "never", true, tx)
	if err := tx.AbortWithReceipt(); err != nil {
		t.Fatal(err)
	}

	k := must(s.Consumer(q, client.ConsumerOptions{AckMode: client.AckClient, Prefetch: 3}))(t)
	got := receiveN(t, k, "client-ack consumer", 3)
	checkMessages(t, "Wharf queue", got[:1], qsent[:1])
	if err := k.Ack(got[1]); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	exp.queue = qsent[2:]
	d = must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", AckMode: client.AckClient, Prefetch: 2}))(t)
	got = receiveN(t, d, "sub1", 2)
	if err := d.Ack(got[0]); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	exp.sub = tsent[1:]
	// The acks are asynchronous; a synchronous send after them on the same
	// connection is stored after them.
	owSend(t, must(s.Producer(wire.NewQueue("kdb.to.barrier")))(t), markerMessage("barrier"))
	return exp
}

// checkRecoveredByAMQ consumes, from ActiveMQ, what it recovered.
func checkRecoveredByAMQ(t *testing.T, addr string, exp toAMQExpect) {
	t.Helper()
	c := dialOW(t, addr, toClientID)
	s := must(c.Session(false))(t)
	q, top := wire.NewQueue(toQueue), wire.NewTopic(toTopic)
	k := must(s.Consumer(q, client.ConsumerOptions{}))(t)
	checkMessages(t, "ActiveMQ queue "+toQueue, receiveN(t, k, "queue", len(exp.queue)), exp.queue)
	expectMarkerNext(t, must(s.Producer(q))(t), k, "queue "+toQueue)
	d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1"}))(t)
	checkMessages(t, "ActiveMQ durable sub1", receiveN(t, d, "sub1", len(exp.sub)), exp.sub)
	expectMarkerNext(t, must(s.Producer(top))(t), d, "durable sub1")
}

// TestConformanceKahaDBToActiveMQ: ActiveMQ 5.17 started on the directory
// of a one-shard Wharf (a journal and no db.data) recovers every pending
// message, whether Wharf stopped cleanly or was killed.
func TestConformanceKahaDBToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	for _, how := range []string{"SIGTERM", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kahadb")
			w := startWharf(t, dir)
			exp := writeWithWharf(t, w)
			if how == "SIGKILL" {
				w.kill()
			} else {
				w.stop()
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
				if strings.HasPrefix(e.Name(), "db.") {
					t.Errorf("wharf left %s in %s: ActiveMQ would trust its index over the journal", e.Name(), dir)
				}
			}
			t.Logf("store after wharf: %v", names)
			checkJournalKeys(t, dir)
			amq := startActiveMQ(t, dir)
			if strings.Contains(amq.log.String(), "Recovering from the journal") {
				t.Logf("activemq: %s", grepLine(amq.log.String(), "Recovering from the journal"))
			}
			checkRecoveredByAMQ(t, amq.openwire, exp)
			if bad := grepLine(amq.log.String(), "ERROR"); bad != "" {
				t.Errorf("ActiveMQ logged an error: %s", bad)
			}
			amq.stop()
		})
	}
}

// grepLine returns the first line of s containing sub, or "".
func grepLine(s, sub string) string {
	for _, line := range strings.Split(s, "\n") {
		if strings.Contains(line, sub) {
			return line
		}
	}
	return ""
}

// --- ActiveMQ → Wharf → ActiveMQ ---------------------------------------

// TestConformanceKahaDBRoundTrip: a store goes from ActiveMQ to Wharf and
// back. ActiveMQ leaves its index (db.data) behind; Wharf consumes the
// backlog and adds messages to the journal; ActiveMQ, started again on the
// directory, must see exactly what Wharf left pending, not what its own
// index remembers. In "cleanup" Wharf's journal rotates (64 KiB files) and
// its cleanup removes the journal file ActiveMQ's messages were in.
func TestConformanceKahaDBRoundTrip(t *testing.T) {
	skipWithoutActiveMQ(t)
	t.Run("append", func(t *testing.T) { kahadbRoundTrip(t, false) })
	t.Run("cleanup", func(t *testing.T) { kahadbRoundTrip(t, true) })
}

func kahadbRoundTrip(t *testing.T, cleanup bool) {
	const clientID = "kdb-round-trip"
	q, top := wire.NewQueue("kdb.rt.q"), wire.NewTopic("kdb.rt.t")
	dir := filepath.Join(t.TempDir(), "kahadb")

	amq := startActiveMQ(t, dir)
	c := dialOW(t, amq.openwire, clientID)
	s := must(c.Session(false))(t)
	if !cleanup {
		// A durable subscription's record pins the journal file it is in.
		d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1"}))(t)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var qsent, tsent []*wire.Message
	qp, tp := must(s.Producer(q))(t), must(s.Producer(top))(t)
	for i := range 6 {
		m := richMessage(fmt.Sprintf("aq%d", i), i)
		owSend(t, qp, m)
		qsent = append(qsent, m)
		m = richMessage(fmt.Sprintf("at%d", i), i)
		owSend(t, tp, m)
		tsent = append(tsent, m)
	}
	c.Close()
	amq.stop()

	var opts []string
	if cleanup {
		opts = append(opts, "journal_max_file_length: 65536")
	}
	w := startWharf(t, dir, opts...)
	c = dialOW(t, w.openwire, clientID)
	s = must(c.Session(false))(t)
	consumed := 2
	if cleanup {
		consumed = len(qsent)
	}
	k := must(s.Consumer(q, client.ConsumerOptions{AckMode: client.AckClient, Prefetch: consumed}))(t)
	got := receiveN(t, k, "wharf queue", consumed)
	checkMessages(t, "wharf queue", got, qsent[:consumed])
	if err := k.Ack(got[consumed-1]); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if cleanup {
		// Fill the journal past a few files with messages that are
		// consumed at once.
		filler := wire.NewQueue("kdb.rt.filler")
		fp := must(s.Producer(filler))(t)
		fk := must(s.Consumer(filler, client.ConsumerOptions{}))(t)
		for i := range 200 {
			m := client.NewBytesMessage(make([]byte, 1024))
			if err := m.SetProperties(map[string]any{"key": fmt.Sprintf("f%d", i)}); err != nil {
				t.Fatal(err)
			}
			owSend(t, fp, m)
			receiveN(t, fk, "filler", 1)
		}
		if err := fk.Close(); err != nil {
			t.Fatal(err)
		}
	} else {
		d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", AckMode: client.AckClient, Prefetch: 3}))(t)
		got = receiveN(t, d, "wharf sub1", 3)
		checkMessages(t, "wharf sub1", got, tsent[:3])
		if err := d.Ack(got[2]); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	qp, tp = must(s.Producer(q))(t), must(s.Producer(top))(t)
	for i := range 2 {
		m := richMessage(fmt.Sprintf("wq%d", i), i)
		owSend(t, qp, m)
		qsent = append(qsent, m)
		m = richMessage(fmt.Sprintf("wt%d", i), i)
		owSend(t, tp, m)
		tsent = append(tsent, m)
	}
	owSend(t, must(s.Producer(wire.NewQueue("kdb.rt.barrier")))(t), markerMessage("barrier"))
	c.Close()
	w.stop()
	names := dirNames(t, dir)
	t.Logf("store after wharf: %v", names)
	for _, name := range names {
		if strings.HasPrefix(name, "db.") {
			t.Errorf("wharf left ActiveMQ's %s, stale since wharf wrote the journal", name)
		}
	}
	if cleanup && slices.Contains(names, "db-1.log") {
		t.Fatalf("wharf's cleanup left db-1.log (ActiveMQ's file, all consumed) in place: %v", names)
	}

	amq = startActiveMQ(t, dir)
	c = dialOW(t, amq.openwire, clientID)
	s = must(c.Session(false))(t)
	k = must(s.Consumer(q, client.ConsumerOptions{}))(t)
	checkMessages(t, "ActiveMQ queue", receiveN(t, k, "queue", len(qsent)-consumed), qsent[consumed:])
	expectMarkerNext(t, must(s.Producer(q))(t), k, "queue")
	if !cleanup {
		d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1"}))(t)
		checkMessages(t, "ActiveMQ sub1", receiveN(t, d, "sub1", len(tsent)-3), tsent[3:])
		expectMarkerNext(t, must(s.Producer(top))(t), d, "durable sub1")
	}
	amq.stop()
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// checkJournalKeys checks that every AddMessage in the journal files of dir
// is keyed as ActiveMQ keys it, by MessageId.toProducerKey() (reference
// kahadb.md §4): ActiveMQ looks a message up by that key when it is
// acknowledged, so a message stored under another key would come back after
// ActiveMQ's next restart.
func checkJournalKeys(t *testing.T, dir string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "db-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	adds := 0
	for _, path := range paths {
		for _, jb := range readBatches(t, path) {
			for _, r := range jb.records {
				c, err := command.Decode(r)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				add, ok := c.(*command.AddMessage)
				if !ok {
					continue
				}
				adds++
				ds, err := wire.Unmarshal(add.Message, wire.StoreFormat(), wire.DefaultLimits())
				if err != nil {
					t.Fatalf("%s: message %s: %v", path, add.MessageID, err)
				}
				id := ds.(*wire.Message).MessageId
				key := id.String()
				if id.TextView != "" {
					key = id.ProducerId.String() + ":" + strconv.FormatInt(id.ProducerSequenceId, 10)
				}
				if add.MessageID != key {
					t.Errorf("%s: AddMessage keyed %q, its message's producer key is %q", path, add.MessageID, key)
				}
			}
		}
	}
	if adds == 0 {
		t.Errorf("no AddMessage in the journal of %s", dir)
	}
}

// activeMQRecovers starts ActiveMQ on a copy of dir and returns the
// messages of want (by key) that it recovers on the transaction queue.
func activeMQRecovers(t *testing.T, dir string, want []*wire.Message) []*wire.Message {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "kahadb-copy")
	if err := os.CopyFS(cp, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cp, "lock"))
	// Without its index ActiveMQ rebuilds the state from the journal alone,
	// as Wharf does: the like-for-like reference.
	for _, f := range []string{"db.data", "db.redo", "db.free"} {
		os.Remove(filepath.Join(cp, f))
	}
	amq := startActiveMQ(t, cp)
	defer amq.stop()
	c := dialOW(t, amq.openwire, "kdb-reference")
	defer c.Close()
	s := must(c.Session(false))(t)
	held := map[string]bool{}
	bk := must(s.Consumer(wire.NewQueue(fromTxQueue), client.ConsumerOptions{Browser: true}))(t)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		m, err := bk.Receive(ctx)
		cancel()
		if err != nil {
			break
		}
		held[propKey(m)] = true
	}
	var kept []*wire.Message
	for _, m := range want {
		if held[propKey(m)] {
			kept = append(kept, m)
		}
	}
	t.Logf("ActiveMQ itself, replaying its journal, recovers %d of %d transaction-queue messages", len(kept), len(want))
	return kept
}
