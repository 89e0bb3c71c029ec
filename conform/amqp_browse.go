package conform

import "github.com/Azure/go-amqp"

// amqpBrowseAndNoLocal: a receiver with distribution-mode copy on a queue
// browses (a consumer afterwards still gets every message), and the
// no-local filter drops a topic subscriber's own connection's messages.
// Moved from conformance/amqpraw_test.go TestConformanceAMQPBrowseAndNoLocal.
func amqpBrowseAndNoLocal(t *T) {
	addr := t.Addr(AMQP)
	q := "queue://" + t.Uniq()
	s := amqpSession(t, amqpDial(t, addr, nil))
	snd := amqpSender(t, s, q, nil)
	for _, body := range []string{"a", "b"} {
		amqpSend(t, snd, amqp.NewMessage([]byte(body)))
	}
	br := amqpReceiver(t, s, q, &amqp.ReceiverOptions{SourceDistributionMode: amqp.SourceDistributionModeCopy, Credit: 10})
	for _, want := range []string{"a", "b"} {
		if m := amqpRecv(t, br); string(m.GetData()) != want {
			t.Fatalf("browse got %q, want %q", m.GetData(), want)
		}
	}
	// Nothing was consumed: a consumer gets both, in order.
	rc := amqpReceiver(t, s, q, nil)
	for _, want := range []string{"a", "b"} {
		m := amqpRecv(t, rc)
		if string(m.GetData()) != want {
			t.Fatalf("after browsing, the consumer got %q, want %q", m.GetData(), want)
		}
		if err := rc.AcceptMessage(amqpCtx(t), m); err != nil {
			t.Fatalf("accept: %v", err)
		}
	}
	// The no-local filter drops the connection's own topic messages.
	topic := "topic://" + t.Uniq()
	nl := amqpReceiver(t, s, topic, &amqp.ReceiverOptions{Filters: []amqp.LinkFilter{amqp.NewLinkFilter("apache.org:no-local-filter:list", 0x0000468C00000003, []any{})}})
	amqpSend(t, amqpSender(t, s, topic, nil), amqp.NewMessage([]byte("mine")))
	amqpSend(t, amqpSender(t, amqpSession(t, amqpDial(t, addr, nil)), topic, nil), amqp.NewMessage([]byte("theirs")))
	if m := amqpRecv(t, nl); string(m.GetData()) != "theirs" {
		t.Fatalf("no-local receiver got %q, want only the other connection's message", m.GetData())
	}
}

func init() {
	register(Case{Name: "amqp/link/browse-and-no-local", Needs: []string{AMQP}, Run: amqpBrowseAndNoLocal,
		Pins:   "distribution-mode copy on a queue browses without consuming; the apache.org:no-local-filter drops the connection's own topic messages",
		Source: "AMQP 1.0 §3.5.1 distribution-mode; AmqpSession.createReceiver (browser, noLocal); AmqpSupport.NO_LOCAL_CODE"})
}
