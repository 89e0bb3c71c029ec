package kahadb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/storage/kahadb/journal"
)

// Options configure the store; they are <kahaDB>'s attributes.
type Options struct {
	Dir                    string
	JournalMaxFileLength   int64 // bytes, 32 MiB
	EnableJournalDiskSyncs bool  // fsync every batch (true)
	// JournalDiskSyncInterval, with EnableJournalDiskSyncs off, is
	// journalDiskSyncStrategy="periodic": batches are acknowledged once
	// written and the journal is fsynced when this long has passed since
	// the last sync, at the next write or housekeeping turn (the engine's
	// tick, 1 s). 0 with syncs off is the "never" strategy.
	JournalDiskSyncInterval time.Duration
	// CleanupInterval is how often, at most, a shard removes (or archives)
	// the journal files nothing needs any more; cleanup runs after an
	// Apply once it has passed. 0 (or negative) disables the periodic
	// cleanup, as cleanupInterval="0" does in ActiveMQ 5.17
	// (MessageDatabase.CheckpointRunner runs it only when
	// cleanupInterval > 0); Close still cleans up, as ActiveMQ's
	// cleanupOnStop (default true) does at a clean stop. ActiveMQ's
	// default, 30 s, comes from the config (engine/config Default).
	CleanupInterval time.Duration
	// NoCleanupOnStop is cleanupOnStop="false": Close writes the
	// checkpoint index but leaves the journal files as they are
	// (MessageDatabase.close: checkpointUpdate(cleanupOnStop)).
	NoCleanupOnStop bool
	// CheckpointInterval is how often each shard writes its checkpoint
	// index (wharf-index.bin, checkpoint.go), which bounds what a restart
	// replays; a clean Close writes one too. 0 means 5 s (ActiveMQ's
	// checkpointInterval); negative disables the index: no index is
	// written and every start replays the whole journal.
	CheckpointInterval time.Duration
	// NoPeriodicCheckpoint is checkpointInterval="0": no timed
	// checkpoint; the index is still written before a cleanup removes a
	// file and at Close, as MessageDatabase's CheckpointRunner still runs
	// checkpointCleanup every cleanupInterval and close() checkpoints.
	NoPeriodicCheckpoint bool
	ArchiveDataLogs      bool
	// EnableAckCompaction lets cleanup free a journal file that is not in
	// the prefix of free files (an older file is pinned) by writing the
	// acks in it that still matter again at the head of the journal
	// (ActiveMQ's enableAckCompaction; off in the zero Options).
	EnableAckCompaction bool
	// CompactAcksAfterNoGC is how many cleanup cycles in a row must free
	// nothing before ack compaction is tried; 0 means 10.
	CompactAcksAfterNoGC int
	// CompactAcksIgnoresStoreGrowth lets ack compaction run when its
	// cycles are up even if the journal moved to a new data file since
	// the previous cleanup cycle; without it such a growing journal is
	// left alone until a later check (ActiveMQ's
	// compactAcksIgnoresStoreGrowth, default false).
	CompactAcksIgnoresStoreGrowth bool
	// LockRetry is how often a store whose directory another broker holds
	// retries the lock (lockAcquireSleepInterval, 10 s).
	LockRetry time.Duration
	// LockKeepAlivePeriod is ActiveMQ's lockKeepAlivePeriod: how often the
	// master checks that it still holds the directory lock
	// (journal.FileLock.Check). Once it does not, every later write fails
	// with ErrLockLost, Close writes nothing more into the directory, and
	// LockLost is closed for the broker to stop, as ActiveMQ stops a
	// broker whose keep-alive fails. 0 (ActiveMQ's default for KahaDB)
	// checks nothing.
	LockKeepAlivePeriod time.Duration
	// RecoveryProgressInterval is how often a long journal replay logs
	// its progress ("entries recovered": records, bytes, percent); 0
	// means 2 s, negative logs none. ActiveMQ logs one line per 100,000
	// records instead; a time interval says as much on a slow disk.
	RecoveryProgressInterval time.Duration
	// Clock times recovery (its progress lines and the seconds it took);
	// nil is time.Now. Tests inject one.
	Clock  func() time.Time
	Logger *slog.Logger
	// JournalObserver is told of every journal batch and fsync of every
	// shard (journal.Options.Observer); nil tells nobody.
	JournalObserver journal.Observer
}

// ErrShardCount is returned when a directory was written with another
// shard count than the broker now runs with.
var ErrShardCount = errors.New("kahadb: the directory was written with a different shard count")

// Store is a KahaDB-compatible store: one journal per engine shard.
type Store struct {
	opts Options
	log  *slog.Logger
	lock *journal.FileLock

	// lost is set, and lostCh closed, once the keep-alive found the lock
	// lost; stopKeep ends the keep-alive (closed by Close).
	lost     atomic.Bool
	lostCh   chan struct{}
	stopKeep chan struct{}
	keepDone chan struct{}

	mu     sync.Mutex
	shards []*shardStore
}

// Open takes the directory's lock (waiting while another broker, Wharf or
// ActiveMQ, holds it) and returns the store.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.JournalMaxFileLength <= 0 {
		o.JournalMaxFileLength = 32 << 20
	}
	if o.LockRetry <= 0 {
		o.LockRetry = 10 * time.Second
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = 5 * time.Second
	}
	if o.CompactAcksAfterNoGC <= 0 {
		o.CompactAcksAfterNoGC = 10
	}
	if o.RecoveryProgressInterval == 0 {
		o.RecoveryProgressInterval = 2 * time.Second
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("kahadb: %w", err)
	}
	lock, err := journal.Lock(ctx, o.Dir, o.LockRetry, o.Logger)
	if err != nil {
		return nil, fmt.Errorf("kahadb: lock %s: %w", o.Dir, err)
	}
	switch {
	case o.EnableJournalDiskSyncs:
	case o.JournalDiskSyncInterval > 0:
		o.Logger.Warn("journalDiskSyncStrategy=periodic: persistent sends are acknowledged before they are on disk; the journal is synced periodically, and a crash of the machine can lose what was written since the last sync", "dir", o.Dir, "interval", o.JournalDiskSyncInterval)
	default:
		o.Logger.Warn("enableJournalDiskSyncs=false: persistent sends are acknowledged before they are on disk; a crash can lose them", "dir", o.Dir)
	}
	s := &Store{opts: o, log: o.Logger, lock: lock}
	if o.LockKeepAlivePeriod > 0 {
		s.lostCh, s.stopKeep, s.keepDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
		go s.keepAlive(lock)
	}
	return s, nil
}

// ErrLockLost is returned by every write once the keep-alive found that
// this broker no longer holds the directory lock.
var ErrLockLost = errors.New("kahadb: this broker no longer holds the directory lock")

// keepAlive checks the lock every LockKeepAlivePeriod until Close, and
// marks it lost at the first failed check.
func (s *Store) keepAlive(lock *journal.FileLock) {
	defer close(s.keepDone)
	t := time.NewTicker(s.opts.LockKeepAlivePeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stopKeep:
			return
		case <-t.C:
		}
		if err := lock.Check(); err != nil {
			s.lost.Store(true)
			s.log.Error("lost the directory lock: this broker stores nothing more (every persistent send and ack fails)", "dir", s.opts.Dir, "err", err)
			close(s.lostCh)
			return
		}
	}
}

// LockLost is closed once the keep-alive (LockKeepAlivePeriod) found the
// directory lock lost; nil when there is no keep-alive. Safe from any
// goroutine.
func (s *Store) LockLost() <-chan struct{} { return s.lostCh }

// periodic reports the "periodic" journal disk sync strategy.
func (s *Store) periodic() bool {
	return !s.opts.EnableJournalDiskSyncs && s.opts.JournalDiskSyncInterval > 0
}

// shardDir is where shard index of count keeps its journal.
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
		return err
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case count == 1 && e.IsDir() && strings.HasPrefix(name, "shard-"):
			return fmt.Errorf("%w: %s has %s, the broker runs 1 shard", ErrShardCount, s.opts.Dir, name)
		case count > 1 && e.IsDir() && strings.HasPrefix(name, "shard-") && !strings.HasSuffix(name, "-of-"+strconv.Itoa(count)):
			return fmt.Errorf("%w: %s has %s, the broker runs %d shards", ErrShardCount, s.opts.Dir, name, count)
		case count > 1 && strings.HasPrefix(name, "db-") && strings.HasSuffix(name, ".log"):
			return fmt.Errorf("%w: %s is a single KahaDB journal (for example ActiveMQ's); run the broker with one shard (shards: 1) to use it", ErrShardCount, s.opts.Dir)
		}
	}
	return nil
}

// OpenShard opens shard index's journal and replays it into the index.
func (s *Store) OpenShard(index, count int) (engine.ShardStore, error) {
	return s.OpenShardContext(context.Background(), index, count)
}

// OpenShardContext is OpenShard that gives up when ctx is done: the replay
// of a long journal checks it between records and returns an error
// wrapping ctx.Err(), having closed the journal (engine.ContextOpener).
func (s *Store) OpenShardContext(ctx context.Context, index, count int) (engine.ShardStore, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("kahadb: open shard %d: %w", index, err)
	}
	if err := s.checkLayout(count); err != nil {
		return nil, err
	}
	dir := s.shardDir(index, count)
	j, err := journal.Open(journal.Options{
		Dir:           dir,
		MaxFileLength: s.opts.JournalMaxFileLength,
		// One Apply is one batch (atomic on replay); only a batch bigger
		// than a whole file is split.
		MaxWriteBatchSize: int(max(s.opts.JournalMaxFileLength, 4<<20)),
		Sync:              s.opts.EnableJournalDiskSyncs || s.periodic(),
		Checksum:          true,
		Logger:            s.log.With("shard", index),
		Observer:          s.opts.JournalObserver,
	})
	if err != nil {
		return nil, fmt.Errorf("kahadb: open journal %s: %w", dir, err)
	}
	lg := s.log.With("shard", index)
	ss := newShardStore(s, j, dir, lg)
	if err := ss.loadIndex(); err != nil {
		// The index is only a shortcut: without it the journal alone
		// rebuilds the same state.
		lg.Warn("checkpoint index ignored: replaying the whole journal", "dir", dir, "file", indexFile, "reason", err)
		if err := removeIndex(dir, s.opts.EnableJournalDiskSyncs); err != nil {
			j.Close()
			return nil, err
		}
		ss = newShardStore(s, j, dir, lg)
	}
	n, err := ss.replay(ctx, ss.cp.at)
	if err != nil {
		j.Close()
		return nil, err
	}
	ss.stats.RecordsReplayed = n
	if err := s.dropActiveMQIndex(dir); err != nil {
		j.Close()
		return nil, err
	}
	s.mu.Lock()
	s.shards = append(s.shards, ss)
	s.mu.Unlock()
	return ss, nil
}

// activeMQIndex are the files of ActiveMQ's index next to a journal
// (reference kahadb.md §1, §6): the page file, its redo log, its free list.
var activeMQIndex = []string{"db.data", "db.redo", "db.free"}

// dropActiveMQIndex removes the index ActiveMQ left in dir, once the
// journal has been replayed and before Wharf writes to it. From Wharf's
// first write on, that index no longer describes the journal: ActiveMQ
// would start from its page-0 lastUpdate and trust its B-trees, so it would
// not see what Wharf acknowledged in files it has already indexed, and it
// refuses to start at all ("Could not locate data file db-N.log") once
// Wharf's cleanup has removed a journal file the index points into.
// Without the index, ActiveMQ rebuilds it from the journal alone ("Recovering
// from the journal @1:0"), which is how it reads every Wharf journal
// (reference kahadb.md §9: delete db.data, db.redo and db.free when handing
// a journal ActiveMQ did not write to it).
func (s *Store) dropActiveMQIndex(dir string) error {
	var removed []string
	for _, name := range activeMQIndex {
		err := os.Remove(filepath.Join(dir, name))
		switch {
		case err == nil:
			removed = append(removed, name)
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("kahadb: remove ActiveMQ's index: %w", err)
		}
	}
	if len(removed) == 0 {
		return nil
	}
	if s.opts.EnableJournalDiskSyncs {
		d, err := os.Open(dir)
		if err != nil {
			return fmt.Errorf("kahadb: %w", err)
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("kahadb: fsync %s: %w", dir, err)
		}
	}
	s.log.Info("activemq index removed", "dir", dir, "files", removed,
		"reason", "stale once wharf writes the journal; activemq rebuilds it from the journal")
	return nil
}

// Close releases the lock. Shard stores are closed by the engine.
func (s *Store) Close() error {
	if s.stopKeep != nil {
		select {
		case <-s.stopKeep:
		default:
			close(s.stopKeep)
		}
		<-s.keepDone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, ss := range s.shards {
		errs = append(errs, ss.Close())
	}
	s.shards = nil
	if s.lock != nil {
		errs = append(errs, s.lock.Unlock())
		s.lock = nil
	}
	return errors.Join(errs...)
}

// RecoveryStats says how the open shards rebuilt their state.
type RecoveryStats struct {
	Shards          int // shards opened
	FromIndex       int // shards that loaded their checkpoint index
	IndexMessages   int // pending messages the index named (not read: the engine loads them)
	RecordsReplayed int // journal records replayed (the tail after the index, or all)
	Checkpoints     int // checkpoint indexes written since the shards opened
}

// Recovery sums the recovery counters of the open shards.
func (s *Store) Recovery() RecoveryStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t RecoveryStats
	for _, ss := range s.shards {
		t.Shards++
		if ss.stats.FromIndex {
			t.FromIndex++
		}
		t.IndexMessages += ss.stats.IndexMessages
		t.RecordsReplayed += ss.stats.RecordsReplayed
		t.Checkpoints += int(ss.stats.Checkpoints.Load())
	}
	return t
}

// Stats sums the journals' counters (batches, records, fsyncs).
func (s *Store) Stats() journal.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t journal.Stats
	for _, ss := range s.shards {
		st := ss.j.Stats()
		t.Batches += st.Batches
		t.Records += st.Records
		t.Bytes += st.Bytes
		t.Syncs += st.Syncs
	}
	return t
}
