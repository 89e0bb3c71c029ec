package config

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// resolver substitutes ${name} and ${name:default} placeholders, as
// Spring's PropertyPlaceholderConfigurer does in activemq.xml.
//
// A name is looked up, first hit wins, in:
//  1. vars, the caller's map (wharf fills it from -D name=value flags, the
//     equivalent of Java system properties);
//  2. the properties files named by the PropertyPlaceholderConfigurer bean;
//  3. the environment variable of exactly that name;
//  4. the environment variable named by upper-casing it and turning "." and
//     "-" into "_" (activemq.data -> ACTIVEMQ_DATA, the names bin/activemq
//     and Docker images use);
//  5. the values bin/activemq sets: activemq.base = ".", activemq.home =
//     ${activemq.base}, activemq.conf = ${activemq.base}/conf,
//     activemq.data = ${activemq.base}/data;
//  6. the ":default" text written in the placeholder.
//
// DEVIATION: Spring's default (SYSTEM_PROPERTIES_MODE_FALLBACK) consults the
// properties files before system properties; Wharf lets flags override
// files, which is what an operator typing -D expects. Resolved values are
// themselves resolved (Spring does too); a cycle is an error. An unresolved
// placeholder is an error that names it.
//
// A value a placeholder resolves to that is ENC(...) as a whole is
// decrypted by decrypt (Jasypt's EncryptablePropertyPlaceholderConfigurer
// decrypts the ENC() values of its properties files; Wharf does so for
// every source) and not resolved further.
type resolver struct {
	vars  map[string]string
	props map[string]string
	env   func(string) (string, bool)
	// decrypt turns the ciphertext of an ENC() value that ${name}
	// resolved to into its plain text; the loader sets it.
	decrypt func(ciphertext, name string) (string, error)
}

var errUnresolved = errors.New("unresolved placeholder")

func newResolver(vars map[string]string) *resolver {
	return &resolver{vars: vars, props: map[string]string{}, env: os.LookupEnv}
}

// builtin are bin/activemq's system properties, in terms of activemq.base.
var builtin = map[string]string{
	"activemq.base": ".",
	"activemq.home": "${activemq.base}",
	"activemq.conf": "${activemq.base}/conf",
	"activemq.data": "${activemq.base}/data",
}

func envName(name string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(name))
}

func (r *resolver) lookup(name string) (string, bool) {
	if v, ok := r.vars[name]; ok {
		return v, true
	}
	if v, ok := r.props[name]; ok {
		return v, true
	}
	if v, ok := r.env(name); ok {
		return v, true
	}
	if v, ok := r.env(envName(name)); ok {
		return v, true
	}
	v, ok := builtin[name]
	return v, ok
}

// resolve replaces every placeholder in s.
func (r *resolver) resolve(s string) (string, error) {
	return r.resolveDepth(s, nil)
}

func (r *resolver) resolveDepth(s string, seen []string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := matchingBrace(s, i+2)
		if end < 0 {
			return "", fmt.Errorf("unterminated placeholder in %q", s)
		}
		inner := s[i+2 : end]
		// Nested placeholders in the name, e.g. ${a.${env}}.
		inner, err := r.resolveDepth(inner, seen)
		if err != nil {
			return "", err
		}
		name, def, hasDef := strings.Cut(inner, ":")
		for _, n := range seen {
			if n == name {
				return "", fmt.Errorf("placeholder ${%s} refers to itself", name)
			}
		}
		v, ok := r.lookup(name)
		if !ok {
			if !hasDef {
				return "", fmt.Errorf("%w ${%s}", errUnresolved, name)
			}
			v = def
		}
		if ct, isEnc := encValue(v); isEnc && r.decrypt != nil {
			v, err = r.decrypt(ct, name)
		} else {
			v, err = r.resolveDepth(v, append(seen, name))
		}
		if err != nil {
			return "", err
		}
		b.WriteString(v)
		s = s[end+1:]
	}
}

// encValue reports whether s is an ENC(...) value as a whole (spaces
// around it allowed) and returns the text between the parentheses.
func encValue(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if len(s) < len("ENC()") || !strings.HasPrefix(s, "ENC(") || !strings.HasSuffix(s, ")") {
		return "", false
	}
	return strings.TrimSpace(s[len("ENC(") : len(s)-1]), true
}

// matchingBrace returns the index of the "}" closing a placeholder whose
// body starts at from, allowing nested ${...}.
func matchingBrace(s string, from int) int {
	depth := 0
	for i := from; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// readProperties parses a Java .properties file (java.util.Properties.load):
// "#" and "!" comments, "key=value", "key:value" or "key value", backslash
// line continuations and the \t \n \r \f \uXXXX escapes. The file is read as
// UTF-8 (Java 9+ reads ISO-8859-1, which agrees for ASCII).
func readProperties(r io.Reader, into map[string]string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var logical strings.Builder
	cont := false
	for sc.Scan() {
		line := sc.Text()
		if cont {
			line = strings.TrimLeft(line, " \t\f")
		} else {
			line = strings.TrimLeft(line, " \t\f")
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
		}
		// An odd number of trailing backslashes continues the line.
		n := 0
		for n < len(line) && line[len(line)-1-n] == '\\' {
			n++
		}
		if n%2 == 1 {
			logical.WriteString(line[:len(line)-1])
			cont = true
			continue
		}
		logical.WriteString(line)
		cont = false
		k, v := splitProperty(logical.String())
		logical.Reset()
		into[unescapeProperty(k)] = unescapeProperty(v)
	}
	if cont {
		k, v := splitProperty(logical.String())
		into[unescapeProperty(k)] = unescapeProperty(v)
	}
	return sc.Err()
}

func splitProperty(s string) (key, value string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i >= len(s) {
		return s, ""
	}
	key, rest := s[:i], s[i:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

func unescapeProperty(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+4 < len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
					var buf [4]byte
					b.Write(buf[:utf8.EncodeRune(buf[:], rune(r))])
					i += 4
					continue
				}
			}
			b.WriteByte('u')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// propertiesPath turns a Spring resource location into a file path:
// "file:" prefixes are stripped and relative paths are relative to the
// working directory (as Spring's file: URLs are). Other schemes
// (classpath:, http:) cannot be read by Wharf.
func propertiesPath(loc string) (string, error) {
	loc = strings.TrimSpace(loc)
	switch {
	case strings.HasPrefix(loc, "file://"):
		return loc[len("file://"):], nil
	case strings.HasPrefix(loc, "file:"):
		return loc[len("file:"):], nil
	case strings.HasPrefix(loc, "classpath:"), strings.Contains(loc, "://"):
		return "", fmt.Errorf("resource %q: only file: locations can be read by Wharf", loc)
	}
	return filepath.Clean(loc), nil
}
