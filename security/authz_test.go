package security

import (
	"errors"
	"strconv"
	"testing"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
)

func queue(n string) message.Destination { return message.QueueDest(n) }
func topic(n string) message.Destination { return message.TopicDest(n) }

func entry(d message.Destination, read, write, admin []string) config.AuthorizationEntry {
	return config.AuthorizationEntry{Destination: d, Read: read, Write: write, Admin: admin}
}

func g(s ...string) []string { return s }

// seedMap is seed 000's authorizationMap.
func seedMap() *config.AuthorizationMap {
	return &config.AuthorizationMap{
		Entries: []config.AuthorizationEntry{
			entry(queue("orders.>"), g("consumers"), g("producers"), g("producers", "consumers")),
			entry(queue("DLQ.>"), g("admins"), g("admins"), g("admins")),
			entry(queue(">"), g("admins"), g("admins"), g("admins")),
			entry(topic(">"), g("admins"), g("admins"), g("admins")),
			entry(topic("ActiveMQ.Advisory.>"), g("everyone"), g("everyone"), g("everyone")),
		},
		Temp: &config.AuthorizationEntry{Destination: message.Destination{Type: message.TempQueue},
			Read: g("everyone"), Write: g("everyone"), Admin: g("everyone")},
	}
}

type authzCase struct {
	name   string
	s      *engine.Subject
	a      engine.Action
	d      message.Destination
	refuse string // ActiveMQ's text, "" when allowed
}

func runAuthz(t *testing.T, p *Plugin, cases []authzCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := p.Authorize(tc.s, tc.a, tc.d)
			if tc.refuse == "" {
				if err != nil {
					t.Fatalf("refused: %v (%q)", err, engine.ClientText(err))
				}
				return
			}
			if err == nil {
				t.Fatalf("allowed, want %q", tc.refuse)
			}
			if !errors.Is(err, engine.ErrNotAuthorized) {
				t.Errorf("%v does not wrap engine.ErrNotAuthorized", err)
			}
			if got := engine.ClientText(err); got != tc.refuse {
				t.Errorf("text %q, want %q", got, tc.refuse)
			}
		})
	}
}

func TestSecurityAuthorizeSeedMap(t *testing.T) {
	p := newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: seedMap()}, nil)
	login := func(u, pw string) *engine.Subject {
		s, err := p.Authenticate(engine.Credentials{Username: u, Password: pw})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	orders, fulfil, ops := login("orders-svc", "orders-pw"), login("fulfilment", "fulfil-pw"), login("ops", "ops-pw")
	R, W, A := engine.ActionRead, engine.ActionWrite, engine.ActionAdmin
	tq := message.Destination{Type: message.TempQueue, Name: "ID:host-1:1:1"}
	tt := message.Destination{Type: message.TempTopic, Name: "ID:host-1:1:2"}
	runAuthz(t, p, []authzCase{
		{"producer writes orders", orders, W, queue("orders.in"), ""},
		{"producer creates orders", orders, A, queue("orders.in"), ""},
		{"producer may not read orders", orders, R, queue("orders.in"), "User orders-svc is not authorized to read from: queue://orders.in"},
		{"consumer reads orders", fulfil, R, queue("orders.in"), ""},
		{"consumer creates orders", fulfil, A, queue("orders.eu.in"), ""},
		{"consumer may not write orders", fulfil, W, queue("orders.in"), "User fulfilment is not authorized to write to: queue://orders.in"},
		// The union, not the most specific entry: ">" adds admins.
		{"admin reads orders through the > entry", ops, R, queue("orders.in"), ""},
		{"admin writes orders through the > entry", ops, W, queue("orders.in"), ""},
		{"orders.> matches orders itself", fulfil, R, queue("orders"), ""},
		{"producer may not write other queues", orders, W, queue("billing"), "User orders-svc is not authorized to write to: queue://billing"},
		{"producer may not create other queues", orders, A, queue("billing"), "User orders-svc is not authorized to create: queue://billing"},
		{"queue patterns do not cover topics", orders, W, topic("orders.in"), "User orders-svc is not authorized to write to: topic://orders.in"},
		{"admins write DLQ", ops, W, queue("DLQ.orders"), ""},
		// "everyone" is only a group name: no seed user has it.
		{"everyone is not every user", fulfil, R, topic("ActiveMQ.Advisory.Queue"), "User fulfilment is not authorized to read from: topic://ActiveMQ.Advisory.Queue"},
		{"advisory through topic > for admins", ops, R, topic("ActiveMQ.Advisory.Connection"), ""},
		{"temp queue by the temp entry", fulfil, A, tq, "User fulfilment is not authorized to create: temp-queue://ID:host-1:1:1"},
		{"temp topic by the temp entry", ops, W, tt, "User ops is not authorized to write to: temp-topic://ID:host-1:1:2"},
		{"wildcard subscription on orders.>", fulfil, R, queue("orders.>"), ""},
		{"wildcard subscription on orders.*", fulfil, R, queue("orders.*"), ""},
		// With deep=false a ">" in the looked-up name meets only the
		// entries at or above it: queue ">" (admins), not orders.>.
		{"wildcard subscription on > meets only the > entry", fulfil, R, queue(">"), "User fulfilment is not authorized to read from: queue://>"},
		{"admin subscribes to >", ops, R, queue(">"), ""},
		{"composite: common entries only", orders, W, queue("orders.a,orders.b"), ""},
		{"composite: orders and billing share only >", orders, W, queue("orders.a,billing"), "User orders-svc is not authorized to write to: orders.a,billing"},
		{"nil subject", nil, W, queue("orders.in"), "User is not authenticated."},
	})

	// A user with "everyone" gets the advisory and temp entries.
	everyone := &engine.Subject{User: "e", Groups: []string{"everyone"}}
	runAuthz(t, p, []authzCase{
		{"everyone group reads advisories", everyone, R, topic("ActiveMQ.Advisory.Queue"), ""},
		{"everyone group creates temp queues", everyone, A, tq, ""},
		{"everyone group not orders", everyone, R, queue("orders.x"), "User e is not authorized to read from: queue://orders.x"},
	})
}

func TestSecurityAuthorizeDefaultAndTemp(t *testing.T) {
	m := &config.AuthorizationMap{
		Entries: []config.AuthorizationEntry{entry(queue("a.>"), g("a"), g("a"), g("a"))},
		Default: &config.AuthorizationEntry{Read: g("d"), Write: g("d"), Admin: g("d")},
	}
	p := newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: m}, nil)
	a := &engine.Subject{User: "ua", Groups: g("a")}
	d := &engine.Subject{User: "ud", Groups: g("d")}
	none := &engine.Subject{User: "un"}
	tq := message.Destination{Type: message.TempQueue, Name: "ID:x"}
	runAuthz(t, p, []authzCase{
		{"entry", a, engine.ActionRead, queue("a.b"), ""},
		// The defaultEntry is added to every destination's entries.
		{"default adds to a matching entry", d, engine.ActionRead, queue("a.b"), ""},
		{"default alone", d, engine.ActionWrite, topic("x"), ""},
		{"entry does not cover other names", a, engine.ActionWrite, topic("x"), "User ua is not authorized to write to: topic://x"},
		{"no principals at all", none, engine.ActionRead, queue("a.b"), "User un is not authorized to read from: queue://a.b"},
		// No tempDestinationAuthorizationEntry: temp is unrestricted.
		{"temp without temp entry", none, engine.ActionAdmin, tq, ""},
	})
	// No default and no match: refused.
	m.Default = nil
	p = newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: m}, nil)
	runAuthz(t, p, []authzCase{
		{"no match, no default", a, engine.ActionRead, queue("zzz"), "User ua is not authorized to read from: queue://zzz"},
	})
}

func TestSecurityAuthorizeGroupClass(t *testing.T) {
	m := &config.AuthorizationMap{
		GroupClass: userPrincipalClass,
		Entries: []config.AuthorizationEntry{
			entry(queue("u"), g("alice"), nil, nil),
			{Destination: queue("gr"), Read: g("admins"), GroupClass: groupPrincipalClass},
			entry(queue("star"), g("*"), nil, nil),
		},
		// The map's groupClass does not reach the defaultEntry.
		Default: &config.AuthorizationEntry{Write: g("admins")},
		Temp:    &config.AuthorizationEntry{Read: g("alice")},
	}
	p := newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: m}, nil)
	alice := &engine.Subject{User: "alice", Groups: g("admins"), UserPrincipals: g("alice")}
	simpleAlice := &engine.Subject{User: "alice", Groups: g("users")}
	bob := &engine.Subject{User: "bob", Groups: g("admins"), UserPrincipals: g("bob")}
	R := engine.ActionRead
	runAuthz(t, p, []authzCase{
		{"UserPrincipal matches the JAAS user", alice, R, queue("u"), ""},
		{"UserPrincipal does not match another", bob, R, queue("u"), "User bob is not authorized to read from: queue://u"},
		{"simple plugin subjects hold no user principal", simpleAlice, R, queue("u"), "User alice is not authorized to read from: queue://u"},
		{"entry's own GroupPrincipal class", bob, R, queue("gr"), ""},
		{"* matches any principal", simpleAlice, R, queue("star"), ""},
		{"* needs at least one principal", &engine.Subject{User: "n"}, R, queue("star"), "User n is not authorized to read from: queue://star"},
		{"default entry keeps GroupPrincipal", bob, engine.ActionWrite, queue("anything"), ""},
		{"temp entry takes the map's class", alice, R, message.Destination{Type: message.TempTopic, Name: "t"}, ""},
		{"temp entry by user, not group", bob, R, message.Destination{Type: message.TempTopic, Name: "t"}, "User bob is not authorized to read from: temp-topic://t"},
	})

	m.GroupClass = "com.example.RolePrincipal"
	_, err := New(&config.Config{Security: config.Security{Authorization: m}}, nil)
	if !errors.Is(err, ErrUnsupportedGroupClass) {
		t.Fatalf("New = %v, want ErrUnsupportedGroupClass", err)
	}
}

func TestSecurityAuthorizeWildcardEntries(t *testing.T) {
	m := &config.AuthorizationMap{Entries: []config.AuthorizationEntry{
		entry(queue("a.*.c"), g("star"), nil, nil),
		entry(queue("a.b"), g("exact"), nil, nil),
		entry(queue("x.>"), g("tail"), nil, nil),
		entry(queue("p,q"), g("composite"), nil, nil),
	}}
	p := newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: m}, nil)
	sub := func(gs ...string) *engine.Subject { return &engine.Subject{User: "u", Groups: gs} }
	R := engine.ActionRead
	runAuthz(t, p, []authzCase{
		{"* matches one element", sub("star"), R, queue("a.b.c"), ""},
		{"* does not match two", sub("star"), R, queue("a.b.b.c"), "User u is not authorized to read from: queue://a.b.b.c"},
		{"exact entry", sub("exact"), R, queue("a.b"), ""},
		{"exact does not match child", sub("exact"), R, queue("a.b.c"), "User u is not authorized to read from: queue://a.b.c"},
		{"> matches deep", sub("tail"), R, queue("x.y.z"), ""},
		{"> matches parent", sub("tail"), R, queue("x"), ""},
		{"composite entry covers p", sub("composite"), R, queue("p"), ""},
		{"composite entry covers q", sub("composite"), R, queue("q"), ""},
		// A wildcard consumer's pattern collects every entry it overlaps.
		{"pattern a.* reaches a.b", sub("exact"), R, queue("a.*"), ""},
		{"pattern a.> reaches a.*.c through wildcard walk", sub("star"), R, queue("a.>"), "User u is not authorized to read from: queue://a.>"},
	})
}

func TestSecurityAuthorizeWithoutAuthentication(t *testing.T) {
	p := newPlugin(t, config.Security{Authorization: seedMap()}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "ops"})
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	runAuthz(t, p, []authzCase{
		{"every operation refused", s, engine.ActionRead, topic("ActiveMQ.Advisory.Queue"), "User is not authenticated."},
	})
}

func TestSecurityAuthenticationWithoutAuthorization(t *testing.T) {
	p := newPlugin(t, config.Security{Authentication: seedSimple(false)}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "lonely", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Authorize(s, engine.ActionAdmin, queue("any")); err != nil {
		t.Fatalf("Authorize = %v, want allowed", err)
	}
}

func TestSecurityAuthorizeNoAllocs(t *testing.T) {
	p := newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: seedMap()}, nil)
	s := &engine.Subject{User: "orders-svc", Groups: g("producers")}
	d := queue("orders.in")
	if err := p.Authorize(s, engine.ActionWrite, d); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = p.Authorize(s, engine.ActionWrite, d) }); n != 0 {
		t.Fatalf("Authorize allocates %v per allowed cached call, want 0", n)
	}
}

func TestSecurityAuthorizeCacheBounded(t *testing.T) {
	p := newPlugin(t, config.Security{Authentication: seedSimple(false), Authorization: seedMap()}, nil)
	s := &engine.Subject{User: "ops", Groups: g("admins")}
	for i := range 3 * maxACLCache {
		d := queue("q." + strconv.Itoa(i))
		if err := p.Authorize(s, engine.ActionRead, d); err != nil {
			t.Fatal(err)
		}
		// Every decision is still right after resets and promotions.
		if err := p.Authorize(&engine.Subject{User: "x", Groups: g("producers")}, engine.ActionRead, d); err == nil {
			t.Fatalf("%s: producers allowed to read", d)
		}
	}
	p.authz.mu.Lock()
	n, r := len(p.authz.dirty), len(*p.authz.read.Load())
	p.authz.mu.Unlock()
	if n > maxACLCache || r > maxACLCache {
		t.Fatalf("cache holds %d/%d entries, limit %d", r, n, maxACLCache)
	}
}

func BenchmarkSecurityAuthorizeCached(b *testing.B) {
	p, err := New(&config.Config{Security: config.Security{Authentication: seedSimple(false), Authorization: seedMap()}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := &engine.Subject{User: "ops", Groups: g("admins")}
	d := queue("orders.in")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := p.Authorize(s, engine.ActionWrite, d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSecurityAuthorizeUncached(b *testing.B) {
	p, err := New(&config.Config{Security: config.Security{Authentication: seedSimple(false), Authorization: seedMap()}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := &engine.Subject{User: "ops", Groups: g("admins")}
	d := queue("orders.eu.in")
	b.ReportAllocs()
	for b.Loop() {
		p.authz.mu.Lock()
		p.authz.dirty, p.authz.misses = nil, 0
		p.authz.read.Store(&map[aclKey]*acl{})
		p.authz.mu.Unlock()
		if err := p.Authorize(s, engine.ActionWrite, d); err != nil {
			b.Fatal(err)
		}
	}
}
