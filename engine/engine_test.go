package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/memory"
)

// sink collects deliveries; Deliver must not block, so the channel is large.
type sink chan engine.Delivery

func newSink() sink                      { return make(sink, 100000) }
func (s sink) Deliver(d engine.Delivery) { s <- d }

func (s sink) recv(t *testing.T) engine.Delivery {
	t.Helper()
	select {
	case d := <-s:
		return d
	case <-time.After(30 * time.Second): // a bound for a broken engine, not a speed claim
		t.Fatal("no delivery within 30s")
		return engine.Delivery{}
	}
}

// none asserts that nothing was delivered. Callers first pass a barrier
// (Stats on the destination's shard) so that every command posted before has
// been applied: anything deliverable would be in the channel by now.
func (s sink) none(t *testing.T) {
	t.Helper()
	select {
	case d := <-s:
		t.Fatalf("unexpected delivery of %q", body(d))
	default:
	}
}

func body(d engine.Delivery) string {
	if d.Msg == nil {
		return "<browse end>"
	}
	return string(d.Msg.Body)
}

type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *clock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

type env struct {
	t     *testing.T
	e     *engine.Engine
	clock *clock
	store *memory.Store
	opts  engine.Options
	// kahaDir is the KahaDB directory of an env made by startKahaDB, ""
	// on the memory store; kaha is the store open there.
	kahaDir string
	kaha    *kahadb.Store
}

func start(t *testing.T, mod func(*engine.Options)) *env {
	t.Helper()
	c := &clock{}
	c.ms.Store(1_700_000_000_000)
	v := &env{t: t, clock: c, store: memory.New()}
	v.opts = engine.Options{Shards: 4, Store: v.store, Now: c.now, TickInterval: time.Hour}
	if mod != nil {
		mod(&v.opts)
	}
	v.restart()
	t.Cleanup(v.close)
	return v
}

// startKahaDB is start on a KahaDB store in t.TempDir() (disk syncs on):
// restart closes the store and opens it again from disk, so only what it
// recovers survives.
func startKahaDB(t *testing.T, mod func(*engine.Options)) *env {
	t.Helper()
	c := &clock{}
	c.ms.Store(1_700_000_000_000)
	v := &env{t: t, clock: c, kahaDir: t.TempDir()}
	v.opts = engine.Options{Shards: 4, Now: c.now, TickInterval: time.Hour}
	if mod != nil {
		mod(&v.opts)
	}
	v.restart()
	t.Cleanup(v.close)
	return v
}

// startOn is start on the memory store or, for "kahadb", startKahaDB.
func startOn(t *testing.T, kind string, mod func(*engine.Options)) *env {
	t.Helper()
	if kind == "kahadb" {
		return startKahaDB(t, mod)
	}
	return start(t, mod)
}

// storeKinds are the stores a restart test runs on.
var storeKinds = []string{"memory", "kahadb"}

// close stops the engine and closes a KahaDB store.
func (v *env) close() {
	v.t.Helper()
	if v.e != nil {
		if err := v.e.Close(); err != nil {
			v.t.Error(err)
		}
		v.e = nil
	}
	if v.kaha != nil {
		if err := v.kaha.Close(); err != nil {
			v.t.Error(err)
		}
		v.kaha = nil
	}
}

// restart stops the engine and starts a new one on the same store: the
// memory store instance, or the KahaDB directory opened again.
func (v *env) restart() {
	v.t.Helper()
	v.close()
	if v.kahaDir != "" {
		k, err := kahadb.Open(context.Background(), kahadb.Options{Dir: v.kahaDir, EnableJournalDiskSyncs: true})
		if err != nil {
			v.t.Fatal(err)
		}
		v.kaha, v.opts.Store = k, k
	}
	e, err := engine.New(v.opts)
	if err != nil {
		v.t.Fatal(err)
	}
	v.e = e
}

func (v *env) conn(clientID string) *engine.Conn {
	v.t.Helper()
	c, err := v.e.Connect(engine.Credentials{ClientID: clientID, Protocol: "test"})
	if err != nil {
		v.t.Fatal(err)
	}
	v.t.Cleanup(func() { c.Close() })
	return c
}

type result struct {
	mu   sync.Mutex
	errs map[uint64]error
	wg   sync.WaitGroup
}

func (r *result) Complete(tok uint64, err error) {
	r.mu.Lock()
	r.errs[tok] = err
	r.mu.Unlock()
	r.wg.Done()
}

func msg(d message.Destination, body string, persistent bool) *message.Message {
	return &message.Message{Destination: d, Body: []byte(body), BodyType: message.TextBody, Persistent: persistent, Priority: 4}
}

// send sends and waits until the engine has stored/accepted the message.
func send(t *testing.T, c *engine.Conn, m *message.Message) {
	t.Helper()
	r := &result{errs: map[uint64]error{}}
	r.wg.Add(1)
	if err := c.Send(m, "", r, 1); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if err := r.errs[1]; err != nil {
		t.Fatalf("send: %v", err)
	}
}

func sub(t *testing.T, c *engine.Conn, spec engine.SubSpec) (*engine.Subscription, sink) {
	t.Helper()
	if spec.Prefetch == 0 {
		spec.Prefetch = 1000
	}
	s := newSink()
	sb, err := c.Subscribe(spec, s)
	if err != nil {
		t.Fatal(err)
	}
	return sb, s
}

func (v *env) barrier(d message.Destination) engine.DestinationStats { return v.e.Stats(d) }

func TestEngineQueueSendReceiveAck(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("orders")
	p, c := v.conn(""), v.conn("")
	send(t, p, msg(q, "one", true))
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	d := ch.recv(t)
	if body(d) != "one" || d.Redeliveries != 0 {
		t.Fatalf("got %q redeliveries %d, want one 0", body(d), d.Redeliveries)
	}
	if d.Msg.ID == "" || d.Msg.Destination != q {
		t.Fatalf("message id %q destination %v", d.Msg.ID, d.Msg.Destination)
	}
	st := v.barrier(q)
	if st.QueueSize != 1 || st.InFlightCount != 1 || st.EnqueueCount != 1 {
		t.Fatalf("before ack stats %+v, want size 1 inflight 1 enqueued 1", st)
	}
	if err := c.Ack(s, d.ID, ""); err != nil {
		t.Fatal(err)
	}
	st = v.barrier(q)
	if st.QueueSize != 0 || st.DequeueCount != 1 || st.InFlightCount != 0 {
		t.Fatalf("after ack stats %+v, want size 0 dequeued 1", st)
	}
}

func TestEngineQueueRoundRobin(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("work")
	p := v.conn("")
	_, a := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	_, b := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	for i := 0; i < 10; i++ {
		send(t, p, msg(q, fmt.Sprint(i), false))
	}
	v.barrier(q)
	if len(a) != 5 || len(b) != 5 {
		t.Fatalf("consumer a got %d, b got %d; want 5 each", len(a), len(b))
	}
	if got := body(a.recv(t)); got != "0" {
		t.Fatalf("first to a = %q, want 0", got)
	}
	if got := body(b.recv(t)); got != "1" {
		t.Fatalf("first to b = %q, want 1", got)
	}
}

func TestEnginePrefetchWindow(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("window")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, Prefetch: 2, AckMode: engine.AckIndividual})
	for i := 0; i < 5; i++ {
		send(t, p, msg(q, fmt.Sprint(i), false))
	}
	v.barrier(q)
	if len(ch) != 2 {
		t.Fatalf("with prefetch 2 got %d deliveries, want 2", len(ch))
	}
	d0 := ch.recv(t)
	ch.recv(t)
	c.Ack(s, d0.ID, "")
	v.barrier(q)
	if got := body(ch.recv(t)); got != "2" {
		t.Fatalf("after one ack got %q, want 2", got)
	}
	ch.none(t)
}

func TestEngineAutoAckCreditReturnedByProtocol(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("auto")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, Prefetch: 1, AckMode: engine.AckAuto})
	send(t, p, msg(q, "a", false))
	send(t, p, msg(q, "b", false))
	if st := v.barrier(q); st.QueueSize != 1 || st.DequeueCount != 1 {
		t.Fatalf("stats %+v, want one consumed and one pending", st)
	}
	ch.recv(t)
	ch.none(t)
	s.AddCredit(1)
	if got := body(ch.recv(t)); got != "b" {
		t.Fatalf("after credit got %q, want b", got)
	}
}

func TestEngineClientAckIsCumulative(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("cumulative")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckClient})
	for i := 0; i < 4; i++ {
		send(t, p, msg(q, fmt.Sprint(i), true))
	}
	var ds []engine.Delivery
	for i := 0; i < 4; i++ {
		ds = append(ds, ch.recv(t))
	}
	c.Ack(s, ds[2].ID, "")
	if st := v.barrier(q); st.DequeueCount != 3 || st.QueueSize != 1 {
		t.Fatalf("stats after cumulative ack of the third: %+v, want 3 dequeued, 1 left", st)
	}
}

func TestEngineTopicFanOutAndWildcards(t *testing.T) {
	v := start(t, nil)
	p := v.conn("")
	_, exact := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("a.b"), AckMode: engine.AckAuto})
	_, star := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("a.*"), AckMode: engine.AckAuto})
	_, deep := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("a.>"), AckMode: engine.AckAuto})
	_, queue := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("a.>"), AckMode: engine.AckAuto})
	for _, name := range []string{"a.b", "a.b.c", "a", "x.y"} {
		send(t, p, msg(message.TopicDest(name), name, false))
		v.barrier(message.TopicDest(name))
	}
	check := func(name string, s sink, want ...string) {
		t.Helper()
		got := map[string]bool{}
		for len(s) > 0 {
			got[body(<-s)] = true
		}
		if len(got) != len(want) {
			t.Fatalf("%s got %v, want %v", name, got, want)
		}
		for _, w := range want {
			if !got[w] {
				t.Fatalf("%s got %v, want %v", name, got, want)
			}
		}
	}
	check("a.b", exact, "a.b")
	check("a.*", star, "a.b")
	check("a.>", deep, "a.b", "a.b.c", "a")
	check("queue a.>", queue)
}

func TestEngineQueueWildcardConsumerSeesNewQueues(t *testing.T) {
	v := start(t, nil)
	p, c := v.conn(""), v.conn("")
	_, ch := sub(t, c, engine.SubSpec{Destination: message.QueueDest("jobs.*"), AckMode: engine.AckAuto})
	names := []string{"jobs.a", "jobs.b", "jobs.c", "jobs.d", "other"}
	for _, n := range names {
		send(t, p, msg(message.QueueDest(n), n, true))
	}
	got := map[string]bool{}
	for i := 0; i < 4; i++ {
		got[body(ch.recv(t))] = true
	}
	for _, n := range names[:4] {
		if !got[n] {
			t.Fatalf("wildcard consumer missed %s: got %v", n, got)
		}
	}
	if st := v.barrier(message.QueueDest("other")); st.QueueSize != 1 {
		t.Fatalf("queue other: %+v, want its message left alone", st)
	}
	ch.none(t)
}

func TestEngineDurableSubscription(t *testing.T) {
	v := start(t, nil)
	tp := message.TopicDest("news")
	p := v.conn("")
	c := v.conn("client-1")
	spec := engine.SubSpec{Destination: tp, DurableName: "sub", AckMode: engine.AckIndividual, Prefetch: 100}
	s, _ := sub(t, c, spec)
	if _, err := v.conn("client-2").Subscribe(spec, newSink()); err != nil {
		t.Fatalf("another client id's sub of the same name: %v", err)
	}
	if err := c.CloseSubscription(s); err != nil {
		t.Fatal(err)
	}
	send(t, p, msg(tp, "kept-1", true))
	send(t, p, msg(tp, "dropped-non-persistent", false))
	send(t, p, msg(tp, "kept-2", true))
	s, ch := sub(t, c, spec)
	if got := body(ch.recv(t)); got != "kept-1" {
		t.Fatalf("first offline message %q, want kept-1", got)
	}
	if got := body(ch.recv(t)); got != "kept-2" {
		t.Fatalf("second offline message %q, want kept-2", got)
	}
	v.barrier(tp)
	ch.none(t)

	if _, err := v.conn("client-1-dup").Subscribe(spec, newSink()); err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe("sub"); !errors.Is(err, engine.ErrDurableInUse) {
		t.Fatalf("unsubscribe while active: %v, want ErrDurableInUse", err)
	}
	c.CloseSubscription(s)
	if err := c.Unsubscribe("sub"); err != nil {
		t.Fatal(err)
	}
	if err := c.Unsubscribe("sub"); !errors.Is(err, engine.ErrNoSuchSubscription) {
		t.Fatalf("second unsubscribe: %v, want ErrNoSuchSubscription", err)
	}
	send(t, p, msg(tp, "after-unsubscribe", true))
	_, ch = sub(t, c, spec)
	v.barrier(tp)
	ch.none(t)
}

func TestEngineDurableInUse(t *testing.T) {
	v := start(t, nil)
	spec := engine.SubSpec{Destination: message.TopicDest("t"), DurableName: "d", Prefetch: 10}
	sub(t, v.conn("cid"), spec)
	v2 := v.conn("")
	if _, err := v2.Subscribe(spec, newSink()); !errors.Is(err, engine.ErrNoClientID) {
		t.Fatalf("durable without client id: %v, want ErrNoClientID", err)
	}
	if _, err := v.e.Connect(engine.Credentials{ClientID: "cid"}); !errors.Is(err, engine.ErrClientIDInUse) {
		t.Fatalf("second connection with the same client id: %v, want ErrClientIDInUse", err)
	}
	if _, err := v.conn("").Subscribe(engine.SubSpec{Destination: message.QueueDest("q"), DurableName: "d"}, newSink()); err == nil {
		t.Fatal("durable subscription on a queue accepted")
	}
}

func TestEngineRedeliveryWhenConsumerCloses(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("redeliver")
	p, c1, c2 := v.conn(""), v.conn(""), v.conn("")
	s1, ch1 := sub(t, c1, engine.SubSpec{Destination: q, AckMode: engine.AckClient})
	send(t, p, msg(q, "m", true))
	if d := ch1.recv(t); d.Redeliveries != 0 {
		t.Fatalf("first delivery redeliveries %d", d.Redeliveries)
	}
	c1.CloseSubscription(s1)
	_, ch2 := sub(t, c2, engine.SubSpec{Destination: q, AckMode: engine.AckClient})
	d := ch2.recv(t)
	if body(d) != "m" || d.Redeliveries != 1 {
		t.Fatalf("redelivery %q count %d, want m 1", body(d), d.Redeliveries)
	}
}

func dlqMessages(t *testing.T, v *env, dlq message.Destination, n int) []engine.Delivery {
	t.Helper()
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: dlq, AckMode: engine.AckAuto})
	var out []engine.Delivery
	for i := 0; i < n; i++ {
		out = append(out, ch.recv(t))
	}
	v.barrier(dlq)
	ch.none(t)
	return out
}

func TestEngineNackPoisonGoesToDLQ(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("poison")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	m := msg(q, "bad", true)
	m.Expiration = v.clock.ms.Load() + 60_000
	send(t, p, m)
	d := ch.recv(t)
	c.Nack(s, d.ID, engine.NackPoison, "java.lang.Throwable: poison")
	got := dlqMessages(t, v, message.QueueDest("ActiveMQ.DLQ"), 1)[0].Msg
	if got.OriginalDestination != q || got.ID != d.Msg.ID || !got.Persistent || got.Expiration != 0 {
		t.Fatalf("DLQ copy: original %v id %q persistent %v expiration %d", got.OriginalDestination, got.ID, got.Persistent, got.Expiration)
	}
	if c, _ := got.Props.Get("dlqDeliveryFailureCause"); c.Str() != "java.lang.Throwable: poison" {
		t.Fatalf("dlqDeliveryFailureCause = %q", c.Str())
	}
	if e, ok := got.Props.Get("originalExpiration"); !ok || e.Int() != m.Expiration {
		t.Fatalf("originalExpiration = %v %v, want %d", e.Int(), ok, m.Expiration)
	}
	if st := v.barrier(q); st.QueueSize != 0 {
		t.Fatalf("source queue still holds %d", st.QueueSize)
	}
}

func TestEngineMaxRedeliveriesThenDLQ(t *testing.T) {
	v := start(t, func(o *engine.Options) {
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			p.MaxRedeliveries = 2
			p.DeadLetter.Kind = engine.IndividualDLQ
			return p
		}
	})
	q := message.QueueDest("retry")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	send(t, p, msg(q, "flaky", true))
	for want := int32(0); want <= 2; want++ {
		d := ch.recv(t)
		if d.Redeliveries != want {
			t.Fatalf("delivery count %d, want %d", d.Redeliveries, want)
		}
		c.Nack(s, d.ID, engine.NackRedeliver, "")
	}
	got := dlqMessages(t, v, message.QueueDest("ActiveMQ.DLQ.Queue.retry"), 1)[0].Msg
	if cause, _ := got.Props.Get("dlqDeliveryFailureCause"); cause.Str() == "" {
		t.Fatal("no dlqDeliveryFailureCause on a message past its redeliveries")
	}
	v.barrier(q)
	ch.none(t)
}

func TestEngineExpiry(t *testing.T) {
	v := start(t, func(o *engine.Options) {
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			p.ExpireMessagesPeriod = time.Second
			if d.Name == "drop" {
				p.DeadLetter.ProcessExpired = false
			}
			return p
		}
	})
	p := v.conn("")
	q := message.QueueDest("exp")
	now := v.clock.ms.Load()
	past := msg(q, "already-expired", true)
	past.Expiration = now - 1
	send(t, p, past)
	np := msg(q, "non-persistent-expired", false)
	np.Expiration = now - 1
	send(t, p, np)
	later := msg(q, "expires-later", true)
	later.Expiration = now + 10_000
	send(t, p, later)
	kept := msg(q, "kept", true)
	send(t, p, kept)
	drop := msg(message.QueueDest("drop"), "dropped", true)
	drop.Expiration = now + 10_000
	send(t, p, drop)

	v.clock.add(20 * time.Second)
	v.e.Tick()
	dlq := dlqMessages(t, v, message.QueueDest("ActiveMQ.DLQ"), 2)
	if body(dlq[0]) != "already-expired" || body(dlq[1]) != "expires-later" {
		t.Fatalf("DLQ holds %q, %q; want already-expired, expires-later", body(dlq[0]), body(dlq[1]))
	}
	if c, _ := dlq[1].Msg.Props.Get("dlqDeliveryFailureCause"); c.Str() != fmt.Sprintf("java.lang.Throwable: Message Expired. Expiration:%d", later.Expiration) {
		t.Fatalf("expiry cause %q", c.Str())
	}
	if st := v.barrier(q); st.QueueSize != 1 || st.ExpiredCount != 3 {
		t.Fatalf("queue stats %+v, want 1 left and 3 expired", st)
	}
	if st := v.barrier(message.QueueDest("drop")); st.QueueSize != 0 || st.ExpiredCount != 1 {
		t.Fatalf("processExpired=false queue %+v, want it emptied", st)
	}
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	if got := body(ch.recv(t)); got != "kept" {
		t.Fatalf("consumer got %q, want kept", got)
	}
}

func TestEngineExpiredNeverDelivered(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("late")
	p := v.conn("")
	m := msg(q, "short-lived", false)
	m.Expiration = v.clock.ms.Load() + 1000
	send(t, p, m)
	v.clock.add(2 * time.Second)
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	v.barrier(q)
	ch.none(t)
	if st := v.barrier(q); st.ExpiredCount != 1 || st.QueueSize != 0 {
		t.Fatalf("stats %+v, want it expired at dispatch", st)
	}
}

func TestEngineTransactions(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("tx")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckClient})

	p.Begin("t1")
	p.Send(msg(q, "tx-1", true), "t1", nil, 0)
	p.Send(msg(q, "tx-2", true), "t1", nil, 0)
	v.barrier(q)
	ch.none(t)
	if err := p.Commit("t1"); err != nil {
		t.Fatal(err)
	}
	d1, d2 := ch.recv(t), ch.recv(t)
	if body(d1) != "tx-1" || body(d2) != "tx-2" {
		t.Fatalf("committed %q %q", body(d1), body(d2))
	}

	p.Begin("t2")
	p.Send(msg(q, "rolled-back", true), "t2", nil, 0)
	if err := p.Rollback("t2"); err != nil {
		t.Fatal(err)
	}
	v.barrier(q)
	ch.none(t)

	c.Begin("acks")
	c.Ack(s, d1.ID, "acks")
	if err := c.Rollback("acks"); err != nil {
		t.Fatal(err)
	}
	r := ch.recv(t)
	if body(r) != "tx-1" || r.Redeliveries != 1 {
		t.Fatalf("after rollback got %q redeliveries %d, want tx-1 1", body(r), r.Redeliveries)
	}
	c.Begin("acks2")
	c.Ack(s, r.ID, "acks2")
	if st := v.barrier(q); st.DequeueCount != 0 {
		t.Fatalf("ack inside an open transaction applied early: %+v", st)
	}
	if err := c.Commit("acks2"); err != nil {
		t.Fatal(err)
	}
	if st := v.barrier(q); st.QueueSize != 0 || st.DequeueCount != 2 {
		t.Fatalf("after commit %+v, want empty with 2 dequeued", st)
	}
	if err := c.Commit("nope"); !errors.Is(err, engine.ErrUnknownTx) {
		t.Fatalf("commit of unknown tx: %v", err)
	}
}

func TestEngineBrowse(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("browse")
	p := v.conn("")
	for i := 0; i < 3; i++ {
		send(t, p, msg(q, fmt.Sprint(i), true))
	}
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, Browser: true})
	for i := 0; i < 3; i++ {
		if got := body(ch.recv(t)); got != fmt.Sprint(i) {
			t.Fatalf("browse %d got %q", i, got)
		}
	}
	if d := ch.recv(t); !d.BrowseEnd {
		t.Fatalf("want browse end, got %q", body(d))
	}
	if st := v.barrier(q); st.QueueSize != 3 {
		t.Fatalf("browsing consumed: %+v", st)
	}
}

func TestEngineSelectorOnQueue(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("sel")
	p := v.conn("")
	_, red := sub(t, v.conn(""), engine.SubSpec{Destination: q, Selector: "color = 'red'", AckMode: engine.AckAuto})
	for _, col := range []string{"blue", "red", "green", "red"} {
		m := msg(q, col, false)
		m.Props.Set("color", message.StringValue(col))
		send(t, p, m)
	}
	if body(red.recv(t)) != "red" || body(red.recv(t)) != "red" {
		t.Fatal("selector consumer got a non-red message")
	}
	if st := v.barrier(q); st.QueueSize != 2 {
		t.Fatalf("non-matching messages: %+v, want 2 left", st)
	}
	if _, err := v.conn("").Subscribe(engine.SubSpec{Destination: q, Selector: "color = "}, newSink()); !errors.Is(err, engine.ErrBadSelector) {
		t.Fatalf("bad selector: %v", err)
	}
}

func TestEngineExclusiveAndPriority(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("excl")
	p := v.conn("")
	_, plain := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	ex, exch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto, Exclusive: true})
	for i := 0; i < 4; i++ {
		send(t, p, msg(q, "x", false))
	}
	v.barrier(q)
	if len(exch) != 4 || len(plain) != 0 {
		t.Fatalf("exclusive got %d, other %d; want 4, 0", len(exch), len(plain))
	}
	ex.Conn().CloseSubscription(ex)
	send(t, p, msg(q, "after", false))
	if got := body(plain.recv(t)); got != "after" {
		t.Fatalf("after the exclusive consumer left: %q", got)
	}

	q2 := message.QueueDest("prio")
	_, low := sub(t, v.conn(""), engine.SubSpec{Destination: q2, AckMode: engine.AckIndividual, Prefetch: 2})
	_, high := sub(t, v.conn(""), engine.SubSpec{Destination: q2, AckMode: engine.AckIndividual, Prefetch: 2, Priority: 5})
	for i := 0; i < 3; i++ {
		send(t, p, msg(q2, "p", false))
	}
	v.barrier(q2)
	if len(high) != 2 || len(low) != 1 {
		t.Fatalf("high priority got %d, low %d; want 2, 1", len(high), len(low))
	}
}

func TestEngineTempDestinations(t *testing.T) {
	v := start(t, nil)
	owner, other := v.conn(""), v.conn("")
	tq, err := owner.CreateTemp(false)
	if err != nil {
		t.Fatal(err)
	}
	if tq.Type != message.TempQueue || tq.Name == "" {
		t.Fatalf("temp queue %v", tq)
	}
	if _, err := other.Subscribe(engine.SubSpec{Destination: message.Destination{Type: message.TempQueue, Name: "ID:nope:1"}, Prefetch: 1}, newSink()); !errors.Is(err, engine.ErrTempGone) {
		t.Fatalf("consumer on a temp queue that does not exist: %v", err)
	}
	_, ch := sub(t, owner, engine.SubSpec{Destination: tq, AckMode: engine.AckAuto})
	send(t, other, msg(tq, "reply", false))
	if got := body(ch.recv(t)); got != "reply" {
		t.Fatalf("temp queue got %q", got)
	}
	owner.Close()
	if st := v.barrier(tq); st.Exists {
		t.Fatal("temp queue outlived its connection")
	}
	r := &result{errs: map[uint64]error{}}
	r.wg.Add(1)
	other.Send(msg(tq, "late", false), "", r, 7)
	r.wg.Wait()
	if !errors.Is(r.errs[7], engine.ErrTempGone) {
		t.Fatalf("send to deleted temp queue: %v", r.errs[7])
	}
}

func TestEngineNoLocal(t *testing.T) {
	v := start(t, nil)
	tp := message.TopicDest("chat")
	c, other := v.conn(""), v.conn("")
	_, ch := sub(t, c, engine.SubSpec{Destination: tp, NoLocal: true, AckMode: engine.AckAuto})
	send(t, c, msg(tp, "mine", false))
	send(t, other, msg(tp, "theirs", false))
	if got := body(ch.recv(t)); got != "theirs" {
		t.Fatalf("noLocal subscriber got %q", got)
	}
	v.barrier(tp)
	ch.none(t)
}

func TestEngineRestartKeepsPersistentMessages(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) { testRestartKeepsPersistentMessages(t, kind) })
	}
}

func testRestartKeepsPersistentMessages(t *testing.T, kind string) {
	v := startOn(t, kind, nil)
	q, tp := message.QueueDest("durable-q"), message.TopicDest("durable-t")
	p := v.conn("")
	c := v.conn("cid")
	s, _ := sub(t, c, engine.SubSpec{Destination: tp, DurableName: "d", AckMode: engine.AckIndividual})
	c.CloseSubscription(s)
	for i := 0; i < 3; i++ {
		send(t, p, msg(q, fmt.Sprint("q", i), true))
		send(t, p, msg(tp, fmt.Sprint("t", i), true))
	}
	send(t, p, msg(q, "transient", false))
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	ch.recv(t) // delivered, never acked: must survive
	c.Close()
	p.Close()
	v.restart()
	_, qch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	for i := 0; i < 3; i++ {
		if got := body(qch.recv(t)); got != fmt.Sprint("q", i) {
			t.Fatalf("queue after restart: %q, want q%d", got, i)
		}
	}
	v.barrier(q)
	qch.none(t)
	_, tch := sub(t, v.conn("cid"), engine.SubSpec{Destination: tp, DurableName: "d", AckMode: engine.AckAuto})
	for i := 0; i < 3; i++ {
		if got := body(tch.recv(t)); got != fmt.Sprint("t", i) {
			t.Fatalf("durable sub after restart: %q, want t%d", got, i)
		}
	}
}

func TestEngineConcurrentProducersConsumers(t *testing.T) {
	v := start(t, nil)
	const producers, perProducer = 4, 500
	q := message.QueueDest("stress")
	var got sync.Map
	var count atomic.Int64
	done := make(chan struct{})
	for i := 0; i < 3; i++ {
		c := v.conn("")
		ch := newSink()
		s, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, ch)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for d := range ch {
				if _, dup := got.LoadOrStore(string(d.Msg.Body), true); dup {
					t.Errorf("duplicate %s", d.Msg.Body)
				}
				c.Ack(s, d.ID, "")
				if count.Add(1) == producers*perProducer {
					close(done)
				}
			}
		}()
	}
	var wg sync.WaitGroup
	for i := 0; i < producers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := v.e.Connect(engine.Credentials{})
			if err != nil {
				t.Error(err)
				return
			}
			for j := 0; j < perProducer; j++ {
				if err := p.Send(msg(q, fmt.Sprint(i, "-", j), true), "", nil, 0); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("received %d of %d", count.Load(), producers*perProducer)
	}
}

// denyAdmin refuses to create destinations under "secret." and everything
// for user "mallory".
type denyAdmin struct{}

func (denyAdmin) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	if c.Password == "wrong" {
		return nil, fmt.Errorf("%w: user %q", engine.ErrBadCredentials, c.Username)
	}
	return &engine.Subject{User: c.Username}, nil
}

func (denyAdmin) Authorize(s *engine.Subject, a engine.Action, d message.Destination) error {
	if s.User == "mallory" || (a == engine.ActionAdmin && len(d.Name) > 7 && d.Name[:7] == "secret.") {
		return fmt.Errorf("%w: %s may not %s %s", engine.ErrNotAuthorized, s.User, a, d)
	}
	return nil
}

func TestEngineSecurityHooks(t *testing.T) {
	v := start(t, func(o *engine.Options) { o.Authenticator, o.Authorizer = denyAdmin{}, denyAdmin{} })
	if _, err := v.e.Connect(engine.Credentials{Username: "u", Password: "wrong"}); !errors.Is(err, engine.ErrBadCredentials) {
		t.Fatalf("wrong password: %v", err)
	}
	c := v.conn("")
	r := &result{errs: map[uint64]error{}}
	r.wg.Add(1)
	if err := c.Send(msg(message.QueueDest("secret.q"), "x", false), "", r, 1); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if !errors.Is(r.errs[1], engine.ErrNotAuthorized) {
		t.Fatalf("send creating secret.q: %v, want ErrNotAuthorized", r.errs[1])
	}
	if st := v.barrier(message.QueueDest("secret.q")); st.Exists {
		t.Fatal("denied send created the destination")
	}
	if _, err := c.Subscribe(engine.SubSpec{Destination: message.TopicDest("secret.t"), Prefetch: 1}, newSink()); !errors.Is(err, engine.ErrNotAuthorized) {
		t.Fatalf("subscribe creating secret.t: %v", err)
	}
	m, err := v.e.Connect(engine.Credentials{Username: "mallory"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(msg(message.QueueDest("q"), "x", false), "", nil, 0); !errors.Is(err, engine.ErrNotAuthorized) {
		t.Fatalf("mallory's send: %v", err)
	}
	send(t, c, msg(message.QueueDest("open.q"), "ok", false))
}

func TestEngineRollbackRedeliversOnlyItsOwnAcks(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("two-tx")
	p, c := v.conn(""), v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	send(t, p, msg(q, "a", true))
	send(t, p, msg(q, "b", true))
	da, db := ch.recv(t), ch.recv(t)
	c.Begin("A")
	c.Begin("B")
	c.Ack(s, da.ID, "A")
	c.Ack(s, db.ID, "B")
	if err := c.Rollback("A"); err != nil {
		t.Fatal(err)
	}
	if r := ch.recv(t); body(r) != "a" || r.Redeliveries != 1 {
		t.Fatalf("rollback of A redelivered %q (%d), want a (1)", body(r), r.Redeliveries)
	}
	v.barrier(q)
	ch.none(t)
	if err := c.Commit("B"); err != nil {
		t.Fatal(err)
	}
	if st := v.barrier(q); st.DequeueCount != 1 || st.QueueSize != 1 {
		t.Fatalf("after commit of B: %+v, want b consumed and a pending redelivery ack", st)
	}
}

// eventually polls cond until it returns nil or 5 s pass: for effects that
// cross shards through their mailboxes, which no single barrier orders.
func eventually(t *testing.T, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
}

// A durable subscription's messages that were handed to it and not
// acknowledged when the broker stopped come back flagged redelivered (an
// MQTT PUBLISH with DUP); those it never had do not. The store keeps the
// subscription's delivery mark (OpDelivered).
func TestEngineRestartFlagsDeliveredDurableMessages(t *testing.T) {
	v := start(t, nil)
	tp := message.TopicDest("marked")
	p := v.conn("")
	c := v.conn("cid")
	spec := engine.SubSpec{Destination: tp, DurableName: "AT_LEAST_ONCE:marked", AckMode: engine.AckIndividual, Prefetch: 2}
	s, ch := sub(t, c, spec)
	for i := 0; i < 4; i++ {
		send(t, p, msg(tp, fmt.Sprint("t", i), true))
	}
	first := ch.recv(t)
	if second := ch.recv(t); body(first) != "t0" || body(second) != "t1" {
		t.Fatalf("delivered %q, %q; want t0, t1", body(first), body(second))
	}
	if err := c.Ack(s, first.ID, ""); err != nil {
		t.Fatal(err)
	}
	if third := ch.recv(t); body(third) != "t2" { // the credit the ack returned
		t.Fatalf("delivered %q after the ack, want t2", body(third))
	}
	c.Close()
	p.Close()
	v.restart()
	c = v.conn("cid")
	s, ch = sub(t, c, spec)
	for i, want := range []int32{1, 1, 0} {
		d := ch.recv(t)
		if body(d) != fmt.Sprint("t", i+1) || d.Redeliveries != want {
			t.Fatalf("after the restart: %q with redeliveries %d, want t%d with %d", body(d), d.Redeliveries, i+1, want)
		}
		if err := c.Ack(s, d.ID, ""); err != nil {
			t.Fatal(err)
		}
	}
}
