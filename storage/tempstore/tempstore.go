package tempstore

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"wharf/engine"
)

// Options configure a temp space.
type Options struct {
	// Dir is the directory; Open creates it and removes what it holds.
	Dir string
	// SegmentSize is the size in bytes at which a segment file is closed
	// and the next begun (32 MiB, as ActiveMQ's PList journal files).
	SegmentSize int64
	// WriteBuffer is how many bytes of records are gathered before one
	// write (256 KiB).
	WriteBuffer int
	Logger      *slog.Logger
}

// Space is the temp directory of a broker.
type Space struct {
	o Options
}

const headerSize = 8

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Open creates o.Dir if needed and removes everything in it: a temp store
// never outlives its broker. What it removes is logged.
func Open(o Options) (*Space, error) {
	if o.Dir == "" {
		return nil, fmt.Errorf("tempstore: no directory")
	}
	if o.SegmentSize <= 0 {
		o.SegmentSize = 32 << 20
	}
	if o.SegmentSize > math.MaxUint32 {
		o.SegmentSize = math.MaxUint32
	}
	if o.WriteBuffer <= 0 {
		o.WriteBuffer = 256 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("tempstore: %w", err)
	}
	ents, err := os.ReadDir(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("tempstore: %w", err)
	}
	var files, bytes int64
	for _, de := range ents {
		p := filepath.Join(o.Dir, de.Name())
		filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
				if fi, err := d.Info(); err == nil {
					bytes += fi.Size()
				}
			}
			return nil
		})
		if err := os.RemoveAll(p); err != nil {
			return nil, fmt.Errorf("tempstore: empty %s: %w", o.Dir, err)
		}
	}
	if len(ents) > 0 {
		o.Logger.Info("temp store emptied: spilled messages of the previous run removed", "dir", o.Dir, "files", files, "bytes", bytes)
	}
	return &Space{o: o}, nil
}

// Dir is the directory of the space.
func (sp *Space) Dir() string { return sp.o.Dir }

// OpenShard returns the store of shard index. It creates no file until the
// first Put.
func (sp *Space) OpenShard(index int) (engine.TempStore, error) {
	return &Store{o: sp.o, shard: index, segs: map[uint32]*segment{}}, nil
}

// Store is one shard's temp store. Only its shard's goroutine uses it.
type Store struct {
	o     Options
	shard int
	segs  map[uint32]*segment
	cur   *segment // being appended to
	next  uint32   // id of the next segment
	wbuf  []byte   // records of cur not yet written, from cur.written on
}

type segment struct {
	id      uint32
	path    string
	f       *os.File
	size    int64 // bytes appended, buffered ones included
	written int64 // bytes written to the file
	live    int   // records not yet released
}

// Put appends a record.
func (s *Store) Put(rec []byte) (engine.TempRef, error) {
	n := int64(headerSize + len(rec))
	if n > math.MaxUint32 {
		return engine.TempRef{}, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(rec))
	}
	if s.cur == nil || s.cur.size > 0 && s.cur.size+n > s.o.SegmentSize {
		if err := s.roll(); err != nil {
			return engine.TempRef{}, err
		}
	}
	c := s.cur
	ref := engine.TempRef{Seg: c.id, Off: uint32(c.size), Len: uint32(len(rec))}
	s.wbuf = binary.LittleEndian.AppendUint32(s.wbuf, uint32(len(rec)))
	s.wbuf = binary.LittleEndian.AppendUint32(s.wbuf, crc32.Checksum(rec, castagnoli))
	s.wbuf = append(s.wbuf, rec...)
	c.size += n
	c.live++
	if len(s.wbuf) >= s.o.WriteBuffer {
		if err := s.flush(); err != nil {
			c.size -= n
			c.live--
			return engine.TempRef{}, err
		}
	}
	return ref, nil
}

// roll writes out the current segment and starts a new one.
func (s *Store) roll() error {
	if err := s.flush(); err != nil {
		return err
	}
	if c := s.cur; c != nil && c.live == 0 {
		s.drop(c)
	}
	id := s.next
	s.next++
	p := filepath.Join(s.o.Dir, "tmp-"+strconv.Itoa(s.shard)+"-"+strconv.FormatUint(uint64(id), 10)+".data")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("tempstore: %w", err)
	}
	s.cur = &segment{id: id, path: p, f: f}
	s.segs[id] = s.cur
	return nil
}

func (s *Store) flush() error {
	c := s.cur
	if c == nil || len(s.wbuf) == 0 {
		return nil
	}
	if _, err := c.f.WriteAt(s.wbuf, c.written); err != nil {
		return fmt.Errorf("tempstore: write %s at %d: %w", c.path, c.written, err)
	}
	c.written += int64(len(s.wbuf))
	s.wbuf = s.wbuf[:0]
	return nil
}

// Get reads a record back into a new slice.
func (s *Store) Get(ref engine.TempRef) ([]byte, error) {
	c := s.segs[ref.Seg]
	if c == nil {
		return nil, fmt.Errorf("%w: segment %d", ErrUnknownRecord, ref.Seg)
	}
	end := int64(ref.Off) + headerSize + int64(ref.Len)
	if end > c.size {
		return nil, fmt.Errorf("%w: %d bytes at %d of segment %d, which holds %d", ErrUnknownRecord, ref.Len, ref.Off, ref.Seg, c.size)
	}
	buf := make([]byte, headerSize+int(ref.Len))
	if c == s.cur && int64(ref.Off) >= c.written {
		// Still in the write buffer: copy it out, no system call.
		copy(buf, s.wbuf[int64(ref.Off)-c.written:])
	} else {
		if c == s.cur && end > c.written {
			if err := s.flush(); err != nil {
				return nil, err
			}
		}
		if _, err := c.f.ReadAt(buf, int64(ref.Off)); err != nil {
			return nil, fmt.Errorf("tempstore: read %s at %d: %w", c.path, ref.Off, err)
		}
	}
	if n := binary.LittleEndian.Uint32(buf); n != ref.Len {
		return nil, fmt.Errorf("%w: %s at %d: length %d, want %d", ErrCorrupt, c.path, ref.Off, n, ref.Len)
	}
	rec := buf[headerSize:]
	if sum := crc32.Checksum(rec, castagnoli); sum != binary.LittleEndian.Uint32(buf[4:]) {
		return nil, fmt.Errorf("%w: %s at %d: checksum mismatch", ErrCorrupt, c.path, ref.Off)
	}
	return rec, nil
}

// Release frees a record; a segment with no live record left is deleted,
// or rewound when it is the one being written.
func (s *Store) Release(ref engine.TempRef) {
	c := s.segs[ref.Seg]
	if c == nil || c.live == 0 {
		return
	}
	c.live--
	if c.live > 0 {
		return
	}
	if c == s.cur {
		s.wbuf = s.wbuf[:0]
		if c.written > 0 {
			if err := c.f.Truncate(0); err != nil {
				// Start a new file rather than write behind a
				// truncation that did not happen.
				s.drop(c)
				s.cur = nil
				return
			}
		}
		c.size, c.written = 0, 0
		return
	}
	s.drop(c)
}

func (s *Store) drop(c *segment) {
	c.f.Close()
	os.Remove(c.path)
	delete(s.segs, c.id)
	if s.cur == c {
		s.cur = nil
		s.wbuf = s.wbuf[:0]
	}
}

// Segments is the number of segment files the store has open.
func (s *Store) Segments() int { return len(s.segs) }

// Close closes and deletes every segment file of the store.
func (s *Store) Close() error {
	var first error
	for _, c := range s.segs {
		if err := c.f.Close(); err != nil && first == nil {
			first = err
		}
		if err := os.Remove(c.path); err != nil && first == nil {
			first = err
		}
	}
	clear(s.segs)
	s.cur = nil
	s.wbuf = nil
	return first
}
