package wire

import (
	"errors"
	"testing"
)

// specReasons transcribes the reason code tables of each MQTT 5 packet
// (§3.2.2.2, §3.4.2.1, §3.5.2.1, §3.6.2.1, §3.7.2.1, §3.9.3, §3.11.3,
// §3.14.2.1, §3.15.2.1) independently of codes.go.
var specReasons = map[Type][]byte{
	CONNACK: {0x00, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x8C, 0x90, 0x95, 0x97,
		0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9F},
	PUBACK:   {0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99},
	PUBREC:   {0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99},
	PUBREL:   {0x00, 0x92},
	PUBCOMP:  {0x00, 0x92},
	SUBACK:   {0x00, 0x01, 0x02, 0x80, 0x83, 0x87, 0x8F, 0x91, 0x97, 0x9E, 0xA1, 0xA2},
	UNSUBACK: {0x00, 0x11, 0x80, 0x83, 0x87, 0x8F, 0x91},
	DISCONNECT: {0x00, 0x04, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8C, 0x8D, 0x8E, 0x8F, 0x90, 0x93, 0x94,
		0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2},
	AUTH: {0x00, 0x18, 0x19},
}

func TestMQTTWireReasonTables(t *testing.T) {
	for tp := Type(0); tp <= 15; tp++ {
		want := map[byte]bool{}
		for _, c := range specReasons[tp] {
			want[c] = true
		}
		for c := range 256 {
			if got := ValidReason(tp, byte(c)); got != want[byte(c)] {
				t.Errorf("ValidReason(%s, 0x%02X) = %v, want %v", tp, c, got, want[byte(c)])
			}
		}
	}
}

func TestMQTTWireReasonText(t *testing.T) {
	check := func(tp Type, code byte, want string) {
		t.Helper()
		if got := ReasonText(tp, code); got != want {
			t.Errorf("ReasonText(%s, 0x%02X) = %q, want %q", tp, code, got, want)
		}
	}
	check(CONNACK, ReasonSuccess, "Success")
	check(DISCONNECT, ReasonNormalDisconnection, "Normal disconnection")
	check(SUBACK, ReasonGrantedQoS0, "Granted QoS 0")
	check(SUBACK, ReasonGrantedQoS2, "Granted QoS 2")
	check(DISCONNECT, ReasonMalformedPacket, "Malformed Packet")
	check(DISCONNECT, ReasonSessionTakenOver, "Session taken over")
	check(CONNACK, ReasonBadUserNameOrPassword, "Bad User Name or Password")
	check(SUBACK, ReasonWildcardSubsNotSupported, "Wildcard Subscriptions not supported")
	check(PUBACK, ReasonSessionTakenOver, "reason code 0x8E")
	check(CONNACK, 0x01, "reason code 0x01")

	if got := ConnReturnText(ConnRefusedBadUsernamePassword); got != "Connection Refused, bad user name or password" {
		t.Errorf("ConnReturnText(4) = %q", got)
	}
	if got := ConnReturnText(6); got != "return code 0x06" {
		t.Errorf("ConnReturnText(6) = %q", got)
	}
}

// TestMQTTWireErrorSentinels: every reason a decoding error carries
// unwraps to its own sentinel, and no two reasons share one.
func TestMQTTWireErrorSentinels(t *testing.T) {
	seen := map[error]byte{}
	for reason, sentinel := range errorSentinels {
		if other, dup := seen[sentinel]; dup {
			t.Errorf("reasons 0x%02X and 0x%02X share %v", reason, other, sentinel)
		}
		seen[sentinel] = reason
		if !ValidReason(DISCONNECT, reason) && !ValidReason(CONNACK, reason) {
			t.Errorf("reason 0x%02X of %v can be sent neither in DISCONNECT nor in CONNACK", reason, sentinel)
		}
		if err := newError(reason, "x"); !errors.Is(err, sentinel) || ReasonFor(err) != reason {
			t.Errorf("error with reason 0x%02X does not match %v", reason, sentinel)
		}
	}
}
