package engine

import (
	"context"
	"encoding/hex"
	"strconv"

	"wharf/engine/message"
)

// Store is the persistence interface the engine owns; storage/memory,
// storage/kahadb and the others implement it, and storage/storetest holds the
// behaviour suite every implementation passes.
//
// The engine runs one ShardStore per shard (KahaDB lays these out as mKahaDB
// lays out its child stores). A ShardStore is used only by its shard's
// goroutine, so implementations need no locking between its methods.
type Store interface {
	// OpenShard opens (creating if needed) the store of shard index of count.
	OpenShard(index, count int) (ShardStore, error)
	// Close releases everything (file locks included).
	Close() error
}

// ContextOpener is implemented by a Store whose OpenShard can take long (a
// journal replay): NewContext opens shards with OpenShardContext, which
// gives up with an error wrapping ctx.Err() once ctx is done.
type ContextOpener interface {
	OpenShardContext(ctx context.Context, index, count int) (ShardStore, error)
}

// ShardStore holds the persistent state of the destinations of one shard.
type ShardStore interface {
	// Apply makes the operations durable, in order, as one atomic batch: after
	// a crash either all of them are recovered or none. It returns only when
	// the batch is as durable as the store is configured to make it (fsynced,
	// with enableJournalDiskSyncs). The shard groups every operation of one
	// turn of its loop into one Apply: that is Wharf's group commit.
	Apply(ops []StoreOp) error
	// Recover calls fn for the stored state in this order: every
	// destination the store knows (RecoveredItem.Created), then every
	// durable subscription, then every pending message of each destination
	// in the order it was added (with the subscriptions that have not yet
	// acknowledged it, for topics), then every prepared transaction (whose
	// acks name those messages), then every scheduled job. Order between
	// destinations, between transactions and between jobs is not promised.
	// Jobs come last because nothing else refers to them: the engine only
	// re-arms them.
	Recover(fn func(RecoveredItem) error) error
	// Close releases the shard's files.
	Close() error
}

// Syncer is implemented by a ShardStore whose Apply waits for the disk
// (an fsync). The shard then hands its batches to a writer goroutine and
// goes on with the next turn; batches that arrive while one is being synced
// are written together with one Apply: group commit across turns, as
// ActiveMQ's journal appender does. Completions are still released only
// after the Apply that holds their batch.
type Syncer interface {
	Syncs() bool
}

// NoSyncApplier is implemented by a Syncer that can write a batch without
// waiting for the disk. The shard's writer uses it for a batch that no
// completion waits for — typically consumers' acknowledgements that nobody
// asked to have confirmed (Conn.Ack) — as ActiveMQ's KahaDB writes a
// command that asked for no response without a sync. Such a batch reaches
// the disk with the next synced one (the journal syncs in order), so a
// crash (of the machine: a killed process leaves what was written) can
// only lose such acknowledgements, and their messages come back; nothing a
// producer, a commit or a confirmed acknowledgement (Conn.AckDurable) was
// told is stored can be lost, since a batch with a completion is applied
// with Apply.
type NoSyncApplier interface {
	ApplyNoSync(ops []StoreOp) error
}

// Housekeeper is implemented by a ShardStore with timed work of its own
// (KahaDB's periodic journal sync, cleanup and checkpoint). The shard calls
// Housekeep at each tick, on the goroutine that calls Apply (the writer,
// for a Syncer), so that an idle store still does it.
type Housekeeper interface {
	Housekeep() error
}

// StoreOpKind tells what a StoreOp does.
type StoreOpKind uint8

// The store operations.
const (
	// OpAdd stores Msg on Dest with the destination-local sequence Seq. For a
	// topic, Subs lists the durable subscriptions that still need it.
	OpAdd StoreOpKind = iota + 1
	// OpRemove removes message Seq from queue Dest (acknowledged, expired,
	// moved to a DLQ, purged).
	OpRemove
	// OpAck records that durable subscription Sub acknowledged topic message
	// Seq; the store drops the message once no subscription needs it.
	OpAck
	// OpAddSub stores durable subscription Sub (its destination, selector and
	// noLocal flag).
	OpAddSub
	// OpRemoveSub deletes durable subscription Sub and its unacknowledged
	// messages.
	OpRemoveSub
	// OpUpdate replaces the stored redelivery counter of message Seq
	// (persistJMSRedelivered).
	OpUpdate
	// OpRemoveDest deletes destination Dest and everything stored for it.
	OpRemoveDest
	// OpAddJob stores scheduled job Job, replacing the job with the same ID
	// (a reschedule after a firing).
	OpAddJob
	// OpRemoveJob deletes scheduled job JobID (fired for the last time, or
	// removed through ActiveMQ.Scheduler.Management).
	OpRemoveJob
	// OpPrepare stores prepared XA transaction Tx: this shard's share of
	// it (its sends to the shard's destinations and its acks of the
	// shard's messages), kept in doubt until OpCommit or OpRollback.
	OpPrepare
	// OpCommit ends prepared transaction Tx.XID as committed. Its effect
	// comes as the ordinary operations that follow it in the same batch
	// (OpAdd of its messages, OpRemove/OpAck of what it acknowledged); a
	// store may use the records it wrote at prepare time for them.
	OpCommit
	// OpRollback ends prepared transaction Tx.XID as rolled back: its
	// sends are discarded and its acks forgotten.
	OpRollback
	// OpDelivered records that durable subscription Sub (Sub.Key) has
	// been handed topic message Seq of Dest: a high-water mark per
	// subscription and topic, since a subscription is handed the messages
	// of one topic in sequence order (a redelivery is at or below the
	// mark already). After a restart the messages at or below it that the
	// subscription still holds were delivered before and are recovered as
	// such (RecoveredItem.Delivered): MQTT resends them with DUP set
	// [MQTT-3.3.1-1], JMS with JMSRedelivered.
	OpDelivered
	// OpAddDest records that destination Dest was created, so that a
	// restart creates it again even when it holds nothing: ActiveMQ's
	// createQueueMessageStore / createTopicMessageStore, whose KahaDB
	// StoredDestination stays in db.data until the destination is removed.
	// The engine sends it for persistent destinations only (not temporary
	// ones, not advisory topics); adding a destination the store knows
	// changes nothing.
	OpAddDest
)

// SubKey identifies a durable topic subscription: ActiveMQ's
// "clientId:subscriptionName".
type SubKey struct {
	ClientID string
	Name     string
}

// String is the key as KahaDB and JMX write it.
func (k SubKey) String() string { return k.ClientID + ":" + k.Name }

// DurableSub is the stored form of a durable subscription.
type DurableSub struct {
	Key         SubKey
	Destination message.Destination // the topic or topic pattern subscribed to
	Selector    string
	NoLocal     bool
}

// Job is a scheduled message as the store keeps it: ActiveMQ's scheduler job
// (KahaAddScheduledJobCommand). A Job handed to a store in a StoreOp is not
// changed afterwards; the engine hands a new one for each reschedule.
type Job struct {
	ID  string           // the scheduledJobId
	Msg *message.Message // the message as sent, AMQ_SCHEDULED_* properties included
	// Cron is the 5-field cron entry; "" for none.
	Cron string
	// Delay and Period are in ms: the wait before the first firing (when
	// 0, Period is waited), and between firings.
	Delay, Period int64
	// Repeat counts the firings still to come after the next one; negative
	// repeats forever. A cron job keeps the message's AMQ_SCHEDULED_REPEAT:
	// each cron firing starts a separate job of Repeat+1 firings.
	Repeat int32
	Start  int64 // ms since the epoch: when it was scheduled
	Next   int64 // ms since the epoch: when it fires next
}

// XID is an XA transaction id (javax.transaction.xa.Xid; OpenWire's
// XATransactionId).
type XID struct {
	FormatID int32
	GlobalID []byte
	Branch   []byte
}

// String is the XID as ActiveMQ prints it; the engine names an XA
// transaction by it.
func (x XID) String() string {
	return "XID:[" + strconv.Itoa(int(x.FormatID)) + ",globalId=" + hex.EncodeToString(x.GlobalID) +
		",branchId=" + hex.EncodeToString(x.Branch) + "]"
}

// PreparedTx is one shard's share of a prepared XA transaction as the
// store keeps it.
type PreparedTx struct {
	XID XID
	// Adds are the persistent messages it sends to the shard's
	// destinations (each on its Msg.Destination), in send order.
	Adds []*message.Message
	// Acks are the stored messages of the shard it acknowledged.
	Acks []TxAck
}

// TxAck is a stored message a prepared transaction acknowledged: queue
// message Seq of Dest, or for a topic the copy durable subscription Sub
// holds.
type TxAck struct {
	Dest message.Destination
	Seq  uint64
	Sub  SubKey // zero for a queue
}

// StoreOp is one change to a shard's store.
//
// Rules every store follows (storage/storetest checks them): Seq increases
// per destination in add order, and the engine continues from the highest
// it recovers; a remove, ack or update of a Seq that is not stored is
// ignored, as KahaDB ignores them; a topic add with no Subs stores nothing;
// removing a topic removes the durable subscriptions on it; adding a
// subscription that exists replaces its record and keeps its messages; a
// store keeps every field of a message but Origin and Original. A store
// knows a destination from an OpAddDest or a stored OpAdd on it until an
// OpRemoveDest of it, and recovers it (RecoveredItem.Created) even when
// it holds no message; a store rebuilt from a log may also know the
// destinations its surviving records name, as ActiveMQ's index rebuilt
// from the journal does. Jobs are
// keyed by ID alone and belong to no destination: removing a destination
// keeps them (ActiveMQ keeps jobs in a separate JobSchedulerStore), and
// removing an unknown job is ignored. Delivery marks (OpDelivered): a
// store keeps the highest Seq per subscription and topic (also for a
// subscription whose record another store holds: mKahaDB keeps a wildcard
// subscription in its topic's child, its messages in any), and forgets a
// subscription's marks with it and a topic's with the topic.
//
// Prepared transactions: OpPrepare is durable when its Apply returns; Tx
// is recovered until an OpCommit or OpRollback of the same XID, with its
// Adds (which are not recovered as messages) and its Acks (whose messages
// stay stored and are recovered as pending: the engine holds them out of
// dispatch). Preparing an XID the shard already holds is an error; a
// commit or rollback of an XID the shard does not hold is ignored. The
// store does not apply a commit itself: the engine's operations after the
// OpCommit in the same batch do. Nothing else touches a prepared
// transaction: an ack or remove of a message it acknowledged, or removing
// its destination, leaves it as it is.
type StoreOp struct {
	Kind  StoreOpKind
	Dest  message.Destination
	Seq   uint64
	Msg   *message.Message // OpAdd
	Subs  []SubKey         // OpAdd on a topic: who still needs it
	Sub   DurableSub       // OpAck, OpDelivered, OpRemoveSub (Key); OpAddSub
	Count int32            // OpUpdate: the new redelivery counter
	Job   *Job             // OpAddJob
	JobID string           // OpRemoveJob
	Tx    *PreparedTx      // OpPrepare; OpCommit and OpRollback (Tx.XID only)

	// dispatched: an OpAdd of a queue message handed to a consumer in
	// the turn it arrived (the engine's writer waits a little for its ack,
	// concurrentStoreAndDispatchQueues).
	dispatched bool
}

// RecoveredItem is one element of a shard's stored state. Exactly one of
// Created, Sub, Msg, Tx and Job is set, or, for a pending message recovered
// as a stub (MessageLoader.RecoverStubs), none of them and Ref.
type RecoveredItem struct {
	// Created: the item is destination Dest itself, which the store knows
	// (see StoreOp), with or without messages. The engine creates it as
	// ActiveMQ's RegionBroker re-creates at start every destination its
	// persistence adapter lists (getDestinations).
	Created bool

	Sub *DurableSub
	Job *Job
	Tx  *PreparedTx // a prepared transaction in doubt

	Dest message.Destination
	Seq  uint64
	Msg  *message.Message
	// Subs: for a topic message, the durable subscriptions that have not yet
	// acknowledged it; Delivered: those of them that had been handed it
	// (their OpDelivered mark on Dest is at or past Seq).
	Subs      []SubKey
	Delivered []SubKey

	// A stub: where the store keeps the message (Msg is nil), and what the
	// engine needs of it without its body: its size as Message.Size
	// counts it (memory usage), priority, expiration (ms since the epoch,
	// 0 never) and stored redelivery counter.
	Ref          StoreRef
	Size         int64
	Priority     uint8
	Expiration   int64
	Redeliveries int32
}

// StoreRef is where a store keeps a message it recovered as a stub. Its
// fields mean what the store makes them mean; the zero StoreRef is no
// reference (Len is never 0 in a real one).
type StoreRef struct {
	Part, File, Off, Len uint32
}

// MessageLoader is implemented by a ShardStore that can recover pending
// messages without reading them, as ActiveMQ's store cursor leaves them in
// the store until a consumer needs them: RecoverStubs is Recover, but a
// pending message may come as a stub (Ref set, Msg nil), which LoadMessage
// reads back. LoadMessage is called by the shard's goroutine while the
// writer goroutine may be in Apply, Housekeep or checkpointing: it must use
// nothing Apply changes (the reference carries the location; the read
// uses its own file handles). A reference stays valid until the engine
// removes or acknowledges the message (the store keeps what it points to
// while the message is pending); the message loaded is the one Recover
// would have handed, RedeliveryCounter aside (the stub's Redeliveries is
// the stored counter).
type MessageLoader interface {
	RecoverStubs(fn func(RecoveredItem) error) error
	LoadMessage(ref StoreRef) (*message.Message, error)
}
