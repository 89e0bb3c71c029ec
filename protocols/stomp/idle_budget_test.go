//go:build !race

package stomp

import "testing"

// stompIdleBudgetBytes is the heap an idle STOMP connection (no
// heart-beats, as `wharf bench` connects) may hold, broker side: transport,
// gnet, engine and session together (issue 18). It held 2.2 KB with its
// six maps made at connect and its own decoder, 1.95 KB with the maps made
// on first use, 1.57 KB with the decoder pooled between frames too; the
// margin is for the measurement's noise.
const stompIdleBudgetBytes = 1800

// An idle connection stays within its budget: a regression that adds to
// every connection fails here, not only in a benchmark. (Not under the
// race detector, which adds to every allocation.)
func TestNoRaceSTOMPIdleSessionBudget(t *testing.T) {
	per, closeAll := stompIdleConns(t, 2000, "0,0")
	closeAll()
	t.Logf("%.0f heap bytes per idle connection", per)
	if per > stompIdleBudgetBytes {
		t.Errorf("an idle connection holds %.0f heap bytes, over the budget of %d", per, stompIdleBudgetBytes)
	}
}
