package conform

// A consumer that leaves without acking gets its messages back, marked
// redelivered:true, on the next subscription (reference broker-behaviour.md
// §5.2).
func stompRedeliveryAfterDisconnect(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 2)
	c, _ := connectRaw(t, addr, "1.1")
	c.subscribe("s", q, "ack:client")
	expectRedelivered(t, c.expectMessage("m1"), false)
	expectRedelivered(t, c.expectMessage("m2"), false)
	// Gone without DISCONNECT, as a crashed client.
	c.c.Close()
	drainAfterReconnect(t, addr, q, true, "m1", "m2")
}

// SEND without persistent:true is non-persistent and does not survive a
// broker restart; persistent:true does.
func stompPersistenceAcrossRestart(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := connectRaw(t, addr, "1.2")
	c.sendMsg(q, "non-persistent")
	c.sendMsg(q, "persistent-false", "persistent:false")
	c.sendMsg(q, "persistent", "persistent:true")
	t.Restart()
	// Read the address again: an in-process broker comes back elsewhere.
	drainAfterReconnect(t, t.Addr(STOMP), q, false, "persistent")
}
