package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

func sendN(t *testing.T, c *engine.Conn, d message.Destination, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		m := msg(d, fmt.Sprint("m", i), true)
		m.ID = c.NextMessageID()
		m.Props.Set("n", message.IntValue(int32(i)))
		send(t, c, m)
		ids = append(ids, m.ID)
	}
	return ids
}

func browseBodies(t *testing.T, e *engine.Engine, d message.Destination) []string {
	t.Helper()
	got, err := e.Browse(d, nil, 1000)
	if err != nil {
		t.Fatalf("browse %s: %v", d, err)
	}
	var out []string
	for _, q := range got {
		out = append(out, string(q.Msg.Body))
	}
	return out
}

func evenN(m *message.Message, _ int32) bool {
	v, _ := m.Props.Get("n")
	return v.Int()%2 == 0
}

func TestEngineAdminAddPurgeSurvivesRestart(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("admin.purge")
	if err := v.e.AddDestination(q); err != nil {
		t.Fatal(err)
	}
	if st := v.barrier(q); !st.Exists {
		t.Fatal("AddDestination did not create the queue")
	}
	sendN(t, v.conn(""), q, 3)
	n, err := v.e.Purge(q)
	if err != nil || n != 3 {
		t.Fatalf("Purge = %d, %v; want 3", n, err)
	}
	if st := v.barrier(q); st.QueueSize != 0 || st.DequeueCount != 3 || st.EnqueueCount != 3 {
		t.Fatalf("after purge %+v, want size 0 dequeued 3 enqueued 3", st)
	}
	v.restart()
	st := v.barrier(q)
	if !st.Exists || st.QueueSize != 0 {
		t.Fatalf("after restart %+v, want the queue, empty", st)
	}
}

func TestEngineAdminPurgeLeavesInFlight(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("admin.inflight")
	sendN(t, v.conn(""), q, 3)
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 1})
	held := ch.recv(t)
	n, err := v.e.Purge(q)
	if err != nil || n != 2 {
		t.Fatalf("Purge = %d, %v; want 2 (one in flight)", n, err)
	}
	got, err := v.e.Browse(q, nil, 10)
	if err != nil || len(got) != 1 || got[0].Msg.ID != held.Msg.ID || !got[0].InFlight {
		t.Fatalf("browse after purge = %+v, %v; want only the in-flight %s", got, err, held.Msg.ID)
	}
}

func TestEngineAdminRemoveMoveCopy(t *testing.T) {
	v := start(t, nil)
	src, dst, cp := message.QueueDest("admin.src"), message.QueueDest("admin.dst"), message.TopicDest("admin.copies")
	ids := sendN(t, v.conn(""), src, 5)
	n, err := v.e.RemoveMessages(src, func(m *message.Message, _ int32) bool { return m.ID == ids[4] }, 1)
	if err != nil || n != 1 {
		t.Fatalf("RemoveMessages = %d, %v; want 1", n, err)
	}
	if err := v.e.AddDestination(cp); err != nil {
		t.Fatal(err)
	}
	_, topicCh := sub(t, v.conn(""), engine.SubSpec{Destination: cp, AckMode: engine.AckAuto})
	n, err = v.e.CopyMessages(src, evenN, cp, -1)
	if err != nil || n != 2 {
		t.Fatalf("CopyMessages = %d, %v; want 2 (m0, m2)", n, err)
	}
	for _, want := range []string{"m0", "m2"} {
		if d := topicCh.recv(t); body(d) != want || d.Msg.OriginalDestination != src {
			t.Fatalf("copy %q original %v, want %q from %v", body(d), d.Msg.OriginalDestination, want, src)
		}
	}
	n, err = v.e.MoveMessages(src, evenN, dst, -1)
	if err != nil || n != 2 {
		t.Fatalf("MoveMessages = %d, %v; want 2", n, err)
	}
	// Move returns once the copies are written: no polling needed.
	if got := browseBodies(t, v.e, dst); fmt.Sprint(got) != "[m0 m2]" {
		t.Fatalf("moved to %s: %v, want [m0 m2]", dst, got)
	}
	if got := browseBodies(t, v.e, src); fmt.Sprint(got) != "[m1 m3]" {
		t.Fatalf("left on %s: %v, want [m1 m3]", src, got)
	}
	if st := v.barrier(src); st.DequeueCount != 3 || st.QueueSize != 2 {
		t.Fatalf("source stats %+v, want dequeued 3 (1 removed, 2 moved) size 2", st)
	}
}

func TestEngineAdminRetryFromDLQ(t *testing.T) {
	v := start(t, nil)
	q, dlq := message.QueueDest("admin.retry"), message.QueueDest("ActiveMQ.DLQ")
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	sendN(t, v.conn(""), q, 2)
	for i := 0; i < 2; i++ {
		c.Nack(s, ch.recv(t).ID, engine.NackPoison, "poison")
	}
	c.CloseSubscription(s)
	eventually(t, func() error {
		if st := v.e.Stats(dlq); st.QueueSize != 2 {
			return fmt.Errorf("DLQ holds %d, want 2", st.QueueSize)
		}
		return nil
	})
	n, err := v.e.RetryMessages(dlq, nil, -1)
	if err != nil || n != 2 {
		t.Fatalf("RetryMessages = %d, %v; want 2", n, err)
	}
	if got := browseBodies(t, v.e, q); fmt.Sprint(got) != "[m0 m1]" {
		t.Fatalf("back on %s: %v, want [m0 m1]", q, got)
	}
	if st := v.barrier(dlq); st.QueueSize != 0 {
		t.Fatalf("DLQ still holds %d", st.QueueSize)
	}
}

func TestEngineAdminRefusesBadTargets(t *testing.T) {
	v := start(t, nil)
	for _, tc := range []struct {
		name string
		run  func() error
		want error
	}{
		{"purge of a topic", func() error { _, err := v.e.Purge(message.TopicDest("t")); return err }, engine.ErrBadDestination},
		{"purge of a missing queue", func() error { _, err := v.e.Purge(message.QueueDest("none")); return err }, engine.ErrNoSuchDestination},
		{"add of a pattern", func() error { return v.e.AddDestination(message.QueueDest("a.>")) }, engine.ErrBadDestination},
		{"move to a composite", func() error {
			_, err := v.e.MoveMessages(message.QueueDest("x"), nil, message.QueueDest("a,b"), -1)
			return err
		}, engine.ErrBadDestination},
		{"browse of a missing queue", func() error { _, err := v.e.Browse(message.QueueDest("none"), nil, 1); return err }, engine.ErrNoSuchDestination},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if ds := v.e.Destinations(); len(ds) != 0 {
		t.Fatalf("refused operations created %v", ds)
	}
}

func TestEngineAdminConnectionsAndDurables(t *testing.T) {
	v := start(t, nil)
	c := v.conn("admin-client")
	c.AddProducer(message.QueueDest("p"))
	tp := message.TopicDest("admin.news")
	s, _ := sub(t, c, engine.SubSpec{Destination: tp, DurableName: "live", AckMode: engine.AckAuto})
	sub(t, c, engine.SubSpec{Destination: tp, DurableName: "idle", AckMode: engine.AckAuto})
	c.CloseSubscription(s)
	conns := v.e.Connections()
	if len(conns) != 1 || conns[0].ClientID != "admin-client" || conns[0].ID != c.ID() || conns[0].Producers != 1 || conns[0].Protocol != "test" {
		t.Fatalf("Connections = %+v", conns)
	}
	if n := v.e.ProducerCount(message.QueueDest("p")); n != 1 {
		t.Fatalf("ProducerCount = %d, want 1", n)
	}
	if ps := v.e.Producers(); len(ps) != 1 || ps[0].ConnectionID != c.ID() || ps[0].ClientID != "admin-client" || ps[0].Destination != message.QueueDest("p") {
		t.Fatalf("Producers = %+v", ps)
	}
	var got []string
	for _, d := range v.e.DurableSubsInfo() {
		got = append(got, fmt.Sprint(d.Key.Name, "=", d.Active))
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[idle=true live=false]" {
		t.Fatalf("DurableSubsInfo = %v, want [idle=true live=false]", got)
	}
	all := v.e.AllStats()
	if !slices.ContainsFunc(all, func(d engine.DestinationSnapshot) bool { return d.Destination == tp }) {
		t.Fatalf("AllStats lacks %v: %v", tp, all)
	}
}

func TestEngineAdminConsumers(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("admin.consumers")
	sendN(t, v.conn(""), q, 3)
	c := v.conn("watcher")
	_, ch := sub(t, c, engine.SubSpec{Destination: q, Selector: "n < 2", AckMode: engine.AckIndividual, Prefetch: 5, Exclusive: true})
	ch.recv(t)
	ch.recv(t)
	v.barrier(q)
	got := v.e.Consumers()
	if len(got) != 1 {
		t.Fatalf("Consumers = %+v, want one", got)
	}
	ci := got[0]
	if ci.ClientID != "watcher" || ci.ConnectionID != c.ID() || !strings.HasPrefix(ci.ID, c.ID()+":1:") || ci.Destination != q ||
		ci.Selector != "n < 2" || ci.Prefetch != 5 || !ci.Exclusive || ci.Dispatched != 2 {
		t.Fatalf("Consumers = %+v, want watcher's exclusive consumer on %v holding 2", ci, q)
	}
}

// TestEngineAdminMoveKeepsRefusedOriginal: a copy the target shard refuses
// leaves its original on the queue, on KahaDB across a restart too. The
// message was stored while the scheduler was off; with it on, its
// malformed AMQ_SCHEDULED_CRON makes any send of it fail.
func TestEngineAdminMoveKeepsRefusedOriginal(t *testing.T) {
	v := startKahaDB(t, nil)
	q, to := message.QueueDest("admin.refused"), message.QueueDest("admin.refused.to")
	c := v.conn("")
	bad := msg(q, "bad", true)
	bad.ID = c.NextMessageID()
	bad.Props.Set(engine.ScheduledCron, message.StringValue("not a cron"))
	send(t, c, bad)
	sendN(t, c, q, 1)
	v.opts.SchedulerSupport = true
	v.restart()
	n, err := v.e.MoveMessages(q, nil, to, -1)
	if err != nil || n != 1 {
		t.Fatalf("MoveMessages = %d, %v; want 1 moved (the other refused)", n, err)
	}
	if got := browseBodies(t, v.e, q); fmt.Sprint(got) != "[bad]" {
		t.Fatalf("left on %s: %v, want [bad]", q, got)
	}
	v.restart()
	if got := browseBodies(t, v.e, q); fmt.Sprint(got) != "[bad]" {
		t.Fatalf("after a restart, %s holds %v, want [bad]", q, got)
	}
	if got := browseBodies(t, v.e, to); fmt.Sprint(got) != "[m0]" {
		t.Fatalf("after a restart, %s holds %v, want [m0]", to, got)
	}
}

// TestEngineAdminMoveAndRetryInChunks: moves and retries of more than
// AdminChunk messages go in chunks and still move each message once, in
// order; a retry with a limit moves that many; the ones a filter turns
// down stay; a move of a queue onto itself ends after one pass.
func TestEngineAdminMoveAndRetryInChunks(t *testing.T) {
	v := start(t, nil)
	q, dlq := message.QueueDest("admin.chunks"), message.QueueDest("ActiveMQ.DLQ")
	total := 2*engine.AdminChunk + 500
	sendN(t, v.conn(""), q, total)
	all := func(d message.Destination) []string {
		t.Helper()
		got, err := v.e.Browse(d, nil, 10*total)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(got))
		for i, m := range got {
			out[i] = string(m.Msg.Body)
		}
		return out
	}
	want := make([]string, total)
	for i := range want {
		want[i] = fmt.Sprint("m", i)
	}
	// The even ones to the DLQ (OriginalDestination: q), then the odd.
	if n, err := v.e.MoveMessages(q, evenN, dlq, -1); err != nil || n != total/2 {
		t.Fatalf("MoveMessages(even) = %d, %v; want %d", n, err, total/2)
	}
	if n, err := v.e.MoveMessages(q, nil, dlq, -1); err != nil || n != total/2 {
		t.Fatalf("MoveMessages(rest) = %d, %v; want %d", n, err, total/2)
	}
	if got := all(q); len(got) != 0 {
		t.Fatalf("%s still holds %d messages", q, len(got))
	}
	if got := all(dlq); len(got) != total || got[0] != "m0" || got[total/2] != "m1" {
		t.Fatalf("DLQ holds %d messages starting %v, want %d, evens first", len(got), got[:min(3, len(got))], total)
	}
	limit := engine.AdminChunk + 200
	if n, err := v.e.RetryMessages(dlq, nil, limit); err != nil || n != limit {
		t.Fatalf("RetryMessages(%d) = %d, %v; want %d", limit, n, err, limit)
	}
	if st := v.barrier(dlq); st.QueueSize != int64(total-limit) {
		t.Fatalf("DLQ holds %d after a retry of %d, want %d", st.QueueSize, limit, total-limit)
	}
	if n, err := v.e.RetryMessages(dlq, nil, -1); err != nil || n != total-limit {
		t.Fatalf("RetryMessages(all) = %d, %v; want %d", n, err, total-limit)
	}
	got := all(q)
	slices.SortFunc(got, func(a, b string) int { return strings.Compare(a, b) })
	sorted := slices.Clone(want)
	slices.SortFunc(sorted, func(a, b string) int { return strings.Compare(a, b) })
	if !slices.Equal(got, sorted) {
		t.Fatalf("%s holds %d messages after the retries, want each of the %d once", q, len(got), total)
	}
	if st := v.barrier(dlq); st.QueueSize != 0 {
		t.Fatalf("DLQ still holds %d", st.QueueSize)
	}
	// Onto itself: every message goes to the tail once, and it ends.
	if n, err := v.e.MoveMessages(q, nil, q, -1); err != nil || n != total {
		t.Fatalf("MoveMessages onto itself = %d, %v; want %d", n, err, total)
	}
	if st := v.barrier(q); st.QueueSize != int64(total) {
		t.Fatalf("%s holds %d after a move onto itself, want %d", q, st.QueueSize, total)
	}
}
