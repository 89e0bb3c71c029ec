package lsm

import (
	"errors"

	"wharf/engine"
	"wharf/storage/internal/records"
)

// Errors returned by the LSM store.
var (
	// ErrClosed is returned by a ShardStore used after Close.
	ErrClosed = errors.New("lsm: shard store closed")
	// ErrShardCount is returned when a directory was written with another
	// shard count than the broker now runs with.
	ErrShardCount = errors.New("lsm: the directory was written with a different shard count")
	// ErrInvalidOp is returned by Apply for an operation that is malformed
	// on its own (unknown kind, no destination, nil message...).
	// It is engine.ErrInvalidStoreOp (StoreOp.Check), the same on every
	// store.
	ErrInvalidOp = engine.ErrInvalidStoreOp
	// ErrDuplicate is returned by Apply for an OpAdd of a (destination,
	// seq) that is already stored.
	ErrDuplicate = errors.New("lsm: duplicate message")
	// ErrTxPrepared is returned by Apply for an OpPrepare of an XID the
	// shard already holds prepared.
	ErrTxPrepared = errors.New("lsm: transaction already prepared")
	// ErrDiskFull is returned by Apply, before anything is written, when
	// the file system of the store has less free space than
	// Options.MinFreeDisk.
	ErrDiskFull = errors.New("lsm: disk full")
	// ErrBatchTooBig is returned by Apply for a batch larger than one
	// badger transaction can hold (15% of MemTableSize).
	ErrBatchTooBig = errors.New("lsm: batch too big for one transaction")
	// ErrCorrupt is returned for a stored record that does not decode.
	// It is records.ErrCorrupt, the same on storage/lsm and storage/jdbc,
	// which share the record encoding.
	ErrCorrupt = records.ErrCorrupt
)
