package conform

import (
	"strings"
)

// expectAdvisoryHeaders checks the headers every advisory carries:
// ActiveMQ's AdvisoryBroker.fireAdvisory sets neither priority nor
// timestamp, and its STOMP converter names the JSON rendering.
func expectAdvisoryHeaders(t *T, f *rawFrame) {
	t.Helper()
	expectHeader(t, f, "type", "Advisory")
	expectHeader(t, f, "transformation", "jms-advisory-json")
	expectHeader(t, f, "priority", "0")
	expectHeader(t, f, "timestamp", "0")
	expectNoHeader(t, f, "persistent")
	for _, h := range []string{"originBrokerName", "originBrokerId", "originBrokerURL"} {
		f.Must(t, h)
	}
}

// ActiveMQ.Advisory.Consumer.Queue.<name>: a ConsumerInfo when a consumer
// comes, a RemoveInfo when it goes, each with consumerCount; a subscriber
// that arrives later is first sent the consumers that exist (replay).
func stompConsumerAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := connectRaw(t, addr, "1.2")
	adv.subscribe("adv", advisoryTopic("Consumer.Queue", q))
	adv.mustSync() // no consumer yet: nothing to replay

	c1, _ := connectRaw(t, addr, "1.2")
	c1.subscribe("c1", "/queue/"+q)
	f := expectAdvisory(t, adv, `"ConsumerInfo"`)
	expectAdvisoryHeaders(t, f)
	expectHeader(t, f, "consumerCount", "1")
	expectHeader(t, f, "destination", advisoryTopic("Consumer.Queue", q))

	c2, _ := connectRaw(t, addr, "1.2")
	c2.subscribe("c2", "/queue/"+q)
	expectHeader(t, expectAdvisory(t, adv, `"ConsumerInfo"`), "consumerCount", "2")

	c2.send("UNSUBSCRIBE", []string{"id:c2", "receipt:u"}, nil)
	c2.expectReceipt("u")
	f = expectAdvisory(t, adv, `"RemoveInfo"`)
	expectAdvisoryHeaders(t, f)
	expectHeader(t, f, "consumerCount", "1")

	// Replay: a new subscriber to the advisory topic gets c1's ConsumerInfo
	// at once.
	late, _ := connectRaw(t, addr, "1.2")
	late.subscribe("late", advisoryTopic("Consumer.Queue", q))
	f = expectAdvisory(t, late, `"ConsumerInfo"`)
	expectHeader(t, f, "consumerCount", "1")
	late.mustSync()
	adv.mustSync()
}

// ActiveMQ.Advisory.Connection: a ConnectionInfo for a new connection (with
// its client-id) and a RemoveInfo naming the same connection id when it
// closes. The topic also replays every open connection, so the test looks
// for its own.
func stompConnectionAdvisory(t *T) {
	addr := t.Addr(STOMP)
	clientID := t.Uniq()
	adv, _ := connectRaw(t, addr, "1.2")
	adv.subscribe("adv", advisoryTopic("Connection", ""))

	c, _ := connectRaw(t, addr, "1.2", "client-id:"+clientID)
	f := expectAdvisory(t, adv, `"ConnectionInfo"`, clientID)
	expectAdvisoryHeaders(t, f)
	m := connectionIDRe.FindSubmatch(f.Body)
	if m == nil {
		t.Fatalf("no connection id in %s", f.Body)
	}
	connID := string(m[1])
	c.disconnect()
	expectAdvisory(t, adv, `"RemoveInfo"`, `"`+connID+`"`)
}

// ActiveMQ.Advisory.Queue: a DestinationInfo when a queue is created (here
// by the first SEND to it).
func stompDestinationAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := connectRaw(t, addr, "1.2")
	adv.subscribe("adv", advisoryTopic("Queue", ""))
	p, _ := connectRaw(t, addr, "1.2")
	p.sendMsg("/queue/"+q, "creates it")
	f := expectAdvisory(t, adv, `"DestinationInfo"`, q)
	expectAdvisoryHeaders(t, f)
}

// ActiveMQ.Advisory.Expired.Queue.<name>: a message that has expired when
// it arrives is not delivered, and the advisory carries a copy of it with
// orignalMessageId (sic).
func stompExpiredAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := connectRaw(t, addr, "1.2")
	adv.subscribe("adv", advisoryTopic("Expired.Queue", q))
	c, _ := connectRaw(t, addr, "1.2")
	c.subscribe("s", "/queue/"+q)
	c.sendMsg("/queue/"+q, "too late", "expires:1000")
	f := adv.expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	f.Must(t, "orignalMessageId")
	if !strings.Contains(string(f.Body), `"messageId"`) {
		t.Fatalf("advisory body has no messageId: %s", f.Body)
	}
	c.sendMsg("/queue/"+q, "in time")
	c.expectMessage("in time")
	adv.mustSync()
}

// ActiveMQ.Advisory.MessageDLQd.Queue.<name>: a NACKed (poison) persistent
// message is moved to the dead-letter queue, and the advisory says so.
func stompMessageDLQdAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := connectRaw(t, addr, "1.2")
	adv.subscribe("adv", advisoryTopic("MessageDLQd.Queue", q))
	c, _ := connectRaw(t, addr, "1.2")
	c.subscribe("s", "/queue/"+q, "ack:client-individual")
	c.sendMsg("/queue/"+q, "poison", "persistent:true")
	m := c.expectMessage("poison")
	c.send("NACK", []string{"id:" + m.Must(t, "ack"), "receipt:n"}, nil)
	c.expectReceipt("n")
	f := adv.expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	expectHeader(t, f, "destination", advisoryTopic("MessageDLQd.Queue", q))
	expectNoHeader(t, f, "orignalMessageId")
	adv.mustSync()
}

// sendAdvisoryIfNoConsumers (policy for topics "*.lonely.>"): a
// non-persistent message sent to a topic nobody subscribes to is copied to
// ActiveMQ.Advisory.NoConsumer.Topic.<name> (the message itself, not a
// command); a persistent one is not (BaseDestination.onMessageWithNoConsumers).
func stompNoConsumerAdvisory(t *T) {
	addr := t.Addr(STOMP)
	tp := name(t, ".lonely")
	adv, _ := connectRaw(t, addr, "1.2")
	adv.subscribe("adv", advisoryTopic("NoConsumer.Topic", tp))
	p, _ := connectRaw(t, addr, "1.2")
	p.sendMsg("/topic/"+tp, "durable", "persistent:true")
	p.sendMsg("/topic/"+tp, "nobody listens")
	// "durable" (persistent) got none: it would have come first.
	f := adv.expectMessage("nobody listens")
	expectNoHeader(t, f, "type")
	expectNoHeader(t, f, "originBrokerName")
	adv.mustSync()
}

// advisoryForDelivery and advisoryForConsumed (policy for queues
// "*.watched.>"): MessageDelivered when a message is dispatched,
// MessageConsumed when it is acknowledged.
func stompDeliveredConsumedAdvisories(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, ".watched")
	delivered, _ := connectRaw(t, addr, "1.2")
	delivered.subscribe("d", advisoryTopic("MessageDelivered.Queue", q))
	consumed, _ := connectRaw(t, addr, "1.2")
	consumed.subscribe("c", advisoryTopic("MessageConsumed.Queue", q))
	c, _ := connectRaw(t, addr, "1.2")
	c.subscribe("s", "/queue/"+q, "ack:client-individual")
	c.sendMsg("/queue/"+q, "watch me")
	m := c.expectMessage("watch me")
	f := delivered.expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	expectHeader(t, f, "orignalDestination", "queue://"+q)
	id := f.Must(t, "orignalMessageId")
	consumed.mustSync()
	c.send("ACK", []string{"id:" + m.Must(t, "ack"), "receipt:a"}, nil)
	c.expectReceipt("a")
	f = consumed.expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	expectHeader(t, f, "orignalDestination", "queue://"+q)
	expectHeader(t, f, "orignalMessageId", id)
	delivered.mustSync()
}
