package journal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
)

// On-disk format of a KahaDB journal data file (Journal, DataFileAppender,
// Location in activemq-kahadb-store 5.17.2; docs/reference kahadb.md §2).
// Every integer is big-endian (java.io.DataOutput).
const (
	// recordHeadSize is RECORD_HEAD_SPACE: int32 size (counting these 5
	// bytes) + byte type.
	recordHeadSize = 4 + 1
	// userRecordType is Location.USER_TYPE.
	userRecordType = 1
	// batchControlType is Journal.BATCH_CONTROL_RECORD_TYPE.
	batchControlType = 2
	// batchControlSize is BATCH_CONTROL_RECORD_SIZE: head + "WRITE BATCH" +
	// int32 batchLen + int64 checksum = 28 bytes.
	batchControlSize = recordHeadSize + 11 + 4 + 8
	// batchHeaderSize is the constant prefix of a control record
	// (BATCH_CONTROL_RECORD_HEADER): size, type and magic.
	batchHeaderSize = recordHeadSize + 11
	// eofSize is the length of the EOF marker.
	eofSize = 5
	// maxRecordSize bounds one record: its int32 size field, and the batch's
	// int32 batchLen, must not overflow (Journal.checkBatchRecord rejects
	// batchLen > Integer.MAX_VALUE - (28 + 5)).
	maxRecordSize = 1<<31 - 1 - batchControlSize - eofSize
)

// batchMagic is BATCH_CONTROL_RECORD_MAGIC; its 11 bytes are spelled out in
// batchControlSize so that the sizes stay untyped constants.
const batchMagic = "WRITE BATCH"

// eofMarker is Journal.EOF_RECORD: int32 EOF_INT ("-qMa") + byte EOF_EOT
// ('4'). DataFileAppender writes it after every batch and the next batch
// overwrites it, so a file always ends in it (or, preallocated, in zeros).
var eofMarker = []byte{'-', 'q', 'M', 'a', '4'}

// batchHeader is BATCH_CONTROL_RECORD_HEADER: 00 00 00 1c 02 "WRITE BATCH".
var batchHeader = func() []byte {
	b := binary.BigEndian.AppendUint32(nil, batchControlSize)
	b = append(b, batchControlType)
	return append(b, batchMagic...)
}()

// encodeBatch appends to dst one batch as DataFileAppender.processQueue
// writes it: the control record, the user records, then the EOF marker
// (counted in neither batchLen nor the file's length). The checksum is the
// Adler32 of exactly the batchLen bytes of user records, headers included,
// stored as a non-negative int64; without checksums it stays 0, as in
// EMPTY_BATCH_CONTROL_RECORD.
func encodeBatch(dst []byte, records [][]byte, checksum bool) []byte {
	start := len(dst)
	dst = append(dst, batchHeader...)
	dst = append(dst, make([]byte, 4+8)...) // batchLen, checksum: filled below
	for _, r := range records {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(r)+recordHeadSize))
		dst = append(dst, userRecordType)
		dst = append(dst, r...)
	}
	body := dst[start+batchControlSize:]
	binary.BigEndian.PutUint32(dst[start+batchHeaderSize:], uint32(len(body)))
	if checksum {
		binary.BigEndian.PutUint64(dst[start+batchHeaderSize+4:], uint64(adler32.Checksum(body)))
	}
	return append(dst, eofMarker...)
}

// batchSize returns the bytes a batch of records adds to a file's length
// (control record + records; the EOF marker is not counted), or -1 when a
// record is too large for the format.
func batchSize(records [][]byte) int64 {
	n := int64(batchControlSize)
	for _, r := range records {
		if len(r) > maxRecordSize {
			return -1
		}
		n += int64(len(r)) + recordHeadSize
	}
	if n-batchControlSize > maxRecordSize {
		return -1
	}
	return n
}

// stopReason says why a scan of a data file ended. The zero value is a clean
// end; every other value means bytes at the stop offset were not accepted.
type stopReason string

const (
	stopEnd       stopReason = ""                          // end of file, EOF marker, or zeros
	stopShort     stopReason = "partial batch control"     // fewer than 28 bytes left
	stopHeader    stopReason = "bad batch control record"  // not 00 00 00 1c 02 "WRITE BATCH"
	stopOverrun   stopReason = "batch overruns file"       // batchLen past the end of the file
	stopChecksum  stopReason = "batch checksum mismatch"   // Adler32 differs
	stopRecords   stopReason = "bad record in batch"       // records do not tile batchLen exactly
	stopEmpty     stopReason = "empty batch"               // batchLen 0: never written by ActiveMQ
	stopReadError stopReason = "read error"                // I/O error while scanning
	stopTornEOF   stopReason = "partial record at the end" // 1-4 bytes left
)

// batch is one accepted batch found by a scanner.
type batch struct {
	offset int64 // offset of the control record
	end    int64 // offset just past its last user record
	// body holds the batchLen bytes of user records; valid until the next
	// call to scanner.next.
	body []byte
}

// scanner walks the batches of one data file in order, as
// Journal.recoveryCheck does, verifying each batch before it is returned.
// It reads through a buffer: one sequential pass, a few syscalls per MiB.
type scanner struct {
	r      *bufio.Reader
	off    int64 // offset of the next batch
	limit  int64 // bytes of the file the scan may read
	body   []byte
	reason stopReason
	err    error // the read error when reason is stopReadError
	atEOF  bool  // the scan stopped at an EOF marker
}

func newScanner(f io.ReaderAt, limit int64) *scanner {
	return newScannerAt(f, 0, limit)
}

// newScannerAt scans from offset start, where a batch begins.
func newScannerAt(f io.ReaderAt, start, limit int64) *scanner {
	size := int(min(max(limit-start, 16), 256<<10))
	return &scanner{r: bufio.NewReaderSize(io.NewSectionReader(f, start, limit-start), size), off: start, limit: limit}
}

// nextIntactBatch returns the offset of the first intact batch that starts
// after from and ends within limit, or -1: the place a scan stopped by
// damage (a flipped bit, a zeroed or lost block) resumes, as ActiveMQ's
// recovery with checkForCorruptJournalFiles skips a corrupt block up to the
// next "WRITE BATCH" header. Only a batch carrying a checksum that matches
// is taken (a batch without one cannot be told from stray bytes).
func nextIntactBatch(f io.ReaderAt, from, limit int64) (int64, error) {
	chunk := min(limit-from, 1<<20)
	buf := make([]byte, chunk+int64(len(batchHeader))-1)
	for pos := from + 1; pos+batchControlSize <= limit; pos += chunk {
		n := min(int64(len(buf)), limit-pos)
		b := buf[:n]
		if _, err := f.ReadAt(b, pos); err != nil && !errors.Is(err, io.EOF) {
			return -1, err
		}
		for i := 0; ; {
			k := bytes.Index(b[i:], batchHeader)
			if k < 0 {
				break
			}
			c := pos + int64(i+k)
			if ok, err := intactBatchAt(f, c, limit); err != nil {
				return -1, err
			} else if ok {
				return c, nil
			}
			i += k + 1
		}
	}
	return -1, nil
}

// intactBatchAt reports whether an intact batch with a checksum starts at
// off.
func intactBatchAt(f io.ReaderAt, off, limit int64) (bool, error) {
	if limit-off < batchControlSize {
		return false, nil
	}
	ctl := make([]byte, batchControlSize)
	if _, err := f.ReadAt(ctl, off); err != nil {
		return false, err
	}
	n := int64(int32(binary.BigEndian.Uint32(ctl[batchHeaderSize:])))
	sum := int64(binary.BigEndian.Uint64(ctl[batchHeaderSize+4:]))
	if n <= 0 || n > limit-off-batchControlSize || sum == 0 {
		return false, nil
	}
	body := make([]byte, n)
	if _, err := f.ReadAt(body, off+batchControlSize); err != nil {
		return false, err
	}
	return sum == int64(adler32.Checksum(body)) && validRecords(body), nil
}

// next returns the next batch, or false when the scan stopped; s.off is then
// the offset where it stopped and s.reason why.
func (s *scanner) next() (batch, bool) {
	left := s.limit - s.off
	if left == 0 {
		return batch{}, false
	}
	if left < recordHeadSize {
		s.reason = stopTornEOF
		return batch{}, false
	}
	head, err := s.r.Peek(recordHeadSize)
	if err != nil {
		return batch{}, s.fail(err)
	}
	// Journal.getNextLocation: the EOF marker, or size == 0 && type == 0
	// (the hole of a preallocated file), ends the file.
	if bytes.Equal(head, eofMarker) {
		s.atEOF = true
		return batch{}, false
	}
	if bytes.Equal(head, make([]byte, recordHeadSize)) {
		return batch{}, false
	}
	if left < batchControlSize {
		s.reason = stopShort
		return batch{}, false
	}
	ctl, err := s.r.Peek(batchControlSize)
	if err != nil {
		return batch{}, s.fail(err)
	}
	if !bytes.Equal(ctl[:batchHeaderSize], batchHeader) {
		s.reason = stopHeader
		return batch{}, false
	}
	n := int64(int32(binary.BigEndian.Uint32(ctl[batchHeaderSize:])))
	sum := int64(binary.BigEndian.Uint64(ctl[batchHeaderSize+4:]))
	switch {
	case n == 0:
		s.reason = stopEmpty
		return batch{}, false
	case n < 0 || n > left-batchControlSize:
		s.reason = stopOverrun
		return batch{}, false
	}
	if _, err := s.r.Discard(batchControlSize); err != nil {
		return batch{}, s.fail(err)
	}
	if int64(cap(s.body)) < n {
		s.body = make([]byte, n) // n <= bytes left in the file
	}
	body := s.body[:n]
	if _, err := io.ReadFull(s.r, body); err != nil {
		return batch{}, s.fail(err)
	}
	// DEVIATION: ActiveMQ verifies only when checksumJournalFiles is on; we
	// verify every batch that carries a checksum (0 means none, as in
	// checkBatchRecord), whatever Options.Checksum says: it costs one Adler32
	// pass and is what detects a torn write inside the file's length.
	if sum != 0 && sum != int64(adler32.Checksum(body)) {
		s.reason = stopChecksum
		return batch{}, false
	}
	if !validRecords(body) {
		s.reason = stopRecords
		return batch{}, false
	}
	b := batch{offset: s.off, end: s.off + batchControlSize + n, body: body}
	s.off = b.end
	return b, true
}

func (s *scanner) fail(err error) bool {
	s.reason, s.err = stopReadError, err
	return false
}

// validRecords reports whether body is a sequence of user records that ends
// exactly at its end.
func validRecords(body []byte) bool {
	for len(body) > 0 {
		if len(body) < recordHeadSize {
			return false
		}
		size := int64(int32(binary.BigEndian.Uint32(body)))
		if size < recordHeadSize || size > int64(len(body)) || body[4] != userRecordType {
			return false
		}
		body = body[size:]
	}
	return true
}

// eachRecord calls fn with the offset (relative to the body) and payload of
// every record of a body accepted by validRecords.
func eachRecord(body []byte, fn func(rel int64, size int32, payload []byte) error) error {
	var rel int64
	for len(body) > 0 {
		size := int32(binary.BigEndian.Uint32(body))
		if err := fn(rel, size, body[recordHeadSize:size]); err != nil {
			return err
		}
		body = body[size:]
		rel += int64(size)
	}
	return nil
}

// namedReaderAt is a data file being read.
type namedReaderAt interface {
	io.ReaderAt
	Name() string
}

// trailingData returns how many bytes after off, up to size, hold data: the
// distance from off to the last non-zero byte, ignoring an EOF marker at off
// and the EOF marker that sparse preallocation writes at the end of the
// file. 0 means everything after off is a clean end: nothing was dropped.
func trailingData(f namedReaderAt, off, size int64) (int64, error) {
	end := size
	tail := make([]byte, eofSize)
	if size-off >= 2*eofSize {
		if _, err := f.ReadAt(tail, size-eofSize); err != nil {
			return 0, fmt.Errorf("read %s at %d: %w", f.Name(), size-eofSize, err)
		}
		if bytes.Equal(tail, eofMarker) {
			end = size - eofSize
		}
	}
	start := off
	if end-off >= eofSize {
		if _, err := f.ReadAt(tail, off); err != nil {
			return 0, fmt.Errorf("read %s at %d: %w", f.Name(), off, err)
		}
		if bytes.Equal(tail, eofMarker) {
			start = off + eofSize
		}
	}
	last := int64(-1)
	buf := make([]byte, max(min(end-start, 1<<20), 0))
	for pos := start; pos < end; {
		n := int64(len(buf))
		if end-pos < n {
			n = end - pos
		}
		if _, err := f.ReadAt(buf[:n], pos); err != nil {
			return 0, fmt.Errorf("read %s at %d: %w", f.Name(), pos, err)
		}
		for i := n - 1; i >= 0; i-- {
			if buf[i] != 0 {
				last = pos + i
				break
			}
		}
		pos += n
	}
	if last < 0 {
		return 0, nil
	}
	return last + 1 - off, nil
}
