package conform

import (
	"time"

	"wharf/protocols/mqtt/wire"
)

// mqtt5SharedSubscriptions: three MQTT 5 members of "$share/g/<base>/+"
// share 30 QoS 1 publications, each reaching exactly one member under the
// topic's own name, while a plain subscriber to the same filter gets all
// 30; malformed share names and filters are refused in the SUBACK.
// (Moved from conformance/mqttraw_test.go; that the share's queue goes
// when its last member leaves is engine state, checked there.)
func mqtt5SharedSubscriptions(t *T) {
	needMQTT5(t)
	addr := t.Addr(MQTT)
	base := t.Uniq()
	members := make([]*RawMQTT, 3)
	for i := range members {
		r := DialRawMQTT(t, addr)
		r.Version = wire.Version5
		ack := r.Connect(base+"-m"+string(rune('0'+i)), true, 0, nil)
		if ack.Type != wire.CONNACK || ack.ReasonCode != 0 {
			t.Fatalf("member %d: CONNECT answered %s %#x", i, ack.Type, ack.ReasonCode)
		}
		if ack.Props != nil && ack.Props.HasSharedSubAvailable && ack.Props.SharedSubAvailable == 0 {
			t.Fatal("CONNACK says shared subscriptions are unavailable")
		}
		r.Send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: "$share/g/" + base + "/+", QoS: 0}}})
		if p := r.Read(); p.Type != wire.SUBACK || string(p.ReasonCodes) != "\x00" {
			t.Fatalf("SUBACK %s %#v", p.Type, p.ReasonCodes)
		}
		members[i] = r
	}
	// An ordinary subscriber alongside the group still gets everything.
	plain := DialRawMQTT(t, addr)
	plain.Connect(base+"-plain", true, 0, nil)
	plain.Send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 1, Subscriptions: []wire.Subscription{{Filter: base + "/+"}}})
	if p := plain.Read(); p.Type != wire.SUBACK {
		t.Fatalf("plain SUBSCRIBE answered %s", p.Type)
	}
	pub := DialRawMQTT(t, addr)
	pub.Connect(base+"-pub", true, 0, nil)
	const n = 30
	for i := 0; i < n; i++ {
		pub.Send(&wire.Packet{Type: wire.PUBLISH, QoS: 1, PacketID: uint16(i + 1), Topic: base + "/t", Payload: []byte{byte(i)}})
		if p := pub.Read(); p.Type != wire.PUBACK {
			t.Fatalf("PUBLISH %d answered %s", i, p.Type)
		}
	}
	// The plain subscriber's 30 are the barrier: the broker has routed
	// every publication before the members are drained.
	for i := 0; i < n; i++ {
		if p := plain.Read(); p.Type != wire.PUBLISH {
			t.Fatalf("plain subscriber got %s", p.Type)
		}
	}
	// Each message went to exactly one member, under the topic's name.
	seen := map[byte]int{}
	for i, r := range members {
		for {
			// A member with nothing more within 300ms has had its share.
			p, err := r.TryRead(300 * time.Millisecond)
			if err != nil {
				break
			}
			if p.Type != wire.PUBLISH || p.Topic != base+"/t" {
				t.Fatalf("member %d got %s on %q", i, p.Type, p.Topic)
			}
			seen[p.Payload[0]]++
		}
	}
	if len(seen) != n {
		t.Fatalf("the group got %d distinct messages, want %d", len(seen), n)
	}
	for v, k := range seen {
		if k != 1 {
			t.Fatalf("message %d reached %d members", v, k)
		}
	}
	// Invalid share names are refused in the SUBACK.
	r := members[0]
	r.Send(&wire.Packet{Type: wire.SUBSCRIBE, PacketID: 2, Subscriptions: []wire.Subscription{{Filter: "$share/g+/x"}, {Filter: "a/#/b"}}})
	if p := r.Read(); p.Type != wire.SUBACK || string(p.ReasonCodes) != "\x8f\x8f" {
		t.Fatalf("SUBACK %#v, want 0x8F twice", p.ReasonCodes)
	}
	for _, m := range members {
		m.Send(&wire.Packet{Type: wire.DISCONNECT})
		m.Closed()
	}
}

func init() {
	register(Case{Name: "mqtt5/subscribe/shared-subscriptions", Needs: []string{MQTT}, Run: mqtt5SharedSubscriptions, Extension: mqtt5Extension,
		Pins:   "members of $share/g/filter each get a distinct part of the publications, a plain subscriber all of them; bad share names get SUBACK 0x8F",
		Source: "MQTT 5.0 §4.8.2 Shared Subscriptions, [MQTT-4.8.2-1], [MQTT-4.8.2-2]"})
}
