package engine_test

import (
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// useVirtualDestSubs: a consumer on a virtual topic's consumer queue, and
// one on a composite's forwardTo queue, are also advertised as consumers
// of the virtual destinations on ActiveMQ.Advisory.VirtualDestination.
// Consumer.*, with the virtual destination as theirs, and replayed to a
// later subscriber of those topics; their closing publishes RemoveInfo
// there. Without the option nothing is published there.
func TestEngineVirtualDestinationConsumerAdvisories(t *testing.T) {
	for _, use := range []bool{true, false} {
		v := start(t, func(o *engine.Options) {
			o.VirtualTopics = []engine.VirtualTopic{engine.DefaultVirtualTopic()}
			o.UseVirtualDestSubs = use
			o.CompositesForwardingTo = func(d message.Destination) []message.Destination {
				if d == message.QueueDest("include.bar.forward") {
					return []message.Destination{message.TopicDest("include.bar")}
				}
				return nil
			}
		})
		c := v.conn("")
		_, adv := sub(t, c, engine.SubSpec{Destination: message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + ">"), AckMode: engine.AckAuto})
		vq, _ := sub(t, c, engine.SubSpec{Destination: message.QueueDest("Consumer.A.VirtualTopic.Orders")})
		sub(t, c, engine.SubSpec{Destination: message.QueueDest("include.bar.forward")})
		sub(t, c, engine.SubSpec{Destination: message.QueueDest("plain")})
		// Barrier: the advisories go to the advisory topic's shard.
		v.barrier(message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + "Topic.VirtualTopic.Orders"))
		v.barrier(message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + "Topic.include.bar"))
		if !use {
			adv.none(t)
			continue
		}
		want := map[string]string{
			engine.VirtualDestConsumerAdvisoryPrefix + "Topic.VirtualTopic.Orders": "topic://VirtualTopic.Orders",
			engine.VirtualDestConsumerAdvisoryPrefix + "Topic.include.bar":         "topic://include.bar",
		}
		check := func(adv sink) {
			t.Helper()
			got := map[string]string{}
			for range 2 {
				d := adv.recv(t)
				if d.Msg.Advisory == nil || d.Msg.Advisory.Command != "ConsumerInfo" {
					t.Fatalf("advisory %+v", d.Msg.Advisory)
				}
				dv, _ := d.Msg.Advisory.Fields.Get("Destination")
				got[d.Msg.Destination.Name] = dv.Str()
			}
			for k, w := range want {
				if got[k] != w {
					t.Fatalf("advisories %v, want %v", got, want)
				}
			}
			adv.none(t)
		}
		check(adv)
		// A later subscriber gets them replayed.
		_, adv2 := sub(t, v.conn(""), engine.SubSpec{Destination: message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + "Topic.>"), AckMode: engine.AckAuto})
		v.barrier(message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + "Topic.VirtualTopic.Orders"))
		v.barrier(message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + "Topic.include.bar"))
		check(adv2)
		if err := c.CloseSubscription(vq); err != nil {
			t.Fatal(err)
		}
		d := adv.recv(t)
		if d.Msg.Advisory == nil || d.Msg.Advisory.Command != "RemoveInfo" || d.Msg.Destination.Name != engine.VirtualDestConsumerAdvisoryPrefix+"Topic.VirtualTopic.Orders" {
			t.Fatalf("after the close: %s %+v", d.Msg.Destination, d.Msg.Advisory)
		}
	}
}

// useVirtualDestSubsOnCreation: a queue a virtual destination forwards to
// is demand for the virtual destination from its creation, with no
// consumer: one ConsumerInfo per (virtual destination, queue) on
// ActiveMQ.Advisory.VirtualDestination.Consumer.*, of an id the broker
// makes, replayed to later subscribers and after a restart (the queue
// recovered from KahaDB), and a RemoveInfo of that id when the queue is
// removed. Without the option, or without useVirtualDestSubs (as in
// ActiveMQ), a queue with no consumer is no demand.
func TestEngineVirtualDestSubsOnCreation(t *testing.T) {
	for _, tc := range []struct {
		name             string
		subs, onCreation bool
	}{{"on", true, true}, {"onCreationOnly", false, true}, {"subsOnly", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			v := startKahaDB(t, func(o *engine.Options) {
				o.VirtualTopics = []engine.VirtualTopic{engine.DefaultVirtualTopic()}
				o.UseVirtualDestSubs = tc.subs
				o.UseVirtualDestSubsOnCreation = tc.onCreation
				o.CompositesForwardingTo = func(d message.Destination) []message.Destination {
					if d == message.QueueDest("include.bar.forward") {
						return []message.Destination{message.TopicDest("include.bar")}
					}
					return nil
				}
			})
			orders := engine.VirtualDestConsumerAdvisoryPrefix + "Topic.VirtualTopic.Orders"
			bar := engine.VirtualDestConsumerAdvisoryPrefix + "Topic.include.bar"
			all := message.TopicDest(engine.VirtualDestConsumerAdvisoryPrefix + ">")
			barriers := func() {
				v.barrier(message.TopicDest(orders))
				v.barrier(message.TopicDest(bar))
			}
			_, adv := sub(t, v.conn(""), engine.SubSpec{Destination: all, AckMode: engine.AckAuto})
			for _, q := range []string{"Consumer.A.VirtualTopic.Orders", "include.bar.forward", "plain"} {
				if err := v.e.AddDestination(message.QueueDest(q)); err != nil {
					t.Fatal(err)
				}
			}
			barriers()
			if !(tc.subs && tc.onCreation) {
				adv.none(t)
				return
			}
			// recv takes n ConsumerInfo advisories: consumer id by topic.
			recv := func(adv sink, n int) map[string]string {
				t.Helper()
				ids := map[string]string{}
				for range n {
					d := adv.recv(t)
					a := d.Msg.Advisory
					if a == nil || a.Command != "ConsumerInfo" {
						t.Fatalf("advisory on %s: %+v", d.Msg.Destination, a)
					}
					dest, _ := a.Fields.Get("Destination")
					id, _ := a.Fields.Get("ConsumerId")
					if want := "topic://" + strings.TrimPrefix(d.Msg.Destination.Name, engine.VirtualDestConsumerAdvisoryPrefix+"Topic."); dest.Str() != want {
						t.Fatalf("advisory on %s names %s, want %s", d.Msg.Destination, dest.Str(), want)
					}
					if !strings.HasPrefix(id.Str(), "advisory-") {
						t.Fatalf("consumer id %q, want a broker-made advisory- id", id.Str())
					}
					ids[d.Msg.Destination.Name] = id.Str()
				}
				adv.none(t)
				return ids
			}
			ids := recv(adv, 2)
			if len(ids) != 2 || ids[orders] == "" || ids[bar] == "" || ids[orders] == ids[bar] {
				t.Fatalf("advisories %v, want one each on %s and %s", ids, orders, bar)
			}
			// A consumer coming and going on the queue adds its own
			// advisories but leaves the queue's demand in place.
			c := v.conn("")
			s, _ := sub(t, c, engine.SubSpec{Destination: message.QueueDest("Consumer.A.VirtualTopic.Orders")})
			if err := c.CloseSubscription(s); err != nil {
				t.Fatal(err)
			}
			barriers()
			for range 2 {
				d := adv.recv(t)
				if id, _ := d.Msg.Advisory.Fields.Get("ConsumerId"); id.Str() == ids[orders] {
					t.Fatalf("the consumer's advisory reused the queue's demand id %s", id.Str())
				}
			}
			adv.none(t)

			// A later subscriber gets the demand replayed.
			_, adv2 := sub(t, v.conn(""), engine.SubSpec{Destination: all, AckMode: engine.AckAuto})
			barriers()
			if got := recv(adv2, 2); got[orders] != ids[orders] || got[bar] != ids[bar] {
				t.Fatalf("replayed %v, want %v", got, ids)
			}

			// After a restart the queues recovered from the store are
			// demand again.
			v.restart()
			_, adv3 := sub(t, v.conn(""), engine.SubSpec{Destination: all, AckMode: engine.AckAuto})
			barriers()
			if got := recv(adv3, 2); got[orders] == "" || got[bar] == "" {
				t.Fatalf("after the restart %v", got)
			}

			// Removing the queue withdraws its demand.
			if err := v.e.RemoveDestination(message.QueueDest("Consumer.A.VirtualTopic.Orders")); err != nil {
				t.Fatal(err)
			}
			barriers()
			d := adv3.recv(t)
			if d.Msg.Advisory == nil || d.Msg.Advisory.Command != "RemoveInfo" || d.Msg.Destination.Name != orders {
				t.Fatalf("after the removal: %s %+v", d.Msg.Destination, d.Msg.Advisory)
			}
			adv3.none(t)
			_, adv4 := sub(t, v.conn(""), engine.SubSpec{Destination: all, AckMode: engine.AckAuto})
			barriers()
			if got := recv(adv4, 1); got[bar] == "" {
				t.Fatalf("replay after the removal %v, want only %s", got, bar)
			}
		})
	}
}
