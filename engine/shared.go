package engine

import (
	"sync"
	"sync/atomic"

	"wharf/engine/message"
)

// Shared subscriptions (MQTT 5 $share/<group>/<filter>): every message sent
// to a topic a share's pattern matches is also copied to the share's queue,
// whose consumers, the group's members, compete for it. ActiveMQ Classic
// has none; the copy is the one its virtual topics make for a consumer
// queue, with the pattern given by the protocol instead of by a name
// convention.
type shares struct {
	n  atomic.Int32 // len(m), read on every topic send
	mu sync.Mutex
	m  map[message.Destination]message.Destination // queue -> topic pattern
}

// AddShare makes queue receive a copy of every message sent to a topic that
// pattern (a topic, possibly a wildcard) matches. Adding a queue again
// replaces its pattern. Safe from any goroutine.
func (e *Engine) AddShare(pattern, queue message.Destination) {
	e.shares.mu.Lock()
	defer e.shares.mu.Unlock()
	if e.shares.m == nil {
		e.shares.m = map[message.Destination]message.Destination{}
	}
	e.shares.m[queue] = pattern
	e.shares.n.Store(int32(len(e.shares.m)))
}

// RemoveShare stops the copies to queue; the queue itself stays until it is
// removed. Safe from any goroutine.
func (e *Engine) RemoveShare(queue message.Destination) {
	e.shares.mu.Lock()
	defer e.shares.mu.Unlock()
	delete(e.shares.m, queue)
	e.shares.n.Store(int32(len(e.shares.m)))
}

// shareCopies returns the share queues a message sent to topic goes to.
func (e *Engine) shareCopies(topic message.Destination) []message.Destination {
	if e.shares.n.Load() == 0 || topic.Type != message.Topic {
		return nil
	}
	e.shares.mu.Lock()
	defer e.shares.mu.Unlock()
	var out []message.Destination
	for q, p := range e.shares.m {
		if p == topic || p.Matches(topic) {
			out = append(out, q)
		}
	}
	return out
}
