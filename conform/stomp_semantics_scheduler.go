package conform

import (
	"time"
)

// Scheduled delivery (broker-behaviour.md §9, schedulerSupport="true" in
// activemq.xml): a message with AMQ_SCHEDULED_DELAY is held, so a marker
// sent after it arrives first; it comes when due, with scheduledJobId and
// without the AMQ_SCHEDULED_* properties. PERIOD with REPEAT delivers the
// message REPEAT+1 times.
func stompScheduledDelivery(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, "")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("s", q)
	p, _ := ConnectRaw(t, addr, "1.2")
	sent := time.Now()
	p.SendMsg(q, "delayed", "AMQ_SCHEDULED_DELAY:1500")
	p.SendMsg(q, "marker")
	c.ExpectMessage("marker")
	f := c.ExpectMessage("delayed")
	if waited := time.Since(sent); waited < 1400*time.Millisecond {
		t.Fatalf("delayed message arrived after %v, before its 1500 ms delay", waited)
	}
	if v, ok := f.Get("scheduledJobId"); !ok || v == "" {
		t.Fatalf("delivered scheduled message has no scheduledJobId: %s", f)
	}
	if _, ok := f.Get("AMQ_SCHEDULED_DELAY"); ok {
		t.Fatalf("AMQ_SCHEDULED_DELAY survived into the delivered message: %s", f)
	}

	p.SendMsg(q, "repeated", "AMQ_SCHEDULED_PERIOD:200", "AMQ_SCHEDULED_REPEAT:2")
	for i := 0; i < 3; i++ {
		c.ExpectMessage("repeated")
	}
	p.SendMsg(q, "after-repeats")
	c.ExpectMessage("after-repeats")
	c.MustSync()
}
