package cluster

import (
	"sync"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// Duplicate suppression, as ActiveMQ 5.17's
// DemandForwardingBridgeSupport.duplicateSuppressionIsRequired does it.
//
// With several paths between brokers (a triangle A->B, A->C, B->C with
// networkTTL 2, say), one consumer on C reaches A as demand twice: from C
// directly and from B's network subscription for it. Served twice, every
// topic message published on A reaches C's consumer twice, and a queue
// has two network consumers for one remote consumer. A bridge whose
// connector suppresses duplicates for the destination's kind
// (suppressDuplicateTopicSubscriptions, true by default;
// suppressDuplicateQueueSubscriptions, false) compares the remote
// consumer's original consumers (its networkConsumerPath plus its own id)
// with those every bridge of this broker already serves on the same
// destination: on a match the demand with the higher priority wins
// (ActiveMQ's rule: the existing one on a tie), so with
// decreaseNetworkConsumerPriority the shorter path is kept; the loser is
// not served (or, when it was the existing one, its bridge drops it).
//
// Each local network subscription advertises the original consumers of
// the consumer that made it (engine.NetworkSpec.ConsumerPath, ConsumerInfo
// networkConsumerPath on the wire), so a broker further on can match too.
//
// The registry is per engine and shared by all its bridges; dupRegistry.mu
// is taken before any bridgeConn.lmu (ActiveMQ serializes the same work on
// one broker-wide lock).

// claim is one remote consumer a bridge serves, with its origins.
type claim struct {
	bc       *bridgeConn
	consumer string
	dest     string
	origins  []string
	priority int8
}

type dupRegistry struct {
	mu     sync.Mutex
	claims map[string][]*claim // by destination
}

var registries sync.Map // *engine.Engine -> *dupRegistry

func registryOf(e *engine.Engine) *dupRegistry {
	r, _ := registries.LoadOrStore(e, &dupRegistry{claims: map[string][]*claim{}})
	return r.(*dupRegistry)
}

// suppresses is isDuplicateSuppressionOff negated: whether the
// connector suppresses duplicates on d's kind.
func (bc *bridgeConn) suppresses(d message.Destination) bool {
	nc := bc.b.nc
	if d.Type.IsTopic() {
		return nc.SuppressDuplicateTopicSubscriptions
	}
	return nc.SuppressDuplicateQueueSubscriptions
}

// origins are the original consumers a remote consumer stands for.
func origins(ci *wire.ConsumerInfo) []string {
	return append(marshal.ConsumerPathToEngine(ci.NetworkConsumerPath), ci.ConsumerId.String())
}

// demandPriority is the priority of the local subscription serving a
// remote consumer of priority remote whose demand came along path.
func (bc *bridgeConn) demandPriority(remote int8, path []string) int8 {
	if !bc.b.nc.DecreaseNetworkConsumerPriority {
		return remote
	}
	// DemandForwardingBridgeSupport: the base, lowered further by
	// the hops of demand that came from further away.
	p := int8(networkConsumerPriority)
	if len(path) > 1 {
		p -= int8(len(path) + 1)
	}
	return p
}

// checkDuplicate decides a candidate demand against the claims (r.mu
// held): false means suppress it. A weaker existing claim is dropped
// from its bridge.
func (r *dupRegistry) checkDuplicate(bc *bridgeConn, c *claim) bool {
	for _, ex := range r.claims[c.dest] {
		if ex.bc == bc && ex.consumer == c.consumer {
			continue // a replay of the same consumer
		}
		if !overlaps(ex.origins, c.origins) {
			continue
		}
		if ex.priority >= c.priority {
			bc.log.Info("network demand suppressed", "dest", c.dest, "consumer", c.consumer,
				"priority", c.priority, "served_by", ex.bc.remoteName, "served_priority", ex.priority)
			return false
		}
		ex.bc.log.Info("network demand replaced", "dest", c.dest, "consumer", ex.consumer,
			"priority", ex.priority, "by", bc.remoteName, "by_priority", c.priority)
		r.unclaim(ex.bc, ex.consumer)
		ex.bc.removeDemandLocked(ex.consumer)
		return true
	}
	return true
}

// claim records c (r.mu held); a replayed consumer's claim is kept once.
func (r *dupRegistry) claim(c *claim) {
	for _, ex := range r.claims[c.dest] {
		if ex.bc == c.bc && ex.consumer == c.consumer {
			return
		}
	}
	r.claims[c.dest] = append(r.claims[c.dest], c)
}

// unclaim forgets bc's claim for consumer (r.mu held).
func (r *dupRegistry) unclaim(bc *bridgeConn, consumer string) {
	for dest, cs := range r.claims {
		for i, c := range cs {
			if c.bc == bc && c.consumer == consumer {
				cs = append(cs[:i], cs[i+1:]...)
				if len(cs) == 0 {
					delete(r.claims, dest)
				} else {
					r.claims[dest] = cs
				}
				return
			}
		}
	}
}

// forget drops every claim of bc (its connection ended).
func (r *dupRegistry) forget(bc *bridgeConn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for dest, cs := range r.claims {
		kept := cs[:0]
		for _, c := range cs {
			if c.bc != bc {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			delete(r.claims, dest)
		} else {
			r.claims[dest] = kept
		}
	}
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}
