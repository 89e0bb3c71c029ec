package engine_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/logtest"
)

// The engine's log lines an operator greps for carry ActiveMQ's words
// (docs/operations.md, "Logs"); these tests read them through a captured
// handler.

// withLog is mod with the engine's logger set to lg.
func withLog(lg *slog.Logger, mod func(*engine.Options)) func(*engine.Options) {
	return func(o *engine.Options) {
		if mod != nil {
			mod(o)
		}
		o.Logger = lg
	}
}

func TestEngineLogFlowControlWarning(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	v := start(t, withLog(lg, limited(8*1024, nil)))
	q := message.QueueDest("small.logged")
	p := v.conn("")
	pc := newPending()
	tok := uint64(0)
	for v.barrier(q).BlockedNow == 0 {
		if tok++; tok > 100 {
			t.Fatal("the memory limit never blocked a producer")
		}
		p.Send(bigMsg(q), "", pc, tok)
	}
	const phrase = "Usage Manager Memory Limit reached. Producers will be throttled to the rate at which messages are removed from this destination"
	recs := logs.Find(phrase)
	if len(recs) != 1 {
		t.Fatalf("%d lines with ActiveMQ's flow-control warning, want 1; log %q", len(recs), logs.Messages())
	}
	r := recs[0]
	if r.Level != slog.LevelWarn || r.Attrs["dest"] != "queue://small.logged" || r.Attrs["limit"] != int64(8*1024) ||
		r.Attrs["used"].(int64) < 8*1024 || r.Attrs["percent_usage"].(int64) < 100 || r.Attrs["usage"] != "Memory" {
		t.Errorf("flow-control warning %v %v", r.Level, r.Attrs)
	}
	// A second blocked send within BlockedProducerWarningInterval (30 s)
	// is not logged again; one after it is.
	tok++
	p.Send(bigMsg(q), "", pc, tok)
	if st := v.barrier(q); st.BlockedNow != 2 {
		t.Fatalf("blocked sends %d, want 2", st.BlockedNow)
	}
	if n := len(logs.Find(phrase)); n != 1 {
		t.Fatalf("%d flow-control warnings within the interval, want 1", n)
	}
	// Still blocked after the interval: the tick says so again, with how
	// long the oldest send has waited (ActiveMQ's "blocking for: Ns").
	v.clock.add(31 * time.Second)
	v.e.Tick()
	recs = logs.Find(phrase)
	if len(recs) != 2 || recs[1].Attrs["blocked_sends"] != int64(2) || recs[1].Attrs["blocked_for_ms"] != int64(31000) {
		t.Fatalf("still blocked after the interval: %d warnings (%v), want 2, the last with 2 sends blocked for 31000 ms", len(recs), recs)
	}
	tok++
	p.Send(bigMsg(q), "", pc, tok)
	v.barrier(q)
	if n := len(logs.Find(phrase)); n != 2 {
		t.Fatalf("a send blocked right after the repeated warning logged again: %d warnings, want 2", n)
	}
}

// TestEngineLogFlowControlWarningInterval: a destination's policy sets how
// often its warning repeats (blockedProducerWarningInterval).
func TestEngineLogFlowControlWarningInterval(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	v := start(t, withLog(lg, withPolicy(func(d message.Destination, p *engine.Policy) {
		p.MemoryLimit = 4 * 1024
		p.BlockedProducerWarningInterval = 5 * time.Second
	})))
	q := message.QueueDest("interval.q")
	p := v.conn("")
	pc := newPending()
	for tok := uint64(1); v.barrier(q).BlockedNow == 0; tok++ {
		if tok > 100 {
			t.Fatal("the memory limit never blocked a producer")
		}
		p.Send(bigMsg(q), "", pc, tok)
	}
	for _, step := range []struct {
		after time.Duration
		want  int
	}{{4 * time.Second, 1}, {time.Second, 2}, {4 * time.Second, 2}, {time.Second, 3}} {
		v.clock.add(step.after)
		v.e.Tick()
		if n := len(logs.Find("Usage Manager Memory Limit reached")); n != step.want {
			t.Fatalf("%d warnings, want %d", n, step.want)
		}
	}
}

func TestEngineLogSlowConsumer(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	v := start(t, withLog(lg, withPolicy(func(d message.Destination, p *engine.Policy) { p.PendingMessageLimit = 3 })))
	tp := message.TopicDest("ticks.logged")
	p := v.conn("")
	sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckIndividual, Prefetch: 2})
	for i := 0; i < 10; i++ {
		send(t, p, msg(tp, "tick", false))
	}
	if st := v.barrier(tp); st.DiscardedCount != 5 {
		t.Fatalf("discarded %d, want 5", st.DiscardedCount)
	}
	// Five discards, one line: the subscriber is reported once.
	recs := logs.Find("appears to be slow")
	if len(recs) != 1 || recs[0].Level != slog.LevelWarn || recs[0].Attrs["dest"] != "topic://ticks.logged" || recs[0].Attrs["limit"] != int64(3) {
		t.Fatalf("slow-consumer lines %v; want one warning naming the topic and the limit", recs)
	}
}

func TestEngineLogDLQMoveAtDebug(t *testing.T) {
	lg, logs := logtest.New(slog.LevelDebug)
	v := start(t, withLog(lg, func(o *engine.Options) {
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			p.MaxRedeliveries = 0
			if d.Name == "discard" {
				p.DeadLetter.Kind = engine.DiscardDLQ
			}
			return p
		}
	}))
	p, c := v.conn(""), v.conn("")
	for _, name := range []string{"poison", "discard"} {
		q := message.QueueDest(name)
		s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
		send(t, p, msg(q, "bad", true))
		c.Nack(s, ch.recv(t).ID, engine.NackRedeliver, "")
		v.barrier(q)
	}
	moved := logs.Find("Sending to DLQ")
	if len(moved) != 1 || moved[0].Level != slog.LevelDebug || moved[0].Attrs["dest"] != "queue://poison" ||
		moved[0].Attrs["dlq"] != "queue://ActiveMQ.DLQ" || !strings.Contains(moved[0].Attrs["cause"].(string), "exceeds redelivery policy limit") {
		t.Errorf("DLQ move lines %v; want one debug line from queue://poison to queue://ActiveMQ.DLQ with its cause", moved)
	}
	if d := logs.Find("Discarding message sent to DLQ"); len(d) != 1 || d[0].Attrs["dest"] != "queue://discard" {
		t.Errorf("discarded dead letter lines %v; want one for queue://discard", d)
	}
	// At Info nothing is logged per message.
	lg, logs = logtest.New(slog.LevelInfo)
	v.opts.Logger = lg
	v.restart()
	q := message.QueueDest("poison")
	s, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	send(t, v.conn(""), msg(q, "bad again", true))
	s.Conn().Nack(s, ch.recv(t).ID, engine.NackRedeliver, "")
	v.barrier(q)
	if d := logs.Find("DLQ"); len(d) != 0 {
		t.Errorf("at Info: %v, want no per-message DLQ line", d)
	}
}

func TestEngineLogRecoverySummary(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	v := startKahaDB(t, withLog(lg, nil))
	p := v.conn("")
	for i, name := range []string{"a", "b", "b"} {
		send(t, p, msg(message.QueueDest("rec."+name), "m"+string(rune('0'+i)), true))
	}
	dc := v.conn("cid")
	s, _ := sub(t, dc, engine.SubSpec{Destination: message.TopicDest("rec.t"), DurableName: "d", AckMode: engine.AckIndividual})
	dc.CloseSubscription(s)
	send(t, p, msg(message.TopicDest("rec.t"), "kept", true))
	v.restart()
	r := v.e.Recovered()
	want := engine.Recovery{Messages: 4, DurableSubs: 1}
	if r.Messages != want.Messages || r.DurableSubs != want.DurableSubs || r.Destinations < 3 || r.PreparedTransactions != 0 {
		t.Fatalf("Recovered() %+v, want %d messages, %d durable subscription, at least 3 destinations", r, want.Messages, want.DurableSubs)
	}
	var msgs, subs int64
	for _, rec := range logs.Find("store recovered") {
		msgs += rec.Attrs["messages"].(int64)
		subs += rec.Attrs["durable_subs"].(int64)
	}
	if msgs != 4 || subs != 1 {
		t.Errorf("store recovered lines sum to %d messages, %d durable subscriptions; want 4, 1", msgs, subs)
	}
}

// TestEngineLogTempStoreFullWarning: a producer held back by a full temp
// store logs ActiveMQ's "Temp Store is Full" warning (docs/operations.md),
// naming the temp usage, not the memory.
func TestEngineLogTempStoreFullWarning(t *testing.T) {
	lg, logs := logtest.New(slog.LevelInfo)
	var dir string
	const tempLimit = 50 << 10
	v := start(t, withLog(lg, spilling(t, &dir, 16<<10, func(o *engine.Options) { o.Limits.TempLimit = tempLimit })))
	q := message.QueueDest("small.templog")
	sendUntilBlocked(t, v, v.conn(""), q, newPending())
	const phrase = "Temp Store is Full. Stopping producer to prevent flooding the destination"
	recs := logs.Find(phrase)
	if len(recs) != 1 {
		t.Fatalf("%d lines with ActiveMQ's temp-store warning, want 1; log %q", len(recs), logs.Messages())
	}
	r := recs[0]
	if r.Level != slog.LevelWarn || r.Attrs["dest"] != "queue://small.templog" || r.Attrs["usage"] != "Temp" ||
		r.Attrs["limit"] != int64(tempLimit) || r.Attrs["used"].(int64) < tempLimit || r.Attrs["blocked_sends"] != int64(1) {
		t.Errorf("temp-store warning %v %v", r.Level, r.Attrs)
	}
	if n := len(logs.Find("Usage Manager Memory Limit reached")); n != 0 {
		t.Errorf("%d memory-limit warnings for a send held by the temp store, want 0", n)
	}
}
