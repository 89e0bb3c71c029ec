// Package kahadb is Wharf's persistent store: journals in ActiveMQ KahaDB's
// format, one per engine shard, so that a directory written by ActiveMQ
// 5.17 is recovered by Wharf and a Wharf journal by ActiveMQ.
//
// Layout. With one shard the store directory is itself a KahaDB directory
// (db-N.log files and the lock), which ActiveMQ can open. With S shards each
// shard has its own KahaDB directory, shard-<i>-of-<S>, as mKahaDB gives
// each filtered adapter its own; the shard count is fixed for a directory
// (destinations are placed by a hash modulo S).
//
// Writes. A shard's turn of its loop is one Apply: its operations become
// KahaDB commands (AddMessage, RemoveMessage, Subscription,
// RemoveDestination, UpdateMessage; Wharf's own state — the engine's
// sequence numbers, scheduled jobs, durable subscriptions' delivery marks
// (marks.go) — in KahaTraceCommands, which ActiveMQ ignores) written as
// ONE journal batch and fsynced
// once (with enableJournalDiskSyncs) before Apply returns — group commit: a
// producer is acknowledged only when the batch holding its message is on
// disk. With concurrentStoreAndDispatchQueues the engine drops an add and
// the remove of the same queue message from a batch before it gets here
// (the consumer acknowledged before the write). A batch nobody waits for
// (consumers' acknowledgements alone, none of them one the client asked to
// have confirmed: engine.Conn.AckDurable's come through Apply) comes
// through ApplyNoSync: written, not fsynced, as ActiveMQ writes an ack
// that asked for no response; the
// next synced batch, a rotation to a new file, a checkpoint, a cleanup or
// Close syncs it, in journal order. The engine's writer also gathers the
// sends of the producers the last sync released before it syncs again
// (engine/shard.go write): 4 synchronous producers get ~4 messages per
// fsync instead of 2. With journalDiskSyncStrategy="periodic"
// (JournalDiskSyncInterval) every batch is written unsynced and Syncs
// reports false, so producers are answered after the write, and the
// journal is fsynced once the interval has passed. Timed work — that
// sync, cleanup, checkpoints — runs after each Apply and, for an idle
// shard, at each engine tick (Housekeep, engine.Housekeeper).
//
// Index. The pending state is kept in memory (a storage/memory shard),
// without the messages' bodies: the index holds a shared placeholder per
// message, and the shard store, per message, its id, the location of its
// current record, the durable subscriptions still owing an ack, its
// priority, expiration and size. The engine gets pending messages as
// stubs (engine.MessageLoader: RecoverStubs) and reads each back when it
// needs it (LoadMessage, on the engine shard's goroutine, with a
// journal.Reader of its own while the writer appends), as ActiveMQ's
// store cursor pages messages in from the store; Recover, for tools and
// tests, reads every one. Every
// checkpointInterval (for a large state, once enough has changed: see
// checkpoint.go) and at Close, a shard writes the state as of a journal
// location to its own checkpoint index, wharf-index.bin (checkpoint.go:
// locations, priorities, expirations and sizes of the pending messages,
// subscriptions, jobs, delivery marks, counters; never the messages
// themselves). At
// start-up a valid index is loaded without reading any message, and only
// the records after the checkpoint are replayed; without a usable index
// (or one of an older format version) the state is rebuilt by replaying
// the whole journal, as ActiveMQ rebuilds its index when db.data is
// absent. Wharf writes no db.data: ActiveMQ must rebuild
// its own index from a Wharf journal. Cleanup deletes (or archives) the
// oldest journal files once nothing they hold is still needed, after a
// checkpoint so that the index never refers to a removed file; a durable
// subscription record that pins an old file is rewritten forward first.
// With EnableAckCompaction, once the oldest file has stayed pinned for
// CompactAcksAfterNoGC cycles (and the journal has not moved to a new
// file since the previous cycle, unless CompactAcksIgnoresStoreGrowth),
// cleanup also frees the later files that
// hold no needed record: the removals in them that cancel records of older
// files still present (queue removes, durable subscription acks, tracked
// per file as they are written or replayed) are written again in one batch
// at the head, the index is written, and the files go, leaving a gap in the
// file numbers as ActiveMQ's GC does. Files holding transaction records,
// a subscription or destination removal that still matters, or written
// before the index loaded at start are left to the prefix rule.
//
// mKahaDB (multi.go). A MultiStore is ActiveMQ's
// MultiKahaDBPersistenceAdapter: an ordered list of filters (a queue or
// topic pattern, a catch-all, or perDestination), each with its own
// Options, and a child Store per filter (per destination for
// perDestination) in <dir>/<name>, name being ActiveMQ's IOHelper
// file-system-safe form of the qualified name ("queue#3a#2f#2forders.#3e";
// see ChildName). Each child has the usual shard layout. A shard's Apply
// routes each operation to the child of its destination (the first
// matching filter, or the child a recovered destination came from):
// subscriptions and acks to their topic's child, OpRemoveSub to every
// child (its references may be on topics in several), scheduled jobs to
// the catch-all child. The operations of one child are one batch, so an
// Apply spanning children is atomic per child only, as ActiveMQ's mKahaDB
// is without XA transactions (its transaction store is used for XA only);
// the duplicate add the engine's contract makes fail a whole batch is
// checked across children before any child writes. Recover yields every
// child's subscriptions, then their messages, then the jobs.
//
// Messages are stored as OpenWire v11 loose frames, exactly as KahaDB
// stores them; a message that arrived over OpenWire is stored in the form
// it was received.
package kahadb
