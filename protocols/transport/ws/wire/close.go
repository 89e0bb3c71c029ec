package wire

import (
	"encoding/binary"
	"unicode/utf8"
)

// ParseClose decodes a close frame's payload [RFC 6455 §5.5.1]: an empty
// payload is CloseNoStatus; otherwise a two-byte status code that may be
// sent, followed by a UTF-8 reason.
func ParseClose(p []byte) (code uint16, reason string, err error) {
	switch {
	case len(p) == 0:
		return CloseNoStatus, "", nil
	case len(p) == 1:
		return 0, "", ErrClosePayload
	}
	code = binary.BigEndian.Uint16(p)
	if !ValidCloseCode(code) {
		return 0, "", ErrClosePayload
	}
	if !utf8.Valid(p[2:]) {
		// [RFC 6455 §5.5.1] the reason's "data is not guaranteed to be human
		// readable" but "MUST be" UTF-8; §8.1 fails the connection.
		return 0, "", ErrInvalidUTF8
	}
	return code, string(p[2:]), nil
}

// AppendClose appends a close frame (unmasked) with code and reason; code
// CloseNoStatus gives an empty payload. reason is cut to fit the control
// frame limit, at a UTF-8 boundary [RFC 6455 §5.5].
func AppendClose(dst []byte, code uint16, reason string) []byte {
	if code == CloseNoStatus {
		return AppendHeader(dst, Header{Fin: true, Opcode: OpClose})
	}
	if len(reason) > MaxControlPayload-2 {
		reason = reason[:MaxControlPayload-2]
		for len(reason) > 0 && !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
	}
	dst = AppendHeader(dst, Header{Fin: true, Opcode: OpClose, PayloadLength: int64(2 + len(reason))})
	dst = binary.BigEndian.AppendUint16(dst, code)
	return append(dst, reason...)
}
