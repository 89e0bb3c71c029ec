package conform

import (
	"bytes"

	"github.com/Azure/go-amqp"

	"wharf/protocols/amqp/wire"
)

// amqpRawSameLinkName: two receiving links of one name on one connection
// both get a topic's messages; a second durable link of a subscription's
// name is refused with ActiveMQ's text; a detached durable link keeps what
// is published and is re-attached by name without a source; an unknown
// name is amqp:not-found. Moved from conformance/amqpraw_test.go
// TestConformanceAMQPRawSameLinkName.
func amqpRawSameLinkName(t *T) {
	addr := t.Addr(AMQP)
	topic := "topic://" + t.Uniq()
	clientID := t.Uniq() + "-cid"
	r := DialRawAMQP(t, addr)
	r.Open(clientID)

	// attach sends an attach for a link on which the client receives and
	// returns the broker's answering Attach and, if it refused the link,
	// its Detach.
	attach := func(handle uint32, name string, src *wire.Source) (*wire.Attach, *wire.Detach) {
		t.Helper()
		a := wire.NewAttach(name, handle, wire.RoleReceiver)
		a.Source = src
		a.Target = &wire.Target{}
		r.Send(0, a, nil)
		var got *wire.Attach
		for {
			switch f := r.Next().Body.(type) {
			case *wire.Attach:
				if f.Handle != handle {
					t.Fatalf("attach for handle %d while waiting for %d's", f.Handle, handle)
				}
				if f.Name != name {
					t.Fatalf("attach answered with name %q, want %q", f.Name, name)
				}
				got = f
				if f.Source != nil {
					return got, nil
				}
			case *wire.Detach:
				if got == nil || f.Handle != handle {
					t.Fatalf("detach of handle %d before the attach of %d", f.Handle, handle)
				}
				return got, f
			}
		}
	}
	credit := func(handle uint32, n uint32) {
		t.Helper()
		in := uint32(0)
		r.Send(0, &wire.Flow{NextIncomingID: &in, IncomingWindow: 1000, NextOutgoingID: 1, OutgoingWindow: 1000,
			Handle: &handle, DeliveryCount: new(uint32), LinkCredit: &n}, nil)
	}
	// expect reads until body arrived once on each of handles, and fails
	// on any other transfer.
	expect := func(body string, handles ...uint32) {
		t.Helper()
		want := map[uint32]bool{}
		for _, h := range handles {
			want[h] = true
		}
		for len(want) > 0 {
			f := r.Next()
			tr, ok := f.Body.(*wire.Transfer)
			if !ok {
				continue
			}
			m, err := wire.DecodeMessage(f.Payload)
			if err != nil {
				t.Fatalf("transfer on handle %d: %v", tr.Handle, err)
			}
			if got := string(bytes.Join(m.Data, nil)); !want[tr.Handle] || got != body {
				t.Fatalf("transfer of %q on handle %d, want %q on each of %v", got, tr.Handle, body, handles)
			}
			delete(want, tr.Handle)
		}
	}
	publish := func(body string) {
		t.Helper()
		m := amqp.NewMessage([]byte(body))
		m.Header = &amqp.MessageHeader{Durable: true} // kept for an inactive durable subscription
		amqpSend(t, amqpSender(t, amqpSession(t, amqpDial(t, addr, nil)), topic, nil), m)
	}

	name := clientID + "-" + topic // Proton's default: container id, address
	for _, h := range []uint32{0, 1} {
		if _, d := attach(h, name, &wire.Source{Address: topic}); d != nil {
			t.Fatalf("link %d named %q refused: %+v", h, name, d.Error)
		}
		credit(h, 10)
	}
	// Each answer came once its subscription was in place.
	publish("to both")
	expect("to both", 0, 1)

	// A durable link: the name is the subscription's.
	durable := &wire.Source{Address: topic, Durable: wire.DurableUnsettledState, ExpiryPolicy: wire.ExpiryNever}
	if _, d := attach(2, "dur", durable); d != nil {
		t.Fatalf("durable link refused: %+v", d.Error)
	}
	_, d := attach(3, "dur", durable)
	wantText := "Durable consumer is in use for client: " + clientID + " and subscriptionName: dur"
	if d == nil || d.Error == nil || d.Error.Description != wantText {
		t.Fatalf("second durable link of one name: detach %+v, want one saying %q", d, wantText)
	}
	// Detached (not closed), the subscription keeps what is published.
	r.Send(0, &wire.Detach{Handle: 2}, nil)
	for {
		if dt, ok := r.Next().Body.(*wire.Detach); ok && dt.Handle == 2 {
			break
		}
	}
	publish("kept while detached")
	expect("kept while detached", 0, 1)
	a, d := attach(4, "dur", nil)
	if d != nil {
		t.Fatalf("re-attach by name refused: %+v", d.Error)
	}
	if a.Source.Address != topic || a.Source.Durable != wire.DurableUnsettledState {
		t.Fatalf("re-attached source %+v, want %s with durable unsettled-state", a.Source, topic)
	}
	credit(4, 10)
	expect("kept while detached", 4)
	publish("after the re-attach")
	expect("after the re-attach", 0, 1, 4)

	_, d = attach(5, "never-subscribed", nil)
	if want := "Unknown subscription link: never-subscribed"; d == nil || d.Error == nil || d.Error.Condition != wire.ErrCondNotFound || d.Error.Description != want {
		t.Fatalf("re-attach of an unknown subscription: detach %+v, want amqp:not-found %q", d, want)
	}
	// The durable subscription goes with its link closed (not detached).
	r.Send(0, &wire.Detach{Handle: 4, Closed: true}, nil)
	for {
		if dt, ok := r.Next().Body.(*wire.Detach); ok && dt.Handle == 4 {
			break
		}
	}
}

func init() {
	register(Case{Name: "amqp/link/same-link-name", Needs: []string{AMQP}, Run: amqpRawSameLinkName,
		Pins:   "two links of one name both receive; a second durable link of a name is refused (Durable consumer is in use ...); re-attach by name resumes; unknown name: amqp:not-found",
		Source: "AMQP 1.0 §2.6.1 link names; AmqpSession.createReceiver, AmqpReceiver (durable subscription = container id + link name)"})
}
