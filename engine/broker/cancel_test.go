package broker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"testing"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/engine/message"
	"wharf/storage/memory"
)

// fakeListener is a connector that binds nothing.
type fakeListener struct{ closed *int }

func (l fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
func (l fakeListener) Close() error   { *l.closed++; return nil }

// TestBrokerStartContextStopsBetweenConnectors: a start-up cancelled (by a
// signal) while connectors start starts no further one, stops those
// started, and says why.
func TestBrokerStartContextStopsBetweenConnectors(t *testing.T) {
	c := parse(t, `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false">
  <transportConnectors>
    <transportConnector name="one" uri="stomp://127.0.0.1:0"/>
    <transportConnector name="two" uri="stomp://127.0.0.1:0"/>
  </transportConnectors>
</broker>`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started, closed := 0, 0
	f := memoryOnly()
	f.Listeners = map[string]broker.ListenerFactory{
		"stomp": func(*engine.Engine, config.Transport, string, *slog.Logger) (broker.Listener, error) {
			started++
			cancel() // the signal comes while the first connector starts
			return fakeListener{&closed}, nil
		},
	}
	b, err := broker.StartContext(ctx, c, broker.Options{Factories: f})
	if !errors.Is(err, context.Canceled) || b != nil {
		t.Fatalf("StartContext: %v, %v; want an error wrapping context.Canceled", b, err)
	}
	if started != 1 || closed != 1 {
		t.Fatalf("%d connectors started, %d closed; want 1 and 1", started, closed)
	}
}

// cancelAfter reports itself cancelled from the n-th call of Err on.
type cancelAfter struct {
	context.Context
	n, calls int
}

func (c *cancelAfter) Err() error {
	if c.calls++; c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// TestBrokerStartContextStopsRecovery: a start-up cancelled while the
// engine recovers a large store (here the memory store, which has no
// replay of its own to stop) stops there.
func TestBrokerStartContextStopsRecovery(t *testing.T) {
	st := memory.New()
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("q")
	var ops []engine.StoreOp
	for seq := uint64(1); seq <= 5000; seq++ {
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
			ID: fmt.Sprintf("ID:cancel-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4, BodyType: message.TextBody, Body: []byte("m")}})
	}
	if err := ss.Apply(ops); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	c := parse(t, `<broker xmlns="http://activemq.apache.org/schema/core" persistent="false"/>`)
	c.Shards = 1
	f := memoryOnly()
	f.Stores[config.KindMemory] = func(context.Context, *config.Config, *slog.Logger) (engine.Store, error) { return st, nil }
	ctx := &cancelAfter{Context: context.Background(), n: 3}
	b, err := broker.StartContext(ctx, c, broker.Options{Factories: f})
	if !errors.Is(err, context.Canceled) || b != nil {
		t.Fatalf("StartContext cancelled during recovery: %v, %v; want an error wrapping context.Canceled", b, err)
	}
	// Checked once before the shard is opened, then every 1024 items.
	if ctx.calls != 3 {
		t.Fatalf("context checked %d times, want recovery stopped at the third check (item 2048 of 5000)", ctx.calls)
	}
}
