package jdbc

import (
	"errors"

	"wharf/engine"
	"wharf/storage/internal/records"
)

// Errors returned by the JDBC store.
var (
	// ErrClosed is returned by a ShardStore used after Close.
	ErrClosed = errors.New("jdbc: shard store closed")
	// ErrShardCount is returned when the database was written with another
	// shard count than the broker now runs with.
	ErrShardCount = errors.New("jdbc: the database was written with a different shard count")
	// ErrInvalidOp is engine.ErrInvalidStoreOp (StoreOp.Check), the same
	// on every store.
	ErrInvalidOp = engine.ErrInvalidStoreOp
	// ErrDuplicate is returned by Apply for an OpAdd of a (destination,
	// seq) that is already stored.
	ErrDuplicate = errors.New("jdbc: duplicate message")
	// ErrTxPrepared is returned by Apply for an OpPrepare of an XID the
	// shard already holds prepared.
	ErrTxPrepared = errors.New("jdbc: transaction already prepared")
	// ErrCorrupt is returned for a stored record that does not decode.
	// It is records.ErrCorrupt, the same on storage/lsm and storage/jdbc,
	// which share the record encoding.
	ErrCorrupt = records.ErrCorrupt
	// ErrMissingTables is returned by Open, with createTablesOnStartup
	// off, when a table the store needs does not exist.
	ErrMissingTables = errors.New("jdbc: tables missing")
)
