package conform

import (
	"errors"
	"strings"
	"time"

	"github.com/go-stomp/stomp/v3"
)

// unsubscribe unsubscribes s and waits for the broker's RECEIPT.
// go-stomp v3.1.3's Subscription.Unsubscribe can miss the RECEIPT it waits
// for: its reader marks the subscription closed and broadcasts the
// condition without holding the condition's mutex, so a broadcast that
// comes before the waiting goroutine has started to wait is lost, and
// Unsubscribe waits out its timeout and reports
// ErrUnsubscribeReceiptTimeout although the RECEIPT arrived. With
// go-stomp's default of 30 s that used up a case's whole time bound (it
// failed so in CI against wharf run), so dial sets it to
// stompUnsubscribeWait and this waits for the RECEIPT itself: the RECEIPT
// closes s.C. go-stomp's own timeout puts a "receipt timeout" error on
// s.C first, which is skipped; only no RECEIPT within
// stompReceiptDeadline is the broker's failure.
func unsubscribe(t *T, s *stomp.Subscription) {
	t.Helper()
	err := s.Unsubscribe()
	// go-stomp returns a pointer to its ErrorMessage value, which
	// errors.Is compares by identity.
	if !errors.Is(err, &stomp.ErrUnsubscribeReceiptTimeout) {
		if err != nil {
			t.Fatalf("unsubscribe: %v", err)
		}
		return
	}
	deadline := time.NewTimer(stompReceiptDeadline)
	defer deadline.Stop()
	for {
		select {
		case m, ok := <-s.C:
			if !ok {
				t.Logf("unsubscribe: %v after %v, but the RECEIPT closed the subscription (go-stomp's lost wake-up, or a RECEIPT later than that)", err, stompUnsubscribeWait)
				return
			}
			if m.Err != nil && !strings.Contains(m.Err.Error(), "unsubscribe receipt timeout") {
				t.Fatalf("unsubscribe: %v (%v)", err, m.Err)
			}
		case <-deadline.C:
			t.Fatalf("unsubscribe: no RECEIPT within %v", stompReceiptDeadline)
		}
	}
}

// stompUnsubscribeWait is go-stomp's wait for an UNSUBSCRIBE's RECEIPT
// (ConnOpt.UnsubscribeReceiptTimeout, set by dial); stompReceiptDeadline
// is how long unsubscribe waits for it in all.
const (
	stompUnsubscribeWait = time.Second
	stompReceiptDeadline = 20 * time.Second
)

// SEND, SUBSCRIBE and UNSUBSCRIBE on /queue/ and /topic/ (reference
// mappings.md §1.2): the MESSAGE names the destination as sent, and after
// UNSUBSCRIBE nothing more arrives for that subscription.
func stompQueueAndTopic(t *T) {
	addr := t.Addr(STOMP)
	for _, kind := range []string{"queue", "topic"} {
		t.Run(kind, func(t *T) {
			dest := "/" + kind + "/" + t.Uniq()
			c, _ := ConnectRaw(t, addr, "1.2")
			c.Subscribe("s1", dest)
			c.SendMsg(dest, "one")
			m := c.ExpectMessage("one")
			if got := m.Must(t, "destination"); got != dest {
				t.Fatalf("destination: got %q, want %q", got, dest)
			}
			if got := m.Must(t, "subscription"); got != "s1" {
				t.Fatalf("subscription: got %q, want s1", got)
			}
			c.Send("UNSUBSCRIBE", []string{"id:s1", "receipt:u1"}, nil)
			c.ExpectReceipt("u1")
			c.SendMsg(dest, "two")
			// Barrier: a new subscription's first message must be its own,
			// not "two" on the old one.
			c.Subscribe("s2", dest)
			if kind == "queue" {
				// The queue kept "two" for the next consumer.
				if got := c.ExpectMessage("two").Must(t, "subscription"); got != "s2" {
					t.Fatalf("subscription: got %q, want s2", got)
				}
			}
			c.SendMsg(dest, "three")
			if got := c.ExpectMessage("three").Must(t, "subscription"); got != "s2" {
				t.Fatalf("subscription: got %q, want s2", got)
			}
			c.MustSync()
		})
	}
}

// A destination without a known prefix is a queue of that name on SEND and
// SUBSCRIBE (ActiveMQ 5.17 LegacyFrameTranslator.convertDestination
// fallback).
func stompDestinationWithoutPrefix(t *T) {
	addr := t.Addr(STOMP)
	name := t.Uniq()
	c := dial(t, addr)
	s := sub(t, c, "/queue/"+name, stomp.AckAuto)
	send(t, c, name, "bare")
	m := recvBody(t, s, "bare")
	if m.Destination != "/queue/"+name {
		t.Fatalf("destination: got %q, want /queue/%s", m.Destination, name)
	}
	// And SUBSCRIBE without a prefix reads the same queue.
	s2 := sub(t, c, name, stomp.AckAuto)
	unsubscribe(t, s)
	send(t, c, "/queue/"+name, "prefixed")
	recvBody(t, s2, "prefixed")
}

// Request/reply over a temporary queue: the responder sees reply-to as
// /remote-temp-queue/..., sends there, and the requester gets the reply under
// the name it used (reference mappings.md §1.2).
func stompTempQueueReply(t *T) {
	addr := t.Addr(STOMP)
	requests := queue(t, "")
	requester := dial(t, addr)
	responder := dial(t, addr)
	reqs := sub(t, responder, requests, stomp.AckAuto)
	replies := sub(t, requester, "/temp-queue/x", stomp.AckAuto)

	send(t, requester, requests, "ping", hdr("reply-to", "/temp-queue/x"), hdr("correlation-id", "c1"))
	req := recvBody(t, reqs, "ping")
	replyTo := req.Header.Get("reply-to")
	if !strings.HasPrefix(replyTo, "/remote-temp-queue/") {
		t.Fatalf("reply-to at the responder: got %q, want /remote-temp-queue/...", replyTo)
	}
	send(t, responder, replyTo, "pong", hdr("correlation-id", req.Header.Get("correlation-id")))
	rep := recvBody(t, replies, "pong")
	if rep.Destination != "/temp-queue/x" {
		t.Fatalf("reply destination: got %q, want /temp-queue/x", rep.Destination)
	}
	if got := rep.Header.Get("correlation-id"); got != "c1" {
		t.Fatalf("correlation-id: got %q, want c1", got)
	}
}

// A temporary topic round trip on one connection keeps its STOMP name.
func stompTempTopic(t *T) {
	addr := t.Addr(STOMP)
	c := dial(t, addr)
	s1 := sub(t, c, "/temp-topic/t", stomp.AckAuto)
	s2 := sub(t, c, "/temp-topic/t", stomp.AckAuto)
	send(t, c, "/temp-topic/t", "hello")
	for _, s := range []*stomp.Subscription{s1, s2} {
		if m := recvBody(t, s, "hello"); m.Destination != "/temp-topic/t" {
			t.Fatalf("destination: got %q, want /temp-topic/t", m.Destination)
		}
	}
}

// Wildcards (ActiveMQ DestinationFilter): "*" is one segment, ">" the rest;
// on queues too.
func stompWildcards(t *T) {
	addr := t.Addr(STOMP)
	base := t.Uniq()
	c := dial(t, addr)
	star := sub(t, c, "/topic/"+base+".a.*", stomp.AckAuto)
	rest := sub(t, c, "/topic/"+base+".a.>", stomp.AckAuto)
	jobs := sub(t, c, "/queue/"+base+".jobs.>", stomp.AckAuto)

	send(t, c, "/topic/"+base+".a.b", "ab")
	send(t, c, "/topic/"+base+".a.b.c", "abc")
	send(t, c, "/topic/"+base+".x.b", "xb")
	send(t, c, "/topic/"+base+".a.end", "end")
	// "*" skips a.b.c and x.b: the next after ab is end.
	if m := recvBody(t, star, "ab"); m.Destination != "/topic/"+base+".a.b" {
		t.Fatalf("destination: got %q, want the concrete topic", m.Destination)
	}
	recvBody(t, star, "end")
	recvBodies(t, rest, "ab", "abc", "end")

	send(t, c, "/queue/"+base+".jobs.x", "x")
	send(t, c, "/queue/"+base+".jobs.y.z", "yz")
	send(t, c, "/queue/"+base+".other", "other")
	send(t, c, "/queue/"+base+".jobs.end", "end")
	got := map[string]string{}
	for range 3 {
		m := recv(t, jobs)
		got[string(m.Body)] = m.Destination
	}
	want := map[string]string{
		"x":   "/queue/" + base + ".jobs.x",
		"yz":  "/queue/" + base + ".jobs.y.z",
		"end": "/queue/" + base + ".jobs.end",
	}
	for body, d := range want {
		if got[body] != d {
			t.Fatalf("queue wildcard: got %v, want %v", got, want)
		}
	}
}

// Competing consumers share a queue, each message to one of them; every
// subscriber of a topic gets every message.
func stompCompetingConsumersAndFanOut(t *T) {
	addr := t.Addr(STOMP)
	t.Run("queue", func(t *T) {
		q := queue(t, "")
		c1, c2, p := dial(t, addr), dial(t, addr), dial(t, addr)
		// Prefetch 1 with client acks makes the share observable: each
		// consumer holds one message until it acks.
		s1 := sub(t, c1, q, stomp.AckClientIndividual, subHdr("activemq.prefetchSize", "1"))
		s2 := sub(t, c2, q, stomp.AckClientIndividual, subHdr("activemq.prefetchSize", "1"))
		const n = 10
		for i := range n {
			send(t, p, q, string(rune('a'+i)))
		}
		seen := map[string]int{}
		count := [2]int{}
		for range n {
			var m *stomp.Message
			select {
			case m = <-s1.C:
				count[0]++
			case m = <-s2.C:
				count[1]++
			case <-timeoutC():
				t.Fatalf("got %d of %d messages", count[0]+count[1], n)
			}
			if m.Err != nil {
				t.Fatal(m.Err)
			}
			seen[string(m.Body)]++
			ack(t, m.Conn, m)
		}
		if len(seen) != n {
			t.Fatalf("got %v, want %d distinct messages once each", seen, n)
		}
		if count[0] == 0 || count[1] == 0 {
			t.Fatalf("consumers got %v messages, want both to get some", count)
		}
	})
	t.Run("topic", func(t *T) {
		tp := topic(t, "")
		p := dial(t, addr)
		var subs []*stomp.Subscription
		for range 3 {
			subs = append(subs, sub(t, dial(t, addr), tp, stomp.AckAuto))
		}
		send(t, p, tp, "1")
		send(t, p, tp, "2")
		for _, s := range subs {
			recvBodies(t, s, "1", "2")
		}
	})
}
