package kahadb

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// FuzzKahaDBIndex: decoding any index file returns an error or an index
// whose sizes the file's length bounds; it never panics. The seed is a real
// index; inputs are re-framed with a valid checksum half of the time so that
// the body decoder, not just the checksum, is exercised.
func FuzzKahaDBIndex(f *testing.F) {
	dir := f.TempDir()
	st, err := Open(context.Background(), Options{Dir: dir, CheckpointInterval: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		f.Fatal(err)
	}
	top := message.TopicDest("t")
	sub := engine.DurableSub{Key: engine.SubKey{ClientID: "c", Name: "s"}, Destination: top, Selector: "a = 1"}
	// Destinations: one created empty, and those the messages are on.
	ops := []engine.StoreOp{{Kind: engine.OpAddDest, Dest: message.QueueDest("empty")}, {Kind: engine.OpAddSub, Dest: top, Sub: sub}}
	for i := 1; i <= 3; i++ {
		q := message.QueueDest("q")
		ops = append(ops,
			engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: &message.Message{ID: fmt.Sprintf("ID:f-1:1:1:%d", i), Destination: q, BodyType: message.TextBody, Body: []byte("x")}},
			engine.StoreOp{Kind: engine.OpAdd, Dest: top, Seq: uint64(i), Msg: &message.Message{ID: fmt.Sprintf("ID:f-2:1:1:%d", i), Destination: top, BodyType: message.TextBody, Body: []byte("y")}, Subs: []engine.SubKey{sub.Key}},
			engine.StoreOp{Kind: engine.OpAddJob, Job: &engine.Job{ID: fmt.Sprintf("j%d", i), Msg: &message.Message{ID: "ID:f-3:1:1:1", Destination: q}, Next: 5}})
	}
	if err := ss.Apply(ops); err != nil {
		f.Fatal(err)
	}
	// A prepared transaction: a queue send, a queue ack and a durable
	// subscription's ack.
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: &engine.PreparedTx{
		XID:  engine.XID{FormatID: 7, GlobalID: []byte("g"), Branch: []byte("b")},
		Adds: []*message.Message{{ID: "ID:f-4:1:1:1", Destination: message.QueueDest("q"), Persistent: true, BodyType: message.TextBody, Body: []byte("z")}},
		Acks: []engine.TxAck{{Dest: message.QueueDest("q"), Seq: 1}, {Dest: top, Seq: 1, Sub: sub.Key}},
	}}}); err != nil {
		f.Fatal(err)
	}
	if err := st.Close(); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(filepath.Join(dir, indexFile))
	if err != nil {
		f.Fatal(err)
	}
	if x, err := decodeIndex(seed); err != nil {
		f.Fatalf("seed index: %v", err)
	} else if len(x.txs) != 1 || len(x.txs[0].recs) != 3 || len(x.txs[0].acks) != 2 {
		f.Fatalf("seed index: prepared transactions %+v, want one with 3 records and 2 acks", x.txs)
	} else if len(x.known) != 3 {
		f.Fatalf("seed index: destinations %v, want 3", x.known)
	}
	f.Add(seed, false)
	f.Add(seed[:len(seed)/2], true)
	f.Add([]byte(indexMagic), false)
	f.Fuzz(func(t *testing.T, b []byte, reframe bool) {
		if reframe && len(b) >= indexHeadSize {
			// A valid header and checksum around whatever body.
			b = append([]byte(nil), b...)
			copy(b, indexMagic)
			binary.BigEndian.PutUint32(b[len(indexMagic):], indexVersion)
			binary.BigEndian.PutUint64(b[len(indexMagic)+4:], uint64(len(b)-indexHeadSize))
			b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
		}
		x, err := decodeIndex(b)
		if err != nil {
			return
		}
		n := len(x.msgs) + len(x.subs) + len(x.jobs) + len(x.nextSeq) + len(x.txs) + len(x.known)
		for _, tx := range x.txs {
			n += len(tx.recs) + len(tx.acks)
		}
		if n > len(b) {
			t.Fatalf("%d entries decoded from %d bytes", n, len(b))
		}
	})
}
