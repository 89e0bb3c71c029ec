package wiring

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
)

func TestWiringMKahaDBStore(t *testing.T) {
	dir := t.TempDir()
	yml := `
data_directory: ` + dir + `
persistence:
  mkahadb:
    filtered:
      - queue: "orders.>"
        kahadb: {journal_max_file_length: 1mb, enable_journal_disk_syncs: false}
      - kahadb: {enable_journal_disk_syncs: false}
`
	c, err := config.ParseYAML(strings.NewReader(yml), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Factories().Stores[c.Persistence.Kind](context.Background(), c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := ss.(engine.Syncer); !ok || s.Syncs() {
		t.Errorf("Syncer = %v: want a shard store that does not sync", ok)
	}
	q := message.QueueDest("orders.eu")
	m := &message.Message{ID: "ID:w-1:1:1:1", Destination: q, Persistent: true, BodyType: message.TextBody, Body: []byte("x")}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: m}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "mkahadb", "queue#3a#2f#2forders.#3e", "db-*.log"))
	if len(logs) == 0 {
		entries, _ := os.ReadDir(filepath.Join(dir, "mkahadb"))
		t.Errorf("no journal in the orders child; mkahadb holds %v", entries)
	}
}

// The <kahaDB> attributes reach the store as ActiveMQ reads them:
// cleanupInterval 0 stays 0 (the store disables the periodic cleanup) and
// compactAcksIgnoresStoreGrowth is passed on.
func TestWiringKahaDBOptions(t *testing.T) {
	k := config.Default().Persistence.KahaDB
	o := kahaDBOptions(k)
	if o.CleanupInterval != 30*time.Second || o.CompactAcksIgnoresStoreGrowth || !o.EnableAckCompaction {
		t.Errorf("defaults: %+v, want cleanup 30s, ack compaction on, store growth not ignored", o)
	}
	k.CleanupInterval, k.CompactAcksIgnoresStoreGrowth = 0, true
	o = kahaDBOptions(k)
	if o.CleanupInterval != 0 || !o.CompactAcksIgnoresStoreGrowth {
		t.Errorf("cleanupInterval=0 compactAcksIgnoresStoreGrowth=true: %+v", o)
	}
	if o.JournalDiskSyncInterval != 0 {
		t.Errorf("strategy always: sync interval %v, want none", o.JournalDiskSyncInterval)
	}
	k.JournalDiskSyncStrategy, k.EnableJournalDiskSyncs, k.JournalDiskSyncInterval = config.SyncPeriodic, false, 250*time.Millisecond
	if o = kahaDBOptions(k); o.EnableJournalDiskSyncs || o.JournalDiskSyncInterval != 250*time.Millisecond {
		t.Errorf("strategy periodic 250ms: %+v", o)
	}
	if o.NoPeriodicCheckpoint {
		t.Errorf("checkpointInterval 5s: no periodic checkpoint")
	}
	k.CheckpointInterval = 0
	if o = kahaDBOptions(k); !o.NoPeriodicCheckpoint || o.CheckpointInterval < 0 {
		t.Errorf("checkpointInterval=0: %+v, want no periodic checkpoint but an index at cleanup and close", o)
	}
	k.CleanupOnStop, k.CompactAcksAfterNoGC = false, 0
	if o = kahaDBOptions(k); !o.NoCleanupOnStop || o.CompactAcksAfterNoGC != 1 {
		t.Errorf("cleanupOnStop=false compactAcksAfterNoGC=0: %+v, want no cleanup on stop, compaction every cycle", o)
	}
	k.JournalDiskSyncStrategy = config.SyncNever
	if o = kahaDBOptions(k); o.EnableJournalDiskSyncs || o.JournalDiskSyncInterval != 0 {
		t.Errorf("strategy never: %+v", o)
	}
}
