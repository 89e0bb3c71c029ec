package conform

import ()

// BEGIN/COMMIT: transacted sends are invisible until COMMIT; a send outside
// the transaction is the barrier that shows they were held back.
func stompTransactionCommit(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	cons, _ := ConnectRaw(t, addr, "1.2")
	cons.Subscribe("s", q)
	p, _ := ConnectRaw(t, addr, "1.2")
	p.Send("BEGIN", []string{"transaction:t1"}, nil)
	p.Send("SEND", []string{"destination:" + q, "transaction:t1"}, []byte("tx1"))
	p.Send("SEND", []string{"destination:" + q, "transaction:t1"}, []byte("tx2"))
	p.SendMsg(q, "outside")
	cons.ExpectMessage("outside")
	cons.MustSync()
	p.Send("COMMIT", []string{"transaction:t1", "receipt:c"}, nil)
	p.ExpectReceipt("c")
	cons.ExpectMessage("tx1")
	cons.ExpectMessage("tx2")
}

// ABORT discards the transaction's sends.
func stompTransactionAbortSends(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	cons, _ := ConnectRaw(t, addr, "1.2")
	cons.Subscribe("s", q)
	p, _ := ConnectRaw(t, addr, "1.2")
	p.Send("BEGIN", []string{"transaction:t1"}, nil)
	p.Send("SEND", []string{"destination:" + q, "transaction:t1"}, []byte("discarded"))
	p.Send("ABORT", []string{"transaction:t1", "receipt:a"}, nil)
	p.ExpectReceipt("a")
	p.SendMsg(q, "marker")
	cons.ExpectMessage("marker")
	cons.MustSync()
}

// ACKs in a transaction take effect at COMMIT: nothing is redelivered after
// the consumer leaves.
func stompTransactionAckCommit(t *T) {
	addr := t.Addr(STOMP)
	for _, mode := range []string{"client", "client-individual"} {
		t.Run(mode, func(t *T) {
			q := queue(t, "")
			sendN(t, addr, q, 2)
			c, _ := ConnectRaw(t, addr, "1.2")
			c.Subscribe("s", q, "ack:"+mode)
			m1, m2 := c.ExpectMessage("m1"), c.ExpectMessage("m2")
			c.Send("BEGIN", []string{"transaction:t"}, nil)
			c.Send("ACK", []string{"id:" + m1.Must(t, "ack"), "transaction:t"}, nil)
			c.Send("ACK", []string{"id:" + m2.Must(t, "ack"), "transaction:t"}, nil)
			c.Send("COMMIT", []string{"transaction:t", "receipt:c"}, nil)
			c.ExpectReceipt("c")
			c.Disconnect()
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
			c, _ := ConnectRaw(t, addr, "1.2")
			c.Subscribe("s", q, "ack:"+mode)
			m1, m2 := c.ExpectMessage("m1"), c.ExpectMessage("m2")
			c.Send("BEGIN", []string{"transaction:t"}, nil)
			c.Send("ACK", []string{"id:" + m1.Must(t, "ack"), "transaction:t"}, nil)
			c.Send("ACK", []string{"id:" + m2.Must(t, "ack"), "transaction:t"}, nil)
			c.Send("ABORT", []string{"transaction:t", "receipt:a"}, nil)
			c.ExpectReceipt("a")
			if t.ActiveMQBehaviour() {
				c.MustSync()
			} else {
				expectRedelivered(t, c.ExpectMessage("m1"), true)
				expectRedelivered(t, c.ExpectMessage("m2"), true)
			}
			c.Disconnect()
			drainAfterReconnect(t, addr, q, true, "m1", "m2")
		})
	}
	t.Run("ack after abort", func(t *T) {
		q := queue(t, "")
		sendN(t, addr, q, 1)
		c, _ := ConnectRaw(t, addr, "1.2")
		c.Subscribe("s", q, "ack:client-individual")
		m1 := c.ExpectMessage("m1")
		c.Send("BEGIN", []string{"transaction:t"}, nil)
		c.Send("ACK", []string{"id:" + m1.Must(t, "ack"), "transaction:t"}, nil)
		c.Send("ABORT", []string{"transaction:t", "receipt:a"}, nil)
		c.ExpectReceipt("a")
		ackID := m1.Must(t, "ack")
		if t.ActiveMQBehaviour() {
			c.MustSync() // not sent again; the old ack id is valid again
		} else {
			again := c.ExpectMessage("m1") // sent again under a new ack id
			expectRedelivered(t, again, true)
			ackID = again.Must(t, "ack")
		}
		c.Send("ACK", []string{"id:" + ackID, "receipt:again"}, nil)
		c.ExpectReceipt("again")
		c.MustSync()
		c.Disconnect()
		drainAfterReconnect(t, addr, q, false)
	})
}

// Every frame that asks for a receipt gets RECEIPT with its id.
func stompReceipts(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "1.2")
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
		c.Send(st.cmd, append(st.headers, "receipt:"+r), []byte("x"))
		c.ExpectReceipt(r)
	}
	m := c.ExpectMessage("x")
	c.Send("ACK", []string{"id:" + m.Must(t, "ack"), "receipt:ack"}, nil)
	c.ExpectReceipt("ack")
	c.SendMsg(q, "y")
	m = c.ExpectMessage("y")
	c.Send("NACK", []string{"id:" + m.Must(t, "ack"), "receipt:nack"}, nil)
	c.ExpectReceipt("nack")
	c.Send("UNSUBSCRIBE", []string{"id:s", "receipt:unsub"}, nil)
	c.ExpectReceipt("unsub")
	c.Send("DISCONNECT", []string{"receipt:disc"}, nil)
	c.ExpectReceipt("disc")
	c.ExpectClosed(wait)
}
