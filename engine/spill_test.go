package engine_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/tempstore"
)

// spilling runs the engine with a temp store in a test directory, segments
// of 64 KiB, and a memory limit of memLimit on destinations named small*.
func spilling(t testing.TB, dir *string, memLimit int64, mod func(*engine.Options)) func(*engine.Options) {
	*dir = filepath.Join(t.TempDir(), "tmp_storage")
	sp, err := tempstore.Open(tempstore.Options{Dir: *dir, SegmentSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return func(o *engine.Options) {
		o.Shards = 2
		o.Temp = sp
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			if strings.HasPrefix(d.Name, "small") {
				p.MemoryLimit = memLimit
			}
			if strings.HasPrefix(d.Name, "smallprio") {
				p.PrioritizedMessages = true
			}
			return p
		}
		if mod != nil {
			mod(o)
		}
	}
}

// spillMsg is a 1 KiB non-persistent message numbered i, with a property of
// every type.
func spillMsg(d message.Destination, i int) *message.Message {
	return &message.Message{
		Destination: d, ID: fmt.Sprintf("ID:spill:%d", i), BodyType: message.TextBody, Priority: 4,
		Body: []byte(fmt.Sprintf("%04d:%s", i, strings.Repeat("x", 1000))),
		Props: message.Properties{
			{Name: "n", Value: message.IntValue(int32(i))},
			{Name: "odd", Value: message.BoolValue(i%2 == 1)},
			{Name: "l", Value: message.LongValue(int64(i) << 40)},
			{Name: "d", Value: message.DoubleValue(float64(i) / 3)},
			{Name: "s", Value: message.StringValue("v" + fmt.Sprint(i))},
			{Name: "b", Value: message.BytesValue([]byte{byte(i), 1})},
		},
		Original: message.Encoded{Protocol: "test", Bytes: []byte(fmt.Sprint("orig", i))},
	}
}

func checkSpillMsg(t *testing.T, d engine.Delivery, i int) {
	t.Helper()
	m := d.Msg
	want := spillMsg(m.Destination, i)
	if string(m.Body) != string(want.Body) || m.ID != want.ID {
		t.Fatalf("delivery %q (%s), want message %d", body(d)[:4], m.ID, i)
	}
	// The engine may add a property (JMSXGroupFirstForConsumer) after them.
	if len(m.Props) < len(want.Props) || fmt.Sprint(m.Props[:len(want.Props)]) != fmt.Sprint(want.Props) {
		t.Fatalf("message %d properties %v, want %v", i, m.Props, want.Props)
	}
	if string(m.Original.Bytes) != string(want.Original.Bytes) || m.Original.Protocol != "test" {
		t.Fatalf("message %d original encoding %+v, want %+v", i, m.Original, want.Original)
	}
}

// dirBytes is the number of files in dir and their total size.
func dirBytes(t *testing.T, dir string) (files int, bytes int64) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files++
		bytes += fi.Size()
	}
	return files, bytes
}

func TestEngineSpillQueueTakesMoreThanMemory(t *testing.T) {
	const limit, n = 64 << 10, 2000 // 2 MB of messages for 64 KiB of memory
	var dir string
	v := start(t, spilling(t, &dir, limit, nil))
	q := message.QueueDest("small.q")
	p := v.conn("")
	for i := 0; i < n; i++ {
		send(t, p, spillMsg(q, i)) // waits for the completion: never blocked
	}
	st := v.barrier(q)
	if st.MemoryUsage > limit || st.BlockedSends != 0 || st.QueueSize != n {
		t.Fatalf("after %d sends: memory %d (limit %d), blocked %d, size %d", n, st.MemoryUsage, limit, st.BlockedSends, st.QueueSize)
	}
	u := v.e.Usage()
	if st.TempUsage < 1_500_000 || u.TempUsed != st.TempUsage {
		t.Fatalf("temp usage %d, broker temp used %d; want the spilled messages' bytes", st.TempUsage, u.TempUsed)
	}
	// The last records of each shard may still be in its write buffer.
	if files, bytes := dirBytes(t, dir); files < 10 || bytes < st.TempUsage/2 {
		t.Fatalf("temp dir holds %d files, %d bytes; want the segments of %d bytes", files, bytes, st.TempUsage)
	}
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 10})
	for i := 0; i < n; i++ {
		d := ch.recv(t)
		checkSpillMsg(t, d, i)
		if err := c.Ack(s, d.ID, ""); err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			if m := v.barrier(q).MemoryUsage; m > limit {
				t.Fatalf("memory %d while draining, limit %d", m, limit)
			}
		}
	}
	st = v.barrier(q)
	if st.QueueSize != 0 || st.TempUsage != 0 || st.MemoryUsage != 0 || v.e.Usage().TempUsed != 0 {
		t.Fatalf("drained: %+v, temp used %d", st, v.e.Usage().TempUsed)
	}
	// Every segment is deleted but the one being written, rewound to
	// nothing.
	if files, bytes := dirBytes(t, dir); files > 2 || bytes != 0 {
		t.Fatalf("temp dir holds %d files, %d bytes after the drain", files, bytes)
	}
}

func TestEngineSpillKeepsOrderPrioritySelectorsGroupsRedelivery(t *testing.T) {
	var dir string
	v := start(t, spilling(t, &dir, 16<<10, nil))
	p := v.conn("")

	// Priorities: a prioritized queue hands out 9s before 4s, spilled or not.
	pq := message.QueueDest("smallprio.q")
	for i := 0; i < 200; i++ {
		m := spillMsg(pq, i)
		if i%2 == 1 {
			m.Priority = 9
		}
		send(t, p, m)
	}
	if v.barrier(pq).TempUsage == 0 {
		t.Fatal("nothing spilled on the prioritized queue")
	}
	_, pch := sub(t, v.conn(""), engine.SubSpec{Destination: pq, AckMode: engine.AckAuto})
	for k := 0; k < 200; k++ {
		want := 2*k + 1
		if k >= 100 {
			want = 2 * (k - 100)
		}
		checkSpillMsg(t, pch.recv(t), want)
	}

	// Selectors and groups: an odd-only consumer, then a consumer that
	// takes the rest; group g's first message is flagged.
	q := message.QueueDest("small.sel")
	for i := 0; i < 200; i++ {
		m := spillMsg(q, i)
		if i >= 150 {
			m.GroupID = "g"
		}
		send(t, p, m)
	}
	if v.barrier(q).TempUsage == 0 {
		t.Fatal("nothing spilled on the selector queue")
	}
	oc := v.conn("")
	os, och := sub(t, oc, engine.SubSpec{Destination: q, Selector: "odd = TRUE AND n < 150", AckMode: engine.AckIndividual})
	for i := 1; i < 150; i += 2 {
		d := och.recv(t)
		checkSpillMsg(t, d, i)
		oc.Ack(os, d.ID, "")
	}
	// Redelivery: the rest goes to a consumer that closes without acking,
	// then to another, marked redelivered, in order.
	rc := v.conn("")
	_, rch := sub(t, rc, engine.SubSpec{Destination: q, Selector: "n >= 0", AckMode: engine.AckIndividual, Prefetch: 30})
	for i := 0; i < 30; i++ {
		checkSpillMsg(t, rch.recv(t), 2*i)
	}
	rc.Close()
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, Selector: "n >= 0", AckMode: engine.AckIndividual})
	for i := 0; i < 200; i++ {
		if i < 150 && i%2 == 1 {
			continue
		}
		d := ch.recv(t)
		checkSpillMsg(t, d, i)
		if redelivered := d.Redeliveries > 0; redelivered != (i < 60) {
			t.Fatalf("message %d: redeliveries %d", i, d.Redeliveries)
		}
		if first, _ := d.Msg.Props.Get("JMSXGroupFirstForConsumer"); first.Bool() != (i == 150) {
			t.Fatalf("message %d: JMSXGroupFirstForConsumer %v", i, first.Bool())
		}
		c.Ack(s, d.ID, "")
	}
	if st := v.barrier(q); st.QueueSize != 0 || st.TempUsage != 0 {
		t.Fatalf("after the drain %+v", st)
	}
}

func TestEngineSpillExpiryAndBrowse(t *testing.T) {
	var dir string
	v := start(t, spilling(t, &dir, 16<<10, nil))
	q := message.QueueDest("small.exp")
	p := v.conn("")
	now := v.clock.now().UnixMilli()
	for i := 0; i < 100; i++ {
		m := spillMsg(q, i)
		if i%2 == 0 {
			m.Expiration = now + 1000
		}
		send(t, p, m)
	}
	if v.barrier(q).TempUsage == 0 {
		t.Fatal("nothing spilled")
	}
	// A browser sees every message, spilled ones included, in order, and
	// takes nothing.
	b := v.conn("")
	_, bch := sub(t, b, engine.SubSpec{Destination: q, Browser: true})
	for i := 0; i < 100; i++ {
		checkSpillMsg(t, bch.recv(t), i)
	}
	if d := bch.recv(t); !d.BrowseEnd {
		t.Fatalf("browse went on past 100: %q", body(d))
	}
	before := v.barrier(q)
	if before.QueueSize != 100 {
		t.Fatalf("browse took messages: %+v", before)
	}
	v.clock.add(31 * time.Second) // past the expiration and the sweep period
	v.e.Tick()
	st := v.barrier(q)
	if st.ExpiredCount != 50 || st.QueueSize != 50 || st.TempUsage >= before.TempUsage {
		t.Fatalf("after the sweep %+v (temp before %d)", st, before.TempUsage)
	}
	c := v.conn("")
	_, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	for i := 1; i < 100; i += 2 {
		checkSpillMsg(t, ch.recv(t), i)
	}
	eventually(t, func() error {
		if u := v.e.Usage().TempUsed; u != 0 {
			return fmt.Errorf("temp used %d after the drain", u)
		}
		return nil
	})
}

func TestEngineSpillTempUsageFull(t *testing.T) {
	const tempLimit = 50 << 10
	var dir string
	t.Run("fail", func(t *testing.T) {
		v := start(t, spilling(t, &dir, 16<<10, func(o *engine.Options) {
			o.Limits.TempLimit = tempLimit
			o.Limits.SendFailIfNoSpace = true
		}))
		q := message.QueueDest("small.full")
		p := v.conn("")
		var err error
		i := 0
		for ; i < 1000 && err == nil; i++ {
			pc := newPending()
			if err = p.Send(spillMsg(q, i), "", pc, 1); err != nil {
				t.Fatal(err)
			}
			err = pc.wait(t, 1)
		}
		if !errors.Is(err, engine.ErrResourceAllocation) || !strings.Contains(err.Error(), "Temp Store is Full") {
			t.Fatalf("send %d: %v; want the temp store full", i, err)
		}
		if u := v.e.Usage(); u.TempUsed < tempLimit || u.TempPercent < 100 {
			t.Fatalf("usage when refused %+v", u)
		}
		// Persistent messages do not care about the temp store (the
		// memory store keeps them).
		m := spillMsg(q, i)
		m.Persistent = true
		send(t, p, m)
	})
	t.Run("block", func(t *testing.T) {
		v := start(t, spilling(t, &dir, 16<<10, func(o *engine.Options) { o.Limits.TempLimit = tempLimit }))
		q := message.QueueDest("small.block")
		p := v.conn("")
		pc := newPending()
		tok := sendUntilBlocked(t, v, p, q, pc)
		if pc.isDone(tok) {
			t.Fatal("the blocked send completed")
		}
		c := v.conn("")
		s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 5})
		for i := uint64(1); i <= tok; i++ {
			d := ch.recv(t)
			checkSpillMsg(t, d, int(i))
			c.Ack(s, d.ID, "")
		}
		if err := pc.wait(t, tok); err != nil {
			t.Fatalf("released send: %v", err)
		}
	})
}

// sendUntilBlocked sends spill messages 1, 2, ... to q (tokens as their
// numbers) until one is held back by flow control, and returns its token.
func sendUntilBlocked(t *testing.T, v *env, p *engine.Conn, q message.Destination, pc *pending) uint64 {
	t.Helper()
	tok := uint64(0)
	for v.barrier(q).BlockedNow == 0 {
		tok++
		if tok > 1000 {
			t.Fatal("a full temp store never blocked the producer")
		}
		if err := p.Send(spillMsg(q, int(tok)), "", pc, tok); err != nil {
			t.Fatal(err)
		}
	}
	return tok
}

// A send blocked on a full temp store that times out is told the temp
// store is full, not the memory.
func TestEngineSpillTempUsageFullTimeout(t *testing.T) {
	var dir string
	v := start(t, spilling(t, &dir, 16<<10, func(o *engine.Options) {
		o.Limits.TempLimit = 50 << 10
		o.Limits.SendFailIfNoSpaceAfterTimeout = time.Second
	}))
	q := message.QueueDest("small.timeout")
	p := v.conn("")
	pc := newPending()
	tok := sendUntilBlocked(t, v, p, q, pc)
	v.clock.add(2 * time.Second)
	v.e.Tick()
	err := pc.wait(t, tok)
	if !errors.Is(err, engine.ErrResourceAllocation) || !strings.Contains(err.Error(), "Temp Store is Full") {
		t.Fatalf("timed-out send: %v; want the temp store full", err)
	}
}

func TestEngineSpillTopicSlowSubscriber(t *testing.T) {
	var dir string
	v := start(t, spilling(t, &dir, 32<<10, nil))
	tp := message.TopicDest("small.t")
	slow, fast := v.conn(""), v.conn("")
	ss, sch := sub(t, slow, engine.SubSpec{Destination: tp, AckMode: engine.AckClient, Prefetch: 5})
	_, fch := sub(t, fast, engine.SubSpec{Destination: tp, AckMode: engine.AckAuto, Prefetch: 100000})
	p := v.conn("")
	const n = 500
	for i := 0; i < n; i++ {
		send(t, p, spillMsg(tp, i))
	}
	st := v.barrier(tp)
	if st.TempUsage < 400_000 || st.MemoryUsage > 32<<10 {
		t.Fatalf("slow subscriber: %+v; want its backlog spilled", st)
	}
	for i := 0; i < n; i++ {
		checkSpillMsg(t, fch.recv(t), i)
	}
	for i := 0; i < n; i++ {
		d := sch.recv(t)
		checkSpillMsg(t, d, i)
		slow.Ack(ss, d.ID, "")
	}
	if st := v.barrier(tp); st.TempUsage != 0 || v.e.Usage().TempUsed != 0 {
		t.Fatalf("after the slow subscriber caught up: %+v", st)
	}
}

func TestEngineSpillGoneAfterRestart(t *testing.T) {
	var dir string
	v := start(t, spilling(t, &dir, 16<<10, nil))
	q := message.QueueDest("small.restart")
	p := v.conn("")
	for i := 0; i < 200; i++ {
		send(t, p, spillMsg(q, i))
	}
	kept := spillMsg(q, 200)
	kept.Persistent = true
	send(t, p, kept)
	if v.barrier(q).TempUsage == 0 {
		t.Fatal("nothing spilled")
	}
	v.restart()
	if files, _ := dirBytes(t, dir); files != 0 {
		t.Fatalf("%d temp files left after the engine stopped", files)
	}
	if u := v.e.Usage(); u.TempUsed != 0 {
		t.Fatalf("temp used %d after a restart", u.TempUsed)
	}
	// The persistent message survives; the spilled ones are gone.
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	checkSpillMsg(t, ch.recv(t), 200)
	v.barrier(q)
	ch.none(t)
}

func TestEngineSpillNotForTemporaryQueues(t *testing.T) {
	var dir string
	v := start(t, spilling(t, &dir, 0, func(o *engine.Options) {
		o.Limits.MemoryLimit = 64 << 10
		o.Limits.SendFailIfNoSpace = true
	}))
	owner := v.conn("")
	tq, err := owner.CreateTemp(false)
	if err != nil {
		t.Fatal(err)
	}
	var sendErr error
	for i := 0; i < 1000 && sendErr == nil; i++ {
		pc := newPending()
		if err := owner.Send(spillMsg(tq, i), "", pc, 1); err != nil {
			t.Fatal(err)
		}
		sendErr = pc.wait(t, 1)
	}
	if !errors.Is(sendErr, engine.ErrResourceAllocation) || !strings.Contains(sendErr.Error(), "Memory") {
		t.Fatalf("temp queue past the memory limit: %v; want the memory limit", sendErr)
	}
	if st := v.barrier(tq); st.TempUsage != 0 || v.e.Usage().TempUsed != 0 {
		t.Fatalf("temporary queue spilled: %+v", st)
	}
	// A plain queue of the same broker spills past the same limit.
	q := message.QueueDest("plain")
	p := v.conn("")
	for i := 0; i < 100; i++ {
		send(t, p, spillMsg(q, i))
	}
	if st := v.barrier(q); st.TempUsage == 0 {
		t.Fatalf("plain queue did not spill: %+v", st)
	}
}
