package journal

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// logBuffer collects a Journal's log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testOptions: small files, no fsync (STYLE §9: unit tests may turn it off).
func testOptions(dir string, prealloc bool, lb *logBuffer) Options {
	o := DefaultOptions(dir)
	o.MaxFileLength = 4096
	o.Sync = false
	o.Preallocate = prealloc
	if lb != nil {
		o.Logger = lb.logger()
	}
	return o
}

func mustOpen(t *testing.T, o Options) *Journal {
	t.Helper()
	j, err := Open(o)
	if err != nil {
		t.Fatalf("Open(%s): %v", o.Dir, err)
	}
	return j
}

func mustClose(t *testing.T, j *Journal) {
	t.Helper()
	if err := j.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func mustAppend(t *testing.T, j *Journal, recs ...[]byte) []Location {
	t.Helper()
	locs, err := j.Append(recs)
	if err != nil {
		t.Fatalf("Append(%d records): %v", len(recs), err)
	}
	return locs
}

// rec is a replayed record.
type rec struct {
	loc     Location
	payload []byte
}

func replayAll(t *testing.T, j *Journal, from Location) []rec {
	t.Helper()
	var out []rec
	err := j.Replay(from, func(l Location, p []byte) error {
		out = append(out, rec{l, bytes.Clone(p)})
		return nil
	})
	if err != nil {
		t.Fatalf("Replay(%v): %v", from, err)
	}
	return out
}

func checkRecords(t *testing.T, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("replayed %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].loc != want[i].loc || !bytes.Equal(got[i].payload, want[i].payload) {
			t.Fatalf("record %d: got %v %q, want %v %q", i, got[i].loc, got[i].payload, want[i].loc, want[i].payload)
		}
	}
}

// payload returns a distinct record of n bytes (n >= 8).
func payload(i, n int) []byte {
	p := bytes.Repeat([]byte{byte('a' + i%26)}, n)
	copy(p, fmt.Sprintf("%08d", i))
	return p
}

// appendBatch appends a batch and returns its records and the batch's
// [start, end) in the file (control record to last record).
func appendBatch(t *testing.T, j *Journal, recs ...[]byte) (out []rec, start, end int64) {
	t.Helper()
	locs := mustAppend(t, j, recs...)
	for i, l := range locs {
		out = append(out, rec{l, recs[i]})
	}
	last := locs[len(locs)-1]
	return out, locs[0].Offset - batchControlSize, last.Offset + int64(last.Size)
}

func TestKahaDBJournalGoldenBatch(t *testing.T) {
	// kahadb.md §10: the first batch of a fresh ActiveMQ 5.17.2 store, a
	// KahaTraceCommand "LOADED ...".
	trace := append([]byte{0x00, 0x25, 0x0a, 0x23}, "LOADED Sun Nov 29 12:22:49 UTC 2026"...)
	got := encodeBatch(nil, [][]byte{trace}, true)
	want, _ := hex.DecodeString("0000001c02" + hex.EncodeToString([]byte("WRITE BATCH")) + "0000002c" + "00000000b98c091b" +
		"0000002c01" + hex.EncodeToString(trace) + "2d714d6134")
	if !bytes.Equal(got, want) {
		t.Fatalf("batch:\n got %x\nwant %x", got, want)
	}
	// Without checksums the field stays 0, as in EMPTY_BATCH_CONTROL_RECORD,
	// and readers skip verification.
	if got := encodeBatch(nil, [][]byte{trace}, false); !bytes.Equal(got[:20], want[:20]) || !bytes.Equal(got[20:28], make([]byte, 8)) || !bytes.Equal(got[28:], want[28:]) {
		t.Fatalf("checksum off: batch %x, want checksum 0", got)
	}
}

func TestKahaDBJournalNoChecksum(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, false, nil)
	o.Checksum = false
	j := mustOpen(t, o)
	r, _, _ := appendBatch(t, j, payload(1, 40), payload(2, 40))
	mustClose(t, j)
	j = mustOpen(t, o)
	defer mustClose(t, j)
	checkRecords(t, replayAll(t, j, Location{}), r)
}

func TestKahaDBJournalRoundTrip(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("preallocate=%v", prealloc), func(t *testing.T) {
			dir := t.TempDir()
			j := mustOpen(t, testOptions(dir, prealloc, nil))
			defer mustClose(t, j)
			rng := rand.New(rand.NewPCG(1, 2))
			var want []rec
			n := 0
			for b := 0; b < 150; b++ {
				var recs [][]byte
				for range 1 + rng.IntN(5) {
					recs = append(recs, payload(n, 8+rng.IntN(300)))
					n++
				}
				got, _, _ := appendBatch(t, j, recs...)
				want = append(want, got...)
			}
			// A batch larger than a whole file gets a file of its own.
			big, _, _ := appendBatch(t, j, payload(n, 6000))
			want = append(want, big...)
			after, _, _ := appendBatch(t, j, payload(n+1, 10))
			want = append(want, after...)
			if big[0].loc.Offset != batchControlSize || after[0].loc.File != big[0].loc.File+1 {
				t.Fatalf("oversized batch at %v, next at %v: want offset %d of its own file", big[0].loc, after[0].loc, batchControlSize)
			}

			files := j.Files()
			if len(files) < 5 || files[0] != 1 || files[len(files)-1] != after[0].loc.File {
				t.Fatalf("Files() = %v", files)
			}
			for _, id := range files {
				info, err := os.Stat(filepath.Join(dir, fileName(id)))
				if err != nil {
					t.Fatal(err)
				}
				if id != big[0].loc.File && info.Size() > 4096+eofSize {
					t.Errorf("%s is %d bytes, max file length 4096", fileName(id), info.Size())
				}
			}
			checkRecords(t, replayAll(t, j, Location{}), want)
			for _, r := range want {
				p, err := j.Read(r.loc)
				if err != nil || !bytes.Equal(p, r.payload) {
					t.Fatalf("Read(%v) = %q, %v; want %q", r.loc, p, err, r.payload)
				}
			}
			mid := len(want) / 2
			checkRecords(t, replayAll(t, j, want[mid].loc), want[mid:])
			for i := 1; i < len(want); i++ {
				if want[i-1].loc.Compare(want[i].loc) >= 0 {
					t.Fatalf("locations out of order: %v then %v", want[i-1].loc, want[i].loc)
				}
			}
		})
	}
}

func TestKahaDBJournalReopen(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("preallocate=%v", prealloc), func(t *testing.T) {
			dir := t.TempDir()
			lb := &logBuffer{}
			o := testOptions(dir, prealloc, lb)
			var want []rec
			for round := range 4 {
				j := mustOpen(t, o)
				checkRecords(t, replayAll(t, j, Location{}), want)
				head := j.Head()
				for b := range 7 {
					got, start, _ := appendBatch(t, j, payload(round*100+b, 100+b*50), payload(round*100+b+50, 20))
					if b == 0 && round > 0 && start != head.Offset && got[0].loc.File == head.File {
						t.Fatalf("round %d: first batch at %d, want the recovered head %v", round, start, head)
					}
					want = append(want, got...)
				}
				mustClose(t, j)
			}
			j := mustOpen(t, o)
			defer mustClose(t, j)
			checkRecords(t, replayAll(t, j, Location{}), want)
			for _, r := range want {
				if p, err := j.Read(r.loc); err != nil || !bytes.Equal(p, r.payload) {
					t.Fatalf("Read(%v) = %q, %v", r.loc, p, err)
				}
			}
			if s := lb.String(); strings.Contains(s, "dropped") || strings.Contains(s, "skipped") {
				t.Fatalf("clean reopen reported damage:\n%s", s)
			}
		})
	}
}

// buildFile appends batches (all must fit in db-1.log), closes the journal,
// and returns each batch's records and [start, end) offsets, and the
// contents of db-1.log.
func buildFile(t *testing.T, o Options, batches [][][]byte) (recs [][]rec, bounds [][2]int64, data []byte) {
	t.Helper()
	j := mustOpen(t, o)
	for _, b := range batches {
		r, start, end := appendBatch(t, j, b...)
		if r[0].loc.File != 1 {
			t.Fatalf("batch landed in file %d, want 1", r[0].loc.File)
		}
		recs = append(recs, r)
		bounds = append(bounds, [2]int64{start, end})
	}
	mustClose(t, j)
	data, err := os.ReadFile(filepath.Join(o.Dir, fileName(1)))
	if err != nil {
		t.Fatal(err)
	}
	return recs, bounds, data
}

func TestKahaDBJournalTornTail(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("preallocate=%v", prealloc), func(t *testing.T) {
			batches := [][][]byte{{payload(1, 40), payload(2, 9)}, {payload(3, 70)}, {payload(4, 12), payload(5, 8)}}
			recs, bounds, full := buildFile(t, testOptions(t.TempDir(), prealloc, nil), batches)
			kept := slices.Concat(recs[:2]...)
			start, end := bounds[2][0], bounds[2][1]
			if !bytes.Equal(full[end:end+eofSize], eofMarker) {
				t.Fatalf("no EOF marker after the last batch: %x", full[end:end+eofSize])
			}
			extra := payload(6, 33)
			for cut := start; cut <= end+eofSize; cut++ {
				dir := t.TempDir()
				var torn []byte
				if prealloc {
					// A torn write into a preallocated file leaves zeros.
					torn = bytes.Clone(full)
					clear(torn[cut : end+eofSize])
				} else {
					torn = full[:cut]
				}
				if err := os.WriteFile(filepath.Join(dir, fileName(1)), torn, 0o644); err != nil {
					t.Fatal(err)
				}
				lb := &logBuffer{}
				o := testOptions(dir, prealloc, lb)
				j := mustOpen(t, o)
				want := kept
				wantHead := start
				if cut >= end {
					want, wantHead = slices.Concat(recs...), end
				}
				checkRecords(t, replayAll(t, j, Location{}), want)
				if h := j.Head(); h != (Location{File: 1, Offset: wantHead}) {
					t.Fatalf("cut at %d: head %v, want 1:%d", cut, h, wantHead)
				}
				// What is reported is the data: up to the last non-zero byte
				// (the control record starts 00 00 00 1c).
				if last := bytes.LastIndexFunc(full[start:cut], func(r rune) bool { return r != 0 }); !prealloc && cut < end && last >= 0 {
					wantLog := fmt.Sprintf(`msg="journal tail dropped" file=db-1.log offset=%d bytes=%d`, start, last+1)
					if !strings.Contains(lb.String(), wantLog) {
						t.Fatalf("cut at %d: log lacks %q:\n%s", cut, wantLog, lb)
					}
				}
				more, _, _ := appendBatch(t, j, extra)
				if more[0].loc.Offset != wantHead+batchControlSize {
					t.Fatalf("cut at %d: appended at %v, want 1:%d", cut, more[0].loc, wantHead+batchControlSize)
				}
				mustClose(t, j)
				j = mustOpen(t, o)
				checkRecords(t, replayAll(t, j, Location{}), slices.Concat(want, more))
				mustClose(t, j)
			}
		})
	}
}

func TestKahaDBJournalCorruptBatch(t *testing.T) {
	batches := [][][]byte{{payload(1, 40)}, {payload(2, 30), payload(3, 20)}, {payload(4, 50)}}
	recs, bounds, full := buildFile(t, testOptions(t.TempDir(), false, nil), batches)
	start, end := bounds[1][0], bounds[1][1]
	// Every byte of the middle batch, flipped on its own, is detected: that
	// batch is skipped (logged with its file, offset and length), the
	// batches before and after it are kept, and appends go after the last.
	for at := start; at < end; at++ {
		dir := t.TempDir()
		bad := bytes.Clone(full)
		bad[at] ^= 0xff
		if err := os.WriteFile(filepath.Join(dir, fileName(1)), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		lb := &logBuffer{}
		j := mustOpen(t, testOptions(dir, false, lb))
		want := slices.Concat(recs[0], recs[2])
		checkRecords(t, replayAll(t, j, Location{}), want)
		wantLog := fmt.Sprintf(`level=ERROR msg="journal data skipped" file=db-1.log offset=%d bytes=%d`, start, end-start)
		if !strings.Contains(lb.String(), wantLog) {
			t.Fatalf("flip at %d: log lacks %q:\n%s", at, wantLog, lb)
		}
		// Appends go to a new file: the damaged one is left as it is.
		more, _, _ := appendBatch(t, j, payload(9, 10))
		if more[0].loc.File != 2 || more[0].loc.Offset != batchControlSize {
			t.Fatalf("flip at %d: appended at %v, want 2:%d", at, more[0].loc, batchControlSize)
		}
		mustClose(t, j)
		j = mustOpen(t, testOptions(dir, false, nil))
		checkRecords(t, replayAll(t, j, Location{}), slices.Concat(want, more))
		mustClose(t, j)
	}

	t.Run("older file", func(t *testing.T) {
		// Damage in a file that is not the last: Replay skips the damaged
		// batch, logs it, and goes on with the next intact one.
		dir := t.TempDir()
		lb := &logBuffer{}
		o := testOptions(dir, false, lb)
		j := mustOpen(t, o)
		r1, _, _ := appendBatch(t, j, payload(1, 100))
		_, s2, e2 := appendBatch(t, j, payload(2, 100))
		r3, _, _ := appendBatch(t, j, payload(3, 100))
		big, _, _ := appendBatch(t, j, payload(4, 5000)) // file 2
		next, _, _ := appendBatch(t, j, payload(5, 10))  // file 3
		mustClose(t, j)
		p := filepath.Join(dir, fileName(1))
		data, _ := os.ReadFile(p)
		data[s2+batchControlSize+20] ^= 1
		os.WriteFile(p, data, 0o644)
		j = mustOpen(t, o)
		defer mustClose(t, j)
		checkRecords(t, replayAll(t, j, Location{}), slices.Concat(r1, r3, big, next))
		wantLog := fmt.Sprintf(`level=ERROR msg="journal data skipped" file=db-1.log offset=%d bytes=%d reason="batch checksum mismatch"`, s2, e2-s2)
		if !strings.Contains(lb.String(), wantLog) {
			t.Fatalf("log lacks %q:\n%s", wantLog, lb)
		}
	})
}

func TestKahaDBJournalZeroedRegion(t *testing.T) {
	t.Run("last file", func(t *testing.T) {
		batches := [][][]byte{{payload(1, 40)}, {payload(2, 30)}, {payload(3, 50)}}
		recs, bounds, full := buildFile(t, testOptions(t.TempDir(), false, nil), batches)
		dir := t.TempDir()
		bad := bytes.Clone(full)
		clear(bad[bounds[1][0]:bounds[1][1]])
		os.WriteFile(filepath.Join(dir, fileName(1)), bad, 0o644)
		lb := &logBuffer{}
		j := mustOpen(t, testOptions(dir, false, lb))
		defer mustClose(t, j)
		checkRecords(t, replayAll(t, j, Location{}), slices.Concat(recs[0], recs[2]))
		// The zeros are skipped, with a log line; the intact third batch
		// behind them is kept.
		wantLog := fmt.Sprintf(`msg="journal data skipped" file=db-1.log offset=%d bytes=%d reason="end of file marker or zeros before intact batches"`, bounds[1][0], bounds[1][1]-bounds[1][0])
		if !strings.Contains(lb.String(), wantLog) {
			t.Fatalf("log lacks %q:\n%s", wantLog, lb)
		}
	})
	t.Run("preallocated hole is a clean end", func(t *testing.T) {
		dir := t.TempDir()
		lb := &logBuffer{}
		o := testOptions(dir, true, lb)
		j := mustOpen(t, o)
		r, _, _ := appendBatch(t, j, payload(1, 40))
		mustClose(t, j)
		// Replace the EOF marker after the batch by zeros: the hole ends
		// the file just as well.
		p := filepath.Join(dir, fileName(1))
		data, _ := os.ReadFile(p)
		if len(data) != 4096 || !bytes.Equal(data[4096-eofSize:], eofMarker) || !bytes.Equal(data[r[0].loc.Offset+int64(r[0].loc.Size):][:eofSize], eofMarker) {
			t.Fatalf("preallocated file: %d bytes, tail %x", len(data), data[len(data)-eofSize:])
		}
		clear(data[r[0].loc.Offset+int64(r[0].loc.Size):][:eofSize])
		os.WriteFile(p, data, 0o644)
		j = mustOpen(t, o)
		defer mustClose(t, j)
		checkRecords(t, replayAll(t, j, Location{}), r)
		if h := j.Head(); h.Offset != r[0].loc.Offset+int64(r[0].loc.Size) {
			t.Fatalf("head %v", h)
		}
		if s := lb.String(); strings.Contains(s, "dropped") {
			t.Fatalf("hole reported as damage:\n%s", s)
		}
	})
	t.Run("older file", func(t *testing.T) {
		dir := t.TempDir()
		lb := &logBuffer{}
		o := testOptions(dir, false, lb)
		j := mustOpen(t, o)
		r1, _, _ := appendBatch(t, j, payload(1, 100))
		_, s2, e2 := appendBatch(t, j, payload(2, 100))
		r3, _, _ := appendBatch(t, j, payload(3, 100))
		next, _, _ := appendBatch(t, j, payload(4, 5000)) // file 2
		mustClose(t, j)
		p := filepath.Join(dir, fileName(1))
		data, _ := os.ReadFile(p)
		clear(data[s2:e2])
		os.WriteFile(p, data, 0o644)
		j = mustOpen(t, o)
		defer mustClose(t, j)
		checkRecords(t, replayAll(t, j, Location{}), slices.Concat(r1, r3, next))
		wantLog := fmt.Sprintf(`level=ERROR msg="journal data skipped" file=db-1.log offset=%d bytes=%d`, s2, e2-s2)
		if !strings.Contains(lb.String(), wantLog) {
			t.Fatalf("log lacks %q:\n%s", wantLog, lb)
		}
	})
}

// TestKahaDBJournalMissingFile: a file missing between others is skipped by
// Replay and reported by Open (gaps are normal after GC, and ActiveMQ's
// journal skips them too); a location inside it is ErrMissingFile, which is
// what fails ActiveMQ's startup (ignoreMissingJournalfiles=false) when its
// index needs that file.
func TestKahaDBJournalMissingFile(t *testing.T) {
	dir := t.TempDir()
	lb := &logBuffer{}
	o := testOptions(dir, false, lb)
	j := mustOpen(t, o)
	var byFile [][]rec
	for i := range 4 {
		r, _, _ := appendBatch(t, j, payload(i, 3000))
		byFile = append(byFile, r)
	}
	mustClose(t, j)
	if err := os.Remove(filepath.Join(dir, fileName(2))); err != nil {
		t.Fatal(err)
	}
	j = mustOpen(t, o)
	defer mustClose(t, j)
	if !strings.Contains(lb.String(), `msg="journal files missing between existing ones"`) || !strings.Contains(lb.String(), "missing=[2]") {
		t.Fatalf("gap not logged:\n%s", lb)
	}
	if got := j.Files(); !slices.Equal(got, []int{1, 3, 4}) {
		t.Fatalf("Files() = %v", got)
	}
	checkRecords(t, replayAll(t, j, Location{}), slices.Concat(byFile[0], byFile[2], byFile[3]))
	if _, err := j.Read(byFile[1][0].loc); !errors.Is(err, ErrMissingFile) {
		t.Fatalf("Read in missing file: %v, want ErrMissingFile", err)
	}
	if err := j.Replay(byFile[1][0].loc, func(Location, []byte) error { return nil }); !errors.Is(err, ErrMissingFile) {
		t.Fatalf("Replay from missing file: %v, want ErrMissingFile", err)
	}
}

func TestKahaDBJournalRemoveArchive(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, false, nil)
	j := mustOpen(t, o)
	defer mustClose(t, j)
	var byFile [][]rec
	for i := range 4 {
		r, _, _ := appendBatch(t, j, payload(i, 3000))
		byFile = append(byFile, r)
	}
	if _, err := j.Read(byFile[0][0].loc); err != nil { // caches a read handle
		t.Fatal(err)
	}
	if err := j.Remove(1); err != nil {
		t.Fatalf("Remove(1): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, fileName(1))); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("db-1.log after Remove: %v", err)
	}
	if err := j.Archive(2, ""); err != nil {
		t.Fatalf("Archive(2): %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, DefaultArchiveDir, fileName(2))); err != nil {
		t.Fatalf("archived file: %v", err)
	}
	if err := j.Remove(4); !errors.Is(err, ErrCurrentFile) {
		t.Fatalf("Remove(current): %v, want ErrCurrentFile", err)
	}
	if err := j.Archive(4, ""); !errors.Is(err, ErrCurrentFile) {
		t.Fatalf("Archive(current): %v, want ErrCurrentFile", err)
	}
	if err := j.Remove(1); !errors.Is(err, ErrMissingFile) {
		t.Fatalf("Remove(removed): %v, want ErrMissingFile", err)
	}
	if got := j.Files(); !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("Files() = %v", got)
	}
	if _, err := j.Read(byFile[1][0].loc); !errors.Is(err, ErrMissingFile) {
		t.Fatalf("Read in archived file: %v", err)
	}
	// Replay from the start: the removed files are simply gone.
	checkRecords(t, replayAll(t, j, Location{}), slices.Concat(byFile[2], byFile[3]))
}

func TestKahaDBJournalSync(t *testing.T) {
	for _, sync := range []bool{false, true} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			o := testOptions(t.TempDir(), false, nil)
			o.Sync = sync
			j := mustOpen(t, o)
			defer mustClose(t, j)
			base := j.Stats().Syncs // the new file's creation
			for i := range 10 {
				mustAppend(t, j, payload(i, 100), payload(i+1, 100))
			}
			s := j.Stats()
			want := uint64(0)
			if sync {
				want = 10
			}
			if s.Syncs-base != want || s.Batches != 10 || s.Records != 20 {
				t.Fatalf("stats %+v (syncs before appends %d), want %d fsyncs", s, base, want)
			}
		})
	}
}

// AppendNoSync leaves its batches to the next sync: an Append, Sync, a
// rotation to a new file, or Close — each exactly one fsync, none when
// nothing is pending — and the batches replay like any others.
func TestKahaDBJournalAppendNoSync(t *testing.T) {
	o := testOptions(t.TempDir(), false, nil)
	o.Sync = true
	j := mustOpen(t, o)
	syncs := func() uint64 { return j.Stats().Syncs }
	step := func(what string, f func(), want uint64) {
		t.Helper()
		before := syncs()
		f()
		if got := syncs() - before; got != want {
			t.Fatalf("%s: %d fsyncs, want %d", what, got, want)
		}
	}
	var want []rec
	noSync := func(i int) {
		recs := [][]byte{payload(i, 100)}
		locs, err := j.AppendNoSync(recs)
		if err != nil {
			t.Fatalf("AppendNoSync: %v", err)
		}
		want = append(want, rec{locs[0], recs[0]})
	}
	step("unsynced appends", func() { noSync(0); noSync(1) }, 0)
	step("Sync with pending batches", func() {
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
	}, 1)
	step("Sync with nothing pending", func() {
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
	}, 0)
	step("unsynced append", func() { noSync(2) }, 0)
	step("synced append after an unsynced one", func() {
		out, _, _ := appendBatch(t, j, payload(3, 100))
		want = append(want, out...)
	}, 1)
	step("Sync after a synced append", func() {
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
	}, 0)
	// Fill the 4 KiB file with unsynced batches until one lands in a new
	// file: the rotation syncs the old file, and the new file's creation
	// syncs once more.
	first := j.Head().File
	i := 4
	for j.Head().File == first {
		before := syncs()
		noSync(i)
		i++
		if j.Head().File != first {
			if got := syncs() - before; got != 2 {
				t.Fatalf("rotation after unsynced batches: %d fsyncs, want 2 (old file, new file)", got)
			}
		}
	}
	step("unsynced append in the new file", func() { noSync(i) }, 0)
	step("Close with a pending batch", func() { mustClose(t, j) }, 1)

	j = mustOpen(t, o)
	defer mustClose(t, j)
	checkRecords(t, replayAll(t, j, Location{}), want)
}

func TestKahaDBJournalErrors(t *testing.T) {
	o := testOptions(t.TempDir(), false, nil)
	o.MaxWriteBatchSize = 1024
	j := mustOpen(t, o)
	locs := mustAppend(t, j, payload(1, 50), payload(2, 50))
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"empty batch", func() error { _, err := j.Append(nil); return err }(), ErrEmptyBatch},
		{"batch reaching max write batch size", func() error {
			_, err := j.Append([][]byte{payload(1, 500), payload(2, 500)})
			return err
		}(), ErrBatchTooLarge},
		{"read inside a record", func() error { _, err := j.Read(Location{File: 1, Offset: locs[0].Offset + 1}); return err }(), ErrCorrupt},
		{"read with the wrong size", func() error {
			_, err := j.Read(Location{File: 1, Offset: locs[0].Offset, Size: 56})
			return err
		}(), ErrCorrupt},
		{"read the control record", func() error { _, err := j.Read(Location{File: 1, Offset: 0}); return err }(), ErrCorrupt},
		{"read past the end", func() error { _, err := j.Read(Location{File: 1, Offset: 4000}); return err }(), nil},
		{"read a negative offset", func() error { _, err := j.Read(Location{File: 1, Offset: -1}); return err }(), ErrInvalidLocation},
		{"read an unknown file", func() error { _, err := j.Read(Location{File: 7}); return err }(), ErrMissingFile},
	}
	for _, tc := range cases {
		if tc.want == nil {
			if tc.err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	// One record may exceed the batch limit.
	mustAppend(t, j, payload(3, 2000))
	mustClose(t, j)
	if _, err := j.Append([][]byte{payload(1, 10)}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := j.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v", err)
	}
}

func TestKahaDBJournalEmptyFileIgnored(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir, false, nil)
	j := mustOpen(t, o)
	r, _, _ := appendBatch(t, j, payload(1, 10))
	mustClose(t, j)
	// A crash between creating db-2.log and writing to it.
	os.WriteFile(filepath.Join(dir, fileName(2)), nil, 0o644)
	j = mustOpen(t, o)
	defer mustClose(t, j)
	if h := j.Head(); h.File != 1 {
		t.Fatalf("head %v, want file 1", h)
	}
	big, _, _ := appendBatch(t, j, payload(2, 5000)) // rotates into the empty db-2.log
	checkRecords(t, replayAll(t, j, Location{}), slices.Concat(r, big))
}

// ReadMany returns what Read returns for each location, whether the
// records are adjacent, apart, in several files, or out of order; a
// location whose size does not match the record is an error.
func TestKahaDBJournalReadMany(t *testing.T) {
	j := mustOpen(t, testOptions(t.TempDir(), true, nil))
	defer mustClose(t, j)
	var all []Location
	var want [][]byte
	for i := range 40 {
		recs := [][]byte{payload(i, 100+i), payload(1000+i, 30)}
		all = append(all, mustAppend(t, j, recs...)...)
		want = append(want, recs...)
	}
	if len(j.Files()) < 2 {
		t.Fatalf("files %v: the test needs records in several files", j.Files())
	}
	pick := []int{0, 1, 2, 5, 9, 10, 11, 39, 40, 41, 79, 3, 0}
	var locs []Location
	for _, i := range pick {
		locs = append(locs, all[i])
	}
	got, err := j.ReadMany(locs)
	if err != nil {
		t.Fatal(err)
	}
	for k, i := range pick {
		if !bytes.Equal(got[k], want[i]) {
			t.Errorf("ReadMany[%d] (%v): got %q, want %q", k, all[i], got[k], want[i])
		}
	}
	bad := all[4]
	bad.Size++
	if _, err := j.ReadMany([]Location{all[3], bad}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("ReadMany with a wrong size: got error %v, want ErrCorrupt", err)
	}
	if _, err := j.ReadMany([]Location{{File: 99, Offset: 28, Size: 10}}); !errors.Is(err, ErrMissingFile) {
		t.Errorf("ReadMany in a missing file: got error %v, want ErrMissingFile", err)
	}
}

// TestJournalWriteFailureNamesTheLocation: a failed append says where, in
// DataFileAppender's words ("Journal failed while writing at: 1:N"), which
// the engine logs as its "store write failed" error.
func TestJournalWriteFailureNamesTheLocation(t *testing.T) {
	j, err := Open(DefaultOptions(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := j.Append([][]byte{[]byte("first")}); err != nil {
		t.Fatal(err)
	}
	head := j.Head()
	j.curF.Close() // the disk goes away under the journal
	_, err = j.Append([][]byte{[]byte("second")})
	want := fmt.Sprintf("Journal failed while writing at: %d:%d", head.File, head.Offset)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("append to a closed data file: %v, want an error containing %q", err, want)
	}
}

// TestJournalBytes: the bytes between two locations, across data files,
// which a replay's progress lines report.
func TestJournalBytes(t *testing.T) {
	o := DefaultOptions(t.TempDir())
	o.MaxFileLength = 4096
	o.Preallocate = false
	j, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var first Location
	for i := 0; i < 40; i++ {
		locs, err := j.Append([][]byte{bytes.Repeat([]byte{'x'}, 300)})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = locs[0]
		}
	}
	ids := j.Files()
	if len(ids) < 3 {
		t.Fatalf("%d data files, want several", len(ids))
	}
	var sum int64
	for _, id := range ids {
		sum += j.files[id].length
	}
	end := Location{File: math.MaxInt}
	check := func(name string, got, want int64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %d bytes, want %d", name, got, want)
		}
	}
	check("whole journal", j.Bytes(Location{}, end), sum)
	check("up to the head", j.Bytes(Location{}, j.Head()), sum)
	check("from the head", j.Bytes(j.Head(), end), 0)
	check("from the first record", j.Bytes(first, end), sum-first.Offset)
	mid := Location{File: ids[1], Offset: 100}
	check("to the middle of the second file", j.Bytes(Location{}, mid), j.files[ids[0]].length+100)
}
