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
	c, _ := connectRaw(t, addr, "1.2")
	c.subscribe("s", q)
	p, _ := connectRaw(t, addr, "1.2")
	sent := time.Now()
	p.sendMsg(q, "delayed", "AMQ_SCHEDULED_DELAY:1500")
	p.sendMsg(q, "marker")
	c.expectMessage("marker")
	f := c.expectMessage("delayed")
	if waited := time.Since(sent); waited < 1400*time.Millisecond {
		t.Fatalf("delayed message arrived after %v, before its 1500 ms delay", waited)
	}
	if v, ok := f.Get("scheduledJobId"); !ok || v == "" {
		t.Fatalf("delivered scheduled message has no scheduledJobId: %s", f)
	}
	if _, ok := f.Get("AMQ_SCHEDULED_DELAY"); ok {
		t.Fatalf("AMQ_SCHEDULED_DELAY survived into the delivered message: %s", f)
	}

	p.sendMsg(q, "repeated", "AMQ_SCHEDULED_PERIOD:200", "AMQ_SCHEDULED_REPEAT:2")
	for i := 0; i < 3; i++ {
		c.expectMessage("repeated")
	}
	p.sendMsg(q, "after-repeats")
	c.expectMessage("after-repeats")
	c.mustSync()
}
