package security

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// maxLoginConfigBytes bounds login.config: a handful of entries.
const maxLoginConfigBytes = 1 << 20

// controlFlag is a JAAS LoginModuleControlFlag.
type controlFlag uint8

// The JAAS control flags (javax.security.auth.login.Configuration).
const (
	flagRequired controlFlag = iota
	flagRequisite
	flagSufficient
	flagOptional
)

func (f controlFlag) String() string {
	switch f {
	case flagRequisite:
		return "requisite"
	case flagSufficient:
		return "sufficient"
	case flagOptional:
		return "optional"
	}
	return "required"
}

// loginConfig is a parsed login.config: its entries by name.
type loginConfig struct {
	file    string
	entries map[string]*loginEntry
}

// loginEntry is one `name { ... };` of login.config.
type loginEntry struct {
	name    string
	line    int
	modules []moduleEntry
}

// moduleEntry is one `class flag key=value ... ;`.
type moduleEntry struct {
	class   string
	flag    controlFlag
	options map[string]string
	line    int
}

// Token kinds of the login.config tokenizer: Java's StreamTokenizer as
// sun.security.provider.ConfigFile sets it up.
const (
	tokEOF = -1 - iota
	tokWord
	tokNumber
	tokQuoted
)

type lcToken struct {
	kind int // tokEOF, tokWord, tokNumber, tokQuoted, or an ordinary character
	sval string
	line int
}

type lcLexer struct {
	s    string
	i    int
	line int
}

// StreamTokenizer's default character classes, with ConfigFile's changes:
// '$', '_', '-' and '*' are word characters; digits and '.' are numeric
// (parseNumbers is on by default) and may continue a word; '"' and '\” are
// quotes; '/' starts a comment (and // and /* */ are comments); characters
// 0-32 are blanks; 160-255 and everything above 255 are word characters.
func lcAlpha(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '$' || r == '_' || r == '-' || r == '*' || r >= 160
}

func lcDigit(r rune) bool { return r >= '0' && r <= '9' || r == '.' || r == '-' }

func (l *lcLexer) peekRune(off int) rune {
	if l.i+off >= len(l.s) {
		return -1
	}
	r, _ := utf8.DecodeRuneInString(l.s[l.i+off:])
	return r
}

func (l *lcLexer) next() lcToken {
	for {
		if l.i >= len(l.s) {
			return lcToken{kind: tokEOF, line: l.line}
		}
		r, n := utf8.DecodeRuneInString(l.s[l.i:])
		switch {
		case r == '\n':
			l.line++
			l.i += n
			continue
		case r == '\r':
			l.line++
			l.i += n
			if l.i < len(l.s) && l.s[l.i] == '\n' {
				l.i++
			}
			continue
		case r >= 0 && r <= ' ':
			l.i += n
			continue
		case r == '/':
			if l.peekRune(1) == '*' {
				l.i += 2
				end := strings.Index(l.s[l.i:], "*/")
				if end < 0 {
					l.line += strings.Count(l.s[l.i:], "\n")
					l.i = len(l.s)
				} else {
					l.line += strings.Count(l.s[l.i:l.i+end], "\n")
					l.i += end + 2
				}
				continue
			}
			// "//" and a lone '/' (the comment character) both
			// comment out the rest of the line.
			for l.i < len(l.s) && l.s[l.i] != '\n' && l.s[l.i] != '\r' {
				l.i++
			}
			continue
		case r == '"' || r == '\'':
			return l.quoted(r)
		case r == '-' && !(l.peekRune(1) == '.' || l.peekRune(1) >= '0' && l.peekRune(1) <= '9'):
			// StreamTokenizer checks numbers before words: a '-' not
			// followed by a digit is an ordinary character.
			l.i += n
			return lcToken{kind: '-', line: l.line}
		case r >= '0' && r <= '9' || r == '.' || r == '-':
			start := l.i
			l.i += n
			dot := r == '.'
			for l.i < len(l.s) {
				c := l.s[l.i]
				if c >= '0' && c <= '9' || (c == '.' && !dot) {
					dot = dot || c == '.'
					l.i++
					continue
				}
				break
			}
			return lcToken{kind: tokNumber, sval: l.s[start:l.i], line: l.line}
		case lcAlpha(r):
			start := l.i
			l.i += n
			for l.i < len(l.s) {
				c, m := utf8.DecodeRuneInString(l.s[l.i:])
				if !lcAlpha(c) && !lcDigit(c) {
					break
				}
				l.i += m
			}
			return lcToken{kind: tokWord, sval: l.s[start:l.i], line: l.line}
		default:
			l.i += n
			return lcToken{kind: int(r), line: l.line}
		}
	}
}

// quoted reads a quoted string as StreamTokenizer does: C escapes (\a \b \f
// \n \r \t \v, octal up to \377, any other character stands for itself);
// the string ends at the closing quote or, unterminated, at the end of the
// line.
func (l *lcLexer) quoted(q rune) lcToken {
	line := l.line
	l.i++ // the quote
	var sb strings.Builder
	for l.i < len(l.s) {
		r, n := utf8.DecodeRuneInString(l.s[l.i:])
		if r == q {
			l.i += n
			break
		}
		if r == '\n' || r == '\r' {
			break
		}
		l.i += n
		if r != '\\' {
			sb.WriteRune(r)
			continue
		}
		if l.i >= len(l.s) {
			break
		}
		r, n = utf8.DecodeRuneInString(l.s[l.i:])
		l.i += n
		switch r {
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		default:
			if r >= '0' && r <= '7' {
				v := r - '0'
				maxDigits := 2
				if r > '3' {
					maxDigits = 1
				}
				for k := 0; k < maxDigits && l.i < len(l.s) && l.s[l.i] >= '0' && l.s[l.i] <= '7'; k++ {
					v = v*8 + rune(l.s[l.i]-'0')
					l.i++
				}
				sb.WriteRune(v)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	if q != '"' {
		// ConfigFile accepts only '"' strings; a '\'' one is the
		// token '\'' (with its text), which no rule accepts.
		return lcToken{kind: int(q), sval: sb.String(), line: line}
	}
	return lcToken{kind: tokQuoted, sval: sb.String(), line: line}
}

func (t lcToken) String() string {
	switch t.kind {
	case tokEOF:
		return "end of file"
	case tokWord, tokQuoted, tokNumber, '\'':
		return t.sval
	}
	return string(rune(t.kind))
}

type lcParser struct {
	file   string
	lex    lcLexer
	tok    lcToken
	expand func(prop string) (string, bool)
}

func (p *lcParser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %w: %s", p.file, line, ErrLoginConfigSyntax, fmt.Sprintf(format, args...))
}

func (p *lcParser) advance() { p.tok = p.lex.next() }

// matchValue accepts a word or a quoted string, as ConfigFile.match does
// for the module class, flag, option key and option value.
func (p *lcParser) matchValue(what string) (string, int, error) {
	t := p.tok
	if t.kind == tokWord || t.kind == tokQuoted {
		p.advance()
		return t.sval, t.line, nil
	}
	if t.kind == tokEOF {
		return "", t.line, p.errorf(t.line, "expected [%s], read [end of file]", what)
	}
	return "", t.line, p.errorf(t.line, "expected [%s], found [%s]", what, t)
}

func (p *lcParser) matchChar(c rune) error {
	t := p.tok
	if t.kind == int(c) {
		p.advance()
		return nil
	}
	if t.kind == tokEOF {
		return p.errorf(t.line, "expected [%c], read [end of file]", c)
	}
	return p.errorf(t.line, "expected [%c], found [%s]", c, t)
}

// parseLoginConfig parses a login.config in the syntax of Java's default
// javax.security.auth.login.Configuration (sun.security.provider.ConfigFile):
//
//	Name {
//	    ModuleClass Flag key=value key="value" ... ;
//	    ...
//	};
//
// Names, classes and options are words or "quoted strings"; the flag is
// required, requisite, sufficient or optional in any case; // and /* */
// comment. Option values get ${prop} expansion (policy.expandProperties is
// true by default): expand returns the system property prop; an unknown one
// is an error, as Java's "unable to expand property", and so is a value
// that expands to "". ${/} is the file separator. A name defined twice is an
// error, as in Java.
func parseLoginConfig(file string, b []byte, expand func(string) (string, bool)) (*loginConfig, error) {
	if len(b) > maxLoginConfigBytes {
		return nil, fmt.Errorf("%s: %w: %d bytes (limit %d)", file, ErrLoginConfigTooLarge, len(b), maxLoginConfigBytes)
	}
	p := &lcParser{file: file, lex: lcLexer{s: string(b), line: 1}, expand: expand}
	p.advance()
	cfg := &loginConfig{file: file, entries: map[string]*loginEntry{}}
	for p.tok.kind != tokEOF {
		e, err := p.entry()
		if err != nil {
			return nil, err
		}
		if prev, dup := cfg.entries[e.name]; dup {
			return nil, p.errorf(e.line, "can not specify multiple entries for %s (first at line %d)", e.name, prev.line)
		}
		cfg.entries[e.name] = e
	}
	return cfg, nil
}

func (p *lcParser) entry() (*loginEntry, error) {
	name, line, err := p.matchValue("application name")
	if err != nil {
		return nil, err
	}
	e := &loginEntry{name: name, line: line}
	if err := p.matchChar('{'); err != nil {
		return nil, err
	}
	for p.tok.kind != '}' {
		class, mline, err := p.matchValue("module class name")
		if err != nil {
			return nil, err
		}
		sflag, fline, err := p.matchValue("controlFlag")
		if err != nil {
			return nil, err
		}
		var flag controlFlag
		switch strings.ToUpper(sflag) {
		case "REQUIRED":
			flag = flagRequired
		case "REQUISITE":
			flag = flagRequisite
		case "SUFFICIENT":
			flag = flagSufficient
		case "OPTIONAL":
			flag = flagOptional
		default:
			return nil, p.errorf(fline, "invalid control flag, %s", sflag)
		}
		m := moduleEntry{class: class, flag: flag, options: map[string]string{}, line: mline}
		for p.tok.kind != ';' {
			key, _, err := p.matchValue("option key")
			if err != nil {
				return nil, err
			}
			if err := p.matchChar('='); err != nil {
				return nil, err
			}
			val, vline, err := p.matchValue("option value")
			if err != nil {
				return nil, err
			}
			val, err = p.expandValue(val, vline)
			if err != nil {
				return nil, err
			}
			m.options[key] = val
		}
		p.advance() // ';'
		e.modules = append(e.modules, m)
	}
	p.advance() // '}'
	if err := p.matchChar(';'); err != nil {
		return nil, err
	}
	return e, nil
}

// expandValue is sun.security.util.PropertyExpander.expand as ConfigFile
// calls it.
func (p *lcParser) expandValue(v string, line int) (string, error) {
	if v == "" || !strings.Contains(v, "${") {
		return v, nil
	}
	var sb strings.Builder
	rest := v
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			sb.WriteString(rest)
			break
		}
		sb.WriteString(rest[:i])
		rest = rest[i:]
		if strings.HasPrefix(rest, "${{") {
			// ${{...}} is left as is (PropertyExpander passes it
			// through for the policy file's own use).
			end := strings.Index(rest, "}}")
			if end < 0 {
				sb.WriteString(rest)
				break
			}
			sb.WriteString(rest[:end+2])
			rest = rest[end+2:]
			continue
		}
		end := strings.IndexByte(rest, '}')
		if end < 0 {
			// Unterminated: the rest is copied as is.
			sb.WriteString(rest)
			break
		}
		prop := rest[2:end]
		rest = rest[end+1:]
		if prop == "/" {
			sb.WriteByte('/')
			continue
		}
		val, ok := "", false
		if p.expand != nil {
			val, ok = p.expand(prop)
		}
		if !ok {
			return "", p.errorf(line, "unable to expand property %s", prop)
		}
		sb.WriteString(val)
	}
	if sb.Len() == 0 {
		return "", p.errorf(line, "system property [%s] expanded to empty value", v)
	}
	return sb.String(), nil
}
