package engine_test

import (
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

func retainedMsg(d message.Destination, body string) *message.Message {
	m := msg(d, body, false)
	m.BodyType = message.BytesBody
	m.Props.Set(engine.RetainProperty, message.BoolValue(true))
	return m
}

func TestEngineRetainedReplayedToRetroactiveSubscriptions(t *testing.T) {
	v := start(t, nil)
	tp := message.TopicDest("sensors.a.temp")
	p := v.conn("")
	live, liveCh := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckAuto})
	_ = live
	send(t, p, retainedMsg(tp, "21.5"))

	d := liveCh.recv(t)
	if body(d) != "21.5" {
		t.Fatalf("live subscriber got %q, want 21.5", body(d))
	}
	if _, ok := d.Msg.Props.Get(engine.RetainProperty); ok {
		t.Fatalf("live copy still carries %s", engine.RetainProperty)
	}
	if _, ok := d.Msg.Props.Get(engine.RetainedProperty); ok {
		t.Fatalf("live copy carries %s; only replays do", engine.RetainedProperty)
	}
	if !d.Msg.Retain {
		t.Fatal("live copy lost the Retain flag (needed for retain-as-published)")
	}

	// A retroactive wildcard subscriber gets the retained message first.
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("sensors.>"), AckMode: engine.AckAuto, Retroactive: true})
	r := ch.recv(t)
	if body(r) != "21.5" {
		t.Fatalf("retroactive subscriber got %q, want the retained 21.5", body(r))
	}
	if v, ok := r.Msg.Props.Get(engine.RetainedProperty); !ok || !v.Bool() {
		t.Fatalf("replayed copy: %s = %v, %v; want true", engine.RetainedProperty, v, ok)
	}
	// A plain subscriber does not.
	_, plain := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckAuto})
	v.barrier(tp)
	plain.none(t)

	// A newer retained message replaces it; an empty one clears it.
	send(t, p, retainedMsg(tp, "22.0"))
	m, err := v.e.Retained(tp)
	if err != nil || m == nil || string(m.Body) != "22.0" {
		t.Fatalf("Retained after replace = %v, %v; want 22.0", m, err)
	}
	send(t, p, retainedMsg(tp, ""))
	if m, _ := v.e.Retained(tp); m != nil {
		t.Fatalf("Retained after an empty publish = %q, want none", m.Body)
	}
	_, after := sub(t, v.conn(""), engine.SubSpec{Destination: tp, AckMode: engine.AckAuto, Retroactive: true})
	v.barrier(tp)
	after.none(t)
}

func TestEngineRetainedSurvivesRestart(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) { testRetainedSurvivesRestart(t, kind) })
	}
}

func testRetainedSurvivesRestart(t *testing.T, kind string) {
	v := startOn(t, kind, nil)
	a := message.TopicDest("home.kitchen")
	b := message.TopicDest("home.hall")
	p := v.conn("")
	send(t, p, retainedMsg(a, "old"))
	send(t, p, retainedMsg(a, "new"))
	send(t, p, retainedMsg(b, "gone"))
	send(t, p, retainedMsg(b, ""))
	v.restart()

	if m, err := v.e.Retained(a); err != nil || m == nil || string(m.Body) != "new" {
		t.Fatalf("%s after restart: %v, %v; want new", a, m, err)
	}
	if m, _ := v.e.Retained(b); m != nil {
		t.Fatalf("%s after restart: %q, want cleared", b, m.Body)
	}
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest("home.*"), AckMode: engine.AckAuto, Retroactive: true})
	if got := body(ch.recv(t)); got != "new" {
		t.Fatalf("replay after restart %q, want new", got)
	}
	v.barrier(a)
	ch.none(t)
	// The store keeps one record per topic, not the history.
	if st := v.e.Stats(engine.RetainStore); st.Exists {
		t.Fatalf("the retained store shows as a destination: %+v", st)
	}
	// And a second restart after more changes still holds the latest.
	send(t, v.conn(""), retainedMsg(a, "newest"))
	v.restart()
	if m, _ := v.e.Retained(a); m == nil || string(m.Body) != "newest" {
		t.Fatalf("after second restart: %v, want newest", m)
	}
}
