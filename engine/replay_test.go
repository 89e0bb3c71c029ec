package engine_test

import (
	"fmt"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// A queue message that came through broker X is never given to X's
// network subscription, unless the queue's policy has
// ReplayWhenNoConsumers: then once it has been on the queue ReplayDelay
// and only network subscriptions are left (replay.go).
func TestEngineReplayWhenNoConsumers(t *testing.T) {
	for _, replay := range []bool{false, true} {
		t.Run(fmt.Sprintf("replay=%v", replay), func(t *testing.T) {
			v := start(t, func(o *engine.Options) {
				o.PolicyFor = func(d message.Destination) engine.Policy {
					p := engine.DefaultPolicy()
					p.ReplayWhenNoConsumers = replay
					p.ReplayDelay = 5 * time.Second
					return p
				}
			})
			q := message.QueueDest("stuck")
			p := v.conn("")
			// A local consumer with no credit: present, taking nothing.
			lc := v.conn("")
			local, err := lc.Subscribe(engine.SubSpec{Destination: q, AckMode: engine.AckIndividual}, newSink())
			if err != nil {
				t.Fatal(err)
			}
			net := v.conn("")
			ns, ch := sub(t, net, engine.SubSpec{Destination: q, AckMode: engine.AckIndividual,
				Network: &engine.NetworkSpec{RemoteBrokerID: "X", MessageTTL: 1}})
			back := msg(q, "from-X", true)
			back.BrokerPath = []string{"X"}
			send(t, p, back)
			send(t, p, msg(q, "here", true))
			if d := ch.recv(t); body(d) != "here" {
				t.Fatalf("network subscription got %q, want here", body(d))
			} else if err := net.Ack(ns, d.ID, ""); err != nil {
				t.Fatal(err)
			}
			// Past the delay, but a local consumer is there.
			v.clock.add(6 * time.Second)
			v.e.Tick()
			v.barrier(q)
			ch.none(t)
			// The local consumer goes: the next tick replays, if allowed.
			if err := lc.CloseSubscription(local); err != nil {
				t.Fatal(err)
			}
			v.e.Tick()
			if st := v.barrier(q); !replay {
				ch.none(t)
				if st.QueueSize != 1 {
					t.Fatalf("queue holds %d, want the stuck message", st.QueueSize)
				}
				return
			}
			if d := ch.recv(t); body(d) != "from-X" {
				t.Fatalf("network subscription got %q, want from-X", body(d))
			}
		})
	}
}

// ReplayDelay counts from the message's arrival: before it, nothing goes
// back even with no local consumer; the tick after it, the message does.
func TestEngineReplayDelay(t *testing.T) {
	v := start(t, func(o *engine.Options) {
		o.PolicyFor = func(d message.Destination) engine.Policy {
			p := engine.DefaultPolicy()
			p.ReplayWhenNoConsumers = true
			p.ReplayDelay = 5 * time.Second
			return p
		}
	})
	q := message.QueueDest("stuck")
	_, ch := sub(t, v.conn(""), engine.SubSpec{Destination: q, AckMode: engine.AckIndividual,
		Network: &engine.NetworkSpec{RemoteBrokerID: "X", MessageTTL: 1}})
	m := msg(q, "from-X", true)
	m.BrokerPath = []string{"X"}
	send(t, v.conn(""), m)
	v.clock.add(4 * time.Second)
	v.e.Tick()
	v.barrier(q)
	ch.none(t)
	v.clock.add(2 * time.Second)
	v.e.Tick()
	if d := ch.recv(t); body(d) != "from-X" {
		t.Fatalf("got %q", body(d))
	}
}
