package journal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Read returns the payload of the user record at l, as
// DataFileAccessor.readRecord does: l.Size, when not 0, must match the size
// in the record's header. Batch checksums are not verified (Replay does);
// the record must lie within the data file's written length.
func (j *Journal) Read(l Location) ([]byte, error) {
	if j.closed {
		return nil, ErrClosed
	}
	df, ok := j.files[l.File]
	if !ok {
		return nil, fmt.Errorf("journal: read %v: %s: %w", l, fileName(l.File), ErrMissingFile)
	}
	if l.Offset < 0 || (l.Size != 0 && l.Size < recordHeadSize) {
		return nil, fmt.Errorf("journal: read %v size %d: %w", l, l.Size, ErrInvalidLocation)
	}
	f, err := j.reader(df.id)
	if err != nil {
		return nil, err
	}
	var head [recordHeadSize]byte
	if _, err := f.ReadAt(head[:], l.Offset); err != nil {
		return nil, fmt.Errorf("journal: read %s at %d: %w", fileName(df.id), l.Offset, err)
	}
	size := int32(binary.BigEndian.Uint32(head[:]))
	switch {
	case head[4] != userRecordType:
		return nil, fmt.Errorf("journal: read %v: type %d: %w", l, head[4], ErrCorrupt)
	case size < recordHeadSize || (l.Size != 0 && size != l.Size):
		return nil, fmt.Errorf("journal: read %v: record size %d, location size %d: %w", l, size, l.Size, ErrCorrupt)
	case l.Offset+int64(size) > df.length:
		// Bounds the allocation below by the file's length.
		return nil, fmt.Errorf("journal: read %v: record of %d bytes past end of file (%d): %w", l, size, df.length, ErrCorrupt)
	}
	payload := make([]byte, size-recordHeadSize)
	if _, err := f.ReadAt(payload, l.Offset+recordHeadSize); err != nil {
		return nil, fmt.Errorf("journal: read %s at %d: %w", fileName(df.id), l.Offset, err)
	}
	return payload, nil
}

// readSpan bounds, in bytes, one read of ReadMany; readGap is the most
// unneeded bytes between two records it reads through rather than issue
// another read.
const (
	readSpan = 4 << 20
	readGap  = 64 << 10
)

// ReadMany returns the payloads of the user records at locs, in order, as
// Read would, but reads neighbouring records of a file with one read
// (recovery reads thousands of adjacent messages; a read per record costs
// more in system calls than the records take to decode). Every location
// must carry its Size. The payloads are the caller's; they share buffers
// with each other.
func (j *Journal) ReadMany(locs []Location) ([][]byte, error) {
	if j.closed {
		return nil, ErrClosed
	}
	out := make([][]byte, len(locs))
	for i := 0; i < len(locs); {
		first := locs[i]
		df, ok := j.files[first.File]
		if !ok {
			return nil, fmt.Errorf("journal: read %v: %s: %w", first, fileName(first.File), ErrMissingFile)
		}
		// Extend the span while the next record is in the same file,
		// ahead, close by, and the span stays bounded.
		end := i + 1
		hi := first.Offset + int64(first.Size)
		for end < len(locs) {
			l := locs[end]
			if l.File != first.File || l.Offset < hi || l.Offset-hi > readGap || l.Offset+int64(l.Size)-first.Offset > readSpan {
				break
			}
			hi = l.Offset + int64(l.Size)
			end++
		}
		for _, l := range locs[i:end] {
			if l.Offset < 0 || l.Size < recordHeadSize {
				return nil, fmt.Errorf("journal: read %v size %d: %w", l, l.Size, ErrInvalidLocation)
			}
		}
		if hi > df.length {
			return nil, fmt.Errorf("journal: read %v: records up to %d past end of file (%d): %w", first, hi, df.length, ErrCorrupt)
		}
		f, err := j.reader(df.id)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, hi-first.Offset)
		if _, err := f.ReadAt(buf, first.Offset); err != nil {
			return nil, fmt.Errorf("journal: read %s at %d: %w", fileName(df.id), first.Offset, err)
		}
		for k := i; k < end; k++ {
			l := locs[k]
			rec := buf[l.Offset-first.Offset : l.Offset-first.Offset+int64(l.Size)]
			size := int32(binary.BigEndian.Uint32(rec))
			if rec[4] != userRecordType || size != l.Size {
				return nil, fmt.Errorf("journal: read %v: type %d, record size %d, location size %d: %w", l, rec[4], size, l.Size, ErrCorrupt)
			}
			out[k] = rec[recordHeadSize:len(rec):len(rec)]
		}
		i = end
	}
	return out, nil
}

// reader returns an open handle on data file id: the append handle for the
// current file, a cached read-only one for older files.
func (j *Journal) reader(id int) (file, error) {
	if id == j.cur.id {
		return j.curF, nil
	}
	for i, r := range j.cache {
		if r.id == id {
			copy(j.cache[1:i+1], j.cache[:i])
			j.cache[0] = r
			return r.f, nil
		}
	}
	f, err := openFile(j.path(id), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	if len(j.cache) == readCacheSize {
		old := j.cache[len(j.cache)-1]
		old.f.Close() // read-only: nothing to lose
		j.cache = j.cache[:len(j.cache)-1]
	}
	j.cache = slices.Insert(j.cache, 0, reader{id: id, f: f})
	return f, nil
}

func (j *Journal) dropReader(id int) {
	j.cache = slices.DeleteFunc(j.cache, func(r reader) bool {
		if r.id == id {
			r.f.Close()
			return true
		}
		return false
	})
}

// Replay calls fn for every user record at or after from, in journal order
// (file id, then offset), with its location and payload. Each file is read
// batch by batch from its start, verifying each batch's checksum and
// structure; the current file ends at the append position found by Open.
// A batch that is torn, malformed or fails its checksum is skipped, with
// everything up to the next intact batch of the file (the loss is logged
// at Error level with file, offset and bytes); with no intact batch after
// it, the rest of that file is skipped and replay continues with the next
// file (the index decides whether anything it needs was there). Zeros or an EOF marker end a file cleanly; data after zeros is
// reported the same way. Files missing before from or between files are
// skipped (GC leaves gaps, as Journal.getNextLocation follows its file list);
// from inside a missing file is ErrMissingFile. The zero Location replays
// everything.
//
// Replay starts reading from.File at its beginning, since checksums cover
// whole batches. payload is valid only until fn returns: copy what must be
// kept. fn must not call the Journal's methods. An error from fn stops the replay and
// is returned as is.
func (j *Journal) Replay(from Location, fn func(Location, []byte) error) error {
	if j.closed {
		return ErrClosed
	}
	if len(j.ids) == 0 {
		return nil // a read-only journal with no data file
	}
	if _, ok := j.files[from.File]; !ok && from.File >= j.ids[0] && from.File <= j.ids[len(j.ids)-1] {
		return fmt.Errorf("journal: replay from %v: %s: %w", from, fileName(from.File), ErrMissingFile)
	}
	for _, id := range slices.Clone(j.ids) {
		if id < from.File {
			continue
		}
		if err := j.replayFile(id, from, fn); err != nil {
			return err
		}
	}
	return nil
}

func (j *Journal) replayFile(id int, from Location, fn func(Location, []byte) error) error {
	df := j.files[id]
	if df == nil {
		return nil // removed by fn, against the rules
	}
	f, err := j.reader(id)
	if err != nil {
		return err
	}
	sc := newScanner(f, df.length)
	for {
		b, ok := sc.next()
		if !ok {
			if sc.reason == stopReadError {
				return fmt.Errorf("journal: replay %s at %d: %w", fileName(id), sc.off, sc.err)
			}
			if next, ok := df.skips[sc.off]; ok {
				sc = newScannerAt(f, next, df.length) // damage found before
				continue
			}
			if id == j.cur.id || sc.atEOF && sc.reason == stopEnd {
				// The current file ends at the append position Open
				// found (past any damage it skipped); an older one at an
				// EOF marker: DataFileAppender ends every batch with
				// one, followed in a preallocated file by a hole that is
				// not worth reading through on every replay.
				break
			}
			next, err := j.skipDamage(f, id, sc, df.length)
			if err != nil {
				return fmt.Errorf("journal: replay: %w", err)
			}
			if next < 0 {
				break
			}
			sc = newScannerAt(f, next, df.length)
			continue
		}
		if id == from.File && b.end <= from.Offset {
			continue
		}
		base := b.offset + batchControlSize
		err := eachRecord(b.body, func(rel int64, size int32, payload []byte) error {
			l := Location{File: id, Offset: base + rel, Size: size}
			if id == from.File && l.Offset < from.Offset {
				return nil
			}
			return fn(l, payload)
		})
		if err != nil {
			return err
		}
	}
	if id == j.cur.id || sc.off == df.length || sc.atEOF {
		return nil
	}
	// Stopped at zeros (fine unless data follows) or at a damaged batch
	// with nothing intact after it: report what is skipped.
	n, err := trailingData(f, sc.off, df.length)
	if err != nil {
		return fmt.Errorf("journal: replay: %w", err)
	}
	if n > 0 || sc.reason != stopEnd {
		reason := sc.reason
		if reason == stopEnd {
			reason = "data after end of file marker"
		}
		j.log.Error("journal data skipped", "file", fileName(id), "offset", sc.off, "bytes", n, "reason", string(reason))
	}
	return nil
}

// Reader reads user records with file handles of its own, apart from the
// Journal's: a Journal belongs to the goroutine that writes it, a Reader to
// one other goroutine (the engine's shard reading back the messages the
// store recovered as stubs while the writer appends). A Reader itself is
// not safe for concurrent use. It keeps a few handles open; Reset closes
// them (after files were removed, so that their space is freed).
type Reader struct {
	dir   string
	cache []reader // most recent first
}

// NewReader returns a Reader of the journal in dir.
func NewReader(dir string) *Reader { return &Reader{dir: dir} }

// Read returns the payload of the user record at l, which must carry its
// Size (the record's, header included) and lie in a record already
// written. The payload is the caller's.
func (r *Reader) Read(l Location) ([]byte, error) {
	if l.Offset < 0 || l.Size < recordHeadSize {
		return nil, fmt.Errorf("journal: read %v size %d: %w", l, l.Size, ErrInvalidLocation)
	}
	f, err := r.file(l.File)
	if err != nil {
		return nil, err
	}
	rec := make([]byte, l.Size)
	if _, err := f.ReadAt(rec, l.Offset); err != nil {
		return nil, fmt.Errorf("journal: read %s at %d: %w", fileName(l.File), l.Offset, err)
	}
	if size := int32(binary.BigEndian.Uint32(rec)); rec[4] != userRecordType || size != l.Size {
		return nil, fmt.Errorf("journal: read %v: type %d, record size %d, location size %d: %w", l, rec[4], size, l.Size, ErrCorrupt)
	}
	return rec[recordHeadSize:], nil
}

func (r *Reader) file(id int) (file, error) {
	for i, c := range r.cache {
		if c.id == id {
			copy(r.cache[1:i+1], r.cache[:i])
			r.cache[0] = c
			return c.f, nil
		}
	}
	f, err := os.Open(filepath.Join(r.dir, fileName(id)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("journal: %s: %w", fileName(id), ErrMissingFile)
		}
		return nil, fmt.Errorf("journal: %w", err)
	}
	if len(r.cache) == readCacheSize {
		r.cache[len(r.cache)-1].f.Close() // read-only: nothing to lose
		r.cache = r.cache[:len(r.cache)-1]
	}
	r.cache = slices.Insert(r.cache, 0, reader{id: id, f: f})
	return f, nil
}

// Reset closes the open handles.
func (r *Reader) Reset() {
	for _, c := range r.cache {
		c.f.Close()
	}
	clear(r.cache)
	r.cache = r.cache[:0]
}
