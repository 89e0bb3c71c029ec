package selector

import "unicode/utf8"

// likeOp is one element of a compiled LIKE pattern.
type likeOp struct {
	kind uint8 // likeLit, likeOne or likeAny
	r    rune  // the literal character, for likeLit
}

const (
	likeLit = iota // one literal character
	likeOne        // '_': exactly one character
	likeAny        // '%': any run of characters, possibly empty
)

// likePattern is a LIKE pattern compiled once at parse time. It matches the
// whole string, as ActiveMQ's \A...\z regular expression does; '%' and '_'
// also match line breaks (Pattern.DOTALL), and every other character,
// regular-expression metacharacters included, matches only itself.
type likePattern struct {
	ops []likeOp
}

// compileLike compiles pattern with escape character esc (-1 for none).
// ActiveMQ ComparisonExpression.LikeExpression: the escape character escapes
// only a following '_', '%' or another escape character; anywhere else
// (including at the end) it stands for itself.
func compileLike(pattern string, esc rune) *likePattern {
	p := &likePattern{}
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if esc >= 0 && c == esc && i+1 < len(rs) && (rs[i+1] == '_' || rs[i+1] == '%' || rs[i+1] == esc) {
			i++
			p.ops = append(p.ops, likeOp{kind: likeLit, r: rs[i]})
			continue
		}
		switch c {
		case '%':
			if n := len(p.ops); n > 0 && p.ops[n-1].kind == likeAny {
				continue
			}
			p.ops = append(p.ops, likeOp{kind: likeAny})
		case '_':
			p.ops = append(p.ops, likeOp{kind: likeOne})
		default:
			p.ops = append(p.ops, likeOp{kind: likeLit, r: c})
		}
	}
	return p
}

// match reports whether s matches the whole pattern. It is the classic
// wildcard matcher that backtracks only to the latest '%', so it runs in
// O(len(s) * len(pattern)) at worst and never allocates.
func (p *likePattern) match(s string) bool {
	ops := p.ops
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(ops) {
			op := ops[pi]
			if op.kind == likeAny {
				starP, starS = pi, si
				pi++
				continue
			}
			r, w := utf8.DecodeRuneInString(s[si:])
			if op.kind == likeOne || op.r == r {
				pi++
				si += w
				continue
			}
		}
		if starP < 0 {
			return false
		}
		_, w := utf8.DecodeRuneInString(s[starS:])
		starS += w
		pi, si = starP+1, starS
	}
	for pi < len(ops) && ops[pi].kind == likeAny {
		pi++
	}
	return pi == len(ops)
}
