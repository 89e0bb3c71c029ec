package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/tempstore"
)

// Persistent messages paged out of memory (spill.go): a real KahaDB store
// (fsynced journal) and a real temp store in a test directory.

const pageMemLimit = 256 << 10

type pagingEnv struct {
	*env
	dir  string
	kaha *kahadb.Store
	mod  func(*engine.Options)
	runs int
}

func startPaging(t *testing.T, mod func(*engine.Options)) *pagingEnv {
	t.Helper()
	c := &clock{}
	c.ms.Store(1_700_000_000_000)
	v := &pagingEnv{env: &env{t: t, clock: c}, dir: t.TempDir(), mod: mod}
	v.open()
	t.Cleanup(v.close)
	return v
}

func (v *pagingEnv) open() {
	v.t.Helper()
	k, err := kahadb.Open(context.Background(), kahadb.Options{Dir: filepath.Join(v.dir, "kahadb"), EnableJournalDiskSyncs: true})
	if err != nil {
		v.t.Fatal(err)
	}
	v.runs++
	tmp, err := tempstore.Open(tempstore.Options{Dir: filepath.Join(v.dir, fmt.Sprint("tmp_storage", v.runs)), SegmentSize: 64 << 10})
	if err != nil {
		v.t.Fatal(err)
	}
	v.kaha = k
	v.opts = engine.Options{Shards: 2, Store: k, Temp: tmp, Now: v.clock.now, TickInterval: time.Hour,
		Limits: engine.Limits{MemoryLimit: pageMemLimit}}
	if v.mod != nil {
		v.mod(&v.opts)
	}
	e, err := engine.New(v.opts)
	if err != nil {
		v.t.Fatal(err)
	}
	v.e = e
}

func (v *pagingEnv) close() {
	v.t.Helper()
	if v.e != nil {
		if err := v.e.Close(); err != nil {
			v.t.Error(err)
		}
		v.e = nil
	}
	if v.kaha != nil {
		if err := v.kaha.Close(); err != nil {
			v.t.Error(err)
		}
		v.kaha = nil
	}
}

func (v *pagingEnv) restart() {
	v.t.Helper()
	v.close()
	v.open()
}

// pageMsg is a 1 KiB persistent message numbered i, with a property of
// every type.
func pageMsg(d message.Destination, i int) *message.Message {
	m := spillMsg(d, i)
	m.ID = fmt.Sprintf("ID:page-1:1:1:%d", i)
	m.Persistent = true
	m.Original = message.Encoded{}
	return m
}

func checkPageMsg(t *testing.T, d engine.Delivery, i int) {
	t.Helper()
	m := d.Msg
	want := pageMsg(m.Destination, i)
	if m.ID != want.ID || string(m.Body) != string(want.Body) {
		t.Fatalf("delivery %s %.8q, want message %d (%s)", m.ID, m.Body, i, want.ID)
	}
	for _, w := range want.Props {
		if g, ok := m.Props.Get(w.Name); !ok || fmt.Sprint(g) != fmt.Sprint(w.Value) {
			t.Fatalf("message %d property %s: got %v, want %v", i, w.Name, g, w.Value)
		}
	}
}

// sendAll sends ms without waiting for each completion (the writer groups
// them), then waits for every one; it fails on any error.
func sendAll(t *testing.T, c *engine.Conn, ms []*message.Message) {
	t.Helper()
	p := newPending()
	for i, m := range ms {
		if err := c.Send(m, "", p, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range ms {
		if err := p.wait(t, uint64(i+1)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
}

func pageMsgs(d message.Destination, from, to int, mod func(*message.Message, int)) []*message.Message {
	var ms []*message.Message
	for i := from; i < to; i++ {
		m := pageMsg(d, i)
		if mod != nil {
			mod(m, i)
		}
		ms = append(ms, m)
	}
	return ms
}

// A persistent backlog ten times the memory limit is taken without
// blocking a producer; memory stays under the limit; a consumer gets it
// all, in order, intact; the temp usage never counts it.
func TestEnginePagingPersistentBacklog(t *testing.T) {
	const n = 2600 // 1 KiB each: 10× pageMemLimit
	v := startPaging(t, nil)
	q := message.QueueDest("paged.q")
	p := v.conn("")
	sendAll(t, p, pageMsgs(q, 0, n, nil))
	st := v.barrier(q)
	u := v.e.Usage()
	if st.BlockedSends != 0 || st.QueueSize != n {
		t.Fatalf("after %d sends: blocked %d, size %d", n, st.BlockedSends, st.QueueSize)
	}
	if u.MemoryUsed > pageMemLimit || st.MemoryUsage > pageMemLimit {
		t.Fatalf("memory used %d (destination %d), limit %d", u.MemoryUsed, st.MemoryUsage, pageMemLimit)
	}
	if u.TempUsed != 0 || st.TempUsage != 0 {
		t.Fatalf("temp used %d (destination %d): persistent messages paged out must not count there", u.TempUsed, st.TempUsage)
	}
	if u.StoreUsed < n*1000 {
		t.Fatalf("store used %d, want the %d messages' bytes", u.StoreUsed, n)
	}
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 50})
	for i := 0; i < n; i++ {
		d := ch.recv(t)
		checkPageMsg(t, d, i)
		c.Ack(s, d.ID, "")
		if i%500 == 0 {
			if mu := v.e.Usage().MemoryUsed; mu > pageMemLimit {
				t.Fatalf("memory used %d while draining, limit %d", mu, pageMemLimit)
			}
		}
	}
	eventually(t, func() error {
		if u := v.e.Usage(); u.MemoryUsed != 0 || u.StoreUsed != 0 {
			return fmt.Errorf("after the drain: memory %d, store %d", u.MemoryUsed, u.StoreUsed)
		}
		return nil
	})
	// Nothing is left to come back.
	v.restart()
	if st := v.barrier(q); st.QueueSize != 0 {
		t.Fatalf("after a restart: %d messages, want 0", st.QueueSize)
	}
}

// A restart leaves the pending messages in the store (stubs): memory usage
// stays near 0 after recovery, from the checkpoint index or from a full
// replay, and everything is delivered in order, intact.
func TestEnginePagingRestartRecoversStubs(t *testing.T) {
	const n = 3000
	for _, replay := range []bool{false, true} {
		t.Run(fmt.Sprint("replay=", replay), func(t *testing.T) {
			v := startPaging(t, func(o *engine.Options) { o.Limits.MemoryLimit = 0 })
			q := message.QueueDest("restart.q")
			sendAll(t, v.conn(""), pageMsgs(q, 0, n, nil))
			if u := v.e.Usage(); u.MemoryUsed < n*1000 {
				t.Fatalf("before the restart: memory %d, want the backlog in memory (no limit)", u.MemoryUsed)
			}
			v.close()
			if replay {
				for _, sh := range []string{"shard-0-of-2", "shard-1-of-2"} {
					if err := os.Remove(filepath.Join(v.dir, "kahadb", sh, "wharf-index.bin")); err != nil && !errors.Is(err, os.ErrNotExist) {
						t.Fatal(err)
					}
				}
			}
			v.open()
			if r := v.kaha.Recovery(); (r.FromIndex > 0) == replay {
				t.Fatalf("recovery %+v: want from the index %v", r, !replay)
			}
			st := v.barrier(q)
			u := v.e.Usage()
			if st.QueueSize != n || u.MemoryUsed != 0 || u.StoreUsed < n*1000 {
				t.Fatalf("after the restart: size %d, memory %d, store %d; want %d messages, all in the store", st.QueueSize, u.MemoryUsed, u.StoreUsed, n)
			}
			c := v.conn("")
			s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 100})
			for i := 0; i < n; i++ {
				d := ch.recv(t)
				checkPageMsg(t, d, i)
				if d.Redeliveries != 0 {
					t.Fatalf("message %d: redeliveries %d", i, d.Redeliveries)
				}
				c.Ack(s, d.ID, "")
			}
			eventually(t, func() error {
				if u := v.e.Usage(); u.MemoryUsed != 0 || u.StoreUsed != 0 {
					return fmt.Errorf("after the drain: memory %d, store %d", u.MemoryUsed, u.StoreUsed)
				}
				return nil
			})
		})
	}
}

// Browsing, expiry and the DLQ read stubs without loading them; selectors,
// priorities and message groups work on them as on messages in memory.
func TestEnginePagingStubsBrowseExpirySelectorsPrioritiesGroups(t *testing.T) {
	v := startPaging(t, func(o *engine.Options) {
		o.Limits.MemoryLimit = 0
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			if strings.HasPrefix(d.Name, "prio") {
				p.PrioritizedMessages = true
			}
			return p
		}
	})
	p := v.conn("")
	now := v.clock.now().UnixMilli()
	eq := message.QueueDest("exp.q")
	sendAll(t, p, pageMsgs(eq, 0, 100, func(m *message.Message, i int) {
		if i%2 == 0 {
			m.Expiration = now + 1000
		}
	}))
	pq := message.QueueDest("prio.q")
	sendAll(t, p, pageMsgs(pq, 0, 200, func(m *message.Message, i int) {
		if i%2 == 1 {
			m.Priority = 9
		}
	}))
	sq := message.QueueDest("sel.q")
	sendAll(t, p, pageMsgs(sq, 0, 200, func(m *message.Message, i int) {
		if i >= 150 {
			m.GroupID = "g"
		}
	}))
	v.restart()
	if u := v.e.Usage(); u.MemoryUsed != 0 {
		t.Fatalf("memory used %d after the restart, want 0", u.MemoryUsed)
	}

	// Browse: every message, in order, nothing taken, nothing loaded.
	_, bch := sub(t, v.conn(""), engine.SubSpec{Destination: eq, Browser: true})
	for i := 0; i < 100; i++ {
		checkPageMsg(t, bch.recv(t), i)
	}
	if d := bch.recv(t); !d.BrowseEnd {
		t.Fatalf("browse went on past 100: %q", body(d))
	}
	if st := v.barrier(eq); st.QueueSize != 100 || v.e.Usage().MemoryUsed != 0 {
		t.Fatalf("after browsing: %+v, memory %d", st, v.e.Usage().MemoryUsed)
	}
	// Expiry: the sweep expires the even ones, read from the store for
	// the DLQ, which gets them with their bodies.
	v.clock.add(31 * time.Second)
	v.e.Tick()
	if st := v.barrier(eq); st.ExpiredCount != 50 || st.QueueSize != 50 {
		t.Fatalf("after the sweep: %+v", st)
	}
	dlq := message.QueueDest("ActiveMQ.DLQ")
	_, dch := sub(t, v.conn(""), engine.SubSpec{Destination: dlq, AckMode: engine.AckAuto})
	for i := 0; i < 100; i += 2 {
		d := dch.recv(t)
		want := pageMsg(eq, i)
		if d.Msg.ID != want.ID || string(d.Msg.Body) != string(want.Body) || d.Msg.OriginalDestination != eq {
			t.Fatalf("DLQ: got %s %.8q from %s, want %s from %s", d.Msg.ID, d.Msg.Body, d.Msg.OriginalDestination, want.ID, eq)
		}
	}
	_, ech := sub(t, v.conn(""), engine.SubSpec{Destination: eq, AckMode: engine.AckAuto})
	for i := 1; i < 100; i += 2 {
		checkPageMsg(t, ech.recv(t), i)
	}

	// Priorities: the 9s first, each priority in order.
	_, pch := sub(t, v.conn(""), engine.SubSpec{Destination: pq, AckMode: engine.AckAuto})
	for k := 0; k < 200; k++ {
		want := 2*k + 1
		if k >= 100 {
			want = 2 * (k - 100)
		}
		checkPageMsg(t, pch.recv(t), want)
	}

	// Selectors and groups: an odd-only consumer, then one that takes the
	// rest; group g's first message is flagged.
	oc := v.conn("")
	os, och := sub(t, oc, engine.SubSpec{Destination: sq, Selector: "odd = TRUE AND n < 150", AckMode: engine.AckIndividual})
	for i := 1; i < 150; i += 2 {
		d := och.recv(t)
		checkPageMsg(t, d, i)
		oc.Ack(os, d.ID, "")
	}
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: sq, Selector: "n >= 0", AckMode: engine.AckIndividual})
	for i := 0; i < 200; i++ {
		if i < 150 && i%2 == 1 {
			continue
		}
		d := ch.recv(t)
		checkPageMsg(t, d, i)
		if first, _ := d.Msg.Props.Get("JMSXGroupFirstForConsumer"); first.Bool() != (i == 150) {
			t.Fatalf("message %d: JMSXGroupFirstForConsumer %v", i, first.Bool())
		}
		c.Ack(s, d.ID, "")
	}
	eventually(t, func() error {
		if u := v.e.Usage(); u.MemoryUsed != 0 || u.StoreUsed != 0 {
			return fmt.Errorf("after the drains: memory %d, store %d", u.MemoryUsed, u.StoreUsed)
		}
		return nil
	})
}

// A durable subscription's topic backlog pages out while it is offline,
// comes back as stubs after a restart, and is delivered in order.
func TestEnginePagingDurableTopicBacklog(t *testing.T) {
	const n = 1500
	v := startPaging(t, nil)
	tp := message.TopicDest("paged.t")
	spec := engine.SubSpec{Destination: tp, DurableName: "d", AckMode: engine.AckIndividual, Prefetch: 50}
	for _, id := range []string{"c1", "c2"} {
		sc := v.conn(id)
		sub(t, sc, spec)
		sc.Close()
	}
	sendAll(t, v.conn(""), pageMsgs(tp, 0, n, nil))
	if u := v.e.Usage(); u.MemoryUsed > pageMemLimit || u.TempUsed != 0 {
		t.Fatalf("offline backlog of %d: memory %d (limit %d), temp %d", n, u.MemoryUsed, pageMemLimit, u.TempUsed)
	}
	drain := func(id string, from int) {
		c := v.conn(id)
		s, ch := sub(t, c, spec)
		for i := from; i < n; i++ {
			d := ch.recv(t)
			checkPageMsg(t, d, i)
			c.Ack(s, d.ID, "")
		}
		v.barrier(tp)
		ch.none(t)
		c.Close()
	}
	drain("c1", 0) // paged out at run time
	v.restart()
	if u := v.e.Usage(); u.MemoryUsed != 0 {
		t.Fatalf("memory used %d after the restart, want 0", u.MemoryUsed)
	}
	drain("c2", 0) // stubs recovered from the store
	eventually(t, func() error {
		if u := v.e.Usage(); u.MemoryUsed != 0 || u.StoreUsed != 0 {
			return fmt.Errorf("after the drains: memory %d, store %d", u.MemoryUsed, u.StoreUsed)
		}
		return nil
	})
}

// Producer flow control: a persistent send to a destination that pages
// out meets the store limit, not the memory limit; a queue with the VM
// cursor keeps everything in memory and meets the memory limit.
func TestEnginePagingFlowControlStoreNotMemory(t *testing.T) {
	const storeLimit = 1 << 20
	v := startPaging(t, func(o *engine.Options) {
		o.Limits.StoreLimit = storeLimit
		o.Limits.SendFailIfNoSpace = true
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			p.VMCursor = strings.HasPrefix(d.Name, "vm")
			return p
		}
	})
	p := v.conn("")
	q := message.QueueDest("fc.q")
	sent := 0
	var sendErr error
	for ; sent < 3000 && sendErr == nil; sent++ {
		pc := newPending()
		if err := p.Send(pageMsg(q, sent), "", pc, 1); err != nil {
			t.Fatal(err)
		}
		sendErr = pc.wait(t, 1)
	}
	u := v.e.Usage()
	if !errors.Is(sendErr, engine.ErrResourceAllocation) || !strings.Contains(sendErr.Error(), "Store") {
		t.Fatalf("after %d sends (memory %d, store %d): %v; want the store limit", sent, u.MemoryUsed, u.StoreUsed, sendErr)
	}
	if u.StoreUsed < storeLimit || sent*1000 < 2*pageMemLimit || u.MemoryUsed > pageMemLimit {
		t.Fatalf("refused after %d sends: store %d (limit %d), memory %d (limit %d); want the store full, past the memory limit", sent, u.StoreUsed, storeLimit, u.MemoryUsed, pageMemLimit)
	}
	// Consuming frees store room: sends go through again.
	c := v.conn("")
	s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual, Prefetch: 10})
	for i := 0; i < 200; i++ {
		d := ch.recv(t)
		checkPageMsg(t, d, i)
		c.Ack(s, d.ID, "")
	}
	c.Close()
	eventually(t, func() error {
		if u := v.e.Usage(); u.StoreUsed >= storeLimit {
			return fmt.Errorf("store used %d", u.StoreUsed)
		}
		return nil
	})
	sendAll(t, p, pageMsgs(q, 5000, 5010, nil))

	// The VM cursor: persistent sends meet the memory limit.
	v = startPaging(t, func(o *engine.Options) {
		o.Limits.SendFailIfNoSpace = true
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			p.VMCursor = true
			return p
		}
	})
	p = v.conn("")
	vq := message.QueueDest("vm.q")
	sendErr = nil
	for i := 0; i < 3000 && sendErr == nil; i++ {
		pc := newPending()
		if err := p.Send(pageMsg(vq, i), "", pc, 1); err != nil {
			t.Fatal(err)
		}
		sendErr = pc.wait(t, 1)
	}
	if !errors.Is(sendErr, engine.ErrResourceAllocation) || !strings.Contains(sendErr.Error(), "Memory") {
		t.Fatalf("vmQueueCursor queue: %v; want the memory limit", sendErr)
	}
	if st, u := v.barrier(vq), v.e.Usage(); st.MemoryUsage == 0 || st.TempUsage != 0 || u.MemoryUsed < pageMemLimit {
		t.Fatalf("vmQueueCursor queue: %d bytes in memory, %d in the temp store, broker memory %d; want its backlog in memory up to the limit", st.MemoryUsage, st.TempUsage, u.MemoryUsed)
	}
}

// A persistent message on a topic with non-durable subscribers only is not
// stored: its paged-out copies count in the temp usage, whose limit then
// holds persistent sends back too.
func TestEnginePagingTopicCopiesMeetTempLimit(t *testing.T) {
	const tempLimit = 256 << 10
	v := startPaging(t, func(o *engine.Options) {
		o.Limits.TempLimit = tempLimit
		o.Limits.SendFailIfNoSpace = true
	})
	tp := message.TopicDest("nondurable.t")
	sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckIndividual, Prefetch: 1})
	p := v.conn("")
	var sendErr error
	sent := 0
	for ; sent < 3000 && sendErr == nil; sent++ {
		pc := newPending()
		if err := p.Send(pageMsg(tp, sent), "", pc, 1); err != nil {
			t.Fatal(err)
		}
		sendErr = pc.wait(t, 1)
	}
	u := v.e.Usage()
	if !errors.Is(sendErr, engine.ErrResourceAllocation) || !strings.Contains(sendErr.Error(), "Temp") {
		t.Fatalf("after %d sends (memory %d, temp %d, store %d): %v; want the temp limit", sent, u.MemoryUsed, u.TempUsed, u.StoreUsed, sendErr)
	}
	if u.TempUsed < tempLimit || u.StoreUsed != 0 || u.MemoryUsed > pageMemLimit {
		t.Fatalf("refused after %d sends: temp %d (limit %d), store %d, memory %d; want the temp store full, nothing stored", sent, u.TempUsed, tempLimit, u.StoreUsed, u.MemoryUsed)
	}
}
