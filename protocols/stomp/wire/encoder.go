package wire

import "strings"

// AppendFrame appends the wire form of f for version to dst and returns the
// extended slice; it does not allocate when dst has room.
//
// Header names and values are escaped per version (see Escape), except in
// CONNECT, STOMP and CONNECTED frames, which are never escaped (STOMP 1.2
// "Value Encoding"). content-length is written only if f.Headers has it: the
// caller decides, because ActiveMQ marks a text body by its absence
// (LegacyFrameTranslator). The frame ends with NUL and then LF, as ActiveMQ's
// StompWireFormat writes it; the LF is a heart-beat to the peer.
//
// f.Command must be a command name without LF; a body containing NUL must be
// announced with content-length (STOMP 1.2 "Header content-length").
func AppendFrame(dst []byte, f *Frame, version string) []byte {
	v := parseVersion(version)
	if isConnectFamily(f.Command) {
		v = ver10
	}
	dst = append(dst, f.Command...)
	dst = append(dst, '\n')
	for i := range f.Headers {
		h := &f.Headers[i]
		if v == ver10 {
			dst = appendRaw(dst, h.Name)
			dst = append(dst, ':')
			dst = appendRaw(dst, h.Value)
		} else {
			dst = appendEscaped(dst, h.Name, v)
			dst = append(dst, ':')
			dst = appendEscaped(dst, h.Value, v)
		}
		dst = append(dst, '\n')
	}
	dst = append(dst, '\n')
	dst = append(dst, f.Body...)
	return append(dst, 0, '\n')
}

// appendRaw appends a header name or value that cannot be escaped.
//
// DEVIATION: ActiveMQ writes such values verbatim, so a property value holding
// "\n" ends the header line early and can inject headers (or end the header
// block) in a 1.0 MESSAGE. We replace LF by a space: the frame stays well
// formed and every other byte is kept.
func appendRaw(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, ' ')
		s = s[i+1:]
	}
}
