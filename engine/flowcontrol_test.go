package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// pending collects send completions as they come.
type pending struct {
	mu   sync.Mutex
	done map[uint64]error
	ch   chan uint64
}

func newPending() *pending { return &pending{done: map[uint64]error{}, ch: make(chan uint64, 10000)} }

func (p *pending) Complete(tok uint64, err error) {
	p.mu.Lock()
	p.done[tok] = err
	p.mu.Unlock()
	p.ch <- tok
}

func (p *pending) wait(t *testing.T, tok uint64) error {
	t.Helper()
	// Generous: it only bounds how long a broken engine takes to fail
	// the test, and a loaded CI machine with -race and real fsyncs can
	// take seconds for a send that is merely slow.
	deadline := time.After(30 * time.Second)
	for {
		p.mu.Lock()
		err, ok := p.done[tok]
		p.mu.Unlock()
		if ok {
			return err
		}
		select {
		case <-p.ch:
		case <-deadline:
			t.Fatalf("send %d not completed within 30s", tok)
		}
	}
}

func (p *pending) isDone(tok uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.done[tok]
	return ok
}

func bigMsg(d message.Destination) *message.Message {
	return &message.Message{Destination: d, Body: make([]byte, 1024), BodyType: message.BytesBody, Priority: 4}
}

func limited(memLimit int64, mod func(*engine.Limits)) func(*engine.Options) {
	return func(o *engine.Options) {
		o.Shards = 2
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			if strings.HasPrefix(d.Name, "small") {
				p.MemoryLimit = memLimit
			}
			if strings.HasPrefix(d.Name, "nopfc") {
				p.MemoryLimit = memLimit
				p.ProducerFlowControl = false
			}
			return p
		}
		if mod != nil {
			mod(&o.Limits)
		}
	}
}

func TestEngineFlowControlBlocksAndReleases(t *testing.T) {
	v := start(t, limited(8*1024, nil))
	q, other := message.QueueDest("small.q"), message.QueueDest("other.q")
	p := v.conn("")
	pc := newPending()
	// Fill the queue past its 8 KiB limit: the first sends complete, the
	// one that finds it full is parked.
	tok := uint64(0)
	for {
		tok++
		if err := p.Send(bigMsg(q), "", pc, tok); err != nil {
			t.Fatal(err)
		}
		// Parked sends show in the stats at once; completions come
		// only after the shard's turn, so they cannot tell.
		if v.barrier(q).BlockedNow > 0 {
			break
		}
		if tok > 100 {
			t.Fatal("the memory limit never blocked a producer")
		}
	}
	blockedTok := tok
	st := v.barrier(q)
	if st.BlockedNow != 1 || st.MemoryPercentUsage < 100 {
		t.Fatalf("stats while blocked %+v", st)
	}
	// Other destinations, and consumers, are not held up.
	send(t, p, bigMsg(other))
	_, och := sub(t, v.conn(""), engine.SubSpec{Destination: other, AckMode: engine.AckAuto})
	och.recv(t)
	// A consumer makes room: the parked send completes, without error.
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 1})
	for i := uint64(0); i < blockedTok; i++ {
		d := ch.recv(t)
		c.Ack(s, d.ID, "")
	}
	if err := pc.wait(t, blockedTok); err != nil {
		t.Fatalf("released send: %v", err)
	}
}

func TestEngineFlowControlSendFailIfNoSpace(t *testing.T) {
	v := start(t, limited(4*1024, func(l *engine.Limits) { l.SendFailIfNoSpace = true }))
	q := message.QueueDest("small.fail")
	p := v.conn("")
	pc := newPending()
	var err error
	for tok := uint64(1); tok < 100 && err == nil; tok++ {
		p.Send(bigMsg(q), "", pc, tok)
		err = pc.wait(t, tok)
	}
	if !errors.Is(err, engine.ErrResourceAllocation) || !strings.Contains(err.Error(), "Usage Manager Memory Limit reached on queue://small.fail") {
		t.Fatalf("send to a full queue with sendFailIfNoSpace: %v", err)
	}
}

func TestEngineFlowControlFailAfterTimeout(t *testing.T) {
	v := start(t, limited(4*1024, func(l *engine.Limits) { l.SendFailIfNoSpaceAfterTimeout = 3 * time.Second }))
	q := message.QueueDest("small.timeout")
	p := v.conn("")
	pc := newPending()
	tok := uint64(0)
	for {
		tok++
		p.Send(bigMsg(q), "", pc, tok)
		// Parked sends show in the stats at once; completions come
		// only after the shard's turn, so they cannot tell.
		if v.barrier(q).BlockedNow > 0 {
			break
		}
	}
	v.clock.add(time.Second)
	v.e.Tick()
	if v.barrier(q).BlockedNow != 1 {
		t.Fatal("failed before the timeout")
	}
	v.clock.add(3 * time.Second)
	v.e.Tick()
	if err := pc.wait(t, tok); !errors.Is(err, engine.ErrResourceAllocation) || !strings.Contains(err.Error(), "Wait Timeout") {
		t.Fatalf("after the timeout: %v", err)
	}
}

func TestEngineFlowControlOffForDestination(t *testing.T) {
	v := start(t, limited(2*1024, nil))
	q := message.QueueDest("nopfc.q")
	p := v.conn("")
	for i := 0; i < 20; i++ {
		send(t, p, bigMsg(q))
	}
	if st := v.barrier(q); st.QueueSize != 20 || st.BlockedSends != 0 {
		t.Fatalf("producerFlowControl=false: %+v, want all 20 accepted", st)
	}
}

func TestEngineFlowControlBrokerWideLimit(t *testing.T) {
	v := start(t, limited(0, func(l *engine.Limits) { l.MemoryLimit = 16 * 1024 }))
	p := v.conn("")
	// Find two queues on different shards.
	a := message.QueueDest("wide.a")
	pc := newPending()
	tok := uint64(0)
	for {
		tok++
		p.Send(bigMsg(a), "", pc, tok)
		if v.barrier(a).BlockedNow > 0 {
			break
		}
	}
	if u := v.e.Usage(); u.MemoryPercent < 100 {
		t.Fatalf("broker usage %+v, want the limit reached", u)
	}
	// Another destination is blocked too, since the broker's memory is full.
	b := message.QueueDest("wide.b")
	send(t, p, bigMsg(b)) // created empty: admitted
	p2 := newPending()
	p.Send(bigMsg(b), "", p2, 1)
	if v.barrier(b).BlockedNow != 1 {
		t.Fatal("send to another destination not held while the broker memory was full")
	}
	// Draining the first queue frees the broker's memory: both go on.
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: a, AckMode: engine.AckAuto, Prefetch: 1000})
	for i := uint64(0); i < tok; i++ {
		ch.recv(t)
	}
	if err := p2.wait(t, 1); err != nil {
		t.Fatalf("released send on the other destination: %v", err)
	}
	if err := pc.wait(t, tok); err != nil {
		t.Fatalf("released send: %v", err)
	}
}

// shardOf is the engine's placement (engine.go shardFor: FNV-1a of the type
// and name), for tests that need destinations on different shards.
func shardOf(d message.Destination, shards int) uint64 {
	h := uint64(14695981039346656037)
	h = (h ^ uint64(d.Type)) * 1099511628211
	for i := 0; i < len(d.Name); i++ {
		h = (h ^ uint64(d.Name[i])) * 1099511628211
	}
	return h % uint64(shards)
}

// The store limit is broker-wide too: a persistent send parked on one
// shard goes on as soon as another shard frees store room, without
// waiting for a tick (there is no memory or temp limit to trigger it).
// The room is made by removing the full queue: no consumer, no advisory,
// nothing else that would give the other shard a turn by chance.
func TestEngineFlowControlStoreLimitAcrossShards(t *testing.T) {
	v := start(t, func(o *engine.Options) {
		limited(0, func(l *engine.Limits) { l.StoreLimit = 16 * 1024 })(o)
		o.DisableAdvisories = true
	})
	a := message.QueueDest("store.a")
	b := message.QueueDest("store.b")
	for i := 0; shardOf(b, 2) == shardOf(a, 2); i++ {
		b = message.QueueDest(fmt.Sprintf("store.b%d", i))
	}
	persistent := func(d message.Destination) *message.Message {
		m := bigMsg(d)
		m.Persistent = true
		return m
	}
	p := v.conn("")
	send(t, p, persistent(b)) // b exists, so its sends meet flow control
	pc := newPending()
	tok := uint64(0)
	for v.barrier(a).BlockedNow == 0 {
		tok++
		if tok > 1000 {
			t.Fatal("the store limit never blocked the producer")
		}
		p.Send(persistent(a), "", pc, tok)
	}
	p2 := newPending()
	p.Send(persistent(b), "", p2, 1)
	if v.barrier(b).BlockedNow != 1 {
		t.Fatal("send to a destination on another shard not held while the store was full")
	}
	if err := v.e.RemoveDestination(a); err != nil {
		t.Fatal(err)
	}
	if err := p2.wait(t, 1); err != nil {
		t.Fatalf("released send on the other shard: %v", err)
	}
}

// TestEngineChangePolicyReleasesBlockedSend: raising a destination's
// memory limit as it runs (ChangePolicy, a JMX write of MemoryLimit) lets
// a send parked by flow control in; MaxPageSize and ProducerFlowControl
// change too, and bad values are refused.
func TestEngineChangePolicyReleasesBlockedSend(t *testing.T) {
	v := start(t, limited(8*1024, nil))
	q := message.QueueDest("small.tuned")
	p := v.conn("")
	pc := newPending()
	tok := uint64(0)
	for v.barrier(q).BlockedNow == 0 {
		tok++
		if err := p.Send(bigMsg(q), "", pc, tok); err != nil {
			t.Fatal(err)
		}
		if tok > 100 {
			t.Fatal("the memory limit never blocked a producer")
		}
	}
	big := int64(1 << 20)
	if err := v.e.ChangePolicy(q, engine.PolicyChange{MemoryLimit: &big}); err != nil {
		t.Fatal(err)
	}
	if err := pc.wait(t, tok); err != nil {
		t.Fatalf("send released by the larger limit: %v", err)
	}
	if st := v.barrier(q); st.BlockedNow != 0 || st.MemoryLimit != big {
		t.Fatalf("after the change: %+v", st)
	}
	page, pfc := 7, false
	if err := v.e.ChangePolicy(q, engine.PolicyChange{MaxPageSize: &page, ProducerFlowControl: &pfc}); err != nil {
		t.Fatal(err)
	}
	if st := v.barrier(q); st.Policy.MaxPageSize != 7 || st.Policy.ProducerFlowControl {
		t.Fatalf("policy after the change: %+v", st.Policy)
	}
	zero := 0
	if err := v.e.ChangePolicy(q, engine.PolicyChange{MaxPageSize: &zero}); !errors.Is(err, engine.ErrBadArgument) {
		t.Errorf("MaxPageSize 0: %v", err)
	}
	if err := v.e.ChangePolicy(message.QueueDest("no.such"), engine.PolicyChange{MaxPageSize: &page}); !errors.Is(err, engine.ErrNoSuchDestination) {
		t.Errorf("missing destination: %v", err)
	}
}

// TestEngineSetLimitsReleasesBlockedSend: raising the broker-wide memory
// limit as the broker runs (a JMX write of the Broker's MemoryLimit) lets
// a parked send in; Usage reports the new limits; negative ones are
// refused.
func TestEngineSetLimitsReleasesBlockedSend(t *testing.T) {
	v := start(t, func(o *engine.Options) { o.Limits = engine.Limits{MemoryLimit: 8 * 1024, StoreLimit: 1 << 30} })
	q := message.QueueDest("broker.limited")
	p := v.conn("")
	pc := newPending()
	tok := uint64(0)
	for v.barrier(q).BlockedNow == 0 {
		tok++
		if err := p.Send(bigMsg(q), "", pc, tok); err != nil {
			t.Fatal(err)
		}
		if tok > 100 {
			t.Fatal("the broker's memory limit never blocked a producer")
		}
	}
	mem, temp := int64(64<<20), int64(1<<30)
	if err := v.e.SetLimits(&mem, nil, &temp); err != nil {
		t.Fatal(err)
	}
	if err := pc.wait(t, tok); err != nil {
		t.Fatalf("send released by the larger limit: %v", err)
	}
	if u := v.e.Usage(); u.MemoryLimit != mem || u.TempLimit != temp || u.StoreLimit != 1<<30 {
		t.Fatalf("usage after SetLimits: %+v", u)
	}
	neg := int64(-1)
	if err := v.e.SetLimits(nil, &neg, nil); !errors.Is(err, engine.ErrBadArgument) || v.e.Usage().StoreLimit != 1<<30 {
		t.Errorf("negative store limit: %v", err)
	}
}
