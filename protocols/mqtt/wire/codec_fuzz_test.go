package wire

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fuzzVersions are the decoder's starting levels: none (CONNECT first),
// 3.1, 3.1.1 and 5.
var fuzzVersions = [...]byte{0, Version31, Version311, Version5}

// fuzzLimits picks, from sel, either the default limits or small ones that
// the fuzzer can cross with short inputs.
func fuzzLimits(sel uint8) Limits {
	if sel/4%2 == 1 {
		return Limits{MaxPacketBytes: 64, MaxTopicsPerPacket: 2, MaxUserProperties: 2}
	}
	return DefaultLimits()
}

// FuzzMQTTWireDecode checks, for any input, starting level, limits and
// split: decoding never panics and returns only *Error values; a split
// stream decodes exactly as the whole stream; decoded packets respect the
// limits and the invariants the session relies on; and decode -> encode ->
// decode is the identity.
func FuzzMQTTWireDecode(f *testing.F) {
	for i, tc := range goldenCases() {
		sel := uint8(0)
		for j, v := range fuzzVersions {
			if v == tc.version {
				sel = uint8(j)
			}
		}
		f.Add(tc.raw, sel, uint64(i))
		f.Add(tc.raw, sel+4, uint64(i)*7919)
	}
	f.Fuzz(func(t *testing.T, raw []byte, sel uint8, seed uint64) {
		lim := fuzzLimits(sel)
		tc := goldenCase{version: fuzzVersions[sel%4], limits: &lim, err: errors.New("any")}

		whole, wholeErr := decodeChunks(tc, [][]byte{raw})

		rng := rand.New(rand.NewPCG(seed, uint64(len(raw))))
		var chunks [][]byte
		for rest := raw; len(rest) > 0; {
			n := 1 + rng.IntN(min(len(rest), 1+rng.IntN(64)))
			chunks = append(chunks, rest[:n])
			rest = rest[n:]
		}
		split, splitErr := decodeChunks(tc, chunks)
		if !reflect.DeepEqual(split, whole) || fmt.Sprint(splitErr) != fmt.Sprint(wholeErr) {
			t.Fatalf("split input differs:\n split %s err %v\n whole %s err %v", dump(split), splitErr, dump(whole), wholeErr)
		}
		if wholeErr != nil {
			var e *Error
			if !errors.As(wholeErr, &e) || errorSentinels[e.Reason] == nil || !strings.HasPrefix(e.Msg, "mqtt: ") {
				t.Fatalf("error %#v is not an *Error with a known reason", wholeErr)
			}
		}

		vs := levels(tc.version, whole)
		for i := range whole {
			p := &whole[i]
			checkFuzzPacket(t, p, vs[i], lim)
			roundTrip(t, *p, vs[i])
		}
	})
}

// checkFuzzPacket checks what a session may assume of a decoded packet.
func checkFuzzPacket(t *testing.T, p *Packet, v byte, lim Limits) {
	t.Helper()
	if n := PacketSize(p, v); n > lim.MaxPacketBytes {
		t.Fatalf("%s of %d bytes, limit %d", p.Type, n, lim.MaxPacketBytes)
	}
	if n := max(len(p.Subscriptions), len(p.Topics), len(p.ReasonCodes)); n > lim.MaxTopicsPerPacket {
		t.Fatalf("%s with %d topics or codes, limit %d", p.Type, n, lim.MaxTopicsPerPacket)
	}
	for _, props := range []*Properties{p.Props, connectWillProps(p)} {
		if props == nil {
			continue
		}
		if v != Version5 {
			t.Fatalf("%s under level %d has properties", p.Type, v)
		}
		if len(props.User) > lim.MaxUserProperties {
			t.Fatalf("%s with %d user properties, limit %d", p.Type, len(props.User), lim.MaxUserProperties)
		}
		if props.Size() == 0 {
			t.Fatalf("%s has empty non-nil properties", p.Type)
		}
	}
	if p.QoS > 2 || (p.Type != PUBLISH && (p.QoS != 0 || p.Dup || p.Retain)) {
		t.Fatalf("%s with QoS %d dup %v retain %v", p.Type, p.QoS, p.Dup, p.Retain)
	}
	switch p.Type {
	case PUBLISH:
		if (p.QoS > 0) != (p.PacketID != 0) {
			t.Fatalf("PUBLISH QoS %d with packet id %d", p.QoS, p.PacketID)
		}
		if p.Topic == "" && (p.Props == nil || !p.Props.HasTopicAlias) {
			t.Fatal("PUBLISH with an empty topic and no alias")
		}
		if p.Topic != "" && ValidTopicName(p.Topic) != nil {
			t.Fatalf("PUBLISH topic %q: %v", p.Topic, ValidTopicName(p.Topic))
		}
		if p.Payload != nil && len(p.Payload) == 0 {
			t.Fatal("empty payload is not nil")
		}
	case PUBACK, PUBREC, PUBREL, PUBCOMP, SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK:
		if p.PacketID == 0 {
			t.Fatalf("%s with packet id 0", p.Type)
		}
	case CONNECT:
		c := p.Connect
		if c == nil || c.ProtocolLevel != v || c.WillQoS > 2 || (!c.WillFlag && (c.WillQoS != 0 || c.WillRetain)) {
			t.Fatalf("CONNECT %+v under level %d", c, v)
		}
	}
}

func connectWillProps(p *Packet) *Properties {
	if p.Connect == nil {
		return nil
	}
	return p.Connect.WillProps
}
