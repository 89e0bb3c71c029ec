package records

import (
	"bytes"
	"errors"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

func TestRecordsTxRoundTripAndCorruption(t *testing.T) {
	q := message.Destination{Type: message.Queue, Name: "orders"}
	m := &message.Message{ID: "ID:p-1:1:1:1", Destination: q, Persistent: true, Body: []byte("hello")}
	m.RedeliveryCounter = 3
	tx := &engine.PreparedTx{
		XID:  engine.XID{FormatID: 7, GlobalID: []byte("g1"), Branch: []byte("b1")},
		Adds: []*message.Message{m},
		Acks: []engine.TxAck{{Dest: q, Seq: 42, Sub: engine.SubKey{ClientID: "c", Name: "s"}}},
	}
	b, err := EncodeTx(tx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeTx(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.XID.FormatID != 7 || !bytes.Equal(got.XID.GlobalID, []byte("g1")) || !bytes.Equal(got.XID.Branch, []byte("b1")) {
		t.Fatalf("xid %+v", got.XID)
	}
	if len(got.Adds) != 1 || got.Adds[0].ID != m.ID || got.Adds[0].RedeliveryCounter != 3 || got.Adds[0].Destination != q {
		t.Fatalf("adds %+v", got.Adds)
	}
	if len(got.Acks) != 1 || got.Acks[0] != tx.Acks[0] {
		t.Fatalf("acks %+v", got.Acks)
	}
	// Every truncation is an ErrCorrupt, never a panic or a partial tx.
	for n := range len(b) {
		if _, err := DecodeTx(b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated at %d of %d: %v", n, len(b), err)
		}
	}
}
