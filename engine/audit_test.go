package engine_test

import (
	"strconv"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// TestEngineProducerAudit: on a connection with the producer audit on (a
// failover reconnection, an audited network connection), a persistent
// message whose producer sequence id is at or below the last one stored
// for its producer on its destination is answered and dropped
// (ProducerBrokerExchange.canDispatch) — while the first copy is queued,
// after it was consumed, and, on KahaDB, after a restart; a higher one
// goes through. A connection without the audit, and non-persistent
// messages, are not checked. The queue's statistics show what was
// enqueued. (The cursor audit is off here: TestEngineCursorAudit.)
func TestEngineProducerAudit(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			v := startOn(t, kind, func(o *engine.Options) {
				o.Shards = 2
				o.PolicyFor = func(message.Destination) engine.Policy {
					p := engine.DefaultPolicy()
					p.EnableAudit = false
					return p
				}
			})
			q := message.QueueDest("audit.q")
			const prod = "ID:audit-host-1-1:1:1:1"
			m := func(seq, body string, persistent bool) *message.Message {
				x := msg(q, body, persistent)
				x.ID = prod + ":" + seq
				return x
			}
			audited := v.conn("audited")
			audited.SetProducerAudit(true)
			send(t, audited, m("1", "first", true))
			send(t, audited, m("1", "again", true)) // answered without error
			send(t, audited, m("2", "second", true))
			if st := v.barrier(q); st.EnqueueCount != 2 || st.QueueSize != 2 {
				t.Fatalf("stats %+v, want 2 enqueued: the re-sent copy dropped", st)
			}
			c := v.conn("consumer")
			s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
			for _, want := range []string{"first", "second"} {
				d := ch.recv(t)
				if body(d) != want {
					t.Fatalf("got %q, want %q", body(d), want)
				}
				if err := c.Ack(s, d.ID, ""); err != nil {
					t.Fatal(err)
				}
			}
			// Consumed: still a duplicate; so is any lower sequence id.
			send(t, audited, m("1", "after consumption", true))
			send(t, audited, m("2", "after consumption", true))
			// Not persistent: not audited (ActiveMQ audits persistent
			// sends only).
			send(t, audited, m("2", "non-persistent", false))
			v.barrier(q)
			if d := ch.recv(t); body(d) != "non-persistent" {
				t.Fatalf("got %q, want the non-persistent copy", body(d))
			} else if err := c.Ack(s, d.ID, ""); err != nil {
				t.Fatal(err)
			}
			v.barrier(q)
			ch.none(t)
			// Without the audit the re-sent message goes through.
			plain := v.conn("plain")
			send(t, plain, m("1", "plain resend", true))
			if d := ch.recv(t); body(d) != "plain resend" {
				t.Fatalf("got %q, want the plain connection's resend", body(d))
			} else if err := c.Ack(s, d.ID, ""); err != nil {
				t.Fatal(err)
			}
			if st := v.barrier(q); st.EnqueueCount != 4 || st.QueueSize != 0 {
				t.Fatalf("stats %+v, want 4 enqueued (first, second, non-persistent, plain resend), none left", st)
			}
			if kind != "kahadb" {
				return
			}
			v.restart()
			audited = v.conn("audited")
			audited.SetProducerAudit(true)
			send(t, audited, m("2", "after restart", true))
			send(t, audited, m("3", "third", true))
			c = v.conn("consumer")
			_, ch = sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
			if d := ch.recv(t); body(d) != "third" {
				t.Fatalf("after a restart got %q, want %q: the audit is recovered from the store", body(d), "third")
			}
			v.barrier(q)
			ch.none(t)
		})
	}
}

// TestEngineCursorAudit: with the default policy (enableAudit) a queue
// drops a persistent message a client sends again with the same id, on
// any connection, while it is queued and after it was consumed; not a
// non-persistent one, not on a topic, not one whose sequence id fell
// out of the window (maxAuditDepth) or whose producer was dropped
// (maxProducersToAudit), not with enableAudit="false", and not after a
// restart (on KahaDB), as ActiveMQ's cursor audit.
func TestEngineCursorAudit(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			q, off := message.QueueDest("cursor.q"), message.QueueDest("cursor.off")
			v := startOn(t, kind, func(o *engine.Options) {
				o.PolicyFor = func(d message.Destination) engine.Policy {
					p := engine.DefaultPolicy()
					p.MaxAuditDepth, p.MaxProducersToAudit = 128, 2
					p.EnableAudit = d != off
					return p
				}
			})
			const prod, other, third = "ID:cursor-1:1:1:1", "ID:cursor-2:1:1:1", "ID:cursor-3:1:1:1"
			m := func(d message.Destination, producer string, seq int, body string, persistent bool) *message.Message {
				x := msg(d, body, persistent)
				x.ID = producer + ":" + strconv.Itoa(seq)
				return x
			}
			p := v.conn("plain")
			c := v.conn("consumer")
			s, ch := sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual})
			expect := func(want ...string) {
				t.Helper()
				for _, w := range want {
					d := ch.recv(t)
					if body(d) != w {
						t.Fatalf("got %q, want %q", body(d), w)
					}
					if err := c.Ack(s, d.ID, ""); err != nil {
						t.Fatal(err)
					}
				}
				v.barrier(q)
				ch.none(t)
			}
			send(t, p, m(q, prod, 1, "first", true))
			send(t, p, m(q, prod, 1, "queued copy", true)) // answered, dropped
			expect("first")
			send(t, p, m(q, prod, 1, "consumed copy", true))
			send(t, p, m(q, prod, 1, "non-persistent copy", false))
			expect("non-persistent copy")
			// Out of the window: seq 1000 moves it past 1.
			send(t, p, m(q, prod, 1000, "far", true))
			send(t, p, m(q, prod, 1, "too old to tell", true))
			send(t, p, m(q, prod, 999, "in the window", true))
			send(t, p, m(q, prod, 1000, "far again", true))
			expect("far", "too old to tell", "in the window")
			// A third producer: the queue tracks two (maxProducersToAudit),
			// so one of the first two is forgotten and its resend goes
			// through; the third's own is still dropped.
			send(t, p, m(q, other, 5, "other", true))
			send(t, p, m(q, third, 5, "third", true))
			expect("other", "third")
			send(t, p, m(q, third, 5, "third again", true))
			send(t, p, m(q, prod, 999, "prod again", true))
			send(t, p, m(q, other, 5, "other again", true))
			send(t, p, m(q, prod, 2000, "marker", true))
			through := 0
			for {
				d := ch.recv(t)
				if err := c.Ack(s, d.ID, ""); err != nil {
					t.Fatal(err)
				}
				if body(d) == "marker" {
					break
				}
				if b := body(d); b != "prod again" && b != "other again" {
					t.Fatalf("got %q, want a resend of a forgotten producer", b)
				}
				through++
			}
			if through < 1 || through > 2 {
				t.Fatalf("%d resends of the first two producers went through, want 1 or 2 (one was forgotten)", through)
			}
			if st := v.barrier(q); st.EnqueueCount != int64(8+through) {
				// first, the non-persistent copy, far, too old, in the
				// window, other, third, the marker and what went through.
				t.Fatalf("%s: %d enqueued, want %d", q, st.EnqueueCount, 8+through)
			}
			// enableAudit="false": both copies.
			_, offCh := sub(t, c, engine.SubSpec{Destination: off, AckMode: engine.AckAuto})
			send(t, p, m(off, prod, 1, "off 1", true))
			send(t, p, m(off, prod, 1, "off 2", true))
			for _, w := range []string{"off 1", "off 2"} {
				if d := offCh.recv(t); body(d) != w {
					t.Fatalf("enableAudit=false: got %q, want %q", body(d), w)
				}
			}
			// A topic is not checked.
			tp := message.TopicDest("cursor.t")
			_, tch := sub(t, c, engine.SubSpec{Destination: tp, AckMode: engine.AckAuto})
			send(t, p, m(tp, prod, 1, "topic 1", true))
			send(t, p, m(tp, prod, 1, "topic 2", true))
			for _, w := range []string{"topic 1", "topic 2"} {
				if d := tch.recv(t); body(d) != w {
					t.Fatalf("topic: got %q, want %q", body(d), w)
				}
			}
			if kind != "kahadb" {
				return
			}
			v.restart()
			p = v.conn("plain")
			c = v.conn("consumer")
			send(t, p, m(q, prod, 1000, "after restart", true))
			_, ch = sub(t, c, engine.SubSpec{Destination: q, AckMode: engine.AckAuto})
			if d := ch.recv(t); body(d) != "after restart" {
				t.Fatalf("after a restart got %q, want the resend: the cursor audit starts empty", body(d))
			}
		})
	}
}

// TestAuditWindow: the window marks sequence ids exactly within its
// depth, moves up with a higher id, and calls an id below it new.
func TestAuditWindow(t *testing.T) {
	w := engine.NewAuditWindow(128) // 3 words: ids [first, first+192)
	for _, c := range []struct {
		seq int64
		dup bool
	}{
		{5, false}, {5, true}, {6, false}, {63, false}, {64, false}, {191, false}, {5, true},
		{192, false}, // moves the window up one word: 0..63 go
		{5, false}, {6, false}, {64, true}, {192, true},
		{10000, false}, {64, false}, {9999, false}, {10000, true}, {-1, false}, {-1, false},
	} {
		if got := w.TestSet(c.seq); got != c.dup {
			t.Fatalf("after the ids before it, %d: duplicate %v, want %v", c.seq, got, c.dup)
		}
	}
}

// TestSplitMessageID: ActiveMQ message ids split at their last colon into
// producer id and sequence id; ids without a numeric sequence are left
// alone.
func TestSplitMessageID(t *testing.T) {
	for _, c := range []struct {
		id, producer string
		seq          int64
		ok           bool
	}{
		{"ID:host-1234-1700000000000-1:1:1:1:42", "ID:host-1234-1700000000000-1:1:1:1", 42, true},
		{"ID:a:0", "ID:a", 0, true},
		{"ID:a:", "", 0, false},
		{"ID:a:-1", "", 0, false},
		{"ID:a:1x", "", 0, false},
		{"no-colon", "", 0, false},
		{":5", "", 0, false},
		{"ID:a:99999999999999999999", "", 0, false},
	} {
		p, seq, ok := engine.SplitMessageID(c.id)
		if p != c.producer || seq != c.seq || ok != c.ok {
			t.Errorf("SplitMessageID(%q) = %q, %d, %v; want %q, %d, %v", c.id, p, seq, ok, c.producer, c.seq, c.ok)
		}
	}
}
