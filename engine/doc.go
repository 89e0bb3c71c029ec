// Package engine is Wharf's broker core: destinations, subscriptions,
// dispatch, acknowledgement, redelivery, expiry and dead-lettering, shared
// by every protocol.
//
// Ownership. The engine runs S shards. Every destination is pinned to one
// shard by a hash of its kind and name, and all of its state (pending
// messages, consumers, in-flight deliveries, counters, timers) is read and
// written only by that shard's goroutine. There are no locks on destination
// state. Connections (Conn) post commands to a shard's bounded inbox: a full
// inbox blocks the poster, which is the back-pressure a fast producer feels.
// Shards post to each other (dead-letter moves, credit returned to a
// subscription that spans shards) through an unbounded mailbox, so that two
// shards can never deadlock on each other's full inbox.
//
// Commands. Everything a shard is asked to do is a typed command
// (commands.go): an op and its payload, never a closure (but opTestFn,
// which only tests post), so that a turn can be logged (cmdOp.String) and
// scripted (testdata/scenarios, scenario_test.go).
//
// Subscriptions. A Subscription has a credit window (its prefetch); a shard
// hands it messages while credit remains and acks give credit back. An
// exact-name subscription lives in one shard. A wildcard subscription
// (queue or topic pattern with "*" or ">") has a part in every shard, each
// attached to the matching destinations there, now and later; its credit and
// delivery ids are atomics shared by the parts. A delivery id carries the
// shard that made it in its low 8 bits, so an ack goes straight to it.
//
// Persistence. Each shard has its own ShardStore. A turn of the shard loop
// is a step function (turn.go): step applies up to maxBatch commands and
// returns the turn's batch (store operations, completions, replies,
// forwards to other shards), and execute writes all its store operations
// with one Apply (group commit) and only then tells producers their sends
// are done: a producer is never acknowledged for a persistent message
// before the store has it. Deliveries go out during the turn, before the
// write, as ActiveMQ's concurrentStoreAndDispatchQueues does; a consumer's
// ack that arrives first simply follows the add in the same or a later
// batch. The batch type states the whole ordering.
//
// Files by stage. A message's path through a shard reads in this order:
// route.go (where a sent message goes: composites, virtual topics,
// retained messages, topic fan-out), dispatch.go (where a message is chosen
// for a consumer: priority, round-robin, exclusive consumers, groups,
// selectors, credit), ack.go (acks, nacks, requeue, in-flight
// bookkeeping), dlq.go (redelivery policy, expiry, dead-letter
// strategies). destination.go holds the destination itself: creation,
// attaching consumers, removal, counters.
//
// Which goroutine. Methods on *shard, *destination and *part run only on
// the shard's goroutine; methods on *Conn run on the connection's session
// goroutine and methods on *Engine on any, and they reach shard state only
// by posting commands. conn.go and tx.go hold the caller side of
// connections and transactions; what the shard does for them is in
// conn_shard.go and tx_shard.go (admin.go and admin_shard.go likewise for
// the operator's API).
//
// Time. Shards read the injected clock once per turn; periodic work (expiry
// sweeps) runs on a tick, and tests drive it with Engine.Tick.
package engine
