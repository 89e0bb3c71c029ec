package conform

import (
	"strings"
)

// expectAdvisoryHeaders checks the headers every advisory carries:
// ActiveMQ's AdvisoryBroker.fireAdvisory sets neither priority nor
// timestamp, and its STOMP converter names the JSON rendering.
func expectAdvisoryHeaders(t *T, f *RawFrame) {
	t.Helper()
	ExpectHeader(t, f, "type", "Advisory")
	ExpectHeader(t, f, "transformation", "jms-advisory-json")
	ExpectHeader(t, f, "priority", "0")
	ExpectHeader(t, f, "timestamp", "0")
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
	adv, _ := ConnectRaw(t, addr, "1.2")
	adv.Subscribe("adv", AdvisoryTopic("Consumer.Queue", q))
	adv.MustSync() // no consumer yet: nothing to replay

	c1, _ := ConnectRaw(t, addr, "1.2")
	c1.Subscribe("c1", "/queue/"+q)
	f := ExpectAdvisory(t, adv, `"ConsumerInfo"`)
	expectAdvisoryHeaders(t, f)
	ExpectHeader(t, f, "consumerCount", "1")
	ExpectHeader(t, f, "destination", AdvisoryTopic("Consumer.Queue", q))

	c2, _ := ConnectRaw(t, addr, "1.2")
	c2.Subscribe("c2", "/queue/"+q)
	ExpectHeader(t, ExpectAdvisory(t, adv, `"ConsumerInfo"`), "consumerCount", "2")

	c2.Send("UNSUBSCRIBE", []string{"id:c2", "receipt:u"}, nil)
	c2.ExpectReceipt("u")
	f = ExpectAdvisory(t, adv, `"RemoveInfo"`)
	expectAdvisoryHeaders(t, f)
	ExpectHeader(t, f, "consumerCount", "1")

	// Replay: a new subscriber to the advisory topic gets c1's ConsumerInfo
	// at once.
	late, _ := ConnectRaw(t, addr, "1.2")
	late.Subscribe("late", AdvisoryTopic("Consumer.Queue", q))
	f = ExpectAdvisory(t, late, `"ConsumerInfo"`)
	ExpectHeader(t, f, "consumerCount", "1")
	late.MustSync()
	adv.MustSync()
}

// ActiveMQ.Advisory.Connection: a ConnectionInfo for a new connection (with
// its client-id) and a RemoveInfo naming the same connection id when it
// closes. The topic also replays every open connection, so the test looks
// for its own.
func stompConnectionAdvisory(t *T) {
	addr := t.Addr(STOMP)
	clientID := t.Uniq()
	adv, _ := ConnectRaw(t, addr, "1.2")
	adv.Subscribe("adv", AdvisoryTopic("Connection", ""))

	c, _ := ConnectRaw(t, addr, "1.2", "client-id:"+clientID)
	f := ExpectAdvisory(t, adv, `"ConnectionInfo"`, clientID)
	expectAdvisoryHeaders(t, f)
	m := connectionIDRe.FindSubmatch(f.Body)
	if m == nil {
		t.Fatalf("no connection id in %s", f.Body)
	}
	connID := string(m[1])
	c.Disconnect()
	ExpectAdvisory(t, adv, `"RemoveInfo"`, `"`+connID+`"`)
}

// ActiveMQ.Advisory.Queue: a DestinationInfo when a queue is created (here
// by the first SEND to it).
func stompDestinationAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := ConnectRaw(t, addr, "1.2")
	adv.Subscribe("adv", AdvisoryTopic("Queue", ""))
	p, _ := ConnectRaw(t, addr, "1.2")
	p.SendMsg("/queue/"+q, "creates it")
	f := ExpectAdvisory(t, adv, `"DestinationInfo"`, q)
	expectAdvisoryHeaders(t, f)
}

// ActiveMQ.Advisory.Expired.Queue.<name>: a message that has expired when
// it arrives is not delivered, and the advisory carries a copy of it with
// orignalMessageId (sic).
func stompExpiredAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := ConnectRaw(t, addr, "1.2")
	adv.Subscribe("adv", AdvisoryTopic("Expired.Queue", q))
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", "/queue/"+q)
	c.SendMsg("/queue/"+q, "too late", "expires:1000")
	f := adv.Expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	f.Must(t, "orignalMessageId")
	if !strings.Contains(string(f.Body), `"messageId"`) {
		t.Fatalf("advisory body has no messageId: %s", f.Body)
	}
	c.SendMsg("/queue/"+q, "in time")
	c.ExpectMessage("in time")
	adv.MustSync()
}

// ActiveMQ.Advisory.MessageDLQd.Queue.<name>: a NACKed (poison) persistent
// message is moved to the dead-letter queue, and the advisory says so.
func stompMessageDLQdAdvisory(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, "")
	adv, _ := ConnectRaw(t, addr, "1.2")
	adv.Subscribe("adv", AdvisoryTopic("MessageDLQd.Queue", q))
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", "/queue/"+q, "ack:client-individual")
	c.SendMsg("/queue/"+q, "poison", "persistent:true")
	m := c.ExpectMessage("poison")
	c.Send("NACK", []string{"id:" + m.Must(t, "ack"), "receipt:n"}, nil)
	c.ExpectReceipt("n")
	f := adv.Expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	ExpectHeader(t, f, "destination", AdvisoryTopic("MessageDLQd.Queue", q))
	expectNoHeader(t, f, "orignalMessageId")
	adv.MustSync()
}

// sendAdvisoryIfNoConsumers (policy for topics "*.lonely.>"): a
// non-persistent message sent to a topic nobody subscribes to is copied to
// ActiveMQ.Advisory.NoConsumer.Topic.<name> (the message itself, not a
// command); a persistent one is not (BaseDestination.onMessageWithNoConsumers).
func stompNoConsumerAdvisory(t *T) {
	addr := t.Addr(STOMP)
	tp := name(t, ".lonely")
	adv, _ := ConnectRaw(t, addr, "1.2")
	adv.Subscribe("adv", AdvisoryTopic("NoConsumer.Topic", tp))
	p, _ := ConnectRaw(t, addr, "1.2")
	p.SendMsg("/topic/"+tp, "durable", "persistent:true")
	p.SendMsg("/topic/"+tp, "nobody listens")
	// "durable" (persistent) got none: it would have come first.
	f := adv.ExpectMessage("nobody listens")
	expectNoHeader(t, f, "type")
	expectNoHeader(t, f, "originBrokerName")
	adv.MustSync()
}

// advisoryForDelivery and advisoryForConsumed (policy for queues
// "*.watched.>"): MessageDelivered when a message is dispatched,
// MessageConsumed when it is acknowledged.
func stompDeliveredConsumedAdvisories(t *T) {
	addr := t.Addr(STOMP)
	q := name(t, ".watched")
	delivered, _ := ConnectRaw(t, addr, "1.2")
	delivered.Subscribe("d", AdvisoryTopic("MessageDelivered.Queue", q))
	consumed, _ := ConnectRaw(t, addr, "1.2")
	consumed.Subscribe("c", AdvisoryTopic("MessageConsumed.Queue", q))
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", "/queue/"+q, "ack:client-individual")
	c.SendMsg("/queue/"+q, "watch me")
	m := c.ExpectMessage("watch me")
	f := delivered.Expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	ExpectHeader(t, f, "orignalDestination", "queue://"+q)
	id := f.Must(t, "orignalMessageId")
	consumed.MustSync()
	c.Send("ACK", []string{"id:" + m.Must(t, "ack"), "receipt:a"}, nil)
	c.ExpectReceipt("a")
	f = consumed.Expect("MESSAGE")
	expectAdvisoryHeaders(t, f)
	ExpectHeader(t, f, "orignalDestination", "queue://"+q)
	ExpectHeader(t, f, "orignalMessageId", id)
	delivered.MustSync()
}
