package jdbc_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/pgtest"
	"wharf/protocols/openwire/wire"
	"wharf/storage/jdbc"
	"wharf/storage/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t testing.TB, o jdbc.Options) *jdbc.Store {
	t.Helper()
	s, err := jdbc.Open(o)
	if err != nil {
		t.Fatalf("jdbc.Open: got error %v, want nil", err)
	}
	return s
}

// newDB makes an empty database on the shared cluster and the options
// of a store on it.
func newDB(t testing.TB) jdbc.Options {
	c := pgtest.Shared(t)
	return jdbc.Options{URL: c.URL(c.NewDatabase(t)), CreateTables: true, MaxConns: 8}
}

func TestStoreJDBC(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		o := newDB(t)
		return func() engine.Store { return open(t, o) }
	})
}

func openOneShard(t testing.TB, o jdbc.Options) (*jdbc.Store, engine.ShardStore) {
	t.Helper()
	s := open(t, o)
	ss, err := s.OpenShard(0, 1)
	if err != nil {
		s.Close()
		t.Fatalf("OpenShard(0, 1): got error %v, want nil", err)
	}
	return s, ss
}

func textMsg(d message.Destination, seq uint64, body string) *message.Message {
	return &message.Message{ID: fmt.Sprintf("ID:jdbc-test-1:1:1:%d", seq), Destination: d, Persistent: true,
		Priority: 4, BodyType: message.TextBody, Body: []byte(body)}
}

func addOps(d message.Destination, from, to uint64) []engine.StoreOp {
	var ops []engine.StoreOp
	for i := from; i <= to; i++ {
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: i, Msg: textMsg(d, i, fmt.Sprintf("body %d", i))})
	}
	return ops
}

func recoveredSeqs(t *testing.T, ss engine.ShardStore) []uint64 {
	t.Helper()
	var seqs []uint64
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil {
			seqs = append(seqs, it.Seq)
		}
		return nil
	}); err != nil {
		t.Fatalf("Recover: got error %v, want nil", err)
	}
	return seqs
}

func query(t *testing.T, o jdbc.Options, sql string, dst ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, o.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql).Scan(dst...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// The tables are ActiveMQ's, with its columns, and a message row is as
// ActiveMQ writes one: the qualified container, the message id's
// producer and sequence, priority, expiration, no XID, MSG an OpenWire
// message; a durable subscription has its ACTIVEMQ_ACKS row. A table
// prefix applies to every table.
func TestJDBCActiveMQRows(t *testing.T) {
	o := newDB(t)
	o.TablePrefix = "WH_"
	s, ss := openOneShard(t, o)
	defer s.Close()
	q, tp := message.QueueDest("orders"), message.TopicDest("news")
	m := textMsg(q, 1, "hello")
	m.ID, m.Priority, m.Expiration = "ID:host-1234-5:1:2:3:42", 7, 1<<40
	sub := engine.DurableSub{Key: engine.SubKey{ClientID: "c1", Name: "s1"}, Destination: tp, Selector: "x > 1"}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: m}, {Kind: engine.OpAddSub, Sub: sub}}); err != nil {
		t.Fatal(err)
	}
	var cols string
	query(t, o, "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name='wh_activemq_msgs'", &cols)
	if want := "id,container,msgid_prod,msgid_seq,expiration,msg,priority,xid"; cols != want {
		t.Fatalf("columns of WH_ACTIVEMQ_MSGS: got %s, want %s", cols, want)
	}
	query(t, o, "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name='wh_activemq_lock'", &cols)
	if want := "id,time,broker_name"; cols != want {
		t.Fatalf("columns of WH_ACTIVEMQ_LOCK: got %s, want %s", cols, want)
	}
	var container, prod string
	var pseq, prio, exp int64
	var xid *string
	var msg []byte
	query(t, o, "SELECT CONTAINER, MSGID_PROD, MSGID_SEQ, PRIORITY, EXPIRATION, XID, MSG FROM WH_ACTIVEMQ_MSGS", &container, &prod, &pseq, &prio, &exp, &xid, &msg)
	if container != "queue://orders" || prod != "ID:host-1234-5:1:2:3" || pseq != 42 || prio != 7 || exp != 1<<40 || xid != nil {
		t.Fatalf("message row: got %s %s %d prio %d exp %d xid %v, want queue://orders ID:host-1234-5:1:2:3 42 prio 7 exp %d xid nil",
			container, prod, pseq, prio, exp, xid, int64(1)<<40)
	}
	w, err := wire.Unmarshal(msg, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		t.Fatalf("MSG column: got %v decoding it as an OpenWire message, want none", err)
	}
	if tm, ok := w.(*wire.Message); !ok || wire.TypeName(tm.Kind) != "ActiveMQTextMessage" {
		t.Fatalf("MSG column: got %T, want an ActiveMQTextMessage", w)
	}
	var subDest, sel string
	var acked, p int64
	query(t, o, "SELECT CONTAINER, SUB_DEST, SELECTOR, LAST_ACKED_ID, PRIORITY FROM WH_ACTIVEMQ_ACKS WHERE CLIENT_ID='c1' AND SUB_NAME='s1'", &container, &subDest, &sel, &acked, &p)
	if container != "topic://news" || subDest != "topic://news" || sel != "x > 1" || p != 0 || acked < 1 {
		t.Fatalf("acks row: got %s %s %q last acked %d priority %d, want topic://news topic://news \"x > 1\", at least 1, 0", container, subDest, sel, acked, p)
	}
}

// A database written with one shard count is refused with another,
// naming both.
func TestJDBCShardCountChange(t *testing.T) {
	o := newDB(t)
	s := open(t, o)
	for i := range 2 {
		if _, err := s.OpenShard(i, 2); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	s = open(t, o)
	defer s.Close()
	_, err := s.OpenShard(0, 3)
	if !errors.Is(err, jdbc.ErrShardCount) || !strings.Contains(err.Error(), "2 shards") || !strings.Contains(err.Error(), "runs 3") {
		t.Fatalf("OpenShard(0, 3) of a 2-shard database: got error %v, want %v naming 2 and 3", err, jdbc.ErrShardCount)
	}
}

// With createTablesOnStartup off, an empty database is refused with an
// error naming the missing tables.
func TestJDBCMissingTables(t *testing.T) {
	o := newDB(t)
	o.CreateTables = false
	_, err := jdbc.Open(o)
	if !errors.Is(err, jdbc.ErrMissingTables) || !strings.Contains(err.Error(), "ACTIVEMQ_MSGS") || !strings.Contains(err.Error(), "createTablesOnStartup") {
		t.Fatalf("Open without tables: got error %v, want %v naming ACTIVEMQ_MSGS and createTablesOnStartup", err, jdbc.ErrMissingTables)
	}
}

// Recovery pages: with 7 messages a page, 100 messages over 15 pages
// come back whole and in order, as stubs too; a message ID continues
// after the highest stored one after a restart.
func TestJDBCRecoverPages(t *testing.T) {
	o := newDB(t)
	o.PageSize = 7
	s, ss := openOneShard(t, o)
	q := message.QueueDest("paged")
	if err := ss.Apply(addOps(q, 1, 100)); err != nil {
		t.Fatal(err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 50}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, ss = openOneShard(t, o)
	defer s.Close()
	got := recoveredSeqs(t, ss)
	var want []uint64
	for i := uint64(1); i <= 100; i++ {
		if i != 50 {
			want = append(want, i)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("recovered %v, want 1..100 without 50", got)
	}
	n := 0
	if err := ss.(engine.MessageLoader).RecoverStubs(func(it engine.RecoveredItem) error {
		if it.Ref.Len != 0 {
			n++
		}
		return nil
	}); err != nil || n != 99 {
		t.Fatalf("RecoverStubs: got %d stubs, error %v; want 99, nil", n, err)
	}
	if err := ss.Apply(addOps(q, 101, 101)); err != nil {
		t.Fatal(err)
	}
	var maxID, ids int64
	query(t, o, "SELECT MAX(ID), COUNT(DISTINCT ID) FROM ACTIVEMQ_MSGS", &maxID, &ids)
	if maxID != 101 || ids != 100 {
		t.Fatalf("ids after a restart: got max %d of %d, want 101 of 100", maxID, ids)
	}
}

// ApplyNoSync commits without waiting for the WAL flush, for its own
// transaction only: its batch and a synced batch after it are both there
// after a restart of the store, and the connection's setting is back to
// synchronous afterwards.
func TestJDBCApplyNoSync(t *testing.T) {
	o := newDB(t)
	o.MaxConns = 1 // the setting would show on the one connection
	s, ss := openOneShard(t, o)
	q := message.QueueDest("nosync")
	if err := ss.Apply(addOps(q, 1, 3)); err != nil {
		t.Fatal(err)
	}
	if err := ss.(engine.NoSyncApplier).ApplyNoSync([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	if v, err := jdbc.PoolSetting(s, "synchronous_commit"); err != nil || v != "on" {
		t.Fatalf("synchronous_commit after ApplyNoSync: got %q, %v; want on", v, err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 2}}); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	s.Close()
	s, ss = openOneShard(t, o)
	defer s.Close()
	if got := recoveredSeqs(t, ss); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("recovered %v, want [3]", got)
	}
}

// OpUpdate rewrites the stored redelivery counter in MSG too, as
// ActiveMQ's updateMessage does, so that ActiveMQ taking the database
// over counts the deliveries Wharf made.
func TestJDBCUpdateRewritesMSG(t *testing.T) {
	o := newDB(t)
	s, ss := openOneShard(t, o)
	defer s.Close()
	q := message.QueueDest("redelivered")
	if err := ss.Apply(addOps(q, 1, 1)); err != nil {
		t.Fatal(err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpUpdate, Dest: q, Seq: 1, Count: 3}}); err != nil {
		t.Fatal(err)
	}
	var msg []byte
	query(t, o, "SELECT MSG FROM ACTIVEMQ_MSGS", &msg)
	w, err := wire.Unmarshal(msg, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := w.(*wire.Message); !ok || m.RedeliveryCounter != 3 {
		t.Fatalf("MSG after an update to 3: got %+v, want a message with RedeliveryCounter 3", w)
	}
}

// Four stores opened at once on an empty database all open (the tables
// are created one broker at a time).
func TestJDBCConcurrentCreate(t *testing.T) {
	o := newDB(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := jdbc.Open(o)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Errorf("Open at the same time as three others: got error %v, want nil", err)
		}
	}
}
