package engine

// DurableSubStats is a durable subscription with what it holds, as
// ActiveMQ's DurableSubscriptionViewMBean reports it (the web console's
// subscribers.jsp feed reads these).
type DurableSubStats struct {
	DurableSubInfo
	// ConnectionID is the id of the connection whose consumer is
	// attached; "" while the subscription is inactive.
	ConnectionID string
	// SubCounters: Pending, the messages kept for the subscription and
	// not yet dispatched (PendingQueueSize); Dispatched, those dispatched
	// to its consumer and not yet acknowledged (DispatchedQueueSize); and
	// its counters since the broker started.
	SubCounters
}

// DurableSubsStats returns every durable subscription, active or not, with
// its pending and dispatched counts, in no particular order: one visit to
// each shard, as AllStats. Safe from any goroutine.
func (e *Engine) DurableSubsStats() []DurableSubStats {
	e.mu.Lock()
	out := make([]DurableSubStats, 0, len(e.durables))
	at := make(map[SubKey]int, len(e.durables))
	for k, r := range e.durables {
		st := DurableSubStats{DurableSubInfo: DurableSubInfo{DurableSub: r.sub, Active: r.active != nil}}
		if r.active != nil {
			st.ConnectionID = r.active.conn.id
		}
		at[k] = len(out)
		out = append(out, st)
	}
	e.mu.Unlock()
	// Counted after e.mu is released: a shard may take e.mu itself. A
	// subscription to a pattern has a part on every shard it spans.
	counts := make([]*durableCountsCmd, len(e.shards))
	e.request(nil, func(s *shard) command {
		counts[s.idx] = &durableCountsCmd{}
		return command{op: opDurableCounts, ctl: counts[s.idx]}
	})
	for _, c := range counts {
		for k, n := range c.n {
			if i, ok := at[k]; ok {
				out[i].SubCounters = out[i].SubCounters.plus(n)
			}
		}
	}
	return out
}
