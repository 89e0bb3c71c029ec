package engine_test

import (
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// gateStore is a syncing store whose first Apply waits on a gate, as a slow
// fsync would, and that records every op it is given.
type gateStore struct {
	gate    chan struct{}
	mu      sync.Mutex
	applied []engine.StoreOp
	first   sync.Once
	entered chan struct{}
}

func (g *gateStore) OpenShard(int, int) (engine.ShardStore, error)  { return g, nil }
func (g *gateStore) Close() error                                   { return nil }
func (g *gateStore) Syncs() bool                                    { return true }
func (g *gateStore) Recover(func(engine.RecoveredItem) error) error { return nil }
func (g *gateStore) Apply(ops []engine.StoreOp) error {
	g.first.Do(func() {
		close(g.entered)
		<-g.gate
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	g.applied = append(g.applied, ops...)
	return nil
}

func (g *gateStore) kinds(d message.Destination) (adds, removes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, op := range g.applied {
		if op.Dest != d {
			continue
		}
		switch op.Kind {
		case engine.OpAdd:
			adds++
		case engine.OpRemove:
			removes++
		}
	}
	return
}

func TestEngineConcurrentStoreAndDispatchSkipsConsumedWrites(t *testing.T) {
	for _, on := range []bool{true, false} {
		g := &gateStore{gate: make(chan struct{}), entered: make(chan struct{})}
		e, err := engine.New(engine.Options{Shards: 1, Store: g, TickInterval: time.Hour, ConcurrentStoreAndDispatchQueues: on})
		if err != nil {
			t.Fatal(err)
		}
		c, err := e.Connect(engine.Credentials{})
		if err != nil {
			t.Fatal(err)
		}
		// A first persistent message to another queue holds the writer
		// in a "slow fsync".
		blocker := message.QueueDest("blocker")
		if err := c.Send(msg(blocker, "hold", true), "", nil, 0); err != nil {
			t.Fatal(err)
		}
		<-g.entered
		q := message.QueueDest("fast")
		ch := newSink()
		sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckIndividual}, ch)
		if err != nil {
			t.Fatal(err)
		}
		r := &result{errs: map[uint64]error{}}
		r.wg.Add(1)
		if err := c.Send(msg(q, "consumed at once", true), "", r, 1); err != nil {
			t.Fatal(err)
		}
		d := ch.recv(t) // dispatched while its write waits
		if err := c.Ack(sub, d.ID, ""); err != nil {
			t.Fatal(err)
		}
		// Two round trips through the shard: the first is handled in the
		// turn of the ack or later, the second after that turn's batch,
		// remove included, went to the writer.
		e.Stats(q)
		e.Stats(q)
		close(g.gate)
		r.wg.Wait() // the producer is answered once the batch is applied
		if err := r.errs[1]; err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		adds, removes := g.kinds(q)
		switch {
		case on && (adds != 0 || removes != 0):
			t.Fatalf("concurrentStoreAndDispatch on: %d adds and %d removes written, want none", adds, removes)
		case !on && (adds != 1 || removes != 1):
			t.Fatalf("concurrentStoreAndDispatch off: %d adds and %d removes written, want 1 and 1", adds, removes)
		}
		if a, _ := g.kinds(blocker); a != 1 {
			t.Fatalf("the unconsumed message's add: %d written, want 1", a)
		}
	}
}
