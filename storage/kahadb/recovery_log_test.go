package kahadb_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/logtest"
	"wharf/storage/kahadb"
)

// writeJournal writes n persistent queue messages in batches of 10 and
// closes the store, then removes the checkpoint index so that the next
// open replays the whole journal.
func writeJournal(t *testing.T, o kahadb.Options, n int) {
	t.Helper()
	st, ss := openOneShard(t, o)
	q := message.QueueDest("progress.q")
	var ops []engine.StoreOp
	for seq := uint64(1); seq <= uint64(n); seq++ {
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
			ID: fmt.Sprintf("ID:progress-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4,
			BodyType: message.TextBody, Body: []byte("a message replayed at start-up")}})
		if len(ops) == 10 {
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
	if err := os.Remove(filepath.Join(o.Dir, "wharf-index.bin")); err != nil {
		t.Fatal(err)
	}
}

// stepClock is a clock that moves one second each time it is read: a
// replay "takes" as many seconds as it reads the clock, so progress
// lines come at a known pace without sleeping.
func stepClock() func() time.Time {
	var ticks atomic.Int64
	return func() time.Time { return time.Unix(1_700_000_000+ticks.Add(1), 0) }
}

// TestKahaDBRecoveryLogsProgressAndSummary: a replay logs ActiveMQ's
// opening line ("Recovering from the journal"), a progress line each
// RecoveryProgressInterval ("entries recovered", with bytes and percent)
// and its closing summary ("Recovery replayed ... operations from the
// journal in ... seconds").
func TestKahaDBRecoveryLogsProgressAndSummary(t *testing.T) {
	const total = 300
	dir := t.TempDir()
	writeJournal(t, kahadb.Options{Dir: dir}, total)

	lg, logs := logtest.New(slog.LevelInfo)
	// One clock read per record, one second each: a line every 10 records.
	st, ss := openOneShard(t, kahadb.Options{Dir: dir, Logger: lg, Clock: stepClock(), RecoveryProgressInterval: 10 * time.Second})
	defer st.Close()
	defer ss.Close()
	if seqs := recoveredSeqs(t, ss); len(seqs) != total {
		t.Fatalf("recovered %d messages, want %d", len(seqs), total)
	}
	replayed := st.Recovery().RecordsReplayed
	if replayed < total {
		t.Fatalf("replayed %d records, want at least %d", replayed, total)
	}

	opening := logs.Find("Recovering from the journal")
	if len(opening) != 1 {
		t.Fatalf("%d opening lines, want 1", len(opening))
	}
	totalBytes, _ := opening[0].Attrs["bytes"].(int64)
	if opening[0].Attrs["dir"] != dir || totalBytes <= 0 {
		t.Fatalf("opening line %v: want the directory and the bytes to replay", opening[0].Attrs)
	}

	progress := logs.Find("entries recovered")
	if len(progress) < replayed/10-1 || len(progress) > replayed/10+1 {
		t.Fatalf("%d progress lines for %d records at one per 10 records", len(progress), replayed)
	}
	var lastEntries, lastBytes int64
	for i, p := range progress {
		entries, bytes, pct := p.Attrs["entries"].(int64), p.Attrs["bytes"].(int64), p.Attrs["percent"].(int64)
		if entries <= lastEntries || bytes < lastBytes || bytes > totalBytes || p.Attrs["total_bytes"] != totalBytes ||
			pct != bytes*100/totalBytes || p.Attrs["at"] == "" {
			t.Fatalf("progress line %d %v after entries %d, bytes %d of %d", i, p.Attrs, lastEntries, lastBytes, totalBytes)
		}
		lastEntries, lastBytes = entries, bytes
	}
	if last := progress[len(progress)-1].Attrs["percent"].(int64); last < 90 {
		t.Errorf("last progress line at %d%%, want near the end", last)
	}

	done := logs.Find("Recovery replayed operations from the journal")
	if len(done) != 1 {
		t.Fatalf("%d closing lines, want 1", len(done))
	}
	d := done[0].Attrs
	// Each record read the clock once, plus the start and the end.
	if d["records"] != int64(replayed) || d["messages"] != int64(total) || d["seconds"] != float64(replayed+1) {
		t.Errorf("closing line %v: want records %d, messages %d, seconds %d", d, replayed, total, replayed+1)
	}
}

// TestKahaDBRecoveryProgressOff: a negative interval logs no progress, the
// summary still comes.
func TestKahaDBRecoveryProgressOff(t *testing.T) {
	dir := t.TempDir()
	writeJournal(t, kahadb.Options{Dir: dir}, 50)
	lg, logs := logtest.New(slog.LevelInfo)
	st, ss := openOneShard(t, kahadb.Options{Dir: dir, Logger: lg, Clock: stepClock(), RecoveryProgressInterval: -1})
	defer st.Close()
	defer ss.Close()
	if p := logs.Find("entries recovered"); len(p) != 0 {
		t.Errorf("progress off: %d progress lines", len(p))
	}
	if d := logs.Find("Recovery replayed operations from the journal"); len(d) != 1 || d[0].Attrs["seconds"] != float64(1) {
		t.Errorf("closing lines %v: want one, 1 s long (two clock reads)", d)
	}
}

// TestKahaDBRecoveryNothingToReplay: a clean restart from the checkpoint
// index replays nothing and says nothing about the journal.
func TestKahaDBRecoveryNothingToReplay(t *testing.T) {
	dir := t.TempDir()
	st, ss := openOneShard(t, kahadb.Options{Dir: dir})
	ss.Close()
	st.Close()
	lg, logs := logtest.New(slog.LevelInfo)
	st, ss = openOneShard(t, kahadb.Options{Dir: dir, Logger: lg})
	defer st.Close()
	defer ss.Close()
	for _, m := range []string{"Recovering from the journal", "entries recovered", "Recovery replayed"} {
		if got := logs.Find(m); len(got) != 0 {
			t.Errorf("empty journal: %q lines %v", m, got)
		}
	}
}
