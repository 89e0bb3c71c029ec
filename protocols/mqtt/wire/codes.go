package wire

import "fmt"

// MQTT 5 reason codes (MQTT 5 §2.4, Table 2-6). Several codes have one value
// and a name per packet type: 0x00 is Success, Normal disconnection
// (DISCONNECT) and Granted QoS 0 (SUBACK).
const (
	ReasonSuccess                    byte = 0x00 // CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, UNSUBACK, AUTH
	ReasonNormalDisconnection        byte = 0x00 // DISCONNECT
	ReasonGrantedQoS0                byte = 0x00 // SUBACK
	ReasonGrantedQoS1                byte = 0x01 // SUBACK
	ReasonGrantedQoS2                byte = 0x02 // SUBACK
	ReasonDisconnectWithWill         byte = 0x04 // DISCONNECT
	ReasonNoMatchingSubscribers      byte = 0x10 // PUBACK, PUBREC
	ReasonNoSubscriptionExisted      byte = 0x11 // UNSUBACK
	ReasonContinueAuthentication     byte = 0x18 // AUTH
	ReasonReAuthenticate             byte = 0x19 // AUTH
	ReasonUnspecifiedError           byte = 0x80 // CONNACK, PUBACK, PUBREC, SUBACK, UNSUBACK, DISCONNECT
	ReasonMalformedPacket            byte = 0x81 // CONNACK, DISCONNECT
	ReasonProtocolError              byte = 0x82 // CONNACK, DISCONNECT
	ReasonImplementationSpecific     byte = 0x83 // CONNACK, PUBACK, PUBREC, SUBACK, UNSUBACK, DISCONNECT
	ReasonUnsupportedProtocolVersion byte = 0x84 // CONNACK
	ReasonClientIDNotValid           byte = 0x85 // CONNACK
	ReasonBadUserNameOrPassword      byte = 0x86 // CONNACK
	ReasonNotAuthorized              byte = 0x87 // CONNACK, PUBACK, PUBREC, SUBACK, UNSUBACK, DISCONNECT
	ReasonServerUnavailable          byte = 0x88 // CONNACK
	ReasonServerBusy                 byte = 0x89 // CONNACK, DISCONNECT
	ReasonBanned                     byte = 0x8A // CONNACK
	ReasonServerShuttingDown         byte = 0x8B // DISCONNECT
	ReasonBadAuthMethod              byte = 0x8C // CONNACK, DISCONNECT
	ReasonKeepAliveTimeout           byte = 0x8D // DISCONNECT
	ReasonSessionTakenOver           byte = 0x8E // DISCONNECT
	ReasonTopicFilterInvalid         byte = 0x8F // SUBACK, UNSUBACK, DISCONNECT
	ReasonTopicNameInvalid           byte = 0x90 // CONNACK, PUBACK, PUBREC, DISCONNECT
	ReasonPacketIDInUse              byte = 0x91 // PUBACK, PUBREC, SUBACK, UNSUBACK
	ReasonPacketIDNotFound           byte = 0x92 // PUBREL, PUBCOMP
	ReasonReceiveMaximumExceeded     byte = 0x93 // DISCONNECT
	ReasonTopicAliasInvalid          byte = 0x94 // DISCONNECT
	ReasonPacketTooLarge             byte = 0x95 // CONNACK, DISCONNECT
	ReasonMessageRateTooHigh         byte = 0x96 // DISCONNECT
	ReasonQuotaExceeded              byte = 0x97 // CONNACK, PUBACK, PUBREC, SUBACK, DISCONNECT
	ReasonAdministrativeAction       byte = 0x98 // DISCONNECT
	ReasonPayloadFormatInvalid       byte = 0x99 // CONNACK, PUBACK, PUBREC, DISCONNECT
	ReasonRetainNotSupported         byte = 0x9A // CONNACK, DISCONNECT
	ReasonQoSNotSupported            byte = 0x9B // CONNACK, DISCONNECT
	ReasonUseAnotherServer           byte = 0x9C // CONNACK, DISCONNECT
	ReasonServerMoved                byte = 0x9D // CONNACK, DISCONNECT
	ReasonSharedSubNotSupported      byte = 0x9E // SUBACK, DISCONNECT
	ReasonConnectionRateExceeded     byte = 0x9F // CONNACK, DISCONNECT
	ReasonMaximumConnectTime         byte = 0xA0 // DISCONNECT
	ReasonSubIDsNotSupported         byte = 0xA1 // SUBACK, DISCONNECT
	ReasonWildcardSubsNotSupported   byte = 0xA2 // SUBACK, DISCONNECT
)

// MQTT 3.1 and 3.1.1 CONNACK return codes (MQTT 3.1.1 §3.2.2.3, Table 3.1).
// 6-255 are reserved.
const (
	ConnAccepted                   byte = 0x00 // connection accepted
	ConnRefusedProtocolVersion     byte = 0x01 // unacceptable protocol version
	ConnRefusedIdentifierRejected  byte = 0x02 // client identifier not allowed
	ConnRefusedServerUnavailable   byte = 0x03 // MQTT service unavailable
	ConnRefusedBadUsernamePassword byte = 0x04 // malformed user name or password
	ConnRefusedNotAuthorized       byte = 0x05 // not authorized to connect
)

// SubackFailure is the MQTT 3.1.1 SUBACK return code for a refused
// subscription (§3.9.3); 0x00-0x02 are the granted QoS.
const SubackFailure byte = 0x80

// typeSet is a set of packet types, bit t for Type t.
type typeSet uint16

func types(ts ...Type) typeSet {
	var s typeSet
	for _, t := range ts {
		s |= 1 << t
	}
	return s
}

func (s typeSet) has(t Type) bool { return s&(1<<t) != 0 }

// reasonInfo is one row of MQTT 5 Table 2-6: a code's name and the packets
// that may carry it.
type reasonInfo struct {
	name string
	in   typeSet
}

// reasonTable is MQTT 5 §2.4 Table 2-6, indexed by code. Code 0x00 has a
// name per packet type (see ReasonText).
var reasonTable = [256]reasonInfo{
	0x00: {"Success", types(CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK, DISCONNECT, AUTH)},
	0x01: {"Granted QoS 1", types(SUBACK)},
	0x02: {"Granted QoS 2", types(SUBACK)},
	0x04: {"Disconnect with Will Message", types(DISCONNECT)},
	0x10: {"No matching subscribers", types(PUBACK, PUBREC)},
	0x11: {"No subscription existed", types(UNSUBACK)},
	0x18: {"Continue authentication", types(AUTH)},
	0x19: {"Re-authenticate", types(AUTH)},
	0x80: {"Unspecified error", types(CONNACK, PUBACK, PUBREC, SUBACK, UNSUBACK, DISCONNECT)},
	0x81: {"Malformed Packet", types(CONNACK, DISCONNECT)},
	0x82: {"Protocol Error", types(CONNACK, DISCONNECT)},
	0x83: {"Implementation specific error", types(CONNACK, PUBACK, PUBREC, SUBACK, UNSUBACK, DISCONNECT)},
	0x84: {"Unsupported Protocol Version", types(CONNACK)},
	0x85: {"Client Identifier not valid", types(CONNACK)},
	0x86: {"Bad User Name or Password", types(CONNACK)},
	0x87: {"Not authorized", types(CONNACK, PUBACK, PUBREC, SUBACK, UNSUBACK, DISCONNECT)},
	0x88: {"Server unavailable", types(CONNACK)},
	0x89: {"Server busy", types(CONNACK, DISCONNECT)},
	0x8A: {"Banned", types(CONNACK)},
	0x8B: {"Server shutting down", types(DISCONNECT)},
	0x8C: {"Bad authentication method", types(CONNACK, DISCONNECT)},
	0x8D: {"Keep Alive timeout", types(DISCONNECT)},
	0x8E: {"Session taken over", types(DISCONNECT)},
	0x8F: {"Topic Filter invalid", types(SUBACK, UNSUBACK, DISCONNECT)},
	0x90: {"Topic Name invalid", types(CONNACK, PUBACK, PUBREC, DISCONNECT)},
	0x91: {"Packet Identifier in use", types(PUBACK, PUBREC, SUBACK, UNSUBACK)},
	0x92: {"Packet Identifier not found", types(PUBREL, PUBCOMP)},
	0x93: {"Receive Maximum exceeded", types(DISCONNECT)},
	0x94: {"Topic Alias invalid", types(DISCONNECT)},
	0x95: {"Packet too large", types(CONNACK, DISCONNECT)},
	0x96: {"Message rate too high", types(DISCONNECT)},
	0x97: {"Quota exceeded", types(CONNACK, PUBACK, PUBREC, SUBACK, DISCONNECT)},
	0x98: {"Administrative action", types(DISCONNECT)},
	0x99: {"Payload format invalid", types(CONNACK, PUBACK, PUBREC, DISCONNECT)},
	0x9A: {"Retain not supported", types(CONNACK, DISCONNECT)},
	0x9B: {"QoS not supported", types(CONNACK, DISCONNECT)},
	0x9C: {"Use another server", types(CONNACK, DISCONNECT)},
	0x9D: {"Server moved", types(CONNACK, DISCONNECT)},
	0x9E: {"Shared Subscriptions not supported", types(SUBACK, DISCONNECT)},
	0x9F: {"Connection rate exceeded", types(CONNACK, DISCONNECT)},
	0xA0: {"Maximum connect time", types(DISCONNECT)},
	0xA1: {"Subscription Identifiers not supported", types(SUBACK, DISCONNECT)},
	0xA2: {"Wildcard Subscriptions not supported", types(SUBACK, DISCONNECT)},
}

// ValidReason reports whether code is an MQTT 5 reason code that packet type
// t may carry ([MQTT-3.2.2-8] CONNACK, [MQTT-3.4.2-1] PUBACK, [MQTT-3.5.2-1]
// PUBREC, [MQTT-3.6.2-1] PUBREL, [MQTT-3.7.2-1] PUBCOMP, [MQTT-3.9.3-2]
// SUBACK, [MQTT-3.11.3-2] UNSUBACK, [MQTT-3.14.2-1] DISCONNECT,
// [MQTT-3.15.2-1] AUTH).
func ValidReason(t Type, code byte) bool { return reasonTable[code].in.has(t) }

// ReasonText returns the MQTT 5 name of code as packet type t uses it
// ("Normal disconnection" for DISCONNECT 0x00, "Granted QoS 0" for SUBACK
// 0x00), or "reason code 0xNN" for a code t may not carry.
func ReasonText(t Type, code byte) string {
	if !ValidReason(t, code) {
		return fmt.Sprintf("reason code 0x%02X", code)
	}
	if code == 0 {
		switch t {
		case DISCONNECT:
			return "Normal disconnection"
		case SUBACK:
			return "Granted QoS 0"
		}
	}
	return reasonTable[code].name
}

var connReturnText = [...]string{
	ConnAccepted:                   "Connection Accepted",
	ConnRefusedProtocolVersion:     "Connection Refused, unacceptable protocol version",
	ConnRefusedIdentifierRejected:  "Connection Refused, identifier rejected",
	ConnRefusedServerUnavailable:   "Connection Refused, Server unavailable",
	ConnRefusedBadUsernamePassword: "Connection Refused, bad user name or password",
	ConnRefusedNotAuthorized:       "Connection Refused, not authorized",
}

// ConnReturnText returns the MQTT 3.1.1 name of a CONNACK return code, or
// "return code 0xNN" for a reserved one.
func ConnReturnText(code byte) string {
	if int(code) < len(connReturnText) {
		return connReturnText[code]
	}
	return fmt.Sprintf("return code 0x%02X", code)
}

// validConnReturn reports whether code is a 3.x CONNACK return code; 6-255
// are reserved (MQTT 3.1.1 §3.2.2.3).
func validConnReturn(code byte) bool { return code <= ConnRefusedNotAuthorized }

// validSubackReturn3 reports whether code is a 3.x SUBACK return code
// [MQTT-3.9.3-2]. 0x80 only exists from 3.1.1 on; it is accepted from 3.1
// peers too, since nothing else could be meant by it.
func validSubackReturn3(code byte) bool { return code <= 2 || code == SubackFailure }

// errorSentinels maps the reason code a decoding error carries to the
// sentinel that Error unwraps to, so callers can use errors.Is as well as
// Error.Reason. Every reason a decoder error may carry is here; a session
// turns Error.Reason into an MQTT 5 DISCONNECT (or CONNACK) reason code as
// is, and into "close without a packet" below version 5.
var errorSentinels = map[byte]error{
	ReasonMalformedPacket:            ErrMalformed,
	ReasonProtocolError:              ErrProtocol,
	ReasonPacketTooLarge:             ErrPacketTooLarge,
	ReasonUnsupportedProtocolVersion: ErrUnsupportedVersion,
	ReasonTopicNameInvalid:           ErrTopicNameInvalid,
	ReasonTopicFilterInvalid:         ErrTopicFilterInvalid,
	ReasonTopicAliasInvalid:          ErrTopicAliasInvalid,
	ReasonQuotaExceeded:              ErrQuotaExceeded,
}
