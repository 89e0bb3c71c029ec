package wire

import "unicode/utf8"

// utf8Stream validates a text message that arrives in chunks: a character
// may be split between two frames or two reads [RFC 6455 §8.1: "the whole
// message" must be valid UTF-8, fragments need not be].
type utf8Stream struct {
	carry [utf8.UTFMax]byte // the start of a character cut by the last chunk
	n     int               // bytes in carry
	need  int               // the whole character's length, in bytes
}

// reset starts a new message.
func (s *utf8Stream) reset() { s.n, s.need = 0, 0 }

// valid reports whether p, following the earlier chunks, can still be part
// of valid UTF-8; final says p ends the message, which must then not end
// inside a character.
func (s *utf8Stream) valid(p []byte, final bool) bool {
	if s.n > 0 {
		take := min(s.need-s.n, len(p))
		copy(s.carry[s.n:], p[:take])
		s.n += take
		p = p[take:]
		if s.n < s.need {
			return !final && validPrefix(s.carry[:s.n], s.need)
		}
		if !utf8.Valid(s.carry[:s.n]) {
			return false
		}
		s.n, s.need = 0, 0
	}
	tail, need := incompleteTail(p)
	if !utf8.Valid(p[:len(p)-tail]) {
		return false
	}
	if tail > 0 {
		if final || !validPrefix(p[len(p)-tail:], need) {
			return false
		}
		s.n = copy(s.carry[:], p[len(p)-tail:])
		s.need = need
	}
	return true
}

// validPrefix reports whether p, the first bytes of a need-byte character,
// can still be completed to a valid one, so that invalid text is refused
// as soon as it is seen, wherever the chunks end. Only the second byte's
// range depends on the first (E0, ED, F0 and F4 narrow it); every range
// holds 0x80 or 0xBF, and the bytes after it may be anything in 80-BF.
func validPrefix(p []byte, need int) bool {
	var buf [utf8.UTFMax]byte
	for _, second := range [...]byte{0x80, 0xBF} {
		n := copy(buf[:], p)
		for i := n; i < need; i++ {
			buf[i] = 0x80
			if i == 1 {
				buf[i] = second
			}
		}
		if utf8.Valid(buf[:need]) {
			return true
		}
	}
	return false
}

// incompleteTail returns how many bytes at the end of p start a character
// that p cuts short, and that character's full length. Anything else
// (complete, or invalid) is left for utf8.Valid to judge.
func incompleteTail(p []byte) (tail, need int) {
	for i := 1; i < utf8.UTFMax && i <= len(p); i++ {
		c := p[len(p)-i]
		switch {
		case c < 0x80:
			return 0, 0 // ASCII: whatever came before it is complete
		case c < 0xC0:
			continue // continuation byte: look further back
		case c < 0xE0:
			need = 2
		case c < 0xF0:
			need = 3
		case c < 0xF8:
			need = 4
		default:
			return 0, 0 // not a lead byte in any encoding: invalid
		}
		if need > i {
			return i, need
		}
		return 0, 0
	}
	return 0, 0
}
