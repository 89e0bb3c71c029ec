package conform

import (
	"io"
	"net"
	"strings"
	"time"
)

// activemq.prefetchSize:1 with client-individual: the second message waits
// for the first ACK.
func stompPrefetchSize(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 2)
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", q, "ack:client-individual", "activemq.prefetchSize:1")
	m1 := c.ExpectMessage("m1")
	// With a larger window m2 would be on its way already: the RECEIPT
	// round trip shows it is not.
	c.MustSync()
	c.Send("ACK", []string{"id:" + m1.Must(t, "ack")}, nil)
	c.ExpectMessage("m2")
}

// activemq.subscriptionName with a client-id makes a durable topic
// subscription: messages sent while it is offline wait for it; UNSUBSCRIBE
// with activemq.subscriptionName destroys it.
func stompDurableSubscription(t *T) {
	addr := t.Addr(STOMP)
	tp := topic(t, "")
	clientID := t.Uniq()
	// Whatever happens, the last subscription made here is destroyed.
	t.Cleanup(func() { stompDestroyDurable(t, addr, clientID, "sub1") })
	durable := func() *RawConn {
		c, _ := ConnectRaw(t, addr, "1.2", "client-id:"+clientID)
		c.Subscribe("d", tp, "activemq.subscriptionName:sub1")
		return c
	}
	c := durable()
	c.Disconnect()

	p, _ := ConnectRaw(t, addr, "1.2")
	p.SendMsg(tp, "while offline", "persistent:true")

	c = durable()
	c.ExpectMessage("while offline")
	c.MustSync()
	// UNSUBSCRIBE with activemq.subscriptionName only destroys the
	// subscription (ActiveMQ sends a RemoveSubscriptionInfo): while its
	// consumer is open that fails as "in use", and the connection goes on.
	c.Send("UNSUBSCRIBE", []string{"id:d", "activemq.subscriptionName:sub1", "receipt:busy"}, nil)
	f := c.ExpectError("", "busy")
	if msg := f.Must(t, "message"); !strings.Contains(msg, "in use") {
		t.Fatalf("ERROR message %q does not say the subscription is in use", msg)
	}
	c.Send("UNSUBSCRIBE", []string{"id:d", "receipt:close"}, nil)
	c.ExpectReceipt("close")
	c.Send("UNSUBSCRIBE", []string{"id:d", "activemq.subscriptionName:sub1", "receipt:u"}, nil)
	c.ExpectReceipt("u")
	c.Disconnect()

	p.SendMsg(tp, "after destroy", "persistent:true")
	// A new subscription under the same name starts empty: its first
	// message is one sent after it was made.
	c = durable()
	p.SendMsg(tp, "fresh", "persistent:true")
	c.ExpectMessage("fresh")
	c.MustSync()
}

// activemq.exclusive: an exclusive consumer gets every message of the queue
// while it lives; the others get them after it leaves.
func stompExclusiveConsumer(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	ex, _ := ConnectRaw(t, addr, "1.2")
	other, _ := ConnectRaw(t, addr, "1.2")
	other.Subscribe("o", q)
	ex.Subscribe("x", q, "activemq.exclusive:true")
	p, _ := ConnectRaw(t, addr, "1.2")
	for _, b := range []string{"1", "2", "3", "4"} {
		p.SendMsg(q, b)
	}
	for _, b := range []string{"1", "2", "3", "4"} {
		ex.ExpectMessage(b)
	}
	ex.Send("UNSUBSCRIBE", []string{"id:x", "receipt:u"}, nil)
	ex.ExpectReceipt("u")
	p.SendMsg(q, "after")
	other.ExpectMessage("after")
}

// activemq.priority: the higher-priority consumer gets the messages while it
// has room (ActiveMQ dispatches by consumer priority).
func stompConsumerPriority(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	low, _ := ConnectRaw(t, addr, "1.2")
	high, _ := ConnectRaw(t, addr, "1.2")
	low.Subscribe("l", q, "activemq.priority:1")
	high.Subscribe("h", q, "activemq.priority:10")
	p, _ := ConnectRaw(t, addr, "1.2")
	for _, b := range []string{"1", "2", "3"} {
		p.SendMsg(q, b)
	}
	for _, b := range []string{"1", "2", "3"} {
		high.ExpectMessage(b)
	}
	high.Send("UNSUBSCRIBE", []string{"id:h", "receipt:u"}, nil)
	high.ExpectReceipt("u")
	p.SendMsg(q, "after")
	low.ExpectMessage("after")
}

// The selector header: STOMP headers are string properties, and ActiveMQ's
// convert_string_expressions: prefix makes them compare numerically.
func stompSelector(t *T) {
	addr := t.Addr(STOMP)
	cases := []struct {
		name, selector string
		skip, match    []string // header for a message that must not / must arrive
	}{
		{"numeric comparison of a string header", "count > 5", []string{"count:3"}, []string{"count:10"}},
		{"string equality", "color = 'red'", []string{"color:blue"}, []string{"color:red"}},
		{"JMS header", "JMSPriority > 6", []string{"priority:4"}, []string{"priority:8"}},
		{"IN and AND", "kind IN ('a','b') AND n <> 2", []string{"kind:a", "n:2"}, []string{"kind:b", "n:3"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *T) {
			q := queue(t, "")
			c, _ := ConnectRaw(t, addr, "1.2")
			c.Subscribe("s", q, "selector:"+tc.selector)
			c.SendMsg(q, "no", tc.skip...)
			c.SendMsg(q, "yes", tc.match...)
			c.ExpectMessage("yes")
			c.MustSync()
		})
	}
}

// browser:true browses a queue: its messages, then a MESSAGE with
// browser:end; the queue keeps them.
func stompQueueBrowser(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	sendN(t, addr, q, 3)
	b, _ := ConnectRaw(t, addr, "1.2")
	b.Subscribe("b", q, "browser:true")
	for _, m := range []string{"m1", "m2", "m3"} {
		b.ExpectMessage(m)
	}
	end := b.Expect("MESSAGE")
	if v := end.Must(t, "browser"); v != "end" {
		t.Fatalf("browser: got %q, want end", v)
	}
	if len(end.Body) != 0 {
		t.Fatalf("browser:end body %q, want empty", end.Body)
	}
	b.MustSync()
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", q)
	for _, m := range []string{"m1", "m2", "m3"} {
		expectRedelivered(t, c.ExpectMessage(m), false)
	}
}

// stompDestroyDurable removes a durable subscription a case made, at its
// clean-up: as clientID, UNSUBSCRIBE with activemq.subscriptionName. The
// case's own connections are closed by then, but a broker may not have
// processed a close yet ("client id already connected"), so it retries for
// a few seconds. Best effort: an outcome other than RECEIPT is recorded,
// not failed.
func stompDestroyDurable(t *T, addr, clientID, name string) {
	deadline := time.Now().Add(wait)
	for {
		reply, err := stompOneShot(addr, []byte("CONNECT\naccept-version:1.2\nhost:"+t.STOMPHost()+"\nclient-id:"+clientID+login(t)+"\n\n\x00"+
			"UNSUBSCRIBE\nid:cleanup\nactivemq.subscriptionName:"+name+"\nreceipt:gone\n\n\x00"+
			"DISCONNECT\n\n\x00"))
		if strings.Contains(reply, "receipt-id:gone") {
			t.Observe("cleanup", "durable subscription %s of %s destroyed", name, clientID)
			return
		}
		if time.Now().After(deadline) {
			t.Observe("cleanup", "durable subscription %s of %s not destroyed: %v %q", name, clientID, err, reply)
			return
		}
		time.Sleep(100 * time.Millisecond) // retry interval
	}
}

// login is the login and passcode headers for the target's credentials,
// each after a newline, or "".
func login(t *T) string {
	if t.User() == "" {
		return ""
	}
	return "\nlogin:" + t.User() + "\npasscode:" + t.Password()
}

// stompOneShot writes frames and returns what the broker sends until it
// closes the connection (or wait passes).
func stompOneShot(addr string, frames []byte) (string, error) {
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write(frames); err != nil {
		return "", err
	}
	b, err := io.ReadAll(c)
	return string(b), err
}
