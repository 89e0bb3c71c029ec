package conform

import (
	"strconv"
)

// constantPendingMessageLimitStrategy limit="10" (policy for topics
// "*.slow.>"): a non-durable subscriber that does not acknowledge keeps its
// prefetch and at most 10 pending messages, the newest, the older ones
// being discarded (TopicSubscription.add); a fast subscriber of the same
// topic gets everything.
func stompPendingMessageLimit(t *T) {
	addr := t.Addr(STOMP)
	tp := topic(t, ".slow")
	const n, limit, prefetch = 100, 10, 1
	slow, _ := ConnectRaw(t, addr, "1.2")
	slow.Subscribe("slow", tp, "ack:client-individual", "activemq.prefetchSize:"+strconv.Itoa(prefetch))
	fast, _ := ConnectRaw(t, addr, "1.2")
	fast.Subscribe("fast", tp)
	p, _ := ConnectRaw(t, addr, "1.2")
	for i := 1; i <= n; i++ {
		p.SendMsg(tp, "m"+strconv.Itoa(i))
	}
	for i := 1; i <= n; i++ {
		fast.ExpectMessage("m" + strconv.Itoa(i))
	}

	// The slow subscriber got m1 at once (its prefetch); acknowledging one
	// message at a time, it then gets what was kept for it: at most
	// limit + prefetch messages, the newest ones, ending with mn.
	m := slow.Expect("MESSAGE")
	if k := bodyNumber(t, m); k != 1 {
		t.Fatalf("slow subscriber's first message is m%d, want m1", k)
	}
	var rest []int
	for bodyNumber(t, m) != n {
		slow.Send("ACK", []string{"id:" + m.Must(t, "ack")}, nil)
		m = slow.Expect("MESSAGE")
		rest = append(rest, bodyNumber(t, m))
		if len(rest) > limit+prefetch {
			t.Fatalf("slow subscriber got %v after m1: more than limit %d + prefetch %d", rest, limit, prefetch)
		}
	}
	t.Logf("slow subscriber got m1 then %v", rest)
	for i, k := range rest {
		if want := n - len(rest) + 1 + i; k != want {
			t.Fatalf("slow subscriber got %v after m1; want the newest ones, m%d..m%d", rest, n-len(rest)+1, n)
		}
	}
	slow.Send("ACK", []string{"id:" + m.Must(t, "ack")}, nil)
	slow.MustSync()
}

// individualDeadLetterStrategy queuePrefix="DLQ." queueSuffix=".dead"
// (policy for queues "*.idlq.>"): a NACKed persistent message goes to
// DLQ.<queue>.dead with original-destination; a non-persistent one is
// dropped (processNonPersistent defaults to false).
func stompIndividualDeadLetterQueue(t *T) {
	addr := t.Addr(STOMP)
	qn := name(t, ".idlq")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", "/queue/"+qn, "ack:client-individual")
	c.SendMsg("/queue/"+qn, "non-persistent")
	c.SendMsg("/queue/"+qn, "persistent", "persistent:true")
	// ActiveMQ's store cursor keeps persistent and non-persistent
	// messages apart, so they may arrive in either order; the NACKs go
	// non-persistent first.
	ack := map[string]string{}
	for range 2 {
		m := c.Expect("MESSAGE")
		ack[string(m.Body)] = m.Must(t, "ack")
	}
	for _, b := range []string{"non-persistent", "persistent"} {
		if ack[b] == "" {
			t.Fatalf("no %q message; got %v", b, ack)
		}
		c.Send("NACK", []string{"id:" + ack[b], "receipt:n-" + b}, nil)
		c.ExpectReceipt("n-" + b)
	}
	dlq, _ := ConnectRaw(t, addr, "1.2")
	dlq.Subscribe("dlq", "/queue/DLQ."+qn+".dead")
	// Had the non-persistent one been dead-lettered, it would come first.
	f := dlq.ExpectMessage("persistent")
	ExpectHeader(t, f, "original-destination", "/queue/"+qn)
	ExpectHeader(t, f, "persistent", "true")
	dlq.MustSync()
	c.MustSync()
}
