package conformance

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb"
)

// Issue 13 item 9: an acknowledgement whose confirmation (a STOMP RECEIPT,
// an OpenWire Response) reached the client must be on disk, so that a crash
// right after it cannot bring the message back. These tests hold the store
// write of the acknowledgement at a gate, check that the confirmation does
// not come while it is held, then take a copy of the KahaDB directory the
// moment the confirmation arrives (what a crash at that moment leaves) and
// recover the copy: the message must not be in it.

// ackGate wraps a store: once armed, it holds the next batch holding a
// queue removal (a consumed message) before writing it, reports it on
// reached and writes it when release is closed.
type ackGate struct {
	engine.Store
	armed   atomic.Bool
	reached chan struct{}
	release chan struct{}
	once    sync.Once
}

func newAckGate(st engine.Store) *ackGate {
	return &ackGate{Store: st, reached: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *ackGate) open() { g.once.Do(func() { close(g.release) }) }

func (g *ackGate) OpenShard(i, n int) (engine.ShardStore, error) {
	ss, err := g.Store.OpenShard(i, n)
	if err != nil {
		return nil, err
	}
	return &ackGateShard{ShardStore: ss, g: g}, nil
}

// ackGateShard keeps what the engine looks for in a KahaDB shard store but
// MessageLoader (the engine then recovers whole messages).
type ackGateShard struct {
	engine.ShardStore
	g *ackGate
}

func (s *ackGateShard) Syncs() bool {
	sy, ok := s.ShardStore.(engine.Syncer)
	return ok && sy.Syncs()
}

func (s *ackGateShard) Apply(ops []engine.StoreOp) error {
	s.g.hold(ops)
	return s.ShardStore.Apply(ops)
}

func (s *ackGateShard) ApplyNoSync(ops []engine.StoreOp) error {
	s.g.hold(ops)
	return s.ShardStore.(engine.NoSyncApplier).ApplyNoSync(ops)
}

func (s *ackGateShard) Housekeep() error {
	if h, ok := s.ShardStore.(engine.Housekeeper); ok {
		return h.Housekeep()
	}
	return nil
}

func (g *ackGate) hold(ops []engine.StoreOp) {
	for _, op := range ops {
		if op.Kind == engine.OpRemove && g.armed.CompareAndSwap(true, false) {
			g.reached <- struct{}{}
			<-g.release
			return
		}
	}
}

// startGatedKahaDB starts an in-process broker (one shard, STOMP and
// OpenWire) on a KahaDB directory with disk syncs, behind an ackGate.
func startGatedKahaDB(t *testing.T) (*brokertest.Broker, *ackGate, string) {
	t.Helper()
	if external {
		t.Skip("needs an in-process broker on a KahaDB store")
	}
	dir := filepath.Join(t.TempDir(), "kahadb")
	f := wiring.Factories()
	kaha := f.Stores[config.KindKahaDB]
	var gate *ackGate
	f.Stores[config.KindKahaDB] = func(ctx context.Context, c *config.Config, log *slog.Logger) (engine.Store, error) {
		st, err := kaha(ctx, c, log)
		if err != nil {
			return nil, err
		}
		gate = newAckGate(st)
		return gate, nil
	}
	b := brokertest.Start(t, f, brokertest.WithConfig(func(c *config.Config) {
		c.Shards = 1
		c.Persistence.Kind = config.KindKahaDB
		c.Persistence.KahaDB.Directory = dir
		c.Persistence.KahaDB.EnableJournalDiskSyncs = true
	}))
	// Whatever a failed test leaves at the gate is let through before the
	// broker closes (cleanups run last in, first out).
	t.Cleanup(gate.open)
	if b.Addr("openwire") == nil || b.STOMPAddr() == "" {
		t.Skip("this build serves no OpenWire or STOMP connector")
	}
	return b, gate, dir
}

// recoveredBodies opens a copy of the KahaDB directory dir, as a broker
// starting after a crash at that moment would, and returns the bodies of
// the messages pending on queue q.
func recoveredBodies(t *testing.T, dir string, q message.Destination) map[string]bool {
	t.Helper()
	cp := filepath.Join(t.TempDir(), "crash-copy")
	copyDir(t, dir, cp)
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: cp, EnableJournalDiskSyncs: true})
	if err != nil {
		t.Fatalf("open the crash copy: %v", err)
	}
	defer st.Close()
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatalf("open the crash copy's shard: %v", err)
	}
	defer ss.Close()
	got := map[string]bool{}
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil && it.Dest == q {
			got[string(it.Msg.Body)] = true
		}
		return nil
	}); err != nil {
		t.Fatalf("recover the crash copy: %v", err)
	}
	return got
}

// STOMP: an ACK with a receipt. A BEGIN with a receipt, sent once the ack's
// store write is held, is the barrier: the transport answers it at once, so
// its RECEIPT must come before the ACK's.
func TestConformanceKahaDBConfirmedAckSTOMP(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t)
	c, _ := connectRaw(t, b.STOMPAddr(), "1.2")
	q := "/queue/" + uniq(t)
	for _, body := range []string{"keep", "acked"} {
		c.sendMsg(q, body, "persistent:true")
	}
	c.subscribe("s", q, "ack:client-individual")
	c.expectMessage("keep")
	acked := c.expectMessage("acked")

	gate.armed.Store(true)
	c.send("ACK", []string{"id:" + acked.Must(t, "ack"), "receipt:ack"}, nil)
	select {
	case <-gate.reached:
	case <-time.After(wait):
		t.Fatal("the ACK's removal never reached the store")
	}
	c.send("BEGIN", []string{"transaction:barrier", "receipt:barrier"}, nil)
	released := false
	for {
		f := c.read()
		if f.Command != "RECEIPT" {
			t.Fatalf("got %s, want a RECEIPT", f)
		}
		id := f.Must(t, "receipt-id")
		if id == "barrier" {
			gate.open()
			released = true
			continue
		}
		if id != "ack" {
			t.Fatalf("RECEIPT for %q, want ack or barrier", id)
		}
		break
	}
	// A crash now: what is on disk is what the copy holds.
	got := recoveredBodies(t, dir, message.QueueDest(q[len("/queue/"):]))
	gate.open()
	if !released {
		t.Error("the ACK's RECEIPT came before the store had written the acknowledgement")
	}
	if got["acked"] {
		t.Error(`"acked", whose ACK had its RECEIPT, is recovered after a crash at that moment`)
	}
	if !got["keep"] {
		t.Errorf(`"keep" (never acknowledged) not recovered; recovered %v`, got)
	}
}

// OpenWire: a MessageAck with responseRequired (the Java client's
// jms.sendAcksAsync=false; the Go client's SyncAcks). A ProducerInfo,
// answered by the session at once, is the barrier: no Response to the ack
// may come before its Response.
func TestConformanceKahaDBConfirmedAckOpenWire(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t)
	var ackCmd atomic.Int32
	var ackAnswered atomic.Bool
	o := client.DefaultOptions()
	o.SyncAcks = true
	o.Trace = func(out bool, ds wire.DataStructure) {
		switch x := ds.(type) {
		case *wire.MessageAck:
			if out {
				ackCmd.Store(x.CommandId)
			}
		case *wire.Response:
			if !out && x.CorrelationId != 0 && x.CorrelationId == ackCmd.Load() {
				ackAnswered.Store(true)
			}
		case *wire.ExceptionResponse:
			if !out && x.CorrelationId != 0 && x.CorrelationId == ackCmd.Load() {
				ackAnswered.Store(true)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, b.Addr("openwire").String(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	name := uniq(t)
	s := must(c.Session(false))(t)
	p := must(s.Producer(wire.NewQueue(name)))(t)
	for _, body := range []string{"keep", "acked"} {
		owSend(t, p, client.NewTextMessage(body))
	}
	k := must(s.Consumer(wire.NewQueue(name), client.ConsumerOptions{AckMode: client.AckIndividual}))(t)
	ms := receiveN(t, k, "backlog", 2)
	var acked *wire.Message
	for _, m := range ms {
		if tm, _, err := m.Text(wire.DefaultLimits()); err == nil && tm == "acked" {
			acked = m
		}
	}
	if acked == nil {
		t.Fatal(`"acked" not received`)
	}

	gate.armed.Store(true)
	ackErr := make(chan error, 1)
	go func() { ackErr <- k.Ack(acked) }()
	select {
	case <-gate.reached:
	case err := <-ackErr:
		gate.open()
		t.Fatalf("the synchronous ack returned (%v) before its removal reached the store", err)
	case <-time.After(wait):
		t.Fatal("the ack's removal never reached the store")
	}
	must(s.Producer(wire.NewQueue(name + ".barrier")))(t)
	early := ackAnswered.Load()
	released := false
	if !early {
		gate.open()
		released = true
	}
	if err := <-ackErr; err != nil {
		t.Fatalf("synchronous ack: %v", err)
	}
	got := recoveredBodies(t, dir, message.QueueDest(name))
	gate.open()
	if !released {
		t.Error("the MessageAck's Response came before the store had written the acknowledgement")
	}
	if got["acked"] {
		t.Error(`"acked", whose MessageAck had its Response, is recovered after a crash at that moment`)
	}
	if !got["keep"] {
		t.Errorf(`"keep" (never acknowledged) not recovered; recovered %v`, got)
	}
}
