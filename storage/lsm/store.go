package lsm

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"wharf/engine"
)

// Options configure the store; they are <wharfLSM>'s attributes.
type Options struct {
	// Dir holds the store: itself a badger directory with one shard,
	// shard-<i>-of-<S> directories with S.
	Dir string
	// SyncWrites makes Apply return only once its batch is on disk (an
	// fsync of badger's write-ahead log and value log). Off, batches are
	// acknowledged once written to the operating system: a crash of the
	// machine (not of the process) can lose them.
	SyncWrites bool
	// CleanupInterval is how often, at most, a shard runs badger's value
	// log garbage collection (and deletes what removed destinations and
	// subscriptions left); 0 or negative: never, as cleanupInterval="0".
	CleanupInterval time.Duration
	// GCDiscardRatio is the share of a value log file that must be garbage
	// before GC rewrites it; 0 means 0.5.
	GCDiscardRatio float64
	// MemTableSize is badger's memtable size in bytes; 0 means 64 MiB. One
	// Apply must fit in 15% of it (ErrBatchTooBig).
	MemTableSize int64
	// ValueThreshold is the size in bytes from which a record's value goes
	// to the value log instead of the LSM tree; 0 means 1 KiB: bodies are
	// written once, to the value log, and never rewritten by compactions,
	// and the tree stays small (which bounds the free space a compaction
	// needs, see MinFreeDisk). A higher threshold makes a batch of small
	// messages one log to sync instead of two (BenchmarkStoreApply).
	ValueThreshold int64
	// ValueLogFileSize is the size in bytes of one value log file (the unit
	// of value log GC); 0 means 64 MiB.
	ValueLogFileSize int64
	// BlockCacheSize is badger's block cache in bytes per shard; 0 means
	// 16 MiB.
	BlockCacheSize int64
	// MinFreeDisk is the free space in bytes below which Apply refuses a
	// batch that stores anything with ErrDiskFull, before writing it; a
	// batch that only removes (acks, removes, deletions: what drains a
	// full store) is still written while a quarter of it is free. The
	// size of the LSM tree is added to both (a compaction writes its
	// output before it deletes its inputs). 0 means
	// 4*MemTableSize + 2*ValueLogFileSize: the memtable and value log
	// files badger has mapped and may still fill, the tables a flush
	// writes and the room a compaction needs before it deletes its
	// inputs. Negative turns the check off. Badger writes through
	// memory-mapped files of sparse extent, and a write to a mapped page
	// of a full disk kills the process (SIGBUS) instead of returning
	// ENOSPC: the check keeps the disk from getting there.
	MinFreeDisk int64
	// FreeBytes reports the free space of a directory; nil is statfs.
	// Tests inject one.
	FreeBytes func(dir string) int64
	// Clock times value log GC; nil is time.Now.
	Clock  func() time.Time
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.GCDiscardRatio <= 0 || o.GCDiscardRatio >= 1 {
		o.GCDiscardRatio = 0.5
	}
	if o.MemTableSize <= 0 {
		o.MemTableSize = 64 << 20
	}
	if o.ValueThreshold <= 0 {
		o.ValueThreshold = 1 << 10
	}
	// Small records (delivery marks, subscription references) stay in
	// the write-ahead log (ApplyNoSync relies on it).
	o.ValueThreshold = max(o.ValueThreshold, 64)
	if o.ValueLogFileSize <= 0 {
		o.ValueLogFileSize = 64 << 20
	}
	if o.BlockCacheSize <= 0 {
		o.BlockCacheSize = 16 << 20
	}
	if o.MinFreeDisk == 0 {
		o.MinFreeDisk = 4*o.MemTableSize + 2*o.ValueLogFileSize
	}
	if o.FreeBytes == nil {
		o.FreeBytes = freeBytes
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
}

// Store is the LSM store: one badger database per engine shard.
type Store struct {
	opts Options
	log  *slog.Logger

	mu     sync.Mutex
	shards map[*shardStore]struct{}
}

var (
	_ engine.Store         = (*Store)(nil)
	_ engine.ContextOpener = (*Store)(nil)
)

// Open returns the store over o.Dir (created if needed). Each shard's
// database is opened by OpenShard.
func Open(o Options) (*Store, error) {
	o.defaults()
	if o.Dir == "" {
		return nil, fmt.Errorf("lsm: no directory")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("lsm: %w", err)
	}
	if !o.SyncWrites {
		o.Logger.Warn("wharfLSM syncWrites=false: persistent sends are acknowledged before they are on disk; a crash of the machine can lose them", "dir", o.Dir)
	}
	return &Store{opts: o, log: o.Logger, shards: make(map[*shardStore]struct{})}, nil
}

// shardDir is where shard index of count keeps its database.
func (s *Store) shardDir(index, count int) string {
	if count == 1 {
		return s.opts.Dir
	}
	return filepath.Join(s.opts.Dir, "shard-"+strconv.Itoa(index)+"-of-"+strconv.Itoa(count))
}

// checkLayout refuses a directory laid out for another shard count.
func (s *Store) checkLayout(count int) error {
	entries, err := os.ReadDir(s.opts.Dir)
	if err != nil {
		return fmt.Errorf("lsm: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case count == 1 && e.IsDir() && strings.HasPrefix(name, "shard-"):
			return fmt.Errorf("%w: %s has %s, the broker runs 1 shard", ErrShardCount, s.opts.Dir, name)
		case count > 1 && e.IsDir() && strings.HasPrefix(name, "shard-") && !strings.HasSuffix(name, "-of-"+strconv.Itoa(count)):
			return fmt.Errorf("%w: %s has %s, the broker runs %d shards", ErrShardCount, s.opts.Dir, name, count)
		case count > 1 && name == "MANIFEST":
			return fmt.Errorf("%w: %s is a one-shard store; run the broker with one shard (shards: 1) to use it", ErrShardCount, s.opts.Dir)
		}
	}
	return nil
}

// OpenShard opens shard index's database and loads its index.
func (s *Store) OpenShard(index, count int) (engine.ShardStore, error) {
	return s.OpenShardContext(context.Background(), index, count)
}

// OpenShardContext is OpenShard that gives up once ctx is done (checked
// before the database opens and while the index loads).
func (s *Store) OpenShardContext(ctx context.Context, index, count int) (engine.ShardStore, error) {
	if count <= 0 || index < 0 || index >= count {
		return nil, fmt.Errorf("lsm: open shard %d of %d: index out of range", index, count)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("lsm: open shard %d: %w", index, err)
	}
	if err := s.checkLayout(count); err != nil {
		return nil, err
	}
	dir := s.shardDir(index, count)
	o := s.opts
	bo := badger.DefaultOptions(dir).
		WithSyncWrites(false). // Apply syncs once per batch itself (DB.Sync)
		WithDetectConflicts(false).
		WithMemTableSize(o.MemTableSize).
		WithNumMemtables(3).
		WithValueThreshold(o.ValueThreshold).
		WithValueLogFileSize(o.ValueLogFileSize).
		WithBlockCacheSize(o.BlockCacheSize).
		WithNumCompactors(2).
		WithNumVersionsToKeep(1).
		WithCompactL0OnClose(false).
		WithLogger(badgerLogger{s.log.With("shard", index)}).
		WithLoggingLevel(badger.WARNING)
	db, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("lsm: open %s: %w", dir, err)
	}
	ss := &shardStore{store: s, db: db, dir: dir, index: index, log: s.log.With("shard", index)}
	if err := ss.checkMeta(index, count); err != nil {
		db.Close()
		return nil, err
	}
	if err := ss.load(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("lsm: load shard %d (%s): %w", index, dir, err)
	}
	s.mu.Lock()
	s.shards[ss] = struct{}{}
	s.mu.Unlock()
	return ss, nil
}

// Close closes the databases of the shards still open.
func (s *Store) Close() error {
	s.mu.Lock()
	open := make([]*shardStore, 0, len(s.shards))
	for ss := range s.shards {
		open = append(open, ss)
	}
	s.mu.Unlock()
	var first error
	for _, ss := range open {
		if err := ss.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (s *Store) forget(ss *shardStore) {
	s.mu.Lock()
	delete(s.shards, ss)
	s.mu.Unlock()
}

// badgerLogger sends badger's warnings and errors to the broker's logger
// (Options.Logger); badger's own level (WARNING) drops the rest.
type badgerLogger struct{ log *slog.Logger }

func (l badgerLogger) Errorf(f string, a ...any) {
	l.log.Error("badger", "detail", strings.TrimSpace(fmt.Sprintf(f, a...)))
}

func (l badgerLogger) Warningf(f string, a ...any) {
	l.log.Warn("badger", "detail", strings.TrimSpace(fmt.Sprintf(f, a...)))
}
func (l badgerLogger) Infof(string, ...any)  {}
func (l badgerLogger) Debugf(string, ...any) {}
