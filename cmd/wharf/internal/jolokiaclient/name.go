package jolokiaclient

import (
	"fmt"
	"strings"
)

// Name is a parsed JMX ObjectName: a domain and its key properties, with
// quoted values unquoted.
type Name struct {
	Domain string
	Props  map[string]string
}

// ParseName parses an ObjectName as a Jolokia server writes it
// (domain:key=value,key="quoted, value").
func ParseName(s string) (Name, error) {
	domain, rest, ok := strings.Cut(s, ":")
	if !ok {
		return Name{}, fmt.Errorf("ObjectName %q has no domain", s)
	}
	n := Name{Domain: domain, Props: map[string]string{}}
	for rest != "" {
		key, after, ok := strings.Cut(rest, "=")
		if !ok {
			return Name{}, fmt.Errorf("ObjectName %q: property %q has no value", s, rest)
		}
		var val string
		if strings.HasPrefix(after, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(after) && after[i] != '"'; i++ {
				if after[i] == '\\' && i+1 < len(after) {
					i++
				}
				b.WriteByte(after[i])
			}
			if i >= len(after) {
				return Name{}, fmt.Errorf("ObjectName %q: unterminated quoted value", s)
			}
			val, rest = b.String(), strings.TrimPrefix(after[i+1:], ",")
		} else {
			val, rest, _ = strings.Cut(after, ",")
		}
		n.Props[key] = val
	}
	return n, nil
}

// EncodePart is a destination or client name as ActiveMQ's
// JMXSupport.encodeObjectNamePart writes it in an ObjectName (: , ' "
// become _, ? &qe;, = &amp;, * &ast;), which is how the server names its
// beans. In a pattern the wildcards * and ? are kept.
func EncodePart(s string, pattern bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ':' || r == ',' || r == '\'' || r == '"' || r == '\n':
			b.WriteByte('_')
		case r == '=':
			b.WriteString("&amp;")
		case r == '?' && !pattern:
			b.WriteString("&qe;")
		case r == '*' && !pattern:
			b.WriteString("&ast;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
