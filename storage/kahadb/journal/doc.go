// Package journal is the journal layer of Wharf's KahaDB-compatible store:
// the db-N.log data files of an ActiveMQ Classic 5.17 KahaDB directory, read
// and written byte for byte as ActiveMQ's Journal and DataFileAppender do, so
// that a journal written by either broker is recovered by the other (the
// index, db.data, is not written: ActiveMQ rebuilds it from the journal).
//
// Format (docs: shared/reference/kahadb.md §2, verified against 5.17.2):
//
//	record   int32 size (including this 5-byte header) | byte type | payload
//	batch    00 00 00 1c 02 "WRITE BATCH" | int32 batchLen | int64 Adler32
//	         user records (type 1), batchLen bytes, covered by the checksum
//	         EOF marker "-qMa4", overwritten by the next batch
//
// A Location is (file id, offset of the record's size field, record size).
// Each Append is one batch, written with one write and, with Options.Sync,
// fsynced before it returns: a batch is the unit of atomicity. A crash can
// leave a torn last batch; Open finds the last intact batch of the last file,
// logs and cuts off what follows, and appends continue there. Damage with
// intact batches after it (a flipped bit, a zeroed block) is not a torn
// write: Open and Replay skip the damaged batch, log its file and offset,
// and resume at the next intact one (Skipped lists where). After a failed
// fsync the journal refuses every later write (ErrSyncFailed: the
// fsyncgate lesson); a failed write (ENOSPC) leaves the append position
// where it was and the next batch overwrites it.
//
// Ownership: a Journal belongs to one goroutine, the shard that owns the
// store; none of its methods may be called concurrently. The directory lock
// (Lock) is a separate, process-wide object, safe from any goroutine; take it
// before Open so that neither ActiveMQ nor another Wharf writes the same
// directory.
//
// Not implemented here: the index, checkpoints, GC policy (Remove and Archive
// are its tools), ack compaction, and preallocation strategies other than
// the default sparse file.
package journal
