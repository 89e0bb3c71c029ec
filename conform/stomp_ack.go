package conform

import (
	"strconv"

	"github.com/go-stomp/stomp/v3"
)

// sendN sends bodies m1..mn to dest from a fresh connection.
func sendN(t *T, addr, dest string, n int, opts ...string) {
	t.Helper()
	p, _ := ConnectRaw(t, addr, "1.2")
	for i := 1; i <= n; i++ {
		p.SendMsg(dest, "m"+strconv.Itoa(i), opts...)
	}
}

// expectRedelivered checks the redelivered header.
func expectRedelivered(t *T, f *RawFrame, want bool) {
	t.Helper()
	v, _ := f.Get("redelivered")
	if got := v == "true"; got != want {
		t.Fatalf("%s: redelivered %v, want %v", f, got, want)
	}
}

// drainAfterReconnect subscribes on a new connection and checks that exactly
// the bodies want arrive (with redelivered as given), and then only the
// marker: the marker is the barrier for "nothing else".
func drainAfterReconnect(t *T, addr, q string, redelivered bool, want ...string) {
	t.Helper()
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("again", q)
	for _, w := range want {
		expectRedelivered(t, c.ExpectMessage(w), redelivered)
	}
	c.SendMsg(q, "marker")
	expectRedelivered(t, c.ExpectMessage("marker"), false)
}

// ack:auto — the broker acks on dispatch; nothing is redelivered.
func stompAckAuto(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 2)
	c := dial(t, addr)
	s := sub(t, c, q, stomp.AckAuto)
	recvBodies(t, s, "m1", "m2")
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	drainAfterReconnect(t, addr, q, false)
}

// ack:client is cumulative: acking the third message acks the first two too
// (ActiveMQ StompSubscription CLIENT_ACK → STANDARD ack). The rest come back
// redelivered after the consumer goes away.
func stompAckClientCumulative(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 5)
	c := dial(t, addr)
	s := sub(t, c, q, stomp.AckClient)
	ms := recvBodies(t, s, "m1", "m2", "m3", "m4", "m5")
	ack(t, c, ms[2])
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	drainAfterReconnect(t, addr, q, true, "m4", "m5")
}

// ack:client-individual acks one message only.
func stompAckClientIndividual(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 3)
	c := dial(t, addr)
	s := sub(t, c, q, stomp.AckClientIndividual)
	ms := recvBodies(t, s, "m1", "m2", "m3")
	ack(t, c, ms[1])
	if err := c.Disconnect(); err != nil {
		t.Fatal(err)
	}
	drainAfterReconnect(t, addr, q, true, "m1", "m3")
}

// The ACK forms of each version: 1.0 by message-id alone, 1.1 by
// message-id and subscription, 1.2 by the MESSAGE's ack header.
func stompAckForms(t *T) {
	addr := t.Addr(STOMP)
	cases := []struct {
		version string
		ack     func(m *RawFrame) []string
	}{
		{"1.0", func(m *RawFrame) []string { return []string{"message-id:" + m.Must(t, "message-id")} }},
		{"1.1", func(m *RawFrame) []string {
			return []string{"message-id:" + m.Must(t, "message-id"), "subscription:" + m.Must(t, "subscription")}
		}},
		{"1.2", func(m *RawFrame) []string { return []string{"id:" + m.Must(t, "ack")} }},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *T) {
			q := queue(t, "")
			sendN(t, addr, q, 2)
			c, _ := ConnectRaw(t, addr, tc.version)
			c.Subscribe("s", q, "ack:client-individual")
			m1 := c.ExpectMessage("m1")
			c.ExpectMessage("m2")
			if _, ok := m1.Get("ack"); ok != (tc.version == "1.2") {
				t.Fatalf("ack header present %v in %s", ok, tc.version)
			}
			c.Send("ACK", append(tc.ack(m1), "receipt:a1"), nil)
			c.ExpectReceipt("a1")
			c.Disconnect()
			drainAfterReconnect(t, addr, q, true, "m2")
		})
	}
}

// NACK is a poison ack: the message goes to ActiveMQ.DLQ with
// original-destination (reference broker-behaviour.md §6).
func stompNackToDLQ(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	id := t.Uniq()
	// Persistent: the DLQ strategy drops non-persistent messages
	// (processNonPersistent=false).
	sendN(t, addr, q, 1, "persistent:true", "testid:"+id)
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", q, "ack:client-individual")
	m := c.ExpectMessage("m1")
	c.Send("NACK", []string{"id:" + m.Must(t, "ack"), "receipt:n1"}, nil)
	c.ExpectReceipt("n1")

	dlq, _ := ConnectRaw(t, addr, "1.2")
	dlq.Subscribe("dlq", "/queue/ActiveMQ.DLQ", "selector:testid = '"+id+"'")
	d := dlq.ExpectMessage("m1")
	if got := d.Must(t, "original-destination"); got != q {
		t.Fatalf("original-destination: got %q, want %q", got, q)
	}
	// Not redelivered to the queue.
	c.Disconnect()
	drainAfterReconnect(t, addr, q, false)
}

// ACK of an id the broker never sent: ERROR "Unexpected ACK received for
// message-id [..]", and the connection goes on. ActiveMQ names the frame's
// message-id header there, "null" for a 1.2 ACK that has only id.
func stompAckUnknownID(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Send("ACK", []string{"id:bogus-1"}, nil)
	c.ExpectError("Unexpected ACK received for message-id [null]", "")
	c.Send("ACK", []string{"id:bogus-2", "message-id:m-2", "receipt:r2"}, nil)
	c.ExpectError("Unexpected ACK received for message-id [m-2]", "r2")
	c.Subscribe("s", q, "ack:client")
	c.SendMsg(q, "after")
	m := c.ExpectMessage("after")
	c.Send("ACK", []string{"id:" + m.Must(t, "ack"), "receipt:a"}, nil)
	c.ExpectReceipt("a")
}
