package jolokia

import (
	"fmt"
	"sort"
	"strings"
)

// objectName is a JMX ObjectName (javax.management.ObjectName): a domain
// and key properties, or a pattern of them. Values are kept as written,
// quotes included: JMX compares a quoted value with the quotes.
type objectName struct {
	domain string
	props  []prop // in the order written (the "key property list string")
	// propPattern: the list ends in ",*" (or is "*"): names with more
	// properties match too.
	propPattern bool
}

type prop struct{ key, value string }

// parseObjectName parses s with the JMX rules: a domain (which may hold
// the wildcards * and ?), ':', then key=value pairs separated by ','; a
// value is either unquoted (no ,=:" and, outside a pattern, no *?) or
// quoted with \ escapes; a final "*" element makes a property pattern.
func parseObjectName(s string) (objectName, error) {
	var on objectName
	colon := strings.IndexByte(s, ':')
	if colon < 0 {
		return on, malformed(s, "no ':' after the domain")
	}
	on.domain = s[:colon]
	if strings.ContainsAny(on.domain, "\n") {
		return on, malformed(s, "the domain holds a newline")
	}
	rest := s[colon+1:]
	if rest == "" {
		return on, malformed(s, "no key properties")
	}
	seen := map[string]bool{}
	for len(rest) > 0 {
		if rest == "*" || strings.HasPrefix(rest, "*,") {
			if on.propPattern {
				return on, malformed(s, "'*' appears twice in the key properties")
			}
			on.propPattern = true
			rest = strings.TrimPrefix(rest[1:], ",")
			continue
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return on, malformed(s, "a key property has no key or no '='")
		}
		key := rest[:eq]
		if strings.ContainsAny(key, ":,=*?\"\n") {
			return on, malformed(s, fmt.Sprintf("invalid character in key %q", key))
		}
		if seen[key] {
			return on, malformed(s, fmt.Sprintf("key %q appears twice", key))
		}
		seen[key] = true
		rest = rest[eq+1:]
		var value string
		if strings.HasPrefix(rest, `"`) {
			end := quotedEnd(rest)
			if end < 0 {
				return on, malformed(s, fmt.Sprintf("unterminated quoted value of key %q", key))
			}
			value, rest = rest[:end], rest[end:]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			value, rest = rest[:end], rest[end:]
			if value == "" {
				return on, malformed(s, fmt.Sprintf("empty value of key %q", key))
			}
			if strings.ContainsAny(value, ":=\"\n") {
				return on, malformed(s, fmt.Sprintf("invalid character in value %q", value))
			}
		}
		on.props = append(on.props, prop{key, value})
		if rest != "" {
			if rest[0] != ',' || len(rest) == 1 {
				return on, malformed(s, "key properties must be separated by ','")
			}
			rest = rest[1:]
		}
	}
	if len(on.props) == 0 && !on.propPattern {
		return on, malformed(s, "no key properties")
	}
	return on, nil
}

// quotedEnd returns the index just past the closing quote of the quoted
// value that s starts with, or -1.
func quotedEnd(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

func malformed(s, why string) error {
	return &jmxError{status: 400, typ: "javax.management.MalformedObjectNameException", msg: fmt.Sprintf("%s (in %q)", why, s)}
}

// isPattern reports whether the name matches more than itself.
func (on objectName) isPattern() bool {
	if on.propPattern || strings.ContainsAny(on.domain, "*?") {
		return true
	}
	for _, p := range on.props {
		if isValuePattern(p.value) {
			return true
		}
	}
	return false
}

// isValuePattern: a value with a * or ? (unescaped, in a quoted value)
// is a pattern. Only quoted values have escapes: elsewhere JMX reads \
// as itself.
func isValuePattern(v string) bool {
	quoted := isQuoted(v)
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			if quoted {
				i++
			}
		case '*', '?':
			return true
		}
	}
	return false
}

func isQuoted(v string) bool { return strings.HasPrefix(v, `"`) }

func (on objectName) get(key string) (string, bool) {
	for _, p := range on.props {
		if p.key == key {
			return p.value, true
		}
	}
	return "", false
}

// canonical is ObjectName.getCanonicalName: the domain, then the key
// properties sorted by key, then ",*" for a property pattern. Jolokia
// uses it for the keys of wildcard results and in its answers.
func (on objectName) canonical() string {
	return on.domain + ":" + on.canonicalProps()
}

// canonicalProps is getCanonicalKeyPropertyListString (with the pattern
// marker), the key of an MBean within its domain in list results.
func (on objectName) canonicalProps() string {
	ps := append([]prop(nil), on.props...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].key < ps[j].key })
	return joinProps(ps, on.propPattern)
}

// String is the name as it was built or written (getKeyPropertyListString
// order), what Jolokia answers with canonicalNaming=false.
func (on objectName) String() string { return on.domain + ":" + joinProps(on.props, on.propPattern) }

func joinProps(ps []prop, pattern bool) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(p.key)
		b.WriteByte('=')
		b.WriteString(p.value)
	}
	if pattern {
		if len(ps) > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('*')
	}
	return b.String()
}

// matches reports whether the (non-pattern) name n is matched by pattern
// on: the domain and each value by glob, the key properties regardless
// of order; without ",*" the two must have the same keys.
func (on objectName) matches(n objectName) bool {
	if !glob(on.domain, n.domain, false) {
		return false
	}
	if !on.propPattern && len(on.props) != len(n.props) {
		return false
	}
	for _, p := range on.props {
		v, ok := n.get(p.key)
		if !ok {
			return false
		}
		if isValuePattern(p.value) {
			if !glob(p.value, v, isQuoted(p.value)) {
				return false
			}
		} else if p.value != v {
			return false
		}
	}
	return true
}

// glob matches s against pattern, where * is any run of characters and ?
// any one character; with escapes (a quoted value), \ escapes the next.
// A domain has no escapes: JMX reads \ there as itself.
func glob(pattern, s string, escapes bool) bool {
	// Iterative matching with one backtrack point: linear enough for the
	// short names JMX has, and no recursion on hostile input.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			c := pattern[p]
			switch {
			case c == '*':
				star, mark = p, i
				p++
				continue
			case c == '?':
				p++
				i++
				continue
			case escapes && c == '\\' && p+1 < len(pattern) && pattern[p+1] == s[i]:
				p += 2
				i++
				continue
			case (!escapes || c != '\\') && c == s[i]:
				p++
				i++
				continue
			}
		}
		if star < 0 {
			return false
		}
		p = star + 1
		mark++
		i = mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// encodePart turns a broker, destination or client name into an
// ObjectName value as ActiveMQ's JMXSupport.encodeObjectNamePart does,
// so that it needs no quoting: : , ' " become _, ? &qe;, = &amp; and
// * &ast;.
func encodePart(s string) string {
	if !strings.ContainsAny(s, ":,'\"?=*\n") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch r {
		case ':', ',', '\'', '"':
			b.WriteByte('_')
		case '?':
			b.WriteString("&qe;")
		case '=':
			b.WriteString("&amp;")
		case '*':
			b.WriteString("&ast;")
		case '\n':
			b.WriteByte('_') // not a character an ObjectName value may hold
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
