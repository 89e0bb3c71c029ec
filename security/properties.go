package security

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// maxPropertiesBytes bounds a users/groups file: these files list accounts,
// not data, and a larger one is a mistake (or an attack on a reloaded file).
const maxPropertiesBytes = 16 << 20

// properties is a parsed java.util.Properties file: the keys in the order
// they first appear (the regexp users of TextFileCertificateLoginModule are
// tried in that order) and each key's last value, as Properties.load keeps
// it.
type properties struct {
	keys   []string
	values map[string]string
}

func (p *properties) get(k string) (string, bool) {
	v, ok := p.values[k]
	return v, ok
}

// parseProperties reads b as java.util.Properties.load(InputStream) does:
// bytes are ISO-8859-1 characters (a UTF-8 file's "é" is two characters, as
// in ActiveMQ; write \u00e9 for one); natural lines end at \n, \r or \r\n; a
// line whose first non-blank character is # or ! is a comment; a line ending
// in an odd number of backslashes continues on the next one, whose leading
// blanks are dropped; the key ends at the first unescaped '=', ':' or blank,
// then blanks and at most one '=' or ':' (and blanks again) separate it from
// the value; \t \n \r \f \uXXXX escapes are decoded and any other escaped
// character stands for itself. A malformed \uXXXX is an error, as Java's
// IllegalArgumentException("Malformed \uxxxx encoding.") is.
func parseProperties(b []byte) (*properties, error) {
	if len(b) > maxPropertiesBytes {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrPropertiesTooLarge, len(b), maxPropertiesBytes)
	}
	p := &properties{values: map[string]string{}}
	// Latin-1: each byte is the rune of the same value.
	s := make([]rune, len(b))
	for i, c := range b {
		s[i] = rune(c)
	}
	line := 1
	i := 0
	for i < len(s) {
		startLine := line
		// Skip leading blanks of the logical line.
		for i < len(s) && isPropBlank(s[i]) {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '\n' || s[i] == '\r' {
			line += eatEOL(s, &i)
			continue
		}
		if s[i] == '#' || s[i] == '!' {
			for i < len(s) && s[i] != '\n' && s[i] != '\r' {
				i++
			}
			continue
		}
		// Collect the logical line: join continuations.
		var logical []rune
		for i < len(s) {
			c := s[i]
			if c == '\n' || c == '\r' {
				// Count trailing backslashes already in logical.
				n := 0
				for j := len(logical) - 1; j >= 0 && logical[j] == '\\'; j-- {
					n++
				}
				line += eatEOL(s, &i)
				if n%2 == 1 {
					logical = logical[:len(logical)-1]
					for i < len(s) && isPropBlank(s[i]) {
						i++
					}
					continue
				}
				break
			}
			logical = append(logical, c)
			i++
		}
		// At end of input a trailing odd backslash is dropped, as
		// LineReader does.
		if n := trailingBackslashes(logical); n%2 == 1 {
			logical = logical[:len(logical)-1]
		}
		k, v, err := splitProperty(logical)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", startLine, err)
		}
		if _, seen := p.values[k]; !seen {
			p.keys = append(p.keys, k)
		}
		p.values[k] = v
	}
	return p, nil
}

func trailingBackslashes(r []rune) int {
	n := 0
	for j := len(r) - 1; j >= 0 && r[j] == '\\'; j-- {
		n++
	}
	return n
}

// eatEOL consumes one line terminator at s[*i] and returns 1.
func eatEOL(s []rune, i *int) int {
	if s[*i] == '\r' && *i+1 < len(s) && s[*i+1] == '\n' {
		*i += 2
	} else {
		*i++
	}
	return 1
}

func isPropBlank(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

// splitProperty splits one logical line (leading blanks already dropped) into
// its decoded key and value.
func splitProperty(l []rune) (string, string, error) {
	keyLen := 0
	valStart := len(l)
	hasSep := false
	precedingBackslash := false
	for keyLen < len(l) {
		c := l[keyLen]
		if (c == '=' || c == ':') && !precedingBackslash {
			valStart = keyLen + 1
			hasSep = true
			break
		} else if isPropBlank(c) && !precedingBackslash {
			valStart = keyLen + 1
			break
		}
		if c == '\\' {
			precedingBackslash = !precedingBackslash
		} else {
			precedingBackslash = false
		}
		keyLen++
	}
	for valStart < len(l) {
		c := l[valStart]
		if !isPropBlank(c) {
			if !hasSep && (c == '=' || c == ':') {
				hasSep = true
			} else {
				break
			}
		}
		valStart++
	}
	k, err := unescapeProperty(l[:keyLen])
	if err != nil {
		return "", "", err
	}
	v, err := unescapeProperty(l[valStart:])
	if err != nil {
		return "", "", err
	}
	return k, v, nil
}

func unescapeProperty(r []rune) (string, error) {
	// Java strings are UTF-16: "\ud83d\ude00" is one character there, so
	// units are collected first and paired at the end (an unpaired
	// surrogate becomes U+FFFD, as Java's UTF-8 encoder writes '?').
	u := make([]uint16, 0, len(r))
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c != '\\' {
			u = append(u, uint16(c))
			continue
		}
		i++
		if i >= len(r) {
			break
		}
		c = r[i]
		switch c {
		case 't':
			u = append(u, '\t')
		case 'n':
			u = append(u, '\n')
		case 'r':
			u = append(u, '\r')
		case 'f':
			u = append(u, '\f')
		case 'u':
			if i+4 > len(r)-1 {
				return "", ErrPropertiesUnicode
			}
			var v uint16
			for j := 1; j <= 4; j++ {
				h := r[i+j]
				switch {
				case h >= '0' && h <= '9':
					v = v<<4 | uint16(h-'0')
				case h >= 'a' && h <= 'f':
					v = v<<4 | uint16(h-'a'+10)
				case h >= 'A' && h <= 'F':
					v = v<<4 | uint16(h-'A'+10)
				default:
					return "", ErrPropertiesUnicode
				}
			}
			u = append(u, v)
			i += 4
		default:
			u = append(u, uint16(c))
		}
	}
	return string(utf16.Decode(u)), nil
}

// storeProperties writes p as Properties.store writes it (without the date
// comment): keys and values escaped so that parseProperties reads the same
// map back. Characters above U+00FF are written as \uXXXX (surrogate pairs
// for astral ones), since the reader is ISO-8859-1.
func storeProperties(p *properties) []byte {
	var sb strings.Builder
	for _, k := range p.keys {
		sb.WriteString(escapeProperty(k, true))
		sb.WriteByte('=')
		sb.WriteString(escapeProperty(p.values[k], false))
		sb.WriteByte('\n')
	}
	// Latin-1 encode: every rune written is <= 0xFF.
	out := make([]byte, 0, sb.Len())
	for _, r := range sb.String() {
		out = append(out, byte(r))
	}
	return out
}

func escapeProperty(s string, isKey bool) string {
	var sb strings.Builder
	for i, r := range s {
		switch {
		case r == ' ':
			if i == 0 || isKey {
				sb.WriteByte('\\')
			}
			sb.WriteByte(' ')
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\f':
			sb.WriteString(`\f`)
		case r == '=' || r == ':' || r == '#' || r == '!' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < 0x20 || (r > 0x7e && r <= 0xff) || r > 0xff:
			if r > 0xFFFF {
				r -= 0x10000
				fmt.Fprintf(&sb, `\u%04X\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
			} else {
				fmt.Fprintf(&sb, `\u%04X`, r)
			}
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}
