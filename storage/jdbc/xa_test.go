package jdbc_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"testing"

	"github.com/jackc/pgx/v5"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
	"wharf/storage/jdbc"
)

// xaFixture is one shard with a queue message (seq 1 of q) and a topic
// message (seq 1 of tp, for durable subscription sub), and a prepared
// transaction that sends two messages to q and acknowledges both.
type xaFixture struct {
	o   jdbc.Options
	q   message.Destination
	tp  message.Destination
	sub engine.SubKey
	tx  *engine.PreparedTx
}

func newXAFixture(t *testing.T) *xaFixture {
	f := &xaFixture{
		o:   newDB(t),
		q:   message.Destination{Type: message.Queue, Name: "xa.q"},
		tp:  message.Destination{Type: message.Topic, Name: "xa.t"},
		sub: engine.SubKey{ClientID: "c", Name: "s"},
	}
	f.tx = &engine.PreparedTx{
		XID:  engine.XID{FormatID: 131075, GlobalID: []byte("global-1"), Branch: []byte("branch-1")},
		Adds: []*message.Message{textMsg(f.q, 100, "tx send 1"), textMsg(f.q, 101, "tx send 2")},
		Acks: []engine.TxAck{{Dest: f.q, Seq: 1}, {Dest: f.tp, Seq: 1, Sub: f.sub}},
	}
	s, ss := openOneShard(t, f.o)
	defer s.Close()
	apply(t, ss, []engine.StoreOp{
		{Kind: engine.OpAddSub, Sub: engine.DurableSub{Key: f.sub, Destination: f.tp}},
		{Kind: engine.OpAdd, Dest: f.q, Seq: 1, Msg: textMsg(f.q, 1, "queued")},
		{Kind: engine.OpAdd, Dest: f.tp, Seq: 1, Msg: textMsg(f.tp, 1, "published"), Subs: []engine.SubKey{f.sub}},
		{Kind: engine.OpPrepare, Tx: f.tx},
	})
	return f
}

func apply(t *testing.T, ss engine.ShardStore, ops []engine.StoreOp) {
	t.Helper()
	if err := ss.Apply(ops); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func (f *xaFixture) conn(t *testing.T) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), f.o.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// decodeXIDColumn reads an XID column as ActiveMQ's XATransactionId(byte[])
// does: flag, lastAck (bytes 1..8), then formatId, global id, branch.
func decodeXIDColumn(t *testing.T, s string) (byte, int64, engine.XID) {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < 16 {
		t.Fatalf("XID column %q: %v (%d bytes)", s, err, len(b))
	}
	n := int(binary.BigEndian.Uint16(b[14:]))
	return b[0], int64(binary.BigEndian.Uint64(b[1:])), engine.XID{FormatID: int32(binary.BigEndian.Uint32(b[10:])), GlobalID: b[16 : 16+n], Branch: b[16+n:]}
}

func sameXID(a, b engine.XID) bool {
	return a.FormatID == b.FormatID && bytes.Equal(a.GlobalID, b.GlobalID) && bytes.Equal(a.Branch, b.Branch)
}

// recoveredTxs recovers the shard of o and returns its prepared
// transactions and its pending messages' bodies.
func recoveredTxs(t *testing.T, o jdbc.Options) ([]*engine.PreparedTx, []string) {
	t.Helper()
	s, ss := openOneShard(t, o)
	defer s.Close()
	var txs []*engine.PreparedTx
	var bodies []string
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Tx != nil {
			txs = append(txs, it.Tx)
		}
		if it.Msg != nil {
			bodies = append(bodies, string(it.Msg.Body))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return txs, bodies
}

// TestJDBCXAPreparedRowsAsActiveMQ: a prepare writes ActiveMQ's rows of
// the transaction (the sends as ACTIVEMQ_MSGS rows flagged '+' whose
// frame carries the XATransactionId, the queue ack as its row flagged
// '-', the durable ack as the subscription's ACTIVEMQ_ACKS XID with the
// ID acknowledged up to); the transaction survives a reopen with its
// sends and acks; its commit removes every flag and flagged send.
func TestJDBCXAPreparedRowsAsActiveMQ(t *testing.T) {
	f := newXAFixture(t)
	c := f.conn(t)
	ctx := context.Background()
	rows, err := c.Query(ctx, "SELECT ID, XID, MSG FROM ACTIVEMQ_MSGS WHERE XID IS NOT NULL ORDER BY ID")
	if err != nil {
		t.Fatal(err)
	}
	var plus, minus int
	for rows.Next() {
		var id int64
		var x string
		var msg []byte
		if err := rows.Scan(&id, &x, &msg); err != nil {
			t.Fatal(err)
		}
		flag, _, xid := decodeXIDColumn(t, x)
		if !sameXID(xid, f.tx.XID) {
			t.Errorf("row %d: XID %v, want %v", id, xid, f.tx.XID)
		}
		ds, err := wire.Unmarshal(msg, wire.StoreFormat(), wire.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		w := ds.(*wire.Message)
		switch flag {
		case '+':
			plus++
			xt, ok := w.TransactionId.(*wire.XATransactionId)
			if !ok || !sameXID(engine.XID{FormatID: xt.FormatId, GlobalID: xt.GlobalTransactionId, Branch: xt.BranchQualifier}, f.tx.XID) {
				t.Errorf("pending send %d: TransactionId %#v, want the XID (ActiveMQ's recoverAdd reads it)", id, w.TransactionId)
			}
		case '-':
			minus++
			if w.Destination.PhysicalName != f.q.Name {
				t.Errorf("acked row %d on %s", id, w.Destination.PhysicalName)
			}
		default:
			t.Errorf("row %d: flag %q", id, flag)
		}
	}
	rows.Close()
	if plus != 2 || minus != 1 {
		t.Errorf("flagged rows: %d sends, %d acks; want 2 and 1", plus, minus)
	}
	var ax string
	var topicID int64
	if err := c.QueryRow(ctx, "SELECT a.XID, (SELECT ID FROM ACTIVEMQ_MSGS WHERE CONTAINER='topic://xa.t') FROM ACTIVEMQ_ACKS a WHERE CLIENT_ID='c' AND SUB_NAME='s'").Scan(&ax, &topicID); err != nil {
		t.Fatal(err)
	}
	if _, last, xid := decodeXIDColumn(t, ax); !sameXID(xid, f.tx.XID) || last != topicID {
		t.Errorf("ACTIVEMQ_ACKS XID: %v up to %d, want %v up to %d", xid, last, f.tx.XID, topicID)
	}

	txs, bodies := recoveredTxs(t, f.o)
	if len(txs) != 1 || len(txs[0].Adds) != 2 || len(txs[0].Acks) != 2 || !sameXID(txs[0].XID, f.tx.XID) {
		t.Fatalf("recovered transactions %+v, want the prepared one", txs)
	}
	if len(bodies) != 2 {
		t.Errorf("pending messages %q: want the queued and the published (acked in doubt)", bodies)
	}

	s, ss := openOneShard(t, f.o)
	apply(t, ss, []engine.StoreOp{
		{Kind: engine.OpCommit, Tx: &engine.PreparedTx{XID: f.tx.XID}},
		{Kind: engine.OpAdd, Dest: f.q, Seq: 2, Msg: f.tx.Adds[0]},
		{Kind: engine.OpAdd, Dest: f.q, Seq: 3, Msg: f.tx.Adds[1]},
		{Kind: engine.OpRemove, Dest: f.q, Seq: 1},
		{Kind: engine.OpAck, Dest: f.tp, Seq: 1, Sub: engine.DurableSub{Key: f.sub}},
	})
	s.Close()
	var flagged, msgs int
	if err := c.QueryRow(ctx, "SELECT (SELECT COUNT(*) FROM ACTIVEMQ_MSGS WHERE XID IS NOT NULL) + (SELECT COUNT(*) FROM ACTIVEMQ_ACKS WHERE XID IS NOT NULL), (SELECT COUNT(*) FROM ACTIVEMQ_MSGS)").Scan(&flagged, &msgs); err != nil {
		t.Fatal(err)
	}
	if flagged != 0 || msgs != 2 {
		t.Errorf("after the commit: %d flagged rows, %d messages; want 0 and 2 (the committed sends)", flagged, msgs)
	}
	if txs, bodies := recoveredTxs(t, f.o); len(txs) != 0 || len(bodies) != 2 || bodies[0] != "tx send 1" {
		t.Errorf("after the commit: transactions %v, messages %q; want none and the two sends", txs, bodies)
	}
}

// TestJDBCXAAdoptedFromRows: a transaction known only from ActiveMQ's
// rows (Wharf's own record deleted, as on a database ActiveMQ prepared
// it in) is adopted when the shard opens, with its sends and acks; a
// transaction whose rows ActiveMQ finished (commit: the send's flag
// cleared and renumbered, the acked row deleted, the durable row's flag
// cleared) is forgotten, its send adopted as a message.
func TestJDBCXAAdoptedFromRows(t *testing.T) {
	ctx := context.Background()
	t.Run("prepared", func(t *testing.T) {
		f := newXAFixture(t)
		c := f.conn(t)
		if _, err := c.Exec(ctx, "DELETE FROM WHARF_TXS"); err != nil {
			t.Fatal(err)
		}
		txs, _ := recoveredTxs(t, f.o)
		if len(txs) != 1 || !sameXID(txs[0].XID, f.tx.XID) {
			t.Fatalf("recovered %+v, want the transaction of ActiveMQ's rows", txs)
		}
		got := txs[0]
		if len(got.Adds) != 2 || string(got.Adds[0].Body) != "tx send 1" || string(got.Adds[1].Body) != "tx send 2" || got.Adds[0].Destination != f.q {
			t.Errorf("adopted sends %+v", got.Adds)
		}
		wantAcks := []engine.TxAck{{Dest: f.q, Seq: 1}, {Dest: f.tp, Seq: 1, Sub: f.sub}}
		if len(got.Acks) != 2 || got.Acks[0] != wantAcks[0] || got.Acks[1] != wantAcks[1] {
			t.Errorf("adopted acks %+v, want %+v", got.Acks, wantAcks)
		}
		// Adopted once: a second open finds Wharf's record.
		if txs, _ := recoveredTxs(t, f.o); len(txs) != 1 {
			t.Errorf("second open: %d transactions, want 1", len(txs))
		}
	})
	t.Run("finished by ActiveMQ", func(t *testing.T) {
		f := newXAFixture(t)
		c := f.conn(t)
		for _, q := range []string{
			// JdbcMemoryTransactionStore's commit, as DefaultJDBCAdapter runs it.
			"UPDATE ACTIVEMQ_MSGS SET XID = NULL, ID = ID + 1000 WHERE XID LIKE 'K%'",
			"DELETE FROM ACTIVEMQ_MSGS WHERE XID LIKE 'L%'",
			"UPDATE ACTIVEMQ_ACKS SET LAST_ACKED_ID = (SELECT MAX(ID) FROM ACTIVEMQ_MSGS WHERE CONTAINER='topic://xa.t'), XID = NULL",
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		txs, bodies := recoveredTxs(t, f.o)
		if len(txs) != 0 {
			t.Errorf("recovered %d transactions, want none (ActiveMQ committed it)", len(txs))
		}
		if len(bodies) != 2 || bodies[0] != "tx send 1" || bodies[1] != "tx send 2" {
			t.Errorf("pending messages %q, want the two committed sends", bodies)
		}
	})
}
