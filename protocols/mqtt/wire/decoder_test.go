package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestMQTTWireGoldenCoversEveryProperty: every MQTT 5 property identifier
// appears in at least one decoded golden packet.
func TestMQTTWireGoldenCoversEveryProperty(t *testing.T) {
	seen := map[byte]bool{}
	mark := func(p *Properties) {
		if p == nil {
			return
		}
		enc := appendProps(nil, p, p.Size())
		r := reader{b: enc, end: len(enc)}
		if _, err := r.vbi("length"); err != nil {
			t.Fatal(err)
		}
		for r.i < r.end {
			id := r.b[r.i]
			r.i++
			seen[id] = true
			var err error
			switch id {
			case propPayloadFormat, propRequestProblemInfo, propRequestResponseInfo, propMaximumQoS,
				propRetainAvailable, propWildcardSubAvailable, propSubIDAvailable, propSharedSubAvailable:
				_, err = r.u8("")
			case propServerKeepAlive, propReceiveMaximum, propTopicAliasMaximum, propTopicAlias:
				_, err = r.u16("")
			case propMessageExpiry, propSessionExpiry, propWillDelay, propMaximumPacketSize:
				_, err = r.u32("")
			case propSubscriptionID:
				_, err = r.vbi("")
			case propUser:
				if _, _, err = r.binRange(""); err == nil {
					_, _, err = r.binRange("")
				}
			default:
				_, _, err = r.binRange("")
			}
			if err != nil {
				t.Fatalf("walking encoded properties % x: %v", enc, err)
			}
		}
	}
	for _, tc := range goldenCases() {
		for i := range tc.want {
			mark(tc.want[i].Props)
			if c := tc.want[i].Connect; c != nil {
				mark(c.WillProps)
			}
		}
	}
	for id, info := range propTable {
		if info.name != "" && !seen[byte(id)] {
			t.Errorf("no golden packet carries property 0x%02X (%s)", id, info.name)
		}
	}
}

func TestMQTTWireErrorsCarryReasons(t *testing.T) {
	check := func(raw []byte, version byte, lim Limits, sentinel error, reason byte, msg string) {
		t.Helper()
		d := NewDecoder(lim)
		d.SetVersion(version)
		_, err := d.Feed(raw, nil)
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("decode % x: error %v is not an *Error", raw, err)
		}
		if e.Reason != reason || ReasonFor(err) != reason || !errors.Is(err, sentinel) {
			t.Errorf("decode % x: reason 0x%02X (ReasonFor 0x%02X), is %v: %v; want 0x%02X and %v",
				raw, e.Reason, ReasonFor(err), sentinel, errors.Is(err, sentinel), reason, sentinel)
		}
		if err.Error() != msg {
			t.Errorf("decode % x: message %q, want %q", raw, err, msg)
		}
	}
	def := DefaultLimits()
	check(pkt(0x36, str("t"), u16(1)), Version311, def, ErrMalformed, ReasonMalformedPacket,
		"mqtt: PUBLISH QoS 3 is malformed [MQTT-3.3.1-4]")
	check(pkt(0x82, u16(1)), Version311, def, ErrProtocol, ReasonProtocolError,
		"mqtt: SUBSCRIBE has no topic filters [MQTT-3.8.3-3]")
	check(cat(0x30, 0xFF, 0xFF, 0xFF, 0x7F), Version5, def, ErrPacketTooLarge, ReasonPacketTooLarge,
		"mqtt: PUBLISH packet of 268435460 bytes exceeds the limit of 268435456 bytes")
	check(pkt(0x10, str("MQTT"), 7, 0, u16(0), str("c")), 0, def, ErrUnsupportedVersion, ReasonUnsupportedProtocolVersion,
		`mqtt: CONNECT protocol level 7 with protocol name "MQTT" is not supported [MQTT-3.1.2-2]`)
	check(pkt(0x30, str("a/#"), "x"), Version311, def, ErrTopicNameInvalid, ReasonTopicNameInvalid,
		`mqtt: PUBLISH topic name "a/#" contains wildcard '#' [MQTT-3.3.2-2]`)
	check(pkt(0x30, str("t"), props(p16(propTopicAlias, 0))), Version5, def, ErrTopicAliasInvalid, ReasonTopicAliasInvalid,
		"mqtt: PUBLISH Topic Alias is 0 [MQTT-3.3.2-8]")
	check(pkt(0xA2, u16(1), str("a"), str("b")), Version311, Limits{MaxTopicsPerPacket: 1}, ErrQuotaExceeded, ReasonQuotaExceeded,
		"mqtt: UNSUBSCRIBE has more than 1 topic filters")

	if got := ReasonFor(errors.New("other")); got != ReasonUnspecifiedError {
		t.Errorf("ReasonFor(other error) = 0x%02X, want 0x80", got)
	}
	wrapped := errors.Join(errors.New("context"), malformed("x"))
	if ReasonFor(wrapped) != ReasonMalformedPacket || !errors.Is(wrapped, ErrMalformed) {
		t.Errorf("a wrapped *Error lost its reason")
	}
}

// TestMQTTWireTooLargeBeforeBuffering: the size error comes with the fixed
// header, before any body byte is held.
func TestMQTTWireTooLargeBeforeBuffering(t *testing.T) {
	d := NewDecoder(Limits{MaxPacketBytes: 1024})
	d.SetVersion(Version311)
	if _, err := d.Feed([]byte{0x30, 0x81}, nil); err != nil {
		t.Fatalf("incomplete header: %v", err)
	}
	_, err := d.Feed([]byte{0x08}, nil) // remaining length 1025
	if !errors.Is(err, ErrPacketTooLarge) {
		t.Fatalf("error %v, want ErrPacketTooLarge", err)
	}
	if d.body != nil {
		t.Fatalf("decoder buffered %d bytes of a refused packet", cap(d.body))
	}
}

// TestMQTTWireRemainingLengthIsNotAnAllocation: a large allowed remaining
// length reserves at most one chunk until the bytes arrive.
func TestMQTTWireRemainingLengthIsNotAnAllocation(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	d.SetVersion(Version311)
	if _, err := d.Feed(cat(0x30, vbi(200<<20), str("t"), "abc"), nil); err != nil {
		t.Fatal(err)
	}
	if c := cap(d.body); c > keepBytes {
		t.Fatalf("decoder reserved %d bytes for 6 received, want at most %d", c, keepBytes)
	}
	if got := d.Buffered(); got != 1+4+6 {
		t.Fatalf("Buffered = %d, want 11", got)
	}
}

func TestMQTTWireStickyError(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	d.SetVersion(Version311)
	_, err := d.Feed(pkt(0x36), nil)
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("error %v, want ErrMalformed", err)
	}
	got, err2 := d.Feed(pkt(0xC0), nil)
	if err2 != err || len(got) != 0 || d.Err() != err {
		t.Fatalf("after an error Feed returned %d packets and %v, want none and %v", len(got), err2, err)
	}
}

// TestMQTTWireVersionAfterBrokenConnect: a CONNECT whose name and level were
// read leaves its level in force even when the rest fails, so the session
// can answer in the client's format.
func TestMQTTWireVersionAfterBrokenConnect(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	_, err := d.Feed(pkt(0x10, str("MQTT"), 5, 0x01, u16(0), props(), str("c")), nil)
	if !errors.Is(err, ErrMalformed) || d.Version() != Version5 {
		t.Fatalf("error %v, Version %d; want ErrMalformed and 5", err, d.Version())
	}
	d = NewDecoder(DefaultLimits())
	_, err = d.Feed(pkt(0x10, str("MQTT"), 9, 0, u16(0), str("c")), nil)
	if !errors.Is(err, ErrUnsupportedVersion) || d.Version() != 0 {
		t.Fatalf("error %v, Version %d; want ErrUnsupportedVersion and 0", err, d.Version())
	}
}

func TestMQTTWireSetVersion(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	if d.Version() != 0 {
		t.Fatalf("new decoder has level %d", d.Version())
	}
	// A client-side decoder: no CONNECT, the level set up front.
	d.SetVersion(Version5)
	got, err := d.Feed(pkt(0x20, 0, 0, props(p16(propReceiveMaximum, 10))), nil)
	if err != nil || len(got) != 1 || got[0].Props.ReceiveMaximum != 10 {
		t.Fatalf("CONNACK 5: %v %s", err, dump(got))
	}
	d.SetVersion(42)
	if d.Version() != 0 {
		t.Fatalf("SetVersion(42) left level %d", d.Version())
	}
	// A CONNECT after SetVersion (never seen on a real connection) is
	// decoded under its own level, which then holds.
	d = NewDecoder(DefaultLimits())
	d.SetVersion(Version5)
	got, err = d.Feed(cat(connect311("c"), pkt(0x40, u16(1))), nil)
	if err != nil || len(got) != 2 || d.Version() != Version311 {
		t.Fatalf("CONNECT 3.1.1 after SetVersion(5): %v, level %d, %s", err, d.Version(), dump(got))
	}
}

// TestMQTTWireOwnership: decoded packets survive the reuse of the input
// and of the decoder's buffers, and their slices cannot overwrite each other.
func TestMQTTWireOwnership(t *testing.T) {
	in := cat(pkt(0x10, str("MQTT"), 4, 0xC6, u16(0), str("c"), str("w"), str("wp"), str("user"), str("pw")),
		pkt(0x30, str("t/1"), "payload"))
	for _, split := range []int{len(in), 5, 30} {
		buf := append([]byte(nil), in...)
		d := NewDecoder(DefaultLimits())
		got, err := d.Feed(buf[:split], nil)
		if err == nil {
			got, err = d.Feed(buf[split:], got)
		}
		if err != nil || len(got) != 2 {
			t.Fatalf("split %d: %v %s", split, err, dump(got))
		}
		clear(buf)
		_, _ = d.Feed(pkt(0x30, str("zzz"), "overwrite the decoder's buffers"), nil)
		c := got[0].Connect
		c.WillPayload = append(c.WillPayload, "XXXX"...)
		got[1].Payload = append(got[1].Payload, "XXXX"...)
		if c.ClientID != "c" || c.WillTopic != "w" || string(c.WillPayload) != "wpXXXX" || c.Username != "user" ||
			string(c.Password) != "pw" || got[1].Topic != "t/1" || string(got[1].Payload) != "payloadXXXX" {
			t.Fatalf("split %d: packets changed: %s", split, dump(got))
		}
	}
}

// TestMQTTWireLargePublishSplit feeds a payload far larger than one chunk in
// odd pieces; the body grown for it becomes the packet's, exactly sized.
func TestMQTTWireLargePublishSplit(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320000 bytes
	p := Packet{Type: PUBLISH, QoS: 1, PacketID: 9, Topic: "big", Payload: payload}
	enc := AppendPacket(nil, &p, Version311)
	d := NewDecoder(DefaultLimits())
	d.SetVersion(Version311)
	var out []Packet
	for rest := enc; len(rest) > 0; {
		n := min(len(rest), 7919)
		var err error
		if out, err = d.Feed(rest[:n], out); err != nil {
			t.Fatal(err)
		}
		rest = rest[n:]
	}
	if len(out) != 1 || !reflect.DeepEqual(out[0], p) {
		t.Fatalf("got %d packets", len(out))
	}
	if d.body != nil {
		t.Errorf("decoder kept the %d-byte body it handed over", cap(d.body))
	}
}

func TestMQTTWireAllocations(t *testing.T) {
	raw := AppendPacket(nil, &Packet{Type: PUBLISH, QoS: 1, PacketID: 1, Topic: "a/b/c", Payload: make([]byte, 256)}, Version311)
	d := NewDecoder(DefaultLimits())
	d.SetVersion(Version311)
	out := make([]Packet, 0, 1)
	if n := testing.AllocsPerRun(100, func() { out, _ = d.Feed(raw, out[:0]) }); n != 1 {
		t.Errorf("decoding a 3.1.1 PUBLISH allocated %v times, want 1", n)
	}
	ack := AppendPacket(nil, &Packet{Type: PUBACK, PacketID: 1}, Version5)
	d.SetVersion(Version5)
	if n := testing.AllocsPerRun(100, func() { out, _ = d.Feed(ack, out[:0]) }); n != 0 {
		t.Errorf("decoding a 5 PUBACK allocated %v times, want 0", n)
	}
	p := Packet{Type: PUBLISH, QoS: 1, PacketID: 1, Topic: "a/b/c", Payload: make([]byte, 256),
		Props: &Properties{SubscriptionIDs: []uint32{7, 300}, User: []UserProperty{{"k", "v"}}}}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf = AppendPacket(buf[:0], &p, Version5) }); n != 0 {
		t.Errorf("AppendPacket with capacity allocated %v times, want 0", n)
	}
}

func TestMQTTWireEncode(t *testing.T) {
	check := func(p Packet, v byte, want []byte) {
		t.Helper()
		if got := AppendPacket([]byte("x"), &p, v); !bytes.Equal(got, cat("x", want)) {
			t.Errorf("AppendPacket(%s, %d) = % x, want x % x", dump([]Packet{p}), v, got, want)
		}
	}
	// CONNECT takes its level and name from Connect, or from version.
	check(Packet{Type: CONNECT}, Version31, pkt(0x10, str("MQIsdp"), 3, 0, u16(0), str("")))
	check(Packet{Type: CONNECT, Connect: &Connect{ProtocolLevel: 5}}, Version311, pkt(0x10, str("MQTT"), 5, 0, u16(0), props(), str("")))
	// Nothing of MQTT 5 below 5.
	full := &Properties{ReasonString: "r", User: []UserProperty{{"a", "b"}}}
	check(Packet{Type: PUBACK, PacketID: 1, ReasonCode: 0x80, Props: full}, Version311, pkt(0x40, u16(1)))
	check(Packet{Type: DISCONNECT, ReasonCode: 0x8E, Props: full}, Version311, pkt(0xE0))
	check(Packet{Type: CONNACK, SessionPresent: true}, Version31, pkt(0x20, 0, 0))
	check(Packet{Type: UNSUBACK, PacketID: 2, ReasonCodes: []byte{0}}, Version311, pkt(0xB0, u16(2)))
	check(Packet{Type: SUBSCRIBE, PacketID: 3, Subscriptions: []Subscription{{Filter: "f", QoS: 1, NoLocal: true, RetainHandling: 2}}},
		Version311, pkt(0x82, u16(3), str("f"), 1))
	// Short forms in 5.
	check(Packet{Type: PUBREL, PacketID: 1}, Version5, pkt(0x62, u16(1)))
	check(Packet{Type: PUBREL, PacketID: 1, Props: &Properties{}}, Version5, pkt(0x62, u16(1)))
	check(Packet{Type: PUBREL, PacketID: 1, ReasonCode: 0x92}, Version5, pkt(0x62, u16(1), 0x92))
	check(Packet{Type: DISCONNECT}, Version5, pkt(0xE0))
	check(Packet{Type: AUTH, ReasonCode: 0x18}, Version311, pkt(0xF0, 0x18))
	// Unknown types write nothing.
	check(Packet{Type: 0}, Version5, nil)
	if n := PacketSize(&Packet{Type: 16}, Version5); n != 0 {
		t.Errorf("PacketSize of type 16 = %d", n)
	}
	// The remaining length takes as many bytes as it needs.
	for _, n := range []int{0, 127, 128, 16383, 16384, 2097151, 2097152} {
		p := Packet{Type: PUBLISH, Topic: "t"}
		if n > 0 {
			p.Payload = make([]byte, n)
		}
		enc := AppendPacket(nil, &p, Version311)
		if len(enc) != PacketSize(&p, Version311) || !bytes.Equal(enc[1:1+vbiLen(n+3)], vbi(n+3)) {
			t.Errorf("payload %d: header % x", n, enc[:min(len(enc), 6)])
		}
		roundTrip(t, p, Version311)
	}
}

func TestMQTTWireTypeString(t *testing.T) {
	for tp, want := range map[Type]string{CONNECT: "CONNECT", PUBLISH: "PUBLISH", UNSUBACK: "UNSUBACK", AUTH: "AUTH", 0: "Type(0)", 16: "Type(16)"} {
		if got := tp.String(); got != want {
			t.Errorf("Type(%d).String() = %q, want %q", tp, got, want)
		}
	}
}

func TestMQTTWireDefaultLimits(t *testing.T) {
	d := NewDecoder(Limits{})
	if !reflect.DeepEqual(d.lim, DefaultLimits()) || d.lim.MaxPacketBytes != 256<<20 {
		t.Errorf("zero Limits became %+v, want %+v", d.lim, DefaultLimits())
	}
	if d := NewDecoder(Limits{MaxPacketBytes: -1, MaxUserProperties: 3}); d.lim.MaxPacketBytes != 256<<20 || d.lim.MaxUserProperties != 3 {
		t.Errorf("limits %+v", d.lim)
	}
}

// TestMQTTWireErrorTextIsClipped: a hostile 64 KiB topic does not become a
// 64 KiB log line.
func TestMQTTWireErrorTextIsClipped(t *testing.T) {
	d := NewDecoder(DefaultLimits())
	d.SetVersion(Version311)
	_, err := d.Feed(pkt(0x30, str(strings.Repeat("a", 60000)+"#")), nil)
	if !errors.Is(err, ErrTopicNameInvalid) || len(err.Error()) > 300 {
		t.Fatalf("error of %d bytes: %.100v", len(err.Error()), err)
	}
}
