package memory

import (
	"fmt"
	"sync"
	"sync/atomic"

	"wharf/engine"
)

// Store is an in-memory engine.Store. Its methods are safe from any
// goroutine; the ShardStores it returns are each used by one goroutine at a
// time (engine.Store's contract).
type Store struct {
	// mu guards count, shards and every shard's open field: the bookkeeping of
	// OpenShard and Close, which different shard goroutines (and a restarted
	// broker's new goroutines) call concurrently. It is not held while a
	// ShardStore applies or recovers: a shard's data is touched only by the
	// one goroutine that has it open, and taking mu in Close and again in the
	// next OpenShard is what makes the previous owner's writes visible to the
	// next one.
	mu     sync.Mutex
	count  int            // shard count of the first OpenShard; 0 before it
	shards map[int]*shard // by shard index
}

var _ engine.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{shards: make(map[int]*shard)}
}

// OpenShard returns the store of shard index of count, with the state it had
// when its previous ShardStore was closed (empty the first time). A shard can
// be open once at a time; every call must pass the same count.
func (s *Store) OpenShard(index, count int) (engine.ShardStore, error) {
	if count <= 0 || index < 0 || index >= count {
		return nil, fmt.Errorf("open shard %d of %d: %w", index, count, ErrShardIndex)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.count != 0 && s.count != count {
		return nil, fmt.Errorf("open shard %d of %d (store has %d): %w", index, count, s.count, ErrShardCount)
	}
	s.count = count
	sh := s.shards[index]
	if sh == nil {
		sh = newShard()
		s.shards[index] = sh
	}
	if sh.open != nil {
		return nil, fmt.Errorf("open shard %d of %d: %w", index, count, ErrShardOpen)
	}
	ss := &shardStore{store: s, sh: sh}
	sh.open = ss
	return ss, nil
}

// Close closes every ShardStore still open (using one afterwards returns
// ErrClosed) and keeps all state: a later OpenShard on s recovers it, as a
// restarted broker recovers its KahaDB directory. Close must not run while a
// shard goroutine is inside Apply or Recover.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sh := range s.shards {
		if sh.open != nil {
			sh.open.closed.Store(true)
			sh.open = nil
		}
	}
	return nil
}

// shardStore is the engine.ShardStore of one open shard. Only its shard's
// goroutine calls it; closed is atomic because Store.Close sets it from
// another goroutine.
type shardStore struct {
	store  *Store
	sh     *shard
	closed atomic.Bool
	tx     txn // reused by every Apply, so that a batch allocates nothing for its undo log
}

var _ engine.ShardStore = (*shardStore)(nil)

// Apply applies ops as one atomic batch; see the package comment for the
// semantics of each operation.
func (ss *shardStore) Apply(ops []engine.StoreOp) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	for i := range ops {
		if err := ops[i].Check(); err != nil {
			return fmt.Errorf("op %d %s: %w", i, &ops[i], err)
		}
	}
	tx := &ss.tx
	tx.sh = ss.sh
	for i := range ops {
		if err := tx.apply(&ops[i]); err != nil {
			tx.rollback()
			return fmt.Errorf("op %d %s: %w", i, &ops[i], err)
		}
	}
	tx.commit()
	return nil
}

// Recover yields the shard's state; see the package comment for the order.
// It stops at and returns the first error fn returns.
func (ss *shardStore) Recover(fn func(engine.RecoveredItem) error) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	return ss.sh.recover(fn)
}

// Close closes the shard store; its state stays in the Store. Closing twice
// is not an error.
func (ss *shardStore) Close() error {
	s := ss.store
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss.sh.open == ss {
		ss.sh.open = nil
	}
	ss.closed.Store(true)
	return nil
}

// NewShard returns a standalone shard state, not part of any Store: the
// same semantics, checks and recovery order as a Store's shards. A durable
// store uses one as its in-memory index and replays its log into it.
// Close on it only marks it closed.
func NewShard() engine.ShardStore {
	return &shardStore{store: &Store{}, sh: newShard()}
}
