package engine_test

import (
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
