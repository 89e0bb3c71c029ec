package kahadb

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// rewriteIndex decodes dir's index, lets edit change it, and writes it
// again (a valid file: framing and checksum match).
func rewriteIndex(t *testing.T, dir string, edit func(*decodedIndex)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, indexFile))
	if err != nil {
		t.Fatal(err)
	}
	x, err := decodeIndex(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(x)
	s := &indexSnapshot{head: x.at, lastRec: x.lastRec, lastCRC: x.lastCRC, jobs: x.jobs, txs: x.txs}
	for d, seq := range x.nextSeq {
		s.nextSeq = append(s.nextSeq, indexSeq{d, seq})
	}
	for _, sub := range x.subs {
		s.subs = append(s.subs, indexSubEntry{sub.sub, sub.file})
	}
	for _, m := range x.msgs {
		if len(s.dests) == 0 || s.dests[len(s.dests)-1].d != m.d {
			s.dests = append(s.dests, indexDest{d: m.d, from: len(s.entries)})
		}
		s.entries = append(s.entries, indexEntry{seq: m.seq, id: m.id, loc: m.loc, counter: m.counter, subs: m.subs,
			prio: m.prio, exp: m.exp, size: m.size, older: m.older})
		s.dests[len(s.dests)-1].to = len(s.entries)
	}
	if _, _, err := s.write(dir, false); err != nil {
		t.Fatal(err)
	}
}

// An index whose prepared transaction does not match the journal (a
// record at its location that is not the one it names) is not used: the
// journal alone brings the transaction back.
func TestKahaDBIndexPreparedMismatch(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*indexTx)
		fromIndex int
	}{
		{"unchanged", func(*indexTx) {}, 1},
		{"add location at the prepare record", func(x *indexTx) { x.recs[0].loc = x.prepLoc }, 0},
		{"prepare location at an add record", func(x *indexTx) { x.prepLoc = x.recs[0].loc }, 0},
		{"other XID", func(x *indexTx) { x.xid.FormatID++ }, 0},
		{"other message id", func(x *indexTx) { x.recs[0].id += "x" }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := Options{Dir: dir, CheckpointInterval: time.Hour}
			st, err := Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			ss, err := st.OpenShard(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			q := message.QueueDest("xi.q")
			x := engine.XID{FormatID: 3, GlobalID: []byte("xi")}
			if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: &message.Message{
				ID: "ID:xi-1:1:1:1", Destination: q, Persistent: true, BodyType: message.TextBody, Body: []byte("a")}}}); err != nil {
				t.Fatal(err)
			}
			if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{XID: x,
				Adds: []*message.Message{{ID: "ID:xi-1:1:1:2", Destination: q, Persistent: true, BodyType: message.TextBody, Body: []byte("b")}},
				Acks: []engine.TxAck{{Dest: q, Seq: 1}},
			}}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
			rewriteIndex(t, dir, func(d *decodedIndex) {
				if len(d.txs) != 1 {
					t.Fatalf("index holds %d prepared transactions, want 1", len(d.txs))
				}
				tc.edit(&d.txs[0])
			})
			st, err = Open(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ss, err = st.OpenShard(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			if r := st.Recovery(); r.FromIndex != tc.fromIndex {
				t.Fatalf("recovery %+v, want FromIndex %d", r, tc.fromIndex)
			}
			var txs []*engine.PreparedTx
			msgs := 0
			if err := ss.Recover(func(it engine.RecoveredItem) error {
				if it.Tx != nil {
					txs = append(txs, it.Tx)
				} else if it.Msg != nil {
					msgs++
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if msgs != 1 || len(txs) != 1 || txs[0].XID.String() != x.String() || len(txs[0].Adds) != 1 ||
				string(txs[0].Adds[0].Body) != "b" || len(txs[0].Acks) != 1 || txs[0].Acks[0] != (engine.TxAck{Dest: q, Seq: 1}) {
				t.Fatalf("recovered %d messages and transactions %+v, want 1 and %s adding b, acking seq 1", msgs, txs, x)
			}
		})
	}
}
