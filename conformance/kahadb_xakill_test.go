package conformance

import (
	"fmt"
	"path/filepath"
	"testing"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// TestConformanceKahaDBXADeliveredAckKill: what the kill torture
// (torture/, WHARF_TORTURE_XA=1) found. ActiveMQ's XA client acknowledges
// each message a branch receives twice: a DELIVERED MessageAck as it hands
// the message over, then the STANDARD one in the branch. The DELIVERED ack
// tagged the delivery so that the branch's ack did not take it: the
// prepare did not hold it, the commit did not consume it, and a restart
// after a SIGKILL delivered it again although the two-phase commit was
// confirmed (with the branch's sends delivered too: not all or nothing).
// Here three branches on one connection each receive from a prefetch-1
// consumer opened before them, send one message, and commit in two
// phases; after a SIGKILL the sends are there and the consumed messages
// are not.
func TestConformanceKahaDBXADeliveredAckKill(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kahadb")
	w := startWharf(t, dir)
	const in, out = "kdb.xakill.in", "kdb.xakill.out"
	c := dialOW(t, w.openwire, "")
	p := must(must(c.Session(false))(t).Producer(wire.NewQueue(in)))(t)
	for i := range 3 {
		m := client.NewTextMessage("consumed in a branch")
		if err := m.SetProperties(map[string]any{"key": fmt.Sprint("in", i)}); err != nil {
			t.Fatal(err)
		}
		owSend(t, p, m)
	}
	c.Close()
	x := dialXA(t, w.openwire, "delivered")
	k := x.consume(in)
	for i := range 3 {
		md := x.receive(k)
		xid := testXid(fmt.Sprint("delivered-", i))
		must(x.tx(wire.TransactionBegin, xid))(t)
		x.Oneway(x.t, &wire.MessageAck{
			Destination: md.Destination, TransactionId: xid, ConsumerId: md.ConsumerId, AckType: wire.AckDelivered,
			FirstMessageId: md.Message.MessageId, LastMessageId: md.Message.MessageId, MessageCount: 1,
		})
		x.send(out, fmt.Sprint("out", i), xid)
		x.ack(md, xid)
		must(x.tx(wire.TransactionEnd, xid))(t)
		must(x.tx(wire.TransactionPrepare, xid))(t)
		must(x.tx(wire.TransactionCommitTwoPhase, xid))(t)
		if got, want := propKey(md.Message), fmt.Sprint("in", i); got != want {
			t.Fatalf("branch %d consumed %q, want %q", i, got, want)
		}
	}
	w.kill()
	w = startWharf(t, dir)
	v := newXAVerifier(t, w.openwire, xaQueues{in: [2]string{in, in + ".unused"}, out: [2]string{out, out + ".unused"}})
	v.expect(v.out[0], "committed sends", false, "out0", "out1", "out2")
	v.nothingOn(v.in[0], in, "committed acks after the kill")
	v.close()
	w.stop()
}
