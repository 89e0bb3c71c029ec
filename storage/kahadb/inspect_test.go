package kahadb_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

func TestKahaDBInspect(t *testing.T) {
	dir := t.TempDir()
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("orders")
	var ops []engine.StoreOp
	for i := 1; i <= 3; i++ {
		m := &message.Message{ID: "ID:x-1:1:1:" + string(rune('0'+i)), Destination: q, Persistent: true, BodyType: message.TextBody, Body: []byte("hi")}
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: m})
	}
	if err := ss.Apply(ops); err != nil {
		t.Fatal(err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 2}}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r, err := kahadb.Inspect(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Messages != 2 || len(r.Pins) != 1 || r.Pins[0].Messages["queue://orders"] != 2 || len(r.Damage) != 0 {
		t.Fatalf("report %+v, want 2 pending messages of queue://orders pinning db-1.log", r)
	}
	// A torn tail is reported, and the directory is not changed.
	p := filepath.Join(dir, "db-1.log")
	fi, _ := os.Stat(p)
	if err := os.Truncate(p, fi.Size()-20); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	r, err = kahadb.Inspect(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	if len(r.Damage) == 0 || string(before) != string(after) {
		t.Fatalf("torn tail: damage %v, file changed %v", r.Damage, string(before) != string(after))
	}
}
