package kahadb

import (
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb/journal"
)

// MarshalForTest exposes the stored form of a message to the tests.
func MarshalForTest(m *message.Message) ([]byte, error) {
	return marshalMessage(m, m.RedeliveryCounter)
}

// AgeCleanupForTest makes ss's last cleanup d older, as if d had passed.
func AgeCleanupForTest(ss engine.ShardStore, d time.Duration) {
	s := ss.(*shardStore)
	s.lastGC = s.lastGC.Add(-d)
}

// FailRewriteForTest makes every later rewrite of durable subscriptions
// forward fail with err (nil: write them again).
func FailRewriteForTest(ss engine.ShardStore, err error) {
	s := ss.(*shardStore)
	if err == nil {
		s.rewriteAppend = nil
		return
	}
	s.rewriteAppend = func([][]byte) ([]journal.Location, error) { return nil, err }
}

// CheckpointForTest writes ss's index now, as a periodic checkpoint does
// (off the goroutine when async and the state is large), and returns how
// long the shard's goroutine was held.
func CheckpointForTest(ss engine.ShardStore, async bool) time.Duration {
	s := ss.(*shardStore)
	s.collect(true)
	s.cp.at = journal.Location{} // as if the journal had moved on
	start := time.Now()
	s.checkpointAt(async && len(s.msgs) >= asyncCheckpointMin)
	return time.Since(start)
}

// WaitCheckpointForTest waits for an index being written off the goroutine.
func WaitCheckpointForTest(ss engine.ShardStore) { ss.(*shardStore).collect(true) }

// AgeSyncForTest makes ss's last periodic journal sync d older.
func AgeSyncForTest(ss engine.ShardStore, d time.Duration) {
	s := ss.(*shardStore)
	s.lastSync = s.lastSync.Add(-d)
}
