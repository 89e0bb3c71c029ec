package jdbc_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"wharf/engine/message"
	"wharf/storage/jdbc"
)

func exec(t *testing.T, o jdbc.Options, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, o.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// openAsync opens a store in a goroutine: a slave waits in Open.
func openAsync(o jdbc.Options) (<-chan *jdbc.Store, <-chan error) {
	got, errs := make(chan *jdbc.Store, 1), make(chan error, 1)
	go func() {
		s, err := jdbc.Open(o)
		if err != nil {
			errs <- err
			return
		}
		got <- s
	}()
	return got, errs
}

// expectNotOpen checks, after a barrier showing the master still holds
// the lock, that the slave's Open has not returned.
func expectNotOpen(t *testing.T, got <-chan *jdbc.Store, errs <-chan error) {
	t.Helper()
	select {
	case s := <-got:
		s.Close()
		t.Fatalf("the slave opened the store while the master holds the lock")
	case err := <-errs:
		t.Fatalf("the slave's Open failed: %v", err)
	default:
	}
}

func leaseOptions(o jdbc.Options, holder string) jdbc.Options {
	o.Locker, o.LeaseHolderID = jdbc.LockLease, holder
	o.LockAcquireSleepInterval, o.LockKeepAlivePeriod = 2*time.Second, 200*time.Millisecond
	return o
}

func lockRow(t *testing.T, o jdbc.Options) (string, int64) {
	t.Helper()
	var holder *string
	var until *int64
	query(t, o, "SELECT BROKER_NAME, TIME FROM ACTIVEMQ_LOCK WHERE ID = 1", &holder, &until)
	if holder == nil || until == nil {
		return "", 0
	}
	return *holder, *until
}

// Lease locker: the master's lease is in ACTIVEMQ_LOCK under its holder
// id and renewed; a slave waits; when the master closes (releasing the
// lease) the slave becomes master and the former master's store is
// gone.
func TestJDBCLeaseHandover(t *testing.T) {
	o := newDB(t)
	a := open(t, leaseOptions(o, "broker-a"))
	holder, until := lockRow(t, o)
	if holder != "broker-a" || until <= time.Now().UnixMilli() {
		t.Fatalf("lock row: got holder %q until %v, want broker-a with a lease in the future", holder, time.UnixMilli(until))
	}
	got, errs := openAsync(leaseOptions(o, "broker-b"))
	// Renewals: the lease end moves forward while b waits.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if h, u := lockRow(t, o); h == "broker-a" && u > until {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the master's lease was not renewed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	expectNotOpen(t, got, errs)
	a.Close()
	select {
	case b := <-got:
		defer b.Close()
		if holder, _ := lockRow(t, o); holder != "broker-b" {
			t.Fatalf("after the handover: got holder %q, want broker-b", holder)
		}
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the slave did not become master after the master released its lease")
	}
}

// A master whose lease another broker took (here written into the row
// as a takeover would) writes nothing more: its next batch fails with
// ErrLockLost and stores nothing, and so do the ones after it.
func TestJDBCLeaseLostFencesWrites(t *testing.T) {
	o := newDB(t)
	lo := leaseOptions(o, "broker-a")
	lo.LockKeepAlivePeriod = time.Hour // the fence alone must catch it
	s, ss := openOneShard(t, lo)
	defer s.Close()
	q := message.QueueDest("fenced")
	if err := ss.Apply(addOps(q, 1, 1)); err != nil {
		t.Fatal(err)
	}
	exec(t, o, "UPDATE ACTIVEMQ_LOCK SET BROKER_NAME='broker-x', TIME=$1 WHERE ID = 1", time.Now().Add(time.Hour).UnixMilli())
	for seq := uint64(2); seq <= 3; seq++ {
		if err := ss.Apply(addOps(q, seq, seq)); !errors.Is(err, jdbc.ErrLockLost) {
			t.Fatalf("Apply after the lease was taken: got error %v, want %v", err, jdbc.ErrLockLost)
		}
	}
	var n int64
	query(t, o, "SELECT COUNT(*) FROM ACTIVEMQ_MSGS", &n)
	if n != 1 {
		t.Fatalf("messages stored: got %d, want 1 (nothing after the takeover)", n)
	}
}

// A lease that ends without renewal is taken by the waiting slave, and
// the former master's batches fail from then on.
func TestJDBCLeaseExpiryTakeover(t *testing.T) {
	o := newDB(t)
	lo := leaseOptions(o, "broker-a")
	lo.LockKeepAlivePeriod = time.Hour // never renewed in the test
	lo.LockAcquireSleepInterval = time.Second
	s, ss := openOneShard(t, lo)
	defer s.Close()
	bo := leaseOptions(o, "broker-b")
	bo.LockAcquireSleepInterval = 300 * time.Millisecond
	got, errs := openAsync(bo)
	select {
	case b := <-got:
		defer b.Close()
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the slave did not take the expired lease")
	}
	q := message.QueueDest("late")
	if err := ss.Apply(addOps(q, 1, 1)); !errors.Is(err, jdbc.ErrLockLost) {
		t.Fatalf("former master's Apply: got error %v, want %v", err, jdbc.ErrLockLost)
	}
}

// maxAllowableDiffFromDBTime: a broker whose clock is an hour fast
// writes lease times on the database's clock once the difference is
// above the allowance, and its own (wrong) clock without it.
func TestJDBCLeaseClockSkew(t *testing.T) {
	o := newDB(t)
	skewed := func() time.Time { return time.Now().Add(time.Hour) }
	lo := leaseOptions(o, "fast-clock")
	lo.Clock, lo.MaxAllowableDiffFromDBTime = skewed, time.Second
	s := open(t, lo)
	_, until := lockRow(t, o)
	s.Close()
	if d := time.Until(time.UnixMilli(until)); d < 0 || d > time.Minute {
		t.Fatalf("lease end with the clock corrected: got %v from now, want within the 2 s lease", d)
	}
	lo.MaxAllowableDiffFromDBTime = 0
	s = open(t, lo)
	_, until = lockRow(t, o)
	s.Close()
	if d := time.Until(time.UnixMilli(until)); d < 59*time.Minute {
		t.Fatalf("lease end on the uncorrected clock: got %v from now, want about an hour", d)
	}
}

// Database locker (ActiveMQ's default): the master holds the lock row;
// a slave waits; when the master's lock connection dies the slave
// becomes master and the former master's batches fail.
func TestJDBCDatabaseLocker(t *testing.T) {
	o := newDB(t)
	lo := o
	lo.Locker, lo.LockAcquireSleepInterval = jdbc.LockDatabase, 300*time.Millisecond
	a, ss := openOneShard(t, lo)
	defer a.Close()
	q := message.QueueDest("locked")
	if err := ss.Apply(addOps(q, 1, 1)); err != nil {
		t.Fatal(err)
	}
	got, errs := openAsync(lo)
	// Barrier: the slave's SELECT ... FOR UPDATE is waiting on the row.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int64
		query(t, o, "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ACTIVEMQ_LOCK FOR UPDATE%'", &waiting)
		if waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slave is not waiting on the lock row")
		}
		time.Sleep(20 * time.Millisecond)
	}
	expectNotOpen(t, got, errs)
	// The master's lock connection dies (its backend is terminated).
	exec(t, o, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE state = 'idle in transaction' AND query LIKE '%ACTIVEMQ_LOCK FOR UPDATE%'")
	select {
	case b := <-got:
		defer b.Close()
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("the slave did not become master after the master's lock connection died")
	}
	if err := ss.Apply(addOps(q, 2, 2)); !errors.Is(err, jdbc.ErrLockLost) {
		t.Fatalf("former master's Apply: got error %v, want %v", err, jdbc.ErrLockLost)
	}
}
