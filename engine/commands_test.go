package engine

import (
	"strings"
	"testing"
)

// TestEngineCommandOpNames: every op has a name of its own, so that a
// logged or scripted turn never shows a bare number.
func TestEngineCommandOpNames(t *testing.T) {
	seen := map[string]cmdOp{}
	for op := opSend; op <= opTestFn; op++ {
		name := op.String()
		if strings.HasPrefix(name, "op(") {
			t.Errorf("op %d has no name", op)
		}
		if prev, dup := seen[name]; dup {
			t.Errorf("ops %d and %d are both %q", prev, op, name)
		}
		seen[name] = op
	}
	if got := cmdOp(0).String(); got != "op(0)" {
		t.Errorf("the zero op: got %q, want op(0)", got)
	}
}
