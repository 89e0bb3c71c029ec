package conform

import (
	"strconv"
	"strings"
)

// A SEND to "a,b" (each with its prefix) goes to every element: ActiveMQ's
// LegacyFrameTranslator.convertDestination converts each comma-separated
// name and makes a composite ("queue://a,topic://b"). Each copy names its
// element as destination and the composite as original-destination.
func stompCompositeSend(t *T) {
	addr := t.Addr(STOMP)
	q, tp := queue(t, ".a"), topic(t, ".b")
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("q", q)
	c.Subscribe("t", tp)
	c.SendMsg(q+","+tp, "both")
	got := map[string]*RawFrame{}
	for range 2 {
		f := c.ExpectMessage("both")
		got[f.Must(t, "subscription")] = f
	}
	for sub, dest := range map[string]string{"q": q, "t": tp} {
		f := got[sub]
		if f == nil {
			t.Fatalf("subscription %s got nothing; frames %v", sub, got)
		}
		ExpectHeader(t, f, "destination", dest)
		// ActiveMQ renders the composite queue "a,topic://b" with the
		// first element's prefix only.
		ExpectHeader(t, f, "original-destination", q+",topic://"+name(t, ".b"))
	}
	c.MustSync()
}

// compositeQueue "*.composite" (forwardOnly, activemq.xml) forwards every
// message to conformance.composite.all and those with color = 'red' also
// to conformance.composite.red; the composite queue itself keeps nothing.
// The targets are fixed names shared by every run, so frames of other
// runs (a failed earlier one) are skipped by body prefix.
func stompConfiguredCompositeQueue(t *T) {
	addr := t.Addr(STOMP)
	q := queue(t, ".composite")
	id := t.Uniq()
	c, _ := ConnectRaw(t, addr, "1.2")
	c.Subscribe("self", q)
	all, _ := ConnectRaw(t, addr, "1.2")
	all.Subscribe("all", "/queue/conformance.composite.all")
	red, _ := ConnectRaw(t, addr, "1.2")
	red.Subscribe("red", "/queue/conformance.composite.red")

	c.SendMsg(q, id+"-blue", "color:blue")
	c.SendMsg(q, id+"-red", "color:red")
	c.SendMsg(q, id+"-end", "color:red")

	mine := func(r *RawConn, want ...string) {
		t.Helper()
		for _, w := range want {
			for {
				f := r.Expect("MESSAGE")
				if !strings.HasPrefix(string(f.Body), id) {
					t.Logf("skipping a message of another run: %s", f)
					continue
				}
				if string(f.Body) != w {
					t.Fatalf("got %s, want body %q", f, w)
				}
				ExpectHeader(t, f, "original-destination", q)
				break
			}
		}
	}
	mine(all, id+"-blue", id+"-red", id+"-end")
	mine(red, id+"-red", id+"-end")
	c.MustSync() // forwardOnly: nothing for the composite queue's consumer
}

// Virtual topics (broker-behaviour.md §2, the VirtualTopic.> interceptor of
// activemq.xml): a message published to VirtualTopic.<name> reaches each
// Consumer.<group>.VirtualTopic.<name> queue once, shared among that
// group's consumers, and the topic's own subscribers.
func stompVirtualTopic(t *T) {
	addr := t.Addr(STOMP)
	vt := "VirtualTopic." + t.Uniq()
	in := newInbox(t)
	consumers := []struct{ name, dest string }{
		{"A1", "/queue/Consumer.A." + vt},
		{"A2", "/queue/Consumer.A." + vt},
		{"B1", "/queue/Consumer.B." + vt},
		{"T", "/topic/" + vt},
	}
	for _, cs := range consumers {
		c, _ := ConnectRaw(t, addr, "1.2")
		c.Subscribe(cs.name, cs.dest)
		in.watch(c, cs.name)
	}
	p, _ := ConnectRaw(t, addr, "1.2")
	const n = 6
	for i := 1; i <= n; i++ {
		p.SendMsg("/topic/"+vt, "m"+strconv.Itoa(i))
	}
	// Each of the three groups (A, B, the topic) gets m1..mn exactly once.
	seen := map[string]map[int]bool{"A": {}, "B": {}, "T": {}}
	for _, m := range in.messages(3 * n) {
		group := m.from[:1]
		k := bodyNumber(t, m.f)
		if seen[group][k] {
			t.Fatalf("group %s got m%d twice", group, k)
		}
		seen[group][k] = true
		if group != "T" {
			ExpectHeader(t, m.f, "original-destination", "/topic/"+vt)
		}
	}
	for g, s := range seen {
		if len(s) != n {
			t.Fatalf("group %s got %d distinct messages, want %d", g, len(s), n)
		}
	}
	// Nothing more: a marker sent now is the next frame.
	p.SendMsg("/queue/Consumer.B."+vt, "marker")
	if m := in.Next(); m.from != "B1" || string(m.f.Body) != "marker" {
		t.Fatalf("got %s from %s, want the marker on B1", m.f, m.from)
	}
}
