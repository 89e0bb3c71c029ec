package kahadb_test

import (
	"context"
	"testing"

	"wharf/engine"
	"wharf/storage/kahadb"
	"wharf/storage/storetest"
)

// TestKahaDBDuplicates: a second add of a message id its destination
// still holds is rejected, as ActiveMQ's KahaDB rejects it ("Duplicate
// message add attempt rejected"), and the producer audit survives a
// restart, through the checkpoint index (the default) and through the
// replay of the whole journal (checkpoints off, no index), and in mKahaDB.
func TestKahaDBDuplicates(t *testing.T) {
	for name, cpi := range map[string]int{"index": 0, "replay": -1} {
		t.Run(name, func(t *testing.T) {
			ns := func(t *testing.T) func() engine.Store {
				dir := t.TempDir()
				return func() engine.Store {
					o := kahadb.Options{Dir: dir, JournalMaxFileLength: 1 << 20}
					if cpi < 0 {
						o.CheckpointInterval = -1
					}
					s, err := kahadb.Open(context.Background(), o)
					if err != nil {
						t.Fatal(err)
					}
					return s
				}
			}
			t.Run("DuplicateAdds", func(t *testing.T) { storetest.RunDuplicateAdds(t, ns) })
			t.Run("ProducerAudit", func(t *testing.T) { storetest.RunProducerAudit(t, ns, true) })
		})
	}
}

// TestMultiKahaDBDuplicates: the same in mKahaDB, whose children each
// keep their destinations' ids and audit (one child per destination).
func TestMultiKahaDBDuplicates(t *testing.T) {
	ns := func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store {
			return openMulti(t, multiOpts(dir, kahadb.Filter{PerDestination: true}))
		}
	}
	t.Run("DuplicateAdds", func(t *testing.T) { storetest.RunDuplicateAdds(t, ns) })
	t.Run("ProducerAudit", func(t *testing.T) { storetest.RunProducerAudit(t, ns, true) })
}
