// Package tempstore is the file implementation of engine.TempSpace: the temp
// store that non-persistent messages spill to when memory runs short
// (ActiveMQ's tmp_storage, <broker tmpDataDirectory>).
//
// Layout: one directory, emptied by Open (a previous run's spilled messages
// are gone, as in ActiveMQ, which deletes tmp_storage at start-up). Each
// shard appends to its own segment files, tmp-<shard>-<n>.data, up to
// SegmentSize bytes each. A record is
//
//	length uint32 LE | CRC-32C of the payload uint32 LE | payload
//
// The format is Wharf's own: nothing outlives the process, so nothing else
// ever reads it. Nothing is fsynced either. The checksum catches a disk that
// hands back something other than what was written.
//
// Ownership: a Store is used only by its shard's goroutine (engine.TempStore)
// and has no lock. Writes are buffered; a Get of a record still in the
// buffer writes the buffer out first. A segment whose records have all been
// released is deleted; the segment being written is rewound instead, so a
// queue that drains and fills again reuses one file.
package tempstore
