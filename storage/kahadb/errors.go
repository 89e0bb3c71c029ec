package kahadb

import "errors"

// Why a checkpoint index is not used (see checkpoint.go). OpenShard logs the
// reason and rebuilds the state from the whole journal instead.
var (
	// ErrIndexCorrupt: the index file is short, malformed or fails its
	// checksum (a torn write of the file itself, or damage).
	ErrIndexCorrupt = errors.New("kahadb: checkpoint index corrupt")
	// ErrIndexVersion: the index was written in another format version.
	ErrIndexVersion = errors.New("kahadb: checkpoint index from another format version")
	// ErrIndexStale: the journal no longer matches the index: a file it
	// refers to is gone, the journal was truncated before its location
	// (torn tail recovery), or a record it names holds something else.
	ErrIndexStale = errors.New("kahadb: checkpoint index does not match the journal")
)

// errBadMark: a delivery marks trace record (marks.go) that does not parse;
// replay skips it with a warning.
var errBadMark = errors.New("kahadb: bad delivery mark")
