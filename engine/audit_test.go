package engine_test

import (
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
// enqueued.
func TestEngineProducerAudit(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			v := startOn(t, kind, func(o *engine.Options) { o.Shards = 2 })
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
