// Package lsm is Wharf's LSM store: the engine's shard stores on badger
// (github.com/dgraph-io/badger/v4), selected by <wharfLSM> in
// activemq.xml or persistence.lsm in YAML. ActiveMQ has no such store: a
// directory written by it is Wharf's alone (KahaDB is the store ActiveMQ
// shares).
//
// Layout. One badger database per engine shard: with one shard the store
// directory is itself the database, with S shards each has its own,
// shard-<i>-of-<S>, as KahaDB lays out its journals (mKahaDB's children).
// One database per shard rather than one shared database with a shard
// prefix in every key, because a shard's writer goroutine then syncs only
// its own write-ahead log (one shard's fsync never waits for another's
// data, and badger's single write goroutine per database is not shared),
// the shard count is visible in the directory and checked (a record,
// 0x00 'm', names the shard and count too), and value log GC and
// compaction of one shard do not stall the others.
//
// Keys (big-endian numbers, so that badger's byte order is numeric order):
//
//	0x00 'm'                  format version and shard layout
//	0x00 'n'                  the next destination or subscription id
//	'D' dest(8)               a destination the shard knows: type, name
//	'S' sub(8)                a durable subscription reference: its key and,
//	                          when OpAddSub stored it here, its record
//	'M' dest(8) seq(8)        a pending message: version, redelivery
//	                          counter, the OpenWire StoreFormat frame
//	                          (KahaDB's stored form); badger UserMeta
//	                          holds its priority
//	'W' dest(8) seq(8) sub(8) topic message seq still needed by sub
//	'K' sub(8) type name      sub's delivery mark on a topic: seq
//	'J' id                    a scheduled job
//	'T' xid                   a prepared XA transaction (its sends and acks)
//
// Destinations and subscriptions are named by ids from a counter that
// never goes back, so that a destination's messages are one key range in
// add order (Recover is one ordered scan per destination: the order the
// engine needs, which it then dispatches by priority; the priority in
// UserMeta lets a key-only scan page by priority without reading bodies)
// and removing a destination or a subscription is one delete of its
// record, whatever its backlog: what it leaves (its message and waiting
// keys) belongs to an id nothing refers to any more, is skipped by the
// load and by Recover, and is deleted in slices by Housekeep
// (engine.Housekeeper). A topic message lives as one 'M' key and one
// 'W' key per subscription that still needs it: an ack deletes a 'W'
// key, the last one its message.
//
// Writes. An Apply is one badger transaction (one atomic write to the
// write-ahead log and, for records of ValueThreshold bytes or more, the
// value log) followed, with SyncWrites, by one DB.Sync: the shard's group
// commit (engine.Syncer: the engine's writer gathers batches while one
// syncs). ApplyNoSync commits a batch that writes no value (acks,
// removes, delivery marks) without the sync: the next synced batch (or a
// memtable flush) makes it durable; any other batch it syncs. A batch must fit in one badger
// transaction (15% of MemTableSize): a bigger one fails with
// ErrBatchTooBig rather than being split (which would not be atomic).
//
// Index. What the shard needs in memory to apply operations without
// reading the database: the destinations and subscription references with
// their ids, for each topic message the ids of the subscriptions that
// still need it (topic acks: which subscription still owes one), the
// delivery marks, the prepared XIDs, and per queue the highest sequence
// stored (an add above it needs no duplicate check; below it one badger
// Get decides). Queue messages themselves are not in memory. The index
// is rebuilt when the shard opens by one pass over the small records and
// a key-only pass over the 'W' and 'M' keys: there is no checkpoint to
// write or to read, and no log of ours to replay (badger replays its own
// write-ahead log in badger.Open). A batch that fails (a duplicate add,
// an invalid operation, a write error) is discarded with its transaction
// and the index is reloaded from the database, which holds none of it.
//
// Space. Housekeep runs badger's value log GC every CleanupInterval
// (KahaDB's cleanupInterval): a value log file more than GCDiscardRatio
// garbage is rewritten and deleted. Badger writes through memory-mapped
// files, which a full disk turns into a SIGBUS instead of ENOSPC; Apply
// therefore refuses a batch with ErrDiskFull, before writing anything,
// once free space falls below MinFreeDisk plus the size of the tree
// (see Options.MinFreeDisk): producers get the error, consumers can still
// drain the store.
//
// Memory. Each shard's database holds its memtable (an arena of
// MemTableSize plus one batch's room, on the Go heap: about 83 MiB with the
// default 64 MiB) and a second one while the first is flushed, and a
// block cache of BlockCacheSize: many shards on a small machine want a
// smaller memTableSize (which also bounds a batch).
//
// Stubs (engine.MessageLoader). RecoverStubs yields each pending message
// as a stub: the record's header (redelivery counter, expiration, size)
// and the entry's UserMeta (priority), the frame neither decoded nor kept;
// its StoreRef names the key (destination id, sequence), and LoadMessage
// reads it back in a read transaction of its own, concurrently with the
// writer (badger's MVCC), finding the destination through a sync.Map.
//
// Messages are kept as OpenWire StoreFormat frames
// (protocols/openwire/marshal), the form KahaDB stores; the redelivery
// counter is kept beside the frame so that OpUpdate rewrites four bytes.
package lsm
