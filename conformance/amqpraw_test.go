package conformance

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"wharf/protocols/amqp/wire"
)

// Raw AMQP cases, built with Wharf's own codec: bad input, and the
// transaction coordinator (which go-amqp does not drive).

type rawAMQP struct {
	t     *testing.T
	nc    net.Conn
	dec   *wire.Decoder
	queue []wire.Frame
}

func rawAMQPDial(t *testing.T, addr string) *rawAMQP {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawAMQP{t: t, nc: nc, dec: wire.NewDecoder(wire.Limits{MaxFrameSize: 1 << 20})}
}

func (r *rawAMQP) write(b []byte) {
	r.t.Helper()
	if _, err := r.nc.Write(b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *rawAMQP) send(ch uint16, p wire.Performative, payload []byte) {
	r.write(wire.AppendFrame(nil, ch, p, payload))
}

func (r *rawAMQP) tryRead(d time.Duration) (*wire.Frame, error) {
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(d)
	for {
		if len(r.queue) > 0 {
			f := r.queue[0]
			r.queue = r.queue[1:]
			return &f, nil
		}
		if r.dec.Buffered() > 0 {
			var err error
			if r.queue, err = r.dec.Feed(nil, r.queue); err != nil {
				return nil, err
			}
			continue
		}
		r.nc.SetReadDeadline(deadline)
		n, err := r.nc.Read(buf)
		if n > 0 {
			var derr error
			if r.queue, derr = r.dec.Feed(buf[:n], r.queue); derr != nil {
				return nil, derr
			}
		}
		if err != nil && len(r.queue) == 0 {
			return nil, err
		}
	}
}

// next returns the next frame that is not an empty (heartbeat) frame.
func (r *rawAMQP) next() *wire.Frame {
	r.t.Helper()
	for {
		f, err := r.tryRead(wait)
		if err != nil {
			r.t.Fatalf("read: %v", err)
		}
		if f.Type == wire.FrameHeader || f.Body != nil {
			return f
		}
	}
}

// closed asserts the broker closes the socket.
func (r *rawAMQP) closed() {
	r.t.Helper()
	for {
		f, err := r.tryRead(wait)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				r.t.Fatal("the broker did not close the connection")
			}
			if errors.Is(err, io.EOF) || isReset(err) {
				return
			}
			r.t.Fatalf("read: %v", err)
		}
		if f.Body != nil {
			r.t.Fatalf("got %T before the close", f.Body)
		}
	}
}

// open goes through SASL ANONYMOUS, the AMQP header, Open and Begin.
func (r *rawAMQP) open(containerID string) {
	r.t.Helper()
	r.write([]byte(wire.HeaderSASL))
	if f := r.next(); f.Type != wire.FrameHeader || f.Protocol != wire.ProtocolSASL {
		r.t.Fatalf("got %v, want the SASL header", f.Type)
	}
	if _, ok := r.next().Body.(*wire.SASLMechanisms); !ok {
		r.t.Fatal("no sasl-mechanisms")
	}
	r.write(wire.AppendSASLFrame(nil, &wire.SASLInit{Mechanism: "ANONYMOUS"}))
	if o, ok := r.next().Body.(*wire.SASLOutcome); !ok || o.Code != wire.SASLOK {
		r.t.Fatalf("SASL outcome %+v", o)
	}
	r.dec.SetExpectHeader()
	r.write([]byte(wire.HeaderAMQP))
	if f := r.next(); f.Type != wire.FrameHeader || f.Protocol != wire.ProtocolAMQP {
		r.t.Fatal("no AMQP header")
	}
	r.send(0, wire.NewOpen(containerID), nil)
	if _, ok := r.next().Body.(*wire.Open); !ok {
		r.t.Fatal("no Open")
	}
	r.send(0, &wire.Begin{NextOutgoingID: 1, IncomingWindow: 1000, OutgoingWindow: 1000, HandleMax: 100}, nil)
	if _, ok := r.next().Body.(*wire.Begin); !ok {
		r.t.Fatal("no Begin")
	}
}

// expectClose reads up to the broker's Close and checks its condition.
func (r *rawAMQP) expectClose(cond wire.Symbol) {
	r.t.Helper()
	for {
		f := r.next()
		if c, ok := f.Body.(*wire.Close); ok {
			if c.Error == nil || c.Error.Condition != cond {
				r.t.Fatalf("Close %+v, want condition %s", c.Error, cond)
			}
			return
		}
	}
}

// The bad-input cases (a bad header, no SASL, an oversized frame, an
// unattached handle, a malformed attach) are the conform case
// amqp/errors/bad-input.

// rawAMQPFrame wraps a hand-written performative body in a frame header.
func rawAMQPFrame(ch uint16, body []byte) []byte {
	n := 8 + len(body)
	return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 2, 0, byte(ch >> 8), byte(ch)}, body...)
}

func TestConformanceAMQPRawTransactions(t *testing.T) {
	b := amqpBroker(t, nil)
	q := "queue://" + uniq(t)
	r := rawAMQPDial(t, b.AMQPAddr())
	r.open(uniq(t))
	// A coordinator link and a sender link to q.
	ca := wire.NewAttach("txn", 0, wire.RoleSender)
	ca.Source = &wire.Source{}
	ca.Target = &wire.Coordinator{Capabilities: []wire.Symbol{"amqp:local-transactions"}}
	r.send(0, ca, nil)
	sa := wire.NewAttach("snd", 1, wire.RoleSender)
	sa.Source = &wire.Source{}
	sa.Target = &wire.Target{Address: q}
	r.send(0, sa, nil)
	credit := map[uint32]bool{}
	for len(credit) < 2 {
		f := r.next()
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
		r.send(0, &wire.Transfer{Handle: handle, DeliveryID: &id, DeliveryTag: []byte{byte(id)}, State: state}, msg)
		for {
			if d, ok := r.next().Body.(*wire.Disposition); ok && d.First == id {
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
