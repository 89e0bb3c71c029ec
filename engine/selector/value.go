package selector

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"wharf/engine/message"
)

// kind tags a val. The numeric kinds keep the Java class the value would
// have in ActiveMQ, because promotion and string conversion depend on it.
type kind uint8

const (
	kNull   kind = iota // SQL NULL: a missing property, or UNKNOWN
	kBool               // i is 0 or 1
	kByte               // i
	kShort              // i
	kInt                // i
	kLong               // i
	kFloat              // f holds the float32 value exactly
	kDouble             // f
	kString             // s
	kOther              // bytes, char: compares with nothing
	// kAbort stands for a Java exception thrown while ActiveMQ evaluates the
	// selector (for example 1 + 'a'): evaluation stops and the message does
	// not match. It propagates through every operator, so NOT and OR cannot
	// turn it into a match.
	kAbort
)

// val is the evaluator's tagged value. It is passed by value, so evaluation
// does not box or allocate (string concatenation aside).
type val struct {
	k kind
	i int64
	f float64
	s string
}

var (
	vNull  = val{}
	vTrue  = val{k: kBool, i: 1}
	vFalse = val{k: kBool}
	vAbort = val{k: kAbort}
)

func boolVal(b bool) val {
	if b {
		return vTrue
	}
	return vFalse
}

func isNum(k kind) bool   { return k >= kByte && k <= kDouble }
func isFloat(k kind) bool { return k == kFloat || k == kDouble }

// fromValue converts a message property or header into a val.
func fromValue(v message.Value) val {
	switch v.Kind {
	case message.Bool:
		return boolVal(v.Bool())
	case message.Byte:
		return val{k: kByte, i: v.Int()}
	case message.Short:
		return val{k: kShort, i: v.Int()}
	case message.Int:
		return val{k: kInt, i: v.Int()}
	case message.Long:
		return val{k: kLong, i: v.Int()}
	case message.Float:
		return val{k: kFloat, f: v.Float()}
	case message.Double:
		return val{k: kDouble, f: v.Float()}
	case message.String:
		return val{k: kString, s: v.Str()}
	case message.Null:
		return vNull
	}
	return val{k: kOther}
}

// asF64 widens a numeric val to float64 as Java's Number.doubleValue does.
func asF64(v val) float64 {
	if isFloat(v.k) {
		return v.f
	}
	return float64(v.i)
}

// asF32 narrows a numeric val to float32 as Java's Number.floatValue does
// (one rounding from long, not two through double).
func asF32(v val) float32 {
	if isFloat(v.k) {
		return float32(v.f)
	}
	return float32(v.i)
}

// compare orders l and r the way ActiveMQ ComparisonExpression.compare does,
// after the promotion it applies. ok is false when the values cannot be
// compared (a type mismatch), which ActiveMQ turns into FALSE, not UNKNOWN:
// JMS 1.1 §3.8.1.2 "If the comparison of non-like type values is attempted,
// the value of the operation is false."
//
// Numbers: any double makes it a double comparison, else any float a float
// comparison, else a long comparison, all with Java's compareTo ordering (NaN
// equals NaN and is above +Inf, -0.0 is below 0.0).
// DEVIATION: ActiveMQ's promotion table is one-sided. It returns FALSE for
// int-vs-byte, int-vs-short, long-vs-byte/short and float-vs-byte/short when
// the wider type is on the left (so `5 < byteProp` is always false), and
// throws ClassCastException for double-vs-float with the double on the left.
// Wharf promotes both ways.
//
// Strings compare with strings in UTF-16 order (Java String.compareTo);
// booleans with booleans (false < true). The parser keeps string and boolean
// literals away from <, >, <=, >=, as ActiveMQ does, but two properties (or a
// property and a concatenation) may be ordered.
//
// With convert (ActiveMQ's "convert_string_expressions:"), a string compared
// with a number is parsed as that number's type with Java's valueOf (a
// failure makes the comparison FALSE), and a string compared with a boolean
// is Boolean.valueOf. DEVIATION: ActiveMQ throws ClassCastException for
// boolean-vs-string with the boolean on the left; Wharf converts both ways.
func compare(l, r val, convert bool) (c int, ok bool) {
	switch {
	case isNum(l.k) && isNum(r.k):
		switch {
		case l.k == kDouble || r.k == kDouble:
			return javaCompareDouble(asF64(l), asF64(r)), true
		case l.k == kFloat || r.k == kFloat:
			return javaCompareFloat(asF32(l), asF32(r)), true
		}
		return cmpInt(l.i, r.i), true
	case l.k == kString && r.k == kString:
		return compareJavaStrings(l.s, r.s), true
	case l.k == kBool && r.k == kBool:
		return cmpInt(l.i, r.i), true
	case convert && l.k == kString:
		nv, ok := convertString(l.s, r.k)
		if !ok {
			return 0, false
		}
		return compare(nv, r, false)
	case convert && r.k == kString:
		nv, ok := convertString(r.s, l.k)
		if !ok {
			return 0, false
		}
		return compare(l, nv, false)
	}
	return 0, false
}

// equal is compare()==0 with a fast path for the common string case.
func equal(l, r val, convert bool) bool {
	if l.k == kString && r.k == kString {
		return l.s == r.s
	}
	c, ok := compare(l, r, convert)
	return ok && c == 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// javaCompareDouble is Java's Double.compare.
func javaCompareDouble(a, b float64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	ab, bb := math.Float64bits(a), math.Float64bits(b)
	if a != a {
		ab = 0x7ff8000000000000
	}
	if b != b {
		bb = 0x7ff8000000000000
	}
	return cmpInt(int64(ab), int64(bb))
}

// javaCompareFloat is Java's Float.compare.
func javaCompareFloat(a, b float32) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	ab, bb := math.Float32bits(a), math.Float32bits(b)
	if a != a {
		ab = 0x7fc00000
	}
	if b != b {
		bb = 0x7fc00000
	}
	return cmpInt(int64(int32(ab)), int64(int32(bb)))
}

// compareJavaStrings orders strings by UTF-16 code units, as Java's
// String.compareTo does. That differs from Go's byte order only when a
// supplementary character meets one in U+E000..U+FFFF.
func compareJavaStrings(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return cmpInt(int64(len(a)), int64(len(b)))
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	return cmpInt(utf16Key(ra), utf16Key(rb))
}

// utf16Key maps a rune to a key that sorts as its UTF-16 encoding does.
func utf16Key(r rune) int64 {
	if r < 0x10000 {
		return int64(r) << 16
	}
	r -= 0x10000
	hi := 0xD800 + (r >> 10)
	lo := 0xDC00 + (r & 0x3FF)
	return int64(hi)<<16 | int64(lo)
}

// convertString parses s as a value of kind target the way Java's
// Byte/Short/Integer/Long/Float/Double/Boolean.valueOf do.
func convertString(s string, target kind) (val, bool) {
	switch target {
	case kBool:
		return boolVal(strings.EqualFold(s, "true")), true
	case kByte, kShort, kInt, kLong:
		bits := [...]int{kByte: 8, kShort: 16, kInt: 32, kLong: 64}[target]
		// strconv.ParseInt accepts exactly Java's parseInt syntax (optional
		// sign, decimal digits) for ASCII input.
		// DEVIATION: Java also accepts non-ASCII Unicode digits.
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return vNull, false
		}
		return val{k: target, i: n}, true
	case kFloat:
		f, ok := parseJavaFloat(s, 32)
		return val{k: kFloat, f: f}, ok
	case kDouble:
		f, ok := parseJavaFloat(s, 64)
		return val{k: kDouble, f: f}, ok
	}
	return vNull, false
}

// parseJavaFloat parses s as Java's Double.valueOf / Float.valueOf do:
// surrounding characters <= ' ' are trimmed, "NaN" and "Infinity" are
// accepted with an optional sign, and a decimal may end in f, F, d or D.
// DEVIATION: Java's hexadecimal floating literals (0x1p3) are not accepted.
func parseJavaFloat(s string, bits int) (float64, bool) {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := s
	if body != "" && (body[0] == '+' || body[0] == '-') {
		body = body[1:]
	}
	switch body {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		if s[0] == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'f', 'F', 'd', 'D':
			s = s[:n-1]
		}
	}
	// Check Java's decimal syntax ourselves: ParseFloat also takes
	// underscores, hex mantissas and "inf", which Java does not.
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return 0, false
	}
	if e := scanExponent(s, i); e > i {
		i = e
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil && !isRangeErr(err) {
		return 0, false
	}
	return f, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// javaString renders v as Java's String.valueOf, for string concatenation.
func javaString(v val) (string, bool) {
	switch v.k {
	case kBool:
		return strconv.FormatBool(v.i != 0), true
	case kByte, kShort, kInt, kLong:
		return strconv.FormatInt(v.i, 10), true
	case kFloat:
		return message.JavaFloatString(v.f, 32), true
	case kDouble:
		return message.JavaFloatString(v.f, 64), true
	case kString:
		return v.s, true
	}
	return "", false
}
