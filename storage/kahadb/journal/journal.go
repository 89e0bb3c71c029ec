package journal

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults, as KahaDB's (Journal.DEFAULT_*, MessageDatabase).
const (
	// DefaultMaxFileLength is journalMaxFileLength: 32 MiB.
	DefaultMaxFileLength = 32 << 20
	// DefaultMaxWriteBatchSize is journalMaxWriteBatchSize: 4 MiB.
	DefaultMaxWriteBatchSize = 4 << 20
	// DefaultArchiveDir is Journal.DEFAULT_ARCHIVE_DIRECTORY, under Dir.
	DefaultArchiveDir = "data-archive"
)

// Options configures a Journal. Start from DefaultOptions: the zero value of
// Checksum, Sync and Preallocate is off, unlike ActiveMQ's defaults.
type Options struct {
	// Dir is the KahaDB directory holding the db-N.log files; created if
	// missing.
	Dir string
	// MaxFileLength is the size in bytes at which a data file is rotated
	// (journalMaxFileLength); 0 means DefaultMaxFileLength. A batch larger
	// than this still gets a file of its own.
	MaxFileLength int64
	// MaxWriteBatchSize bounds, in bytes, a batch of more than one record
	// (journalMaxWriteBatchSize); 0 means DefaultMaxWriteBatchSize.
	MaxWriteBatchSize int
	// Sync makes Append fsync the data file before it returns
	// (enableJournalDiskSyncs=true, journalDiskSyncStrategy=ALWAYS).
	Sync bool
	// Checksum stores the Adler32 of each batch (checksumJournalFiles).
	// Batches carrying a checksum are always verified on read.
	Checksum bool
	// Preallocate sizes each new data file to MaxFileLength as ActiveMQ's
	// default SPARSE_FILE strategy does: an EOF marker at offset 0 and at
	// MaxFileLength-5, a hole in between.
	Preallocate bool
	// ReadOnly opens the journal for inspection (wharf kahadb): nothing is
	// created, truncated or written, damage is only reported, and Append
	// fails.
	ReadOnly bool
	// Logger receives recovery and damage reports; nil discards them.
	Logger *slog.Logger
	// Observer is told of every batch written and every data file fsync
	// (the web server's histograms); nil tells nobody.
	Observer Observer
}

// Observer watches a Journal's writes. Its methods are called on the
// journal's goroutine, after the write or fsync, and must not block.
type Observer interface {
	// Batch reports a batch of records written, bytes long.
	Batch(records, bytes int)
	// Synced reports an fsync of a data file that took d.
	Synced(d time.Duration)
}

// DefaultOptions returns ActiveMQ 5.17's journal defaults for dir: 32 MiB
// files, 4 MiB batches, fsync per batch, Adler32 checksums, sparse
// preallocation.
func DefaultOptions(dir string) Options {
	return Options{
		Dir:               dir,
		MaxFileLength:     DefaultMaxFileLength,
		MaxWriteBatchSize: DefaultMaxWriteBatchSize,
		Sync:              true,
		Checksum:          true,
		Preallocate:       true,
	}
}

// Location names a user record: data file id, offset of the record's size
// field, and record size including its 5-byte header (KahaDB's Location).
// Locations order by (File, Offset); the zero Location is before every
// record.
type Location struct {
	File   int
	Offset int64
	Size   int32
}

// Compare orders l and o by (File, Offset).
func (l Location) Compare(o Location) int {
	if c := cmp.Compare(l.File, o.File); c != 0 {
		return c
	}
	return cmp.Compare(l.Offset, o.Offset)
}

// String formats l as ActiveMQ logs a location: "file:offset".
func (l Location) String() string {
	return strconv.Itoa(l.File) + ":" + strconv.FormatInt(l.Offset, 10)
}

// Stats counts a Journal's appends since Open.
type Stats struct {
	Batches uint64 // batches written
	Records uint64 // user records written
	Bytes   uint64 // bytes written, control records and EOF markers included
	Syncs   uint64 // successful fsyncs of a data file
}

// dataFile is one db-N.log known to the journal.
type dataFile struct {
	id     int
	length int64 // bytes of batches: the append offset for the current file
	// skips maps the offset of damage found in the file to the offset of
	// the intact batch after it (skipDamage), so that it is searched for
	// and logged once.
	skips map[int64]int64
}

// Journal is a KahaDB journal directory: an append-only sequence of data
// files db-1.log, db-2.log, ... holding batches of user records.
//
// A Journal is not safe for concurrent use: it belongs to one goroutine (the
// shard that owns the store), which calls every method. Payloads returned by
// Read are the caller's; those passed to Replay's callback are not (see
// Replay).
type Journal struct {
	o      Options
	log    *slog.Logger
	files  map[int]*dataFile
	ids    []int // ascending ids of files present
	cur    *dataFile
	curF   file
	buf    []byte   // batch encoding buffer, reused
	cache  []reader // read handles of older files, most recent first
	stats  Stats
	closed bool
	damage []string // ReadOnly: what Open found unreadable
	// unsynced: AppendNoSync wrote to the current file since its last sync.
	unsynced bool
	// rotate: the next batch starts a new data file (Open skipped damage
	// in the last one: see recoverTail).
	rotate bool
	// failed is the first failed fsync of a data file: from then on the
	// journal writes nothing and syncs nothing (see ErrSyncFailed).
	failed error
}

type reader struct {
	id int
	f  file
}

// file is the part of *os.File the journal uses on its data files.
type file interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Truncate(size int64) error
	Close() error
	Name() string
	Stat() (os.FileInfo, error)
}

// openFile opens a data file. The package's tests replace it to make
// writes and fsyncs fail (disk faults); nothing else does.
var openFile = func(name string, flag int, perm os.FileMode) (file, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readCacheSize is how many older data files keep an open read handle.
const readCacheSize = 4

// Open opens or creates the journal in o.Dir. It lists the db-N.log files,
// ignores empty ones (a failed creation, as ActiveMQ does), and scans the
// last one batch by batch, as Journal.recoveryCheck does, to find the append
// position: the scan stops at the EOF marker, at zeros, or at the first
// batch that is incomplete (a torn write: batchLen overruns the file),
// malformed or fails its checksum. If an intact batch follows further on,
// the damage is skipped (logged with file, offset and bytes) and the scan
// resumes there; else what lies past that point is logged (file, offset,
// bytes) and cut off, so that appends continue from the last intact
// batch. Earlier files are checked by Replay, not here. Gaps in the file ids
// are normal after GC: they are logged, and Read and Replay report
// ErrMissingFile only for a location inside one.
//
// Open does not take the directory lock: call Lock first.
func Open(o Options) (*Journal, error) {
	if o.MaxFileLength == 0 {
		o.MaxFileLength = DefaultMaxFileLength
	}
	if o.MaxWriteBatchSize == 0 {
		o.MaxWriteBatchSize = DefaultMaxWriteBatchSize
	}
	switch {
	case o.Dir == "":
		return nil, errors.New("journal: no directory")
	case o.MaxFileLength < batchControlSize+recordHeadSize+eofSize || o.MaxFileLength > 1<<31-1:
		// File offsets are Java ints in ActiveMQ's Location.
		return nil, fmt.Errorf("journal: max file length %d outside [%d, %d]", o.MaxFileLength, batchControlSize+recordHeadSize+eofSize, 1<<31-1)
	case o.MaxWriteBatchSize < batchControlSize+recordHeadSize:
		return nil, fmt.Errorf("journal: max write batch size %d below %d", o.MaxWriteBatchSize, batchControlSize+recordHeadSize)
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	if !o.ReadOnly {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("journal: %w", err)
		}
	}
	j := &Journal{o: o, log: lg, files: map[int]*dataFile{}}
	if err := j.list(); err != nil {
		return nil, err
	}
	if len(j.ids) == 0 {
		if o.ReadOnly {
			return j, nil
		}
		if err := j.create(1); err != nil {
			return nil, err
		}
		return j, nil
	}
	if err := j.recoverTail(); err != nil {
		j.closeFiles()
		return nil, err
	}
	return j, nil
}

// fileName is Journal.getFile: "db-" + id + ".log".
func fileName(id int) string { return "db-" + strconv.Itoa(id) + ".log" }

func (j *Journal) path(id int) string { return filepath.Join(j.o.Dir, fileName(id)) }

// list fills j.files and j.ids from the directory.
func (j *Journal) list() error {
	ents, err := os.ReadDir(j.o.Dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	for _, e := range ents {
		name := e.Name()
		num, ok := strings.CutPrefix(name, "db-")
		if !ok {
			continue
		}
		if num, ok = strings.CutSuffix(num, ".log"); !ok {
			continue
		}
		id, err := strconv.Atoi(num)
		if err != nil || id <= 0 || strconv.Itoa(id) != num || !e.Type().IsRegular() {
			continue // not a data file name we would write (db-log.template, db-01.log)
		}
		info, err := e.Info()
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		if info.Size() == 0 {
			// Journal.start: "ignoring zero length, partially initialised
			// journal data file".
			j.log.Info("ignoring empty journal file", "file", name)
			continue
		}
		j.files[id] = &dataFile{id: id, length: info.Size()}
		j.ids = append(j.ids, id)
	}
	slices.Sort(j.ids)
	var missing []int
	for i := 1; i < len(j.ids); i++ {
		for id := j.ids[i-1] + 1; id < j.ids[i] && len(missing) < 100; id++ {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		// Normal after GC; only the index knows whether a record it needs
		// was in one of them (ignoreMissingJournalfiles).
		j.log.Info("journal files missing between existing ones", "dir", j.o.Dir, "missing", missing)
	}
	return nil
}

// recoverTail opens the last data file for appending and finds its append
// position.
func (j *Journal) recoverTail() error {
	id := j.ids[len(j.ids)-1]
	df := j.files[id]
	flags := os.O_RDWR
	if j.o.ReadOnly {
		flags = os.O_RDONLY
	}
	f, err := openFile(j.path(id), flags, 0)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.cur, j.curF = df, f
	size := df.length
	sc := newScanner(f, size)
	batches := 0
	for {
		if _, ok := sc.next(); ok {
			batches++
			continue
		}
		if sc.reason == stopReadError {
			return fmt.Errorf("journal: recover %s at %d: %w", fileName(id), sc.off, sc.err)
		}
		// Damage in the middle of the file (intact batches follow) is
		// skipped; anything else ends the file: a torn last write.
		next, err := j.skipDamage(f, id, sc, size)
		if err != nil {
			return fmt.Errorf("journal: recover: %w", err)
		}
		if next < 0 {
			break
		}
		sc = newScannerAt(f, next, size)
	}
	df.length = sc.off
	dropped, err := trailingData(f, sc.off, size)
	if err != nil {
		return fmt.Errorf("journal: recover: %w", err)
	}
	if dropped > 0 {
		reason := sc.reason
		if reason == stopEnd {
			reason = "data after end of file marker"
		}
		j.log.Warn("journal tail dropped", "file", fileName(id), "offset", sc.off, "bytes", dropped, "reason", string(reason))
		if j.o.ReadOnly {
			j.damage = append(j.damage, fmt.Sprintf("%s: %d bytes after offset %d unreadable (%s)", fileName(id), dropped, sc.off, reason))
		} else if err := j.cutTail(f, sc.off); err != nil {
			return err
		}
	}
	// Appends leave a file with skipped damage: Open scans only the last
	// file, and a checkpoint index written after this recovery must not
	// be discarded at the next start for damage it already accounts for.
	j.rotate = len(df.skips) > 0 && !j.o.ReadOnly
	j.log.Info("journal recovered", "dir", j.o.Dir, "files", len(j.ids), "file", fileName(id), "batches", batches, "offset", sc.off)
	return nil
}

// skipDamage is called when a scan of data file id stopped at sc.off for
// sc.reason. When intact batches follow further on (damage: a flipped bit,
// a zeroed or lost block, not a torn last write), it logs what is skipped
// and returns the offset of the next one; else -1. A clean end (EOF marker,
// zeros) counts as damage only when an intact batch follows it.
func (j *Journal) skipDamage(f namedReaderAt, id int, sc *scanner, size int64) (int64, error) {
	if sc.off >= size {
		return -1, nil
	}
	df := j.files[id]
	if next, ok := df.skips[sc.off]; ok {
		return next, nil
	}
	if sc.reason == stopEnd {
		// Cheap test first: a clean end followed only by zeros (and the
		// preallocated file's last EOF marker) is the normal end.
		n, err := trailingData(f, sc.off, size)
		if err != nil || n == 0 {
			return -1, err
		}
	}
	next, err := nextIntactBatch(f, sc.off, size)
	if err != nil || next < 0 {
		return -1, err
	}
	reason := sc.reason
	if reason == stopEnd {
		reason = "end of file marker or zeros before intact batches"
	}
	j.log.Error("journal data skipped", "file", fileName(id), "offset", sc.off, "bytes", next-sc.off, "reason", string(reason), "resumed_at", next)
	if df.skips == nil {
		df.skips = map[int64]int64{}
	}
	df.skips[sc.off] = next
	if j.o.ReadOnly {
		j.damage = append(j.damage, fmt.Sprintf("%s: %d bytes at offset %d unreadable (%s)", fileName(id), next-sc.off, sc.off, reason))
	}
	return next, nil
}

// cutTail removes everything after off, where the next batch will go, and
// leaves the file as DataFileAppender would have: an EOF marker at off and,
// preallocated, at MaxFileLength-5. Truncating matters for ActiveMQ: its
// recoveryCheck skips a bad batch by searching for the next "WRITE BATCH",
// which could resurrect batches we dropped.
func (j *Journal) cutTail(f file, off int64) error {
	if err := f.Truncate(off); err != nil {
		return fmt.Errorf("journal: truncate %s at %d: %w", f.Name(), off, err)
	}
	if _, err := f.WriteAt(eofMarker, off); err != nil {
		return fmt.Errorf("journal: write %s at %d: %w", f.Name(), off, err)
	}
	if j.o.Preallocate && off+2*eofSize <= j.o.MaxFileLength {
		if _, err := f.WriteAt(eofMarker, j.o.MaxFileLength-eofSize); err != nil {
			return fmt.Errorf("journal: write %s at %d: %w", f.Name(), j.o.MaxFileLength-eofSize, err)
		}
	}
	return j.sync(f)
}

// create makes data file id the current file, preallocated as
// Journal.doPreallocationSparseFile does when o.Preallocate is set.
func (j *Journal) create(id int) error {
	p := j.path(id)
	f, err := openFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	// An existing empty file was ignored by list; anything else must not be
	// overwritten.
	if info, err := f.Stat(); err != nil || info.Size() != 0 {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s exists", p)
		}
		return fmt.Errorf("journal: create: %w", err)
	}
	if j.o.Preallocate {
		_, err := f.WriteAt(eofMarker, 0)
		if err == nil {
			_, err = f.WriteAt(eofMarker, j.o.MaxFileLength-eofSize)
		}
		if err != nil {
			// A full disk: remove the half-made file, or the next try
			// would find it there and refuse to overwrite it.
			f.Close()
			os.Remove(p)
			return fmt.Errorf("journal: preallocate %s: %w", p, err)
		}
	}
	if err := j.sync(f); err != nil {
		f.Close()
		os.Remove(p)
		return err
	}
	if j.o.Sync {
		if err := syncDir(j.o.Dir); err != nil {
			f.Close()
			os.Remove(p)
			return err
		}
	}
	if j.curF != nil {
		// The file being left must be on disk before anything is synced in
		// the new one: a crash must not keep a later batch and lose an
		// earlier one.
		if err := j.Sync(); err != nil {
			f.Close()
			os.Remove(p)
			return err
		}
		if err := j.curF.Close(); err != nil {
			j.log.Warn("journal file close failed", "file", fileName(j.cur.id), "err", err)
		}
	}
	df := &dataFile{id: id}
	j.files[id] = df
	j.ids = append(j.ids, id)
	j.cur, j.curF = df, f
	return nil
}

// sync fsyncs f when o.Sync is set.
func (j *Journal) sync(f file) error {
	if !j.o.Sync {
		return nil
	}
	var start time.Time
	if j.o.Observer != nil {
		// A latency measurement, not the broker's notion of time: the
		// monotonic clock, read only when someone watches.
		start = time.Now()
	}
	if err := f.Sync(); err != nil {
		err = fmt.Errorf("journal: fsync %s: %w", f.Name(), err)
		j.fail(err)
		return err
	}
	j.stats.Syncs++
	if j.o.Observer != nil {
		j.o.Observer.Synced(time.Since(start))
	}
	return nil
}

// fail stops the journal after a failed fsync (the fsyncgate lesson): the
// kernel may have dropped the dirty pages it could not write and will not
// report that again, so a later fsync that succeeds proves nothing about
// what was written before it. Every batch written since the last good
// fsync may be lost, and no later batch can be acknowledged on top of
// them: Append, AppendNoSync and Sync fail from now on (ErrSyncFailed).
// Restarting recovers the journal from what the disk really holds.
func (j *Journal) fail(err error) {
	if j.failed != nil {
		return
	}
	j.failed = err
	at := j.Head()
	j.log.Error("Journal failed to sync: the store stops writing; no persistent message is acknowledged until the broker restarts",
		"dir", j.o.Dir, "file", fileName(at.File), "offset", at.Offset, "err", err)
}

// stopped returns the error every write returns once fsync failed.
func (j *Journal) stopped() error {
	return fmt.Errorf("%w: %v", ErrSyncFailed, j.failed)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: fsync %s: %w", dir, err)
	}
	return nil
}

// Append writes records as one batch and returns their locations, in order.
// The batch is the control record ("WRITE BATCH", batchLen, Adler32), the
// records as USER_RECORDs, and an EOF marker that the next batch overwrites,
// written with one write at the current append position, as
// DataFileAppender.processQueue does. The batch goes to a new data file when
// the current one is not empty and its length plus the batch would reach
// MaxFileLength (Journal.getCurrentDataFile); a batch of one record may exceed
// MaxWriteBatchSize, a batch of several may not (ErrBatchTooLarge: split it).
// With o.Sync the file is fsynced before Append returns: the records are then
// durable, and so is every batch before them. A failed Append leaves the
// append position where it was; the next batch overwrites whatever part of
// this one reached the file.
func (j *Journal) Append(records [][]byte) ([]Location, error) {
	return j.append(records, true)
}

// AppendNoSync writes records as Append does but does not fsync: nobody
// waits for them (ActiveMQ's journal writes a record without a sync when its
// command did not ask for a response, e.g. a consumer's acknowledgement).
// They reach the disk with the next Append, a Sync, a rotation to a new data
// file, or Close, whichever comes first; a crash before that may lose them,
// and only them, since every later synced batch syncs them too.
func (j *Journal) AppendNoSync(records [][]byte) ([]Location, error) {
	return j.append(records, false)
}

// Sync fsyncs the batches AppendNoSync wrote since the last sync.
func (j *Journal) Sync() error {
	if j.closed {
		return ErrClosed
	}
	if j.failed != nil {
		return j.stopped()
	}
	if !j.unsynced || j.curF == nil {
		return nil
	}
	if err := j.sync(j.curF); err != nil {
		return err
	}
	j.unsynced = false
	return nil
}

func (j *Journal) append(records [][]byte, sync bool) ([]Location, error) {
	if j.closed {
		return nil, ErrClosed
	}
	if j.o.ReadOnly {
		return nil, errors.New("journal: opened read-only")
	}
	if j.failed != nil {
		return nil, j.stopped()
	}
	if len(records) == 0 {
		return nil, ErrEmptyBatch
	}
	size := batchSize(records)
	switch {
	case size < 0:
		return nil, fmt.Errorf("%w: record over %d bytes", ErrBatchTooLarge, maxRecordSize)
	case len(records) > 1 && size >= int64(j.o.MaxWriteBatchSize):
		// WriteBatch.canAppend: newSize >= maxWriteBatchSize starts a new batch.
		return nil, fmt.Errorf("%w: %d records, %d bytes, max write batch size %d", ErrBatchTooLarge, len(records), size, j.o.MaxWriteBatchSize)
	}
	if j.cur.length > 0 && (j.rotate || j.cur.length+size >= j.o.MaxFileLength) {
		if err := j.create(j.cur.id + 1); err != nil {
			return nil, err
		}
		j.rotate = false
	}
	j.buf = encodeBatch(j.buf[:0], records, j.o.Checksum)
	off := j.cur.length
	// The errors carry DataFileAppender's words ("Journal failed while
	// writing at: 1:4096"), which the engine logs as "store write failed".
	if _, err := j.curF.WriteAt(j.buf, off); err != nil {
		return nil, fmt.Errorf("journal: Journal failed while writing at: %d:%d (write %s): %w", j.cur.id, off, fileName(j.cur.id), err)
	}
	if sync {
		if err := j.sync(j.curF); err != nil {
			return nil, fmt.Errorf("journal: Journal failed while writing at: %d:%d: %w", j.cur.id, off, err)
		}
		j.unsynced = false
	} else {
		j.unsynced = true
	}
	locs := make([]Location, len(records))
	at := off + batchControlSize
	for i, r := range records {
		locs[i] = Location{File: j.cur.id, Offset: at, Size: int32(len(r) + recordHeadSize)}
		at += int64(len(r)) + recordHeadSize
	}
	j.cur.length = at
	j.stats.Batches++
	j.stats.Records += uint64(len(records))
	j.stats.Bytes += uint64(len(j.buf))
	if j.o.Observer != nil {
		j.o.Observer.Batch(len(records), len(j.buf))
	}
	if cap(j.buf) > 2*j.o.MaxWriteBatchSize {
		j.buf = nil // do not pin the buffer of one oversized record
	}
	return locs, nil
}

// Files returns the ids of the data files present, ascending; the last is
// the file being appended to.
func (j *Journal) Files() []int { return slices.Clone(j.ids) }

// Skipped returns where the journal found damage it skipped with intact
// batches after it (Open in the last file, Replay in older ones), in journal
// order: whatever a record there held is lost.
func (j *Journal) Skipped() []Location {
	var out []Location
	for _, id := range j.ids {
		for off := range j.files[id].skips {
			out = append(out, Location{File: id, Offset: off})
		}
	}
	slices.SortFunc(out, Location.Compare)
	return out
}

// Damage lists what a read-only Open found unreadable at the tail.
func (j *Journal) Damage() []string { return slices.Clone(j.damage) }

// Head returns the location the next batch will be written at.
func (j *Journal) Head() Location {
	if j.cur == nil {
		return Location{}
	}
	return Location{File: j.cur.id, Offset: j.cur.length}
}

// Bytes is how many bytes of data files lie from from up to to: the
// offsets within their files, and every file between whole. A to past the
// last file counts to the end of the journal. For the progress of a replay.
func (j *Journal) Bytes(from, to Location) int64 {
	var n int64
	for _, id := range j.ids {
		if id < from.File || id > to.File {
			continue
		}
		start, end := int64(0), j.files[id].length
		if id == from.File {
			start = from.Offset
		}
		if id == to.File {
			end = min(end, to.Offset)
		}
		n += max(end-start, 0)
	}
	return n
}

// Stats returns the append counters since Open.
func (j *Journal) Stats() Stats { return j.stats }

// Remove deletes data file id (garbage collection: the index guarantees
// that nothing it needs lives there). The current file cannot be removed.
func (j *Journal) Remove(id int) error {
	if err := j.forget(id); err != nil {
		return err
	}
	if err := os.Remove(j.path(id)); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.o.Sync {
		return syncDir(j.o.Dir)
	}
	return nil
}

// Archive moves data file id into dir (archiveDataLogs=true), creating dir;
// an empty dir means <Dir>/data-archive. An existing file of the same name in
// dir is an error, never overwritten. The current file cannot be archived.
func (j *Journal) Archive(id int, dir string) error {
	if err := j.removable(id, "archive "); err != nil {
		return err
	}
	if dir == "" {
		dir = filepath.Join(j.o.Dir, DefaultArchiveDir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("journal: archive: %w", err)
	}
	dst := filepath.Join(dir, fileName(id))
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("journal: archive %s: %s exists", fileName(id), dst)
	}
	if err := moveFile(j.path(id), dst, j.o.Sync); err != nil {
		return fmt.Errorf("journal: archive %s: %w", fileName(id), err)
	}
	if err := j.forget(id); err != nil {
		return err
	}
	if j.o.Sync {
		if err := syncDir(dir); err != nil {
			return err
		}
		return syncDir(j.o.Dir)
	}
	return nil
}

// removable returns why data file id cannot leave the journal, or nil: the
// journal is closed, has no such file, or writes to it. op, when not empty,
// names the operation in the error ("archive ").
func (j *Journal) removable(id int, op string) error {
	if j.closed {
		return ErrClosed
	}
	if _, ok := j.files[id]; !ok {
		return fmt.Errorf("journal: %s%s: %w", op, fileName(id), ErrMissingFile)
	}
	if j.cur.id == id {
		return fmt.Errorf("journal: %s%s: %w", op, fileName(id), ErrCurrentFile)
	}
	return nil
}

// forget drops data file id from the journal's bookkeeping.
func (j *Journal) forget(id int) error {
	if err := j.removable(id, ""); err != nil {
		return err
	}
	j.dropReader(id)
	delete(j.files, id)
	j.ids = slices.DeleteFunc(j.ids, func(x int) bool { return x == id })
	return nil
}

// moveFile renames src to dst, copying when they are on different file
// systems (IOHelper.moveFile).
func moveFile(src, dst string, sync bool) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil && sync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst)
		return err
	}
	return os.Remove(src)
}

// Close fsyncs what AppendNoSync left unsynced and closes the journal's
// files. With o.Sync every other batch already is on disk, without it
// nothing is promised.
func (j *Journal) Close() error {
	if j.closed {
		return ErrClosed
	}
	err := j.Sync()
	j.closed = true
	return errors.Join(err, j.closeFiles())
}

func (j *Journal) closeFiles() error {
	var errs []error
	if j.curF != nil {
		errs = append(errs, j.curF.Close())
		j.curF = nil
	}
	for _, r := range j.cache {
		errs = append(errs, r.f.Close())
	}
	j.cache = nil
	return errors.Join(errs...)
}
