package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/memory"
)

// testAuthz is an Authorizer that refuses user "bob" what its rules name
// (action and a destination pattern, "queue://secret.>") and records every
// question it is asked. Everyone else may do anything.
type testAuthz struct {
	mu    sync.Mutex
	deny  []denyRule
	calls []string // "user action dest"
}

type denyRule struct {
	a       engine.Action
	pattern message.Destination
}

func deny(a engine.Action, pattern string) denyRule {
	return denyRule{a, message.ParseQualified(pattern, message.Queue)}
}

// refusal is what a real authorizer returns: ErrNotAuthorized wrapped, with
// ActiveMQ's words for the client.
func refusal(user string, a engine.Action, d message.Destination) error {
	verb := map[engine.Action]string{engine.ActionRead: "read from", engine.ActionWrite: "write to", engine.ActionAdmin: "create"}[a]
	return engine.WithClientText(fmt.Errorf("%w: %s %s %s", engine.ErrNotAuthorized, user, a, d),
		"User "+user+" is not authorized to "+verb+": "+d.String())
}

func (z *testAuthz) Authorize(s *engine.Subject, a engine.Action, d message.Destination) error {
	z.mu.Lock()
	defer z.mu.Unlock()
	z.calls = append(z.calls, s.User+" "+a.String()+" "+d.String())
	if s.User != "bob" {
		return nil
	}
	for _, r := range z.deny {
		if r.a == a && r.pattern.Type == d.Type && (r.pattern.Name == d.Name || message.MatchName(r.pattern.Name, d.Name)) {
			return refusal(s.User, a, d)
		}
	}
	return nil
}

func (z *testAuthz) add(r denyRule) {
	z.mu.Lock()
	z.deny = append(z.deny, r)
	z.mu.Unlock()
}

func (z *testAuthz) log() []string {
	z.mu.Lock()
	defer z.mu.Unlock()
	return slices.Clone(z.calls)
}

func (z *testAuthz) asked(call string) int {
	z.mu.Lock()
	defer z.mu.Unlock()
	n := 0
	for _, c := range z.calls {
		if c == call {
			n++
		}
	}
	return n
}

// countingStore counts the store operations the engine applies, by kind.
type countingStore struct {
	engine.Store
	ops [32]atomic.Int64
}

type countingShard struct {
	engine.ShardStore
	c *countingStore
}

func (c *countingStore) OpenShard(i, n int) (engine.ShardStore, error) {
	s, err := c.Store.OpenShard(i, n)
	if err != nil {
		return nil, err
	}
	return countingShard{s, c}, nil
}

func (s countingShard) Apply(ops []engine.StoreOp) error {
	for i := range ops {
		s.c.ops[ops[i].Kind].Add(1)
	}
	return s.ShardStore.Apply(ops)
}

type secEnv struct {
	*env
	z     *testAuthz
	store *countingStore
	admin *engine.Conn
	bob   *engine.Conn
	adv   sink // every advisory, subscribed by admin
	watch message.Destination
}

func startSecure(t *testing.T, shards int, rules []denyRule, mod func(*engine.Options)) *secEnv {
	t.Helper()
	z := &testAuthz{deny: rules}
	cs := &countingStore{Store: memory.New()}
	v := start(t, func(o *engine.Options) {
		o.Shards = shards
		o.Store = cs
		o.Authorizer = z
		if mod != nil {
			mod(o)
		}
	})
	se := &secEnv{env: v, z: z, store: cs}
	se.admin = se.connect("admin", "admin-client")
	se.bob = se.connect("bob", "bob-client")
	_, se.adv = sub(t, se.admin, engine.SubSpec{Destination: message.TopicDest("ActiveMQ.Advisory.>"), AckMode: engine.AckAuto})
	return se
}

func (se *secEnv) connect(user, clientID string) *engine.Conn {
	se.t.Helper()
	c, err := se.e.Connect(engine.Credentials{Username: user, ClientID: clientID, Protocol: "test"})
	if err != nil {
		se.t.Fatal(err)
	}
	se.t.Cleanup(func() { c.Close() })
	return c
}

// settle passes barriers through every shard until what was posted has
// been applied, forwarded copies and advisories included: with one shard
// a single round trip is enough, with more a copy mailed between shards
// may need another round.
func (se *secEnv) settle() {
	for range 3 {
		se.e.Destinations()
	}
}

// state is what a refused operation must leave as it was.
type state struct {
	dests     []string
	adds      int64 // messages written to the store
	addDests  int64
	addSubs   int64
	durables  int
	stats     map[string]engine.DestinationStats
	adviceLen int
}

func (se *secEnv) snapshot(watch ...message.Destination) state {
	se.settle()
	st := state{stats: map[string]engine.DestinationStats{}}
	for _, d := range se.e.Destinations() {
		st.dests = append(st.dests, d.String())
	}
	slices.Sort(st.dests)
	st.adds = se.store.ops[engine.OpAdd].Load()
	st.addDests = se.store.ops[engine.OpAddDest].Load()
	st.addSubs = se.store.ops[engine.OpAddSub].Load()
	st.durables = len(se.e.AllDurableSubs())
	for _, d := range watch {
		st.stats[d.String()] = se.e.Stats(d)
	}
	return st
}

// drainAdvisories empties the advisory sink after a barrier.
func (se *secEnv) drainAdvisories() []string {
	se.settle()
	var out []string
	for {
		select {
		case d := <-se.adv:
			out = append(out, d.Msg.Destination.Name)
		default:
			return out
		}
	}
}

func wantRefused(t *testing.T, err error, text string) {
	t.Helper()
	if !errors.Is(err, engine.ErrNotAuthorized) {
		t.Fatalf("error %v does not wrap ErrNotAuthorized", err)
	}
	if got := engine.ClientText(err); got != text {
		t.Fatalf("client text %q, want %q", got, text)
	}
}

// sendWait sends and waits for the outcome, whether Send refused at once
// or the shard refused later through the completion.
func sendWait(c *engine.Conn, m *message.Message, txID string) error {
	r := &result{errs: map[uint64]error{}}
	r.wg.Add(1)
	if err := c.Send(m, txID, r, 1); err != nil {
		return err
	}
	r.wg.Wait()
	return r.errs[1]
}

func q(name string) message.Destination  { return message.QueueDest(name) }
func tp(name string) message.Destination { return message.TopicDest(name) }

// TestEngineSecurityRefusalsChangeNothing is the operation x refusal table:
// each refused operation fails with an error wrapping ErrNotAuthorized that
// keeps the authorizer's client text, and leaves destinations, stored
// messages, subscriptions and advisories as they were.
func TestEngineSecurityRefusalsChangeNothing(t *testing.T) {
	rules := []denyRule{
		deny(engine.ActionWrite, "queue://secret.>"),
		deny(engine.ActionRead, "queue://secret.>"),
		deny(engine.ActionRead, "topic://secret.>"),
		deny(engine.ActionAdmin, "queue://new.>"),
		deny(engine.ActionAdmin, "topic://new.>"),
		deny(engine.ActionAdmin, "topic://ActiveMQ.Advisory.>"),
		deny(engine.ActionRead, "topic://ActiveMQ.Advisory.Connection"),
		deny(engine.ActionWrite, "temp-queue://>"),
	}
	type tc struct {
		name  string
		setup func(se *secEnv) // as admin, before the snapshot
		op    func(se *secEnv) error
		text  string
		watch []message.Destination
	}
	cases := []tc{
		{name: "send without write", setup: func(se *secEnv) { send(t, se.admin, msg(q("secret.in"), "x", true)) },
			op:   func(se *secEnv) error { return sendWait(se.bob, msg(q("secret.in"), "b", true), "") },
			text: "User bob is not authorized to write to: queue://secret.in", watch: []message.Destination{q("secret.in")}},
		{name: "send creating a queue without admin",
			op:   func(se *secEnv) error { return sendWait(se.bob, msg(q("new.orders"), "b", true), "") },
			text: "User bob is not authorized to create: queue://new.orders", watch: []message.Destination{q("new.orders")}},
		{name: "transacted send creating a queue without admin is refused at the send",
			op: func(se *secEnv) error {
				if err := se.bob.Begin("tx1"); err != nil {
					return err
				}
				err := se.bob.Send(msg(q("new.tx"), "b", true), "tx1", nil, 0)
				if cerr := se.bob.Commit("tx1"); cerr != nil {
					t.Errorf("commit after the refused send: %v", cerr)
				}
				return err
			},
			text: "User bob is not authorized to create: queue://new.tx", watch: []message.Destination{q("new.tx")}},
		{name: "composite send with one member bob may not create",
			setup: func(se *secEnv) { se.admin.Subscribe(engine.SubSpec{Destination: q("ok.a"), Prefetch: 10}, newSink()) },
			op:    func(se *secEnv) error { return sendWait(se.bob, msg(q("ok.a,new.b"), "b", true), "") },
			text:  "User bob is not authorized to create: queue://new.b", watch: []message.Destination{q("ok.a"), q("new.b")}},
		{name: "composite send refused write (the composite is asked whole)",
			setup: func(se *secEnv) { se.z.add(deny(engine.ActionWrite, "queue://open.x,open.y")) },
			op:    func(se *secEnv) error { return sendWait(se.bob, msg(q("open.x,open.y"), "b", true), "") },
			text:  "User bob is not authorized to write to: queue://open.x,open.y"},
		{name: "consume without read", setup: func(se *secEnv) { send(t, se.admin, msg(q("secret.in"), "x", true)) },
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: q("secret.in"), Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to read from: queue://secret.in", watch: []message.Destination{q("secret.in")}},
		{name: "consume creating a queue without admin",
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: q("new.q"), Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to create: queue://new.q", watch: []message.Destination{q("new.q")}},
		{name: "composite consume with a member bob may not read",
			setup: func(se *secEnv) { send(t, se.admin, msg(q("open.a"), "x", true)) },
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: q("open.a,secret.b"), Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to read from: queue://secret.b", watch: []message.Destination{q("open.a"), q("secret.b")}},
		{name: "composite consume with a member bob may not create",
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: q("open.c,new.d"), Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to create: queue://new.d", watch: []message.Destination{q("open.c"), q("new.d")}},
		{name: "browse without read", setup: func(se *secEnv) { send(t, se.admin, msg(q("secret.in"), "x", true)) },
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: q("secret.in"), Browser: true, Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to read from: queue://secret.in", watch: []message.Destination{q("secret.in")}},
		{name: "durable subscribe without read",
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: tp("secret.t"), DurableName: "d1", Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to read from: topic://secret.t", watch: []message.Destination{tp("secret.t")}},
		{name: "durable subscribe creating a topic without admin",
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: tp("new.t"), DurableName: "d1", Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to create: topic://new.t", watch: []message.Destination{tp("new.t")}},
		{name: "advisory subscription without read",
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: tp("ActiveMQ.Advisory.Connection"), Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to read from: topic://ActiveMQ.Advisory.Connection"},
		{name: "advisory subscription creating the topic without admin",
			op: func(se *secEnv) error {
				_, err := se.bob.Subscribe(engine.SubSpec{Destination: tp("ActiveMQ.Advisory.Consumer.Queue.nobody"), Prefetch: 10}, newSink())
				return err
			},
			text: "User bob is not authorized to create: topic://ActiveMQ.Advisory.Consumer.Queue.nobody"},
		{name: "send to a temporary queue without write",
			setup: func(se *secEnv) {
				tq, err := se.admin.CreateTemp(false)
				if err != nil {
					t.Fatal(err)
				}
				se.z.add(deny(engine.ActionWrite, tq.String()))
				se.watch = tq
			},
			op:   func(se *secEnv) error { return sendWait(se.bob, msg(se.watch, "b", false), "") },
			text: "User bob is not authorized to write to: temp-queue://"},
		{name: "remove a destination without admin",
			setup: func(se *secEnv) {
				send(t, se.admin, msg(q("keep.me"), "x", true))
				se.z.add(deny(engine.ActionAdmin, "queue://keep.me"))
			},
			op:   func(se *secEnv) error { return se.bob.RemoveDestination(q("keep.me")) },
			text: "User bob is not authorized to remove: queue://keep.me", watch: []message.Destination{q("keep.me")}},
	}
	for _, shards := range []int{1, 4} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("shards=%d/%s", shards, c.name), func(t *testing.T) {
				se := startSecure(t, shards, slices.Clone(rules), nil)
				if c.setup != nil {
					c.setup(se)
				}
				watch := c.watch
				if !se.watch.IsZero() {
					watch = append(watch, se.watch)
				}
				se.drainAdvisories()
				before := se.snapshot(watch...)
				err := c.op(se)
				text := c.text
				if strings.HasSuffix(text, "temp-queue://") {
					text += se.watch.Name
				}
				wantRefused(t, err, text)
				after := se.snapshot(watch...)
				if fmt.Sprint(before) != fmt.Sprint(after) {
					t.Fatalf("state changed by a refused operation:\nbefore %+v\nafter  %+v", before, after)
				}
				if shards == 1 {
					// One shard: every advisory is sent synchronously, so
					// the barrier proves there is none.
					if adv := se.drainAdvisories(); len(adv) > 0 {
						t.Fatalf("advisories after a refusal: %v", adv)
					}
				}
			})
		}
	}
}

// TestEngineSecurityGrantsCached: a granted write is asked once per
// connection and destination; a refusal is asked again each time.
func TestEngineSecurityGrantsCached(t *testing.T) {
	se := startSecure(t, 2, []denyRule{deny(engine.ActionWrite, "queue://secret.>")}, nil)
	for i := 0; i < 5; i++ {
		send(t, se.bob, msg(q("open.q"), "b", false))
		if err := sendWait(se.bob, msg(q("secret.q"), "b", false), ""); !errors.Is(err, engine.ErrNotAuthorized) {
			t.Fatalf("send to secret.q: %v", err)
		}
	}
	if n := se.z.asked("bob write queue://open.q"); n != 1 {
		t.Fatalf("granted write asked %d times, want 1", n)
	}
	if n := se.z.asked("bob write queue://secret.q"); n != 5 {
		t.Fatalf("refused write asked %d times, want 5", n)
	}
}

// TestEngineSecurityCompositeSendAskedWhole: a client composite is asked
// for write once, as named (AuthorizationBroker.send sees it before
// CompositeDestinationBroker splits it), and each member it creates for
// admin.
func TestEngineSecurityCompositeSendAskedWhole(t *testing.T) {
	se := startSecure(t, 4, nil, nil)
	_, a := sub(t, se.admin, engine.SubSpec{Destination: q("c.a"), AckMode: engine.AckAuto})
	send(t, se.bob, msg(q("c.a,c.b"), "both", true))
	if got := body(a.recv(t)); got != "both" {
		t.Fatalf("c.a got %q", got)
	}
	if st := se.e.Stats(q("c.b")); st.QueueSize != 1 {
		t.Fatalf("c.b holds %d, want 1", st.QueueSize)
	}
	for call, want := range map[string]int{
		"bob write queue://c.a,c.b": 1, "bob write queue://c.a": 0, "bob write queue://c.b": 0,
		"bob admin queue://c.a": 0, // it existed
		"bob admin queue://c.b": 1,
	} {
		if n := se.z.asked(call); n != want {
			t.Errorf("%q asked %d times, want %d", call, n, want)
		}
	}
}

// TestEngineSecurityWildcardSkipsUnreadable: a wildcard subscription is
// attached only to the destinations its user may read, those that exist
// and those created later (AbstractRegion.addSubscriptionsForDestination);
// the refusal is not an error.
func TestEngineSecurityWildcardSkipsUnreadable(t *testing.T) {
	se := startSecure(t, 4, []denyRule{deny(engine.ActionRead, "queue://mixed.secret.>")}, nil)
	send(t, se.admin, msg(q("mixed.secret.a"), "s1", true))
	send(t, se.admin, msg(q("mixed.open"), "o1", true))
	_, ch := sub(t, se.bob, engine.SubSpec{Destination: q("mixed.>"), AckMode: engine.AckAuto})
	if got := body(ch.recv(t)); got != "o1" {
		t.Fatalf("got %q, want o1", got)
	}
	send(t, se.admin, msg(q("mixed.secret.b"), "s2", true))
	send(t, se.admin, msg(q("mixed.open2"), "o2", true))
	if got := body(ch.recv(t)); got != "o2" {
		t.Fatalf("got %q, want o2", got)
	}
	se.settle()
	ch.none(t)
	for _, d := range []string{"mixed.secret.a", "mixed.secret.b"} {
		if st := se.e.Stats(q(d)); st.ConsumerCount != 0 || st.QueueSize != 1 {
			t.Fatalf("%s: %d consumers, %d messages; want 0 and 1", d, st.ConsumerCount, st.QueueSize)
		}
	}
	// A wildcard browser skips them too.
	_, br := sub(t, se.bob, engine.SubSpec{Destination: q("mixed.>"), Browser: true})
	for d := br.recv(t); !d.BrowseEnd; d = br.recv(t) {
		if strings.HasPrefix(body(d), "s") {
			t.Fatalf("browser saw %q from an unreadable queue", body(d))
		}
	}
}

// TestEngineSecurityVirtualTopic: a consumer queue bob may not create is
// not created, so a publish to the virtual topic copies nothing there; the
// copies to the queues that exist are internal (VirtualTopicInterceptor
// sends below every check) and need nothing of the publisher but write on
// the topic.
func TestEngineSecurityVirtualTopic(t *testing.T) {
	se := startSecure(t, 4, []denyRule{
		deny(engine.ActionAdmin, "queue://Consumer.B.>"),
		deny(engine.ActionWrite, "queue://Consumer.>"),
		deny(engine.ActionAdmin, "queue://Consumer.A.>"),
	}, func(o *engine.Options) { o.VirtualTopics = []engine.VirtualTopic{engine.DefaultVirtualTopic()} })
	_, err := se.bob.Subscribe(engine.SubSpec{Destination: q("Consumer.B.VirtualTopic.Orders"), Prefetch: 10}, newSink())
	wantRefused(t, err, "User bob is not authorized to create: queue://Consumer.B.VirtualTopic.Orders")
	_, a := sub(t, se.admin, engine.SubSpec{Destination: q("Consumer.A.VirtualTopic.Orders"), AckMode: engine.AckAuto})
	send(t, se.bob, msg(tp("VirtualTopic.Orders"), "o", true))
	if got := body(a.recv(t)); got != "o" {
		t.Fatalf("Consumer.A got %q", got)
	}
	se.settle()
	if st := se.e.Stats(q("Consumer.B.VirtualTopic.Orders")); st.Exists {
		t.Fatalf("Consumer.B queue exists after a refused creation: %+v", st)
	}
	if n := se.z.asked("bob write queue://Consumer.A.VirtualTopic.Orders"); n != 0 {
		t.Fatalf("the virtual topic copy was checked %d times", n)
	}
}

// TestEngineSecurityCompositeForwards: a configured composite queue's
// forward that does not exist needs the producer's admin
// (CompositeDestinationFilter sends through the region broker with the
// producer's context); refused, nothing is stored anywhere. Existing
// forwards need nothing: no write is asked on them.
func TestEngineSecurityCompositeForwards(t *testing.T) {
	fan := q("fan")
	se := startSecure(t, 4, []denyRule{deny(engine.ActionAdmin, "queue://fwd.>"), deny(engine.ActionWrite, "queue://fwd.>")},
		func(o *engine.Options) {
			o.CompositeFor = func(d message.Destination) *engine.Composite {
				if d == fan {
					return &engine.Composite{Forwards: []engine.Forward{{Destination: q("fwd.a")}, {Destination: q("fwd.b")}}}
				}
				return nil
			}
		})
	send(t, se.admin, msg(q("fwd.a"), "seed", true))
	send(t, se.admin, msg(fan, "seed", true)) // creates fan (admin) and fan.b
	_, err := se.e.Destinations(), se.e.RemoveDestination(q("fwd.b"))
	if err != nil {
		t.Fatal(err)
	}
	before := se.snapshot(fan, q("fwd.a"), q("fwd.b"))
	err = sendWait(se.bob, msg(fan, "b", true), "")
	wantRefused(t, err, "User bob is not authorized to create: queue://fwd.b")
	if after := se.snapshot(fan, q("fwd.a"), q("fwd.b")); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("state changed:\nbefore %+v\nafter  %+v", before, after)
	}
	// With fwd.b back, bob's send reaches all three.
	send(t, se.admin, msg(q("fwd.b"), "seed", true))
	send(t, se.bob, msg(fan, "b", true))
	se.settle()
	for d, want := range map[message.Destination]int64{fan: 2, q("fwd.a"): 3, q("fwd.b"): 2} {
		if st := se.e.Stats(d); st.QueueSize != want {
			t.Fatalf("%s holds %d, want %d", d, st.QueueSize, want)
		}
	}
	if n := se.z.asked("bob write queue://fwd.a"); n != 0 {
		t.Fatalf("write on a forward asked %d times", n)
	}
}

// TestEngineSecurityInternalSendsUnchecked: a poison message of bob's goes
// to the DLQ although bob may neither write to nor create it (the move runs
// in the broker's context); advisories reach their subscribers without any
// check; destroying a durable subscription is not checked
// (AuthorizationBroker does not override removeSubscription).
func TestEngineSecurityInternalSendsUnchecked(t *testing.T) {
	se := startSecure(t, 4, []denyRule{
		deny(engine.ActionWrite, "queue://ActiveMQ.DLQ"), deny(engine.ActionAdmin, "queue://ActiveMQ.DLQ"),
		deny(engine.ActionAdmin, "topic://ActiveMQ.Advisory.>"), deny(engine.ActionWrite, "topic://ActiveMQ.Advisory.>"),
	}, nil)
	src := q("work")
	s, ch := sub(t, se.admin, engine.SubSpec{Destination: src, AckMode: engine.AckIndividual})
	send(t, se.bob, msg(src, "poison", true))
	d := ch.recv(t)
	if err := se.admin.Nack(s, d.ID, engine.NackPoison, "bad"); err != nil {
		t.Fatal(err)
	}
	got := dlqMessages(t, se.env, q("ActiveMQ.DLQ"), 1)
	if body(got[0]) != "poison" {
		t.Fatalf("DLQ got %q", body(got[0]))
	}
	if adv := se.drainAdvisories(); len(adv) == 0 {
		t.Fatal("no advisories reached the advisory subscriber")
	}
	if _, err := se.bob.Subscribe(engine.SubSpec{Destination: tp("news"), DurableName: "n", Prefetch: 10}, newSink()); err != nil {
		t.Fatal(err)
	}
	bobCalls := func() (n int) {
		for _, c := range se.z.log() {
			if strings.HasPrefix(c, "bob ") {
				n++
			}
		}
		return n
	}
	calls := bobCalls()
	se.bob.Close()
	bob := se.connect("bob", "bob-client")
	if err := bob.Unsubscribe("n"); err != nil {
		t.Fatal(err)
	}
	if n := bobCalls(); n != calls {
		t.Fatalf("unsubscribe asked the authorizer %d times", n-calls)
	}
	for _, c := range se.z.log() {
		if strings.Contains(c, "write queue://ActiveMQ.DLQ") || strings.Contains(c, "admin queue://ActiveMQ.DLQ") || strings.Contains(c, " write topic://ActiveMQ.Advisory") {
			t.Fatalf("internal send checked: %q", c)
		}
	}
}

// TestEngineSecurityRemoveDestination: removal needs admin on an existing
// destination and forgets the connection's cached grants for it.
func TestEngineSecurityRemoveDestination(t *testing.T) {
	se := startSecure(t, 2, nil, nil)
	send(t, se.bob, msg(q("gone"), "x", true))
	if err := se.bob.RemoveDestination(q("gone")); err != nil {
		t.Fatal(err)
	}
	if st := se.e.Stats(q("gone")); st.Exists {
		t.Fatal("still exists")
	}
	send(t, se.bob, msg(q("gone"), "y", true))
	if n := se.z.asked("bob write queue://gone"); n != 2 {
		t.Fatalf("write asked %d times, want 2 (the grant is forgotten on removal)", n)
	}
}
