package wire

import (
	"errors"
	"testing"
)

// A decoder handed back between packets (Idle) and replaced by another
// (Resume) decodes the rest of the stream as the first one would: the
// protocol level and the CONNECT seen carry over, and a packet split
// across the swap is never allowed (Idle is false mid-packet).
func TestMQTTWireIdleResume(t *testing.T) {
	connect := AppendPacket(nil, &Packet{Type: CONNECT, Connect: &Connect{
		ProtocolName: ProtocolName, ProtocolLevel: Version5, ClientID: "c", CleanSession: true}}, Version5)
	publish := AppendPacket(nil, &Packet{Type: PUBLISH, QoS: 1, PacketID: 7, Topic: "a/b", Payload: []byte("x"),
		Props: &Properties{ContentType: "text/plain"}}, Version5)

	a := NewDecoder(DefaultLimits())
	if !a.Idle() {
		t.Fatal("a new decoder is not Idle")
	}
	if ps, err := a.Feed(connect, nil); err != nil || len(ps) != 1 {
		t.Fatalf("CONNECT: %d packets, %v", len(ps), err)
	}
	if !a.Idle() || !a.Connected() || a.Version() != Version5 {
		t.Fatalf("after CONNECT: idle %v connected %v version %d; want true true 5", a.Idle(), a.Connected(), a.Version())
	}
	if _, err := a.Feed(publish[:3], nil); err != nil {
		t.Fatal(err)
	}
	if a.Idle() {
		t.Fatal("Idle with half a PUBLISH buffered")
	}
	if ps, err := a.Feed(publish[3:], nil); err != nil || len(ps) != 1 {
		t.Fatalf("rest of PUBLISH: %d packets, %v", len(ps), err)
	}

	// b takes over (as from a pool, with a's scratch of another stream).
	b := new(Decoder)
	b.Resume(DefaultLimits(), a.Version(), a.Connected())
	ps, err := b.Feed(publish, nil)
	if err != nil || len(ps) != 1 || ps[0].Props == nil || ps[0].Props.ContentType != "text/plain" || ps[0].PacketID != 7 {
		t.Fatalf("resumed decoder: %+v, %v; want the MQTT 5 PUBLISH with its content type", ps, err)
	}
	// The CONNECT seen carries over: a second one is refused [MQTT-3.1.0-2].
	if _, err := b.Feed(connect, nil); err == nil {
		t.Fatal("resumed decoder accepted a second CONNECT")
	}
	if b.Idle() {
		t.Fatal("a failed decoder reports Idle (it must not go back to a pool)")
	}
	// A failed decoder resumed for another connection starts clean.
	b.Resume(DefaultLimits(), 0, false)
	if !b.Idle() || b.Err() != nil {
		t.Fatalf("after Resume: idle %v err %v", b.Idle(), b.Err())
	}
	if ps, err := b.Feed(connect, nil); err != nil || len(ps) != 1 {
		t.Fatalf("CONNECT after Resume: %d packets, %v", len(ps), err)
	}
	// Limits come from Resume.
	small := b
	small.Resume(Limits{MaxPacketBytes: 8}, Version5, true)
	_, err = small.Feed(publish, nil)
	var we *Error
	if !errors.As(err, &we) || we.Reason != ReasonPacketTooLarge {
		t.Fatalf("PUBLISH over a resumed 8-byte limit: %v, want packet too large", err)
	}
}
