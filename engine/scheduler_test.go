package engine_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// The test clock starts at 1_700_000_000_000 ms (2023-11-14 22:13:20 UTC), a
// multiple of 500: ActiveMQ's scheduler rounds a job's start up to the next
// 500 ms, so a job sent then starts at +500 ms and, with a delay, is due at
// +500 ms + delay.
const schedStart = 500 * time.Millisecond

func withScheduler(o *engine.Options) { o.SchedulerSupport = true }

func scheduledMsg(d message.Destination, body string, props ...message.Property) *message.Message {
	m := msg(d, body, true)
	for _, p := range props {
		m.Props.Set(p.Name, p.Value)
	}
	return m
}

func prop(name string, v message.Value) message.Property {
	return message.Property{Name: name, Value: v}
}

// advance moves the clock and runs the shards' timers (due jobs fire).
func (v *env) advance(d time.Duration) {
	v.clock.add(d)
	v.e.Tick()
}

func str(m *message.Message, name string) (string, bool) {
	val, ok := m.Props.Get(name)
	return val.Text(), ok
}

// checkFired checks what every delivered copy of a job carries.
func checkFired(t *testing.T, d engine.Delivery, wantBody string) string {
	t.Helper()
	if got := body(d); got != wantBody {
		t.Fatalf("delivered %q, want %q", got, wantBody)
	}
	for _, p := range []string{engine.ScheduledDelay, engine.ScheduledPeriod, engine.ScheduledRepeat, engine.ScheduledCron} {
		if v, ok := str(d.Msg, p); ok {
			t.Errorf("delivered copy has %s=%s, want it removed", p, v)
		}
	}
	id, ok := str(d.Msg, engine.ScheduledJobID)
	if !ok || id == "" {
		t.Fatalf("delivered copy has no %s", engine.ScheduledJobID)
	}
	return id
}

func TestEngineSchedulerDelay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		delay message.Value
	}{
		{"long property", message.LongValue(1000)},
		{"string property (STOMP)", message.StringValue("1000")},
		{"int property", message.IntValue(1000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := start(t, withScheduler)
			q := message.QueueDest("delayed")
			p := v.conn("")
			_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
			m := scheduledMsg(q, "later", prop(engine.ScheduledDelay, tc.delay), prop("colour", message.StringValue("red")))
			send(t, p, m)
			v.e.Tick()
			ch.none(t)
			if st := v.barrier(q); st.EnqueueCount != 0 {
				t.Fatalf("queue stats before the delay %+v, want nothing enqueued", st)
			}
			if n := v.e.ScheduledJobs(); n != 1 {
				t.Fatalf("scheduled jobs: got %d, want 1", n)
			}
			v.advance(schedStart + 999*time.Millisecond)
			ch.none(t)
			v.advance(1 * time.Millisecond)
			d := ch.recv(t)
			checkFired(t, d, "later")
			if d.Msg.ID != m.ID {
				t.Errorf("message id of a copy that is not repeated: got %q, want the original %q", d.Msg.ID, m.ID)
			}
			if c, _ := str(d.Msg, "colour"); c != "red" {
				t.Errorf("other property colour: got %q, want red", c)
			}
			v.advance(time.Hour)
			ch.none(t)
			if n := v.e.ScheduledJobs(); n != 0 {
				t.Fatalf("scheduled jobs after the firing: got %d, want 0", n)
			}
		})
	}
}

func TestEngineSchedulerPeriodRepeat(t *testing.T) {
	v := start(t, withScheduler)
	tp := message.TopicDest("ticks")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckAuto})
	// No delay: the first firing waits one period.
	m := scheduledMsg(tp, "tick", prop(engine.ScheduledPeriod, message.LongValue(1000)), prop(engine.ScheduledRepeat, message.IntValue(2)))
	send(t, p, m)
	v.advance(schedStart + 999*time.Millisecond)
	ch.none(t)
	ids := map[string]bool{}
	var job string
	for i := range 3 {
		v.advance(time.Millisecond)
		d := ch.recv(t)
		id := checkFired(t, d, "tick")
		if job != "" && id != job {
			t.Errorf("firing %d: job id %q, want %q as before", i, id, job)
		}
		job = id
		if d.Msg.ID == m.ID || ids[d.Msg.ID] {
			t.Errorf("firing %d: message id %q, want a new one for each copy of a repeated job", i, d.Msg.ID)
		}
		ids[d.Msg.ID] = true
		v.advance(998 * time.Millisecond)
		ch.none(t)
		v.advance(time.Millisecond)
	}
	// 1 + REPEAT deliveries, then nothing.
	v.advance(time.Hour)
	ch.none(t)
	if n := v.e.ScheduledJobs(); n != 0 {
		t.Fatalf("scheduled jobs after the last repeat: got %d, want 0", n)
	}
}

func TestEngineSchedulerCron(t *testing.T) {
	v := start(t, withScheduler)
	q := message.QueueDest("cron")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	// 22:13:20 UTC. "* * * * *" is due at the top of the next minute,
	// 22:14:00, then every minute.
	send(t, p, scheduledMsg(q, "every minute", prop(engine.ScheduledCron, message.StringValue("* * * * *"))))
	v.advance(39999 * time.Millisecond)
	ch.none(t)
	v.advance(time.Millisecond)
	checkFired(t, ch.recv(t), "every minute")
	v.advance(59999 * time.Millisecond)
	ch.none(t)
	v.advance(time.Millisecond)
	checkFired(t, ch.recv(t), "every minute")
	if n := v.e.ScheduledJobs(); n != 1 {
		t.Fatalf("scheduled jobs: got %d, want the cron job still there", n)
	}
}

func TestEngineSchedulerCronFields(t *testing.T) {
	v := start(t, withScheduler)
	q := message.QueueDest("cron.fields")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	// Every quarter of an hour (in any real time zone: offsets are whole
	// quarters): from 22:13:20.500 (the rounded start) the next is
	// 22:15:00.500 UTC. ActiveMQ's CronParser keeps the start's
	// milliseconds.
	send(t, p, scheduledMsg(q, "quarterly", prop(engine.ScheduledCron, message.StringValue("*/15 * * * *"))))
	v.advance((100*1000 + 499) * time.Millisecond) // 22:15:00.499
	ch.none(t)
	v.advance(time.Millisecond)
	checkFired(t, ch.recv(t), "quarterly")
	v.advance(15*time.Minute - time.Millisecond)
	ch.none(t)
	v.advance(time.Millisecond)
	checkFired(t, ch.recv(t), "quarterly")

	// A cron entry with a repeat fires nothing itself: each cron firing
	// starts a job of REPEAT+1 deliveries, PERIOD apart.
	q2 := message.QueueDest("cron.repeat")
	_, ch2 := sub(t, v.conn(""), engine.SubSpec{Destination: q2, AckMode: engine.AckAuto})
	// Now 22:30:00.500. As in JobSchedulerImpl.doSchedule, the first
	// firing of the cron job is the next minute plus the period:
	// 22:31:01.000. The burst it starts begins at that time rounded up to
	// 500 ms, plus the period: 22:31:02.500.
	send(t, p, scheduledMsg(q2, "burst", prop(engine.ScheduledCron, message.StringValue("* * * * *")),
		prop(engine.ScheduledPeriod, message.LongValue(1000)), prop(engine.ScheduledRepeat, message.IntValue(1))))
	v.advance(60500 * time.Millisecond) // 22:31:01.000
	if n := v.e.ScheduledJobs(); n != 3 {
		t.Fatalf("scheduled jobs after the cron firing: got %d, want 3: the quarterly job, the cron job and its burst", n)
	}
	v.advance(1499 * time.Millisecond)
	ch2.none(t)
	v.advance(time.Millisecond) // 22:31:02.500
	job := checkFired(t, ch2.recv(t), "burst")
	v.advance(time.Second)
	if again := checkFired(t, ch2.recv(t), "burst"); again != job {
		t.Errorf("second delivery of the burst: job %q, want %q", again, job)
	}
	v.advance(10 * time.Second)
	ch2.none(t)

	for _, bad := range []string{"* * * *", "61 * * * *", "a * * * *", "5-3 * * * *", "*/0 * * * *", "0-99999999 * * * *"} {
		r := &result{errs: map[uint64]error{}}
		r.wg.Add(1)
		if err := p.Send(scheduledMsg(q, "bad", prop(engine.ScheduledCron, message.StringValue(bad))), "", r, 1); err != nil {
			t.Fatal(err)
		}
		r.wg.Wait()
		if !errors.Is(r.errs[1], engine.ErrBadSchedule) {
			t.Errorf("cron %q: send error %v, want %v", bad, r.errs[1], engine.ErrBadSchedule)
		}
	}
}

func TestEngineSchedulerBadValues(t *testing.T) {
	v := start(t, withScheduler)
	q := message.QueueDest("bad")
	p := v.conn("")
	for _, tc := range []struct {
		name string
		prop message.Property
	}{
		{"repeat over 1000", prop(engine.ScheduledRepeat, message.IntValue(1001))},
		{"delay not a number", prop(engine.ScheduledDelay, message.StringValue("soon"))},
		{"period a double", prop(engine.ScheduledPeriod, message.DoubleValue(1.5))},
	} {
		m := scheduledMsg(q, "x", prop(engine.ScheduledDelay, message.LongValue(10)), tc.prop)
		r := &result{errs: map[uint64]error{}}
		r.wg.Add(1)
		if err := p.Send(m, "", r, 1); err != nil {
			t.Fatal(err)
		}
		r.wg.Wait()
		if !errors.Is(r.errs[1], engine.ErrBadSchedule) {
			t.Errorf("%s: send error %v, want %v", tc.name, r.errs[1], engine.ErrBadSchedule)
		}
	}
	if n := v.e.ScheduledJobs(); n != 0 {
		t.Fatalf("scheduled jobs: got %d, want 0", n)
	}
}

func TestEngineSchedulerExpirationShift(t *testing.T) {
	v := start(t, withScheduler)
	q := message.QueueDest("ttl")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	now := v.clock.ms.Load()
	m := scheduledMsg(q, "short-lived", prop(engine.ScheduledDelay, message.LongValue(5000)))
	m.Timestamp, m.Expiration = now, now+2000 // would be long expired when due
	send(t, p, m)
	v.advance(schedStart + 5*time.Second)
	d := ch.recv(t)
	fired := now + (schedStart + 5*time.Second).Milliseconds()
	if d.Msg.Timestamp != fired || d.Msg.Expiration != fired+2000 {
		t.Fatalf("timestamp %d expiration %d, want %d and %d: the TTL counts from the delivery", d.Msg.Timestamp, d.Msg.Expiration, fired, fired+2000)
	}
	if m.Expiration != now+2000 {
		t.Fatalf("the sent message was changed: expiration %d", m.Expiration)
	}
}

func TestEngineSchedulerTransaction(t *testing.T) {
	v := start(t, withScheduler)
	q := message.QueueDest("tx.scheduled")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	delayed := func(body string) *message.Message {
		return scheduledMsg(q, body, prop(engine.ScheduledDelay, message.LongValue(1000)))
	}

	if err := p.Begin("rolled-back"); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(delayed("never"), "rolled-back", nil, 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Rollback("rolled-back"); err != nil {
		t.Fatal(err)
	}
	if n := v.e.ScheduledJobs(); n != 0 {
		t.Fatalf("scheduled jobs after a rollback: got %d, want 0", n)
	}

	if err := p.Begin("t1"); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(delayed("committed"), "t1", nil, 0); err != nil {
		t.Fatal(err)
	}
	if n := v.e.ScheduledJobs(); n != 0 {
		t.Fatalf("scheduled jobs before the commit: got %d, want 0", n)
	}
	v.advance(2 * time.Second) // the delay counts from the commit
	if err := p.Commit("t1"); err != nil {
		t.Fatal(err)
	}
	if n := v.e.ScheduledJobs(); n != 1 {
		t.Fatalf("scheduled jobs after the commit: got %d, want 1", n)
	}
	v.advance(schedStart + 999*time.Millisecond)
	ch.none(t)
	v.advance(time.Millisecond)
	checkFired(t, ch.recv(t), "committed")
	v.advance(time.Hour)
	ch.none(t)
}

func TestEngineSchedulerRestart(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) { testSchedulerRestart(t, kind) })
	}
}

func testSchedulerRestart(t *testing.T, kind string) {
	v := startOn(t, kind, withScheduler)
	q := message.QueueDest("durable.jobs")
	p := v.conn("")
	send(t, p, scheduledMsg(q, "after restart", prop(engine.ScheduledDelay, message.LongValue(10000))))
	// Repeats once more after its first firing; it fires before the
	// restart, and the remaining firing must survive it.
	rep := scheduledMsg(q, "repeated", prop(engine.ScheduledDelay, message.LongValue(1000)),
		prop(engine.ScheduledPeriod, message.LongValue(3000)), prop(engine.ScheduledRepeat, message.IntValue(1)))
	send(t, p, rep)
	v.advance(schedStart + time.Second)
	if st := v.barrier(q); st.QueueSize != 1 {
		t.Fatalf("queue before the restart %+v, want the first firing of the repeated job", st)
	}

	v.restart()
	if n := v.e.ScheduledJobs(); n != 2 {
		t.Fatalf("scheduled jobs after a restart: got %d, want 2", n)
	}
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	if got := body(ch.recv(t)); got != "repeated" { // stored by its first firing
		t.Fatalf("recovered message %q, want repeated", got)
	}
	v.advance(2999 * time.Millisecond)
	ch.none(t)
	v.advance(time.Millisecond)
	checkFired(t, ch.recv(t), "repeated")
	v.advance(6 * time.Second) // 10.5 s after the send
	checkFired(t, ch.recv(t), "after restart")
	v.advance(time.Hour)
	ch.none(t)

	v.restart()
	if n := v.e.ScheduledJobs(); n != 0 {
		t.Fatalf("scheduled jobs after every firing and a restart: got %d, want 0 (removed from the store)", n)
	}
}

func TestEngineSchedulerOff(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("not.scheduled")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	send(t, p, scheduledMsg(q, "now", prop(engine.ScheduledDelay, message.LongValue(60000))))
	d := ch.recv(t)
	if body(d) != "now" {
		t.Fatalf("got %q, want now", body(d))
	}
	if _, ok := str(d.Msg, engine.ScheduledDelay); !ok {
		t.Errorf("without scheduler support the properties stay: got no %s", engine.ScheduledDelay)
	}
	if _, ok := str(d.Msg, engine.ScheduledJobID); ok {
		t.Errorf("without scheduler support: got a %s", engine.ScheduledJobID)
	}
}

func TestEngineSchedulerManagement(t *testing.T) {
	v := start(t, withScheduler)
	p := v.conn("")
	dests := []message.Destination{message.QueueDest("mgmt.a"), message.QueueDest("mgmt.b"), message.TopicDest("mgmt.c"), message.QueueDest("mgmt.d")}
	for i, d := range dests {
		send(t, p, scheduledMsg(d, d.Name, prop(engine.ScheduledDelay, message.LongValue(int64(i+1)*1000))))
	}
	mgmt := message.TopicDest(engine.SchedulerManagement)
	reply := message.QueueDest("mgmt.reply")
	_, replies := sub(t, v.conn(""), engine.SubSpec{Destination: reply, AckMode: engine.AckAuto})
	request := func(action string, props ...message.Property) {
		t.Helper()
		m := msg(mgmt, "", false)
		m.ReplyTo = reply
		m.Props.Set(engine.SchedulerAction, message.StringValue(action))
		for _, p := range props {
			m.Props.Set(p.Name, p.Value)
		}
		send(t, p, m)
		v.e.Tick() // every shard has applied it (the mailboxes are FIFO)
	}
	browse := func() (ids []string, bodies []string) {
		t.Helper()
		request(engine.SchedulerActionBrowse)
		n := v.e.ScheduledJobs()
		for range n {
			d := replies.recv(t)
			id, ok := str(d.Msg, engine.ScheduledJobID)
			if !ok {
				t.Fatalf("browsed job %q has no %s", body(d), engine.ScheduledJobID)
			}
			if d.Msg.Persistent || d.Msg.Type != "Advisory" || d.Msg.OriginalDestination.Name != body(d) {
				t.Errorf("browsed job %q: persistent %v type %q original destination %v, want false, Advisory, its destination",
					body(d), d.Msg.Persistent, d.Msg.Type, d.Msg.OriginalDestination)
			}
			if _, ok := str(d.Msg, engine.ScheduledDelay); !ok {
				t.Errorf("browsed job %q: want its %s kept", body(d), engine.ScheduledDelay)
			}
			ids, bodies = append(ids, id), append(bodies, body(d))
		}
		v.barrier(reply)
		replies.none(t)
		return ids, bodies
	}

	ids, bodies := browse()
	if want := []string{"mgmt.a", "mgmt.b", "mgmt.c", "mgmt.d"}; !equal(bodies, want) {
		t.Fatalf("browse: got %v, want %v in due order", bodies, want)
	}

	request(engine.SchedulerActionRemove, prop(engine.ScheduledJobID, message.StringValue(ids[1])))
	if _, bodies = browse(); !equal(bodies, []string{"mgmt.a", "mgmt.c", "mgmt.d"}) {
		t.Fatalf("browse after REMOVE of mgmt.b: got %v", bodies)
	}

	// Due at +1.5 s, +3.5 s, +4.5 s: remove those due in [+3 s, +4 s].
	base := v.clock.ms.Load()
	request(engine.SchedulerActionAll, prop(engine.SchedulerStartTime, message.LongValue(base+3000)),
		prop(engine.SchedulerEndTime, message.StringValue(strconv.FormatInt(base+4000, 10))))
	if _, bodies = browse(); !equal(bodies, []string{"mgmt.a", "mgmt.d"}) {
		t.Fatalf("browse after a bounded REMOVEALL: got %v", bodies)
	}

	// The management destination is matched without case, and never
	// receives anything itself.
	_, mg := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("activemq.scheduler.management"), AckMode: engine.AckAuto})
	m := msg(message.QueueDest("activemq.scheduler.management"), "", false)
	m.Props.Set(engine.SchedulerAction, message.StringValue(engine.SchedulerActionAll))
	send(t, p, m)
	v.e.Tick()
	if n := v.e.ScheduledJobs(); n != 0 {
		t.Fatalf("scheduled jobs after REMOVEALL: got %d, want 0", n)
	}
	v.barrier(message.QueueDest("activemq.scheduler.management"))
	mg.none(t)
	v.advance(time.Hour)
	for _, d := range dests {
		if st := v.barrier(d); st.EnqueueCount != 0 {
			t.Errorf("%s after every job was removed: %+v, want nothing enqueued", d, st)
		}
	}
}

// TestEngineSchedulerTimer checks that jobs fire on time by themselves,
// with the real clock and no Tick: the shard's timer, not the 1 s tick.
func TestEngineSchedulerTimer(t *testing.T) {
	v := start(t, func(o *engine.Options) {
		o.SchedulerSupport = true
		o.Now = nil // the real clock
	})
	q := message.QueueDest("timed")
	p := v.conn("")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	sent := time.Now()
	send(t, p, scheduledMsg(q, "soon", prop(engine.ScheduledDelay, message.LongValue(50))))
	d := ch.recv(t)
	got := time.Since(sent)
	checkFired(t, d, "soon")
	// 50 ms after a start rounded up to the next 500 ms: 50 to 550 ms,
	// with some room for a busy machine, far less than the hour-long tick.
	if got < 50*time.Millisecond || got > 2*time.Second {
		t.Fatalf("delivered after %v, want 50-550 ms", got)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
