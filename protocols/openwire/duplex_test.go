package openwire

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"wharf/cluster"
	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// fakeInitiator speaks over a real socket as ActiveMQ 5.17's duplex
// network connector does towards the broker it dials
// (DemandForwardingBridgeSupport with duplex="true"): BrokerInfo with
// duplexConnection and its connector's networkProperties, its own
// ConnectionInfo, and then, as the initiator of the reverse bridge's
// traffic, forwarded advisory messages and Responses to forwarded sends.
type fakeInitiator struct {
	t   *testing.T
	c   net.Conn
	enc *wire.Encoder
	dec *wire.Decoder
	buf []byte
}

func dialInitiator(t *testing.T, addr, props string) *fakeInitiator {
	return dialInitiatorAs(t, addr, props, "dup_initiator_outbound")
}

// dialInitiatorAs is dialInitiator with the client id of the initiator's
// own connection.
func dialInitiatorAs(t *testing.T, addr, props, clientID string) *fakeInitiator {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	o := wire.DefaultOptions()
	o.MaxInactivityDuration = 0
	f := &fakeInitiator{t: t, c: c, enc: wire.NewEncoder(wire.InitialFormat(o.Version)),
		dec: wire.NewDecoder(wire.InitialFormat(o.Version), wire.DefaultLimits()), buf: make([]byte, 64<<10)}
	wfi, err := wire.NewWireFormatInfo(o)
	if err != nil {
		t.Fatal(err)
	}
	f.write(wfi)
	nf, err := wire.Negotiate(DefaultOptions().Local, o)
	if err != nil {
		t.Fatal(err)
	}
	f.enc.SetFormat(nf)
	if _, ok := f.read().(*wire.WireFormatInfo); !ok {
		t.Fatal("first frame is not WireFormatInfo")
	}
	f.dec.SetFormat(nf)
	f.write(&wire.BrokerInfo{BrokerId: &wire.BrokerId{Value: "ID:initiator-1"}, BrokerName: "initiator",
		NetworkConnection: true, DuplexConnection: true, NetworkProperties: props})
	f.write(&wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: 1, ResponseRequired: true},
		ConnectionId: &wire.ConnectionId{Value: "ID:initiator-conn-" + clientID}, ClientId: clientID})
	return f
}

func (f *fakeInitiator) write(ds wire.DataStructure) {
	f.t.Helper()
	b, err := f.enc.Append(nil, ds)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.c.Write(b); err != nil {
		f.t.Fatal(err)
	}
}

// read returns the next frame, skipping none; it fails after 10 s.
func (f *fakeInitiator) read() wire.DataStructure {
	f.t.Helper()
	f.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		ds, err := f.dec.Next()
		if err != nil {
			f.t.Fatal(err)
		}
		if ds != nil {
			return ds
		}
		n, err := f.c.Read(f.buf)
		if err != nil {
			f.t.Fatalf("read: %v", err)
		}
		f.dec.Feed(f.buf[:n])
	}
}

// next returns the next frame of type T, skipping the others (the
// broker's BrokerInfo, Responses to the initiator's own commands).
func next[T wire.DataStructure](f *fakeInitiator) T {
	f.t.Helper()
	for {
		if x, ok := f.read().(T); ok {
			return x
		}
	}
}

// A duplex connection accepted by Wharf: the reverse bridge opens its
// connection, session, producer and advisory consumer one-way, as
// ActiveMQ's responder bridge does; the initiator's forwarded consumer
// advisory is taken as demand (acknowledged with the advisory consumer's
// id); a message sent to this broker is forwarded to the initiator with
// this broker in its brokerPath and waits for the initiator's Response;
// and when the connection goes, the bridge's subscription and every
// goroutine it started go too.
// duplexServer starts an engine named B and an OpenWire server whose
// duplex connections run cluster.ServeDuplex; it returns the engine and
// the server's address.
func duplexServer(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	e, err := engine.New(engine.Options{Shards: 1, Store: memory.New(), TickInterval: time.Hour, BrokerName: "B"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	o := DefaultOptions()
	o.Duplex = func(peer *wire.BrokerInfo, attach func(client.Options) (*client.Conn, error)) error {
		return cluster.ServeDuplex(e, slog.New(slog.DiscardHandler), peer, attach)
	}
	srv, err := NewServer(e, o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return e, l.Addr().String()
}

func TestOpenWireDuplexAccepted(t *testing.T) {
	e, addr := duplexServer(t)
	// A producer of this broker's, connected before the baseline.
	pc, err := client.Dial(context.Background(), addr, client.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	ps, err := pc.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	prod, err := ps.Producer(wire.NewQueue("DQ"))
	if err != nil {
		t.Fatal(err)
	}
	baseline := runtime.NumGoroutine()

	f := dialInitiator(t, addr, "#\n#Thu Dec 03 09:00:00 UTC 2026\nname=dup\nconduitSubscriptions=true\nprefetchSize=1000\nconsumerTTL=1\nmessageTTL=1\nduplex=true\ndynamicOnly=false\n")
	ci := next[*wire.ConnectionInfo](f)
	if ci.ResponseRequired || ci.ClientId != "dup_B_outbound" {
		t.Fatalf("reverse bridge's ConnectionInfo: client id %q, responseRequired %v; want dup_B_outbound, one-way", ci.ClientId, ci.ResponseRequired)
	}
	if si := next[*wire.SessionInfo](f); si.ResponseRequired {
		t.Fatal("SessionInfo asks for a response")
	}
	if pi := next[*wire.ProducerInfo](f); pi.ResponseRequired {
		t.Fatal("ProducerInfo asks for a response")
	}
	adv := next[*wire.ConsumerInfo](f)
	if adv.ResponseRequired || adv.Destination.PhysicalName != "ActiveMQ.Advisory.Consumer.>,ActiveMQ.Advisory.TempQueue,ActiveMQ.Advisory.TempTopic" || adv.Destination.Kind != wire.TypeActiveMQTopic || adv.PrefetchSize != 1000 {
		t.Fatalf("advisory ConsumerInfo %+v, want one-way on the consumer and temporary destination advisories (bridgeTempDestinations) with prefetch 1000", adv)
	}

	// The initiator forwards the advisory of a consumer of its own.
	remote := &wire.ConsumerId{ConnectionId: "ID:initiator-app", SessionId: 1, Value: 1}
	advID := &wire.MessageId{ProducerId: &wire.ProducerId{ConnectionId: "ID:initiator-adv", SessionId: 1, Value: 1}, ProducerSequenceId: 1}
	f.write(&wire.Message{BaseCommand: wire.BaseCommand{CommandId: 2},
		ProducerId: advID.ProducerId, MessageId: advID,
		Destination:   wire.NewTopic("ActiveMQ.Advisory.Consumer.Queue.DQ"),
		DataStructure: &wire.ConsumerInfo{ConsumerId: remote, Destination: wire.NewQueue("DQ"), PrefetchSize: 1000},
		BrokerPath:    []*wire.BrokerId{{Value: "ID:initiator-1"}}})
	ack := next[*wire.MessageAck](f)
	if ack.ConsumerId.String() != adv.ConsumerId.String() || ack.LastMessageId.String() != advID.String() {
		t.Fatalf("advisory ack for consumer %s, message %s; want %s, %s", ack.ConsumerId, ack.LastMessageId, adv.ConsumerId, advID)
	}
	dq := message.Destination{Type: message.Queue, Name: "DQ"}
	waitFor(t, "the bridge's subscription on DQ", func() bool { return e.Stats(dq).ConsumerCount == 1 })

	// This broker's message goes to the initiator, which answers.
	sent := make(chan error, 1)
	go func() { sent <- prod.Send(context.Background(), client.NewTextMessage("to the initiator"), true) }()
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	fm := next[*wire.Message](f)
	body, _, _ := fm.Text(wire.DefaultLimits())
	if body != "to the initiator" || !fm.ResponseRequired || fm.Destination.PhysicalName != "DQ" ||
		len(fm.BrokerPath) != 1 || fm.BrokerPath[0].Value != e.BrokerID() {
		t.Fatalf("forwarded %q to %s, responseRequired %v, brokerPath %v; want it to DQ, sync, through %s only",
			body, fm.Destination, fm.ResponseRequired, fm.BrokerPath, e.BrokerID())
	}
	f.write(&wire.Response{CorrelationId: fm.CommandId})
	// Acknowledged locally once answered.
	waitFor(t, "DQ drained", func() bool { return e.Stats(dq).QueueSize == 0 })

	// The connection goes: so do the bridge's subscription and goroutines.
	f.c.Close()
	waitFor(t, "the bridge's subscription gone", func() bool { return e.Stats(dq).ConsumerCount == 0 })
	waitFor(t, "goroutines back to the baseline", func() bool { return runtime.NumGoroutine() <= baseline })
	if err := prod.Send(context.Background(), client.NewTextMessage("stays"), true); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats(dq); st.QueueSize != 1 || st.ConsumerCount != 0 {
		t.Fatalf("after the connection closed: queue size %d, consumers %d; want 1 and 0", st.QueueSize, st.ConsumerCount)
	}
}

// waitFor polls cond until it holds or 10 s pass: the engine publishes no
// event for a subscription's end that a test could wait on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			t.Fatalf("timed out waiting for %s; goroutines:\n%s", what, strings.TrimSpace(string(buf[:n])))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const dupProps = "name=dup\nconduitSubscriptions=true\n"

// The initiator reconnects while its old connection is still open here
// (a half-dead socket): as ActiveMQ's TransportConnection does for the
// same duplexNetworkConnectorId, the new connection's bridge stops the old
// one, whose connection Wharf closes, and starts with the same local
// client id, which the old bridge let go. (The new connection here has a
// client id of its own for the initiator's own connection: a real
// initiator's, the same as before, is refused while the old connection
// holds it, so its first reconnection may fail; the next, after its
// back-off, finds the old connection gone.)
func TestOpenWireDuplexAcceptedReplaced(t *testing.T) {
	e, addr := duplexServer(t)
	old := dialInitiator(t, addr, dupProps)
	next[*wire.ConsumerInfo](old)
	dq := message.Destination{Type: message.Queue, Name: "DQ"}
	advise := func(f *fakeInitiator, seq int64) {
		id := &wire.MessageId{ProducerId: &wire.ProducerId{ConnectionId: "ID:initiator-adv", SessionId: 1, Value: 1}, ProducerSequenceId: seq}
		f.write(&wire.Message{ProducerId: id.ProducerId, MessageId: id,
			Destination:   wire.NewTopic("ActiveMQ.Advisory.Consumer.Queue.DQ"),
			DataStructure: &wire.ConsumerInfo{ConsumerId: &wire.ConsumerId{ConnectionId: "ID:initiator-app", SessionId: 1, Value: seq}, Destination: wire.NewQueue("DQ")},
			BrokerPath:    []*wire.BrokerId{{Value: "ID:initiator-1"}}})
	}
	advise(old, 1)
	waitFor(t, "the old bridge's subscription", func() bool { return e.Stats(dq).ConsumerCount == 1 })

	f := dialInitiatorAs(t, addr, dupProps, "dup_initiator_outbound_2")
	if ci := next[*wire.ConnectionInfo](f); ci.ClientId != "dup_B_outbound" {
		t.Fatalf("new bridge's client id %q", ci.ClientId)
	}
	next[*wire.ConsumerInfo](f)
	// The old connection is closed by Wharf.
	old.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		n, err := old.c.Read(old.buf)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("the old duplex connection stayed open")
			}
			break
		}
		_ = n
	}
	advise(f, 2)
	waitFor(t, "only the new bridge's subscription", func() bool { return e.Stats(dq).ConsumerCount == 1 })
	// A third, with another connector name, is another bridge.
	other := dialInitiatorAs(t, addr, "name=other\n", "other_initiator_outbound")
	if ci := next[*wire.ConnectionInfo](other); ci.ClientId != "other_B_outbound" {
		t.Fatalf("third bridge's client id %q", ci.ClientId)
	}
	advise(other, 3)
	waitFor(t, "both bridges' subscriptions", func() bool { return e.Stats(dq).ConsumerCount == 2 })
}
