package conform

import (
	"strconv"
)

// prioritizedMessages="true" (policy for "*.prio.>"): a queue dispatches by
// JMSPriority, highest first; without it, in arrival order.
func stompPrioritizedMessages(t *T) {
	addr := t.Addr(STOMP)
	cases := []struct {
		name, suffix string
		want         []string
	}{
		{"prioritized queue dispatches by priority", ".prio", []string{"p9", "p4", "p1"}},
		{"plain queue keeps arrival order", "", []string{"p1", "p9", "p4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			q := queue(t, tc.suffix)
			p, _ := ConnectRaw(t, addr, "1.2")
			for _, prio := range []string{"1", "9", "4"} {
				p.SendMsg(q, "p"+prio, "priority:"+prio)
			}
			c, _ := ConnectRaw(t, addr, "1.2")
			c.Subscribe("s", q)
			for _, w := range tc.want {
				ExpectHeader(t, c.ExpectMessage(w), "priority", w[1:])
			}
			c.MustSync()
		})
	}
}

// Message groups (broker-behaviour.md §8): every message of a JMSXGroupID
// goes to the consumer that got the group's first message, also when a new
// consumer arrives; when the owner leaves, the group moves to another
// consumer and sticks there.
//
// Over STOMP the group headers are not rendered: ActiveMQ's
// FrameTranslator copies only the message's properties, and JMSXGroupID,
// JMSXGroupSeq and JMSXGroupFirstForConsumer are message fields there (the
// "first for consumer" mark is visible to JMS clients only).
func stompMessageGroups(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	in := newInbox(t)
	conns := map[string]*RawConn{}
	join := func(n string) {
		c, _ := ConnectRaw(t, addr, "1.2")
		c.Subscribe(n, q, "ack:client-individual")
		conns[n] = c
		in.watch(c, n)
	}
	join("c1")
	join("c2")
	p, _ := ConnectRaw(t, addr, "1.2")
	owner := map[string]string{} // group → consumer
	round := func(bodies ...string) {
		t.Helper()
		for _, b := range bodies {
			p.SendMsg(q, b, "JMSXGroupID:"+b[:1])
		}
		for _, m := range in.messages(len(bodies)) {
			g := string(m.f.Body[:1])
			if o, ok := owner[g]; ok && o != m.from {
				t.Fatalf("%s went to %s, but group %s belongs to %s", m.f.Body, m.from, g, o)
			}
			owner[g] = m.from
			for _, h := range []string{"JMSXGroupID", "JMSXGroupSeq", "JMSXGroupFirstForConsumer"} {
				expectNoHeader(t, m.f, h)
			}
			conns[m.from].Send("ACK", []string{"id:" + m.f.Must(t, "ack")}, nil)
		}
	}
	round("A1", "B1", "A2", "B2", "A3", "B3")
	t.Logf("group owners: %v", owner)

	// The owner of A leaves and a new consumer comes: groups whose owner
	// stayed keep it, A moves and sticks to its new owner.
	gone := owner["A"]
	conns[gone].Send("UNSUBSCRIBE", []string{"id:" + gone, "receipt:u"}, nil)
	if f := in.Next(); f.from != gone || f.f.Command != "RECEIPT" {
		t.Fatalf("got %s from %s, want the UNSUBSCRIBE receipt from %s", f.f, f.from, gone)
	}
	for g, o := range owner {
		if o == gone {
			delete(owner, g)
		}
	}
	join("c3")
	round("A4", "B4", "A5", "B5", "A6", "B6")
	t.Logf("group owners: %v", owner)
	if owner["A"] == gone {
		t.Fatalf("group A still goes to %s after it left", gone)
	}
}

// Exclusive consumers (activemq.exclusive): the first one gets everything;
// when it goes, its unacknowledged messages and the rest go to the next
// exclusive consumer, which keeps the queue even when the first comes back.
func stompExclusiveConsumerFailover(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	first, _ := ConnectRaw(t, addr, "1.2")
	first.Subscribe("x1", q, "activemq.exclusive:true", "ack:client-individual")
	second, _ := ConnectRaw(t, addr, "1.2")
	second.Subscribe("x2", q, "activemq.exclusive:true", "ack:client-individual")
	p, _ := ConnectRaw(t, addr, "1.2")
	p.SendMsg(q, "m1")
	p.SendMsg(q, "m2")
	first.ExpectMessage("m1")
	first.ExpectMessage("m2")
	second.MustSync()

	first.Disconnect() // m1 and m2 were never acknowledged
	expectRedelivered(t, second.ExpectMessage("m1"), true)
	expectRedelivered(t, second.ExpectMessage("m2"), true)
	p.SendMsg(q, "m3")
	second.ExpectMessage("m3")

	back, _ := ConnectRaw(t, addr, "1.2")
	back.Subscribe("x3", q, "activemq.exclusive:true")
	p.SendMsg(q, "m4")
	second.ExpectMessage("m4")
	back.MustSync()
}

// Consumer priority (activemq.priority): the queue fills the
// higher-priority consumer's prefetch first and gives the overflow to the
// lower one; room made by an ACK goes to the higher one again.
func stompConsumerPriorityPrefetch(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	high, _ := ConnectRaw(t, addr, "1.2")
	high.Subscribe("h", q, "activemq.priority:10", "activemq.prefetchSize:2", "ack:client-individual")
	low, _ := ConnectRaw(t, addr, "1.2")
	low.Subscribe("l", q, "activemq.priority:1", "activemq.prefetchSize:10", "ack:client-individual")
	p, _ := ConnectRaw(t, addr, "1.2")
	for i := 1; i <= 4; i++ {
		p.SendMsg(q, "m"+strconv.Itoa(i))
	}
	m1 := high.ExpectMessage("m1")
	high.ExpectMessage("m2")
	low.ExpectMessage("m3")
	low.ExpectMessage("m4")
	high.MustSync()

	high.Send("ACK", []string{"id:" + m1.Must(t, "ack"), "receipt:a"}, nil)
	high.ExpectReceipt("a")
	p.SendMsg(q, "m5")
	high.ExpectMessage("m5")
	low.MustSync()
}
