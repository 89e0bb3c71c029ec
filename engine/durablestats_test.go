package engine_test

import (
	"fmt"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// TestEngineDurableSubsStats: a durable subscription to a pattern that
// spans the shards reports what it holds summed over them: dispatched up
// to its window, the rest pending, and its consumer's connection; once
// the consumer closes it is inactive and holds every message as pending.
func TestEngineDurableSubsStats(t *testing.T) {
	v := start(t, func(o *engine.Options) { o.DisableAdvisories = true })
	c := v.conn("watcher")
	s, _ := sub(t, c, engine.SubSpec{Destination: message.TopicDest("prices.>"), DurableName: "all", Prefetch: 2, AckMode: engine.AckIndividual})
	p := v.conn("")
	const n = 8
	for i := range n {
		send(t, p, msg(message.TopicDest(fmt.Sprintf("prices.%d", i)), "p", true))
	}
	one := func() engine.DurableSubStats {
		t.Helper()
		all := v.e.DurableSubsStats()
		if len(all) != 1 {
			t.Fatalf("%d durable subscriptions, want 1", len(all))
		}
		return all[0]
	}
	got := one()
	if !got.Active || got.ConnectionID != c.ID() || got.Dispatched != 2 || got.Pending != n-2 || got.Key != (engine.SubKey{ClientID: "watcher", Name: "all"}) {
		t.Errorf("active: %+v, want connection %s, 2 dispatched, %d pending", got, c.ID(), n-2)
	}
	if err := c.CloseSubscription(s); err != nil {
		t.Fatal(err)
	}
	got = one()
	if got.Active || got.ConnectionID != "" || got.Dispatched != 0 || got.Pending != n {
		t.Errorf("inactive: %+v, want no connection, 0 dispatched, %d pending", got, n)
	}
}
