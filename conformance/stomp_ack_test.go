package conformance

import (
	"strconv"
	"testing"

	"github.com/go-stomp/stomp/v3"

	"wharf/conform"
	"wharf/engine/message"
)

// sendN sends bodies m1..mn to dest from a fresh connection.
func sendN(t *testing.T, addr, dest string, n int, opts ...string) {
	t.Helper()
	p, _ := conform.ConnectRaw(t, addr, "1.2")
	for i := 1; i <= n; i++ {
		p.SendMsg(dest, "m"+strconv.Itoa(i), opts...)
	}
}

// expectRedelivered checks the redelivered header.
func expectRedelivered(t *testing.T, f *conform.RawFrame, want bool) {
	t.Helper()
	v, _ := f.Get("redelivered")
	if got := v == "true"; got != want {
		t.Fatalf("%s: redelivered %v, want %v", f, got, want)
	}
}

// drainAfterReconnect subscribes on a new connection and checks that exactly
// the bodies want arrive (with redelivered as given), and then only the
// marker: the marker is the barrier for "nothing else".
func drainAfterReconnect(t *testing.T, addr, q string, redelivered bool, want ...string) {
	t.Helper()
	c, _ := conform.ConnectRaw(t, addr, "1.2")
	c.Subscribe("again", q)
	for _, w := range want {
		expectRedelivered(t, c.ExpectMessage(w), redelivered)
	}
	c.SendMsg(q, "marker")
	expectRedelivered(t, c.ExpectMessage("marker"), false)
}

// DISCONNECT's receipt comes after the broker has released the connection's
// consumers, as ActiveMQ answers only after removing the connection: a
// message sent once the client has the receipt can no longer be handed to
// (and, with ack:auto, lost in) the departing consumer.
func TestConformanceSTOMPDisconnectReceiptAfterRelease(t *testing.T) {
	b := startBroker(t)
	name := uniq(t)
	for i := range 20 {
		c := dial(t, b.STOMPAddr())
		sub(t, c, "/queue/"+name, stomp.AckAuto)
		if err := c.Disconnect(); err != nil {
			t.Fatal(err)
		}
		if n := b.Engine().Stats(message.QueueDest(name)).ConsumerCount; n != 0 {
			t.Fatalf("round %d: %d consumers left after the DISCONNECT receipt, want 0", i, n)
		}
	}
}
