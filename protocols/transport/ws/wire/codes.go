package wire

import "errors"

// Close status codes [RFC 6455 §7.4.1] and the ones IANA registered since
// (1012-1014, WebSocket Close Code Number Registry).
const (
	CloseNormal             uint16 = 1000
	CloseGoingAway          uint16 = 1001
	CloseProtocolError      uint16 = 1002
	CloseUnsupportedData    uint16 = 1003
	CloseNoStatus           uint16 = 1005 // never sent: a close frame without a code
	CloseAbnormal           uint16 = 1006 // never sent: the connection ended without a close frame
	CloseInvalidPayload     uint16 = 1007
	ClosePolicyViolation    uint16 = 1008
	CloseMessageTooBig      uint16 = 1009
	CloseMandatoryExtension uint16 = 1010
	CloseInternalError      uint16 = 1011
	CloseServiceRestart     uint16 = 1012
	CloseTryAgainLater      uint16 = 1013
	CloseBadGateway         uint16 = 1014
	CloseTLSHandshake       uint16 = 1015 // never sent
)

// ValidCloseCode reports whether code may appear in a close frame: the
// codes RFC 6455 and IANA define for sending, and the 3000-4999 ranges for
// libraries and applications [RFC 6455 §7.4.1, §7.4.2]. 1004 is reserved;
// 1005, 1006 and 1015 must never be sent; 0-999 are unused and 1016-2999
// are reserved for future extensions.
func ValidCloseCode(code uint16) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// CloseCodeFor is the close code a server sends when failing the
// connection for a decoding error: 1009 for a message over the limit, 1007
// for invalid UTF-8 in text, 1002 for every other violation of the framing
// rules [RFC 6455 §7.4.1].
func CloseCodeFor(err error) uint16 {
	switch {
	case errors.Is(err, ErrMessageTooBig):
		return CloseMessageTooBig
	case errors.Is(err, ErrInvalidUTF8):
		return CloseInvalidPayload
	}
	return CloseProtocolError
}
