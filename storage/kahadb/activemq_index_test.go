package kahadb_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"wharf/storage/kahadb"
)

// TestOpenShardRemovesActiveMQIndex: ActiveMQ's db.data, db.redo and
// db.free go once Wharf opens the journal next to them (they would be stale
// after its first write: ActiveMQ must rebuild its index from the journal),
// and nothing else in the directory is touched.
func TestOpenShardRemovesActiveMQIndex(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"db.data", "db.redo", "db.free", "keep.me"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.OpenShard(0, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"db.data", "db.redo", "db.free"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s after OpenShard: got stat error %v, want not exist", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "keep.me")); err != nil {
		t.Errorf("keep.me after OpenShard: %v, want it untouched", err)
	}
}
