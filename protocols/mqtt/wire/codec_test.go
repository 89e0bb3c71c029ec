package wire

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// goldenCase is one row of the MQTT codec golden table. The same table seeds
// FuzzMQTTWireDecode.
type goldenCase struct {
	name    string
	version byte    // decoder level before the first packet; 0: none (CONNECT first)
	limits  *Limits // nil: DefaultLimits
	raw     []byte
	want    []Packet
	err     error  // sentinel the decoder must return after want
	errText string // substring of the error message (usually the spec tag)
	// nonCanonical marks raw that decodes fine but is not what AppendPacket
	// writes for want (a lenient or long form).
	nonCanonical bool
}

// Builders for raw bytes. cat concatenates bytes (byte or int 0..255),
// []byte and strings taken as raw bytes.
func cat(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case byte:
			b = append(b, v)
		case int:
			if v < 0 || v > 255 {
				panic(fmt.Sprintf("cat: %d is not a byte", v))
			}
			b = append(b, byte(v))
		case []byte:
			b = append(b, v...)
		case string:
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("cat: %T", p))
		}
	}
	return b
}

// pkt builds a packet: first byte, minimal remaining length, body.
func pkt(first byte, body ...any) []byte {
	b := cat(body...)
	return cat(first, vbi(len(b)), b)
}

func str(s string) []byte   { return cat(u16(len(s)), s) }
func u16(v int) []byte      { return []byte{byte(v >> 8), byte(v)} }
func u32(v uint32) []byte   { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }
func vbi(n int) []byte      { return appendVBI(nil, n) }
func props(p ...any) []byte { b := cat(p...); return cat(vbi(len(b)), b) }

// Property builders: identifier then value.
func p8(id, v int) []byte          { return cat(id, v) }
func p16(id, v int) []byte         { return cat(id, u16(v)) }
func p32(id int, v uint32) []byte  { return cat(id, u32(v)) }
func pstr(id int, s string) []byte { return cat(id, str(s)) }
func puser(k, v string) []byte     { return cat(propUser, str(k), str(v)) }
func psubID(n int) []byte          { return cat(propSubscriptionID, vbi(n)) }
func pkts(p ...Packet) []Packet    { return p }
func limitsWith(fn func(*Limits)) *Limits {
	l := DefaultLimits()
	fn(&l)
	return &l
}

func connect311(clientID string) []byte {
	return pkt(0x10, str("MQTT"), 4, 0x02, u16(60), str(clientID))
}

func connectPacket(name string, level byte, clientID string) Packet {
	return Packet{Type: CONNECT, Connect: &Connect{ProtocolName: name, ProtocolLevel: level, CleanSession: true, KeepAlive: 60, ClientID: clientID}}
}

func goldenCases() []goldenCase {
	const v31, v311, v5 = Version31, Version311, Version5
	long := strings.Repeat("x", 300) // needs a two-byte remaining length
	cases := []goldenCase{
		// CONNECT.
		{name: "connect 3.1", raw: pkt(0x10, str("MQIsdp"), 3, 0x02, u16(60), str("client-1")),
			want: pkts(connectPacket("MQIsdp", 3, "client-1"))},
		{name: "connect 3.1.1", raw: connect311("c1"), want: pkts(connectPacket("MQTT", 4, "c1"))},
		{name: "connect 3.1.1 with will, user name and password",
			raw: pkt(0x10, str("MQTT"), 4, 0xEE, u16(30), str("c"), str("will/t"), str("bye"), str("user"), str("pass")),
			want: pkts(Packet{Type: CONNECT, Connect: &Connect{ProtocolName: "MQTT", ProtocolLevel: 4, CleanSession: true, KeepAlive: 30,
				ClientID: "c", WillFlag: true, WillQoS: 1, WillRetain: true, WillTopic: "will/t", WillPayload: []byte("bye"),
				UsernameFlag: true, Username: "user", PasswordFlag: true, Password: []byte("pass")}})},
		{name: "connect 3.1.1 empty client id, will qos 2, empty will payload and password",
			raw: pkt(0x10, str("MQTT"), 4, 0xD4, u16(0), str(""), str("w"), str(""), str("u"), str("")),
			want: pkts(Packet{Type: CONNECT, Connect: &Connect{ProtocolName: "MQTT", ProtocolLevel: 4, WillFlag: true, WillQoS: 2,
				WillTopic: "w", UsernameFlag: true, Username: "u", PasswordFlag: true}})},
		{name: "connect 5 with every connect and will property",
			raw: pkt(0x10, str("MQTT"), 5, 0xF6, u16(10),
				props(p32(propSessionExpiry, 3600), pstr(propAuthMethod, "SCRAM-SHA-1"), pstr(propAuthData, "\x00\x01"),
					p8(propRequestProblemInfo, 0), p8(propRequestResponseInfo, 1), p16(propReceiveMaximum, 20),
					p16(propTopicAliasMaximum, 0), puser("a", "1"), puser("a", "2"), p32(propMaximumPacketSize, 1<<20)),
				str("client-5"),
				props(p8(propPayloadFormat, 1), p32(propMessageExpiry, 0), pstr(propContentType, "text/plain"),
					pstr(propResponseTopic, "reply/to"), pstr(propCorrelationData, "\xff"), p32(propWillDelay, 5), puser("k", "")),
				str("will/5"), str("gone"), str("user5"), str("secret")),
			want: pkts(Packet{Type: CONNECT,
				Props: &Properties{SessionExpiry: 3600, HasSessionExpiry: true, AuthMethod: "SCRAM-SHA-1", AuthData: []byte{0, 1},
					RequestProblemInfo: 0, HasRequestProblemInfo: true, RequestResponseInfo: 1, HasRequestResponseInfo: true,
					ReceiveMaximum: 20, HasReceiveMaximum: true, TopicAliasMaximum: 0, HasTopicAliasMaximum: true,
					User: []UserProperty{{"a", "1"}, {"a", "2"}}, MaximumPacketSize: 1 << 20, HasMaximumPacketSize: true},
				Connect: &Connect{ProtocolName: "MQTT", ProtocolLevel: 5, CleanSession: true, KeepAlive: 10, ClientID: "client-5",
					WillFlag: true, WillQoS: 2, WillRetain: true, WillTopic: "will/5", WillPayload: []byte("gone"),
					WillProps: &Properties{PayloadFormat: 1, HasPayloadFormat: true, MessageExpiry: 0, HasMessageExpiry: true,
						ContentType: "text/plain", ResponseTopic: "reply/to", CorrelationData: []byte{0xff}, WillDelay: 5, HasWillDelay: true,
						User: []UserProperty{{"k", ""}}},
					UsernameFlag: true, Username: "user5", PasswordFlag: true, Password: []byte("secret")}})},
		{name: "connect 5 password without user name is allowed",
			raw: pkt(0x10, str("MQTT"), 5, 0x40, u16(0), props(), str("c"), str("pw")),
			want: pkts(Packet{Type: CONNECT, Connect: &Connect{ProtocolName: "MQTT", ProtocolLevel: 5, ClientID: "c",
				PasswordFlag: true, Password: []byte("pw")}})},
		{name: "packets pipelined behind connect use its level",
			raw: cat(pkt(0x10, str("MQTT"), 5, 0x02, u16(60), props(), str("c")), pkt(0x30, str("t"), props(), "p"), pkt(0xC0)),
			want: pkts(Packet{Type: CONNECT, Connect: &Connect{ProtocolName: "MQTT", ProtocolLevel: 5, CleanSession: true, KeepAlive: 60, ClientID: "c"}},
				Packet{Type: PUBLISH, Topic: "t", Payload: []byte("p")}, Packet{Type: PINGREQ})},
		{name: "connect 3.1 with flagged but missing user name and password", nonCanonical: true,
			raw:  pkt(0x10, str("MQIsdp"), 3, 0xC2, u16(60), str("c")),
			want: pkts(Packet{Type: CONNECT, Connect: &Connect{ProtocolName: "MQIsdp", ProtocolLevel: 3, CleanSession: true, KeepAlive: 60, ClientID: "c"}})},
		{name: "connect 3.1 reserved bits are not checked", nonCanonical: true,
			raw:  pkt(0x12, str("MQIsdp"), 3, 0x03, u16(60), str("c")),
			want: pkts(Packet{Type: CONNECT, Connect: &Connect{ProtocolName: "MQIsdp", ProtocolLevel: 3, CleanSession: true, KeepAlive: 60, ClientID: "c"}})},
		{name: "connect with a 300-byte client id", raw: connect311(long), want: pkts(connectPacket("MQTT", 4, long))},

		{name: "publish before connect", raw: pkt(0x30, str("t")), err: ErrProtocol, errText: "[MQTT-3.1.0-1]"},
		{name: "second connect", raw: cat(connect311("a"), connect311("b")),
			want: pkts(connectPacket("MQTT", 4, "a")), err: ErrProtocol, errText: "[MQTT-3.1.0-2]"},
		{name: "unknown protocol name", raw: pkt(0x10, str("HTTP"), 4, 0x02, u16(0), str("c")), err: ErrProtocol, errText: "[MQTT-3.1.2-1]"},
		{name: "unsupported level", raw: pkt(0x10, str("MQTT"), 6, 0x02, u16(0), str("c")), err: ErrUnsupportedVersion, errText: "[MQTT-3.1.2-2]"},
		{name: "level 4 named MQIsdp", raw: pkt(0x10, str("MQIsdp"), 4, 0x02, u16(0), str("c")), err: ErrUnsupportedVersion, errText: "level 4"},
		{name: "connect reserved flag", raw: pkt(0x10, str("MQTT"), 4, 0x03, u16(0), str("c")), err: ErrMalformed, errText: "[MQTT-3.1.2-3]"},
		{name: "connect fixed header flags in 3.1.1", raw: pkt(0x11, str("MQTT"), 4, 0x02, u16(0), str("c")), err: ErrMalformed, errText: "[MQTT-2.2.2-2]"},
		{name: "connect fixed header flags in 5", raw: pkt(0x18, str("MQTT"), 5, 0x02, u16(0), props(), str("c")), err: ErrMalformed, errText: "[MQTT-2.1.3-1]"},
		{name: "will qos without will flag 3.1.1", raw: pkt(0x10, str("MQTT"), 4, 0x0A, u16(0), str("c")), err: ErrMalformed, errText: "[MQTT-3.1.2-13]"},
		{name: "will qos without will flag 5", raw: pkt(0x10, str("MQTT"), 5, 0x0A, u16(0), props(), str("c")), err: ErrMalformed, errText: "[MQTT-3.1.2-11]"},
		{name: "will retain without will flag", raw: pkt(0x10, str("MQTT"), 4, 0x22, u16(0), str("c")), err: ErrMalformed, errText: "[MQTT-3.1.2-15]"},
		{name: "will qos 3", raw: pkt(0x10, str("MQTT"), 4, 0x1E, u16(0), str("c"), str("w"), str("m")), err: ErrMalformed, errText: "[MQTT-3.1.2-14]"},
		{name: "will qos 3 in 5", raw: pkt(0x10, str("MQTT"), 5, 0x1E, u16(0), props(), str("c"), props(), str("w"), str("m")), err: ErrMalformed, errText: "[MQTT-3.1.2-12]"},
		{name: "password without user name in 3.1.1", raw: pkt(0x10, str("MQTT"), 4, 0x42, u16(0), str("c"), str("p")), err: ErrProtocol, errText: "[MQTT-3.1.2-22]"},
		{name: "client id is not utf-8", raw: pkt(0x10, str("MQTT"), 4, 0x02, u16(0), str("c\xff")), err: ErrMalformed, errText: "[MQTT-1.5.3-1]"},
		{name: "client id holds U+0000", raw: pkt(0x10, str("MQTT"), 4, 0x02, u16(0), str("c\x00")), err: ErrMalformed, errText: "[MQTT-1.5.3-2]"},
		{name: "client id holds a surrogate in 5", raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(), str("\xed\xa0\x80")), err: ErrMalformed, errText: "[MQTT-1.5.4-1]"},
		{name: "connect with trailing bytes", raw: pkt(0x10, str("MQTT"), 4, 0x02, u16(0), str("c"), 0), err: ErrMalformed, errText: "1 bytes after its last field"},
		{name: "connect will topic runs past the end", raw: pkt(0x10, str("MQTT"), 4, 0x06, u16(0), str("c"), u16(5), "ab"), err: ErrMalformed, errText: "will topic runs past the end"},
		{name: "connect without keep alive", raw: pkt(0x10, str("MQTT"), 4, 0x02), err: ErrMalformed, errText: "keep alive runs past the end"},
		{name: "connect 5 authentication data without method",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(pstr(propAuthData, "x")), str("c")), err: ErrProtocol, errText: "Authentication Data without"},
		{name: "connect 5 receive maximum 0",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p16(propReceiveMaximum, 0)), str("c")), err: ErrProtocol, errText: "Receive Maximum is 0"},
		{name: "connect 5 maximum packet size 0",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p32(propMaximumPacketSize, 0)), str("c")), err: ErrProtocol, errText: "Maximum Packet Size is 0"},
		{name: "connect 5 request problem information 2",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p8(propRequestProblemInfo, 2)), str("c")), err: ErrProtocol, errText: "must be 0 or 1"},
		{name: "connect 5 topic alias is not a connect property",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p16(propTopicAlias, 1)), str("c")), err: ErrMalformed, errText: "may not carry property 0x23"},
		{name: "connect 5 will delay belongs to the will",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p32(propWillDelay, 1)), str("c")), err: ErrMalformed, errText: "Will Delay Interval"},
		{name: "connect 5 session expiry is not a will property",
			raw: pkt(0x10, str("MQTT"), 5, 0x06, u16(0), props(), str("c"), props(p32(propSessionExpiry, 1)), str("w"), str("m")),
			err: ErrMalformed, errText: "CONNECT will properties may not carry property 0x11"},
		{name: "connect 5 session expiry twice",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p32(propSessionExpiry, 1), p32(propSessionExpiry, 2)), str("c")),
			err: ErrProtocol, errText: "Session Expiry Interval more than once"},
		{name: "connect 5 unknown property", raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), props(p8(0x7F, 0)), str("c")),
			err: ErrMalformed, errText: "unknown property identifier 0x7F"},
		{name: "connect 5 property length runs past the end", raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), 0x20, str("c")),
			err: ErrMalformed, errText: "property length 32 runs past"},
		{name: "connect 5 property value runs past its block",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), 3, p32(propSessionExpiry, 1), str("c")), err: ErrMalformed, errText: "Session Expiry Interval runs past"},
		{name: "connect 5 non-minimal property length",
			raw: pkt(0x10, str("MQTT"), 5, 0x02, u16(0), 0x80, 0x00, str("c")), err: ErrMalformed, errText: "[MQTT-1.5.5-1]"},

		// CONNACK.
		{name: "connack 3.1", version: v31, raw: pkt(0x20, 0, 0), want: pkts(Packet{Type: CONNACK})},
		{name: "connack 3.1 ignores its first byte", version: v31, raw: pkt(0x20, 1, 2), nonCanonical: true,
			want: pkts(Packet{Type: CONNACK, ReasonCode: ConnRefusedIdentifierRejected})},
		{name: "connack 3.1.1 session present", version: v311, raw: pkt(0x20, 1, 0), want: pkts(Packet{Type: CONNACK, SessionPresent: true})},
		{name: "connack 3.1.1 not authorized", version: v311, raw: pkt(0x20, 0, 5), want: pkts(Packet{Type: CONNACK, ReasonCode: ConnRefusedNotAuthorized})},
		{name: "connack 3.1.1 reserved return code", version: v311, raw: pkt(0x20, 0, 6), err: ErrProtocol, errText: "return code 0x06 is reserved"},
		{name: "connack 3.1.1 reserved flag bits", version: v311, raw: pkt(0x20, 2, 0), err: ErrMalformed, errText: "reserved bits 7-1"},
		{name: "connack 3.1.1 session present with refusal", version: v311, raw: pkt(0x20, 1, 1), err: ErrProtocol, errText: "[MQTT-3.2.2-4]"},
		{name: "connack 3.1.1 too long", version: v311, raw: pkt(0x20, 0, 0, 0), err: ErrMalformed, errText: "CONNACK has 1 bytes after"},
		{name: "connack 3.1.1 too short", version: v311, raw: pkt(0x20, 0), err: ErrMalformed, errText: "return code runs past"},
		{name: "connack 5 with every connack property", version: v5,
			raw: pkt(0x20, 0, 0, props(p32(propSessionExpiry, 0), pstr(propAssignedClientID, "auto-1"), p16(propServerKeepAlive, 0),
				pstr(propAuthMethod, "m"), pstr(propAuthData, ""), pstr(propResponseInfo, "resp/"), pstr(propServerReference, "other:1883"),
				pstr(propReasonString, "welcome"), p16(propReceiveMaximum, 65535), p16(propTopicAliasMaximum, 10),
				p8(propMaximumQoS, 1), p8(propRetainAvailable, 0), puser("x", "y"), p32(propMaximumPacketSize, 268435460),
				p8(propWildcardSubAvailable, 0), p8(propSubIDAvailable, 1), p8(propSharedSubAvailable, 0))),
			want: pkts(Packet{Type: CONNACK, Props: &Properties{SessionExpiry: 0, HasSessionExpiry: true, AssignedClientID: "auto-1",
				ServerKeepAlive: 0, HasServerKeepAlive: true, AuthMethod: "m", AuthData: []byte{}, ResponseInfo: "resp/",
				ServerReference: "other:1883", ReasonString: "welcome", ReceiveMaximum: 65535, HasReceiveMaximum: true,
				TopicAliasMaximum: 10, HasTopicAliasMaximum: true, MaximumQoS: 1, HasMaximumQoS: true, RetainAvailable: 0,
				HasRetainAvailable: true, User: []UserProperty{{"x", "y"}}, MaximumPacketSize: 268435460, HasMaximumPacketSize: true,
				WildcardSubAvailable: 0, HasWildcardSubAvailable: true, SubIDAvailable: 1, HasSubIDAvailable: true,
				SharedSubAvailable: 0, HasSharedSubAvailable: true}})},
		{name: "connack 5 unsupported protocol version", version: v5, raw: pkt(0x20, 0, 0x84, props()),
			want: pkts(Packet{Type: CONNACK, ReasonCode: ReasonUnsupportedProtocolVersion})},
		{name: "connack 5 reason code of another packet", version: v5, raw: pkt(0x20, 0, 0x10, props()), err: ErrProtocol, errText: "[MQTT-3.2.2-8]"},
		{name: "connack 5 maximum qos 2", version: v5, raw: pkt(0x20, 0, 0, props(p8(propMaximumQoS, 2))), err: ErrProtocol, errText: "Maximum QoS is 2"},
		{name: "connack 5 retain available twice", version: v5, raw: pkt(0x20, 0, 0, props(p8(propRetainAvailable, 1), p8(propRetainAvailable, 1))),
			err: ErrProtocol, errText: "Retain Available more than once"},
		{name: "connack 5 without property length", version: v5, raw: pkt(0x20, 0, 0), err: ErrMalformed, errText: "property length runs past"},
		{name: "connack 5 session present with refusal", version: v5, raw: pkt(0x20, 1, 0x87, props()), err: ErrProtocol, errText: "[MQTT-3.2.2-6]"},
		{name: "connack 5 reserved flag bits", version: v5, raw: pkt(0x20, 0x80, 0, props()), err: ErrMalformed, errText: "[MQTT-3.2.2-1]"},

		// PUBLISH.
		{name: "publish 3.1.1 qos 0", version: v311, raw: pkt(0x30, str("a/b"), "hello"),
			want: pkts(Packet{Type: PUBLISH, Topic: "a/b", Payload: []byte("hello")})},
		{name: "publish 3.1.1 qos 1 dup retain", version: v311, raw: pkt(0x3B, str("a/b"), u16(7), "x"),
			want: pkts(Packet{Type: PUBLISH, Dup: true, QoS: 1, Retain: true, PacketID: 7, Topic: "a/b", Payload: []byte("x")})},
		{name: "publish 3.1.1 qos 2 empty payload", version: v311, raw: pkt(0x34, str("$SYS/x"), u16(65535)),
			want: pkts(Packet{Type: PUBLISH, QoS: 2, PacketID: 65535, Topic: "$SYS/x"})},
		{name: "publish 3.1.1 utf-8 topic and 300-byte payload", version: v311, raw: pkt(0x30, str("капуста/🥬"), long),
			want: pkts(Packet{Type: PUBLISH, Topic: "капуста/🥬", Payload: []byte(long)})},
		{name: "publish 3.1 qos 0 with dup", version: v31, raw: pkt(0x38, str("t"), "p"),
			want: pkts(Packet{Type: PUBLISH, Dup: true, Topic: "t", Payload: []byte("p")})},
		{name: "publish qos 0 with dup", version: v311, raw: pkt(0x38, str("t"), "p"), err: ErrMalformed, errText: "[MQTT-3.3.1-2]"},
		{name: "publish qos 3", version: v311, raw: pkt(0x36, str("t"), u16(1)), err: ErrMalformed, errText: "PUBLISH QoS 3 is malformed [MQTT-3.3.1-4]"},
		{name: "publish qos 3 in 3.1", version: v31, raw: pkt(0x36, str("t"), u16(1)), err: ErrMalformed, errText: "[MQTT-3.3.1-4]"},
		{name: "publish packet id 0", version: v311, raw: pkt(0x32, str("t"), u16(0)), err: ErrProtocol, errText: "[MQTT-2.3.1-1]"},
		{name: "publish packet id 0 in 5", version: v5, raw: pkt(0x32, str("t"), u16(0), props()), err: ErrProtocol, errText: "[MQTT-2.2.1-3]"},
		{name: "publish topic with wildcard", version: v311, raw: pkt(0x30, str("a/+"), "p"), err: ErrTopicNameInvalid, errText: "[MQTT-3.3.2-2]"},
		{name: "publish topic with multi-level wildcard in 5", version: v5, raw: pkt(0x30, str("#"), props()), err: ErrTopicNameInvalid, errText: "[MQTT-3.3.2-2]"},
		{name: "publish empty topic", version: v311, raw: pkt(0x30, str(""), "p"), err: ErrTopicNameInvalid, errText: "[MQTT-4.7.3-1]"},
		{name: "publish topic holds U+0000", version: v311, raw: pkt(0x30, str("a\x00b"), "p"), err: ErrMalformed, errText: "[MQTT-1.5.3-2]"},
		{name: "publish topic is not utf-8", version: v5, raw: pkt(0x30, str("a\xc0\xafb"), props()), err: ErrMalformed, errText: "[MQTT-1.5.4-1]"},
		{name: "publish topic runs past the end", version: v311, raw: pkt(0x30, u16(9), "abc"), err: ErrMalformed, errText: "topic name runs past"},
		{name: "publish without packet id", version: v311, raw: pkt(0x32, str("t")), err: ErrMalformed, errText: "packet identifier runs past"},
		{name: "publish 5 with every publish property", version: v5,
			raw: pkt(0x3D, str("sensors/1"), u16(42),
				props(p8(propPayloadFormat, 1), p32(propMessageExpiry, 60), pstr(propContentType, "application/json"),
					pstr(propResponseTopic, "reply/1"), pstr(propCorrelationData, "\x00corr"), psubID(1), psubID(268435455),
					p16(propTopicAlias, 3), puser("u", "v"), puser("u", "w")), `{"t":21}`),
			want: pkts(Packet{Type: PUBLISH, Dup: true, QoS: 2, Retain: true, PacketID: 42, Topic: "sensors/1", Payload: []byte(`{"t":21}`),
				Props: &Properties{PayloadFormat: 1, HasPayloadFormat: true, MessageExpiry: 60, HasMessageExpiry: true,
					ContentType: "application/json", ResponseTopic: "reply/1", CorrelationData: []byte("\x00corr"),
					SubscriptionIDs: []uint32{1, 268435455}, TopicAlias: 3, HasTopicAlias: true,
					User: []UserProperty{{"u", "v"}, {"u", "w"}}}})},
		{name: "publish 5 empty topic with topic alias", version: v5, raw: pkt(0x30, str(""), props(p16(propTopicAlias, 1)), "p"),
			want: pkts(Packet{Type: PUBLISH, Payload: []byte("p"), Props: &Properties{TopicAlias: 1, HasTopicAlias: true}})},
		{name: "publish 5 empty correlation data is present", version: v5, raw: pkt(0x30, str("t"), props(pstr(propCorrelationData, ""))),
			want: pkts(Packet{Type: PUBLISH, Topic: "t", Props: &Properties{CorrelationData: []byte{}}})},
		{name: "publish 5 payload format 2 is kept", version: v5, raw: pkt(0x30, str("t"), props(p8(propPayloadFormat, 2))),
			want: pkts(Packet{Type: PUBLISH, Topic: "t", Props: &Properties{PayloadFormat: 2, HasPayloadFormat: true}})},
		{name: "publish 5 empty string properties are no properties", version: v5, nonCanonical: true,
			raw:  pkt(0x30, str("t"), props(pstr(propContentType, ""), pstr(propResponseTopic, ""))),
			want: pkts(Packet{Type: PUBLISH, Topic: "t"})},
		{name: "publish 5 empty topic without topic alias", version: v5, raw: pkt(0x30, str(""), props(), "p"), err: ErrProtocol, errText: "no Topic Alias"},
		{name: "publish 5 topic alias 0", version: v5, raw: pkt(0x30, str("t"), props(p16(propTopicAlias, 0))), err: ErrTopicAliasInvalid, errText: "[MQTT-3.3.2-8]"},
		{name: "publish 5 topic alias twice", version: v5, raw: pkt(0x30, str("t"), props(p16(propTopicAlias, 1), p16(propTopicAlias, 2))),
			err: ErrProtocol, errText: "Topic Alias more than once"},
		{name: "publish 5 subscription identifier 0", version: v5, raw: pkt(0x30, str("t"), props(psubID(0))), err: ErrProtocol, errText: "Subscription Identifier is 0"},
		{name: "publish 5 non-minimal subscription identifier", version: v5, raw: pkt(0x30, str("t"), props(propSubscriptionID, 0x81, 0x00)),
			err: ErrMalformed, errText: "[MQTT-1.5.5-1]"},
		{name: "publish 5 subscription identifier of five bytes", version: v5,
			raw: pkt(0x30, str("t"), props(propSubscriptionID, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F)), err: ErrMalformed, errText: "fourth byte"},
		{name: "publish 5 response topic with wildcard", version: v5, raw: pkt(0x30, str("t"), props(pstr(propResponseTopic, "r/#"))),
			err: ErrProtocol, errText: "[MQTT-3.3.2-14]"},
		{name: "publish 5 content type twice", version: v5, raw: pkt(0x30, str("t"), props(pstr(propContentType, "a"), pstr(propContentType, "a"))),
			err: ErrProtocol, errText: "Content Type more than once"},
		{name: "publish 5 session expiry is not a publish property", version: v5, raw: pkt(0x30, str("t"), props(p32(propSessionExpiry, 1))),
			err: ErrMalformed, errText: "PUBLISH may not carry property 0x11 (Session Expiry Interval)"},
		{name: "publish 5 user property value is not utf-8", version: v5, raw: pkt(0x30, str("t"), props(propUser, str("k"), str("\xff"))),
			err: ErrMalformed, errText: "User Property value is not well-formed UTF-8"},
		{name: "publish 5 more user properties than the limit", version: v5, limits: limitsWith(func(l *Limits) { l.MaxUserProperties = 1 }),
			raw: pkt(0x30, str("t"), props(puser("a", "b"), puser("c", "d"))), err: ErrQuotaExceeded, errText: "more than 1 User Properties"},
		{name: "publish 5 without property length", version: v5, raw: pkt(0x30, str("t")), err: ErrMalformed, errText: "property length runs past"},

		// PUBACK, PUBREC, PUBREL, PUBCOMP.
		{name: "puback 3.1.1", version: v311, raw: pkt(0x40, u16(1)), want: pkts(Packet{Type: PUBACK, PacketID: 1})},
		{name: "pubrec 3.1.1", version: v311, raw: pkt(0x50, u16(2)), want: pkts(Packet{Type: PUBREC, PacketID: 2})},
		{name: "pubrel 3.1.1", version: v311, raw: pkt(0x62, u16(3)), want: pkts(Packet{Type: PUBREL, PacketID: 3})},
		{name: "pubcomp 3.1.1", version: v311, raw: pkt(0x70, u16(4)), want: pkts(Packet{Type: PUBCOMP, PacketID: 4})},
		{name: "puback 3.1", version: v31, raw: pkt(0x40, u16(1)), want: pkts(Packet{Type: PUBACK, PacketID: 1})},
		{name: "pubrel 3.1 retry with dup", version: v31, raw: pkt(0x6A, u16(3)), nonCanonical: true, want: pkts(Packet{Type: PUBREL, PacketID: 3})},
		{name: "pubrel with flags 0", version: v311, raw: pkt(0x60, u16(3)), err: ErrMalformed, errText: "PUBREL fixed header flags 0x0, must be 0x2 [MQTT-2.2.2-2]"},
		{name: "puback with flags", version: v311, raw: pkt(0x41, u16(3)), err: ErrMalformed, errText: "[MQTT-2.2.2-2]"},
		{name: "puback 3.1.1 with a reason code", version: v311, raw: pkt(0x40, u16(1), 0), err: ErrMalformed, errText: "PUBACK has 1 bytes after"},
		{name: "puback packet id 0", version: v311, raw: pkt(0x40, u16(0)), err: ErrProtocol, errText: "[MQTT-2.3.1-1]"},
		{name: "puback too short", version: v311, raw: pkt(0x40, 1), err: ErrMalformed, errText: "packet identifier runs past"},
		{name: "puback 5 short form", version: v5, raw: pkt(0x40, u16(1)), want: pkts(Packet{Type: PUBACK, PacketID: 1})},
		{name: "puback 5 reason only", version: v5, raw: pkt(0x40, u16(1), 0x10),
			want: pkts(Packet{Type: PUBACK, PacketID: 1, ReasonCode: ReasonNoMatchingSubscribers})},
		{name: "puback 5 reason 0 with empty properties", version: v5, raw: pkt(0x40, u16(1), 0, props()), nonCanonical: true,
			want: pkts(Packet{Type: PUBACK, PacketID: 1})},
		{name: "puback 5 with reason string and user property", version: v5,
			raw:  pkt(0x40, u16(1), 0x87, props(pstr(propReasonString, "denied"), puser("a", "b"))),
			want: pkts(Packet{Type: PUBACK, PacketID: 1, ReasonCode: ReasonNotAuthorized, Props: &Properties{ReasonString: "denied", User: []UserProperty{{"a", "b"}}}})},
		{name: "pubrec 5 quota exceeded", version: v5, raw: pkt(0x50, u16(9), 0x97),
			want: pkts(Packet{Type: PUBREC, PacketID: 9, ReasonCode: ReasonQuotaExceeded})},
		{name: "pubrel 5 packet id not found with reason string", version: v5, raw: pkt(0x62, u16(9), 0x92, props(pstr(propReasonString, "?"))),
			want: pkts(Packet{Type: PUBREL, PacketID: 9, ReasonCode: ReasonPacketIDNotFound, Props: &Properties{ReasonString: "?"}})},
		{name: "pubcomp 5 packet id not found", version: v5, raw: pkt(0x70, u16(9), 0x92),
			want: pkts(Packet{Type: PUBCOMP, PacketID: 9, ReasonCode: ReasonPacketIDNotFound})},
		{name: "puback 5 reason code of pubrel", version: v5, raw: pkt(0x40, u16(1), 0x92), err: ErrProtocol, errText: "[MQTT-3.4.2-1]"},
		{name: "pubrel 5 reason code of puback", version: v5, raw: pkt(0x62, u16(1), 0x10), err: ErrProtocol, errText: "[MQTT-3.6.2-1]"},
		{name: "pubrec 5 topic alias is not an ack property", version: v5, raw: pkt(0x50, u16(1), 0, props(p16(propTopicAlias, 1))),
			err: ErrMalformed, errText: "PUBREC may not carry property 0x23"},
		{name: "pubcomp 5 with flags", version: v5, raw: pkt(0x72, u16(1)), err: ErrMalformed, errText: "[MQTT-2.1.3-1]"},

		// SUBSCRIBE.
		{name: "subscribe 3.1.1", version: v311, raw: pkt(0x82, u16(10), str("a/+"), 0, str("b/#"), 2),
			want: pkts(Packet{Type: SUBSCRIBE, PacketID: 10, Subscriptions: []Subscription{{Filter: "a/+"}, {Filter: "b/#", QoS: 2}}})},
		{name: "subscribe 3.1 retry with dup", version: v31, raw: pkt(0x8A, u16(10), str("a"), 1), nonCanonical: true,
			want: pkts(Packet{Type: SUBSCRIBE, PacketID: 10, Subscriptions: []Subscription{{Filter: "a", QoS: 1}}})},
		{name: "subscribe filters are not validated", version: v311, raw: pkt(0x82, u16(1), str("a/#/b"), 0, str(""), 1),
			want: pkts(Packet{Type: SUBSCRIBE, PacketID: 1, Subscriptions: []Subscription{{Filter: "a/#/b"}, {QoS: 1}}})},
		{name: "subscribe with flags 0", version: v311, raw: pkt(0x80, u16(10), str("a"), 0), err: ErrMalformed, errText: "SUBSCRIBE fixed header flags"},
		{name: "subscribe without filters", version: v311, raw: pkt(0x82, u16(10)), err: ErrProtocol, errText: "[MQTT-3.8.3-3]"},
		{name: "subscribe reserved bits", version: v311, raw: pkt(0x82, u16(10), str("a"), 0x04), err: ErrMalformed, errText: "[MQTT-3-8.3-4]"},
		{name: "subscribe qos 3", version: v311, raw: pkt(0x82, u16(10), str("a"), 3), err: ErrMalformed, errText: "requested QoS 3"},
		{name: "subscribe packet id 0", version: v311, raw: pkt(0x82, u16(0), str("a"), 0), err: ErrProtocol, errText: "[MQTT-2.3.1-1]"},
		{name: "subscribe without options byte", version: v311, raw: pkt(0x82, u16(1), str("a")), err: ErrMalformed, errText: "subscription options runs past"},
		{name: "subscribe more filters than the limit", version: v311, limits: limitsWith(func(l *Limits) { l.MaxTopicsPerPacket = 1 }),
			raw: pkt(0x82, u16(1), str("a"), 0, str("b"), 0), err: ErrQuotaExceeded, errText: "more than 1 topic filters"},
		{name: "subscribe 5 with options and properties", version: v5,
			raw: pkt(0x82, u16(11), props(psubID(300), puser("k", "v")), str("a/b"), 0x2D, str("$share/g/c/#"), 0x1A),
			want: pkts(Packet{Type: SUBSCRIBE, PacketID: 11, Props: &Properties{SubscriptionIDs: []uint32{300}, User: []UserProperty{{"k", "v"}}},
				Subscriptions: []Subscription{{Filter: "a/b", QoS: 1, NoLocal: true, RetainAsPublished: true, RetainHandling: 2},
					{Filter: "$share/g/c/#", QoS: 2, RetainAsPublished: true, RetainHandling: 1}}})},
		{name: "subscribe 5 reserved bits", version: v5, raw: pkt(0x82, u16(1), props(), str("a"), 0x40), err: ErrMalformed, errText: "[MQTT-3.8.3-5]"},
		{name: "subscribe 5 qos 3", version: v5, raw: pkt(0x82, u16(1), props(), str("a"), 3), err: ErrProtocol, errText: "maximum QoS 3"},
		{name: "subscribe 5 retain handling 3", version: v5, raw: pkt(0x82, u16(1), props(), str("a"), 0x30), err: ErrProtocol, errText: "retain handling 3"},
		{name: "subscribe 5 no local on a shared subscription", version: v5, raw: pkt(0x82, u16(1), props(), str("$share/g/a"), 0x04),
			err: ErrProtocol, errText: "[MQTT-3.8.3-4]"},
		{name: "subscribe 5 two subscription identifiers", version: v5, raw: pkt(0x82, u16(1), props(psubID(1), psubID(2)), str("a"), 0),
			err: ErrProtocol, errText: "Subscription Identifier more than once"},
		{name: "subscribe 5 without filters", version: v5, raw: pkt(0x82, u16(1), props()), err: ErrProtocol, errText: "[MQTT-3.8.3-2]"},
		{name: "subscribe 5 reason string is not a subscribe property", version: v5, raw: pkt(0x82, u16(1), props(pstr(propReasonString, "r")), str("a"), 0),
			err: ErrMalformed, errText: "SUBSCRIBE may not carry property 0x1F"},

		// SUBACK.
		{name: "suback 3.1.1", version: v311, raw: pkt(0x90, u16(10), 0, 1, 2, 0x80),
			want: pkts(Packet{Type: SUBACK, PacketID: 10, ReasonCodes: []byte{0, 1, 2, 0x80}})},
		{name: "suback 3.1", version: v31, raw: pkt(0x90, u16(10), 1), want: pkts(Packet{Type: SUBACK, PacketID: 10, ReasonCodes: []byte{1}})},
		{name: "suback 3.1.1 reserved return code", version: v311, raw: pkt(0x90, u16(10), 3), err: ErrProtocol, errText: "[MQTT-3.9.3-2]"},
		{name: "suback 3.1.1 without return codes", version: v311, raw: pkt(0x90, u16(10)), err: ErrMalformed, errText: "SUBACK has no reason codes"},
		{name: "suback 5 with reason string", version: v5,
			raw:  pkt(0x90, u16(12), props(pstr(propReasonString, "partly")), 0, 1, 2, 0x8F, 0xA2),
			want: pkts(Packet{Type: SUBACK, PacketID: 12, Props: &Properties{ReasonString: "partly"}, ReasonCodes: []byte{0, 1, 2, 0x8F, 0xA2}})},
		{name: "suback 5 reason code of disconnect", version: v5, raw: pkt(0x90, u16(12), props(), 0x04), err: ErrProtocol, errText: "Subscribe Reason Code"},
		{name: "suback more codes than the limit", version: v311, limits: limitsWith(func(l *Limits) { l.MaxTopicsPerPacket = 1 }),
			raw: pkt(0x90, u16(1), 0, 0), err: ErrQuotaExceeded, errText: "more than 1 reason codes"},

		// UNSUBSCRIBE.
		{name: "unsubscribe 3.1.1", version: v311, raw: pkt(0xA2, u16(13), str("a/+"), str("b")),
			want: pkts(Packet{Type: UNSUBSCRIBE, PacketID: 13, Topics: []string{"a/+", "b"}})},
		{name: "unsubscribe without filters", version: v311, raw: pkt(0xA2, u16(13)), err: ErrProtocol, errText: "[MQTT-3.10.3-2]"},
		{name: "unsubscribe with flags 0", version: v311, raw: pkt(0xA0, u16(13), str("a")), err: ErrMalformed, errText: "UNSUBSCRIBE fixed header flags"},
		{name: "unsubscribe filter runs past the end", version: v311, raw: pkt(0xA2, u16(13), u16(3), "a"), err: ErrMalformed, errText: "topic filter runs past"},
		{name: "unsubscribe more filters than the limit", version: v311, limits: limitsWith(func(l *Limits) { l.MaxTopicsPerPacket = 1 }),
			raw: pkt(0xA2, u16(1), str("a"), str("b")), err: ErrQuotaExceeded, errText: "more than 1 topic filters"},
		{name: "unsubscribe 5 with user property", version: v5, raw: pkt(0xA2, u16(14), props(puser("k", "v")), str("x")),
			want: pkts(Packet{Type: UNSUBSCRIBE, PacketID: 14, Props: &Properties{User: []UserProperty{{"k", "v"}}}, Topics: []string{"x"}})},
		{name: "unsubscribe 5 reason string is not an unsubscribe property", version: v5, raw: pkt(0xA2, u16(14), props(pstr(propReasonString, "r")), str("x")),
			err: ErrMalformed, errText: "UNSUBSCRIBE may not carry property 0x1F"},

		// UNSUBACK.
		{name: "unsuback 3.1.1", version: v311, raw: pkt(0xB0, u16(9)), want: pkts(Packet{Type: UNSUBACK, PacketID: 9})},
		{name: "unsuback 3.1.1 with a reason code", version: v311, raw: pkt(0xB0, u16(9), 0), err: ErrMalformed, errText: "UNSUBACK has 1 bytes after"},
		{name: "unsuback 5", version: v5, raw: pkt(0xB0, u16(9), props(pstr(propReasonString, "ok")), 0x00, 0x11),
			want: pkts(Packet{Type: UNSUBACK, PacketID: 9, Props: &Properties{ReasonString: "ok"}, ReasonCodes: []byte{0, 0x11}})},
		{name: "unsuback 5 without reason codes", version: v5, raw: pkt(0xB0, u16(9), props()), err: ErrMalformed, errText: "UNSUBACK has no reason codes"},
		{name: "unsuback 5 granted qos is not an unsubscribe code", version: v5, raw: pkt(0xB0, u16(9), props(), 0x01), err: ErrProtocol, errText: "[MQTT-3.11.3-2]"},

		// PINGREQ, PINGRESP.
		{name: "pingreq 3.1.1", version: v311, raw: pkt(0xC0), want: pkts(Packet{Type: PINGREQ})},
		{name: "pingresp 3.1.1", version: v311, raw: pkt(0xD0), want: pkts(Packet{Type: PINGRESP})},
		{name: "pingreq 5", version: v5, raw: pkt(0xC0), want: pkts(Packet{Type: PINGREQ})},
		{name: "pingreq with a body", version: v311, raw: pkt(0xC0, 0), err: ErrMalformed, errText: "PINGREQ has 1 bytes after"},
		{name: "pingresp with flags", version: v311, raw: pkt(0xD1), err: ErrMalformed, errText: "[MQTT-2.2.2-2]"},

		// DISCONNECT.
		{name: "disconnect 3.1.1", version: v311, raw: pkt(0xE0), want: pkts(Packet{Type: DISCONNECT})},
		{name: "disconnect 3.1.1 with a body", version: v311, raw: pkt(0xE0, 0), err: ErrMalformed, errText: "DISCONNECT has 1 bytes after"},
		{name: "disconnect 5 normal", version: v5, raw: pkt(0xE0), want: pkts(Packet{Type: DISCONNECT})},
		{name: "disconnect 5 with will", version: v5, raw: pkt(0xE0, 0x04), want: pkts(Packet{Type: DISCONNECT, ReasonCode: ReasonDisconnectWithWill})},
		{name: "disconnect 5 with properties", version: v5,
			raw: pkt(0xE0, 0x9C, props(p32(propSessionExpiry, 0), pstr(propServerReference, "b:1883"), pstr(propReasonString, "moving"), puser("a", "b"))),
			want: pkts(Packet{Type: DISCONNECT, ReasonCode: ReasonUseAnotherServer, Props: &Properties{SessionExpiry: 0, HasSessionExpiry: true,
				ServerReference: "b:1883", ReasonString: "moving", User: []UserProperty{{"a", "b"}}}})},
		{name: "disconnect 5 normal with empty properties", version: v5, raw: pkt(0xE0, 0, props()), nonCanonical: true,
			want: pkts(Packet{Type: DISCONNECT})},
		{name: "disconnect 5 reason code of puback", version: v5, raw: pkt(0xE0, 0x10), err: ErrProtocol, errText: "[MQTT-3.14.2-1]"},
		{name: "disconnect 5 assigned client id is not a disconnect property", version: v5, raw: pkt(0xE0, 0, props(pstr(propAssignedClientID, "x"))),
			err: ErrMalformed, errText: "DISCONNECT may not carry property 0x12"},

		// AUTH.
		{name: "auth 5 success short form", version: v5, raw: pkt(0xF0), want: pkts(Packet{Type: AUTH})},
		{name: "auth 5 continue", version: v5,
			raw: pkt(0xF0, 0x18, props(pstr(propAuthMethod, "SCRAM-SHA-1"), pstr(propAuthData, "n,,n=user"), pstr(propReasonString, "go on"), puser("a", "b"))),
			want: pkts(Packet{Type: AUTH, ReasonCode: ReasonContinueAuthentication, Props: &Properties{AuthMethod: "SCRAM-SHA-1",
				AuthData: []byte("n,,n=user"), ReasonString: "go on", User: []UserProperty{{"a", "b"}}}})},
		{name: "auth 5 re-authenticate", version: v5, raw: pkt(0xF0, 0x19), want: pkts(Packet{Type: AUTH, ReasonCode: ReasonReAuthenticate})},
		{name: "auth 5 unspecified error is not an auth code", version: v5, raw: pkt(0xF0, 0x80), err: ErrProtocol, errText: "[MQTT-3.15.2-1]"},
		{name: "auth 5 with flags", version: v5, raw: pkt(0xF1), err: ErrMalformed, errText: "AUTH fixed header flags"},
		{name: "auth in 3.1.1", version: v311, raw: pkt(0xF0), err: ErrMalformed, errText: "reserved before MQTT 5"},

		// Fixed header and framing.
		{name: "packet type 0", version: v311, raw: pkt(0x00), err: ErrMalformed, errText: "packet type 0 is reserved"},
		{name: "remaining length of five bytes", version: v311, raw: cat(0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01), err: ErrMalformed, errText: "fourth byte"},
		{name: "remaining length beyond the limit", version: v311, limits: limitsWith(func(l *Limits) { l.MaxPacketBytes = 9 }),
			raw: pkt(0x30, str("a"), "12345"), err: ErrPacketTooLarge, errText: "PUBLISH packet of 10 bytes exceeds the limit of 9 bytes"},
		{name: "packet exactly at the limit", version: v311, limits: limitsWith(func(l *Limits) { l.MaxPacketBytes = 10 }),
			raw: pkt(0x30, str("a"), "12345"), want: pkts(Packet{Type: PUBLISH, Topic: "a", Payload: []byte("12345")})},
		{name: "largest remaining length exceeds the default limit", version: v311, raw: cat(0x30, 0xFF, 0xFF, 0xFF, 0x7F),
			err: ErrPacketTooLarge, errText: "268435460 bytes exceeds the limit of 268435456 bytes"},
		{name: "padded remaining length is accepted", version: v311, raw: cat(0xC0, 0x80, 0x80, 0x00), nonCanonical: true,
			want: pkts(Packet{Type: PINGREQ})},
		{name: "stream of packets then a bad one", version: v311,
			raw:  cat(pkt(0x30, str("a"), "1"), pkt(0x40, u16(5)), pkt(0xC0), pkt(0x36)),
			want: pkts(Packet{Type: PUBLISH, Topic: "a", Payload: []byte("1")}, Packet{Type: PUBACK, PacketID: 5}, Packet{Type: PINGREQ}),
			err:  ErrMalformed, errText: "QoS 3"},
	}
	return cases
}

// decodeChunks feeds chunks to a fresh decoder for tc and returns what it
// decoded and the error.
func decodeChunks(tc goldenCase, chunks [][]byte) ([]Packet, error) {
	lim := DefaultLimits()
	if tc.limits != nil {
		lim = *tc.limits
	}
	d := NewDecoder(lim)
	d.SetVersion(tc.version)
	var out []Packet
	for _, c := range chunks {
		var err error
		if out, err = d.Feed(c, out); err != nil {
			return out, err
		}
	}
	if d.Buffered() != 0 && tc.err == nil {
		return out, fmt.Errorf("%d bytes left buffered", d.Buffered())
	}
	return out, nil
}

func checkResult(t *testing.T, tc goldenCase, got []Packet, err error) {
	t.Helper()
	if !reflect.DeepEqual(got, tc.want) {
		t.Errorf("packets:\n got %s\nwant %s", dump(got), dump(tc.want))
	}
	switch {
	case tc.err == nil && err != nil:
		t.Errorf("error %v, want none", err)
	case tc.err != nil && !errors.Is(err, tc.err):
		t.Errorf("error %v, want %v", err, tc.err)
	case tc.err != nil && !strings.Contains(err.Error(), tc.errText):
		t.Errorf("error %q does not contain %q", err, tc.errText)
	case tc.err != nil && !strings.HasPrefix(err.Error(), "mqtt: "):
		t.Errorf("error %q lacks the mqtt: prefix", err)
	}
}

// dump prints packets with their pointed-to parts.
func dump(ps []Packet) string {
	var b strings.Builder
	b.WriteString("[")
	for _, p := range ps {
		q := p
		q.Connect, q.Props = nil, nil
		fmt.Fprintf(&b, "\n  %+v", q)
		if p.Props != nil {
			fmt.Fprintf(&b, "\n    Props %+v", *p.Props)
		}
		if p.Connect != nil {
			c := *p.Connect
			c.WillProps = nil
			fmt.Fprintf(&b, "\n    Connect %+v", c)
			if p.Connect.WillProps != nil {
				fmt.Fprintf(&b, "\n    WillProps %+v", *p.Connect.WillProps)
			}
		}
	}
	b.WriteString("]")
	return b.String()
}

func TestMQTTWireGolden(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range goldenCases() {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeChunks(tc, [][]byte{tc.raw})
			checkResult(t, tc, got, err)
		})
	}
}

// TestMQTTWireSplit feeds every golden input split at every point, and
// byte by byte: the result must not depend on the split.
func TestMQTTWireSplit(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i <= len(tc.raw); i++ {
				got, err := decodeChunks(tc, [][]byte{tc.raw[:i], tc.raw[i:]})
				if t.Failed() {
					return
				}
				checkResult(t, tc, got, err)
				if t.Failed() {
					t.Logf("split at %d", i)
					return
				}
			}
			var chunks [][]byte
			for i := range tc.raw {
				chunks = append(chunks, tc.raw[i:i+1])
			}
			got, err := decodeChunks(tc, chunks)
			checkResult(t, tc, got, err)
		})
	}
}

// levels returns the level each packet of ps is decoded under when the
// decoder starts at v: a CONNECT's own, which then holds for what follows.
func levels(v byte, ps []Packet) []byte {
	out := make([]byte, len(ps))
	for i, p := range ps {
		if p.Type == CONNECT {
			v = p.Connect.ProtocolLevel
		}
		out[i] = v
	}
	return out
}

// TestMQTTWireRoundTrip encodes every golden packet: canonical inputs must
// come back byte for byte, and every packet must decode back to itself.
func TestMQTTWireRoundTrip(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			var enc []byte
			vs := levels(tc.version, tc.want)
			for i := range tc.want {
				p := &tc.want[i]
				before := len(enc)
				enc = AppendPacket(enc, p, vs[i])
				if n := PacketSize(p, vs[i]); n != len(enc)-before {
					t.Errorf("PacketSize = %d, AppendPacket wrote %d", n, len(enc)-before)
				}
				roundTrip(t, *p, vs[i])
			}
			if tc.err == nil && !tc.nonCanonical && !bytes.Equal(enc, tc.raw) {
				t.Errorf("encoding differs:\n got % x\nwant % x", enc, tc.raw)
			}
			if tc.err != nil && !tc.nonCanonical && !bytes.HasPrefix(tc.raw, enc) {
				t.Errorf("encoding of the good packets is not a prefix of the input:\n got % x\nwant % x", enc, tc.raw)
			}
		})
	}
}

// roundTrip checks that p decodes from its own encoding under v.
func roundTrip(t *testing.T, p Packet, v byte) {
	t.Helper()
	enc := AppendPacket(nil, &p, v)
	d := NewDecoder(DefaultLimits())
	if p.Type != CONNECT {
		d.SetVersion(v)
	}
	got, err := d.Feed(enc, nil)
	if err != nil {
		t.Fatalf("re-decoding % x under level %d: %v", enc, v, err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], p) {
		t.Fatalf("round trip under level %d of % x:\n got %s\nwant %s", v, enc, dump(got), dump([]Packet{p}))
	}
}
