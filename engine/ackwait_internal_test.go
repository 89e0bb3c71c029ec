package engine

import "testing"

// Consumers that ack late make the writer stop waiting for their acks,
// and it tries again now and then; prompt acks keep it waiting.
func TestAckWaitsBackOff(t *testing.T) {
	var a ackWaits
	if !a.worth() {
		t.Fatal("a new writer does not wait for acks")
	}
	a.record(true, false) // a wait that timed out
	waits := 0
	for range 20 {
		if a.worth() {
			waits++
			a.record(true, false) // late consumers: every wait times out
		} else {
			a.record(false, false)
		}
	}
	if waits < 3 || waits > 5 {
		t.Fatalf("with late acks the writer waited in %d of 20 batches, want about one in five", waits)
	}
	for !a.worth() {
		a.record(false, false)
	}
	for range 20 {
		if !a.worth() {
			t.Fatal("prompt acks: the writer stopped waiting")
		}
		a.record(true, true)
	}
	if a.score != 16 {
		t.Fatalf("score %d after a run of hits, want the cap 16", a.score)
	}
	// Capped: a run of hits buys four misses' worth of patience.
	for range 4 {
		a.record(true, false)
	}
	if !a.worth() {
		t.Fatal("four misses after many hits stopped the waits")
	}
	a.record(true, false)
	if a.worth() {
		t.Fatal("a fifth miss in a row did not stop the waits")
	}
}
