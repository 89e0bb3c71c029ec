package conformance

import (
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"wharf/conform"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/engine/message"
)

// SEND without persistent:true is non-persistent and does not survive a
// broker restart; persistent:true does (reference mappings.md §1.4).
func TestConformanceSTOMPPersistenceAcrossRestart(t *testing.T) {
	b := startBroker(t, brokertest.WithKahaDB())
	q := queue(t, "")
	c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	c.SendMsg(q, "non-persistent")
	c.SendMsg(q, "persistent-false", "persistent:false")
	c.SendMsg(q, "persistent", "persistent:true")
	b.Restart()
	drainAfterReconnect(t, b.STOMPAddr(), q, false, "persistent")
}

// fakeClock is an engine clock the test moves forward.
type fakeClock struct{ offset atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *fakeClock) add(d time.Duration) { c.offset.Add(int64(d)) }

// A message that expires while it waits in the queue is swept to
// ActiveMQ.DLQ (persistent) and counted as expired (reference
// broker-behaviour.md §7): the sweep runs on the engine's clock.
func TestConformanceSTOMPExpirySweep(t *testing.T) {
	clock := &fakeClock{}
	b := startBroker(t, brokertest.WithEngine(func(o *engine.Options) {
		o.Now = clock.now
		o.TickInterval = time.Hour // only the test's Tick runs sweeps
	}))
	q := queue(t, "")
	c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	exp := strconv.FormatInt(clock.now().Add(time.Minute).UnixMilli(), 10)
	c.SendMsg(q, "soon stale", "expires:"+exp, "persistent:true")
	c.SendMsg(q, "soon stale np", "expires:"+exp)
	c.SendMsg(q, "keeps")
	dest := message.QueueDest(strings.TrimPrefix(q, "/queue/"))
	if st := b.Engine().Stats(dest); st.QueueSize != 3 || st.ExpiredCount != 0 {
		t.Fatalf("before expiry: %+v, want 3 queued and none expired", st)
	}
	// Past the expiry and past the sweep period (30 s by default).
	clock.add(2 * time.Minute)
	b.Engine().Tick()
	if st := b.Engine().Stats(dest); st.QueueSize != 1 || st.ExpiredCount != 2 {
		t.Fatalf("after the sweep: %+v, want 1 queued and 2 expired", st)
	}
	c.Subscribe("dlq", "/queue/ActiveMQ.DLQ")
	d := c.ExpectMessage("soon stale")
	if got := d.Must(t, "original-destination"); got != q {
		t.Fatalf("original-destination: got %q, want %q", got, q)
	}
	c.MustSync() // the non-persistent one was dropped
	c.Subscribe("s", q)
	c.ExpectMessage("keeps")
}
