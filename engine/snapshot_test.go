package engine_test

import (
	"fmt"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// TestEngineAllStatsMatchesStats: AllStats reads, in one visit per shard,
// what Stats reads destination by destination, with the producers each
// destination has; ConnectionsByProtocol counts the open connections.
func TestEngineAllStatsMatchesStats(t *testing.T) {
	v := start(t, func(o *engine.Options) { o.DisableAdvisories = true })
	p, err := v.e.Connect(engine.Credentials{Protocol: "stomp"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	want := map[message.Destination]int{}
	for i := range 12 {
		d := message.QueueDest(fmt.Sprintf("q.%d", i))
		if i%3 == 0 {
			d = message.TopicDest(fmt.Sprintf("t.%d", i))
		}
		for range i + 1 {
			send(t, p, msg(d, "x", true))
		}
		want[d] = i + 1
	}
	prod := p.AddProducer(message.QueueDest("q.1"))
	defer p.RemoveProducer(prod)

	all := v.e.AllStats()
	if len(all) != len(want) {
		t.Fatalf("AllStats has %d destinations, want %d", len(all), len(want))
	}
	for _, s := range all {
		n, ok := want[s.Destination]
		if !ok {
			t.Errorf("AllStats has %s, which was never sent to", s.Destination)
			continue
		}
		if s.Stats != v.e.Stats(s.Destination) || s.Stats.EnqueueCount != int64(n) {
			t.Errorf("%s: AllStats %+v, Stats %+v, want %d enqueued", s.Destination, s.Stats, v.e.Stats(s.Destination), n)
		}
		wantProducers := 0
		if s.Destination == message.QueueDest("q.1") {
			wantProducers = 1
		}
		if s.Producers != wantProducers {
			t.Errorf("%s: %d producers, want %d", s.Destination, s.Producers, wantProducers)
		}
	}

	c, err := v.e.Connect(engine.Credentials{Protocol: "mqtt"})
	if err != nil {
		t.Fatal(err)
	}
	got := v.e.ConnectionsByProtocol()
	if got["stomp"] != 1 || got["mqtt"] != 1 || len(got) != 2 {
		t.Errorf("ConnectionsByProtocol = %v, want stomp 1, mqtt 1", got)
	}
	c.Close()
	if got := v.e.ConnectionsByProtocol(); got["mqtt"] != 0 {
		t.Errorf("after close: %v, want no mqtt connection", got)
	}
}
