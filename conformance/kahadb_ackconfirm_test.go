package conformance

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"

	"wharf/cmd/wharf/wiring"
	"wharf/conform"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	amqpwire "wharf/protocols/amqp/wire"
	mqttwire "wharf/protocols/mqtt/wire"
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
// queue removal or a durable subscription's ack (a consumed message)
// before writing it (with adds set, a batch storing a message instead),
// reports it on reached and writes it when release is closed.
type ackGate struct {
	engine.Store
	armed   atomic.Bool
	adds    atomic.Bool
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
	adds := g.adds.Load()
	for _, op := range ops {
		held := op.Kind == engine.OpRemove || op.Kind == engine.OpAck
		if adds {
			held = op.Kind == engine.OpAdd
		}
		if held && g.armed.CompareAndSwap(true, false) {
			g.reached <- struct{}{}
			<-g.release
			return
		}
	}
}

// startGatedKahaDB starts an in-process broker (one shard) on a KahaDB
// directory with disk syncs, behind an ackGate. The test is skipped if the
// build serves none of connectors.
func startGatedKahaDB(t *testing.T, connectors ...string) (*brokertest.Broker, *ackGate, string) {
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
	for _, name := range connectors {
		if b.Addr(name) == nil {
			t.Skipf("this build serves no %s connector", name)
		}
	}
	return b, gate, dir
}

// recoveredBodies opens a copy of the KahaDB directory dir, as a broker
// starting after a crash at that moment would, and returns the bodies of
// the messages pending on queue q.
func recoveredBodies(t *testing.T, dir string, q message.Destination) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	for _, it := range recoveredItems(t, dir) {
		if it.Msg != nil && it.Dest == q {
			got[string(it.Msg.Body)] = true
		}
	}
	return got
}

// recoveredItems opens a copy of the KahaDB directory dir, as a broker
// starting after a crash at that moment would, and returns what it
// recovers.
func recoveredItems(t *testing.T, dir string) []engine.RecoveredItem {
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
	var items []engine.RecoveredItem
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		items = append(items, it)
		return nil
	}); err != nil {
		t.Fatalf("recover the crash copy: %v", err)
	}
	return items
}

// STOMP: an ACK with a receipt. A BEGIN with a receipt, sent once the ack's
// store write is held, is the barrier: the transport answers it at once, so
// its RECEIPT must come before the ACK's.
func TestConformanceKahaDBConfirmedAckSTOMP(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t, "stomp")
	c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	q := "/queue/" + uniq(t)
	for _, body := range []string{"keep", "acked"} {
		c.SendMsg(q, body, "persistent:true")
	}
	c.Subscribe("s", q, "ack:client-individual")
	c.ExpectMessage("keep")
	acked := c.ExpectMessage("acked")

	gate.armed.Store(true)
	c.Send("ACK", []string{"id:" + acked.Must(t, "ack"), "receipt:ack"}, nil)
	select {
	case <-gate.reached:
	case <-time.After(wait):
		t.Fatal("the ACK's removal never reached the store")
	}
	c.Send("BEGIN", []string{"transaction:barrier", "receipt:barrier"}, nil)
	released := false
	for {
		f := c.Read()
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
	checkConfirmedAck(t, released, got, "the ACK's RECEIPT came before the store had written the acknowledgement", "ACK had its RECEIPT")
}

// OpenWire: a MessageAck with responseRequired (the Java client's
// jms.sendAcksAsync=false; the Go client's SyncAcks). A ProducerInfo,
// answered by the session at once, is the barrier: no Response to the ack
// may come before its Response.
func TestConformanceKahaDBConfirmedAckOpenWire(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t, "openwire")
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
	checkConfirmedAck(t, released, got, "the MessageAck's Response came before the store had written the acknowledgement", "MessageAck had its Response")
}

// MQTT, outbound QoS 2: PUBREL is the broker's word that it has released
// the message; the client then forgets the packet id, so a message that
// came back after a crash would be a duplicate. The subscriber is a
// persistent session (a durable subscription, whose ack is an OpAck). A
// PINGREQ sent once the ack's store write is held is the barrier: its
// PINGRESP must come before the PUBREL.
func TestConformanceKahaDBConfirmedAckMQTTQoS2(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t, "mqtt")
	topic := uniq(t)
	id := uniq(t) + "-s"
	sub := conform.DialRawMQTT(t, b.MQTTAddr())
	if ack := sub.Connect(id, false, 0, nil); ack.Type != mqttwire.CONNACK || ack.ReasonCode != 0 {
		t.Fatalf("CONNACK %+v", ack)
	}
	sub.Send(&mqttwire.Packet{Type: mqttwire.SUBSCRIBE, PacketID: 1, Subscriptions: []mqttwire.Subscription{{Filter: topic, QoS: 2}}})
	if a := sub.Read(); a.Type != mqttwire.SUBACK || len(a.ReasonCodes) != 1 || a.ReasonCodes[0] != 2 {
		t.Fatalf("SUBACK %+v", a)
	}
	pub := conform.DialRawMQTT(t, b.MQTTAddr())
	pub.Connect(uniq(t)+"-p", true, 0, nil)
	for i, body := range []string{"keep", "acked"} {
		pid := uint16(i + 1)
		pub.Send(&mqttwire.Packet{Type: mqttwire.PUBLISH, QoS: 2, PacketID: pid, Topic: topic, Payload: []byte(body)})
		if a := pub.Read(); a.Type != mqttwire.PUBREC || a.PacketID != pid {
			t.Fatalf("publish %q answered with %s %d, want PUBREC", body, a.Type, a.PacketID)
		}
		pub.Send(&mqttwire.Packet{Type: mqttwire.PUBREL, PacketID: pid})
		if a := pub.Read(); a.Type != mqttwire.PUBCOMP || a.PacketID != pid {
			t.Fatalf("PUBREL %d answered with %s %d, want PUBCOMP", pid, a.Type, a.PacketID)
		}
	}
	pids := map[string]uint16{}
	for len(pids) < 2 {
		m := sub.Read()
		if m.Type != mqttwire.PUBLISH || m.QoS != 2 {
			t.Fatalf("subscriber got %s qos %d, want a QoS 2 PUBLISH", m.Type, m.QoS)
		}
		pids[string(m.Payload)] = m.PacketID
	}
	acked, ok := pids["acked"]
	if !ok {
		t.Fatalf(`"acked" not delivered; got %v`, pids)
	}

	gate.armed.Store(true)
	sub.Send(&mqttwire.Packet{Type: mqttwire.PUBREC, PacketID: acked})
	select {
	case <-gate.reached:
	case <-time.After(wait):
		t.Fatal("the PUBREC's acknowledgement never reached the store")
	}
	sub.Send(&mqttwire.Packet{Type: mqttwire.PINGREQ})
	released := false
	for {
		p := sub.Read()
		if p.Type == mqttwire.PINGRESP {
			gate.open()
			released = true
			continue
		}
		if p.Type != mqttwire.PUBREL || p.PacketID != acked {
			t.Fatalf("got %s %d, want PINGRESP or PUBREL %d", p.Type, p.PacketID, acked)
		}
		break
	}
	// A crash now: what is on disk is what the copy holds.
	items := recoveredItems(t, dir)
	gate.open()
	if !released {
		t.Error("PUBREL came before the store had written the acknowledgement")
	}
	pending := map[string]bool{}
	for _, it := range items {
		if it.Msg == nil || it.Dest.Type != message.Topic {
			continue
		}
		for _, k := range it.Subs {
			if k.ClientID == id {
				pending[string(it.Msg.Body)] = true
			}
		}
	}
	if pending["acked"] {
		t.Error(`"acked", whose PUBREC had its PUBREL, is recovered for the subscription after a crash at that moment`)
	}
	if !pending["keep"] {
		t.Errorf(`"keep" (never acknowledged) not recovered for the subscription; recovered %v`, pending)
	}
	// The exchange ends as usual.
	sub.Send(&mqttwire.Packet{Type: mqttwire.PUBCOMP, PacketID: acked})
	sub.Alive()
}

// AMQP: a receiver with rcv-settle-mode second accepts a delivery without
// settling it and waits for the broker's settling disposition (§2.6.12).
// Attaching a sender link once the ack's store write is held is the
// barrier: its Attach must come before that disposition.
func TestConformanceKahaDBConfirmedAckAMQPSettleSecond(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t, "amqp")
	name := uniq(t)
	q := "queue://" + name
	snd := amqpSender(t, amqpSession(t, amqpDial(t, b.AMQPAddr(), nil)), q, nil)
	for _, body := range []string{"keep", "acked"} {
		m := amqp.NewMessage([]byte(body))
		m.Header = &amqp.MessageHeader{Durable: true}
		amqpSend(t, snd, m)
	}
	r := conform.DialRawAMQP(t, b.AMQPAddr())
	r.Open(uniq(t))
	ra := amqpwire.NewAttach("rcv", 0, amqpwire.RoleReceiver)
	ra.SndSettleMode = amqpwire.SndSettleUnsettled
	ra.RcvSettleMode = amqpwire.RcvSettleSecond
	ra.Source = &amqpwire.Source{Address: q}
	ra.Target = &amqpwire.Target{}
	r.Send(0, ra, nil)
	in, credit, handle := uint32(0), uint32(10), uint32(0)
	r.Send(0, &amqpwire.Flow{NextIncomingID: &in, IncomingWindow: 1000, NextOutgoingID: 1, OutgoingWindow: 1000,
		Handle: &handle, DeliveryCount: new(uint32), LinkCredit: &credit}, nil)
	ids := map[string]uint32{}
	for len(ids) < 2 {
		f := r.Next()
		tr, ok := f.Body.(*amqpwire.Transfer)
		if !ok {
			if a, ok := f.Body.(*amqpwire.Attach); ok && a.RcvSettleMode != amqpwire.RcvSettleSecond {
				t.Fatalf("the broker attached with rcv-settle-mode %d, want second", a.RcvSettleMode)
			}
			continue
		}
		m, err := amqpwire.DecodeMessage(f.Payload)
		if err != nil || tr.DeliveryID == nil {
			t.Fatalf("transfer %+v: %v", tr, err)
		}
		ids[string(bytes.Join(m.Data, nil))] = *tr.DeliveryID
	}
	acked, ok := ids["acked"]
	if !ok {
		t.Fatalf(`"acked" not delivered; got %v`, ids)
	}

	gate.armed.Store(true)
	r.Send(0, &amqpwire.Disposition{Role: amqpwire.RoleReceiver, First: acked, Last: &acked, State: &amqpwire.Accepted{}}, nil)
	select {
	case <-gate.reached:
	case <-time.After(wait):
		t.Fatal("the acceptance never reached the store")
	}
	sa := amqpwire.NewAttach("barrier", 1, amqpwire.RoleSender)
	sa.Source = &amqpwire.Source{}
	sa.Target = &amqpwire.Target{Address: q + ".barrier"}
	r.Send(0, sa, nil)
	released := false
	for {
		switch f := r.Next().Body.(type) {
		case *amqpwire.Attach:
			if f.Handle == 1 {
				gate.open()
				released = true
			}
			continue
		case *amqpwire.Disposition:
			if f.Role != amqpwire.RoleSender || !f.Settled || f.First != acked {
				t.Fatalf("disposition %+v, want the broker settling %d", f, acked)
			}
			if _, ok := f.State.(*amqpwire.Accepted); !ok {
				t.Fatalf("settled with %T, want accepted", f.State)
			}
		default:
			continue
		}
		break
	}
	got := recoveredBodies(t, dir, message.QueueDest(name))
	gate.open()
	checkConfirmedAck(t, released, got, "the broker settled the acceptance before the store had written it", "acceptance the broker settled")
}

// MQTT, inbound QoS 2: PUBREC tells the publisher the broker has the
// message (it will not send it again), so it goes out only once the
// message is on disk. The message is kept for a persistent session's
// durable subscription. A PINGREQ sent once the message's store write is
// held is the barrier.
func TestConformanceKahaDBConfirmedPublishMQTTQoS2(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t, "mqtt")
	topic := uniq(t)
	id := uniq(t) + "-s"
	sub := conform.DialRawMQTT(t, b.MQTTAddr())
	sub.Connect(id, false, 0, nil)
	sub.Send(&mqttwire.Packet{Type: mqttwire.SUBSCRIBE, PacketID: 1, Subscriptions: []mqttwire.Subscription{{Filter: topic, QoS: 2}}})
	if a := sub.Read(); a.Type != mqttwire.SUBACK {
		t.Fatalf("SUBACK %+v", a)
	}
	sub.Send(&mqttwire.Packet{Type: mqttwire.DISCONNECT})
	sub.Closed()
	pub := conform.DialRawMQTT(t, b.MQTTAddr())
	pub.Connect(uniq(t)+"-p", true, 0, nil)
	gate.adds.Store(true)
	gate.armed.Store(true)
	pub.Send(&mqttwire.Packet{Type: mqttwire.PUBLISH, QoS: 2, PacketID: 7, Topic: topic, Payload: []byte("stored")})
	select {
	case <-gate.reached:
	case <-time.After(wait):
		t.Fatal("the publish never reached the store")
	}
	pub.Send(&mqttwire.Packet{Type: mqttwire.PINGREQ})
	released := false
	for {
		p := pub.Read()
		if p.Type == mqttwire.PINGRESP {
			gate.open()
			released = true
			continue
		}
		if p.Type != mqttwire.PUBREC || p.PacketID != 7 {
			t.Fatalf("got %s %d, want PINGRESP or PUBREC 7", p.Type, p.PacketID)
		}
		break
	}
	items := recoveredItems(t, dir)
	gate.open()
	if !released {
		t.Error("PUBREC came before the store had written the message")
	}
	found := false
	for _, it := range items {
		if it.Msg != nil && string(it.Msg.Body) == "stored" && slices.ContainsFunc(it.Subs, func(k engine.SubKey) bool { return k.ClientID == id }) {
			found = true
		}
	}
	if !found {
		t.Error(`"stored", whose PUBLISH had its PUBREC, is not recovered after a crash at that moment`)
	}
}

// AMQP with go-amqp: a receiver with ReceiverSettleModeSecond, whose
// AcceptMessage waits for the broker's settling disposition. Opening a
// sender on the same session (a round trip on the connection) once the
// acceptance's store write is held is the barrier: AcceptMessage must not
// have returned by then, and a copy of the KahaDB directory taken when it
// returns does not recover the message.
func TestConformanceKahaDBConfirmedAckAMQPGoClient(t *testing.T) {
	b, gate, dir := startGatedKahaDB(t, "amqp")
	name := uniq(t)
	q := "queue://" + name
	sess := amqpSession(t, amqpDial(t, b.AMQPAddr(), nil))
	snd := amqpSender(t, sess, q, nil)
	for _, body := range []string{"keep", "acked"} {
		m := amqp.NewMessage([]byte(body))
		m.Header = &amqp.MessageHeader{Durable: true}
		amqpSend(t, snd, m)
	}
	rcv := amqpReceiver(t, sess, q, &amqp.ReceiverOptions{SettlementMode: amqp.ReceiverSettleModeSecond.Ptr(), Credit: 10})
	var acked *amqp.Message
	for range 2 {
		if m := amqpRecv(t, rcv); string(m.GetData()) == "acked" {
			acked = m
		}
	}
	if acked == nil {
		t.Fatal(`"acked" not received`)
	}

	gate.armed.Store(true)
	ackErr := make(chan error, 1)
	go func() { ackErr <- rcv.AcceptMessage(amqpCtx(t), acked) }()
	select {
	case <-gate.reached:
	case err := <-ackErr:
		gate.open()
		t.Fatalf("AcceptMessage returned (%v) before the acceptance reached the store", err)
	case <-time.After(wait):
		t.Fatal("the acceptance never reached the store")
	}
	amqpSender(t, sess, q+".barrier", nil)
	released := false
	select {
	case <-ackErr:
	default:
		gate.open()
		released = true
	}
	if released {
		if err := <-ackErr; err != nil {
			t.Fatalf("AcceptMessage: %v", err)
		}
	}
	got := recoveredBodies(t, dir, message.QueueDest(name))
	gate.open()
	checkConfirmedAck(t, released, got, "AcceptMessage returned before the store had written the acceptance", "acceptance the broker settled")
}

// checkConfirmedAck is the verdict of a gated confirmed-ack test: the
// confirmation waited for the store (released: the gate had to be opened
// for it; early says what came too soon otherwise), and the store copied
// when it came (got: the bodies recovered from it) no longer holds
// "acked", whose confirmation (what) came, but still holds "keep".
func checkConfirmedAck(t *testing.T, released bool, got map[string]bool, early, what string) {
	t.Helper()
	if !released {
		t.Error(early)
	}
	if got["acked"] {
		t.Errorf(`"acked", whose %s, is recovered after a crash at that moment`, what)
	}
	if !got["keep"] {
		t.Errorf(`"keep" (never acknowledged) not recovered; recovered %v`, got)
	}
}
