//go:build !race

package openwire

import "testing"

// owIdleBudgetBytes is the heap an idle OpenWire connection may hold,
// broker side (transport, gnet, engine and session together, after
// WireFormatInfo, ConnectionInfo and SessionInfo; issue 18). Measured
// 4,880 bytes (5,550 while the session made its eight maps up front and
// kept its encode buffer; 5,300 with the maps made lazily); the
// margin is for the measurement's noise.
const owIdleBudgetBytes = 5100

// An idle connection stays within its budget: a regression that adds to
// every connection fails here, not only in a benchmark. (Not under the
// race detector, which adds to every allocation.)
func TestNoRaceOpenWireIdleConnBudget(t *testing.T) {
	per, closeAll := owIdleConns(t, 2000)
	closeAll()
	t.Logf("%.0f heap bytes per idle connection", per)
	if per > owIdleBudgetBytes {
		t.Errorf("an idle connection holds %.0f heap bytes, over the budget of %d", per, owIdleBudgetBytes)
	}
}
