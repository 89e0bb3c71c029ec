package kahadb_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

func recoverShard(t *testing.T, ss engine.ShardStore) (msgs map[string]uint64, txs []engine.PreparedTx) {
	t.Helper()
	msgs = map[string]uint64{}
	err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil {
			msgs[string(it.Msg.Body)] = it.Seq
		}
		if it.Tx != nil {
			txs = append(txs, *it.Tx)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return msgs, txs
}

// A journal shaped as ActiveMQ writes an XA transaction (each add and ack
// in its own batch as the client works, then the prepare; another branch
// never prepared) comes back with the prepared transaction in doubt; its
// commit writes a KahaCommitCommand with the same XATransactionId, and
// the state after it survives a restart.
func TestKahaDBReplayActiveMQPreparedXA(t *testing.T) {
	dir := t.TempDir()
	j, err := journal.Open(journal.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	q := command.Destination{Type: command.Queue, Name: "xa.q"}
	add := func(i int, tx *command.TransactionInfo) []byte {
		m := &message.Message{ID: fmt.Sprintf("ID:amq-1:1:1:1:%d", i), Destination: message.QueueDest("xa.q"),
			Persistent: true, BodyType: message.TextBody, Body: fmt.Appendf(nil, "m%d", i)}
		frame, err := kahadb.MarshalForTest(m)
		if err != nil {
			t.Fatal(err)
		}
		return command.Encode(nil, &command.AddMessage{Transaction: tx, Destination: q, MessageID: m.ID, Message: frame, Priority: 4})
	}
	xid := &command.XATransactionID{FormatID: 131077, GlobalTransactionID: []byte{1, 2, 3}, BranchQualifier: []byte{9}}
	x1 := command.TransactionInfo{XATransactionID: xid}
	x2 := command.TransactionInfo{XATransactionID: &command.XATransactionID{FormatID: 1, GlobalTransactionID: []byte{7}}}
	for _, recs := range [][][]byte{
		{add(1, nil), add(2, nil)},
		{add(3, &x1)},
		{add(4, &x2)},
		{command.Encode(nil, &command.RemoveMessage{Transaction: &x1, Destination: q, MessageID: "ID:amq-1:1:1:1:1"})},
		{command.Encode(nil, &command.Prepare{Transaction: x1})},
	} {
		if _, err := j.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	open := func() (*kahadb.Store, engine.ShardStore) {
		return openOneShard(t, kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
	}
	st, ss := open()
	msgs, txs := recoverShard(t, ss)
	if len(msgs) != 2 || msgs["m1"] == 0 || msgs["m2"] == 0 {
		t.Fatalf("recovered messages %v, want m1 and m2 (m1 acked by a prepared transaction only)", msgs)
	}
	if len(txs) != 1 {
		t.Fatalf("recovered %d prepared transactions, want 1 (the unprepared branch is rolled back)", len(txs))
	}
	tx := txs[0]
	wantX := engine.XID{FormatID: 131077, GlobalID: []byte{1, 2, 3}, Branch: []byte{9}}
	if tx.XID.String() != wantX.String() || len(tx.Adds) != 1 || string(tx.Adds[0].Body) != "m3" ||
		len(tx.Acks) != 1 || tx.Acks[0] != (engine.TxAck{Dest: message.QueueDest("xa.q"), Seq: msgs["m1"]}) {
		t.Fatalf("recovered transaction %s adds %d acks %+v, want %s adding m3 and acking m1 (seq %d)", tx.XID, len(tx.Adds), tx.Acks, wantX, msgs["m1"])
	}
	if err := ss.Apply([]engine.StoreOp{
		{Kind: engine.OpCommit, Tx: &engine.PreparedTx{XID: tx.XID}},
		{Kind: engine.OpRemove, Dest: message.QueueDest("xa.q"), Seq: msgs["m1"]},
		{Kind: engine.OpAdd, Dest: message.QueueDest("xa.q"), Seq: 10, Msg: tx.Adds[0]},
	}); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	st.Close()

	// The last user record is ActiveMQ's commit of the same transaction.
	r, err := journal.Open(journal.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	var last command.Command
	if err := r.Replay(journal.Location{}, func(_ journal.Location, p []byte) error {
		c, err := command.Decode(p)
		if err == nil {
			if tr, ok := c.(*command.Trace); !ok || !strings.HasPrefix(tr.Message, "wharf:") {
				last = c
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if c, ok := last.(*command.Commit); !ok || c.Transaction.XATransactionID == nil ||
		engineXID(c.Transaction.XATransactionID) != wantX.String() {
		t.Fatalf("last journal record %#v, want a KahaCommitCommand of %s", last, wantX)
	}

	os.Remove(filepath.Join(dir, "wharf-index.bin")) // a full replay, too
	for range 2 {
		st, ss = open()
		msgs, txs = recoverShard(t, ss)
		if len(txs) != 0 || len(msgs) != 2 || msgs["m2"] == 0 || msgs["m3"] != 10 {
			t.Fatalf("after commit and restart: messages %v, %d transactions; want m2 and m3 (seq 10), none", msgs, len(txs))
		}
		ss.Close()
		st.Close()
	}
}

func engineXID(x *command.XATransactionID) string {
	return engine.XID{FormatID: x.FormatID, GlobalID: x.GlobalTransactionID, Branch: x.BranchQualifier}.String()
}

// Cleanup keeps the journal files holding a prepared transaction's records
// while later traffic fills and frees newer files.
func TestKahaDBPreparedPinsJournalFiles(t *testing.T) {
	dir := t.TempDir()
	o := kahadb.Options{Dir: dir, JournalMaxFileLength: 64 << 10, CleanupInterval: time.Nanosecond}
	st, ss := openOneShard(t, o)
	q := message.QueueDest("pin.q")
	mk := func(i int) *message.Message {
		return &message.Message{ID: fmt.Sprintf("ID:pin-1:1:1:1:%d", i), Destination: q, Persistent: true,
			BodyType: message.BytesBody, Body: make([]byte, 4<<10)}
	}
	x := engine.XID{FormatID: 1, GlobalID: []byte("pin")}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{XID: x, Adds: []*message.Message{mk(0)}}}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 200; i++ { // ~800 KiB through 64 KiB files, each message consumed
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: mk(i)}}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: uint64(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "db-*.log"))
	if len(logs) == 0 {
		logs, _ = filepath.Glob(filepath.Join(dir, "db-*.log"))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(logs[0]), "db-1.log")); err != nil {
		t.Fatalf("db-1.log (the prepared transaction's records) was removed: %v; files %v", err, logs)
	}
	if len(logs) < 5 {
		t.Fatalf("journal files %v: want the traffic to have filled several files", logs)
	}
	ss.Close()
	st.Close()
	st, ss = openOneShard(t, o)
	defer st.Close()
	defer ss.Close()
	msgs, txs := recoverShard(t, ss)
	if len(msgs) != 0 || len(txs) != 1 || txs[0].XID.String() != x.String() || len(txs[0].Adds) != 1 {
		t.Fatalf("after restart: %d messages, transactions %+v; want none and %s with its add", len(msgs), txs, x)
	}
}

// The remove record of a prepared transaction's ack carries, in its ack
// field, the OpenWire MessageAck that ActiveMQ's KahaDBTransactionStore
// unmarshals on recovery (without it ActiveMQ fails to start): the
// destination, the Xid, and a LastMessageId whose producer key is the
// record's messageId.
func TestKahaDBPreparedAckCarriesMessageAck(t *testing.T) {
	dir := t.TempDir()
	st, ss := openOneShard(t, kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
	q := message.QueueDest("xa.ack.q")
	m := &message.Message{ID: "ID:ack-host-4242-1700000000000-1:3:1:1:7", Destination: q, Persistent: true,
		BodyType: message.TextBody, Body: []byte("acked")}
	x := engine.XID{FormatID: 0x57484152, GlobalID: []byte("gtid-1"), Branch: []byte("b1")}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: m}}); err != nil {
		t.Fatal(err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{XID: x, Acks: []engine.TxAck{{Dest: q, Seq: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	st.Close()

	logs, _ := filepath.Glob(filepath.Join(dir, "db-*.log"))
	if len(logs) == 0 {
		t.Fatalf("no journal file in %s", dir)
	}
	r, err := journal.Open(journal.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var removes []*command.RemoveMessage
	if err := r.Replay(journal.Location{}, func(_ journal.Location, p []byte) error {
		c, err := command.Decode(p)
		if err != nil {
			return err
		}
		if rm, ok := c.(*command.RemoveMessage); ok && rm.Transaction != nil {
			rm.Ack = append([]byte(nil), rm.Ack...) // p is the reader's buffer
			removes = append(removes, rm)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(removes) != 1 {
		t.Fatalf("%d transactional remove records, want 1", len(removes))
	}
	rm := removes[0]
	if rm.MessageID != m.ID {
		t.Errorf("remove record messageId %q, want %q", rm.MessageID, m.ID)
	}
	if len(rm.Ack) == 0 {
		t.Fatal("the prepared remove record has no ack: ActiveMQ's recovery would fail on it")
	}
	ds, err := wire.Unmarshal(rm.Ack, wire.StoreFormat(), wire.DefaultLimits())
	if err != nil {
		t.Fatalf("ack field: %v", err)
	}
	ack, ok := ds.(*wire.MessageAck)
	if !ok {
		t.Fatalf("ack field holds a %s, want MessageAck", wire.TypeName(ds.DataStructureType()))
	}
	if ack.Destination == nil || ack.Destination.Kind != wire.TypeActiveMQQueue || ack.Destination.PhysicalName != "xa.ack.q" {
		t.Errorf("ack destination %+v, want queue xa.ack.q", ack.Destination)
	}
	if ack.LastMessageId == nil || ack.LastMessageId.TextView != "" || ack.LastMessageId.String() != m.ID {
		t.Errorf("ack LastMessageId %+v, want the structured id of %q", ack.LastMessageId, m.ID)
	}
	xa, ok := ack.TransactionId.(*wire.XATransactionId)
	if !ok || xa.FormatId != x.FormatID || string(xa.GlobalTransactionId) != "gtid-1" || string(xa.BranchQualifier) != "b1" {
		t.Errorf("ack transaction %#v, want %s", ack.TransactionId, x)
	}
	if ack.AckType != wire.AckStandard || ack.MessageCount != 1 {
		t.Errorf("ack type %d count %d, want STANDARD (2) and 1", ack.AckType, ack.MessageCount)
	}
}
