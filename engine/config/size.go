package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseSize parses a size as ActiveMQ's XBeanByteConverterUtil (used by
// MemoryPropertyEditor for every size attribute) does: optional whitespace,
// decimal digits, optional whitespace, an optional unit, optional
// whitespace. Units are case-insensitive and 1024-based: none or "b"
// (bytes), "k"/"kb", "m"/"mb", "g"/"gb". There is no "t"/"tb", no sign, no
// fraction: "2 tb", "-1", "1.5gb" and "" are not sizes. So "32mb",
// "1024kb", "256 MB", "512m", "1G", "10000000" and "1 gb" are all accepted.
//
// DEVIATION: Java multiplies without overflow checks; a size that does not
// fit in an int64 is ErrSizeOverflow here rather than a wrapped value.
func ParseSize(s string) (int64, error) {
	t := strings.Trim(s, javaSpace)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: %q", ErrNotSize, s)
	}
	digits, unit := t[:i], strings.ToLower(strings.TrimLeft(t[i:], javaSpace))
	shift := 0
	switch unit {
	case "", "b":
	case "k", "kb":
		shift = 10
	case "m", "mb":
		shift = 20
	case "g", "gb":
		shift = 30
	default:
		return 0, fmt.Errorf("%w: %q", ErrNotSize, s)
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%w: %q", ErrSizeOverflow, s)
	}
	return n << shift, nil
}

// javaSpace is the set Java's regex \s matches: [ \t\n\x0B\f\r].
const javaSpace = " \t\n\v\f\r"

// parseBool accepts "true" and "false" in any case, as Spring's
// CustomBooleanEditor does. DEVIATION: that editor also takes on/off,
// yes/no and 1/0; Wharf refuses them so a typo cannot pass as a boolean.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// parseMillis parses an XML duration attribute: a decimal count of
// milliseconds, as ActiveMQ's long setters take it.
func parseMillis(s string) (time.Duration, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n > math.MaxInt64/int64(time.Millisecond) || n < math.MinInt64/int64(time.Millisecond) {
		return 0, false
	}
	return time.Duration(n) * time.Millisecond, true
}

// parseInt parses a decimal int as Java's Integer.parseInt would (with
// surrounding whitespace trimmed, as Spring does).
func parseInt(s string) (int, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

// formatSize writes bytes in the largest exact binary unit, for messages.
func formatSize(n int64) string {
	switch {
	case n != 0 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n != 0 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n != 0 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}
