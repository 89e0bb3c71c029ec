package conform

// A consumer that leaves without acking gets its messages back, marked
// redelivered:true, on the next subscription (reference broker-behaviour.md
// §5.2).
func stompRedeliveryAfterDisconnect(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 2)
	c, _ := ConnectRaw(t, addr, "1.1")
	c.Subscribe("s", q, "ack:client")
	expectRedelivered(t, c.ExpectMessage("m1"), false)
	expectRedelivered(t, c.ExpectMessage("m2"), false)
	// Gone without DISCONNECT, as a crashed client.
	c.c.Close()
	drainAfterReconnect(t, addr, q, true, "m1", "m2")
}

// SEND without persistent:true is non-persistent and does not survive a
// broker restart; persistent:true does.
func stompPersistenceAcrossRestart(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.SendMsg(q, "non-persistent")
	c.SendMsg(q, "persistent-false", "persistent:false")
	c.SendMsg(q, "persistent", "persistent:true")
	t.Restart()
	// Read the address again: an in-process broker comes back elsewhere.
	drainAfterReconnect(t, t.Addr(STOMP), q, false, "persistent")
}
