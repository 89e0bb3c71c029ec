package conformance

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"wharf/conform"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Durable XA transactions through a real OpenWire socket: a Wharf process
// on a KahaDB directory; a raw OpenWire connection prepares two XA
// branches (two persistent sends and the ack of a consumed message each),
// as ActiveMQ's Java client does (BEGIN, async sends, the ack in the
// branch, END, PREPARE); the broker stops or is killed; after the restart
// RECOVER lists both Xids, nothing of them is visible, and COMMIT_TWO_PHASE
// of one and ROLLBACK of the other give what a transaction manager
// expects. The Go client (protocols/openwire/client) has only local
// transactions, hence the raw connection.

// xaFormatID is the Xid format of every test branch ("WHAR").
const xaFormatID = 0x57484152

// testXid is the Xid of test branch gtid (branch qualifier "b1").
func testXid(gtid string) *wire.XATransactionId {
	return &wire.XATransactionId{FormatId: xaFormatID, GlobalTransactionId: []byte(gtid), BranchQualifier: []byte("b1")}
}

func xidString(x *wire.XATransactionId) string {
	return fmt.Sprintf("%d:%s:%s", x.FormatId, x.GlobalTransactionId, x.BranchQualifier)
}

// xaConn is a raw OpenWire connection with one session and one anonymous
// producer, that runs XA branches. It reads on the test's goroutine:
// dispatches that arrive while it waits for a response are kept for
// receive.
type xaConn struct {
	*conform.OpenWireConn
	t         *testing.T
	id        *wire.ConnectionId
	session   *wire.SessionId
	producer  *wire.ProducerId
	prodSeq   int64
	consumers int64
	pending   []*wire.MessageDispatch
}

func dialXA(t *testing.T, addr, name string) *xaConn {
	t.Helper()
	x := &xaConn{OpenWireConn: conform.OpenWireHandshake(t, addr), t: t, id: &wire.ConnectionId{Value: "ID:xa-" + name}}
	t.Cleanup(func() { x.Close() })
	x.call(&wire.ConnectionInfo{ConnectionId: x.id, ClientId: "xa-" + name})
	x.session = &wire.SessionId{ConnectionId: x.id.Value, Value: 1}
	x.call(&wire.SessionInfo{SessionId: x.session})
	x.producer = &wire.ProducerId{ConnectionId: x.id.Value, SessionId: 1, Value: 1}
	x.call(&wire.ProducerInfo{ProducerId: x.producer})
	return x
}

// call sends c and returns the broker's response, failing the test on an
// ExceptionResponse.
func (x *xaConn) call(c wire.Command) wire.DataStructure {
	x.t.Helper()
	r, err := x.try(c)
	if err != nil {
		x.t.Fatal(err)
	}
	return r
}

// try sends c and returns the broker's response; an ExceptionResponse is
// an error.
func (x *xaConn) try(c wire.Command) (wire.DataStructure, error) {
	x.t.Helper()
	id := x.Request(x.t, c)
	for {
		ds := x.ReadCommand(x.t)
		switch r := ds.(type) {
		case *wire.MessageDispatch:
			x.pending = append(x.pending, r)
			continue
		case *wire.ExceptionResponse:
			if r.CorrelationId == id {
				msg := "<nil>"
				if r.Exception != nil {
					msg = r.Exception.ClassName + ": " + r.Exception.Message
				}
				return nil, fmt.Errorf("%s: %s", wire.TypeName(c.DataStructureType()), msg)
			}
			continue
		}
		if r, ok := ds.(wire.Command); ok && responseTo(r) == id {
			return ds, nil
		}
	}
}

// responseTo is the CorrelationId of a response, -1 for other commands.
func responseTo(c wire.Command) int32 {
	switch r := c.(type) {
	case *wire.Response:
		return r.CorrelationId
	case *wire.IntegerResponse:
		return r.CorrelationId
	case *wire.DataArrayResponse:
		return r.CorrelationId
	case *wire.DataResponse:
		return r.CorrelationId
	}
	return -1
}

// consume opens a consumer on queue with prefetch 1.
func (x *xaConn) consume(queue string) *wire.ConsumerId {
	x.t.Helper()
	x.consumers++
	id := &wire.ConsumerId{ConnectionId: x.id.Value, SessionId: 1, Value: x.consumers}
	x.call(&wire.ConsumerInfo{ConsumerId: id, Destination: wire.NewQueue(queue), PrefetchSize: 1, DispatchAsync: true})
	return id
}

// receive waits for the next dispatch to consumer k.
func (x *xaConn) receive(k *wire.ConsumerId) *wire.MessageDispatch {
	x.t.Helper()
	for {
		for i, md := range x.pending {
			if *md.ConsumerId == *k && md.Message != nil {
				x.pending = slices.Delete(x.pending, i, i+1)
				return md
			}
		}
		if md, ok := x.ReadCommand(x.t).(*wire.MessageDispatch); ok {
			x.pending = append(x.pending, md)
		}
	}
}

// send sends a persistent text message keyed key to queue in the branch
// xid, asynchronously as the Java client sends inside a transaction.
func (x *xaConn) send(queue, key string, xid *wire.XATransactionId) {
	x.t.Helper()
	m := client.NewTextMessage("xa " + key)
	if err := m.SetProperties(map[string]any{"key": key}); err != nil {
		x.t.Fatal(err)
	}
	x.prodSeq++
	m.ProducerId = x.producer
	m.MessageId = &wire.MessageId{ProducerId: x.producer, ProducerSequenceId: x.prodSeq}
	m.Destination = wire.NewQueue(queue)
	m.TransactionId = xid
	x.Oneway(x.t, m)
}

// ack acknowledges md (STANDARD) in the branch xid.
func (x *xaConn) ack(md *wire.MessageDispatch, xid *wire.XATransactionId) {
	x.t.Helper()
	x.Oneway(x.t, &wire.MessageAck{
		Destination: md.Destination, TransactionId: xid, ConsumerId: md.ConsumerId, AckType: wire.AckStandard,
		FirstMessageId: md.Message.MessageId, LastMessageId: md.Message.MessageId, MessageCount: 1,
	})
}

// tx sends TransactionInfo op for xid and returns the response.
func (x *xaConn) tx(op byte, xid *wire.XATransactionId) (wire.DataStructure, error) {
	x.t.Helper()
	return x.try(&wire.TransactionInfo{ConnectionId: x.id, TransactionId: xid, Type: op})
}

// prepareBranch runs branch xid: it consumes the one message of in, sends
// keys[0] and keys[1] to out, acknowledges the consumed message, ENDs and
// PREPAREs. It returns the key of the consumed message.
func (x *xaConn) prepareBranch(xid *wire.XATransactionId, in, out string, keys [2]string) string {
	x.t.Helper()
	k := x.consume(in)
	md := x.receive(k)
	must(x.tx(wire.TransactionBegin, xid))(x.t)
	x.send(out, keys[0], xid)
	x.send(out, keys[1], xid)
	x.ack(md, xid)
	must(x.tx(wire.TransactionEnd, xid))(x.t)
	r := must(x.tx(wire.TransactionPrepare, xid))(x.t)
	vote, ok := r.(*wire.IntegerResponse)
	if !ok {
		x.t.Fatalf("PREPARE %s answered with %s, want IntegerResponse", xidString(xid), wire.TypeName(r.DataStructureType()))
	}
	if vote.Result != 0 {
		x.t.Fatalf("PREPARE %s voted %d, want XA_OK (0)", xidString(xid), vote.Result)
	}
	return propKey(md.Message)
}

// recover returns the Xids RECOVER lists, as strings, sorted.
func (x *xaConn) recover() []string {
	x.t.Helper()
	r := x.call(&wire.TransactionInfo{ConnectionId: x.id, Type: wire.TransactionRecover})
	arr, ok := r.(*wire.DataArrayResponse)
	if !ok {
		x.t.Fatalf("RECOVER answered with %s, want DataArrayResponse", wire.TypeName(r.DataStructureType()))
	}
	var out []string
	for _, d := range arr.Data {
		xid, ok := d.(*wire.XATransactionId)
		if !ok {
			x.t.Fatalf("RECOVER listed a %s, want XATransactionId", wire.TypeName(d.DataStructureType()))
		}
		out = append(out, xidString(xid))
	}
	slices.Sort(out)
	return out
}

// xaQueues is the queues of a scenario: branch i consumes from in[i] and
// sends to out[i].
type xaQueues struct{ in, out [2]string }

func newXAQueues(prefix string) xaQueues {
	return xaQueues{
		in:  [2]string{prefix + ".in.commit", prefix + ".in.rollback"},
		out: [2]string{prefix + ".out.commit", prefix + ".out.rollback"},
	}
}

// xaVerifier checks, with the Go client, what a broker delivers on the
// queues of a scenario. Its consumers stay open, so that a message a
// rollback puts back reaches one of them.
type xaVerifier struct {
	t   *testing.T
	q   xaQueues
	c   *client.Conn
	s   *client.Session
	in  [2]*client.Consumer
	out [2]*client.Consumer
	p   *client.Producer
}

func newXAVerifier(t *testing.T, addr string, q xaQueues) *xaVerifier {
	t.Helper()
	c := dialOW(t, addr, "")
	v := &xaVerifier{t: t, q: q, c: c, s: must(c.Session(false))(t)}
	v.p = must(v.s.Producer(nil))(t)
	for i := range 2 {
		v.in[i] = must(v.s.Consumer(wire.NewQueue(q.in[i]), client.ConsumerOptions{}))(t)
		v.out[i] = must(v.s.Consumer(wire.NewQueue(q.out[i]), client.ConsumerOptions{}))(t)
	}
	return v
}

// close closes the verifier's connection. Its consumers acknowledge their
// markers one way (AckAuto); the close is a round trip after those acks on
// the same connection, so a stop that follows cannot overtake them (one
// still in flight at a SIGTERM brought its marker back after the restart).
func (v *xaVerifier) close() {
	v.t.Helper()
	if err := v.c.Close(); err != nil {
		v.t.Fatalf("close the verifier's connection: %v", err)
	}
}

// nothingOn checks that k's next message is a marker sent now to queue:
// nothing else was there to deliver.
func (v *xaVerifier) nothingOn(k *client.Consumer, queue, what string) {
	v.t.Helper()
	m := markerMessage("marker-" + what)
	m.Destination = wire.NewQueue(queue)
	owSend(v.t, v.p, m)
	got := receiveN(v.t, k, what, 1)[0]
	if propKey(got) != "marker-"+what {
		v.t.Errorf("%s: got %q (redeliveries %d), want nothing before the marker", what, propKey(got), got.RedeliveryCounter)
	}
}

// nothingAnywhere checks that no queue of the scenario has a message.
func (v *xaVerifier) nothingAnywhere(when string) {
	v.t.Helper()
	for i := range 2 {
		v.nothingOn(v.in[i], v.q.in[i], when+" "+v.q.in[i])
		v.nothingOn(v.out[i], v.q.out[i], when+" "+v.q.out[i])
	}
}

// expect receives len(keys) messages from k and checks their keys, and
// whether each is flagged redelivered (JMSRedelivered: a redelivery
// counter above 0).
func (v *xaVerifier) expect(k *client.Consumer, what string, redelivered bool, keys ...string) {
	v.t.Helper()
	got := receiveN(v.t, k, what, len(keys))
	if !slices.Equal(keysOf(got), keys) {
		v.t.Errorf("%s: got %q, want %q", what, keysOf(got), keys)
	}
	for _, m := range got {
		if (m.RedeliveryCounter > 0) != redelivered {
			v.t.Errorf("%s: %s has redelivery counter %d, want redelivered=%v", what, propKey(m), m.RedeliveryCounter, redelivered)
		}
	}
}

// seedXA sends the message each branch will consume, keyed in.commit and
// in.rollback, persistent and synchronous.
func seedXA(t *testing.T, addr string, q xaQueues) [2]string {
	t.Helper()
	c := dialOW(t, addr, "")
	s := must(c.Session(false))(t)
	keys := [2]string{"in.commit", "in.rollback"}
	for i := range 2 {
		m := client.NewTextMessage("to be acknowledged in a branch")
		if err := m.SetProperties(map[string]any{"key": keys[i]}); err != nil {
			t.Fatal(err)
		}
		owSend(t, must(s.Producer(wire.NewQueue(q.in[i])))(t), m)
	}
	c.Close()
	return keys
}

// checkNoSkipped fails when wharf skipped journal records on replay.
func checkNoSkipped(t *testing.T, w *wharfProc) {
	t.Helper()
	if recs := w.logged("journal record skipped"); len(recs) > 0 {
		t.Errorf("wharf skipped %d journal records, e.g. %v", len(recs), recs[0])
	}
}

// TestConformanceOpenWireXADurable: XA branches prepared over OpenWire
// survive a clean stop and a SIGKILL of the Wharf process: after the
// restart RECOVER lists them and they hide their sends and the message
// they acknowledged; COMMIT_TWO_PHASE delivers the sends and the
// acknowledged message is gone; ROLLBACK drops the sends and redelivers
// the acknowledged message flagged redelivered. A further restart brings
// back neither transaction nor any message.
func TestConformanceOpenWireXADurable(t *testing.T) {
	for _, how := range []string{"SIGTERM", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kahadb")
			q := newXAQueues("xa.ow." + how)
			w := startWharf(t, dir)
			inKeys := seedXA(t, w.openwire, q)
			xids := [2]*wire.XATransactionId{testXid("ow-" + how + "-commit"), testXid("ow-" + how + "-rollback")}
			outKeys := [2][2]string{{"commit.1", "commit.2"}, {"rollback.1", "rollback.2"}}
			x := dialXA(t, w.openwire, "prepare")
			for i := range 2 {
				if got := x.prepareBranch(xids[i], q.in[i], q.out[i], outKeys[i]); got != inKeys[i] {
					t.Fatalf("branch %s consumed %q, want %q", xidString(xids[i]), got, inKeys[i])
				}
			}
			want := []string{xidString(xids[0]), xidString(xids[1])}
			slices.Sort(want)
			if got := x.recover(); !slices.Equal(got, want) {
				t.Errorf("RECOVER before the restart: got %q, want %q", got, want)
			}
			if how == "SIGKILL" {
				w.kill()
			} else {
				w.stop()
			}

			w = startWharf(t, dir)
			checkNoSkipped(t, w)
			x = dialXA(t, w.openwire, "recover")
			if got := x.recover(); !slices.Equal(got, want) {
				t.Fatalf("RECOVER after the restart: got %q, want %q", got, want)
			}
			v := newXAVerifier(t, w.openwire, q)
			v.nothingAnywhere("prepared")

			must(x.tx(wire.TransactionCommitTwoPhase, xids[0]))(t)
			v.expect(v.out[0], "committed sends", false, outKeys[0][:]...)
			v.nothingOn(v.out[0], q.out[0], "after the committed sends")
			v.nothingOn(v.in[0], q.in[0], "committed ack")

			must(x.tx(wire.TransactionRollback, xids[1]))(t)
			v.expect(v.in[1], "rolled-back ack", true, inKeys[1])
			v.nothingOn(v.out[1], q.out[1], "rolled-back sends")
			v.nothingOn(v.in[1], q.in[1], "after the rolled-back ack")
			if got := x.recover(); len(got) != 0 {
				t.Errorf("RECOVER after commit and rollback: got %q, want none", got)
			}
			// Finishing a branch twice: the Xid is unknown now.
			if _, err := x.tx(wire.TransactionCommitTwoPhase, xids[0]); err == nil {
				t.Errorf("a second COMMIT_TWO_PHASE of %s succeeded", xidString(xids[0]))
			}
			v.close()
			w.stop()

			w = startWharf(t, dir)
			checkNoSkipped(t, w)
			if got := dialXA(t, w.openwire, "again").recover(); len(got) != 0 {
				t.Errorf("RECOVER after a further restart: got %q, want none", got)
			}
			newXAVerifier(t, w.openwire, q).nothingAnywhere("finished")
			w.stop()
		})
	}
}
