package conformance

import (
	"testing"
	"time"

	"wharf/conform"
	"wharf/protocols/amqp/wire"
)

// Raw AMQP tests that need Wharf's internals (the transaction
// coordinator's effect on the queue), with conform.RawAMQP.

func TestConformanceAMQPRawTransactions(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	r := conform.DialRawAMQP(t, b.AMQPAddr())
	r.Open(uniq(t))
	// A coordinator link and a sender link to q.
	ca := wire.NewAttach("txn", 0, wire.RoleSender)
	ca.Source = &wire.Source{}
	ca.Target = &wire.Coordinator{Capabilities: []wire.Symbol{"amqp:local-transactions"}}
	r.Send(0, ca, nil)
	sa := wire.NewAttach("snd", 1, wire.RoleSender)
	sa.Source = &wire.Source{}
	sa.Target = &wire.Target{Address: q}
	r.Send(0, sa, nil)
	credit := map[uint32]bool{}
	for len(credit) < 2 {
		f := r.Next()
		if fl, ok := f.Body.(*wire.Flow); ok && fl.Handle != nil && fl.LinkCredit != nil && *fl.LinkCredit > 0 {
			credit[*fl.Handle] = true
		}
	}
	deliveryID := uint32(0)
	transfer := func(handle uint32, body any, state wire.DeliveryState) wire.DeliveryState {
		t.Helper()
		id := deliveryID
		deliveryID++
		msg := wire.AppendMessage(nil, &wire.Message{BodyKind: wire.BodyValue, Value: body})
		r.Send(0, &wire.Transfer{Handle: handle, DeliveryID: &id, DeliveryTag: []byte{byte(id)}, State: state}, msg)
		for {
			if d, ok := r.Next().Body.(*wire.Disposition); ok && d.First == id {
				return d.State
			}
		}
	}
	declare := func() []byte {
		t.Helper()
		st, ok := transfer(0, &wire.Declare{}, nil).(*wire.Declared)
		if !ok || len(st.TxnID) == 0 {
			t.Fatalf("declare answered %+v", st)
		}
		return st.TxnID
	}
	tx1 := declare()
	transfer(1, "committed", &wire.TransactionalState{TxnID: tx1})
	tx2 := declare()
	transfer(1, "rolled back", &wire.TransactionalState{TxnID: tx2})
	if _, ok := transfer(0, &wire.Discharge{TxnID: tx2, Fail: true}, nil).(*wire.Accepted); !ok {
		t.Fatal("rollback not accepted")
	}
	if st := b.Engine().Stats(queueDest(q)); st.QueueSize != 0 {
		t.Fatalf("queue holds %d before the commit", st.QueueSize)
	}
	if _, ok := transfer(0, &wire.Discharge{TxnID: tx1}, nil).(*wire.Accepted); !ok {
		t.Fatal("commit not accepted")
	}
	if st, ok := transfer(0, &wire.Discharge{TxnID: tx1}, nil).(*wire.Rejected); !ok || st.Error == nil || st.Error.Condition != wire.ErrCondTransactionUnknownID {
		t.Fatalf("second discharge: %+v, want rejected with unknown-id", st)
	}
	rc := amqpReceiver(t, amqpSession(t, amqpDial(t, b.AMQPAddr(), nil)), q, nil)
	if m := amqpRecv(t, rc); m.Value != "committed" {
		t.Fatalf("got %#v, want the committed message only", m.Value)
	}
	amqpNone(t, rc, 200*time.Millisecond)
}

// Aborted and multi-frame transfers are the conform case
// amqp/transfer/multi-frame-and-aborted; the idle time-out is
// amqp/connection/idle-timeout.

// Browsing (distribution-mode copy) and the no-local filter are the
// conform case amqp/link/browse-and-no-local.

// Links keyed by handle, not by name, as ActiveMQ's AMQP transport keys
// them (by the consumer and producer ids it makes; AmqpSession): two
// receiving links with one name on one session, as Proton's
// BlockingConnection makes them (TestConformanceAMQPProtonBlockingTwoReceivers),
// are both attached and both get the topic's messages. The name keeps its
// one meaning, the durable subscription's: a second durable link of that
// name while the first is attached is refused in TopicRegion.addConsumer's
// words, and a link re-attached by name with no source resumes the
// subscription (AmqpSession.createSender's lookupSubscription), or is
// refused with ActiveMQ's "Unknown subscription link".
// Links of one name, durable re-attach by name and an unknown name are
// the conform case amqp/link/same-link-name.
