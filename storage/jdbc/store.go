package jdbc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"wharf/engine"
)

// Isolation levels of transactionIsolation, java.sql.Connection's numbers.
const (
	IsolationDefault         = 0 // the server's default (READ COMMITTED)
	IsolationReadUncommitted = 1
	IsolationReadCommitted   = 2
	IsolationRepeatableRead  = 4
	IsolationSerializable    = 8
)

// Options configure the store: <jdbcPersistenceAdapter>'s attributes and
// its data source.
type Options struct {
	// URL is the pgx connection string (postgres://user@host:port/db...),
	// made from the data source bean by the configuration.
	URL string
	// MaxConns bounds the connection pool; 0 means one per shard plus 4.
	MaxConns int
	// MinConns is the connections kept open when idle (initialSize,
	// minIdle).
	MinConns int
	// TablePrefix goes before every table name (ActiveMQ's
	// statements tablePrefix).
	TablePrefix string
	// CreateTables creates the tables that are missing when the store
	// opens (createTablesOnStartup, ActiveMQ's default true); off, a
	// missing table is an error naming it.
	CreateTables bool
	// Isolation is transactionIsolation (java.sql.Connection's numbers),
	// set on every connection; 0 leaves the server's default.
	Isolation int
	// ConnectTimeout bounds one connection attempt; 0 means 30 s.
	ConnectTimeout time.Duration
	// PageSize is how many messages one recovery query fetches; 0 means
	// 500.
	PageSize int
	// CleanupPeriod is how often, at most, a shard brings ActiveMQ's
	// LAST_ACKED_ID of its durable subscriptions up to date
	// (cleanupPeriod); it is also done when the store closes. 0 means
	// only then.
	CleanupPeriod time.Duration

	// Locker is the lock the store takes on ACTIVEMQ_LOCK before it
	// reads anything (useLock): LockNone, LockDatabase or LockLease. A
	// store whose lock is held by another broker waits in Open.
	Locker string
	// LockAcquireSleepInterval is the wait between attempts to take the
	// lock, and with LockLease the length of the lease; 0 means 10 s.
	LockAcquireSleepInterval time.Duration
	// LockKeepAlivePeriod is how often the master renews its lease (or
	// checks its lock connection); 0 means never for LockDatabase and
	// half the lease for LockLease.
	LockKeepAlivePeriod time.Duration
	// LeaseHolderID names this broker in ACTIVEMQ_LOCK.BROKER_NAME
	// (leaseHolderId; ActiveMQ's default is the broker name).
	LeaseHolderID string
	// MaxAllowableDiffFromDBTime: with LockLease, a local clock that
	// differs from the database's by more than this is corrected by the
	// difference; 0 trusts the local clock.
	MaxAllowableDiffFromDBTime time.Duration
	// Clock is the lease's clock; nil is time.Now. Tests skew it.
	Clock func() time.Time

	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.PageSize <= 0 {
		o.PageSize = 500
	}
}

// Store is the JDBC store: every shard's state in one PostgreSQL
// database, in ActiveMQ's tables and Wharf's beside them.
type Store struct {
	opts Options
	log  *slog.Logger
	pool *pgxpool.Pool
	t    tables
	st   statements

	lock *locker // nil without a lock

	// lastID is the last ACTIVEMQ_MSGS.ID handed out: ActiveMQ's
	// sequence generator, started from the highest ID of ACTIVEMQ_MSGS
	// and LAST_ACKED_ID of ACTIVEMQ_ACKS when the store opens; shared by
	// the shards, so that IDs increase with add order in each
	// destination.
	lastID atomic.Int64

	mu     sync.Mutex
	shards map[*shardStore]struct{}
}

var (
	_ engine.Store         = (*Store)(nil)
	_ engine.ContextOpener = (*Store)(nil)
)

// Open connects to the database, creates the missing tables (with
// CreateTables) and reads the highest message id.
func Open(o Options) (*Store, error) {
	return OpenContext(context.Background(), o)
}

// OpenContext is Open that gives up once ctx is done.
func OpenContext(ctx context.Context, o Options) (*Store, error) {
	o.defaults()
	if o.URL == "" {
		return nil, errors.New("jdbc: no database URL")
	}
	pc, err := pgxpool.ParseConfig(o.URL)
	if err != nil {
		return nil, fmt.Errorf("jdbc: database URL: %w", err)
	}
	pc.ConnConfig.ConnectTimeout = o.ConnectTimeout
	if o.MaxConns > 0 {
		pc.MaxConns = int32(o.MaxConns)
	} else {
		pc.MaxConns = 64
	}
	if o.MinConns > 0 {
		pc.MinConns = int32(min(o.MinConns, int(pc.MaxConns)))
	}
	if lvl := isolationName(o.Isolation); lvl != "" {
		pc.ConnConfig.RuntimeParams["default_transaction_isolation"] = lvl
	} else if o.Isolation != IsolationDefault {
		return nil, fmt.Errorf("jdbc: transactionIsolation %d is not one of 1, 2, 4, 8 (java.sql.Connection's levels)", o.Isolation)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("jdbc: %w", err)
	}
	s := &Store{opts: o, log: o.Logger, pool: pool, t: newTables(o.TablePrefix), shards: make(map[*shardStore]struct{})}
	s.st = newStatements(s.t)
	if err := s.prepare(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if o.Locker != LockNone {
		// Before anything is read: the master before may still write.
		if s.lock, err = s.acquire(ctx); err != nil {
			pool.Close()
			return nil, err
		}
	}
	if err := s.readLastID(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func isolationName(n int) string {
	switch n {
	case IsolationReadUncommitted:
		return "read uncommitted"
	case IsolationReadCommitted:
		return "read committed"
	case IsolationRepeatableRead:
		return "repeatable read"
	case IsolationSerializable:
		return "serializable"
	}
	return ""
}

// prepare creates or checks the tables and reads the highest id.
func (s *Store) prepare(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("jdbc: connect to %s: %w", s.where(), err)
	}
	defer conn.Release()
	exists := func(name string) (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", regclass(name)).Scan(&ok)
		return ok, err
	}
	if s.opts.CreateTables {
		// Two brokers starting at once on an empty database would
		// collide (CREATE TABLE IF NOT EXISTS too): one at a time; the
		// lock is the session's, released below or with the connection.
		key := "wharf-schema:" + s.t.wmeta
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext($1))", key); err != nil {
			return fmt.Errorf("jdbc: %s: %w", s.where(), err)
		}
		defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock(hashtext($1))", key)
		had, err := exists(s.t.msgs)
		if err != nil {
			return fmt.Errorf("jdbc: %s: %w", s.where(), err)
		}
		// ActiveMQ runs every statement even when the tables exist (some
		// are ALTERs that upgrade older tables); each on its own,
		// failures ignored. Here only when they do not exist yet: on
		// tables that exist they could change nothing but fail.
		if !had {
			for _, q := range s.t.activemqSchema() {
				if _, err := conn.Exec(ctx, q); err != nil {
					s.log.Debug("create ActiveMQ tables: statement failed, ignored as ActiveMQ ignores it", "sql", q, "err", err)
				}
			}
		}
		for _, q := range s.t.wharfSchema() {
			if _, err := conn.Exec(ctx, q); err != nil {
				return fmt.Errorf("jdbc: create tables in %s: %s: %w", s.where(), q, err)
			}
		}
	}
	var missing []string
	for _, name := range s.t.all() {
		ok, err := exists(name)
		if err != nil {
			return fmt.Errorf("jdbc: %s: %w", s.where(), err)
		}
		if !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w in %s: %v (createTablesOnStartup=\"true\" creates them)", ErrMissingTables, s.where(), missing)
	}
	return nil
}

// readLastID starts the id sequence after the highest id stored.
func (s *Store) readLastID(ctx context.Context) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("jdbc: connect to %s: %w", s.where(), err)
	}
	defer conn.Release()
	var lastMsg, lastAck *int64
	if err := conn.QueryRow(ctx, s.st.lastMsgID).Scan(&lastMsg); err != nil {
		return fmt.Errorf("jdbc: %s: %w", s.where(), err)
	}
	if err := conn.QueryRow(ctx, s.st.lastAckID).Scan(&lastAck); err != nil {
		return fmt.Errorf("jdbc: %s: %w", s.where(), err)
	}
	var last int64
	if lastMsg != nil {
		last = *lastMsg
	}
	if lastAck != nil {
		last = max(last, *lastAck)
	}
	s.lastID.Store(last)
	return nil
}

// where names the database for error messages (host, port, database;
// never the password).
func (s *Store) where() string {
	c := s.pool.Config().ConnConfig
	return fmt.Sprintf("PostgreSQL %s:%d/%s", c.Host, c.Port, c.Database)
}

// nextID hands out the next ACTIVEMQ_MSGS.ID.
func (s *Store) nextID() int64 { return s.lastID.Add(1) }

// checkShards records the shard count of a new database and refuses one
// written with another.
func (s *Store) checkShards(ctx context.Context, count int) error {
	want := strconv.Itoa(count)
	if _, err := s.pool.Exec(ctx, "INSERT INTO "+s.t.wmeta+" (NAME, VALUE) VALUES ('shards', $1) ON CONFLICT DO NOTHING", want); err != nil {
		return fmt.Errorf("jdbc: %s: %w", s.where(), err)
	}
	var got string
	if err := s.pool.QueryRow(ctx, "SELECT VALUE FROM "+s.t.wmeta+" WHERE NAME='shards'").Scan(&got); err != nil {
		return fmt.Errorf("jdbc: %s: %w", s.where(), err)
	}
	if got != want {
		return fmt.Errorf("%w: %s (%sWHARF_META) was written by %s shards, the broker runs %d; run it with shards: %s", ErrShardCount, s.where(), s.opts.TablePrefix, got, count, got)
	}
	return nil
}

// OpenShard opens shard index of count and loads its index.
func (s *Store) OpenShard(index, count int) (engine.ShardStore, error) {
	return s.OpenShardContext(context.Background(), index, count)
}

// OpenShardContext is OpenShard that gives up once ctx is done.
func (s *Store) OpenShardContext(ctx context.Context, index, count int) (engine.ShardStore, error) {
	if count <= 0 || index < 0 || index >= count {
		return nil, fmt.Errorf("jdbc: open shard %d of %d: index out of range", index, count)
	}
	if err := s.checkShards(ctx, count); err != nil {
		return nil, err
	}
	ss := &shardStore{store: s, index: index, count: count, log: s.log.With("shard", index)}
	if err := ss.adopt(ctx, count); err != nil {
		return nil, fmt.Errorf("jdbc: shard %d on %s: %w", index, s.where(), err)
	}
	if err := ss.adoptTxs(ctx); err != nil {
		return nil, fmt.Errorf("jdbc: shard %d on %s: prepared transactions: %w", index, s.where(), err)
	}
	if err := ss.load(ctx); err != nil {
		return nil, fmt.Errorf("jdbc: load shard %d from %s: %w", index, s.where(), err)
	}
	s.mu.Lock()
	s.shards[ss] = struct{}{}
	s.mu.Unlock()
	return ss, nil
}

// Close closes the shards still open and the connection pool.
func (s *Store) Close() error {
	s.mu.Lock()
	open := make([]*shardStore, 0, len(s.shards))
	for ss := range s.shards {
		open = append(open, ss)
	}
	s.mu.Unlock()
	for _, ss := range open {
		ss.Close()
	}
	if s.lock != nil {
		s.lock.release()
		s.lock = nil
	}
	s.pool.Close()
	return nil
}

func (s *Store) forget(ss *shardStore) {
	s.mu.Lock()
	delete(s.shards, ss)
	s.mu.Unlock()
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.pool.Ping(ctx) }

// queryRows runs q and calls fn for each row.
func queryRows(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string, args []any, fn func(pgx.Rows) error) error {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
