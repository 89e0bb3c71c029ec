package engine_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// TestEngineEnqueueTimeAndMessageSize: the enqueue time is measured from
// the message entering the queue to its dispatch (ActiveMQ's processTime,
// fed by RegionBroker.preProcessDispatch), per dispatch; the message size
// once per message sent.
func TestEngineEnqueueTimeAndMessageSize(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("timed")
	p, c := v.conn(""), v.conn("")
	small, large := msg(q, strings.Repeat("s", 100), false), msg(q, strings.Repeat("l", 300), false)
	send(t, p, small) // at t0
	v.clock.add(50 * time.Millisecond)
	send(t, p, large) // at t0+50
	v.clock.add(100 * time.Millisecond)
	s, ch := sub(t, c, engine.SubSpec{Destination: q, Prefetch: 1, AckMode: engine.AckIndividual})
	d := ch.recv(t) // small, dispatched at t0+150: 150 ms
	v.clock.add(30 * time.Millisecond)
	if err := c.Ack(s, d.ID, ""); err != nil { // large dispatched at t0+180: 130 ms
		t.Fatal(err)
	}
	if got := body(ch.recv(t)); got != string(large.Body) {
		t.Fatalf("second delivery %q", got)
	}
	st := v.barrier(q)
	want := engine.Statistic{Count: 2, Total: 280, Min: 130, Max: 150}
	if st.EnqueueTime != want || st.EnqueueTime.Average() != 140 {
		t.Fatalf("EnqueueTime %+v (average %v), want %+v (average 140)", st.EnqueueTime, st.EnqueueTime.Average(), want)
	}
	ss, ls := int64(small.Size()), int64(large.Size())
	wantSize := engine.Statistic{Count: 2, Total: ss + ls, Min: ss, Max: ls}
	if st.MessageSize != wantSize || ls-ss != 200 {
		t.Fatalf("MessageSize %+v, want %+v", st.MessageSize, wantSize)
	}
}

// TestEngineEnqueueTimeTopicAndRedelivery: a topic message handed to two
// subscribers is two dispatches and one size; a redelivery is timed again
// from the message's arrival, as ActiveMQ keeps the brokerInTime.
func TestEngineEnqueueTimeTopicAndRedelivery(t *testing.T) {
	v := start(t, nil)
	tp := message.TopicDest("timed.news")
	_, a := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckAuto})
	_, b := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckAuto})
	send(t, v.conn(""), msg(tp, "news", false))
	a.recv(t)
	b.recv(t)
	st := v.barrier(tp)
	if st.EnqueueTime.Count != 2 || st.EnqueueTime.Max != 0 || st.MessageSize.Count != 1 {
		t.Fatalf("topic: EnqueueTime %+v MessageSize %+v, want 2 dispatches of 0 ms and 1 size", st.EnqueueTime, st.MessageSize)
	}

	q := message.QueueDest("timed.redelivered")
	send(t, v.conn(""), msg(q, "again", false))
	v.clock.add(40 * time.Millisecond)
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	d := ch.recv(t)
	v.clock.add(60 * time.Millisecond)
	if err := c.Nack(s, d.ID, engine.NackRedeliver, ""); err != nil {
		t.Fatal(err)
	}
	if got := ch.recv(t); got.Redeliveries != 1 {
		t.Fatalf("redelivery count %d, want 1", got.Redeliveries)
	}
	st = v.barrier(q)
	want := engine.Statistic{Count: 2, Total: 140, Min: 40, Max: 100}
	if st.EnqueueTime != want {
		t.Fatalf("EnqueueTime %+v, want %+v", st.EnqueueTime, want)
	}
}

// TestEngineStatisticsDisabled: <broker enableStatistics="false"> keeps no
// timing or size statistics; the counters are kept.
func TestEngineStatisticsDisabled(t *testing.T) {
	v := start(t, func(o *engine.Options) { o.DisableStatistics = true })
	q := message.QueueDest("untimed")
	send(t, v.conn(""), msg(q, "one", false))
	v.clock.add(time.Second)
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	ch.recv(t)
	st := v.barrier(q)
	if st.EnqueueTime != (engine.Statistic{}) || st.MessageSize != (engine.Statistic{}) {
		t.Fatalf("statistics kept while disabled: %+v %+v", st.EnqueueTime, st.MessageSize)
	}
	if st.EnqueueCount != 1 || st.DequeueCount != 1 || st.DispatchCount != 1 {
		t.Fatalf("counters %+v, want 1 enqueued, dispatched, dequeued", st)
	}
}

// TestStatisticMerge: the broker's statistic over its destinations, with
// ActiveMQ's rule that a minimum of 0 is "none yet".
func TestStatisticMerge(t *testing.T) {
	var all engine.Statistic
	all.Merge(engine.Statistic{})
	all.Merge(engine.Statistic{Count: 2, Total: 30, Min: 10, Max: 20})
	all.Merge(engine.Statistic{Count: 1, Total: 5, Min: 5, Max: 5})
	all.Merge(engine.Statistic{Count: 1, Total: 0, Min: 0, Max: 0})
	want := engine.Statistic{Count: 4, Total: 35, Min: 5, Max: 20}
	if all != want || all.Average() != 8.75 {
		t.Fatalf("merged %+v (average %v), want %+v (8.75)", all, all.Average(), want)
	}
	if (engine.Statistic{}).Average() != 0 {
		t.Fatal("average of nothing is not 0")
	}
}

// TestEnginePauseDispatch: a paused queue takes sends and keeps them but
// dispatches nothing until resumed (QueueViewMBean pause, resume); only a
// queue that exists can be paused.
func TestEnginePauseDispatch(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("held")
	if err := v.e.AddDestination(q); err != nil {
		t.Fatal(err)
	}
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	if err := v.e.PauseDispatch(q); err != nil {
		t.Fatal(err)
	}
	p := v.conn("")
	send(t, p, msg(q, "one", true))
	send(t, p, msg(q, "two", false))
	st := v.barrier(q)
	ch.none(t)
	if !st.Paused || st.QueueSize != 2 || st.DispatchCount != 0 {
		t.Fatalf("paused: %+v, want paused with 2 kept, none dispatched", st)
	}
	if err := v.e.ResumeDispatch(q); err != nil {
		t.Fatal(err)
	}
	if a, b := body(ch.recv(t)), body(ch.recv(t)); a != "one" || b != "two" {
		t.Fatalf("after resume got %q %q", a, b)
	}
	if st := v.barrier(q); st.Paused || st.DequeueCount != 2 {
		t.Fatalf("resumed: %+v", st)
	}
	if err := v.e.PauseDispatch(message.QueueDest("no.such")); !errors.Is(err, engine.ErrNoSuchDestination) {
		t.Errorf("pause of a missing queue: %v", err)
	}
	if err := v.e.PauseDispatch(message.TopicDest("held")); !errors.Is(err, engine.ErrBadDestination) {
		t.Errorf("pause of a topic: %v", err)
	}
}

// TestEnginePauseAndStatisticsAcrossRestart, on KahaDB: a pause is not
// kept across a restart (nor is ActiveMQ's), the paused queue's
// persistent messages are, and a recovered message's enqueue time counts
// from the recovery (the statistics start again at 0).
func TestEnginePauseAndStatisticsAcrossRestart(t *testing.T) {
	v := startKahaDB(t, nil)
	q := message.QueueDest("held.durable")
	if err := v.e.AddDestination(q); err != nil {
		t.Fatal(err)
	}
	if err := v.e.PauseDispatch(q); err != nil {
		t.Fatal(err)
	}
	send(t, v.conn(""), msg(q, "kept", true))
	v.clock.add(time.Hour)
	v.restart()
	st := v.barrier(q)
	if st.Paused || st.QueueSize != 1 || st.EnqueueTime.Count != 0 || st.MessageSize.Count != 0 {
		t.Fatalf("after the restart: %+v, want not paused, 1 message, no statistics yet", st)
	}
	v.clock.add(25 * time.Millisecond)
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	if got := body(ch.recv(t)); got != "kept" {
		t.Fatalf("got %q", got)
	}
	if st := v.barrier(q); st.EnqueueTime != (engine.Statistic{Count: 1, Total: 25, Min: 25, Max: 25}) {
		t.Fatalf("enqueue time of the recovered message: %+v, want 25 ms from the recovery", st.EnqueueTime)
	}
}
