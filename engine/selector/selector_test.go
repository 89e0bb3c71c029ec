package selector

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
)

// testMessage is the message most cases run against.
func testMessage() *message.Message {
	m := &message.Message{
		ID:         "ID:producer-1:1",
		Type:       "car",
		Priority:   7,
		Persistent: true,
		Timestamp:  1000,
		GroupID:    "g1",
	}
	set := m.Props.Set
	set("color", message.StringValue("red"))
	set("name2", message.StringValue("red"))
	set("weight", message.IntValue(15))
	set("big", message.LongValue(5000000000))
	set("price", message.DoubleValue(9.5))
	set("ratio", message.FloatValue(2.5))
	set("b8", message.ByteValue(5))
	set("s16", message.ShortValue(300))
	set("flag", message.BoolValue(true))
	set("off", message.BoolValue(false))
	set("num", message.StringValue("42"))
	set("numf", message.StringValue("1.5"))
	set("numf2", message.StringValue("2.5f"))
	set("s300", message.StringValue("300"))
	set("strTrue", message.StringValue("TRUE"))
	set("empty", message.StringValue(""))
	set("meta", message.StringValue("a.b*c+(d)"))
	set("pct", message.StringValue("100%"))
	set("under", message.StringValue("a_b"))
	set("bs", message.StringValue(`a\b`))
	set("nl", message.StringValue("a\nb"))
	set("greek", message.StringValue("añb"))
	set("apos", message.StringValue("it's"))
	set("nan", message.DoubleValue(math.NaN()))
	set("negz", message.DoubleValue(math.Copysign(0, -1)))
	set("raw", message.BytesValue([]byte("red")))
	set("$dollar_1", message.IntValue(1))
	return m
}

type matchCase struct {
	name         string
	sel          string
	convert      bool
	redeliveries int32
	edit         func(m *message.Message) // changes testMessage(); nil for none
	want         bool
}

var matchCases = []matchCase{
	// Equality.
	{name: "string equal", sel: "color = 'red'", want: true},
	{name: "string not equal value", sel: "color = 'blue'", want: false},
	{name: "string equality is case-sensitive", sel: "color = 'RED'", want: false},
	{name: "missing equal is unknown", sel: "missing = 'red'", want: false},
	{name: "not equal", sel: "color <> 'blue'", want: true},
	{name: "not equal same value", sel: "color <> 'red'", want: false},
	{name: "missing not equal is unknown", sel: "missing <> 'red'", want: false},
	{name: "literal not equal missing is unknown (DEVIATION)", sel: "'red' <> missing", want: false},
	{name: "two missing identifiers are equal (ActiveMQ)", sel: "missing = missing2", want: true},
	{name: "two missing identifiers not unequal", sel: "missing <> missing2", want: false},
	{name: "two string properties", sel: "color = name2", want: true},
	{name: "int equal", sel: "weight = 15", want: true},
	{name: "int equal double literal", sel: "weight = 15.0", want: true},
	{name: "long equal", sel: "big = 5000000000", want: true},
	{name: "long greater than int property", sel: "big > weight", want: true},
	{name: "double equal", sel: "price = 9.5", want: true},
	{name: "float equal double literal", sel: "ratio = 2.5", want: true},
	{name: "float greater than int", sel: "ratio > 2", want: true},
	{name: "byte equal int literal", sel: "b8 = 5", want: true},
	{name: "int literal equal byte (DEVIATION symmetric promotion)", sel: "5 = b8", want: true},
	{name: "int literal less than short (DEVIATION)", sel: "5 < s16", want: true},
	{name: "byte less than short", sel: "b8 < s16", want: true},
	{name: "short greater than int literal", sel: "s16 > 299", want: true},
	{name: "double literal less than float (DEVIATION no ClassCastException)", sel: "1.5 < ratio", want: true},
	{name: "number equal string is false", sel: "weight = '15'", want: false},
	{name: "type mismatch is FALSE so NOT makes it TRUE", sel: "NOT (weight = '15')", want: true},
	{name: "string property equal number is false", sel: "num = 42", want: false},
	{name: "string property not equal number is true", sel: "num <> 42", want: true},
	{name: "bytes property equals nothing", sel: "raw = 'red'", want: false},
	{name: "boolean equal TRUE", sel: "flag = TRUE", want: true},
	{name: "boolean equal FALSE", sel: "flag = FALSE", want: false},
	{name: "false boolean equal FALSE", sel: "off = FALSE", want: true},
	{name: "boolean equal number is false", sel: "flag = 1", want: false},
	{name: "boolean not equal number is true", sel: "flag <> 1", want: true},
	{name: "number equal TRUE literal is allowed on the right", sel: "1 = TRUE", want: false},
	{name: "TRUE equal FALSE", sel: "TRUE = FALSE", want: false},
	{name: "chained equality compares a boolean", sel: "weight = 15 = TRUE", want: true},
	{name: "identifier with dollar and digits", sel: "$dollar_1 = 1", want: true},

	// Boolean identifiers and literals as predicates.
	{name: "boolean property alone", sel: "flag", want: true},
	{name: "false property alone", sel: "off", want: false},
	{name: "NOT false property", sel: "NOT off", want: true},
	{name: "NOT true property", sel: "NOT flag", want: false},
	{name: "missing property alone", sel: "missing", want: false},
	{name: "NOT missing property", sel: "NOT missing", want: false},
	{name: "string property as predicate is false", sel: "color", want: false},
	{name: "NOT string property is true", sel: "NOT color", want: true},
	{name: "parenthesised property", sel: "(flag)", want: true},
	{name: "TRUE literal", sel: "TRUE", want: true},
	{name: "FALSE literal", sel: "FALSE", want: false},
	{name: "NULL literal", sel: "NULL", want: false},
	{name: "NOT NULL literal", sel: "NOT NULL", want: false},

	// Ordering.
	{name: "greater", sel: "weight > 10", want: true},
	{name: "greater or equal", sel: "weight >= 15", want: true},
	{name: "less", sel: "weight < 15", want: false},
	{name: "less or equal", sel: "weight <= 15", want: true},
	{name: "greater than double", sel: "weight > 15.5", want: false},
	{name: "missing greater is unknown", sel: "missing > 1", want: false},
	{name: "NOT missing greater is unknown", sel: "NOT (missing > 1)", want: false},
	{name: "string greater than number is false", sel: "color > 1", want: false},
	{name: "NOT string greater than number is true", sel: "NOT (color > 1)", want: true},
	{name: "two equal string properties not greater", sel: "color > name2", want: false},
	{name: "two string properties greater or equal", sel: "color >= name2", want: true},
	{name: "string properties ordered", sel: "meta < color", want: true},
	{name: "boolean properties ordered", sel: "flag > off", want: true},
	{name: "NaN is greater than everything (Java compare)", sel: "nan > 1000", want: true},
	{name: "NaN equals NaN (Java compare)", sel: "nan = nan", want: true},
	{name: "negative zero is not equal to zero (Java compare)", sel: "negz = 0", want: false},
	{name: "negative zero is less than zero (Java compare)", sel: "negz < 0", want: true},

	// Arithmetic.
	{name: "plus", sel: "weight + 5 = 20", want: true},
	{name: "minus", sel: "weight - 5 = 10", want: true},
	{name: "times", sel: "weight * 2 = 30", want: true},
	{name: "divide is double", sel: "weight / 2 = 7.5", want: true},
	{name: "integer literals divide as double", sel: "7 / 2 = 3.5", want: true},
	{name: "modulo", sel: "weight % 4 = 3", want: true},
	{name: "precedence of times over plus", sel: "1 + 2 * 3 = 7", want: true},
	{name: "divide by zero is infinity", sel: "weight / 0 > 1000000", want: true},
	{name: "zero by zero is NaN", sel: "0 / 0 > 1", want: true},
	{name: "int arithmetic wraps", sel: "2147483647 + 1 < 0", want: true},
	{name: "L suffix still int", sel: "2147483647 + 1L < 0", want: true},
	{name: "long arithmetic", sel: "2147483648 + 1 > 0", want: true},
	{name: "long property arithmetic", sel: "big * 2 = 10000000000", want: true},
	{name: "float arithmetic is double", sel: "ratio * 2 = 5", want: true},
	{name: "negate", sel: "-weight = -15", want: true},
	{name: "negate byte (DEVIATION)", sel: "-b8 = -5", want: true},
	{name: "double negate", sel: "- -weight = 15", want: true},
	{name: "unary plus", sel: "+weight = 15", want: true},
	{name: "negate double", sel: "-price < 0", want: true},
	{name: "negate string is unknown", sel: "-color = 1", want: false},
	{name: "NOT negate string is unknown", sel: "NOT (-color = 1)", want: false},
	{name: "arithmetic on missing is unknown", sel: "missing + 1 = 1", want: false},
	{name: "NOT arithmetic on missing is unknown", sel: "NOT (missing + 1 = 1)", want: false},
	{name: "string plus string concatenates", sel: "color + 'x' = 'redx'", want: true},
	{name: "string plus int concatenates", sel: "color + 1 = 'red1'", want: true},
	{name: "string plus double uses Java toString", sel: "color + price = 'red9.5'", want: true},
	{name: "string plus large double uses E notation", sel: "'x' + 1e10 = 'x1.0E10'", want: true},
	{name: "string plus boolean", sel: "color + flag = 'redtrue'", want: true},
	{name: "number plus string aborts", sel: "1 + color = 1", want: false},
	{name: "NOT does not rescue an abort", sel: "NOT (1 + color = 1)", want: false},
	{name: "abort stops OR", sel: "(1 + color = 1) OR flag", want: false},
	{name: "OR short-circuits before abort", sel: "flag OR (1 + color = 1)", want: true},
	{name: "boolean arithmetic aborts", sel: "NOT (flag + 1 = 2)", want: false},

	// LIKE.
	{name: "like prefix", sel: "color LIKE 'r%'", want: true},
	{name: "like underscore", sel: "color LIKE 'r_d'", want: true},
	{name: "like underscore needs a character", sel: "color LIKE 'r_'", want: false},
	{name: "like infix", sel: "color LIKE '%e%'", want: true},
	{name: "like is case-sensitive", sel: "color LIKE 'R%'", want: false},
	{name: "not like", sel: "color NOT LIKE 'b%'", want: true},
	{name: "not like matching", sel: "color NOT LIKE 'r%'", want: false},
	{name: "like missing is unknown", sel: "missing LIKE '%'", want: false},
	{name: "not like missing is unknown", sel: "missing NOT LIKE '%'", want: false},
	{name: "like number is false", sel: "weight LIKE '1%'", want: false},
	{name: "not like number is true", sel: "weight NOT LIKE '1%'", want: true},
	{name: "like regex metacharacters are literal", sel: "meta LIKE 'a.b*c+(d)'", want: true},
	{name: "like dot does not match any character", sel: "color LIKE 'r.d'", want: false},
	{name: "like dot star is literal", sel: "color LIKE '.*'", want: false},
	{name: "like metacharacters with wildcards", sel: "meta LIKE 'a_b*%(d)'", want: true},
	{name: "like escape percent", sel: "pct LIKE '100!%' ESCAPE '!'", want: true},
	{name: "like escaped percent is literal", sel: "color LIKE 're!%' ESCAPE '!'", want: false},
	{name: "like backslash escape", sel: `pct LIKE '100\%' ESCAPE '\'`, want: true},
	{name: "like escape underscore", sel: `under LIKE 'a\_b' ESCAPE '\'`, want: true},
	{name: "like escaped underscore is literal", sel: `color LIKE 'r\_d' ESCAPE '\'`, want: false},
	{name: "like escape before ordinary character is literal", sel: `bs LIKE 'a\b' ESCAPE '\'`, want: true},
	{name: "like escaped escape", sel: `bs LIKE 'a\\b' ESCAPE '\'`, want: true},
	{name: "like backslash without ESCAPE is literal", sel: `bs LIKE 'a\b'`, want: true},
	{name: "like percent matches newline", sel: "nl LIKE 'a%b'", want: true},
	{name: "like underscore matches newline", sel: "nl LIKE 'a_b'", want: true},
	{name: "like underscore matches one multibyte character", sel: "greek LIKE 'a_b'", want: true},
	{name: "like empty pattern", sel: "empty LIKE ''", want: true},
	{name: "like percent matches empty", sel: "empty LIKE '%'", want: true},
	{name: "like underscore does not match empty", sel: "empty LIKE '_'", want: false},
	{name: "like doubled quote", sel: "apos LIKE 'it''%'", want: true},
	{name: "like backtracks", sel: "meta LIKE '%b%c%d_'", want: true},

	// IN.
	{name: "in", sel: "color IN ('red', 'green')", want: true},
	{name: "in not listed", sel: "color IN ('blue')", want: false},
	{name: "not in", sel: "color NOT IN ('blue')", want: true},
	{name: "not in listed", sel: "color NOT IN ('red')", want: false},
	{name: "in missing is unknown", sel: "missing IN ('red')", want: false},
	{name: "not in missing is unknown", sel: "missing NOT IN ('red')", want: false},
	{name: "in number is unknown", sel: "weight IN ('15')", want: false},
	{name: "not in number is unknown", sel: "weight NOT IN ('15')", want: false},
	{name: "in long list", sel: "color IN ('a','b','c','d','e','f','g','h','i','red')", want: true},
	{name: "not in long list", sel: "color NOT IN ('a','b','c','d','e','f','g','h','i','j')", want: true},
	{name: "in parenthesised identifier", sel: "(color) IN ('red')", want: true},
	{name: "in with doubled quote", sel: "apos IN ('it''s')", want: true},

	// BETWEEN.
	{name: "between", sel: "weight BETWEEN 10 AND 20", want: true},
	{name: "between below", sel: "weight BETWEEN 16 AND 20", want: false},
	{name: "not between outside", sel: "weight NOT BETWEEN 16 AND 20", want: true},
	{name: "not between inside", sel: "weight NOT BETWEEN 10 AND 20", want: false},
	{name: "between inclusive", sel: "weight BETWEEN 15 AND 15", want: true},
	{name: "between missing is unknown", sel: "missing BETWEEN 1 AND 2", want: false},
	{name: "not between missing is unknown", sel: "missing NOT BETWEEN 1 AND 2", want: false},
	{name: "between string is false", sel: "color BETWEEN 1 AND 2", want: false},
	{name: "not between string is false too (ActiveMQ expansion)", sel: "color NOT BETWEEN 1 AND 2", want: false},
	{name: "between doubles", sel: "price BETWEEN 9 AND 10", want: true},
	{name: "between longs", sel: "big BETWEEN 1 AND 5000000000", want: true},
	{name: "between arithmetic bounds", sel: "weight BETWEEN 5 * 2 AND 5 * 3", want: true},

	// IS NULL.
	{name: "is null missing", sel: "missing IS NULL", want: true},
	{name: "is null present", sel: "color IS NULL", want: false},
	{name: "is not null missing", sel: "missing IS NOT NULL", want: false},
	{name: "is not null present", sel: "color IS NOT NULL", want: true},
	{name: "empty header is null", sel: "JMSCorrelationID IS NULL", want: true},
	{name: "unknown comparison is null", sel: "(missing = 1) IS NULL", want: true},
	{name: "NULL literal is null", sel: "NULL IS NULL", want: true},

	// Headers.
	{name: "JMSType", sel: "JMSType = 'car'", want: true},
	{name: "JMSPriority", sel: "JMSPriority = 7", want: true},
	{name: "JMSPriority ordering", sel: "JMSPriority > 5", want: true},
	{name: "JMSDeliveryMode persistent", sel: "JMSDeliveryMode = 'PERSISTENT'", want: true},
	{name: "JMSDeliveryMode non-persistent", sel: "JMSDeliveryMode = 'NON_PERSISTENT'",
		edit: func(m *message.Message) { m.Persistent = false }, want: true},
	{name: "JMSXDeliveryCount first delivery", sel: "JMSXDeliveryCount = 1", want: true},
	{name: "JMSXDeliveryCount counts redeliveries", sel: "JMSXDeliveryCount = 3", redeliveries: 2, want: true},
	{name: "JMSRedelivered after redelivery", sel: "JMSRedelivered", redeliveries: 1, want: true},
	{name: "JMSRedelivered first delivery", sel: "JMSRedelivered = TRUE", want: false},
	{name: "JMSXGroupID", sel: "JMSXGroupID = 'g1'", want: true},
	{name: "JMSMessageID like", sel: "JMSMessageID LIKE 'ID:%'", want: true},
	{name: "JMSTimestamp", sel: "JMSTimestamp = 1000", want: true},
	{name: "header names are case-sensitive", sel: "jmspriority = 7", want: false},

	// Literals.
	{name: "hex literal", sel: "weight = 0xF", want: true},
	{name: "hex literal upper X", sel: "weight = 0XF", want: true},
	{name: "hex long literal", sel: "big = 0x12A05F200", want: true},
	{name: "octal literal", sel: "weight = 017", want: true},
	{name: "zero literal", sel: "0 = 0", want: true},
	{name: "long suffix", sel: "big = 5000000000L", want: true},
	{name: "lower long suffix", sel: "weight = 15l", want: true},
	{name: "exponent", sel: "price = 9.5e0", want: true},
	{name: "leading point", sel: "price = .95E1", want: true},
	{name: "negative exponent", sel: "price = 95e-1", want: true},
	{name: "trailing zeros", sel: "price = 9.50", want: true},
	{name: "float property vs exponent", sel: "ratio = 25E-1", want: true},
	{name: "trailing point", sel: "price > 9.", want: true},
	{name: "minimum long literal", sel: "-9223372036854775808 < 0", want: true},
	{name: "maximum long literal", sel: "9223372036854775807 > big", want: true},
	{name: "decimal beyond long is a double (DEVIATION)", sel: "99999999999999999999 > big", want: true},
	{name: "doubled quote in string", sel: "apos = 'it''s'", want: true},
	{name: "keywords are case-insensitive", sel: "color = 'red' and weight between 10 And 20 oR missing is null", want: true},
	{name: "true literal lower case", sel: "flag = true", want: true},

	// Comments and whitespace.
	{name: "block comment", sel: "color = 'red' /* note */ AND weight > 10", want: true},
	{name: "line comment", sel: "color = 'red' -- note\n AND weight > 10", want: true},
	{name: "double minus without a line break is two minus signs", sel: "weight = 14 --1", want: true},
	{name: "tabs form feeds and newlines", sel: "color\t=\f'red'\r\nAND\nflag", want: true},

	// Precedence and grouping.
	{name: "AND binds tighter than OR", sel: "flag OR off AND off", want: true},
	{name: "parentheses override", sel: "(flag OR off) AND off", want: false},
	{name: "nested AND chains", sel: "color = 'red' AND (weight > 10 AND flag)", want: true},
	{name: "NOT binds tighter than = (ActiveMQ grammar)", sel: "NOT weight = 16", want: false},
	{name: "NOT of parenthesised comparison", sel: "NOT (weight = 16)", want: true},
	{name: "NOT of parenthesised true comparison", sel: "NOT (weight = 15)", want: false},

	// ConvertStringExpressions.
	{name: "convert string equal int", sel: "num = 42", convert: true, want: true},
	{name: "convert int equal string", sel: "42 = num", convert: true, want: true},
	{name: "convert string greater", sel: "num > 41", convert: true, want: true},
	{name: "convert string less", sel: "num < 41", convert: true, want: false},
	{name: "convert string between", sel: "num BETWEEN 40 AND 50", convert: true, want: true},
	{name: "convert string equal double", sel: "num = 42.0", convert: true, want: true},
	{name: "convert decimal string is not an int", sel: "numf = 1", convert: true, want: false},
	{name: "convert decimal string equal double", sel: "numf = 1.5", convert: true, want: true},
	{name: "convert float suffix for float property", sel: "ratio = numf2", convert: true, want: true},
	{name: "convert trims for double", sel: "price = ' 9.5 '", convert: true, want: true},
	{name: "convert non-numeric string is false", sel: "color = 1", convert: true, want: false},
	{name: "convert non-numeric string NOT is true", sel: "NOT (color = 1)", convert: true, want: true},
	{name: "convert string to boolean ignores case", sel: "strTrue = TRUE", convert: true, want: true},
	{name: "convert boolean with string (DEVIATION)", sel: "flag = 'true'", convert: true, want: true},
	{name: "convert off boolean with string", sel: "flag = 'true'", want: false},
	{name: "convert off string equal int", sel: "num = 42", want: false},
	{name: "convert to byte out of range is false", sel: "b8 < s300", convert: true, want: false},
	{name: "convert to short", sel: "s16 = s300", convert: true, want: true},
	{name: "convert does not apply to arithmetic", sel: "num + 1 = 421", convert: true, want: true},
	{name: "convert does not apply to IN", sel: "weight IN ('15')", convert: true, want: false},
	{name: "convert prefix", sel: "convert_string_expressions:num = 42", want: true},
}

func TestSelectorMatches(t *testing.T) {
	for _, tc := range matchCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseWith(tc.sel, Options{ConvertStringExpressions: tc.convert})
			if err != nil {
				t.Fatalf("ParseWith(%q) error: %v", tc.sel, err)
			}
			m := testMessage()
			if tc.edit != nil {
				tc.edit(m)
			}
			if got := s.Matches(m, tc.redeliveries); got != tc.want {
				t.Errorf("%q Matches = %v, want %v", tc.sel, got, tc.want)
			}
		})
	}
}

// tri evaluates sel against testMessage and names the three-valued result.
func tri(t *testing.T, sel string) string {
	t.Helper()
	s, err := Parse(sel)
	if err != nil {
		t.Fatalf("Parse(%q): %v", sel, err)
	}
	v := s.root.eval(testMessage(), 0)
	switch {
	case v.k == kBool && v.i != 0:
		return "T"
	case v.k == kBool:
		return "F"
	case v.k == kNull:
		return "U"
	case v.k == kAbort:
		return "abort"
	}
	return "value"
}

func TestSelectorThreeValuedLogic(t *testing.T) {
	// flag is TRUE, off is FALSE, missing is UNKNOWN.
	operand := map[string]string{"T": "flag", "F": "off", "U": "missing"}
	and := map[string]string{
		"TT": "T", "TF": "F", "TU": "U",
		"FT": "F", "FF": "F", "FU": "F",
		"UT": "U", "UF": "F", "UU": "U",
	}
	or := map[string]string{
		"TT": "T", "TF": "T", "TU": "T",
		"FT": "T", "FF": "F", "FU": "U",
		"UT": "T", "UF": "U", "UU": "U",
	}
	not := map[string]string{"T": "F", "F": "T", "U": "U"}
	for pair, want := range and {
		sel := operand[pair[:1]] + " AND " + operand[pair[1:]]
		t.Run(sel, func(t *testing.T) {
			if got := tri(t, sel); got != want {
				t.Errorf("%s = %s, want %s", sel, got, want)
			}
		})
	}
	for pair, want := range or {
		sel := operand[pair[:1]] + " OR " + operand[pair[1:]]
		t.Run(sel, func(t *testing.T) {
			if got := tri(t, sel); got != want {
				t.Errorf("%s = %s, want %s", sel, got, want)
			}
		})
	}
	for in, want := range not {
		sel := "NOT " + operand[in]
		t.Run(sel, func(t *testing.T) {
			if got := tri(t, sel); got != want {
				t.Errorf("%s = %s, want %s", sel, got, want)
			}
		})
	}
	// Every operator over a missing operand is UNKNOWN (ActiveMQ
	// UnknownHandlingSelectorTest), except IS [NOT] NULL.
	for _, sel := range []string{
		"missing = 0", "missing <> 0", "missing > 0", "missing >= 0", "missing < 0", "missing <= 0",
		"missing LIKE 'zero'", "missing NOT LIKE 'zero'", "missing IN ('zero')", "missing NOT IN ('zero')",
		"missing BETWEEN 1 AND 2", "missing NOT BETWEEN 1 AND 2",
		"-missing = 0", "+missing = 0", "missing * 2 = 0", "missing / 2 = 0", "missing + 2 = 0",
		"missing - 2 = 0", "missing % 2 = 0", "0 = missing", "0 <> missing", "1 < missing",
	} {
		t.Run(sel, func(t *testing.T) {
			if got := tri(t, sel); got != "U" {
				t.Errorf("%s = %s, want U", sel, got)
			}
		})
	}
	for sel, want := range map[string]string{
		"missing IS NULL": "T", "missing IS NOT NULL": "F", "flag IS NULL": "F", "flag IS NOT NULL": "T",
		"1 + color = 1": "abort", "NOT (1 + color = 1)": "abort", "(1 + color = 1) IS NULL": "abort",
		"off AND (1 + color = 1)": "F", "missing AND (1 + color = 1)": "abort",
	} {
		t.Run(sel, func(t *testing.T) {
			if got := tri(t, sel); got != want {
				t.Errorf("%s = %s, want %s", sel, got, want)
			}
		})
	}
}

type syntaxCase struct {
	name  string
	sel   string
	pos   int
	found string // a substring Msg must contain
	kind  error
}

var syntaxCases = []syntaxCase{
	{name: "dangling AND", sel: "color = 'red' AND", pos: 18, found: "end of selector"},
	{name: "missing close paren", sel: "(color = 'red'", pos: 15, found: "expected ')' but found end of selector"},
	{name: "missing close paren before AND", sel: "(color = 'red' flag", pos: 16, found: `expected ')' but found "flag"`},
	{name: "two expressions", sel: "color = 'red' weight", pos: 15, found: `"weight"`},
	{name: "double equals", sel: "color == 'red'", pos: 8, found: `expected an expression but found "="`},
	{name: "bang equals", sel: "color != 'red'", pos: 7, found: "'!'"},
	{name: "unterminated string", sel: "color = 'red", pos: 9, found: "unterminated string"},
	{name: "greater than string literal", sel: "weight > 'x'", pos: 10, found: `"'x'"`},
	{name: "string literal less than", sel: "'x' < weight", pos: 1, found: `"'x'"`},
	{name: "greater than boolean literal", sel: "weight > TRUE", pos: 10, found: `"TRUE"`},
	{name: "greater than NULL", sel: "weight > NULL", pos: 10, found: `"NULL"`},
	{name: "comparison of comparison", sel: "(weight > 1) > 2", pos: 2, found: `"weight > 1"`},
	{name: "between string literals", sel: "color BETWEEN 'a' AND 'z'", pos: 15, found: `"'a'"`},
	{name: "between without AND", sel: "weight BETWEEN 1 OR 2", pos: 18, found: `expected AND but found "OR"`},
	{name: "equal NULL", sel: "color = NULL", pos: 9, found: "IS NULL"},
	{name: "NULL equal", sel: "NULL = color", pos: 1, found: "IS NULL"},
	{name: "not equal NULL", sel: "color <> NULL", pos: 10, found: "IS NULL"},
	{name: "TRUE equal number", sel: "TRUE = 1", pos: 1, found: `"TRUE" cannot be compared with "1"`},
	{name: "IN on a literal", sel: "1 IN ('a')", pos: 1, found: `found "1"`},
	{name: "NOT binds to the identifier before IN", sel: "NOT color IN ('a')", pos: 1, found: `found "NOT color"`},
	{name: "IN with a number", sel: "color IN (1)", pos: 11, found: `found "1"`},
	{name: "IN empty", sel: "color IN ()", pos: 11, found: `found ")"`},
	{name: "IN without parenthesis", sel: "color IN 'a'", pos: 10, found: `found "'a'"`},
	{name: "IN missing comma", sel: "color IN ('a' 'b')", pos: 15, found: `expected ',' or ')' but found "'b'"`},
	{name: "ESCAPE two characters", sel: "color LIKE 'a' ESCAPE 'ab'", pos: 23, found: `"'ab'"`},
	{name: "ESCAPE empty", sel: "color LIKE 'a' ESCAPE ''", pos: 23, found: `"''"`},
	{name: "LIKE a number", sel: "color LIKE 5", pos: 12, found: `found "5"`},
	{name: "arithmetic is not boolean", sel: "weight + 1", pos: 1, found: `"weight + 1"`},
	{name: "number is not boolean", sel: "1", pos: 1, found: `"1"`},
	{name: "string is not boolean", sel: "'x'", pos: 1, found: `"'x'"`},
	{name: "NOT a number", sel: "NOT 5", pos: 5, found: `"5"`},
	{name: "number AND", sel: "5 AND flag", pos: 1, found: `"5"`},
	{name: "IS a number", sel: "color IS 5", pos: 10, found: `expected NULL or NOT NULL but found "5"`},
	{name: "IS NOT a number", sel: "color IS NOT 5", pos: 14, found: `expected NULL but found "5"`},
	{name: "hex without digits", sel: "weight > 0x", pos: 11, found: `found "x"`},
	{name: "hex out of range", sel: "weight = 0xFFFFFFFFFFFFFFFF", pos: 10, found: `"0xFFFFFFFFFFFFFFFF"`},
	{name: "octal out of range", sel: "weight = 07777777777777777777777", pos: 10, found: "does not fit"},
	{name: "float suffix is not accepted", sel: "weight = 1.5F", pos: 13, found: `found "F"`},
	{name: "hex has no long suffix", sel: "weight = 0x10L", pos: 14, found: `found "L"`},
	{name: "nine is not octal", sel: "weight = 09", pos: 11, found: `found "9"`},
	{name: "NOT before equals", sel: "weight NOT = 1", pos: 8, found: `found "NOT"`},
	{name: "close paren first", sel: ")", pos: 1, found: `expected an expression but found ")"`},
	{name: "stray close paren", sel: "flag)", pos: 5, found: `found ")"`},
	{name: "convert prefix is case-sensitive", sel: "CONVERT_STRING_EXPRESSIONS:num = 42", pos: 27, found: "':'"},
	{name: "lone dot", sel: "weight = .", pos: 10, found: "'.'"},
	{name: "position counts characters not bytes", sel: "color = 'ré' AND é = 1", pos: 18, found: "'é'"},
	{name: "comment only", sel: "/* nothing */", pos: 14, found: "end of selector"},
	{name: "unterminated block comment is a slash", sel: "flag /* x", pos: 7, found: `expected an expression but found "*"`},
	{name: "long token is shortened", sel: "flag '" + strings.Repeat("x", 100) + "'", pos: 6, found: `..."`},
	{name: "XPATH unsupported", sel: "XPATH '//a'", pos: 1, found: "XPATH", kind: ErrUnsupported},
	{name: "XQUERY unsupported", sel: "xquery '//a'", pos: 1, found: "XQUERY", kind: ErrUnsupported},
	{name: "function call unsupported", sel: "REGEX('a', color)", pos: 1, found: `"REGEX("`, kind: ErrUnsupported},
	{name: "parentheses nested too deep", sel: strings.Repeat("(", MaxDepth+1) + "flag" + strings.Repeat(")", MaxDepth+1),
		pos: MaxDepth + 1, found: "nested deeper", kind: ErrTooComplex},
	{name: "NOT nested too deep", sel: strings.Repeat("NOT ", MaxDepth+1) + "flag",
		pos: 4*MaxDepth + 1, found: "nested deeper", kind: ErrTooComplex},
	{name: "arithmetic chain too deep", sel: "weight" + strings.Repeat(" + 1", maxHeight) + " = 1",
		pos: 1, found: "nested deeper", kind: ErrTooComplex},
	{name: "too long", sel: "color = '" + strings.Repeat("x", MaxLength) + "'",
		pos: 0, found: "limit is 65536", kind: ErrTooComplex},
}

func TestSelectorSyntaxErrors(t *testing.T) {
	for _, tc := range syntaxCases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(tc.sel)
			if err == nil {
				t.Fatalf("Parse(%.60q) = %v, want an error", tc.sel, s)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T %v is not a *SyntaxError", err, err)
			}
			if se.Pos != tc.pos {
				t.Errorf("Pos = %d, want %d (%v)", se.Pos, tc.pos, err)
			}
			if !strings.Contains(se.Msg, tc.found) {
				t.Errorf("Msg = %q, want it to contain %q", se.Msg, tc.found)
			}
			if se.Selector != tc.sel {
				t.Errorf("Selector = %.40q, want the input", se.Selector)
			}
			kind := tc.kind
			if kind == nil {
				kind = ErrSyntax
			}
			if !errors.Is(err, kind) {
				t.Errorf("errors.Is(%v, %v) = false", err, kind)
			}
			if !strings.HasPrefix(err.Error(), "selector: syntax error") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

func TestSelectorErrorText(t *testing.T) {
	_, err := Parse("(color = 'red' AND")
	want := `selector: syntax error at position 19: expected an expression but found end of selector`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	_, err = Parse("(a = 1 AND b = 2")
	want = `selector: syntax error at position 17: expected ')' but found end of selector`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	_, err = Parse("(a = 1 b = 2)")
	want = `selector: syntax error at position 8: expected ')' but found "b"`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
}

func TestSelectorBlankMatchesAll(t *testing.T) {
	for _, sel := range []string{"", "   ", "\t\r\n\f", ConvertPrefix, ConvertPrefix + "  "} {
		s, err := Parse(sel)
		if err != nil {
			t.Fatalf("Parse(%q): %v", sel, err)
		}
		if !s.Matches(testMessage(), 0) || !s.Matches(&message.Message{}, 0) {
			t.Errorf("Parse(%q) does not match everything", sel)
		}
		if s.String() != sel {
			t.Errorf("String() = %q, want %q", s.String(), sel)
		}
	}
	var nilSel *Selector
	if !nilSel.Matches(testMessage(), 0) || nilSel.String() != "" {
		t.Error("nil *Selector must match everything and print empty")
	}
}

func TestSelectorString(t *testing.T) {
	for _, sel := range []string{"color = 'red'", "  flag  ", ConvertPrefix + "num = 42", "a -- c\n IS NULL"} {
		s, err := Parse(sel)
		if err != nil {
			t.Fatalf("Parse(%q): %v", sel, err)
		}
		if s.String() != sel {
			t.Errorf("String() = %q, want %q", s.String(), sel)
		}
	}
}

// TestSelectorLiteralTypes checks the Java type each literal gets (ActiveMQ
// ConstantExpression), which decides int-vs-long arithmetic.
func TestSelectorLiteralTypes(t *testing.T) {
	for _, tc := range []struct {
		lit  string
		want val
	}{
		{"15", val{k: kInt, i: 15}},
		{"15L", val{k: kInt, i: 15}},
		{"2147483647", val{k: kInt, i: math.MaxInt32}},
		{"2147483648", val{k: kLong, i: math.MaxInt32 + 1}},
		{"0x7FFFFFFF", val{k: kInt, i: math.MaxInt32}},
		{"0xFFFFFFFF", val{k: kLong, i: 0xFFFFFFFF}},
		{"0x7FFFFFFFFFFFFFFF", val{k: kLong, i: math.MaxInt64}},
		{"010", val{k: kInt, i: 8}},
		{"0", val{k: kInt, i: 0}},
		{"1.5", val{k: kDouble, f: 1.5}},
		{"1e3", val{k: kDouble, f: 1000}},
		{"1E+3", val{k: kDouble, f: 1000}},
		{"5.", val{k: kDouble, f: 5}},
		{".5e1", val{k: kDouble, f: 5}},
		{"1e400", val{k: kDouble, f: math.Inf(1)}},
		{"'it''s'", val{k: kString, s: "it's"}},
		{"TRUE", vTrue},
		{"fAlSe", vFalse},
	} {
		t.Run(tc.lit, func(t *testing.T) {
			p := &parser{src: tc.lit}
			toks, serr := lex(tc.lit, 0)
			if serr != nil {
				t.Fatal(serr)
			}
			p.toks = toks
			e, serr := p.parsePrimary()
			if serr != nil {
				t.Fatal(serr)
			}
			if e.c != tc.want {
				t.Errorf("%s = %+v, want %+v", tc.lit, e.c, tc.want)
			}
		})
	}
	// -9223372036854775808 is Long.MIN_VALUE.
	s, err := Parse("-9223372036854775808 = -9223372036854775807 - 1")
	if err != nil || !s.Matches(testMessage(), 0) {
		t.Errorf("Long.MIN_VALUE literal: %v", err)
	}
}

func TestSelectorJavaFloatString(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		bits int
		want string
	}{
		{9.5, 64, "9.5"}, {1, 64, "1.0"}, {1e10, 64, "1.0E10"}, {1.5e-5, 64, "1.5E-5"},
		{1e7, 64, "1.0E7"}, {9999999, 64, "9999999.0"}, {0.001, 64, "0.001"}, {0.0001, 64, "1.0E-4"},
		{math.Copysign(0, -1), 64, "-0.0"}, {math.NaN(), 64, "NaN"}, {math.Inf(-1), 64, "-Infinity"},
		{float64(float32(0.1)), 32, "0.1"}, {-123.25, 64, "-123.25"},
	} {
		if got := message.JavaFloatString(tc.f, tc.bits); got != tc.want {
			t.Errorf("JavaFloatString(%v, %d) = %q, want %q", tc.f, tc.bits, got, tc.want)
		}
	}
}

func TestSelectorJavaValueOf(t *testing.T) {
	for _, tc := range []struct {
		s      string
		target kind
		ok     bool
		want   val
	}{
		{"42", kInt, true, val{k: kInt, i: 42}},
		{"+42", kInt, true, val{k: kInt, i: 42}},
		{" 42", kInt, false, val{}},
		{"2147483648", kInt, false, val{}},
		{"2147483648", kLong, true, val{k: kLong, i: 2147483648}},
		{"127", kByte, true, val{k: kByte, i: 127}},
		{"128", kByte, false, val{}},
		{"1_0", kInt, false, val{}},
		{" 1.5 ", kDouble, true, val{k: kDouble, f: 1.5}},
		{"1.5d", kDouble, true, val{k: kDouble, f: 1.5}},
		{"1e3", kDouble, true, val{k: kDouble, f: 1000}},
		{"-Infinity", kDouble, true, val{k: kDouble, f: math.Inf(-1)}},
		{"inf", kDouble, false, val{}},
		{"1_0", kDouble, false, val{}},
		{".", kDouble, false, val{}},
		{"0x10", kDouble, false, val{}},
		{"yes", kBool, true, vFalse},
		{"True", kBool, true, vTrue},
	} {
		got, ok := convertString(tc.s, tc.target)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("convertString(%q, %d) = %+v, %v; want %+v, %v", tc.s, tc.target, got, ok, tc.want, tc.ok)
		}
	}
	if v, ok := convertString("NaN", kDouble); !ok || !math.IsNaN(v.f) {
		t.Errorf("convertString(NaN) = %v, %v", v, ok)
	}
}

func TestSelectorCompareJavaStrings(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"a", "ab", -1}, {"", "a", -1},
		// U+FF61 sorts after U+1F600 in UTF-8 byte order's reverse: in UTF-16
		// the supplementary character's high surrogate 0xD83D is smaller.
		{"\U0001F600", "\uFF61", -1}, {"x\uFF61", "x\U0001F600", 1},
		{"é", "z", 1},
	} {
		if got := compareJavaStrings(tc.a, tc.b); got != tc.want {
			t.Errorf("compareJavaStrings(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestSelectorMatchesDoesNotAllocate(t *testing.T) {
	m := testMessage()
	for _, sel := range []string{
		"color = 'red' AND weight > 10",
		"color = 'blue' OR (JMSPriority >= 4 AND NOT off)",
		"color LIKE 'r%d' AND meta NOT LIKE '%x%'",
		"color IN ('a','b','c','d','e','f','g','h','i','red')",
		"weight BETWEEN 1 AND 20 AND price * 2 > 3",
		"missing IS NULL AND JMSType = 'car'",
	} {
		s, err := Parse(sel)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Matches(m, 0) {
			t.Fatalf("%q does not match", sel)
		}
		if n := testing.AllocsPerRun(100, func() { s.Matches(m, 0) }); n != 0 {
			t.Errorf("%q: %v allocations per Matches, want 0", sel, n)
		}
	}
}

func TestSelectorLikeMatcher(t *testing.T) {
	for _, tc := range []struct {
		pat, s string
		esc    rune
		want   bool
	}{
		{"%", "", -1, true}, {"%%", "abc", -1, true}, {"a%c", "abbbc", -1, true},
		{"a%c", "abbbcd", -1, false}, {"%a%a%a%b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -1, false},
		{"_%_", "a", -1, false}, {"_%_", "ab", -1, true}, {"a!", "a!", '!', true},
		{"a!!", "a!", '!', true}, {"[a]", "[a]", -1, true}, {"^a$", "^a$", -1, true},
		{"%ñ", "añ", -1, true}, {"a|b", "a", -1, false},
	} {
		if got := compileLike(tc.pat, tc.esc).match(tc.s); got != tc.want {
			t.Errorf("LIKE %q ESCAPE %q on %q = %v, want %v", tc.pat, tc.esc, tc.s, got, tc.want)
		}
	}
}

func TestSelectorConcurrentMatches(t *testing.T) {
	s, err := Parse("color = 'red' AND weight > 10 AND color LIKE 'r%'")
	if err != nil {
		t.Fatal(err)
	}
	m := testMessage()
	done := make(chan bool)
	for range 8 {
		go func() {
			ok := true
			for range 1000 {
				ok = ok && s.Matches(m, 0)
			}
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Error("concurrent Matches returned false")
		}
	}
}

// TestSelectorHostileInputIsLinear guards against quadratic lexing or
// matching on selectors made of unterminated comment openers, unary minus
// runs and wildcards. It compares the best of several runs at the longest
// selector allowed with the best at a sixteenth of it: linear work grows
// about 16 times, quadratic work 256 times. A fixed time bound would fail
// on a loaded machine (or under -race) and pass a quadratic parser on a
// fast one; the ratio fails only when the work grows nearly as fast as the
// square of the input (over 160 times) and the long run is slow enough to
// matter (over 250 ms; a quadratic parser takes seconds there). The minus run, 64 Ki nested unary minuses, measured
// 75 times under -race in CI (the deep parse's stack is scanned by each
// GC): above linear, well below quadratic.
func TestSelectorHostileInputIsLinear(t *testing.T) {
	for name, build := range map[string]func(n int) string{
		"minus run":          func(n int) string { return strings.Repeat("-", n) },
		"comment opener run": func(n int) string { return strings.Repeat("/*", n/2) },
		"wildcard pattern":   func(n int) string { return "color LIKE '" + strings.Repeat("%a", n/4) + "'" },
	} {
		t.Run(name, func(t *testing.T) {
			best := func(sel string) time.Duration {
				b := time.Duration(math.MaxInt64)
				for range 5 {
					start := time.Now()
					s, err := Parse(sel)
					if err == nil {
						s.Matches(testMessage(), 0)
					}
					b = min(b, time.Since(start))
				}
				return b
			}
			short, long := best(build(MaxLength/16)), best(build(MaxLength))
			ratio := float64(long) / float64(max(short, time.Microsecond))
			t.Logf("%v at %d bytes, %v at %d: %.0f times", long, MaxLength, short, MaxLength/16, ratio)
			if long > 250*time.Millisecond && ratio > 160 {
				t.Errorf("Parse and Matches: %v at %d bytes, %v at %d: %.0f times for 16 times the input", long, MaxLength, short, MaxLength/16, ratio)
			}
		})
	}
}
