package kahadb_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"wharf/engine"
	"wharf/storage/kahadb"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestKahaDBIndexCorruptionAnywhere damages wharf-index.bin at seeded
// random places — a flipped bit or byte anywhere, or a truncation at any
// length — and restarts: the index is detected as unusable, dropped with a
// log line naming it and why, and the whole journal rebuilds exactly the
// state the index described.
func TestKahaDBIndexCorruptionAnywhere(t *testing.T) {
	const seed = 17
	rng := rand.New(rand.NewPCG(seed, 3))
	base := t.TempDir()
	c := openCP(t, base, kahadb.Options{})
	populate(t, c, 1, 12)
	c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: 1},
		engine.StoreOp{Kind: engine.OpAck, Dest: cpTopic, Seq: 2, Sub: cpSub1})
	want := c.state(t)
	c.close(t)
	good, err := os.ReadFile(filepath.Join(base, "wharf-index.bin"))
	if err != nil {
		t.Fatal(err)
	}
	for iter := range 60 {
		b := bytes.Clone(good)
		at := rng.IntN(len(b))
		what := fmt.Sprintf("iteration %d (seed %d): ", iter, seed)
		switch iter % 3 {
		case 0:
			b[at] ^= 1 << rng.IntN(8)
			what += fmt.Sprintf("bit flipped at %d", at)
		case 1:
			b[at] ^= byte(1 + rng.IntN(255))
			what += fmt.Sprintf("byte changed at %d", at)
		default:
			b = b[:at]
			what += fmt.Sprintf("truncated to %d bytes", at)
		}
		dir := crashCopy(t, base)
		if err := os.WriteFile(filepath.Join(dir, "wharf-index.bin"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		var lb syncBuffer
		o := kahadb.Options{Logger: slog.New(slog.NewTextHandler(&lb, nil))}
		c := openCP(t, dir, o)
		if r := c.st.Recovery(); r.FromIndex != 0 {
			t.Fatalf("%s: the damaged index was used: recovery %+v", what, r)
		}
		if s := lb.String(); !strings.Contains(s, `msg="checkpoint index ignored: replaying the whole journal"`) || !strings.Contains(s, "file=wharf-index.bin") {
			t.Fatalf("%s: no log line names the dropped index:\n%s", what, s)
		}
		sameState(t, what, c.state(t), want)
		c.close(t)
	}
}

// TestKahaDBJournalCorruptionWithIndex flips seeded random bits in the
// journal of a store that has a checkpoint index, and restarts. The index
// points at records; one that now lies in a damaged batch must not be
// loaded as if intact: recovery drops the damaged batch (logged with the
// file and offset), falls back to a replay, and everything it returns is
// exactly what was stored (no silently altered message), with at most the
// damaged batch's writes missing.
func TestKahaDBJournalCorruptionWithIndex(t *testing.T) {
	const seed = 17
	rng := rand.New(rand.NewPCG(seed, 4))
	base := t.TempDir()
	c := openCP(t, base, kahadb.Options{})
	populate(t, c, 1, 12)
	want := c.state(t)
	c.close(t)
	journal, err := os.ReadFile(filepath.Join(base, "db-1.log"))
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.Index(journal, []byte("body 1"))
	last := bytes.LastIndex(journal, []byte("WRITE BATCH"))
	if first < 0 || last < first {
		t.Fatalf("journal layout: first body at %d, last batch at %d", first, last)
	}
	wanted := map[string]bool{}
	for _, l := range want {
		wanted[l] = true
	}
	hits := 0
	for iter := range 40 {
		at := first + rng.IntN(last-first)
		what := fmt.Sprintf("iteration %d (seed %d): bit flipped at db-1.log:%d", iter, seed, at)
		dir := crashCopy(t, base)
		b := bytes.Clone(journal)
		b[at] ^= 1 << rng.IntN(8)
		if err := os.WriteFile(filepath.Join(dir, "db-1.log"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		var lb syncBuffer
		c := openCP(t, dir, kahadb.Options{Logger: slog.New(slog.NewTextHandler(&lb, nil))})
		got := c.state(t)
		for _, l := range got {
			if !wanted[l] {
				t.Fatalf("%s: recovered something never stored: %s\n%s", what, l, lb.String())
			}
		}
		// One batch is 3 writes: a queue message, a topic message, a job.
		if len(got) < len(want)-3 {
			t.Fatalf("%s: recovered %d items, want at least %d", what, len(got), len(want)-3)
		}
		skipped := strings.Contains(lb.String(), `msg="journal data skipped" shard=0 file=db-1.log offset=`)
		if skipped {
			hits++
		}
		if len(got) < len(want) && !skipped {
			t.Fatalf("%s: items lost without a log line naming the file and offset:\n%s", what, lb.String())
		}
		// The store goes on; the index written after this recovery is
		// used at the next start (the damage is not held against it).
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: cpQueue, Seq: 100, Msg: cpMsg(cpQueue, 100)})
		after := c.state(t)
		c.close(t)
		c = openCP(t, dir, kahadb.Options{})
		if r := c.st.Recovery(); skipped && r.FromIndex != 1 {
			t.Fatalf("%s: the restart after the recovery from damage did not use its index: %+v", what, r)
		}
		sameState(t, what+", restarted", c.state(t), after)
		c.close(t)
	}
	if hits < 20 {
		t.Fatalf("only %d of 40 flips were found as damage: the flips miss the batches", hits)
	}
}

// TestKahaDBJournalFileDeleted: a journal data file deleted under a running
// store (an operator's rm, a cleanup script). Reading a message that was in
// it fails with an error naming the file; the store goes on writing; the
// next start logs the gap and why the index cannot be used (naming the
// file), replays the rest of the journal and recovers everything that was
// not in the deleted file.
func TestKahaDBJournalFileDeleted(t *testing.T) {
	base := t.TempDir()
	o := kahadb.Options{JournalMaxFileLength: 1024}
	c := openCP(t, base, o)
	populate(t, c, 1, 12)
	want := c.state(t)
	if err := os.Remove(filepath.Join(base, "db-2.log")); err != nil {
		t.Fatal(err)
	}
	err := c.ss.Recover(func(engine.RecoveredItem) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "db-2.log") {
		t.Fatalf("reading the messages of a deleted journal file: err %v, want one naming db-2.log", err)
	}
	populate(t, c, 13, 1) // writes go on
	c.close(t)

	var lb syncBuffer
	o.Logger = slog.New(slog.NewTextHandler(&lb, nil))
	c = openCP(t, base, o)
	defer c.close(t)
	got := c.state(t)
	wanted := map[string]bool{}
	for _, l := range want {
		wanted[l] = true
	}
	kept := 0
	for _, l := range got {
		if wanted[l] {
			kept++
		}
	}
	// db-2.log held one batch: a queue message, a topic message, a job.
	if kept != len(want)-3 {
		t.Fatalf("recovered %d of the %d items stored before the deletion, want all but the 3 in db-2.log", kept, len(want))
	}
	s := lb.String()
	if !strings.Contains(s, "missing=[2]") || !strings.Contains(s, "is in db-2.log, which is gone") {
		t.Fatalf("the restart does not name the deleted file:\n%s", s)
	}
}
