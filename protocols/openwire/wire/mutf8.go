package wire

import (
	"unicode/utf8"
)

// Java "modified UTF-8" (DataOutput.writeUTF, MarshallingSupport.writeUTF8):
// the string is a sequence of UTF-16 code units, each written as 1, 2 or 3
// bytes; U+0000 is written as C0 80 and a supplementary character as two
// 3-byte surrogates (CESU-8). Go strings are UTF-8, so these helpers convert.
//
// A Java string can hold a lone surrogate, which UTF-8 cannot. Decoding keeps
// it as the 3-byte generalized-UTF-8 ("WTF-8") sequence ED A0..BF xx inside
// the Go string, and encoding passes such a sequence through, so a decode ->
// encode round trip is lossless. Other bytes that are not valid UTF-8 in a Go
// string are encoded as U+FFFD, as Java's String(byte[], UTF_8) would.

// isWTF8Surrogate reports whether s starts with a 3-byte encoded surrogate.
func isWTF8Surrogate(s string) bool {
	return len(s) >= 3 && s[0] == 0xED && s[1] >= 0xA0 && s[1] <= 0xBF && s[2] >= 0x80 && s[2] <= 0xBF
}

// ModifiedUTF8Len returns the number of bytes s occupies in Java modified UTF-8.
func ModifiedUTF8Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0 {
				n += 2
			} else {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// A lone surrogate passes through as 3 bytes; anything else
			// becomes U+FFFD, also 3 bytes.
			if isWTF8Surrogate(s[i:]) {
				size = 3
			}
			n += 3
		case r < 0x800:
			n += 2
		case r < 0x10000:
			n += 3
		default:
			n += 6
		}
		i += size
	}
	return n
}

// UTF16Len returns the number of UTF-16 code units of s as Java would hold it
// (String.length()).
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 && isWTF8Surrogate(s[i:]) {
			size = 3
		}
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
		i += size
	}
	return n
}

// isJavaASCII reports whether every UTF-16 unit of s is in 0x01..0x7F, the
// test tight string encoding uses to pick its one-byte-per-char form.
func isJavaASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func appendUnit3(dst []byte, u rune) []byte {
	return append(dst, byte(0xE0|(u>>12)&0x0F), byte(0x80|(u>>6)&0x3F), byte(0x80|u&0x3F))
}

// AppendModifiedUTF8 appends s encoded as Java modified UTF-8 (no length).
func AppendModifiedUTF8(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c == 0 {
				dst = append(dst, 0xC0, 0x80)
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			if isWTF8Surrogate(s[i:]) {
				dst = append(dst, s[i:i+3]...)
				size = 3
			} else {
				dst = appendUnit3(dst, utf8.RuneError)
			}
		case r < 0x800:
			dst = append(dst, byte(0xC0|r>>6), byte(0x80|r&0x3F))
		case r < 0x10000:
			dst = appendUnit3(dst, r)
		default:
			r -= 0x10000
			dst = appendUnit3(dst, 0xD800+(r>>10))
			dst = appendUnit3(dst, 0xDC00+(r&0x3FF))
		}
		i += size
	}
	return dst
}

// DecodeModifiedUTF8 decodes Java modified UTF-8 as DataInput.readUTF and
// MarshallingSupport.readUTF8 do: 4-byte UTF-8 sequences and stray
// continuation bytes are ErrInvalidUTF8; surrogate pairs become one rune.
func DecodeModifiedUTF8(b []byte) (string, error) {
	ascii := true
	for _, c := range b {
		if c == 0 || c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	out := make([]byte, 0, len(b))
	var pendingHigh rune = -1 // a high surrogate waiting for its low half
	flush := func() {
		if pendingHigh >= 0 {
			out = appendUnit3(out, pendingHigh)
			pendingHigh = -1
		}
	}
	for i := 0; i < len(b); {
		c := b[i]
		var u rune
		switch {
		case c < 0x80:
			u = rune(c)
			i++
		case c&0xE0 == 0xC0:
			if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
				return "", ErrInvalidUTF8
			}
			u = rune(c&0x1F)<<6 | rune(b[i+1]&0x3F)
			i += 2
		case c&0xF0 == 0xE0:
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				return "", ErrInvalidUTF8
			}
			u = rune(c&0x0F)<<12 | rune(b[i+1]&0x3F)<<6 | rune(b[i+2]&0x3F)
			i += 3
		default:
			return "", ErrInvalidUTF8
		}
		switch {
		case u >= 0xD800 && u <= 0xDBFF:
			flush()
			pendingHigh = u
		case u >= 0xDC00 && u <= 0xDFFF:
			if pendingHigh >= 0 {
				out = utf8.AppendRune(out, 0x10000+(pendingHigh-0xD800)<<10+(u-0xDC00))
				pendingHigh = -1
			} else {
				out = appendUnit3(out, u)
			}
		default:
			flush()
			out = utf8.AppendRune(out, u)
		}
	}
	flush()
	return string(out), nil
}
