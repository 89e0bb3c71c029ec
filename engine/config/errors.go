package config

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, wrapped by the parse helpers so callers can use errors.Is.
var (
	// ErrNotSize is returned by ParseSize for a string that is not an
	// ActiveMQ size.
	ErrNotSize = errors.New("config: not a size")
	// ErrSizeOverflow is returned by ParseSize when the size does not fit
	// in an int64.
	ErrSizeOverflow = errors.New("config: size overflows int64")
)

// Problem is one thing wrong with a configuration file. File, Line and Col
// locate it (Line and Col are 1-based; 0 when unknown); Path names the
// setting in the native (YAML) spelling, e.g. "transport_connectors[1].uri",
// whichever form the file was written in.
type Problem struct {
	File string
	Line int
	Col  int
	Path string
	Msg  string // names the element or key and quotes the offending value
}

// String formats the problem as "file:line:col: msg".
func (p Problem) String() string {
	switch {
	case p.Line > 0 && p.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Col, p.Msg)
	case p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
	case p.File != "":
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	}
	return p.Msg
}

// Error is every problem found while loading one configuration. Loading
// never stops at the first problem: parse, defaults and validation all run
// and the result fails once with the whole list.
type Error struct {
	Problems []Problem
}

// Error lists the problems one per line.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}
