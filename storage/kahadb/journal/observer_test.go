package journal

import (
	"testing"
	"time"
)

// countingObserver records what a Journal reports.
type countingObserver struct {
	batches, records, bytes, syncs int
	synced                         time.Duration
}

func (o *countingObserver) Batch(records, bytes int) {
	o.batches++
	o.records += records
	o.bytes += bytes
}

func (o *countingObserver) Synced(d time.Duration) {
	o.syncs++
	o.synced += d
}

// TestJournalObserver: the observer hears of every batch, with its
// records and bytes as Stats counts them, and of every fsync.
func TestJournalObserver(t *testing.T) {
	obs := &countingObserver{}
	o := DefaultOptions(t.TempDir())
	o.Preallocate = false
	o.Observer = obs
	j, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Append([][]byte{[]byte("one"), []byte("two")}); err != nil {
		t.Fatal(err)
	}
	if _, err := j.AppendNoSync([][]byte{[]byte("three")}); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	st := j.Stats()
	if obs.batches != 2 || uint64(obs.batches) != st.Batches || uint64(obs.records) != st.Records || uint64(obs.bytes) != st.Bytes {
		t.Errorf("observed %d batches, %d records, %d bytes; Stats %+v", obs.batches, obs.records, obs.bytes, st)
	}
	if obs.syncs == 0 || uint64(obs.syncs) != st.Syncs || obs.synced <= 0 {
		t.Errorf("observed %d fsyncs taking %v; Stats counts %d", obs.syncs, obs.synced, st.Syncs)
	}
}
