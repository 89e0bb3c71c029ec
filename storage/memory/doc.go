// Package memory is the in-memory implementation of engine.Store: the store
// of brokers configured with persistent="false" and of tests.
//
// Ownership: a Store holds the state of every shard it has opened, keyed by
// shard index, for as long as the Store value lives. Closing a ShardStore (or
// the whole Store) keeps that state; OpenShard on the same Store then returns
// a ShardStore whose Recover yields it. That is how an in-process broker
// restart in tests keeps its messages. Each ShardStore is used by one
// goroutine (its shard's loop), so the state of one shard has no lock;
// different shards may be used from different goroutines at once. The Store's
// mutex guards only the open/close bookkeeping (see Store).
//
// Messages are kept by pointer: a *message.Message is immutable once handed to
// the engine (see package message), so the store neither copies it on OpAdd
// nor on Recover. The redelivery counter that OpUpdate changes is kept next to
// the message and applied on Recover to a Clone.
//
// Semantics (shared with KahaDB where ActiveMQ defines them):
//   - Apply is atomic. Operations are checked on their own first (ErrInvalidOp),
//     then applied in order while an undo log is kept; if one fails (only
//     ErrDuplicate, an OpAdd of a (destination, seq) already stored, can fail
//     at that point) the log is unwound and the batch changes nothing.
//   - OpRemove, OpAck and OpUpdate of a sequence that is not stored, and OpAck
//     by a subscription the message is not waiting for, are ignored, as
//     KahaDB's MessageDatabase ignores removes of unknown messages: the
//     engine may retire a message twice (expiry racing an ack) without failing
//     the batch.
//   - OpAdd on a topic with no subscriptions in Subs stores nothing: nobody
//     could ever acknowledge it (MessageDatabase skips indexing a topic
//     message when the topic has no subscriptions). Subs on a queue are
//     ignored.
//   - OpAddSub of a key already stored replaces its record and keeps the
//     messages waiting for it. OpRemoveSub of an unknown key is ignored; it
//     always drops the key from every topic message of the shard (a wildcard
//     subscription's messages live on several topics), dropping messages no
//     other subscription needs. It costs a scan of the shard's topic
//     messages; subscriptions are removed rarely.
//   - OpRemoveDest drops every message of the destination and, for a topic,
//     every durable subscription whose Destination is that topic (with their
//     references on other topics), as removing a topic in ActiveMQ deletes
//     its durable subscriptions. Removing an unknown destination is ignored.
//   - OpAddJob of an ID already stored replaces the job (a reschedule) and
//     keeps its place in the recovery order; OpRemoveJob of an unknown ID is
//     ignored. Jobs belong to no destination: OpRemoveDest keeps them, as
//     ActiveMQ's JobSchedulerStore is apart from its message store. The Job
//     is copied on OpAddJob and on Recover; its Msg is kept by pointer like
//     any message.
//   - OpPrepare keeps a copy of the PreparedTx (its slices; messages by
//     pointer) under its XID's String until OpCommit or OpRollback of the
//     same XID, which only drop it; a second OpPrepare of an XID held fails
//     the batch with ErrTxPrepared. A prepared transaction changes no
//     message: its acks' messages stay pending, its adds are not messages.
//   - OpDelivered keeps the highest sequence per subscription and topic;
//     Recover lists, for each
//     topic message, the subscriptions whose mark on its topic is at or past
//     it (RecoveredItem.Delivered). Removing a subscription or a topic drops
//     its marks.
//   - OpAddDest creates a destination with no message; the first OpAdd
//     that stores a message on a destination creates it too. A destination
//     stays, drained or not, until OpRemoveDest: an empty queue survives a
//     restart, as ActiveMQ's KahaDB keeps a StoredDestination in db.data
//     until the destination is removed. OpAddDest of a destination held is
//     ignored.
//   - Recover yields the destinations in the order they were created
//     (RecoveredItem.Created), then the durable subscriptions in the order
//     they were first added, then the messages of each destination in add order, destinations
//     in the order they were created (re-created after OpRemoveDest counts as
//     new), then the prepared transactions in prepare order, then the
//     scheduled jobs in the order they were first added. Jobs
//     come last because nothing recovered before them refers to them, and
//     the engine re-arms them only once its destinations exist.
//
// Removal is O(1) amortised: a destination keeps its messages in a slice in
// add order with an index from sequence to position; a removed slot is
// cleared and the slice is compacted once more than half of it is dead, so
// draining a queue of 100k messages one by one stays linear.
package memory
