package journal

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// faults makes the data files the journal opens fail as a sick disk does:
// writes (ENOSPC after a partial write) and fsyncs (EIO). Installed with
// injectFaults for the duration of a test.
type faults struct {
	mu       sync.Mutex
	writeErr error // WriteAt writes half its bytes, then fails with it
	syncErr  error // Sync fails with it
	writes   int   // WriteAt calls that reached the file
	syncs    int   // Sync calls
}

func (f *faults) set(write, sync error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writeErr, f.syncErr = write, sync
}

func (f *faults) counts() (writes, syncs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, f.syncs
}

type faultyFile struct {
	*os.File
	f *faults
}

func (ff faultyFile) WriteAt(p []byte, off int64) (int, error) {
	ff.f.mu.Lock()
	err := ff.f.writeErr
	ff.f.writes++
	ff.f.mu.Unlock()
	if err != nil {
		n, _ := ff.File.WriteAt(p[:len(p)/2], off)
		return n, &os.PathError{Op: "write", Path: ff.Name(), Err: err}
	}
	return ff.File.WriteAt(p, off)
}

func (ff faultyFile) Sync() error {
	ff.f.mu.Lock()
	err := ff.f.syncErr
	ff.f.syncs++
	ff.f.mu.Unlock()
	if err != nil {
		return &os.PathError{Op: "sync", Path: ff.Name(), Err: err}
	}
	return ff.File.Sync()
}

func injectFaults(t *testing.T) *faults {
	t.Helper()
	fl := &faults{}
	orig := openFile
	openFile = func(name string, flag int, perm os.FileMode) (file, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return faultyFile{File: f, f: fl}, nil
	}
	t.Cleanup(func() { openFile = orig })
	return fl
}

// TestJournalFsyncFailureStopsWrites: after an fsync of a data file fails,
// the journal acknowledges nothing more, even when fsync would succeed
// again (fsyncgate: the kernel may have dropped the pages it could not
// write, so a later successful fsync proves nothing about them). It says
// so in the log, with the file and offset, and a reopen recovers what was
// synced before the failure.
func TestJournalFsyncFailureStopsWrites(t *testing.T) {
	dir := t.TempDir()
	fl := injectFaults(t)
	var lb logBuffer
	o := testOptions(dir, true, &lb)
	o.Sync = true
	j := mustOpen(t, o)
	a := mustAppend(t, j, []byte("synced-a"))
	if _, err := j.AppendNoSync([][]byte{[]byte("unsynced-b")}); err != nil {
		t.Fatalf("AppendNoSync: %v", err)
	}
	head := j.Head()

	fl.set(nil, syscall.EIO)
	if _, err := j.Append([][]byte{[]byte("failed-c")}); err == nil || !errors.Is(err, syscall.EIO) {
		t.Fatalf("Append with fsync failing: err %v, want EIO", err)
	}
	if !strings.Contains(lb.String(), "Journal failed to sync") || !strings.Contains(lb.String(), "file=db-1.log offset=") {
		t.Fatalf("no log line naming the failed fsync's file and offset:\n%s", lb.String())
	}

	// The disk answers again: the journal must still refuse.
	fl.set(nil, nil)
	writes, syncs := fl.counts()
	if _, err := j.Append([][]byte{[]byte("after-d")}); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Append after a failed fsync: err %v, want ErrSyncFailed", err)
	}
	if _, err := j.AppendNoSync([][]byte{[]byte("after-e")}); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("AppendNoSync after a failed fsync: err %v, want ErrSyncFailed", err)
	}
	if err := j.Sync(); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Sync after a failed fsync: err %v, want ErrSyncFailed", err)
	}
	if w, s := fl.counts(); w != writes || s != syncs {
		t.Fatalf("the stopped journal wrote %d times and synced %d times", w-writes, s-syncs)
	}
	if j.Head() != head {
		t.Fatalf("head moved from %v to %v although the batch failed", head, j.Head())
	}
	if err := j.Close(); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Close of a stopped journal: err %v, want ErrSyncFailed", err)
	}

	j = mustOpen(t, o)
	defer mustClose(t, j)
	got := replayAll(t, j, Location{})
	if len(got) == 0 || got[0].loc != a[0] || string(got[0].payload) != "synced-a" {
		t.Fatalf("the batch synced before the failure is gone: %v", got)
	}
	for _, r := range got {
		if p := string(r.payload); strings.HasPrefix(p, "after-") {
			t.Fatalf("a batch refused after the failed fsync reached the journal: %q at %v", p, r.loc)
		}
	}
	// A fresh journal writes again.
	mustAppend(t, j, []byte("restarted"))
}

// TestJournalWriteFailureResumes: a write that fails (ENOSPC: a full disk)
// after reaching the file in part is not acknowledged, leaves the append
// position where it was, and does not stop the journal: once there is room
// the next batch goes where the failed one would have, and a reopen (also
// one right after the failure, as after a crash) finds every batch that
// succeeded and nothing of the failed one.
func TestJournalWriteFailureResumes(t *testing.T) {
	for _, crash := range []bool{false, true} {
		t.Run(map[bool]string{false: "resume", true: "crash"}[crash], func(t *testing.T) {
			dir := t.TempDir()
			fl := injectFaults(t)
			var lb logBuffer
			o := testOptions(dir, true, &lb)
			o.Sync = true
			j := mustOpen(t, o)
			var want []rec
			for i := range 3 {
				p := payload(i, 100)
				want = append(want, rec{mustAppend(t, j, p)[0], p})
			}
			head := j.Head()
			fl.set(syscall.ENOSPC, nil)
			if _, err := j.Append([][]byte{payload(99, 300)}); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Append on a full disk: err %v, want ENOSPC", err)
			}
			if j.Head() != head {
				t.Fatalf("head moved from %v to %v after a failed write", head, j.Head())
			}
			fl.set(nil, nil)
			if !crash {
				p := payload(3, 50)
				l := mustAppend(t, j, p)
				if l[0].Offset != head.Offset+batchControlSize {
					t.Fatalf("the batch after the failed one went to %v, want offset %d", l[0], head.Offset+batchControlSize)
				}
				want = append(want, rec{l[0], p})
			}
			if err := j.curF.Close(); err != nil { // a crash: no Close
				t.Fatal(err)
			}
			j = mustOpen(t, o)
			defer mustClose(t, j)
			got := replayAll(t, j, Location{})
			for _, r := range got {
				if bytes.Equal(r.payload, payload(99, 300)) {
					t.Fatalf("the failed batch was recovered at %v", r.loc)
				}
			}
			checkRecords(t, got, want)
			p := payload(4, 60)
			l := mustAppend(t, j, p)
			checkRecords(t, replayAll(t, j, Location{}), append(want, rec{l[0], p}))
		})
	}
}

// corruptionJournal writes a journal of several data files and returns its
// directory, its options and every batch written.
type writtenBatch struct {
	file       int
	start, end int64 // control record .. past the last record
	recs       []rec
}

func corruptionJournal(t *testing.T, prealloc bool, rng *rand.Rand) (string, []writtenBatch) {
	t.Helper()
	dir := t.TempDir()
	j := mustOpen(t, testOptions(dir, prealloc, nil))
	var out []writtenBatch
	for i := 0; len(j.Files()) < 4 || len(out) < 40; i++ {
		n := 1 + rng.IntN(3)
		var ps [][]byte
		for k := range n {
			ps = append(ps, payload(i*10+k, 8+rng.IntN(200)))
		}
		locs := mustAppend(t, j, ps...)
		b := writtenBatch{file: locs[0].File, start: locs[0].Offset - batchControlSize}
		for k, l := range locs {
			b.recs = append(b.recs, rec{l, ps[k]})
			b.end = l.Offset + int64(l.Size)
		}
		out = append(out, b)
	}
	mustClose(t, j)
	return dir, out
}

func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// TestJournalCorruptionAnywhere damages a journal of four data files at
// seeded random places, one at a time — a flipped bit or byte anywhere in
// any file (batch headers, records, EOF markers, the preallocated hole), or
// a truncation at any offset — and reopens it. Recovery must return every
// record of every batch the damage did not touch, at its location and with
// its payload, return nothing else, log the damaged file and offset when a
// record is lost, and go on appending after it.
func TestJournalCorruptionAnywhere(t *testing.T) {
	const seed = 17
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			base, batches := corruptionJournal(t, prealloc, rng)
			files := map[int]int64{}
			for _, b := range batches {
				files[b.file] = 0
			}
			ids := slices.Sorted(maps.Keys(files))
			for _, id := range ids {
				info, err := os.Stat(filepath.Join(base, fileName(id)))
				if err != nil {
					t.Fatal(err)
				}
				files[id] = info.Size()
			}
			for iter := range 400 {
				id := ids[rng.IntN(len(ids))]
				at := rng.Int64N(files[id])
				truncate := iter%4 == 3
				var mask byte = 1 << rng.IntN(8)
				if iter%3 == 1 {
					mask = byte(1 + rng.IntN(255))
				}
				what := fmt.Sprintf("iteration %d (seed %d): %s at %d, mask %#x", iter, seed, fileName(id), at, mask)
				if truncate {
					what = fmt.Sprintf("iteration %d (seed %d): %s truncated at %d", iter, seed, fileName(id), at)
				}
				dir := copyDir(t, base)
				p := filepath.Join(dir, fileName(id))
				if truncate {
					if err := os.Truncate(p, at); err != nil {
						t.Fatal(err)
					}
				} else {
					data, _ := os.ReadFile(p)
					data[at] ^= mask
					os.WriteFile(p, data, 0o644)
				}
				lb := &logBuffer{}
				j, err := Open(testOptions(dir, prealloc, lb))
				if err != nil {
					t.Fatalf("%s: Open: %v", what, err)
				}
				got := replayAll(t, j, Location{})
				var want []rec
				var lost []writtenBatch
				for _, b := range batches {
					hit := b.file == id && (truncate && b.end > at || !truncate && at >= b.start && at < b.end)
					if hit {
						lost = append(lost, b)
					} else {
						want = append(want, b.recs...)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%s: recovered %d records, want %d\n%s", what, len(got), len(want), lb)
				}
				for i := range got {
					if got[i].loc != want[i].loc || !bytes.Equal(got[i].payload, want[i].payload) {
						t.Fatalf("%s: record %d: got %v, want %v\n%s", what, i, got[i].loc, want[i].loc, lb)
					}
				}
				if len(lost) > 0 {
					if s := lb.String(); !strings.Contains(s, "file="+fileName(id)+" offset="+strconv.FormatInt(lost[0].start, 10)) {
						t.Fatalf("%s: no log line names %s offset %d:\n%s", what, fileName(id), lost[0].start, s)
					}
				}
				// The journal goes on: a batch appended now comes back
				// after a reopen, after everything recovered.
				extra := mustAppend(t, j, []byte("after the damage"))
				mustClose(t, j)
				j = mustOpen(t, testOptions(dir, prealloc, nil))
				checkRecords(t, replayAll(t, j, Location{}), append(want, rec{extra[0], []byte("after the damage")}))
				mustClose(t, j)
			}
		})
	}
}

// TestJournalFullDiskAtRotation: the disk fills just as the journal moves
// to a new data file (its creation and preallocation fail). The batch is
// not acknowledged, and once there is room the journal creates the file
// and goes on; a reopen finds every batch that succeeded.
func TestJournalFullDiskAtRotation(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) {
			dir := t.TempDir()
			fl := injectFaults(t)
			o := testOptions(dir, prealloc, nil)
			o.Sync = true
			j := mustOpen(t, o)
			var want []rec
			for i := 0; j.Head().Offset < o.MaxFileLength-600; i++ {
				p := payload(i, 300)
				want = append(want, rec{mustAppend(t, j, p)[0], p})
			}
			fl.set(syscall.ENOSPC, nil)
			for range 2 {
				if _, err := j.Append([][]byte{payload(99, 900)}); err == nil {
					t.Fatal("Append needing a new data file succeeded on a full disk")
				}
			}
			fl.set(nil, nil)
			p := payload(100, 900)
			l, err := j.Append([][]byte{p})
			if err != nil {
				t.Fatalf("Append once there is room again: %v", err)
			}
			want = append(want, rec{l[0], p})
			mustClose(t, j)
			j = mustOpen(t, o)
			defer mustClose(t, j)
			checkRecords(t, replayAll(t, j, Location{}), want)
		})
	}
}
