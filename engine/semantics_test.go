package engine_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/engine/selector"
)

func withPolicy(fn func(d message.Destination, p *engine.Policy)) func(*engine.Options) {
	return func(o *engine.Options) {
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			fn(d, &p)
			return p
		}
	}
}

func TestEnginePrioritizedMessages(t *testing.T) {
	v := start(t, withPolicy(func(d message.Destination, p *engine.Policy) {
		p.PrioritizedMessages = d.Name == "prio"
	}))
	p := v.conn("")
	for _, q := range []string{"prio", "fifo"} {
		for i, prio := range []uint8{1, 9, 4, 9, 0} {
			m := msg(message.QueueDest(q), fmt.Sprint(i), true)
			m.Priority = prio
			send(t, p, m)
		}
	}
	order := func(q string) string {
		_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest(q), AckMode: engine.AckAuto})
		got := ""
		for i := 0; i < 5; i++ {
			got += body(ch.recv(t))
		}
		return got
	}
	if got := order("prio"); got != "13204" {
		t.Fatalf("prioritized queue order %s, want 13204 (9,9,4,1,0; ties in arrival order)", got)
	}
	if got := order("fifo"); got != "01234" {
		t.Fatalf("default queue order %s, want arrival order 01234", got)
	}
}

func TestEngineMessageGroups(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("groups")
	p := v.conn("")
	ca, cb := v.conn(""), v.conn("")
	sa, a := sub(t, ca, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	_, b := sub(t, cb, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
	sendGroup := func(g string, seq int32, body string) {
		m := msg(q, body, false)
		m.GroupID, m.GroupSeq = g, seq
		send(t, p, m)
	}
	for i := 1; i <= 3; i++ {
		sendGroup("G1", int32(i), fmt.Sprint("g1-", i))
		sendGroup("G2", int32(i), fmt.Sprint("g2-", i))
	}
	v.barrier(q)
	owner := func(s sink) map[string]bool {
		got := map[string]bool{}
		for len(s) > 0 {
			d := <-s
			got[d.Msg.GroupID] = true
			first, _ := d.Msg.Props.Get("JMSXGroupFirstForConsumer")
			if (d.Msg.GroupSeq == 1) != first.Bool() {
				t.Errorf("%s seq %d: JMSXGroupFirstForConsumer=%v", d.Msg.GroupID, d.Msg.GroupSeq, first.Bool())
			}
		}
		return got
	}
	ga, gb := owner(a), owner(b)
	if len(ga) != 1 || len(gb) != 1 || ga["G1"] == gb["G1"] {
		t.Fatalf("groups split across consumers: a has %v, b has %v; want one group each", ga, gb)
	}
	// The owner of G1 leaves: its group moves to the other consumer.
	g1OnA := ga["G1"]
	var rest sink
	if g1OnA {
		ca.CloseSubscription(sa)
		rest = b
	} else {
		cb.Close()
		rest = a
	}
	sendGroup("G1", 4, "g1-4")
	if d := rest.recv(t); d.Msg.GroupID != "G1" {
		t.Fatalf("after the owner left, %s went to the other consumer, want G1", d.Msg.GroupID)
	}
}

func TestEngineMessageGroupClosedBySeqMinusOne(t *testing.T) {
	v := start(t, nil)
	q := message.QueueDest("group-close")
	p := v.conn("")
	_, a := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
	m := msg(q, "open", false)
	m.GroupID, m.GroupSeq = "G", 1
	send(t, p, m)
	m = msg(q, "close", false)
	m.GroupID, m.GroupSeq = "G", -1
	send(t, p, m)
	a.recv(t)
	a.recv(t)
	_, b := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckAuto, Priority: 9})
	m = msg(q, "reopen", false)
	m.GroupID, m.GroupSeq = "G", 1
	send(t, p, m)
	if got := body(b.recv(t)); got != "reopen" {
		t.Fatalf("closed group was not reassigned: %q", got)
	}
}

func TestEnginePendingMessageLimitDiscardsOldest(t *testing.T) {
	v := start(t, withPolicy(func(d message.Destination, p *engine.Policy) { p.PendingMessageLimit = 3 }))
	tp := message.TopicDest("ticks")
	p := v.conn("")
	slow, ch := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckIndividual, Prefetch: 2})
	for i := 0; i < 10; i++ {
		send(t, p, msg(tp, fmt.Sprint(i), false))
	}
	if st := v.barrier(tp); st.DiscardedCount != 5 {
		t.Fatalf("discarded %d, want 5 (10 sent, 2 in prefetch, 3 kept)", st.DiscardedCount)
	}
	var got string
	for i := 0; i < 5; i++ {
		d := ch.recv(t)
		got += body(d)
		slow.Conn().Ack(slow, d.ID, "")
	}
	if got != "01789" {
		t.Fatalf("slow subscriber got %s, want 01789 (the oldest pending dropped)", got)
	}
}

func TestEngineOfflineDurableSubscriberTimeout(t *testing.T) {
	v := start(t, func(o *engine.Options) {
		o.OfflineDurableSubscriberTimeout = time.Hour
		o.OfflineDurableSubscriberTaskSchedule = time.Minute
	})
	tp := message.TopicDest("news")
	c := v.conn("cid")
	spec := engine.SubSpec{Destination: tp, DurableName: "d", AckMode: engine.AckIndividual}
	s, _ := sub(t, c, spec)
	c.CloseSubscription(s)
	send(t, v.conn(""), msg(tp, "kept-for-a-while", true))
	v.clock.add(30 * time.Minute)
	v.e.Tick()
	if err := c.Unsubscribe("d-other"); !errors.Is(err, engine.ErrNoSuchSubscription) {
		t.Fatalf("unexpected: %v", err)
	}
	_, ch := sub(t, c, spec)
	if got := body(ch.recv(t)); got != "kept-for-a-while" {
		t.Fatalf("within the timeout: %q", got)
	}
	c.Close()
	c2 := v.conn("cid")
	v.clock.add(2 * time.Hour)
	v.e.Tick()
	if err := c2.Unsubscribe("d"); !errors.Is(err, engine.ErrNoSuchSubscription) {
		t.Fatalf("after the timeout the subscription should be gone: %v", err)
	}
}

func TestEngineCompositeSendAndConsume(t *testing.T) {
	v := start(t, nil)
	p := v.conn("")
	_, qa := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("comp.a"), AckMode: engine.AckAuto})
	_, tb := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("comp.b"), AckMode: engine.AckAuto})
	composite := message.QueueDest("comp.a,topic://comp.b")
	send(t, p, msg(composite, "both", true))
	for name, ch := range map[string]sink{"queue comp.a": qa, "topic comp.b": tb} {
		d := ch.recv(t)
		if body(d) != "both" || d.Msg.OriginalDestination != composite {
			t.Fatalf("%s got %q with original destination %v", name, body(d), d.Msg.OriginalDestination)
		}
	}
	// A consumer on a composite takes from every element.
	_, all := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("comp.x,comp.y,comp.z.*"), AckMode: engine.AckAuto})
	for _, q := range []string{"comp.x", "comp.y", "comp.z.1"} {
		send(t, p, msg(message.QueueDest(q), q, false))
	}
	got := map[string]bool{}
	for i := 0; i < 3; i++ {
		got[body(all.recv(t))] = true
	}
	if len(got) != 3 {
		t.Fatalf("composite consumer got %v", got)
	}
}

func TestEngineVirtualTopics(t *testing.T) {
	v := start(t, func(o *engine.Options) { o.VirtualTopics = []engine.VirtualTopic{engine.DefaultVirtualTopic()} })
	p := v.conn("")
	vt := message.TopicDest("VirtualTopic.Orders")
	send(t, p, msg(vt, "before-any-queue", true))
	// Two consumer groups; group A has two competing consumers.
	_, a1 := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("Consumer.A.VirtualTopic.Orders"), AckMode: engine.AckAuto})
	_, a2 := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("Consumer.A.VirtualTopic.Orders"), AckMode: engine.AckAuto})
	_, b := sub(t, v.conn(""), engine.SubSpec{Destination: message.QueueDest("Consumer.B.VirtualTopic.Orders"), AckMode: engine.AckAuto})
	_, topicSub := sub(t, v.conn(""), engine.SubSpec{Destination: vt, AckMode: engine.AckAuto})
	for i := 0; i < 4; i++ {
		send(t, p, msg(vt, fmt.Sprint(i), true))
	}
	eventually(t, func() error {
		if n := len(a1) + len(a2); n != 4 {
			return fmt.Errorf("group A got %d messages, want each of the 4 once", n)
		}
		if len(b) != 4 || len(topicSub) != 4 {
			return fmt.Errorf("group B got %d, topic subscriber %d; want 4 each", len(b), len(topicSub))
		}
		return nil
	})
	if d := <-b; body(d) != "0" || d.Msg.OriginalDestination != vt {
		t.Fatalf("group B first message %q original %v; the one sent before the queue existed must not be there", body(d), d.Msg.OriginalDestination)
	}
}

func TestEngineConfiguredCompositeQueue(t *testing.T) {
	sel, err := selector.Parse("region = 'eu'")
	if err != nil {
		t.Fatal(err)
	}
	v := start(t, func(o *engine.Options) {
		comp := &engine.Composite{ForwardOnly: false, Forwards: []engine.Forward{
			{Destination: message.QueueDest("orders.all")},
			{Destination: message.TopicDest("orders.eu"), Selector: sel},
		}}
		o.CompositeFor = func(d message.Destination) *engine.Composite {
			if d == message.QueueDest("orders") {
				return comp
			}
			return nil
		}
	})
	p := v.conn("")
	_, eu := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("orders.eu"), AckMode: engine.AckAuto})
	for _, region := range []string{"eu", "us"} {
		m := msg(message.QueueDest("orders"), region, true)
		m.Props.Set("region", message.StringValue(region))
		send(t, p, m)
	}
	eventually(t, func() error {
		if st := v.barrier(message.QueueDest("orders.all")); st.QueueSize != 2 {
			return fmt.Errorf("orders.all holds %d, want both", st.QueueSize)
		}
		return nil
	})
	if st := v.barrier(message.QueueDest("orders")); st.QueueSize != 2 {
		t.Fatalf("forwardOnly=false: orders holds %d, want both", st.QueueSize)
	}
	if got := body(eu.recv(t)); got != "eu" {
		t.Fatalf("filtered forward got %q", got)
	}
	// The "us" message went to orders.all after the "eu" one, from the same
	// shard: once orders.all has both, a forward to orders.eu would be there.
	v.barrier(message.TopicDest("orders.eu"))
	eu.none(t)
}
