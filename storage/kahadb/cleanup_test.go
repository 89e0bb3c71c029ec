package kahadb_test

import (
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// cleanupInterval 0 disables the periodic cleanup, as in ActiveMQ 5.17
// (CheckpointRunner cleans only when cleanupInterval > 0): every journal
// file stays while the store runs, however long ago the last cleanup was,
// and a clean stop still cleans up (cleanupOnStop). A positive interval
// cleans once it has passed.
func TestKahaDBCleanupIntervalZeroDisables(t *testing.T) {
	d := message.QueueDest("cleanup.q")
	run := func(t *testing.T, interval time.Duration) (running, stopped []int) {
		dir := t.TempDir()
		c := openCP(t, dir, kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: interval})
		for i := 1; i <= 200; i++ {
			c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: bigMsg(d, i)})
			c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: uint64(i)})
		}
		// A day passes; the next write is where a due cleanup runs.
		kahadb.AgeCleanupForTest(c.ss, 24*time.Hour)
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: 1000, Msg: bigMsg(d, 1000)})
		running = journalFiles(t, dir)
		c.close(t)
		return running, journalFiles(t, dir)
	}
	t.Run("zero disables", func(t *testing.T) {
		running, stopped := run(t, 0)
		if len(running) < 5 || running[0] != 1 || running[len(running)-1] != len(running) {
			t.Errorf("journal files while running: %v, want every file from db-1.log on", running)
		}
		if len(stopped) != 1 || stopped[0] != running[len(running)-1] {
			t.Errorf("journal files after a clean stop: %v, want only the last, db-%d.log", stopped, running[len(running)-1])
		}
	})
	t.Run("positive cleans once due", func(t *testing.T) {
		running, _ := run(t, time.Hour)
		if len(running) > 2 {
			t.Errorf("journal files while running: %v, want at most the last two", running)
		}
	})
}
