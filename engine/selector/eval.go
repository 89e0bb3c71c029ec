package selector

import (
	"math"

	"wharf/engine/message"
)

// node is one compiled expression. eval never panics and, apart from string
// concatenation, never allocates. A tree is immutable after Parse, so one
// may be evaluated from many goroutines at once.
type node interface {
	eval(m *message.Message, redeliveries int32) val
}

// constNode is a literal.
type constNode struct{ v val }

func (n *constNode) eval(*message.Message, int32) val { return n.v }

// propNode is an identifier: a JMS header or a property, resolved by
// message.Field; a missing one is NULL.
type propNode struct{ name string }

func (n *propNode) eval(m *message.Message, r int32) val {
	v, ok := m.Field(n.name, r)
	if !ok {
		return vNull
	}
	return fromValue(v)
}

// castNode is an identifier used as a predicate (`flag`, `NOT flag`).
// ActiveMQ UnaryExpression.createBooleanCast: NULL stays UNKNOWN, a boolean is
// itself, anything else is FALSE.
type castNode struct{ x node }

func (n *castNode) eval(m *message.Message, r int32) val {
	v := n.x.eval(m, r)
	switch v.k {
	case kNull, kAbort, kBool:
		return v
	}
	return vFalse
}

// notNode is SQL NOT: UNKNOWN stays UNKNOWN.
type notNode struct{ x node }

func (n *notNode) eval(m *message.Message, r int32) val {
	v := n.x.eval(m, r)
	if v.k == kBool {
		return boolVal(v.i == 0)
	}
	return v
}

// andNode is an n-ary AND. Operands are evaluated left to right and the first
// FALSE ends it, as in ActiveMQ LogicExpression (which also flattens chains).
type andNode struct{ xs []node }

func (n *andNode) eval(m *message.Message, r int32) val {
	unknown := false
	for _, x := range n.xs {
		v := x.eval(m, r)
		switch {
		case v.k == kAbort:
			return v
		case v.k == kBool && v.i == 0:
			return vFalse
		case v.k != kBool:
			unknown = true
		}
	}
	if unknown {
		return vNull
	}
	return vTrue
}

// orNode is an n-ary OR; the first TRUE ends it.
type orNode struct{ xs []node }

func (n *orNode) eval(m *message.Message, r int32) val {
	unknown := false
	for _, x := range n.xs {
		v := x.eval(m, r)
		switch {
		case v.k == kAbort:
			return v
		case v.k == kBool && v.i != 0:
			return vTrue
		case v.k != kBool:
			unknown = true
		}
	}
	if unknown {
		return vNull
	}
	return vFalse
}

// eqNode is `=`. (`<>` is NOT over it, as in ActiveMQ.)
type eqNode struct {
	l, r    node
	convert bool
}

func (n *eqNode) eval(m *message.Message, r int32) val {
	lv := n.l.eval(m, r)
	if lv.k == kAbort {
		return lv
	}
	rv := n.r.eval(m, r)
	switch {
	case rv.k == kAbort:
		return rv
	case lv.k == kNull && rv.k == kNull:
		// ActiveMQ EqualsExpression: two NULLs are equal (IS NULL is built
		// on this), so `a = b` is TRUE when both are missing.
		return vTrue
	case lv.k == kNull || rv.k == kNull:
		// DEVIATION: ActiveMQ EqualsExpression.evaluate gives UNKNOWN when
		// only the left is NULL but FALSE when only the right is, so
		// `'x' <> missing` matches while `missing <> 'x'` does not. Wharf
		// gives UNKNOWN for both, as JMS 1.1 §3.8.1.2 requires.
		return vNull
	}
	return boolVal(equal(lv, rv, n.convert))
}

// isNullNode is `x IS NULL` (ActiveMQ: x = NULL without the operand check).
type isNullNode struct{ x node }

func (n *isNullNode) eval(m *message.Message, r int32) val {
	v := n.x.eval(m, r)
	if v.k == kAbort {
		return v
	}
	return boolVal(v.k == kNull)
}

// Ordering operators.
const (
	opLt = iota
	opLe
	opGt
	opGe
)

// cmpNode is <, <=, > or >=. A NULL left operand makes it UNKNOWN without
// evaluating the right (ActiveMQ ComparisonExpression.evaluate).
type cmpNode struct {
	op      int
	l, r    node
	convert bool
}

func (n *cmpNode) eval(m *message.Message, r int32) val {
	lv := n.l.eval(m, r)
	if lv.k == kNull || lv.k == kAbort {
		return lv
	}
	rv := n.r.eval(m, r)
	if rv.k == kNull || rv.k == kAbort {
		return rv
	}
	c, ok := compare(lv, rv, n.convert)
	if !ok {
		return vFalse
	}
	switch n.op {
	case opLt:
		return boolVal(c < 0)
	case opLe:
		return boolVal(c <= 0)
	case opGt:
		return boolVal(c > 0)
	}
	return boolVal(c >= 0)
}

// negNode is unary minus. A NULL or non-numeric operand gives UNKNOWN
// (ActiveMQ UnaryExpression.createNegate returns null for non-numbers).
type negNode struct{ x node }

func (n *negNode) eval(m *message.Message, r int32) val {
	v := n.x.eval(m, r)
	switch v.k {
	case kByte, kShort, kInt:
		// DEVIATION: ActiveMQ throws "Don't know how to negate" for byte and
		// short properties; Wharf negates them as Java's unary minus does,
		// giving an int.
		return val{k: kInt, i: int64(-int32(v.i))}
	case kLong:
		return val{k: kLong, i: -v.i}
	case kFloat, kDouble:
		return val{k: v.k, f: -v.f}
	case kAbort:
		return v
	}
	return vNull
}

// arithNode is + - * / %.
type arithNode struct {
	op   byte
	l, r node
}

func (n *arithNode) eval(m *message.Message, r int32) val {
	lv := n.l.eval(m, r)
	if lv.k == kNull || lv.k == kAbort {
		return lv
	}
	rv := n.r.eval(m, r)
	if rv.k == kNull || rv.k == kAbort {
		return rv
	}
	return arith(n.op, lv, rv)
}

// arith applies ActiveMQ ArithmeticExpression: a string on the left of +
// concatenates (Java String + Object); otherwise both operands must be
// numbers, or ActiveMQ throws and the selector does not match. / and % are
// always computed in double, so 7 / 2 = 3.5 and 1 / 0 is +Infinity rather
// than an error. + - * use int arithmetic (wrapping on overflow) unless a
// long or a float/double is involved.
func arith(op byte, l, r val) val {
	if op == '+' && l.k == kString {
		s, ok := javaString(r)
		if !ok {
			return vAbort
		}
		return val{k: kString, s: l.s + s}
	}
	if !isNum(l.k) || !isNum(r.k) {
		return vAbort
	}
	switch op {
	case '/':
		return val{k: kDouble, f: asF64(l) / asF64(r)}
	case '%':
		return val{k: kDouble, f: math.Mod(asF64(l), asF64(r))}
	}
	switch {
	case isFloat(l.k) || isFloat(r.k):
		a, b := asF64(l), asF64(r)
		switch op {
		case '+':
			return val{k: kDouble, f: a + b}
		case '-':
			return val{k: kDouble, f: a - b}
		}
		return val{k: kDouble, f: a * b}
	case l.k == kLong || r.k == kLong:
		switch op {
		case '+':
			return val{k: kLong, i: l.i + r.i}
		case '-':
			return val{k: kLong, i: l.i - r.i}
		}
		return val{k: kLong, i: l.i * r.i}
	}
	a, b := int32(l.i), int32(r.i)
	switch op {
	case '+':
		return val{k: kInt, i: int64(a + b)}
	case '-':
		return val{k: kInt, i: int64(a - b)}
	}
	return val{k: kInt, i: int64(a * b)}
}

// likeNode is LIKE (NOT LIKE is NOT over it). A NULL is UNKNOWN; a value that
// is not a string is FALSE (ActiveMQ ComparisonExpression.LikeExpression).
type likeNode struct {
	x   node
	pat *likePattern
}

func (n *likeNode) eval(m *message.Message, r int32) val {
	v := n.x.eval(m, r)
	switch v.k {
	case kString:
		return boolVal(n.pat.match(v.s))
	case kNull, kAbort:
		return v
	}
	return vFalse
}

// inNode is [NOT] IN ('a', ...). A NULL or a value that is not a string is
// UNKNOWN for both IN and NOT IN (ActiveMQ UnaryExpression.createInExpression).
type inNode struct {
	x    node
	list []string
	set  map[string]struct{} // for long lists; nil otherwise
	not  bool
}

func (n *inNode) eval(m *message.Message, r int32) val {
	v := n.x.eval(m, r)
	if v.k == kAbort {
		return v
	}
	if v.k != kString {
		return vNull
	}
	found := false
	if n.set != nil {
		_, found = n.set[v.s]
	} else {
		for _, s := range n.list {
			if s == v.s {
				found = true
				break
			}
		}
	}
	return boolVal(found != n.not)
}
