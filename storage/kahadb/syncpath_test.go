package kahadb_test

import (
	"bytes"
	"fmt"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

// TestKahaDBAddRecordsSharedBuffer: the add records of a batch share one
// buffer that the next batch reuses (and a batch bigger than the last
// grows); every add written is still the record a fresh encoding makes of
// its message, byte for byte, after later batches reused the buffer.
func TestKahaDBAddRecordsSharedBuffer(t *testing.T) {
	dir := t.TempDir()
	st, ss := openOneShard(t, kahadb.Options{Dir: dir})
	q := message.QueueDest("shared.buffer")
	var sent []*message.Message
	seq := uint64(0)
	// Small, then large (the buffer grows mid-batch), then small again
	// (the buffer of the large one is reused), each body its own bytes.
	for bi, shape := range []struct{ n, size int }{{3, 100}, {40, 5000}, {5, 10}, {2, 70000}, {7, 1}} {
		var ops []engine.StoreOp
		for i := range shape.n {
			seq++
			body := bytes.Repeat([]byte{byte('a' + (bi*7+i)%26)}, shape.size)
			m := &message.Message{ID: fmt.Sprintf("ID:shared-1:1:%d:%d", bi, i), Destination: q, Persistent: true,
				Priority: 4, BodyType: message.BytesBody, Body: body}
			sent = append(sent, m)
			ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: m})
		}
		if err := ss.Apply(ops); err != nil {
			t.Fatal(err)
		}
	}
	ss.Close()
	st.Close()

	j, err := journal.Open(journal.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var adds []*command.AddMessage
	var raw [][]byte
	if err := j.Replay(journal.Location{}, func(_ journal.Location, p []byte) error {
		p = bytes.Clone(p) // Replay's buffer is reused; Decode does not copy
		c, err := command.Decode(p)
		if err != nil {
			return err
		}
		if a, ok := c.(*command.AddMessage); ok {
			adds = append(adds, a)
			raw = append(raw, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(adds) != len(sent) {
		t.Fatalf("%d add records in the journal, want %d", len(adds), len(sent))
	}
	for i, m := range sent {
		want, err := kahadb.MarshalForTest(m)
		if err != nil {
			t.Fatal(err)
		}
		a := adds[i]
		if a.MessageID != m.ID || !bytes.Equal(a.Message, want) {
			t.Fatalf("add record %d: id %q, %d message bytes; want %q and the %d bytes of its fresh marshalling", i, a.MessageID, len(a.Message), m.ID, len(want))
		}
		if enc := command.Encode(nil, a); !bytes.Equal(enc, raw[i]) {
			t.Fatalf("add record %d (%s) differs from a fresh encoding of the same command", i, m.ID)
		}
	}
}
