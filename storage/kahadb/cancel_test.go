package kahadb_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// cancelAfter is a context that reports itself cancelled from the n-th
// call of Err on: a signal arriving at a known point of a replay, without
// racing a timer against it.
type cancelAfter struct {
	context.Context
	n     int64
	calls atomic.Int64
}

func (c *cancelAfter) Err() error {
	if c.calls.Add(1) >= c.n {
		return context.Canceled
	}
	return nil
}

// TestKahaDBOpenShardContextStopsReplay: a start-up cancelled (by a
// signal) while a large journal is replayed stops the replay there, says
// how far it got, and leaves the journal intact for the next start.
func TestKahaDBOpenShardContextStopsReplay(t *testing.T) {
	const total = 5000
	dir := t.TempDir()
	o := kahadb.Options{Dir: dir, EnableJournalDiskSyncs: false, JournalMaxFileLength: 256 << 10}
	st, ss := openOneShard(t, o)
	q := message.QueueDest("q")
	var ops []engine.StoreOp
	for seq := uint64(1); seq <= total; seq++ {
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
			ID: fmt.Sprintf("ID:cancel-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4,
			BodyType: message.TextBody, Body: []byte("a message of some length to fill a few journal files")}})
		if len(ops) == 100 {
			if err := ss.Apply(ops); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Without the checkpoint index the next start replays the whole
	// journal: the long recovery a signal must be able to stop.
	if err := os.Remove(filepath.Join(dir, "wharf-index.bin")); err != nil {
		t.Fatal(err)
	}

	st, err := kahadb.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := &cancelAfter{Context: context.Background(), n: 1000}
	got, err := st.OpenShardContext(ctx, 0, 1)
	if !errors.Is(err, context.Canceled) || got != nil {
		t.Fatalf("OpenShardContext cancelled during the replay: %v, %v; want an error wrapping context.Canceled", got, err)
	}
	if n := ctx.calls.Load(); n != 1000 {
		t.Fatalf("replay checked the context %d times; want it to stop at the check that saw it cancelled (1000)", n)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	// Nothing was lost by stopping: the next start recovers every message.
	st, ss = openOneShard(t, o)
	defer st.Close()
	defer ss.Close()
	if seqs := recoveredSeqs(t, ss); len(seqs) != total {
		t.Fatalf("after the stopped replay, recovered %d messages, want %d", len(seqs), total)
	}
	if r := st.Recovery(); r.RecordsReplayed < total/100 {
		t.Fatalf("second start replayed %d records; want the whole journal", r.RecordsReplayed)
	}
}
