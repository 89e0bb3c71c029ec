package engine

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
)

// Scripted scenarios (STYLE.md §9): each file under testdata/scenarios is
// a list of blocks
//
//	# comments
//	<command>
//	----
//	<what the shard's turns produced, one line each>
//	<blank line>
//
// The runner builds an engine of one shard that nobody runs (newEngine),
// with a clock of its own and a store that keeps nothing, performs each
// command through the public API on a goroutine of its own, and steps the
// shard itself, turn by turn, until the command has returned and nothing
// is left queued. Each turn's batch is printed in the order it is carried
// out (turn.go): deliveries (made during the turn), forwards, store
// operations, the completions released after the store write, replies. Run with
// -rewrite to write what the shard did into the files, then review the
// diff.
//
// Commands:
//
//	engine [max-redeliveries=N] [prioritized]      (first, or defaults)
//	connect CONN [client-id=ID]
//	subscribe SUB conn=CONN dest=queue://q [prefetch=N] [ack=auto|client|individual]
//	          [selector="..."] [exclusive] [priority=N] [durable=NAME]
//	close SUB
//	send CONN DEST MSG [persistent] [priority=N] [group=G] [group-seq=N] [ttl=DUR] [tx=T]
//	ack SUB MSG [tx=T]            (the last delivery of MSG to SUB)
//	nack SUB MSG poison|redeliver|release
//	begin|commit|rollback CONN T
//	tick DUR                      (moves the clock on, then Engine.Tick)
//	stats DEST
var rewrite = flag.Bool("rewrite", false, "write the scenarios' actual output into testdata/scenarios")

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/scenarios/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScenario(t, f) })
	}
}

// block is one command of a scenario and what it should produce.
type block struct {
	line     int
	comments []string
	cmd      string
	want     []string
}

func readScenario(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []block
	var b *block
	inWant := false
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		switch {
		case inWant && l == "":
			out = append(out, *b)
			b, inWant = nil, false
		case inWant:
			b.want = append(b.want, l)
		case l == "----":
			if b == nil || b.cmd == "" {
				t.Fatalf("%s:%d: ---- without a command", path, n)
			}
			inWant = true
		case b != nil && b.cmd != "":
			t.Fatalf("%s:%d: a second command in one block: %q", path, n, l)
		case strings.HasPrefix(l, "#") || l == "":
			if b == nil {
				b = &block{}
			}
			b.comments = append(b.comments, l)
		default:
			if b == nil {
				b = &block{}
			}
			b.cmd, b.line = l, n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if b != nil && b.cmd != "" {
		if !inWant {
			t.Fatalf("%s: the last command has no ----", path)
		}
		out = append(out, *b)
	}
	return out
}

func runScenario(t *testing.T, path string) {
	blocks := readScenario(t, path)
	h := &harness{t: t, conns: map[string]*Conn{}, subs: map[string]*Subscription{}, last: map[string]uint64{}}
	t.Cleanup(h.close)
	var rewritten strings.Builder
	for _, b := range blocks {
		got := h.run(b)
		if *rewrite {
			for _, c := range b.comments {
				if c != "" || rewritten.Len() > 0 {
					rewritten.WriteString(c + "\n")
				}
			}
			rewritten.WriteString(b.cmd + "\n----\n")
			for _, g := range got {
				rewritten.WriteString(g + "\n")
			}
			rewritten.WriteString("\n")
			continue
		}
		if strings.Join(got, "\n") != strings.Join(b.want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n  %s\nwant:\n  %s", path, b.line, b.cmd,
				strings.Join(got, "\n  "), strings.Join(b.want, "\n  "))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(rewritten.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// harness drives one engine of one shard for a scenario.
type harness struct {
	t     *testing.T
	e     *Engine
	now   int64 // ms
	conns map[string]*Conn
	subs  map[string]*Subscription
	// last is the last delivery id of each "SUB MSG".
	last map[string]uint64
	// sends labels the completions of sends by token.
	sends []string
}

// nullStore keeps nothing: the scenarios read store operations from the
// batches.
type nullStore struct{}

func (nullStore) OpenShard(int, int) (ShardStore, error)  { return nullStore{}, nil }
func (nullStore) Close() error                            { return nil }
func (nullStore) Apply([]StoreOp) error                   { return nil }
func (nullStore) Recover(func(RecoveredItem) error) error { return nil }

// namedSink is a subscription's sink under its name in the scenario; the
// batch records what it is handed.
type namedSink string

func (namedSink) Deliver(Delivery) {}

// sendLabels tells the harness's send completions apart by token.
type sendLabels struct{}

func (sendLabels) Complete(uint64, error) {}

func (h *harness) start(pol Policy) {
	h.now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	e, err := newEngine(context.Background(), Options{
		Shards:            1,
		Store:             nullStore{},
		Now:               func() time.Time { return time.UnixMilli(h.now) },
		PolicyFor:         func(message.Destination) Policy { return pol },
		DisableAdvisories: true,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.e = e
	e.shards[0].out.record = true
}

func (h *harness) close() {
	if h.e != nil {
		h.e.Close()
	}
}

// args splits a command line into words, keeping "quoted text" whole, and
// its key=value words into a map.
func args(line string) (words []string, kv map[string]string) {
	kv = map[string]string{}
	var cur strings.Builder
	quoted := false
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		w := cur.String()
		cur.Reset()
		if k, v, ok := strings.Cut(w, "="); ok {
			kv[k] = v
			return
		}
		words = append(words, w)
	}
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
		case r == ' ' && !quoted:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return words, kv
}

func dest(t *testing.T, s string) message.Destination {
	t.Helper()
	switch {
	case strings.HasPrefix(s, "queue://"):
		return message.QueueDest(strings.TrimPrefix(s, "queue://"))
	case strings.HasPrefix(s, "topic://"):
		return message.TopicDest(strings.TrimPrefix(s, "topic://"))
	}
	t.Fatalf("destination %q is neither queue:// nor topic://", s)
	return message.Destination{}
}

func (h *harness) num(kv map[string]string, key string, def int) int {
	v, ok := kv[key]
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		h.t.Fatalf("%s=%q is not a number", key, v)
	}
	return n
}

func (h *harness) run(b block) []string {
	t := h.t
	w, kv := args(b.cmd)
	if len(w) == 0 {
		t.Fatalf("line %d: empty command", b.line)
	}
	need := func(n int) {
		if len(w) < n+1 {
			t.Fatalf("line %d: %s needs %d arguments", b.line, w[0], n)
		}
	}
	if w[0] == "engine" {
		if h.e != nil {
			t.Fatalf("line %d: engine must come first", b.line)
		}
		pol := DefaultPolicy()
		pol.MaxRedeliveries = h.num(kv, "max-redeliveries", pol.MaxRedeliveries)
		pol.PrioritizedMessages = strings.Contains(b.cmd, " prioritized")
		h.start(pol)
		return nil
	}
	if h.e == nil {
		h.start(DefaultPolicy())
	}
	switch w[0] {
	case "connect":
		need(1)
		return h.do(func() (string, error) {
			c, err := h.e.Connect(Credentials{ClientID: kv["client-id"]})
			h.conns[w[1]] = c
			return "", err
		})
	case "subscribe":
		need(1)
		spec := SubSpec{
			Destination: dest(t, kv["dest"]),
			Prefetch:    h.num(kv, "prefetch", 1000),
			Selector:    kv["selector"],
			Priority:    int8(h.num(kv, "priority", 0)),
			DurableName: kv["durable"],
			Exclusive:   strings.Contains(b.cmd, " exclusive"),
		}
		switch kv["ack"] {
		case "", "individual":
			spec.AckMode = AckIndividual
		case "client":
			spec.AckMode = AckClient
		case "auto":
			spec.AckMode = AckAuto
		default:
			t.Fatalf("line %d: ack=%q", b.line, kv["ack"])
		}
		c := h.conn(kv["conn"])
		return h.do(func() (string, error) {
			sub, err := c.Subscribe(spec, namedSink(w[1]))
			if err == nil {
				h.subs[w[1]] = sub
			}
			return "", err
		})
	case "close":
		need(1)
		sub := h.sub(w[1])
		return h.do(func() (string, error) { return "", sub.conn.CloseSubscription(sub) })
	case "send":
		need(3)
		m := &message.Message{ID: w[3], Destination: dest(t, w[2]), Body: []byte(w[3]), BodyType: message.BytesBody,
			Priority: uint8(h.num(kv, "priority", 4)), Persistent: strings.Contains(b.cmd, " persistent"),
			GroupID: kv["group"], GroupSeq: int32(h.num(kv, "group-seq", 0)), Timestamp: h.now}
		if ttl, ok := kv["ttl"]; ok {
			d, err := time.ParseDuration(ttl)
			if err != nil {
				t.Fatalf("line %d: ttl: %v", b.line, err)
			}
			m.Expiration = h.now + d.Milliseconds()
		}
		c := h.conn(w[1])
		h.sends = append(h.sends, "send "+w[3])
		tok := uint64(len(h.sends) - 1)
		return h.do(func() (string, error) { return "", c.Send(m, kv["tx"], sendLabels{}, tok) })
	case "ack", "nack":
		need(2)
		sub := h.sub(w[1])
		id, ok := h.last[w[1]+" "+w[2]]
		if !ok {
			t.Fatalf("line %d: %s was never delivered %s", b.line, w[1], w[2])
		}
		if w[0] == "ack" {
			return h.do(func() (string, error) { return "", sub.conn.Ack(sub, id, kv["tx"]) })
		}
		need(3)
		kinds := map[string]NackKind{"poison": NackPoison, "redeliver": NackRedeliver, "release": NackRelease}
		kind, ok := kinds[w[3]]
		if !ok {
			t.Fatalf("line %d: nack kind %q", b.line, w[3])
		}
		return h.do(func() (string, error) { return "", sub.conn.Nack(sub, id, kind, "") })
	case "begin", "commit", "rollback":
		need(2)
		c := h.conn(w[1])
		fns := map[string]func(string) error{"begin": c.Begin, "commit": c.Commit, "rollback": c.Rollback}
		return h.do(func() (string, error) { return "", fns[w[0]](w[2]) })
	case "tick":
		need(1)
		d, err := time.ParseDuration(strings.TrimPrefix(w[1], "+"))
		if err != nil {
			t.Fatalf("line %d: tick: %v", b.line, err)
		}
		h.now += d.Milliseconds()
		return h.do(func() (string, error) { h.e.Tick(); return "", nil })
	case "stats":
		need(1)
		d := dest(t, w[1])
		return h.do(func() (string, error) {
			st := h.e.Stats(d)
			return fmt.Sprintf("stats enqueued=%d dequeued=%d dispatched=%d inflight=%d size=%d expired=%d consumers=%d",
				st.EnqueueCount, st.DequeueCount, st.DispatchCount, st.InFlightCount, st.QueueSize, st.ExpiredCount, st.ConsumerCount), nil
		})
	}
	t.Fatalf("line %d: unknown command %q", b.line, w[0])
	return nil
}

func (h *harness) conn(name string) *Conn {
	c := h.conns[name]
	if c == nil {
		h.t.Fatalf("no connection %q", name)
	}
	return c
}

func (h *harness) sub(name string) *Subscription {
	s := h.subs[name]
	if s == nil {
		h.t.Fatalf("no subscription %q", name)
	}
	return s
}

// do runs fn, an API call, on a goroutine of its own while it steps the
// shard: a turn for whatever fn (or an earlier turn) queued, until fn
// has returned and nothing is queued. It returns the turns' output, then
// fn's result line and error, if any.
func (h *harness) do(fn func() (string, error)) []string {
	s := h.e.shards[0]
	type result struct {
		line string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		line, err := fn()
		done <- result{line, err}
	}()
	var out []string
	var res *result
	for {
		if cmds := s.gather(nil); len(cmds) > 0 {
			out = append(out, h.turn(cmds)...)
			continue
		}
		if res != nil {
			if res.line != "" {
				out = append(out, res.line)
			}
			if res.err != nil {
				out = append(out, "error: "+res.err.Error())
			}
			return out
		}
		select {
		case r := <-done:
			res = &r
		case c := <-s.inbox:
			out = append(out, h.turn(s.gather([]command{c}))...)
		case <-s.mailSig:
			if cmds := s.takeMail(nil); len(cmds) > 0 {
				out = append(out, h.turn(cmds)...)
			}
		case <-time.After(10 * time.Second):
			h.t.Fatal("the command neither returned nor posted anything for 10 s")
		}
	}
}

// turn steps the shard once and prints its batch, then carries it out.
func (h *harness) turn(cmds []command) []string {
	s := h.e.shards[0]
	b := s.step(h.now, cmds)
	var out []string
	for _, d := range b.deliveries {
		name := string(d.Sub.sink.(namedSink))
		h.last[name+" "+d.Msg.ID] = d.ID
		l := fmt.Sprintf("deliver %s %s id=%d redeliveries=%d", name, d.Msg.ID, d.ID>>8, d.Redeliveries)
		if v, ok := d.Msg.Props.Get("JMSXGroupFirstForConsumer"); ok && v.Bool() {
			l += " group-first"
		}
		if v, ok := d.Msg.Props.Get("dlqDeliveryFailureCause"); ok {
			l += " from=" + d.Msg.OriginalDestination.String() + " cause=" + strconv.Quote(v.Text())
		}
		out = append(out, l)
	}
	for _, f := range b.forwards {
		l := fmt.Sprintf("forward shard=%d %s", f.to.idx, f.cmd.op)
		if f.cmd.msg != nil {
			l += " " + f.cmd.msg.Destination.String() + " " + f.cmd.msg.ID
		}
		out = append(out, l)
	}
	for _, op := range b.ops {
		out = append(out, "store "+storeOpString(op))
	}
	for _, c := range b.comps {
		l := "complete " + c.op.String()
		if _, ok := c.comp.(sendLabels); ok {
			l = "complete " + h.sends[c.token]
		}
		out = append(out, l+" "+errString(c.err))
	}
	for _, r := range b.replies {
		out = append(out, "reply "+r.op.String()+" "+errString(r.err))
	}
	s.execute(b)
	return out
}

func errString(err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return "ok"
}

var storeOpNames = map[StoreOpKind]string{
	OpAdd: "add", OpRemove: "remove", OpAck: "ack", OpAddSub: "add-sub", OpRemoveSub: "remove-sub",
	OpUpdate: "update", OpRemoveDest: "remove-dest", OpAddJob: "add-job", OpRemoveJob: "remove-job",
	OpPrepare: "prepare", OpCommit: "commit", OpRollback: "rollback", OpDelivered: "delivered", OpAddDest: "add-dest",
}

func storeOpString(op StoreOp) string {
	l := storeOpNames[op.Kind] + " " + op.Dest.String()
	switch op.Kind {
	case OpAdd:
		l += fmt.Sprintf(" seq=%d %s", op.Seq, op.Msg.ID)
		for _, k := range op.Subs {
			l += " sub=" + k.String()
		}
	case OpRemove, OpAck, OpUpdate, OpDelivered:
		l += fmt.Sprintf(" seq=%d", op.Seq)
		if op.Sub.Key != (SubKey{}) {
			l += " sub=" + op.Sub.Key.String()
		}
	}
	return strings.TrimSpace(l)
}

// runForTest runs fn on shard i of an engine whose loops run, and waits:
// the closure escape hatch, for tests only (opTestFn).
func (e *Engine) runForTest(i int, fn func(*shard)) error {
	return e.request([]int{i}, func(*shard) command { return command{op: opTestFn, ctl: fn} })
}

// chanSink hands deliveries to the test goroutine.
type chanSink chan Delivery

func (c chanSink) Deliver(d Delivery) { c <- d }

// TestEngineRunLoopKeepsNoDeliveries: outside scenarios the batch does not
// record deliveries (they would pile up for nobody), which runForTest
// reads on the shard after one was made.
func TestEngineRunLoopKeepsNoDeliveries(t *testing.T) {
	e, err := New(Options{Shards: 1, DisableAdvisories: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	c, err := e.Connect(Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	sink := make(chanSink, 1)
	q := message.QueueDest("q")
	if _, err := c.Subscribe(SubSpec{Destination: q, Prefetch: 1}, sink); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(&message.Message{Destination: q, Body: []byte("x")}, "", nil, 0); err != nil {
		t.Fatal(err)
	}
	<-sink
	var record bool
	kept := -1
	if err := e.runForTest(0, func(s *shard) { record, kept = s.out.record, len(s.out.deliveries) }); err != nil {
		t.Fatal(err)
	}
	if record || kept != 0 {
		t.Fatalf("run loop: record=%v, %d deliveries kept; want false, 0", record, kept)
	}
}
