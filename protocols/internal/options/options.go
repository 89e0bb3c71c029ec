// Package options holds the value parsers the protocol adapters share for
// their transport connector options (stomp://...?wireFormat.maxFrameSize=N).
package options

import (
	"errors"
	"strconv"
	"strings"
)

// errNotPositive is what PositiveInt says of anything else; the caller
// names the option and the value.
var errNotPositive = errors.New("not a positive integer")

// PositiveInt parses a count, size or millisecond value that must be above 0.
func PositiveInt(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		return 0, errNotPositive
	}
	return n, nil
}
