package selector

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// class is what ActiveMQ's parser knows statically about an expression; its
// parse-time checks (asBooleanExpression, checkLessThanOperand,
// checkEqualOperand, createInFilter) are decided on it.
type class uint8

const (
	cConstNum  class = iota // numeric literal (ConstantExpression)
	cConstStr               // string literal
	cConstBool              // TRUE, FALSE, NULL (BooleanConstantExpression)
	cProp                   // identifier (PropertyExpression)
	cBool                   // comparison, LIKE, IN, NOT, AND, OR (BooleanExpression)
	cOther                  // arithmetic, negation
)

// expr is a parsed expression with what the checks need.
type expr struct {
	n        node
	cls      class
	c        val // the value, for literals
	off, end int // byte offsets of its text
	h        int // height of the tree below it, to bound eval recursion
	bigMin   bool
}

// maxHeight bounds the expression tree's height, and so the evaluator's
// recursion; chains of AND or OR count once.
const maxHeight = 4 * MaxDepth

type parser struct {
	src     string
	toks    []token
	p       int // index of the current token
	depth   int // current nesting of parentheses and prefix operators
	convert bool
}

func (p *parser) tok() token       { return p.toks[p.p] }
func (p *parser) peek(k int) token { return p.toks[min(p.p+k, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.p]
	if p.p < len(p.toks)-1 {
		p.p++
	}
	return t
}

func (p *parser) errAt(off int, kind error, msg string) *SyntaxError {
	return &SyntaxError{Pos: runePos(p.src, off), Msg: msg, kind: kind}
}

// describe names a token for an error message.
func (p *parser) describe(t token) string {
	if t.typ == tEOF {
		return "end of selector"
	}
	text := p.src[t.off:t.end]
	if utf8.RuneCountInString(text) > 40 {
		r := []rune(text)
		text = string(r[:37]) + "..."
	}
	return strconv.Quote(text)
}

func (p *parser) expected(what string) *SyntaxError {
	t := p.tok()
	return p.errAt(t.off, ErrSyntax, "expected "+what+" but found "+p.describe(t))
}

func (p *parser) text(e expr) string {
	t := p.src[e.off:e.end]
	if utf8.RuneCountInString(t) > 40 {
		t = string([]rune(t)[:37]) + "..."
	}
	return t
}

// mk builds an expression over kids, checking the tree height.
func (p *parser) mk(n node, cls class, off, end int, kids ...expr) (expr, *SyntaxError) {
	h := 0
	for _, k := range kids {
		h = max(h, k.h)
	}
	h++
	if h > maxHeight {
		return expr{}, p.errAt(off, ErrTooComplex, "expression nested deeper than "+strconv.Itoa(maxHeight)+" levels")
	}
	return expr{n: n, cls: cls, off: off, end: end, h: h}, nil
}

// asBool is ActiveMQ SelectorParser.asBooleanExpression: boolean expressions
// pass, an identifier becomes a boolean cast, anything else is an error.
func (p *parser) asBool(e expr) (expr, *SyntaxError) {
	switch e.cls {
	case cBool, cConstBool:
		return e, nil
	case cProp:
		return p.mk(&castNode{x: e.n}, cBool, e.off, e.end, e)
	}
	return expr{}, p.errAt(e.off, ErrSyntax, "expected a boolean expression but found "+strconv.Quote(p.text(e)))
}

func (p *parser) parseSelector() (expr, *SyntaxError) {
	e, err := p.parseOr()
	if err != nil {
		return e, err
	}
	if p.tok().typ != tEOF {
		return e, p.expected("an operator or end of selector")
	}
	return p.asBool(e)
}

func (p *parser) parseOr() (expr, *SyntaxError) {
	return p.parseLogic(tOr, (*parser).parseAnd)
}

func (p *parser) parseAnd() (expr, *SyntaxError) {
	return p.parseLogic(tAnd, (*parser).parseEquality)
}

// parseLogic parses operand (op operand)* into one n-ary AND or OR node.
func (p *parser) parseLogic(op tokType, operand func(*parser) (expr, *SyntaxError)) (expr, *SyntaxError) {
	l, err := operand(p)
	if err != nil || p.tok().typ != op {
		return l, err
	}
	if l, err = p.asBool(l); err != nil {
		return l, err
	}
	kids := []expr{l}
	for p.tok().typ == op {
		p.next()
		r, err := operand(p)
		if err != nil {
			return r, err
		}
		if r, err = p.asBool(r); err != nil {
			return r, err
		}
		kids = append(kids, r)
	}
	// ActiveMQ LogicExpression.createAND/createOR append to an existing
	// chain of the same operator, even a parenthesised one.
	var xs []node
	for _, k := range kids {
		switch n := k.n.(type) {
		case *andNode:
			if op == tAnd {
				xs = append(xs, n.xs...)
				continue
			}
		case *orNode:
			if op == tOr {
				xs = append(xs, n.xs...)
				continue
			}
		}
		xs = append(xs, k.n)
	}
	var n node = &orNode{xs: xs}
	if op == tAnd {
		n = &andNode{xs: xs}
	}
	return p.mk(n, cBool, l.off, kids[len(kids)-1].end, kids...)
}

// parseEquality: comparison ( = comparison | <> comparison | IS [NOT] NULL )*.
func (p *parser) parseEquality() (expr, *SyntaxError) {
	l, err := p.parseComparison()
	if err != nil {
		return l, err
	}
	for {
		switch p.tok().typ {
		case tEq, tNe:
			ne := p.next().typ == tNe
			r, err := p.parseComparison()
			if err != nil {
				return r, err
			}
			if l, err = p.mkEqual(l, r, ne); err != nil {
				return l, err
			}
		case tIs:
			p.next()
			not := false
			if p.tok().typ == tNot {
				p.next()
				not = true
			}
			if p.tok().typ != tNull {
				if not {
					return l, p.expected("NULL")
				}
				return l, p.expected("NULL or NOT NULL")
			}
			end := p.next().end
			var n node = &isNullNode{x: l.n}
			if not {
				n = &notNode{x: n}
			}
			if l, err = p.mk(n, cBool, l.off, end, l); err != nil {
				return l, err
			}
		default:
			return l, nil
		}
	}
}

// mkEqual builds l = r (or l <> r) after ActiveMQ's checks:
// checkEqualOperand rejects a NULL literal on either side, and
// checkEqualOperandCompatability rejects TRUE/FALSE literal = another kind of
// literal.
func (p *parser) mkEqual(l, r expr, ne bool) (expr, *SyntaxError) {
	for _, e := range [2]expr{l, r} {
		if e.cls == cConstBool && e.c.k == kNull {
			return expr{}, p.errAt(e.off, ErrSyntax, "NULL cannot be compared with = or <>; use IS NULL")
		}
	}
	if l.cls == cConstBool && (r.cls == cConstNum || r.cls == cConstStr) {
		return expr{}, p.errAt(l.off, ErrSyntax, strconv.Quote(p.text(l))+" cannot be compared with "+strconv.Quote(p.text(r)))
	}
	var n node = &eqNode{l: l.n, r: r.n, convert: p.convert}
	if ne {
		n = &notNode{x: n}
	}
	return p.mk(n, cBool, l.off, r.end, l, r)
}

// checkOrdered is ActiveMQ checkLessThanOperand: <, <=, >, >= and BETWEEN
// take no string, boolean or NULL literal and no boolean expression.
func (p *parser) checkOrdered(e expr, op string) *SyntaxError {
	switch e.cls {
	case cConstStr, cConstBool, cBool:
		return p.errAt(e.off, ErrSyntax, strconv.Quote(p.text(e))+" cannot be compared with "+op+" (only numbers and identifiers can)")
	}
	return nil
}

func (p *parser) mkCmp(op int, l, r expr) (expr, *SyntaxError) {
	sym := [...]string{opLt: "<", opLe: "<=", opGt: ">", opGe: ">="}[op]
	if err := p.checkOrdered(l, sym); err != nil {
		return expr{}, err
	}
	if err := p.checkOrdered(r, sym); err != nil {
		return expr{}, err
	}
	return p.mk(&cmpNode{op: op, l: l.n, r: r.n, convert: p.convert}, cBool, l.off, r.end, l, r)
}

// parseComparison: add ( (<|<=|>|>=) add | [NOT] LIKE | [NOT] BETWEEN |
// [NOT] IN )*.
func (p *parser) parseComparison() (expr, *SyntaxError) {
	l, err := p.parseAdd()
	if err != nil {
		return l, err
	}
	for {
		t := p.tok().typ
		not := false
		if t == tNot {
			// LOOKAHEAD(2) in the grammar: NOT belongs here only before
			// LIKE, BETWEEN or IN.
			switch p.peek(1).typ {
			case tLike, tBetween, tIn:
				p.next()
				not = true
				t = p.tok().typ
			default:
				return l, nil
			}
		}
		switch t {
		case tLt, tLe, tGt, tGe:
			op := map[tokType]int{tLt: opLt, tLe: opLe, tGt: opGt, tGe: opGe}[p.next().typ]
			r, err := p.parseAdd()
			if err != nil {
				return r, err
			}
			if l, err = p.mkCmp(op, l, r); err != nil {
				return l, err
			}
		case tLike:
			if l, err = p.parseLike(l, not); err != nil {
				return l, err
			}
		case tBetween:
			if l, err = p.parseBetween(l, not); err != nil {
				return l, err
			}
		case tIn:
			if l, err = p.parseIn(l, not); err != nil {
				return l, err
			}
		default:
			return l, nil
		}
	}
}

func (p *parser) stringLiteral(what string) (string, token, *SyntaxError) {
	t := p.tok()
	if t.typ != tString {
		return "", t, p.expected(what)
	}
	p.next()
	return unquote(p.src[t.off:t.end]), t, nil
}

func (p *parser) parseLike(l expr, not bool) (expr, *SyntaxError) {
	p.next() // LIKE
	pat, t, err := p.stringLiteral("a string literal pattern after LIKE")
	if err != nil {
		return expr{}, err
	}
	end := t.end
	esc := rune(-1)
	if p.tok().typ == tEscape {
		p.next()
		e, et, err := p.stringLiteral("a string literal after ESCAPE")
		if err != nil {
			return expr{}, err
		}
		// ActiveMQ createLike: the escape must be one (UTF-16) character.
		r, w := utf8.DecodeRuneInString(e)
		if w == 0 || w != len(e) || r > 0xFFFF {
			return expr{}, p.errAt(et.off, ErrSyntax, "ESCAPE must be exactly one character but found "+strconv.Quote(p.src[et.off:et.end]))
		}
		esc = r
		end = et.end
	}
	var n node = &likeNode{x: l.n, pat: compileLike(pat, esc)}
	if not {
		n = &notNode{x: n}
	}
	return p.mk(n, cBool, l.off, end, l)
}

// parseBetween builds ActiveMQ's expansions: x BETWEEN a AND b is
// x >= a AND x <= b; x NOT BETWEEN a AND b is x < a OR x > b (so a type
// mismatch is FALSE for both, not TRUE for NOT BETWEEN).
func (p *parser) parseBetween(v expr, not bool) (expr, *SyntaxError) {
	p.next() // BETWEEN
	lo, err := p.parseAdd()
	if err != nil {
		return lo, err
	}
	if p.tok().typ != tAnd {
		return lo, p.expected("AND")
	}
	p.next()
	hi, err := p.parseAdd()
	if err != nil {
		return hi, err
	}
	opLo, opHi := opGe, opLe
	if not {
		opLo, opHi = opLt, opGt
	}
	a, err := p.mkCmp(opLo, v, lo)
	if err != nil {
		return a, err
	}
	b, err := p.mkCmp(opHi, v, hi)
	if err != nil {
		return b, err
	}
	var n node = &andNode{xs: []node{a.n, b.n}}
	if not {
		n = &orNode{xs: []node{a.n, b.n}}
	}
	return p.mk(n, cBool, v.off, hi.end, a, b)
}

// parseIn parses IN ('a', 'b', ...). ActiveMQ createInFilter: the left side
// must be an identifier and the list holds string literals only.
func (p *parser) parseIn(l expr, not bool) (expr, *SyntaxError) {
	if l.cls != cProp {
		return expr{}, p.errAt(l.off, ErrSyntax, "IN needs an identifier on its left but found "+strconv.Quote(p.text(l)))
	}
	p.next() // IN
	if p.tok().typ != tLParen {
		return expr{}, p.expected("'(' after IN")
	}
	p.next()
	var list []string
	for {
		s, _, err := p.stringLiteral("a string literal in the IN list")
		if err != nil {
			return expr{}, err
		}
		list = append(list, s)
		if p.tok().typ == tComma {
			p.next()
			continue
		}
		if p.tok().typ != tRParen {
			return expr{}, p.expected("',' or ')'")
		}
		break
	}
	end := p.next().end
	n := &inNode{x: l.n, list: list, not: not}
	if len(list) > 8 {
		n.set = make(map[string]struct{}, len(list))
		for _, s := range list {
			n.set[s] = struct{}{}
		}
	}
	return p.mk(n, cBool, l.off, end, l)
}

func (p *parser) parseAdd() (expr, *SyntaxError) {
	l, err := p.parseMult()
	if err != nil {
		return l, err
	}
	for t := p.tok().typ; t == tPlus || t == tMinus; t = p.tok().typ {
		p.next()
		r, err := p.parseMult()
		if err != nil {
			return r, err
		}
		op := byte('+')
		if t == tMinus {
			op = '-'
		}
		if l, err = p.mk(&arithNode{op: op, l: l.n, r: r.n}, cOther, l.off, r.end, l, r); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (p *parser) parseMult() (expr, *SyntaxError) {
	l, err := p.parseUnary()
	if err != nil {
		return l, err
	}
	for t := p.tok().typ; t == tStar || t == tSlash || t == tPercent; t = p.tok().typ {
		p.next()
		r, err := p.parseUnary()
		if err != nil {
			return r, err
		}
		op := map[tokType]byte{tStar: '*', tSlash: '/', tPercent: '%'}[t]
		if l, err = p.mk(&arithNode{op: op, l: l.n, r: r.n}, cOther, l.off, r.end, l, r); err != nil {
			return l, err
		}
	}
	return l, nil
}

// parseUnary: + unary | - unary | NOT unary | primary.
//
// As in ActiveMQ SelectorParser.jj, NOT is a unary operator that binds
// tighter than comparison: `NOT a = 1` is `(NOT a) = 1`, which compares a
// boolean with a number and is never TRUE. Write `NOT (a = 1)`.
func (p *parser) parseUnary() (expr, *SyntaxError) {
	p.depth++
	defer func() { p.depth-- }()
	t := p.tok()
	if p.depth > MaxDepth {
		return expr{}, p.errAt(t.off, ErrTooComplex, "selector nested deeper than "+strconv.Itoa(MaxDepth)+" levels")
	}
	switch t.typ {
	case tPlus:
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return x, err
		}
		// Unary plus is dropped: +a is still an identifier, +'s' a string
		// literal, as in ActiveMQ.
		x.off = t.off
		return x, nil
	case tMinus:
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return x, err
		}
		if x.bigMin {
			// ActiveMQ UnaryExpression.negate: -9223372036854775808 is the
			// long Long.MIN_VALUE.
			v := val{k: kLong, i: math.MinInt64}
			return expr{n: &constNode{v: v}, cls: cOther, c: v, off: t.off, end: x.end, h: 1}, nil
		}
		return p.mk(&negNode{x: x.n}, cOther, t.off, x.end, x)
	case tNot:
		p.next()
		x, err := p.parseUnary()
		if err != nil {
			return x, err
		}
		if x, err = p.asBool(x); err != nil {
			return x, err
		}
		return p.mk(&notNode{x: x.n}, cBool, t.off, x.end, x)
	case tXPath, tXQuery:
		// DEVIATION: ActiveMQ evaluates XPATH '...' and XQUERY '...' against
		// an XML body; Wharf does not.
		return expr{}, p.errAt(t.off, ErrUnsupported, strings.ToUpper(p.src[t.off:t.end])+" selectors are not supported")
	case tIdent:
		if p.peek(1).typ == tLParen {
			// DEVIATION: ActiveMQ's function calls (INLIST, MAKELIST, REGEX,
			// REPLACE, SPLIT) are not implemented.
			return expr{}, p.errAt(t.off, ErrUnsupported, "function calls are not supported but found "+strconv.Quote(p.src[t.off:t.end]+"("))
		}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() (expr, *SyntaxError) {
	t := p.tok()
	lit := func(v val, cls class) (expr, *SyntaxError) {
		p.next()
		return expr{n: &constNode{v: v}, cls: cls, c: v, off: t.off, end: t.end, h: 1}, nil
	}
	text := p.src[t.off:t.end]
	switch t.typ {
	case tIdent:
		p.next()
		return expr{n: &propNode{name: text}, cls: cProp, off: t.off, end: t.end, h: 1}, nil
	case tString:
		return lit(val{k: kString, s: unquote(text)}, cConstStr)
	case tTrue:
		return lit(vTrue, cConstBool)
	case tFalse:
		return lit(vFalse, cConstBool)
	case tNull:
		return lit(vNull, cConstBool)
	case tDecimal:
		digits := strings.TrimRight(text, "lL")
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			// ActiveMQ keeps an out-of-range decimal as a BigDecimal, which
			// compares with nothing except after negation to Long.MIN_VALUE.
			// DEVIATION: Wharf makes it a double (and -2^63 a long).
			f, _ := strconv.ParseFloat(digits, 64)
			e, serr := lit(val{k: kDouble, f: f}, cConstNum)
			e.bigMin = digits == "9223372036854775808"
			return e, serr
		}
		// ActiveMQ ConstantExpression.createFromDecimal: an int when it fits,
		// whatever the L suffix says, else a long.
		return lit(intOrLong(n), cConstNum)
	case tHex, tOctal:
		digits, base := text, 8
		if t.typ == tHex {
			digits, base = text[2:], 16
		}
		n, err := strconv.ParseInt(digits, base, 64)
		if err != nil {
			// ActiveMQ: Long.parseLong throws, the selector is invalid.
			return expr{}, p.errAt(t.off, ErrSyntax, "numeric literal "+strconv.Quote(text)+" does not fit in a long")
		}
		return lit(intOrLong(n), cConstNum)
	case tFloat:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !isRangeErr(err) {
			return expr{}, p.errAt(t.off, ErrSyntax, "bad numeric literal "+strconv.Quote(text))
		}
		return lit(val{k: kDouble, f: f}, cConstNum)
	case tLParen:
		p.next()
		x, err := p.parseOr()
		if err != nil {
			return x, err
		}
		if p.tok().typ != tRParen {
			return x, p.expected("')'")
		}
		// Parentheses keep the class: (a) is still an identifier.
		p.next()
		return x, nil
	}
	return expr{}, p.expected("an expression")
}

func intOrLong(n int64) val {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return val{k: kInt, i: n}
	}
	return val{k: kLong, i: n}
}
