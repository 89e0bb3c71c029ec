package selector

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokType is the kind of a lexical token. The token set is the one in
// ActiveMQ SelectorParser.jj.
type tokType uint8

const (
	tEOF tokType = iota
	tIdent
	tString
	tDecimal
	tHex
	tOctal
	tFloat
	tLParen
	tRParen
	tComma
	tEq
	tNe
	tLt
	tGt
	tLe
	tGe
	tPlus
	tMinus
	tStar
	tSlash
	tPercent
	// Reserved words (case-insensitive).
	tNot
	tAnd
	tOr
	tBetween
	tLike
	tEscape
	tIn
	tIs
	tTrue
	tFalse
	tNull
	tXPath
	tXQuery
)

var keywords = [...]struct {
	word string
	typ  tokType
}{
	{"NOT", tNot}, {"AND", tAnd}, {"OR", tOr}, {"BETWEEN", tBetween},
	{"LIKE", tLike}, {"ESCAPE", tEscape}, {"IN", tIn}, {"IS", tIs},
	{"TRUE", tTrue}, {"FALSE", tFalse}, {"NULL", tNull},
	{"XPATH", tXPath}, {"XQUERY", tXQuery},
}

// token is one lexical token; its text is src[off:end].
type token struct {
	typ      tokType
	off, end int // byte offsets into the full selector text
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// lex splits src[start:] into tokens, ending with tEOF.
//
// It follows ActiveMQ SelectorParser.jj: JavaCC picks the longest match, so
// "0129" is the octal literal "012" followed by the decimal "9" (and then a
// grammar error), and "5L" is one decimal literal. Identifiers are ASCII only
// ([a-z_$][a-z0-9_$]* ignoring case), as the grammar's ID token is.
// Whitespace is space, tab, CR, LF and form feed. "--" starts a comment only
// when a line break follows somewhere; otherwise it is two minus signs.
// "/*" starts a comment only when "*/" follows; otherwise it is a slash.
func lex(src string, start int) ([]token, *SyntaxError) {
	toks := make([]token, 0, 16)
	s := src
	i := start
	n := len(s)
	emit := func(t tokType, off, end int) { toks = append(toks, token{typ: t, off: off, end: end}) }
	// Whether a comment is terminated is decided from the last line break
	// and the last "*/", found once: searching forward at every "--" or "/*"
	// would make a run of them quadratic.
	lastBreak := strings.LastIndexAny(s, "\n\r")
	lastClose := strings.LastIndex(s, "*/")
	for i < n {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < n && s[i+1] == '-' && lastBreak >= i+2:
			i += 2 + strings.IndexAny(s[i+2:], "\n\r") + 1
		case c == '/' && i+1 < n && s[i+1] == '*' && lastClose >= i+2:
			i += 2 + strings.Index(s[i+2:], "*/") + 2
		case isIdentStart(c):
			j := i + 1
			for j < n && (isIdentStart(s[j]) || isDigit(s[j])) {
				j++
			}
			t := tIdent
			if j-i <= 7 {
				for _, k := range keywords {
					if strings.EqualFold(s[i:j], k.word) {
						t = k.typ
						break
					}
				}
			}
			emit(t, i, j)
			i = j
		case isDigit(c) || c == '.' && i+1 < n && isDigit(s[i+1]):
			t, j := lexNumber(s, i)
			emit(t, i, j)
			i = j
		case c == '\'':
			j := i + 1
			closed := false
			for j < n {
				if s[j] == '\'' {
					if j+1 < n && s[j+1] == '\'' {
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				j++
			}
			if !closed {
				return nil, &SyntaxError{Pos: runePos(src, i), Msg: "unterminated string literal"}
			}
			emit(tString, i, j)
			i = j
		default:
			t, w := tEOF, 1
			switch c {
			case '(':
				t = tLParen
			case ')':
				t = tRParen
			case ',':
				t = tComma
			case '=':
				t = tEq
			case '+':
				t = tPlus
			case '-':
				t = tMinus
			case '*':
				t = tStar
			case '/':
				t = tSlash
			case '%':
				t = tPercent
			case '<':
				t = tLt
				if i+1 < n && s[i+1] == '>' {
					t, w = tNe, 2
				} else if i+1 < n && s[i+1] == '=' {
					t, w = tLe, 2
				}
			case '>':
				t = tGt
				if i+1 < n && s[i+1] == '=' {
					t, w = tGe, 2
				}
			}
			if t == tEOF {
				r, _ := utf8.DecodeRuneInString(s[i:])
				return nil, &SyntaxError{Pos: runePos(src, i), Msg: "unexpected character " + strconv.QuoteRune(r)}
			}
			emit(t, i, i+w)
			i += w
		}
	}
	emit(tEOF, n, n)
	return toks, nil
}

// lexNumber scans the numeric literal starting at s[i] (a digit, or '.'
// followed by a digit) and returns its type and end.
func lexNumber(s string, i int) (tokType, int) {
	n := len(s)
	if s[i] == '.' {
		j := i + 1
		for j < n && isDigit(s[j]) {
			j++
		}
		return tFloat, scanExponent(s, j)
	}
	j := i
	for j < n && isDigit(s[j]) {
		j++
	}
	if j < n && s[j] == '.' {
		j++
		for j < n && isDigit(s[j]) {
			j++
		}
		return tFloat, scanExponent(s, j)
	}
	if e := scanExponent(s, j); e > j {
		return tFloat, e
	}
	if s[i] == '0' {
		if j == i+1 && j+1 < n && (s[j] == 'x' || s[j] == 'X') && isHexDigit(s[j+1]) {
			k := j + 1
			for k < n && isHexDigit(s[k]) {
				k++
			}
			return tHex, k
		}
		k := i + 1
		for k < j && s[k] >= '0' && s[k] <= '7' {
			k++
		}
		return tOctal, k
	}
	if j < n && (s[j] == 'l' || s[j] == 'L') {
		j++
	}
	return tDecimal, j
}

// scanExponent returns the end of an exponent ("E" [+-] digits) at s[j], or
// j when there is none.
func scanExponent(s string, j int) int {
	n := len(s)
	if j >= n || s[j] != 'e' && s[j] != 'E' {
		return j
	}
	k := j + 1
	if k < n && (s[k] == '+' || s[k] == '-') {
		k++
	}
	if k >= n || !isDigit(s[k]) {
		return j
	}
	for k < n && isDigit(s[k]) {
		k++
	}
	return k
}

// runePos converts a byte offset into a 1-based character position.
func runePos(src string, off int) int {
	if off > len(src) {
		off = len(src)
	}
	return utf8.RuneCountInString(src[:off]) + 1
}

// unquote decodes a string literal token's text, undoubling quotes.
func unquote(text string) string {
	body := text[1 : len(text)-1]
	if !strings.Contains(body, "''") {
		return body
	}
	return strings.ReplaceAll(body, "''", "'")
}
