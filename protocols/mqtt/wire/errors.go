package wire

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the Decoder returns is an *Error whose
// Unwrap gives one of these, chosen by its Reason (see errorSentinels in
// codes.go), so both errors.Is(err, ErrMalformed) and errors.As(err, &e)
// with e.Reason work. Every decoding error is fatal for the connection: the
// specification closes the network connection on a malformed packet or a
// protocol error (MQTT 5 §4.13, MQTT 3.1.1 §4.8).
var (
	// ErrMalformed: the bytes do not follow the packet format (reason 0x81
	// Malformed Packet).
	ErrMalformed = errors.New("mqtt: malformed packet")
	// ErrProtocol: the packet is well formed but breaks a protocol rule
	// (reason 0x82 Protocol Error).
	ErrProtocol = errors.New("mqtt: protocol error")
	// ErrPacketTooLarge: the remaining length announces a packet larger than
	// Limits.MaxPacketBytes (reason 0x95 Packet too large).
	ErrPacketTooLarge = errors.New("mqtt: packet too large")
	// ErrUnsupportedVersion: a CONNECT names a protocol level this codec
	// does not speak (reason 0x84 Unsupported Protocol Version; a 3.x
	// session answers CONNACK 0x01 [MQTT-3.1.2-2]).
	ErrUnsupportedVersion = errors.New("mqtt: unsupported protocol version")
	// ErrTopicNameInvalid: a PUBLISH topic name breaks §4.7 (reason 0x90
	// Topic Name invalid).
	ErrTopicNameInvalid = errors.New("mqtt: invalid topic name")
	// ErrTopicFilterInvalid: a topic filter breaks §4.7 (reason 0x8F Topic
	// Filter invalid). Only ValidTopicFilter and ParseShared return it; the
	// decoder leaves filters to the session, which answers them in SUBACK.
	ErrTopicFilterInvalid = errors.New("mqtt: invalid topic filter")
	// ErrTopicAliasInvalid: a PUBLISH carries Topic Alias 0 (reason 0x94
	// Topic Alias invalid).
	ErrTopicAliasInvalid = errors.New("mqtt: invalid topic alias")
	// ErrQuotaExceeded: a packet holds more items than a count in Limits
	// allows (reason 0x97 Quota exceeded).
	ErrQuotaExceeded = errors.New("mqtt: limit exceeded")
)

// Error is a decoding (or validation) failure. Reason is the MQTT 5 reason
// code that names it (ReasonMalformedPacket, ReasonProtocolError,
// ReasonPacketTooLarge, ...): an MQTT 5 session sends it in DISCONNECT (or
// in CONNACK when the CONNECT itself failed) before closing; a 3.x session
// just closes, except that ReasonUnsupportedProtocolVersion is answered
// with CONNACK 0x01. Msg is the whole message, "mqtt: " prefix and spec tag
// included, ready for a log line or a Reason String.
type Error struct {
	Reason byte
	Msg    string
}

// Error returns Msg.
func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel for Reason (ErrMalformed for 0x81, ...).
func (e *Error) Unwrap() error { return errorSentinels[e.Reason] }

// ReasonFor returns the MQTT 5 reason code carried by err (an *Error
// anywhere in its chain), or ReasonUnspecifiedError for any other error.
func ReasonFor(err error) byte {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Reason
	}
	return ReasonUnspecifiedError
}

func newError(reason byte, format string, args ...any) *Error {
	return &Error{Reason: reason, Msg: "mqtt: " + fmt.Sprintf(format, args...)}
}

// malformed reports a packet that does not follow the format (0x81).
func malformed(format string, args ...any) *Error {
	return newError(ReasonMalformedPacket, format, args...)
}

// protocolErr reports a well-formed packet that breaks a rule (0x82).
func protocolErr(format string, args ...any) *Error {
	return newError(ReasonProtocolError, format, args...)
}
