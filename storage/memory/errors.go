package memory

import (
	"errors"

	"wharf/engine"
)

// Errors returned by the memory store.
var (
	// ErrClosed is returned by a ShardStore used after Close (its own or the
	// Store's).
	ErrClosed = errors.New("memory: shard store closed")
	// ErrShardOpen is returned by OpenShard for a shard already open: like a
	// KahaDB directory lock, one shard store has one user.
	ErrShardOpen = errors.New("memory: shard already open")
	// ErrShardIndex is returned by OpenShard for an index outside [0, count).
	ErrShardIndex = errors.New("memory: shard index out of range")
	// ErrShardCount is returned by OpenShard when count differs from the count
	// the Store was first opened with: destinations would hash to other shards.
	ErrShardCount = errors.New("memory: shard count changed")
	// ErrInvalidOp is returned by Apply for an operation that is malformed on
	// its own (unknown kind, no destination, nil message, ack on a queue...).
	// It is engine.ErrInvalidStoreOp (StoreOp.Check), the same on every
	// store.
	ErrInvalidOp = engine.ErrInvalidStoreOp
	// ErrDuplicate is returned by Apply for an OpAdd of a (destination, seq)
	// that is already stored.
	ErrDuplicate = errors.New("memory: duplicate message")
	// ErrTxPrepared is returned by Apply for an OpPrepare of an XID the
	// shard already holds prepared.
	ErrTxPrepared = errors.New("memory: transaction already prepared")
)
