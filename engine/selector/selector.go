package selector

import (
	"strconv"
	"strings"

	"wharf/engine/message"
)

// Limits on selector text. Selectors arrive from clients, so both are checked
// before any tree is built.
const (
	// MaxLength is the longest selector accepted, in bytes.
	MaxLength = 64 << 10
	// MaxDepth is the deepest nesting of parentheses and prefix operators
	// (NOT, unary + and -) accepted. The compiled tree is also kept below
	// 4*MaxDepth levels, counting a chain of ANDs or ORs once.
	MaxDepth = 100
)

// ConvertPrefix is the selector prefix by which ActiveMQ turns on
// ConvertStringExpressions (its STOMP transport adds it to every STOMP
// subscription's selector). ActiveMQ SelectorParser.parse strips it
// (case-sensitively) from any selector, and so does Parse.
const ConvertPrefix = "convert_string_expressions:"

// Options change how a selector is compiled.
type Options struct {
	// ConvertStringExpressions reproduces ActiveMQ's
	// "convert_string_expressions:" mode: when a comparison (=, <>, <, >,
	// <=, >=, BETWEEN) meets a string and a number, the string is parsed as
	// that number's Java type (Integer.valueOf, Double.valueOf, ...), and a
	// string compared with a boolean is Boolean.valueOf. A string that does
	// not parse makes the comparison FALSE. As in ActiveMQ, arithmetic, IN
	// and LIKE are not affected.
	ConvertStringExpressions bool
}

// Selector is a compiled message selector. It is immutable, and Matches is
// safe to call from any goroutine.
type Selector struct {
	src  string
	root node // nil: match everything
}

// Parse compiles a selector. An empty or all-blank selector matches every
// message. A selector starting with ConvertPrefix is compiled with
// ConvertStringExpressions on. Errors are *SyntaxError.
func Parse(s string) (*Selector, error) {
	return ParseWith(s, Options{})
}

// ParseWith compiles a selector with options. ConvertPrefix at the start of s
// also turns ConvertStringExpressions on.
func ParseWith(s string, o Options) (*Selector, error) {
	if len(s) > MaxLength {
		return nil, &SyntaxError{
			Msg:      "selector is " + strconv.Itoa(len(s)) + " bytes long; the limit is " + strconv.Itoa(MaxLength),
			Selector: s,
			kind:     ErrTooComplex,
		}
	}
	start := 0
	if strings.HasPrefix(s, ConvertPrefix) {
		start = len(ConvertPrefix)
		o.ConvertStringExpressions = true
	}
	// A blank selector is no selector: ActiveMQ clients and transports drop
	// it (Java String.trim, which removes every character <= ' ').
	if strings.TrimLeft(s[start:], "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ") == "" {
		return &Selector{src: s}, nil
	}
	toks, serr := lex(s, start)
	if serr != nil {
		serr.Selector = s
		return nil, serr
	}
	p := &parser{src: s, toks: toks, convert: o.ConvertStringExpressions}
	e, serr := p.parseSelector()
	if serr != nil {
		serr.Selector = s
		return nil, serr
	}
	return &Selector{src: s, root: e.n}, nil
}

// Matches reports whether m is selected. redeliveries is the delivery's
// redelivery counter, which JMSRedelivered and JMSXDeliveryCount read.
// UNKNOWN and FALSE both mean no match, and so does an evaluation ActiveMQ
// would abort with an exception (for example 1 + 'a'). A nil *Selector
// matches everything.
func (s *Selector) Matches(m *message.Message, redeliveries int32) bool {
	if s == nil || s.root == nil {
		return true
	}
	v := s.root.eval(m, redeliveries)
	return v.k == kBool && v.i != 0
}

// String returns the selector text as given to Parse.
func (s *Selector) String() string {
	if s == nil {
		return ""
	}
	return s.src
}
