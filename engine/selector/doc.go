// Package selector compiles and evaluates JMS message selectors as Apache
// ActiveMQ Classic 5.17 does (activemq-client SelectorParser.jj and the
// org.apache.activemq.filter expressions).
//
// # Language
//
// A selector is a boolean expression over a message's headers and
// properties:
//
//   - Identifiers: ASCII letters, digits, '_' and '$', not starting with a
//     digit; case-sensitive. JMS header names (JMSPriority, JMSType,
//     JMSDeliveryMode, JMSXDeliveryCount, JMSXGroupID, ...) resolve through
//     message.Message.Field; anything else is a property; a missing one is
//     NULL.
//   - Literals: strings in single quotes, a quote doubled inside; decimal integers (an optional
//     L suffix is ignored), 0x hex and 0 octal integers, each an int when it
//     fits and a long otherwise; approximate numbers (1.5, 5., .5, 1e10,
//     1.5E-3) as doubles, with no F or D suffix; TRUE, FALSE, NULL.
//   - Operators, loosest first: OR; AND; = <> IS [NOT] NULL; < > <= >=
//     [NOT] LIKE 'pat' [ESCAPE 'c'], [NOT] BETWEEN a AND b, [NOT] IN ('a', ...);
//     binary + and -; * / %; prefix + - NOT. There is no == or !=. Keywords are
//     case-insensitive. Comments: -- to end of line, and /* ... */.
//   - NOT binds tighter than comparisons, as in ActiveMQ's grammar:
//     `NOT a = 1` means `(NOT a) = 1`. Write `NOT (a = 1)`.
//
// # Types
//
// Numbers compare with numbers after Java promotion (int, long, float,
// double); / and % always compute in double, so 1 / 0 is +Infinity, not an
// error. Strings compare with strings, booleans with booleans. Comparing
// values of different types is FALSE (JMS 1.1 §3.8.1.2), so `NOT (s = 1)` is
// TRUE for a string s. Like ActiveMQ, the parser rejects string, boolean and
// NULL literals as operands of < > <= >= and BETWEEN, a NULL literal as an
// operand of = and <>, and anything but an identifier left of IN; two string
// properties may still be ordered (UTF-16 order). A string on the left of +
// concatenates. Operations ActiveMQ aborts with an exception (1 + 'a',
// TRUE * 2) make the whole selector fail to match.
//
// # Three-valued logic
//
// NULL (a missing property, or an operation on one) is UNKNOWN. NOT UNKNOWN
// is UNKNOWN; FALSE AND UNKNOWN is FALSE; TRUE OR UNKNOWN is TRUE; every other
// combination with UNKNOWN is UNKNOWN. A message matches only when the
// selector is TRUE. `a IS NULL` is TRUE for a missing a; as in ActiveMQ,
// `a = b` is TRUE when both are missing.
//
// # Options
//
// Options.ConvertStringExpressions (or the "convert_string_expressions:"
// prefix ActiveMQ's STOMP transport adds) lets a string property compare
// with a number or boolean by parsing it, for protocols whose properties are
// all strings.
//
// # Ownership and limits
//
// A *Selector is immutable after Parse and may be shared by any number of
// goroutines. Matches does not allocate for comparisons, LIKE, IN and logic;
// only string concatenation with + does. Selectors longer than MaxLength or
// nested deeper than MaxDepth are refused with a *SyntaxError wrapping
// ErrTooComplex. ActiveMQ's XPATH, XQUERY and function-call extensions are
// refused with ErrUnsupported.
package selector
