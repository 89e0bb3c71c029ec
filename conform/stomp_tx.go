package conform

import ()

// BEGIN/COMMIT: transacted sends are invisible until COMMIT; a send outside
// the transaction is the barrier that shows they were held back.
func stompTransactionCommit(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	cons, _ := connectRaw(t, addr, "1.2")
	cons.subscribe("s", q)
	p, _ := connectRaw(t, addr, "1.2")
	p.send("BEGIN", []string{"transaction:t1"}, nil)
	p.send("SEND", []string{"destination:" + q, "transaction:t1"}, []byte("tx1"))
	p.send("SEND", []string{"destination:" + q, "transaction:t1"}, []byte("tx2"))
	p.sendMsg(q, "outside")
	cons.expectMessage("outside")
	cons.mustSync()
	p.send("COMMIT", []string{"transaction:t1", "receipt:c"}, nil)
	p.expectReceipt("c")
	cons.expectMessage("tx1")
	cons.expectMessage("tx2")
}

// ABORT discards the transaction's sends.
func stompTransactionAbortSends(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	cons, _ := connectRaw(t, addr, "1.2")
	cons.subscribe("s", q)
	p, _ := connectRaw(t, addr, "1.2")
	p.send("BEGIN", []string{"transaction:t1"}, nil)
	p.send("SEND", []string{"destination:" + q, "transaction:t1"}, []byte("discarded"))
	p.send("ABORT", []string{"transaction:t1", "receipt:a"}, nil)
	p.expectReceipt("a")
	p.sendMsg(q, "marker")
	cons.expectMessage("marker")
	cons.mustSync()
}

// ACKs in a transaction take effect at COMMIT: nothing is redelivered after
// the consumer leaves.
func stompTransactionAckCommit(t *T) {
	addr := t.Addr(STOMP)
	for _, mode := range []string{"client", "client-individual"} {
		t.Run(mode, func(t *T) {
			q := queue(t, "")
			sendN(t, addr, q, 2)
			c, _ := connectRaw(t, addr, "1.2")
			c.subscribe("s", q, "ack:"+mode)
			m1, m2 := c.expectMessage("m1"), c.expectMessage("m2")
			c.send("BEGIN", []string{"transaction:t"}, nil)
			c.send("ACK", []string{"id:" + m1.Must(t, "ack"), "transaction:t"}, nil)
			c.send("ACK", []string{"id:" + m2.Must(t, "ack"), "transaction:t"}, nil)
			c.send("COMMIT", []string{"transaction:t", "receipt:c"}, nil)
			c.expectReceipt("c")
			c.disconnect()
			drainAfterReconnect(t, addr, q, false)
		})
	}
}

// ABORT undoes the transaction's ACKs, and the messages come back,
// redelivered, when the consumer leaves without acking them.
//
// DEVIATION (documented difference, the case branches on T.ActiveMQBehaviour): ActiveMQ
// keeps the messages with the consumer and makes their ack ids valid again
// (StompSubscription.onStompAbort); nothing is sent at ABORT. Wharf's engine
// requeues transactionally acked deliveries at rollback and dispatches them
// again at once: new MESSAGE frames with redelivered:true and new ack ids.
func stompTransactionAckAbort(t *T) {
	addr := t.Addr(STOMP)
	for _, mode := range []string{"client", "client-individual"} {
		t.Run(mode, func(t *T) {
			q := queue(t, "")
			sendN(t, addr, q, 2)
			c, _ := connectRaw(t, addr, "1.2")
			c.subscribe("s", q, "ack:"+mode)
			m1, m2 := c.expectMessage("m1"), c.expectMessage("m2")
			c.send("BEGIN", []string{"transaction:t"}, nil)
			c.send("ACK", []string{"id:" + m1.Must(t, "ack"), "transaction:t"}, nil)
			c.send("ACK", []string{"id:" + m2.Must(t, "ack"), "transaction:t"}, nil)
			c.send("ABORT", []string{"transaction:t", "receipt:a"}, nil)
			c.expectReceipt("a")
			if t.ActiveMQBehaviour() {
				c.mustSync()
			} else {
				expectRedelivered(t, c.expectMessage("m1"), true)
				expectRedelivered(t, c.expectMessage("m2"), true)
			}
			c.disconnect()
			drainAfterReconnect(t, addr, q, true, "m1", "m2")
		})
	}
	t.Run("ack after abort", func(t *T) {
		q := queue(t, "")
		sendN(t, addr, q, 1)
		c, _ := connectRaw(t, addr, "1.2")
		c.subscribe("s", q, "ack:client-individual")
		m1 := c.expectMessage("m1")
		c.send("BEGIN", []string{"transaction:t"}, nil)
		c.send("ACK", []string{"id:" + m1.Must(t, "ack"), "transaction:t"}, nil)
		c.send("ABORT", []string{"transaction:t", "receipt:a"}, nil)
		c.expectReceipt("a")
		ackID := m1.Must(t, "ack")
		if t.ActiveMQBehaviour() {
			c.mustSync() // not sent again; the old ack id is valid again
		} else {
			again := c.expectMessage("m1") // sent again under a new ack id
			expectRedelivered(t, again, true)
			ackID = again.Must(t, "ack")
		}
		c.send("ACK", []string{"id:" + ackID, "receipt:again"}, nil)
		c.expectReceipt("again")
		c.mustSync()
		c.disconnect()
		drainAfterReconnect(t, addr, q, false)
	})
}

// Every frame that asks for a receipt gets RECEIPT with its id.
func stompReceipts(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := connectRaw(t, addr, "1.2")
	steps := []struct {
		cmd     string
		headers []string
	}{
		{"SUBSCRIBE", []string{"id:s", "destination:" + q, "ack:client-individual"}},
		{"SEND", []string{"destination:" + q}},
		{"BEGIN", []string{"transaction:t1"}},
		{"COMMIT", []string{"transaction:t1"}},
		{"BEGIN", []string{"transaction:t2"}},
		{"ABORT", []string{"transaction:t2"}},
	}
	for i, st := range steps {
		r := st.cmd + "-" + string(rune('a'+i))
		c.send(st.cmd, append(st.headers, "receipt:"+r), []byte("x"))
		c.expectReceipt(r)
	}
	m := c.expectMessage("x")
	c.send("ACK", []string{"id:" + m.Must(t, "ack"), "receipt:ack"}, nil)
	c.expectReceipt("ack")
	c.sendMsg(q, "y")
	m = c.expectMessage("y")
	c.send("NACK", []string{"id:" + m.Must(t, "ack"), "receipt:nack"}, nil)
	c.expectReceipt("nack")
	c.send("UNSUBSCRIBE", []string{"id:s", "receipt:unsub"}, nil)
	c.expectReceipt("unsub")
	c.send("DISCONNECT", []string{"receipt:disc"}, nil)
	c.expectReceipt("disc")
	c.expectClosed(wait)
}
