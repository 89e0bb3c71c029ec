package kahadb_test

import (
	"context"
	"testing"

	"wharf/engine"
	"wharf/storage/kahadb"
	"wharf/storage/storetest"
)

func TestStoreKahaDB(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store {
			s, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, EnableJournalDiskSyncs: false, JournalMaxFileLength: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	})
}
