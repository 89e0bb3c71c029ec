package wire

import (
	"bytes"
	"fmt"
	"strings"
)

// ver is the decoded form of a version string.
type ver uint8

const (
	ver10 ver = iota
	ver11
	ver12
)

// parseVersion maps "1.1" and "1.2" to their rules and anything else to 1.0:
// STOMP 1.2 "Protocol Negotiation" treats a peer that names no version as 1.0,
// and ActiveMQ's StompWireFormat starts every connection at Stomp.DEFAULT_VERSION
// ("1.0").
func parseVersion(s string) ver {
	switch s {
	case V11:
		return ver11
	case V12:
		return ver12
	}
	return ver10
}

func (v ver) String() string {
	switch v {
	case ver11:
		return V11
	case ver12:
		return V12
	}
	return V10
}

// Escape encodes s as a header name or value for version: STOMP 1.1
// "Value Encoding" turns backslash, LF and colon into \\ \n \c; STOMP 1.2
// "Value Encoding" adds CR as \r. Version 1.0 has no escaping and s is
// returned unchanged. Escape does not allocate when nothing needs escaping.
func Escape(s, version string) string {
	v := parseVersion(version)
	if v == ver10 || !needsEscape(s, v) {
		return s
	}
	return string(appendEscaped(make([]byte, 0, len(s)+8), s, v))
}

// AppendEscaped appends s, escaped as Escape does, to dst.
func AppendEscaped(dst []byte, s, version string) []byte {
	v := parseVersion(version)
	if v == ver10 {
		return append(dst, s...)
	}
	return appendEscaped(dst, s, v)
}

// Unescape decodes a header name or value received in version. Version 1.0
// returns s unchanged. For 1.1 and 1.2 an undefined escape (such as \t, \r in
// 1.1, or a trailing lone backslash) is an error wrapping ErrBadEscape:
// STOMP 1.1 and 1.2 "Value Encoding": "Undefined escape sequences such as \t
// MUST be treated as a fatal protocol error."
//
// DEVIATION: ActiveMQ's StompWireFormat.decodeHeader passes undefined escapes
// through literally (backslash kept) and does not know \r at all; we follow the
// specification, as a client that relies on the leniency is already
// non-conforming and its headers would be read wrongly by any other broker.
func Unescape(s, version string) (string, error) {
	v := parseVersion(version)
	if v == ver10 || strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	out, bad := appendUnescaped(make([]byte, 0, len(s)), []byte(s), v)
	if bad >= 0 {
		return "", escapeError(s, bad)
	}
	return string(out), nil
}

func needsEscape(s string, v ver) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '\n', ':':
			return true
		case '\r':
			if v == ver12 {
				return true
			}
		}
	}
	return false
}

func appendEscaped(dst []byte, s string, v ver) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc byte
		switch s[i] {
		case '\\':
			esc = '\\'
		case '\n':
			esc = 'n'
		case ':':
			esc = 'c'
		case '\r':
			if v != ver12 {
				// STOMP 1.1 has no escape for CR; a CR inside a 1.1 value
				// is an ordinary octet (its EOL is LF only).
				continue
			}
			esc = 'r'
		default:
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, '\\', esc)
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// appendUnescaped appends the decoded form of src to dst. On an undefined
// escape it returns the index of the offending backslash in src, else -1.
func appendUnescaped(dst, src []byte, v ver) ([]byte, int) {
	for {
		i := bytes.IndexByte(src, '\\')
		if i < 0 {
			return append(dst, src...), -1
		}
		dst = append(dst, src[:i]...)
		if i+1 == len(src) {
			return dst, i
		}
		switch src[i+1] {
		case '\\':
			dst = append(dst, '\\')
		case 'n':
			dst = append(dst, '\n')
		case 'c':
			dst = append(dst, ':')
		case 'r':
			if v != ver12 {
				return dst, i
			}
			dst = append(dst, '\r')
		default:
			return dst, i
		}
		src = src[i+2:]
	}
}

// escapeError describes the undefined escape at index i of the raw text s.
func escapeError(s string, i int) error {
	if i+1 >= len(s) {
		return fmt.Errorf("%w: backslash at the end of %s", ErrBadEscape, quote(s))
	}
	return fmt.Errorf("%w: \\%s in %s", ErrBadEscape, strings.Trim(fmt.Sprintf("%q", s[i+1:i+2]), `"`), quote(s))
}

// maxQuoted bounds how much wire data an error message repeats, so that an
// ERROR frame built from it stays small.
const maxQuoted = 64

// quote renders wire data for an error message: Go-quoted (so control bytes
// and newlines cannot reach a log line or header raw) and truncated.
func quote[T string | []byte](s T) string {
	if len(s) > maxQuoted {
		return fmt.Sprintf("%q...", s[:maxQuoted])
	}
	return fmt.Sprintf("%q", s)
}
