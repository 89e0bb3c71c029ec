package selector

import (
	"errors"
	"strconv"
)

// Sentinel errors. Every error Parse returns is a *SyntaxError that wraps one
// of them, so callers can test with errors.Is and read the position with
// errors.As.
var (
	// ErrSyntax is wrapped by every *SyntaxError about the selector's text:
	// lexical and grammar errors and the type checks ActiveMQ makes while it
	// builds the expression tree.
	ErrSyntax = errors.New("selector: syntax error")
	// ErrTooComplex is wrapped by a *SyntaxError when the selector exceeds
	// MaxLength or MaxDepth.
	ErrTooComplex = errors.New("selector: too complex")
	// ErrUnsupported is wrapped by a *SyntaxError for ActiveMQ extensions
	// Wharf does not implement (XPATH, XQUERY, function calls).
	ErrUnsupported = errors.New("selector: unsupported construct")
)

// SyntaxError reports a selector that cannot be compiled.
type SyntaxError struct {
	// Pos is the 1-based character (rune) offset into Selector where the
	// problem starts; 0 when the problem is the selector as a whole (its
	// length).
	Pos int
	// Msg says what was expected and what was found.
	Msg string
	// Selector is the text given to Parse.
	Selector string

	kind error // ErrSyntax, ErrTooComplex or ErrUnsupported
}

// Error reads like `selector: syntax error at position 12: expected ')' but
// found "AND"`.
func (e *SyntaxError) Error() string {
	if e.Pos <= 0 {
		return "selector: syntax error: " + e.Msg
	}
	return "selector: syntax error at position " + strconv.Itoa(e.Pos) + ": " + e.Msg
}

// Unwrap returns the sentinel the error belongs to.
func (e *SyntaxError) Unwrap() error {
	if e.kind == nil {
		return ErrSyntax
	}
	return e.kind
}
