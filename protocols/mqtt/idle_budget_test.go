//go:build !race

package mqtt

import "testing"

// idleBudgetBytes is the heap an idle MQTT connection may hold, broker side
// (transport, gnet, engine and session together; issue 18). 1,400 bytes of
// heap make about 2 KiB of resident memory once the collector's headroom
// is counted (bench/scale); the margin is for the measurement's noise.
const idleBudgetBytes = 1600

// An idle connection stays within its budget: a regression that adds to
// every connection fails here, not only in a benchmark. (Not under the
// race detector, which adds to every allocation.)
func TestNoRaceMQTTIdleSessionBudget(t *testing.T) {
	for _, ka := range []uint16{0, 60} {
		per, closeAll := idleConns(t, 2000, ka)
		closeAll()
		t.Logf("keep-alive %d: %.0f heap bytes per idle connection", ka, per)
		if per > idleBudgetBytes {
			t.Errorf("keep-alive %d: an idle connection holds %.0f heap bytes, over the budget of %d", ka, per, idleBudgetBytes)
		}
	}
}
