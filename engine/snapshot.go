package engine

import (
	"sync/atomic"

	"wharf/engine/message"
)

// DestinationSnapshot is one destination's counters in AllStats.
type DestinationSnapshot struct {
	Destination message.Destination
	Stats       DestinationStats
	// Producers are the producers registered on the destination
	// (Conn.AddProducer: OpenWire's; the other protocols' are anonymous).
	Producers int
}

// AllStats reads the counters of every destination that exists now with
// one visit to each shard, where Stats costs a visit per destination: a
// monitoring scrape of 10,000 destinations stays one round trip per
// shard. Nothing is counted on the message path for it; the shards copy
// what they already keep. The order is unspecified. Safe from any
// goroutine.
func (e *Engine) AllStats() []DestinationSnapshot {
	producers := map[message.Destination]int{}
	e.mu.Lock()
	for p := range e.producers {
		if !p.Destination.IsZero() {
			producers[p.Destination]++
		}
	}
	e.mu.Unlock()
	parts := make([]*snapshotCmd, len(e.shards))
	e.request(nil, func(s *shard) command {
		parts[s.idx] = &snapshotCmd{producers: producers}
		return command{op: opSnapshot, ctl: parts[s.idx]}
	})
	var out []DestinationSnapshot
	for _, p := range parts {
		out = append(out, p.out...)
	}
	return out
}

// ConnectionsByProtocol counts the connections open now by
// Credentials.Protocol ("stomp", "mqtt", "amqp", "openwire"; "" for a
// connection whose protocol did not say). Safe from any goroutine.
func (e *Engine) ConnectionsByProtocol() map[string]int {
	n := map[string]int{}
	e.mu.Lock()
	for c := range e.conns {
		n[c.protocol]++
	}
	e.mu.Unlock()
	return n
}

// CountHandshakeTimeout records that a connection of protocol ("stomp",
// "mqtt", "amqp", "openwire") was closed because it did not finish its
// handshake (CONNECT, Open, WireFormatInfo) within the connector's connect
// timeout: a slowloris client, or one that connected and said nothing.
// Safe from any goroutine.
func (e *Engine) CountHandshakeTimeout(protocol string) {
	n, ok := e.handshakeTimeouts.Load(protocol)
	if !ok {
		n, _ = e.handshakeTimeouts.LoadOrStore(protocol, new(atomic.Int64))
	}
	n.(*atomic.Int64).Add(1)
}

// HandshakeTimeouts returns, by protocol, how many connections
// CountHandshakeTimeout counted since the engine started. Safe from any
// goroutine.
func (e *Engine) HandshakeTimeouts() map[string]int64 {
	out := map[string]int64{}
	e.handshakeTimeouts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}
