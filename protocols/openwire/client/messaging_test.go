package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"wharf/protocols/openwire/wire"
)

func TestOpenWireClientRoundTrip(t *testing.T) {
	c := dial(t, nil)
	s := session(t, c, false)
	d := queue(t)
	k := consumer(t, s, d, ConsumerOptions{})
	p := producer(t, s, d)
	replyTo := wire.NewTopic(uniqueName(t, "replies"))
	props := map[string]any{
		"bool": true, "byte": int8(-7), "short": int16(-300), "int": int32(70000),
		"long": int64(math.MinInt64), "float": float32(1.5), "double": math.Pi,
		"string": "snow ☃ and NUL \x00 inside", "empty": "",
	}
	text := "emoji 🎉👍🏽, CJK 漢字, NUL \x00, accents é"
	blob := []byte{0, 1, 2, 0xfe, 0xff, 0}
	mapBody := map[string]any{
		"b": false, "i8": int8(8), "i16": int16(16), "i32": int32(32), "i64": int64(1 << 40),
		"f32": float32(-0.25), "f64": 2.5e300, "s": "map ✓ 🎉", "bytes": []byte{9, 8, 7}, "char": wire.Char('x'),
	}

	tm := NewTextMessage(text)
	tm.CorrelationId = "corr-1"
	tm.Type = "greeting"
	tm.Priority = 7
	tm.ReplyTo = replyTo
	tm.GroupID, tm.GroupSequence = "g1", 3
	tm.Expiration = time.Now().Add(time.Hour).UnixMilli()
	if err := tm.SetProperties(props); err != nil {
		t.Fatal(err)
	}
	bm := NewBytesMessage(blob)
	bm.Persistent = false
	mm, err := NewMapMessage(mapBody)
	if err != nil {
		t.Fatal(err)
	}
	sm := NewMessage()
	if err := sm.SetStream([]any{int32(1), "two", []byte{3}, true}, false); err != nil {
		t.Fatal(err)
	}
	empty := NewMessage()
	zipped := NewMessage()
	zipped.SetText(text, true) // compressed body, as useCompression sends it
	for _, m := range []*wire.Message{tm, mm, sm, empty, zipped} {
		send(t, p, m)
	}
	// A queue of its own for the non-persistent message: ActiveMQ keeps
	// persistent and non-persistent messages in separate cursors, so their
	// relative order is not kept.
	d2 := queue(t)
	k2 := consumer(t, s, d2, ConsumerOptions{})
	send(t, producer(t, s, d2), bm)

	lim := wire.Limits{}
	got := receive(t, k)
	if s := textOf(t, got); s != text {
		t.Errorf("text: got %q, want %q", s, text)
	}
	if got.MessageId.String() != tm.MessageId.String() || got.Destination.String() != d.String() {
		t.Errorf("MessageId %s dest %s, want %s %s", got.MessageId, got.Destination, tm.MessageId, d)
	}
	if got.CorrelationId != "corr-1" || got.Type != "greeting" || got.Priority != 7 || !got.Persistent ||
		got.ReplyTo == nil || *got.ReplyTo != *replyTo || got.GroupID != "g1" || got.GroupSequence != 3 ||
		got.Expiration != tm.Expiration || got.Timestamp != tm.Timestamp || got.RedeliveryCounter != 0 {
		t.Errorf("headers: got %+v", got)
	}
	gotProps, err := got.Properties(lim)
	if err != nil || !reflect.DeepEqual(gotProps, props) {
		t.Errorf("properties: got %#v, %v; want %#v", gotProps, err, props)
	}
	if got.BrokerInTime == 0 {
		t.Errorf("BrokerInTime not set by the broker")
	}

	got = receive(t, k2)
	if b, err := got.Bytes(lim); err != nil || string(b) != string(blob) || got.Persistent {
		t.Errorf("bytes: got %x %v persistent=%v, want %x non-persistent", b, err, got.Persistent, blob)
	}
	got = receive(t, k)
	if m, err := got.Map(lim); err != nil || !reflect.DeepEqual(m, mapBody) {
		t.Errorf("map: got %#v, %v; want %#v", m, err, mapBody)
	}
	got = receive(t, k)
	if v, err := got.Stream(lim); err != nil || !reflect.DeepEqual(v, []any{int32(1), "two", []byte{3}, true}) {
		t.Errorf("stream: got %#v, %v", v, err)
	}
	got = receive(t, k)
	if got.DataStructureType() != wire.TypeActiveMQMessage || got.Content != nil {
		t.Errorf("plain message: got type %d content %x", got.DataStructureType(), got.Content)
	}
	got = receive(t, k)
	if s := textOf(t, got); s != text || !got.Compressed {
		t.Errorf("compressed text: got %q compressed=%v", s, got.Compressed)
	}
}

// A non-BMP character in a property: ActiveMQ 5.17 passes the marshalled
// properties through unchanged unless it has to re-marshal them.
func TestOpenWireClientPropertyNonBMP(t *testing.T) {
	c := dial(t, nil)
	s := session(t, c, false)
	d := queue(t)
	k := consumer(t, s, d, ConsumerOptions{})
	m := NewTextMessage("x")
	if err := m.SetProperties(map[string]any{"emoji": "🎉"}); err != nil {
		t.Fatal(err)
	}
	send(t, producer(t, s, d), m)
	props, err := receive(t, k).Properties(wire.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if props["emoji"] != "🎉" {
		t.Fatalf("property emoji = %q, want 🎉", props["emoji"])
	}
}

func TestOpenWireClientQueueCompetingConsumers(t *testing.T) {
	c := dial(t, nil)
	d := queue(t)
	const n = 40
	consumers := make([]*Consumer, 2)
	for i := range consumers {
		// Prefetch 1 so the broker cannot hand every message to the first.
		consumers[i] = consumer(t, session(t, c, false), d, ConsumerOptions{Prefetch: 1})
	}
	p := producer(t, session(t, c, false), d)
	for i := range n {
		send(t, p, NewTextMessage(strconv.Itoa(i)))
	}
	var mu sync.Mutex
	seen := map[string]int{}
	perConsumer := make([]int, len(consumers))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var wg sync.WaitGroup
	for i, k := range consumers {
		wg.Go(func() {
			for {
				m, err := k.Receive(ctx)
				if err != nil {
					return
				}
				s, _, _ := m.Text(wire.Limits{})
				mu.Lock()
				seen[s]++
				perConsumer[i]++
				if len(seen) == n {
					cancel()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("received %d distinct messages, want %d", len(seen), n)
	}
	for s, cnt := range seen {
		if cnt != 1 {
			t.Errorf("message %s received %d times", s, cnt)
		}
	}
	for i, cnt := range perConsumer {
		if cnt == 0 {
			t.Errorf("consumer %d received nothing (split %v)", i, perConsumer)
		}
	}
	t.Logf("split between consumers: %v", perConsumer)
}

func TestOpenWireClientTopicFanOut(t *testing.T) {
	d := topic(t)
	var consumers []*Consumer
	for range 3 {
		c := dial(t, nil)
		consumers = append(consumers, consumer(t, session(t, c, false), d, ConsumerOptions{}))
	}
	pc := dial(t, nil)
	p := producer(t, session(t, pc, false), d)
	want := []string{"a", "b", "c", "d"}
	sendTexts(t, p, want...)
	for i, k := range consumers {
		equalStrings(t, fmt.Sprintf("subscriber %d", i), receiveTexts(t, k, len(want)), want)
	}
}

func TestOpenWireClientNoLocal(t *testing.T) {
	d := topic(t)
	c := dial(t, nil)
	s := session(t, c, false)
	local := consumer(t, s, d, ConsumerOptions{NoLocal: true})
	other := consumer(t, session(t, dial(t, nil), false), d, ConsumerOptions{})
	sendTexts(t, producer(t, s, d), "from c")
	sendTexts(t, producer(t, session(t, dial(t, nil), false), d), "from elsewhere")
	equalStrings(t, "other subscriber", receiveTexts(t, other, 2), []string{"from c", "from elsewhere"})
	if got := receiveText(t, local); got != "from elsewhere" {
		t.Fatalf("no-local subscriber got %q first, want %q", got, "from elsewhere")
	}
}

func TestOpenWireClientDurableSubscription(t *testing.T) {
	o := testOptions()
	o.ClientID = uniqueName(t, "client")
	c := dial(t, &o)
	d := topic(t)
	name := "sub1"
	s := session(t, c, false)
	k := consumer(t, s, d, ConsumerOptions{DurableName: name})
	// Unsubscribing an active subscription is refused.
	if err := c.Unsubscribe(name); err == nil {
		t.Fatal("Unsubscribe of an active durable subscription succeeded")
	} else {
		t.Logf("unsubscribe while active: %v", err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}

	// Offline: published messages wait for the subscription.
	pc := dial(t, nil)
	p := producer(t, session(t, pc, false), d)
	want := []string{"while", "offline", "🎉"}
	sendTexts(t, p, want...)

	k = consumer(t, s, d, ConsumerOptions{DurableName: name})
	equalStrings(t, "after reconnecting", receiveTexts(t, k, len(want)), want)
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	// Also across connections with the same client id.
	sendTexts(t, p, "next connection")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = dial(t, &o)
	k = consumer(t, session(t, c, false), d, ConsumerOptions{DurableName: name})
	if got := receiveText(t, k); got != "next connection" {
		t.Fatalf("got %q", got)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe(name); err != nil {
		t.Fatalf("Unsubscribe: %v", err)
	}
	err := c.Unsubscribe(name)
	if cls := ExceptionClass(err); cls != "javax.jms.InvalidDestinationException" {
		t.Fatalf("second Unsubscribe = %v, want javax.jms.InvalidDestinationException", err)
	}
}

func TestOpenWireClientTransactedSession(t *testing.T) {
	c := dial(t, nil)
	d := queue(t)
	ts := session(t, c, true)
	p := producer(t, ts, d)
	// Nothing open yet: Commit and Rollback send nothing and succeed.
	if err := ts.Commit(); err != nil {
		t.Fatalf("empty Commit: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for _, s := range []string{"rolled back 1", "rolled back 2"} {
		if err := p.Send(ctx, NewTextMessage(s), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.Rollback(); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	drainEmpty(t, c, d)
	for _, s := range []string{"committed 1", "committed 2"} {
		if err := p.Send(ctx, NewTextMessage(s), false); err != nil {
			t.Fatal(err)
		}
	}
	drainEmpty(t, c, d) // not visible before the commit
	if err := ts.Commit(); err != nil {
		t.Fatalf("Commit: %v", err)
	}

	// Consume in a transaction: a rollback redelivers, a commit consumes.
	cs := session(t, c, true)
	k := consumer(t, cs, d, ConsumerOptions{Prefetch: 1})
	m := receive(t, k)
	if textOf(t, m) != "committed 1" || m.RedeliveryCounter != 0 {
		t.Fatalf("got %q redelivery %d", textOf(t, m), m.RedeliveryCounter)
	}
	if err := cs.Rollback(); err != nil {
		t.Fatal(err)
	}
	m = receive(t, k)
	if textOf(t, m) != "committed 1" || m.RedeliveryCounter != 1 {
		t.Fatalf("after rollback got %q redelivery %d, want the same message redelivered once", textOf(t, m), m.RedeliveryCounter)
	}
	if got := receiveText(t, k); got != "committed 2" {
		t.Fatalf("got %q", got)
	}
	if err := cs.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	drainEmpty(t, c, d)

	// A transaction may consume more than the prefetch (DELIVERED acks
	// extend the window) and send in the same transaction.
	for i := range 5 {
		send(t, producer(t, session(t, c, false), d), NewTextMessage(strconv.Itoa(i)))
	}
	k = consumer(t, cs, d, ConsumerOptions{Prefetch: 2})
	out := wire.NewQueue(d.PhysicalName + ".out")
	fwd := producer(t, cs, out)
	for range 5 {
		m := receive(t, k)
		if err := fwd.Send(ctx, NewTextMessage("fwd "+textOf(t, m)), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.Commit(); err != nil {
		t.Fatal(err)
	}
	drainEmpty(t, c, d)
	ok := consumer(t, session(t, c, false), out, ConsumerOptions{})
	equalStrings(t, "forwarded", receiveTexts(t, ok, 5), []string{"fwd 0", "fwd 1", "fwd 2", "fwd 3", "fwd 4"})

	if err := session(t, c, false).Commit(); !errors.Is(err, ErrNotTransacted) {
		t.Fatalf("Commit on a non-transacted session = %v", err)
	}
}

func TestOpenWireClientClientAckRedelivery(t *testing.T) {
	t.Run("client", func(t *testing.T) {
		c := dial(t, nil)
		d := queue(t)
		sendTexts(t, producer(t, session(t, c, false), d), "m1", "m2", "m3", "m4")
		k := consumer(t, session(t, c, false), d, ConsumerOptions{AckMode: AckClient, Prefetch: 1})
		got := make([]*wire.Message, 3)
		for i := range got {
			got[i] = receive(t, k) // prefetch 1: DELIVERED acks keep them coming
		}
		if err := k.Ack(got[0]); err != nil { // m1 only: cumulative up to it
			t.Fatal(err)
		}
		if err := k.Ack(got[0]); !errors.Is(err, ErrUnknownMessage) {
			t.Fatalf("second Ack = %v, want ErrUnknownMessage", err)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		k = consumer(t, session(t, c, false), d, ConsumerOptions{AckMode: AckClient})
		var redelivered []string
		for range 3 {
			m := receive(t, k)
			redelivered = append(redelivered, fmt.Sprintf("%s:%d", textOf(t, m), m.RedeliveryCounter))
		}
		// m2 and m3 were delivered and not acknowledged: redelivered. m4
		// sat in the prefetch buffer: not counted.
		equalStrings(t, "text:redeliveryCounter", redelivered, []string{"m2:1", "m3:1", "m4:0"})
		if err := k.Ack(receiveLast(k)); err != nil {
			t.Fatal(err)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		drainEmpty(t, c, d)
	})
	t.Run("individual", func(t *testing.T) {
		c := dial(t, nil)
		d := queue(t)
		sendTexts(t, producer(t, session(t, c, false), d), "m1", "m2", "m3")
		k := consumer(t, session(t, c, false), d, ConsumerOptions{AckMode: AckIndividual})
		got := make([]*wire.Message, 3)
		for i := range got {
			got[i] = receive(t, k)
		}
		if err := k.Ack(got[1]); err != nil {
			t.Fatal(err)
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		k = consumer(t, session(t, c, false), d, ConsumerOptions{AckMode: AckIndividual})
		a, b := receive(t, k), receive(t, k)
		if textOf(t, a) != "m1" || textOf(t, b) != "m3" || a.RedeliveryCounter != 1 || b.RedeliveryCounter != 1 {
			t.Fatalf("got %q/%d %q/%d, want m1 and m3 redelivered once", textOf(t, a), a.RedeliveryCounter, textOf(t, b), b.RedeliveryCounter)
		}
		for _, m := range []*wire.Message{b, a} {
			if err := k.Ack(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.Close(); err != nil {
			t.Fatal(err)
		}
		drainEmpty(t, c, d)
	})
	t.Run("connection close", func(t *testing.T) {
		d := queue(t)
		c := dial(t, nil)
		sendTexts(t, producer(t, session(t, c, false), d), "m1")
		k := consumer(t, session(t, c, false), d, ConsumerOptions{AckMode: AckClient})
		receive(t, k)
		if err := c.Close(); err != nil { // unacknowledged: back to the queue
			t.Fatal(err)
		}
		c2 := dial(t, nil)
		m := receive(t, consumer(t, session(t, c2, false), d, ConsumerOptions{}))
		if textOf(t, m) != "m1" || m.RedeliveryCounter != 1 {
			t.Fatalf("got %q redelivery %d, want m1 redelivered once", textOf(t, m), m.RedeliveryCounter)
		}
	})
}

// receiveLast returns the consumer's last delivered message (for Ack).
func receiveLast(k *Consumer) *wire.Message {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.delivered[len(k.delivered)-1].md.Message
}

func TestOpenWireClientSelector(t *testing.T) {
	c := dial(t, nil)
	d := queue(t)
	s := session(t, c, false)
	k := consumer(t, s, d, ConsumerOptions{Selector: "color = 'red' AND n >= 1 OR JMSType = 'vip'", Prefetch: PrefetchPull})
	p := producer(t, s, d)
	for i, tc := range []struct {
		color, typ string
	}{{"red", ""}, {"red", ""}, {"blue", ""}, {"blue", "vip"}, {"red", ""}} {
		m := NewTextMessage(strconv.Itoa(i))
		m.Type = tc.typ
		if err := m.SetProperties(map[string]any{"color": tc.color, "n": int32(i)}); err != nil {
			t.Fatal(err)
		}
		send(t, p, m)
	}
	equalStrings(t, "selected", receiveTexts(t, k, 3), []string{"1", "3", "4"})
	expectEmpty(t, k)
	// The others are still in the queue.
	other := consumer(t, s, d, ConsumerOptions{})
	equalStrings(t, "not selected", receiveTexts(t, other, 2), []string{"0", "2"})
}

func TestOpenWireClientTempQueueRequestReply(t *testing.T) {
	requests := queue(t)
	server := dial(t, nil)
	ss := session(t, server, false)
	reqs := consumer(t, ss, requests, ConsumerOptions{})
	replier := producer(t, ss, nil) // anonymous: replies go to ReplyTo
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		for range 2 {
			m, err := reqs.Receive(ctx)
			if err != nil {
				return
			}
			s, _, _ := m.Text(wire.Limits{})
			r := NewTextMessage("re: " + s)
			r.CorrelationId = m.MessageId.String()
			r.Destination = m.ReplyTo
			r.Persistent = false
			replier.Send(ctx, r, false)
		}
	}()

	c := dial(t, nil)
	tmp, err := c.CreateTempQueue()
	if err != nil {
		t.Fatalf("CreateTempQueue: %v", err)
	}
	if tmp.DataStructureType() != wire.TypeActiveMQTempQueue {
		t.Fatalf("temp queue %v", tmp)
	}
	s := session(t, c, false)
	replies := consumer(t, s, tmp, ConsumerOptions{})
	p := producer(t, s, requests)
	for _, q := range []string{"ping", "pong"} {
		m := NewTextMessage(q)
		m.ReplyTo = tmp
		send(t, p, m)
		r := receive(t, replies)
		if textOf(t, r) != "re: "+q || r.CorrelationId != m.MessageId.String() || r.Destination.String() != tmp.String() {
			t.Fatalf("reply %q corr %q dest %v; want %q corr %q dest %v", textOf(t, r), r.CorrelationId, r.Destination, "re: "+q, m.MessageId, tmp)
		}
	}
	if err := replies.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTempDestination(tmp); err != nil {
		t.Fatalf("DeleteTempDestination: %v", err)
	}
	// Gone: a producer for it is refused.
	_, err = s.Producer(tmp)
	if cls := ExceptionClass(err); cls != "org.apache.activemq.DestinationDoesNotExistException" {
		t.Fatalf("Producer on a deleted temp queue: %v, want org.apache.activemq.DestinationDoesNotExistException", err)
	}
}

func TestOpenWireClientPrefetchZeroPull(t *testing.T) {
	c := dial(t, nil)
	d := queue(t)
	s := session(t, c, false)
	k1 := consumer(t, s, d, ConsumerOptions{Prefetch: PrefetchPull})
	k2 := consumer(t, session(t, c, false), d, ConsumerOptions{Prefetch: PrefetchPull})

	// Nothing there: the broker answers the pull at its timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	_, err := k1.Receive(ctx)
	cancel()
	if !errIsTimeout(err) {
		t.Fatalf("Receive on an empty queue = %v, want deadline exceeded", err)
	}
	t.Logf("empty pull returned after %v", time.Since(start).Round(time.Millisecond))
	expectEmpty(t, k1)

	sendTexts(t, producer(t, s, d), "a", "b", "c")
	// Pull consumers take one message per Receive, so both get one.
	if got := receiveText(t, k1); got != "a" {
		t.Fatalf("k1 got %q", got)
	}
	if got := receiveText(t, k2); got != "b" {
		t.Fatalf("k2 got %q", got)
	}
	ctx, cancel = context.WithTimeout(context.Background(), wait)
	defer cancel()
	m, err := k1.ReceiveNoWait(ctx)
	if err != nil || m == nil || textOf(t, m) != "c" {
		t.Fatalf("ReceiveNoWait = %v, %v; want c", m, err)
	}
	expectEmpty(t, k2)

	// A pull waiting without a deadline is served when a message arrives.
	done := make(chan string, 1)
	go func() {
		m, err := k2.Receive(context.Background())
		if err != nil {
			done <- err.Error()
			return
		}
		s, _, _ := m.Text(wire.Limits{})
		done <- s
	}()
	sendTexts(t, producer(t, s, d), "late")
	select {
	case got := <-done:
		if got != "late" {
			t.Fatalf("waiting pull got %q", got)
		}
	case <-time.After(wait):
		t.Fatal("waiting pull not served")
	}
}

func TestOpenWireClientSyncSendResponse(t *testing.T) {
	var log frameLog
	o := testOptions()
	o.Trace = log.trace
	c := dial(t, &o)
	d := queue(t)
	s := session(t, c, false)
	p := producer(t, s, d)
	m := NewTextMessage("persistent")
	send(t, p, m)
	if !m.ResponseRequired {
		t.Fatal("sync send without ResponseRequired")
	}
	var answered bool
	for _, f := range log.snapshot() {
		if r, ok := f.ds.(*wire.Response); ok && r.CorrelationId == m.CommandId {
			answered = true
		}
	}
	if !answered {
		t.Fatalf("no Response with CorrelationId %d:\n%s", m.CommandId, log.String())
	}
	// Async sends get no Response; ordering with later sync work holds.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	for i := range 3 {
		if err := p.Send(ctx, NewTextMessage("async "+strconv.Itoa(i)), false); err != nil {
			t.Fatal(err)
		}
	}
	k := consumer(t, s, d, ConsumerOptions{})
	equalStrings(t, "received", receiveTexts(t, k, 4), []string{"persistent", "async 0", "async 1", "async 2"})
	t.Logf("frames:\n%s", log.String())
}

func TestOpenWireClientBrowser(t *testing.T) {
	c := dial(t, nil)
	d := queue(t)
	s := session(t, c, false)
	want := []string{"x", "y", "z"}
	sendTexts(t, producer(t, s, d), want...)
	for range 2 { // browsing twice: browsing consumes nothing
		b := consumer(t, s, d, ConsumerOptions{Browser: true})
		var got []string
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		for {
			m, err := b.Receive(ctx)
			if errors.Is(err, ErrBrowseDone) {
				break
			}
			if err != nil {
				t.Fatalf("browse: %v", err)
			}
			got = append(got, textOf(t, m))
		}
		cancel()
		equalStrings(t, "browsed", got, want)
		if err := b.Close(); err != nil {
			t.Fatal(err)
		}
	}
	equalStrings(t, "consumed", receiveTexts(t, consumer(t, s, d, ConsumerOptions{}), 3), want)
}

// Errors the broker reports come back as *BrokerError with the Java class:
// synchronously in an ExceptionResponse, asynchronously in a
// ConnectionError.
func TestOpenWireClientBrokerErrors(t *testing.T) {
	async := make(chan error, 4)
	o := testOptions()
	o.OnError = func(err error) { async <- err }
	c := dial(t, &o)
	tmp, err := c.CreateTempQueue()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTempDestination(tmp); err != nil {
		t.Fatal(err)
	}
	const missing = "org.apache.activemq.DestinationDoesNotExistException"
	s := session(t, c, false)
	p := producer(t, s, nil)
	m := NewTextMessage("to nowhere")
	m.Destination = tmp
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = p.Send(ctx, m, true)
	var be *BrokerError
	if !errors.As(err, &be) || be.ClassName() != missing || be.Command != "ActiveMQTextMessage" {
		t.Fatalf("sync send to a deleted temp queue: %v, want %s", err, missing)
	}
	t.Logf("sync send: %s: %s", be.ClassName(), be.Message())

	m = NewTextMessage("to nowhere, async")
	m.Destination = tmp
	if err := p.Send(ctx, m, false); err != nil {
		t.Fatalf("async send: %v", err)
	}
	select {
	case err := <-async:
		if !errors.As(err, &be) || be.ClassName() != missing || be.Command != "ConnectionError" {
			t.Fatalf("async error %v, want a ConnectionError with %s", err, missing)
		}
	case <-time.After(wait):
		t.Fatal("no ConnectionError for a failed async send")
	}

	// The connection survives refused commands.
	d := queue(t)
	k := consumer(t, s, d, ConsumerOptions{})
	sendTexts(t, producer(t, s, d), "ok")
	receiveText(t, k)
}

// ActiveMQ lets another connection consume from a temporary queue (it hands
// the queue over: TempQueue.addSubscription); only the Java client refuses,
// locally.
func TestOpenWireClientTempQueueOtherConnection(t *testing.T) {
	owner := dial(t, nil)
	tmp, err := owner.CreateTempQueue()
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, nil)
	s := session(t, c, false)
	k := consumer(t, s, tmp, ConsumerOptions{})
	sendTexts(t, producer(t, session(t, owner, false), tmp), "shared")
	if got := receiveText(t, k); got != "shared" {
		t.Fatalf("got %q", got)
	}
}
