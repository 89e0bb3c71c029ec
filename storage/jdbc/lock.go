package jdbc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// Lockers: which of ActiveMQ's JDBC lockers the store takes
// (Options.Locker).
const (
	// LockNone takes no lock (useLock="false").
	LockNone = ""
	// LockDatabase is ActiveMQ's DefaultDatabaseLocker (<database-locker>,
	// the default with useLock): a connection of its own holds the
	// ACTIVEMQ_LOCK row with SELECT ... FOR UPDATE in a transaction kept
	// open while the broker runs; a second broker's SELECT waits on it.
	LockDatabase = "database"
	// LockLease is ActiveMQ's LeaseDatabaseLocker
	// (<lease-database-locker>): the ACTIVEMQ_LOCK row names the lease
	// holder (BROKER_NAME) and when its lease ends (TIME, ms since the
	// epoch); the master renews it, a slave takes it once it has ended.
	LockLease = "lease"
)

// ErrLockLost is returned by Apply once the store no longer holds its
// lock: its lease ended or another broker holds it, or its lock
// connection is gone. Nothing of the batch was written.
var ErrLockLost = errors.New("jdbc: this broker no longer holds the database lock")

// locker is the lock the store holds while it is open.
type locker struct {
	s     *Store
	kind  string
	log   *slog.Logger
	clock func() time.Time

	// Lease.
	holder string
	diff   time.Duration // added to the local clock: the database's time
	// Database locker: the connection holding the row, and its backend
	// pid, which every batch checks is still alive.
	conn *pgx.Conn
	pid  uint32

	lost   atomic.Bool
	lostCh chan struct{} // closed when lost is set
	stop   chan struct{}
	done   sync.WaitGroup
}

func (s *Store) lockOptions() (sleep, keep time.Duration) {
	sleep = s.opts.LockAcquireSleepInterval
	if sleep <= 0 {
		sleep = 10 * time.Second // AbstractLocker.DEFAULT_LOCK_ACQUIRE_SLEEP_INTERVAL
	}
	keep = s.opts.LockKeepAlivePeriod
	if keep <= 0 && s.opts.Locker == LockLease {
		// DEVIATION: ActiveMQ's default keep-alive period is 0 (never),
		// with which its lease simply ends after lockAcquireSleepInterval
		// and a slave takes over; Wharf renews at half the lease.
		keep = sleep / 2
	}
	return sleep, keep
}

// acquire takes the lock, waiting (retrying every
// LockAcquireSleepInterval) while another broker holds it, until ctx is
// done.
func (s *Store) acquire(ctx context.Context) (*locker, error) {
	l := &locker{s: s, kind: s.opts.Locker, log: s.log, clock: s.opts.Clock, holder: s.opts.LeaseHolderID,
		stop: make(chan struct{}), lostCh: make(chan struct{})}
	if l.clock == nil {
		l.clock = time.Now
	}
	sleep, keep := s.lockOptions()
	if l.kind == LockLease && keep >= sleep {
		s.log.Warn("lockKeepAlivePeriod, which renews the lease, is not shorter than lockAcquireSleepInterval, the lease: the lease can end while this broker is master",
			"lockKeepAlivePeriod", keep, "lockAcquireSleepInterval", sleep)
	}
	var err error
	switch l.kind {
	case LockLease:
		err = l.acquireLease(ctx, sleep)
	case LockDatabase:
		err = l.acquireRow(ctx, sleep)
	default:
		return nil, fmt.Errorf("jdbc: unknown locker %q", l.kind)
	}
	if err != nil {
		return nil, err
	}
	if keep > 0 {
		l.done.Add(1)
		go l.keepAlive(keep)
	}
	return l, nil
}

func (l *locker) now() int64 { return l.clock().Add(l.diff).UnixMilli() }

// initDiff sets the difference to the database's clock: with
// maxAllowableDiffFromDBTime > 0, a local clock off by more than that is
// corrected by the difference (LeaseDatabaseLocker.determineTimeDifference).
func (l *locker) initDiff(ctx context.Context) error {
	max := l.s.opts.MaxAllowableDiffFromDBTime
	if max <= 0 {
		return nil
	}
	var db time.Time
	if err := l.s.pool.QueryRow(ctx, "SELECT CURRENT_TIMESTAMP FROM "+l.s.t.lock).Scan(&db); err != nil {
		return err
	}
	diff := l.clock().Sub(db)
	if diff > max || -diff > max {
		l.diff = -diff
	}
	l.log.Info("lease clock adjusted to the database's", "holder", l.holder, "adjust", l.diff, "db_time", db)
	return nil
}

func (l *locker) acquireLease(ctx context.Context, sleep time.Duration) error {
	t := l.s.t
	l.log.Info("attempting to acquire the exclusive lease to become the master", "holder", l.holder, "database", l.s.where())
	if err := l.initDiff(ctx); err != nil {
		return fmt.Errorf("jdbc: lease: read the database's time from %s: %w", l.s.where(), err)
	}
	obtain := "UPDATE " + t.lock + " SET BROKER_NAME=$1, TIME=$2 WHERE (TIME IS NULL OR TIME < $3) AND ID = 1"
	for attempt := 1; ; attempt++ {
		now := l.now()
		tag, err := l.s.pool.Exec(ctx, obtain, l.holder, now+sleep.Milliseconds(), now)
		if err == nil && tag.RowsAffected() == 1 {
			l.log.Info("became the master", "holder", l.holder, "lease_until", time.UnixMilli(now+sleep.Milliseconds()), "database", l.s.where())
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("jdbc: lease on %s: %w", l.s.where(), ctx.Err())
			}
			l.log.Warn("lease acquire failure", "holder", l.holder, "err", err)
		} else {
			var owner *string
			var until *int64
			l.s.pool.QueryRow(ctx, "SELECT BROKER_NAME, TIME FROM "+t.lock+" WHERE ID = 1").Scan(&owner, &until)
			l.log.Info("lease held by another broker, waiting", "holder", l.holder, "owner", deref(owner), "until", derefTime(until), "attempt", attempt, "retry", sleep)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("jdbc: lease on %s: %w", l.s.where(), ctx.Err())
		case <-time.After(sleep):
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(ms *int64) time.Time {
	if ms == nil {
		return time.Time{}
	}
	return time.UnixMilli(*ms)
}

func (l *locker) acquireRow(ctx context.Context, sleep time.Duration) error {
	l.log.Info("attempting to acquire the exclusive lock to become the master", "database", l.s.where())
	cfg := l.s.pool.Config().ConnConfig.Copy()
	for attempt := 1; ; attempt++ {
		err := func() error {
			conn, err := pgx.ConnectConfig(ctx, cfg)
			if err != nil {
				return err
			}
			// A transaction kept open: the row lock lasts until it ends
			// (Close, or the connection dies).
			if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
				conn.Close(context.Background())
				return err
			}
			if _, err := conn.Exec(ctx, "SELECT * FROM "+l.s.t.lock+" FOR UPDATE"); err != nil {
				conn.Close(context.Background())
				return err
			}
			l.conn, l.pid = conn, conn.PgConn().PID()
			return nil
		}()
		if err == nil {
			l.log.Info("became the master", "database", l.s.where())
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("jdbc: lock on %s: %w", l.s.where(), ctx.Err())
		}
		l.log.Info("failed to acquire the lock, waiting", "err", err, "attempt", attempt, "retry", sleep)
		select {
		case <-ctx.Done():
			return fmt.Errorf("jdbc: lock on %s: %w", l.s.where(), ctx.Err())
		case <-time.After(sleep):
		}
	}
}

// keepAlive renews the lease (or checks the lock connection) every
// period until the store closes; a failure marks the lock lost: every
// later Apply fails with ErrLockLost.
func (l *locker) keepAlive(period time.Duration) {
	defer l.done.Done()
	tick := time.NewTicker(period)
	defer tick.Stop()
	sleep, _ := l.s.lockOptions()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		// Bounded by the lease: a renewal that comes later is useless.
		ctx, cancel := context.WithTimeout(context.Background(), sleep)
		var err error
		lost := false
		switch l.kind {
		case LockLease:
			var tag interface{ RowsAffected() int64 }
			tag, err = l.s.pool.Exec(ctx, "UPDATE "+l.s.t.lock+" SET BROKER_NAME=$1, TIME=$2 WHERE BROKER_NAME=$3 AND ID = 1",
				l.holder, l.now()+sleep.Milliseconds(), l.holder)
			if err == nil && tag.RowsAffected() != 1 {
				err, lost = errors.New("another broker holds the lease"), true
			}
		case LockDatabase:
			// The lock connection is the lock: once it fails, the row
			// lock is gone with its transaction.
			_, err = l.conn.Exec(ctx, "UPDATE "+l.s.t.lock+" SET TIME=$1 WHERE ID = 1", l.now())
			lost = err != nil
		}
		cancel()
		if lost {
			l.markLost(err)
			return
		}
		if err != nil {
			// The lease is still ours until it ends: the next renewal
			// may succeed; meanwhile every batch checks it (fence).
			l.log.Warn("lease renewal failed; retrying", "holder", l.holder, "err", err)
		}
	}
}

// markLost records that the lock is gone: every later Apply fails.
func (l *locker) markLost(err error) {
	if !l.lost.Swap(true) {
		l.log.Error("lost the database lock: this broker stores nothing more (every persistent send and ack fails)", "locker", l.kind, "err", err)
		close(l.lostCh)
	}
}

// LockLost is closed once the store has lost its database lock (another
// broker took the lease, the lock connection died): it writes nothing
// more, and the broker should stop, as ActiveMQ stops a broker whose
// lock keep-alive fails. Without a lock it is never closed.
func (s *Store) LockLost() <-chan struct{} {
	if s.lock == nil {
		return nil
	}
	return s.lock.lostCh
}

// fence queues, first in a batch, the statement that fails it unless
// this broker still holds the lock when it runs: a division by zero
// (SQLSTATE 22012) when the lease is not ours and current, or the lock
// connection's backend is gone. With the lease, the row is read FOR
// SHARE: a slave's takeover waits for the batch to end.
func (l *locker) fence(b *batch) {
	switch l.kind {
	case LockLease:
		b.q("SELECT 1/COUNT(*) FROM (SELECT 1 FROM "+l.s.t.lock+" WHERE ID = 1 AND BROKER_NAME=$1 AND TIME > $2 FOR SHARE) AS lease", l.holder, l.now())
	case LockDatabase:
		b.q("SELECT 1/COUNT(*) FROM pg_stat_activity WHERE pid = $1", int32(l.pid))
	}
}

// release ends the lock: the lease is given up (BROKER_NAME null, TIME
// 0, as ActiveMQ releases it), the row lock's transaction rolled back.
func (l *locker) release() {
	close(l.stop)
	l.done.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch l.kind {
	case LockLease:
		if _, err := l.s.pool.Exec(ctx, "UPDATE "+l.s.t.lock+" SET BROKER_NAME=$1, TIME=$2 WHERE BROKER_NAME=$3 AND ID = 1", nil, int64(0), l.holder); err != nil {
			l.log.Error("failed to release the lease", "holder", l.holder, "err", err)
		}
	case LockDatabase:
		l.conn.Close(ctx)
	}
}
