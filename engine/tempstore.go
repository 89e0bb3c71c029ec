package engine

// TempSpace is where non-persistent messages spill when memory runs short
// (ActiveMQ's temp store, <broker tmpDataDirectory>): storage/tempstore
// implements it and the broker hands it to the engine in Options.Temp. Its
// content lives only as long as the broker runs: the implementation empties
// it at start-up, and spilled messages are gone after a restart, as in
// ActiveMQ.
type TempSpace interface {
	// OpenShard opens the temp store of shard index. The engine calls it
	// from that shard's goroutine when the shard first spills.
	OpenShard(index int) (TempStore, error)
}

// TempStore holds the spilled messages of one shard. It is used only by
// that shard's goroutine, so implementations need no locking.
type TempStore interface {
	// Put keeps one record and says where. It need not reach the disk
	// (no fsync): the records do not outlive the process.
	Put(rec []byte) (TempRef, error)
	// Get reads a record back. The returned bytes belong to the caller.
	Get(ref TempRef) ([]byte, error)
	// Release says that the record will not be read again; the store
	// frees the space of records all released (deleting their files).
	Release(ref TempRef)
	// Close releases the store and deletes its files.
	Close() error
}

// TempRef locates a record in a TempStore. Len is the record's length in
// bytes, which is what it counts in the temp usage.
type TempRef struct {
	Seg, Off, Len uint32
}
