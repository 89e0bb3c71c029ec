package engine_test

import (
	"slices"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// Destinations a client created survive a restart empty, with their
// policy, as ActiveMQ's broker re-creates at start every destination its
// store lists (KahaDB's db.data holds one StoredDestination per queue and
// topic, empty or not): a queue created by a consumer, one emptied by a
// consume, a topic. A temporary queue does not (ActiveMQ gives it no
// store), nor a destination removed before the restart.
func TestEngineRestartKeepsEmptyDestinations(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			const limit = 123 << 10
			v := startOn(t, kind, func(o *engine.Options) {
				o.PolicyFor = func(d message.Destination) engine.Policy {
					p := engine.DefaultPolicy()
					if d.Name == "rs.subscribed" {
						p.MemoryLimit = limit
					}
					return p
				}
			})
			subscribed, emptied, removed := message.QueueDest("rs.subscribed"), message.QueueDest("rs.emptied"), message.QueueDest("rs.removed")
			top := message.TopicDest("rs.topic")
			c := v.conn("c1")
			s, _ := sub(t, c, engine.SubSpec{Destination: subscribed})
			if err := c.CloseSubscription(s); err != nil {
				t.Fatal(err)
			}
			send(t, c, msg(emptied, "x", true))
			s, in := sub(t, c, engine.SubSpec{Destination: emptied, AckMode: engine.AckIndividual})
			d := in.recv(t)
			if err := c.Ack(s, d.ID, ""); err != nil {
				t.Fatal(err)
			}
			if st := v.barrier(emptied); st.QueueSize != 0 {
				t.Fatalf("%s after the ack: size %d, want 0", emptied, st.QueueSize)
			}
			if err := c.CloseSubscription(s); err != nil {
				t.Fatal(err)
			}
			send(t, c, msg(top, "nobody", false))
			send(t, c, msg(removed, "y", true))
			if err := v.e.RemoveDestination(removed); err != nil {
				t.Fatal(err)
			}
			temp, err := c.CreateTemp(false)
			if err != nil {
				t.Fatal(err)
			}
			v.barrier(emptied)

			v.restart()
			for _, d := range []message.Destination{subscribed, emptied, top} {
				st := v.e.Stats(d)
				if !st.Exists || st.QueueSize != 0 {
					t.Errorf("%s after the restart: exists %v, size %d; want it, empty", d, st.Exists, st.QueueSize)
				}
			}
			if got := v.e.Stats(subscribed).MemoryLimit; got != limit {
				t.Errorf("%s memory limit after the restart: got %d, want its policy's %d", subscribed, got, limit)
			}
			got := v.e.Destinations()
			for _, d := range []message.Destination{removed, temp} {
				if slices.Contains(got, d) {
					t.Errorf("destinations after the restart: got %v, want no %s", got, d)
				}
			}
		})
	}
}
