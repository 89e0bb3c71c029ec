package journal

import "errors"

// Errors returned by the journal. Callers test them with errors.Is; the
// returned errors wrap them with the file, offset or sizes involved.
var (
	// ErrClosed is returned by every method of a Journal after Close.
	ErrClosed = errors.New("journal: closed")
	// ErrCorrupt is returned by Read for a location that does not hold a
	// well-formed user record (wrong size or type, past the end of the file).
	ErrCorrupt = errors.New("journal: corrupt record")
	// ErrMissingFile is returned by Read and Replay for a location in a data
	// file that is not in the directory (deleted, archived, or lost).
	ErrMissingFile = errors.New("journal: missing data file")
	// ErrInvalidLocation is returned by Read for a location that cannot name
	// a record (negative offset, size below the record header).
	ErrInvalidLocation = errors.New("journal: invalid location")
	// ErrEmptyBatch is returned by Append for a batch without records.
	ErrEmptyBatch = errors.New("journal: empty batch")
	// ErrBatchTooLarge is returned by Append for a batch of several records
	// whose encoded size reaches MaxWriteBatchSize, or a record too large for
	// the int32 record size field.
	ErrBatchTooLarge = errors.New("journal: batch too large")
	// ErrCurrentFile is returned by Remove and Archive for the data file
	// being appended to.
	ErrCurrentFile = errors.New("journal: data file in use")
	// ErrLocked is returned by Lock when ctx ends before the directory lock
	// could be taken.
	ErrLocked = errors.New("journal: directory locked by another broker")
	// ErrSyncFailed is returned by Append, AppendNoSync and Sync after an
	// fsync of a data file failed: the journal no longer writes (what the
	// failed fsync covered may be lost, and a later fsync cannot prove
	// otherwise). Reopening the journal recovers what the disk holds.
	ErrSyncFailed = errors.New("journal: stopped after a failed fsync (Journal failed to sync): persistent writes are refused until the broker restarts")
	// ErrLockLost is returned by FileLock.Check when this broker can no
	// longer be sure it holds the directory lock.
	ErrLockLost = errors.New("journal: directory lock lost")
	// ErrUnlocked is returned by FileLock.Unlock on a lock already released.
	ErrUnlocked = errors.New("journal: lock not held")
)
