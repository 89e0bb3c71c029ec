package broker_test

import (
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/engine/message"
)

// The seed documents' configuration snippets (engine/config/testdata) do
// what the documents say they do, run through the whole broker.

type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

func startSeed(t *testing.T, file string, mod func(*config.Config)) (*engine.Engine, *clock) {
	t.Helper()
	c, err := config.LoadFile(filepath.Join("..", "config", "testdata", file), map[string]string{"activemq.data": t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	c.Persistence.Kind = config.KindMemory
	if mod != nil {
		mod(c)
	}
	clk := &clock{}
	clk.ms.Store(1_700_000_000_000)
	b, err := broker.Start(c, broker.Options{Factories: memoryOnly(), Engine: func(o *engine.Options) {
		o.Now = clk.now
		o.TickInterval = time.Hour
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b.Engine(), clk
}

type waiter struct {
	mu   sync.Mutex
	errs map[uint64]error
	ch   chan struct{}
}

func newWaiter() *waiter { return &waiter{errs: map[uint64]error{}, ch: make(chan struct{}, 1000)} }

func (w *waiter) Complete(tok uint64, err error) {
	w.mu.Lock()
	w.errs[tok] = err
	w.mu.Unlock()
	w.ch <- struct{}{}
}

func (w *waiter) wait(t *testing.T, tok uint64) error {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		w.mu.Lock()
		err, ok := w.errs[tok]
		w.mu.Unlock()
		if ok {
			return err
		}
		select {
		case <-w.ch:
		case <-deadline:
			t.Fatalf("send %d not completed", tok)
		}
	}
}

func connect(t *testing.T, e *engine.Engine) *engine.Conn {
	t.Helper()
	c, err := e.Connect(engine.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func payload(d message.Destination, n int, persistent bool) *message.Message {
	return &message.Message{Destination: d, Body: make([]byte, n), BodyType: message.BytesBody, Persistent: persistent, Priority: 4}
}

// fillUntilBlocked sends n-byte messages to d until one is parked, and
// returns how many were accepted and the parked one's token.
func fillUntilBlocked(t *testing.T, e *engine.Engine, c *engine.Conn, d message.Destination, n int, w *waiter) (accepted int, tok uint64) {
	t.Helper()
	for tok = 1; tok < 10000; tok++ {
		if err := c.Send(payload(d, n, false), "", w, tok); err != nil {
			t.Fatal(err)
		}
		if e.Stats(d).BlockedNow > 0 {
			return int(tok - 1), tok
		}
	}
	t.Fatalf("%s never blocked its producer", d)
	return 0, 0
}

func TestBrokerSeedIndividualDLQ(t *testing.T) {
	e, clk := startSeed(t, "seed000-dlq.xml", nil)
	c := connect(t, e)
	q := message.QueueDest("orders")
	ch := make(sink, 10)
	s, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, ch)
	if err != nil {
		t.Fatal(err)
	}
	c.Send(payload(q, 10, true), "", nil, 0)
	c.Nack(s, recv(t, ch).ID, engine.NackPoison, "")
	c.CloseSubscription(s)
	exp := payload(q, 10, true)
	exp.Expiration = clk.ms.Load() + 1000
	c.Send(exp, "", nil, 0)
	np := payload(q, 10, false)
	np.Expiration = clk.ms.Load() + 1000
	c.Send(np, "", nil, 0)
	e.Stats(q)
	clk.ms.Add(60_000)
	e.Tick()
	// "queuePrefix=DLQ.": the poisoned and the expired persistent message
	// land in DLQ.orders; processNonPersistent=false drops the other one.
	dch := make(sink, 10)
	if _, err := c.Subscribe(engine.SubSpec{Destination: message.QueueDest("DLQ.orders"), Prefetch: 10}, dch); err != nil {
		t.Fatal(err)
	}
	recv(t, dch)
	recv(t, dch)
	e.Stats(message.QueueDest("DLQ.orders"))
	if len(dch) != 0 {
		t.Fatalf("DLQ.orders holds a third message; the non-persistent one should be dropped")
	}
	if e.Stats(message.QueueDest("ActiveMQ.DLQ")).Exists {
		t.Fatal("the shared DLQ was used")
	}
}

func TestBrokerSeedUsageLimits(t *testing.T) {
	e, _ := startSeed(t, "seed002-usage.xml", nil)
	u := e.Usage()
	if u.MemoryLimit != 64<<20 || u.StoreLimit != 100<<30 || u.TempLimit != 10<<30 {
		t.Fatalf("usage limits %+v, want 64 mb / 100 gb / 10 gb", u)
	}
}

func TestBrokerSeedQueueMemoryLimit(t *testing.T) {
	e, _ := startSeed(t, "seed002-vmcursor.xml", nil)
	c := connect(t, e)
	q := message.QueueDest("work")
	w := newWaiter()
	accepted, tok := fillUntilBlocked(t, e, c, q, 64<<10, w)
	// memoryLimit="1mb": 64 KiB messages stop at about 16.
	if accepted < 14 || accepted > 17 {
		t.Fatalf("accepted %d messages of 64 KiB before blocking, want about 16 (1 mb)", accepted)
	}
	ch := make(sink, 100)
	if _, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 100, AckMode: engine.AckAuto}, ch); err != nil {
		t.Fatal(err)
	}
	if err := w.wait(t, tok); err != nil {
		t.Fatalf("blocked send after the consumer drained the queue: %v", err)
	}
}

func TestBrokerSeedSendFailIfNoSpace(t *testing.T) {
	e, _ := startSeed(t, "seed002-sendfail.xml", nil)
	c := connect(t, e)
	q := message.QueueDest("work")
	w := newWaiter()
	var err error
	n := 0
	for tok := uint64(1); err == nil && tok < 100; tok++ {
		c.Send(payload(q, 1<<20, false), "", w, tok)
		if err = w.wait(t, tok); err == nil {
			n++
		}
	}
	// 20 mb of memory: about 20 messages of 1 MiB, then ResourceAllocationException.
	if !errors.Is(err, engine.ErrResourceAllocation) || n < 18 || n > 20 {
		t.Fatalf("after %d messages: %v, want a resource allocation error after about 20", n, err)
	}
}

func TestBrokerSeedSendFailAfterTimeout(t *testing.T) {
	e, clk := startSeed(t, "seed002-sendfail-timeout.xml", nil)
	c := connect(t, e)
	q := message.QueueDest("work")
	w := newWaiter()
	_, tok := fillUntilBlocked(t, e, c, q, 1<<20, w)
	clk.ms.Add(2000)
	e.Tick()
	if e.Stats(q).BlockedNow != 1 {
		t.Fatal("the blocked send failed before sendFailIfNoSpaceAfterTimeout=3000")
	}
	clk.ms.Add(1500)
	e.Tick()
	if err := w.wait(t, tok); !errors.Is(err, engine.ErrResourceAllocation) {
		t.Fatalf("after 3.5 s: %v, want a resource allocation error", err)
	}
}

func TestBrokerSeedProducerFlowControlOff(t *testing.T) {
	// The snippet sets no limit; give the broker a small one so that it is
	// reached, keeping the snippet's policy as it is.
	e, _ := startSeed(t, "seed002-pfc.xml", func(c *config.Config) { c.SystemUsage.MemoryLimit = 256 << 10 })
	c := connect(t, e)
	for _, name := range []string{"FOO.bar", "BAR.baz"} {
		ch := make(sink, 1000)
		if _, err := c.Subscribe(engine.SubSpec{Destination: message.TopicDest(name), Prefetch: 1, AckMode: engine.AckIndividual}, ch); err != nil {
			t.Fatal(err)
		}
	}
	w := newWaiter()
	foo := message.TopicDest("FOO.bar")
	for tok := uint64(1); tok <= 64; tok++ {
		c.Send(payload(foo, 8<<10, false), "", w, tok)
		if err := w.wait(t, tok); err != nil {
			t.Fatalf("FOO.> has producerFlowControl=false, send %d: %v", tok, err)
		}
	}
	if u := e.Usage(); u.MemoryPercent < 100 {
		t.Fatalf("broker memory %d%%: the test meant to exceed it", u.MemoryPercent)
	}
	if st := e.Stats(foo); st.BlockedSends != 0 {
		t.Fatalf("FOO.bar blocked %d sends", st.BlockedSends)
	}
	// Any other destination is flow controlled.
	c.Send(payload(message.TopicDest("BAR.baz"), 8<<10, false), "", w, 1000)
	if e.Stats(message.TopicDest("BAR.baz")).BlockedNow != 1 {
		t.Fatal("BAR.baz was not flow controlled with the broker's memory full")
	}
}
