package engine

import (
	"sync/atomic"

	"wharf/engine/message"
	"wharf/engine/selector"
)

// AckMode is how a subscription's deliveries are acknowledged.
type AckMode uint8

// The acknowledgement modes.
const (
	// AckAuto: the message is consumed when it is handed to the sink (STOMP
	// ack:auto, MQTT QoS 0, pre-settled AMQP). The credit it took is given
	// back by the protocol with AddCredit once the bytes are written, so a
	// consumer that does not read still holds at most its prefetch.
	AckAuto AckMode = iota
	// AckClient: Ack acknowledges the delivery and every earlier one of the
	// subscription (STOMP ack:client, JMS CLIENT_ACKNOWLEDGE).
	AckClient
	// AckIndividual: Ack acknowledges exactly one delivery.
	AckIndividual
)

// NackKind says what a negative acknowledgement asks for. Each protocol maps
// its own to the one ActiveMQ 5.17 uses (reference/mappings.md).
type NackKind uint8

// The negative acknowledgements.
const (
	// NackPoison sends the message to its dead-letter queue at once (STOMP
	// NACK, AMQP rejected, OpenWire POISON ack).
	NackPoison NackKind = iota
	// NackRedeliver redelivers with the counter incremented, and sends it to
	// the DLQ once the counter passes the policy's MaxRedeliveries (AMQP
	// modified with delivery-failed).
	NackRedeliver
	// NackRelease redelivers without counting (AMQP released).
	NackRelease
	// NackExpired expires the message: the client found it past its
	// expiration (OpenWire EXPIRED ack); it goes where expired messages go.
	NackExpired
)

// SubSpec describes a subscription.
type SubSpec struct {
	Destination message.Destination // may be a wildcard pattern
	Selector    string
	// ConvertStrings compares string properties numerically (ActiveMQ's
	// convert_string_expressions, which STOMP subscriptions use).
	ConvertStrings bool
	// Prefetch is the credit window, how many unacknowledged deliveries the
	// sink may hold (0: none until AddCredit, pull mode).
	Prefetch int
	AckMode  AckMode
	// DurableName makes a durable topic subscription keyed by the
	// connection's client id and this name.
	DurableName string
	NoLocal     bool
	Exclusive   bool
	Priority    int8
	// Browser browses a queue: the sink gets a snapshot of its messages, then
	// a Delivery with BrowseEnd, and nothing is consumed.
	Browser bool
	// Retroactive replays the retained messages (retained.go) of the
	// topics the subscription matches before anything sent after it. Topics
	// keep no other history.
	Retroactive bool
	// DefaultPrefetch says Prefetch is the client default of the
	// consumer's kind, which a destination policy's queuePrefetch,
	// topicPrefetch, durableTopicPrefetch or queueBrowserPrefetch replaces
	// (ActiveMQ replaces only a default, broker-behaviour.md §4).
	DefaultPrefetch bool
	// Paused subscribes with a closed window; Start opens it. STOMP uses it
	// so that no MESSAGE overtakes the RECEIPT of its SUBSCRIBE.
	Paused bool
	// Network marks a network bridge's demand subscription (package
	// cluster); nil for every client's.
	Network *NetworkSpec
}

// NetworkSpec describes a network bridge's demand subscription: what
// ActiveMQ's bridge puts in its ConsumerInfo (networkSubscription,
// brokerPath) and its NetworkBridgeFilter (the additionalPredicate).
type NetworkSpec struct {
	// BrokerPath are the ids of the brokers the demand came through, the
	// remote consumer's broker first and the bridge's peer last; the
	// subscription's Consumer advisory carries it, so that other bridges
	// can refuse demand that would loop or outlive its consumerTTL.
	BrokerPath []string
	// RemoteBrokerID is the bridge's peer: a message that already went
	// through it is not dispatched to the subscription (no loop).
	RemoteBrokerID string
	// MessageTTL: a message that crossed this many brokers is not
	// dispatched to the subscription.
	MessageTTL int
	// ConsumerPath are the ids of the original remote consumers the
	// demand serves (ActiveMQ's ConsumerInfo networkConsumerPath): its
	// Consumer advisory carries them, so that a broker reached by the
	// same demand along two paths can serve it once
	// (suppressDuplicate*Subscriptions).
	ConsumerPath []string
}

// admits is NetworkBridgeFilter.matchesForwardingFilter: not back to a
// broker the message came through, and no further than messageTTL hops.
func (n *NetworkSpec) admits(m *message.Message) bool {
	if len(m.BrokerPath) >= n.MessageTTL {
		return false
	}
	for _, id := range m.BrokerPath {
		if id == n.RemoteBrokerID {
			return false
		}
	}
	return true
}

// Delivery is one message handed to a subscription's sink.
type Delivery struct {
	Sub *Subscription
	// ID identifies the delivery for Ack and Nack; it increases with every
	// delivery of the subscription.
	ID  uint64
	Msg *message.Message
	// Redeliveries is the message's redelivery counter for this delivery:
	// JMSRedelivered is Redeliveries > 0, JMSXDeliveryCount Redeliveries+1.
	Redeliveries int32
	// BrowseEnd marks the end of a browse; Msg is nil.
	BrowseEnd bool
}

// Sink receives a subscription's deliveries. Deliver is called from shard
// goroutines, possibly several at once for a wildcard subscription that
// spans shards; it must not block, and must copy nothing it need not (the
// message is shared and immutable).
type Sink interface {
	Deliver(d Delivery)
}

// Subscription is a consumer's registration. Its fields are fixed at
// creation; credit and delivery ids are atomics shared by the shards it
// spans.
type Subscription struct {
	id     uint64
	conn   *Conn
	spec   SubSpec
	sel    *selector.Selector
	sink   Sink
	shards []int // where its parts live
	key    SubKey

	credit   atomic.Int64
	nextID   atomic.Uint64
	browsing atomic.Int32 // shards yet to finish a browse
	closed   atomic.Bool
	started  atomic.Bool
	prefetch atomic.Int32 // the window; spec.Prefetch is where it started
}

// Prefetch is the subscription's window after policies were applied.
func (s *Subscription) Prefetch() int { return int(s.prefetch.Load()) }

// SetPrefetch changes the window (OpenWire ConsumerControl: a failover
// client restores its consumers in pull mode, then gives them their
// prefetch back). The credit moves by the difference. Safe from any
// goroutine.
func (s *Subscription) SetPrefetch(n int) {
	if n < 0 || s.closed.Load() {
		return
	}
	old := s.prefetch.Swap(int32(n))
	if d := n - int(old); d > 0 {
		s.AddCredit(d)
	} else if d < 0 {
		s.credit.Add(int64(d))
	}
}

// Start opens the window of a subscription made with Paused. Safe from any
// goroutine; only the first call has an effect.
func (s *Subscription) Start() {
	if s.started.CompareAndSwap(false, true) {
		s.AddCredit(s.Prefetch())
	}
}

// Revoke takes back one unit of credit given with AddCredit that has not
// been used yet, and reports whether there was one: a pull that timed out
// (OpenWire MessagePull) must not leave a credit behind. Safe from any
// goroutine.
func (s *Subscription) Revoke() bool { return s.takeCredit() }

// Sync waits until every shard the subscription spans has handled what was
// posted to it before (credit included): after Sync, anything deliverable
// has been handed to the sink. Safe from any goroutine.
func (s *Subscription) Sync() {
	w := &waiter{}
	for _, i := range s.shards {
		w.wg.Add(1)
		s.conn.e.shards[i].mailbox(command{op: opBarrier, comp: w})
	}
	w.wg.Wait()
}

// ID is the subscription's broker-unique number.
func (s *Subscription) ID() uint64 { return s.id }

// Spec returns the subscription's description.
func (s *Subscription) Spec() SubSpec { return s.spec }

// Conn returns the connection that owns the subscription.
func (s *Subscription) Conn() *Conn { return s.conn }

// AddCredit gives the subscription n more deliveries' worth of credit (after
// an auto-acknowledged delivery was written, or a pull). Safe from any
// goroutine.
func (s *Subscription) AddCredit(n int) {
	if n <= 0 || s.closed.Load() {
		return
	}
	// Only a window that was shut can have stopped dispatch: a shard with
	// credit left stops only when it has nothing to send, and the next send
	// dispatches. So most calls cost one atomic add, not a mailbox post.
	if s.credit.Add(int64(n)) <= int64(n) {
		s.kick()
	}
}

// kick asks every shard the subscription spans to dispatch to it.
func (s *Subscription) kick() {
	e := s.conn.e
	for _, i := range s.shards {
		e.shards[i].mailbox(command{op: opKick, sub: s})
	}
}

// part is a subscription's presence in one shard: its in-flight deliveries
// there, and for topics the messages waiting for credit. A durable
// subscription's part outlives its consumers (sub is nil while offline).
// Owned by the shard loop.
type part struct {
	sub      *Subscription
	durable  *DurableSub // nil for non-durable
	dests    []*destination
	pending  deque // topic messages not yet delivered
	inflight []*entry
	spec     SubSpec // for offline durables: what matches
	sel      *selector.Selector
	// offlineSince is when a durable part lost its consumer (ms).
	offlineSince int64
	// slow marks a subscriber already reported slow (log line, SlowConsumer
	// advisory).
	slow bool
	// subj is the subscriber's, for the read check on each destination a
	// wildcard or composite pattern reaches (shard.readable); a durable
	// part keeps its last consumer's while offline, and has none when
	// recovered from the store until a consumer reattaches.
	subj *Subject
	// marks: for a durable part, the highest sequence per topic whose
	// delivery it recorded in the store (markDelivered).
	marks map[*destination]uint64
	// The subscription's counters on this shard, as ActiveMQ's
	// SubscriptionStatistics: messages given to it (a queue's when
	// dispatched, a topic's when matched: EnqueueCounter), dispatched
	// (DispatchedCounter) and acknowledged (DequeueCounter). Kept with the
	// statistics (shard.keepStats).
	enqueued, dispatched, dequeued int64
}

// Settle acknowledges delivery id of the subscription, individually. Unlike
// Conn.Ack it is safe from any goroutine, Deliver included: a protocol that
// drops a delivery it cannot send (MQTT: a message over the client's
// maximum packet size, a QoS 1 subscription handed a QoS 0 message) settles
// it here.
func (s *Subscription) Settle(id uint64) {
	s.conn.e.shards[id&0xff].mailbox(command{op: opAck, sub: s, id: id})
}
