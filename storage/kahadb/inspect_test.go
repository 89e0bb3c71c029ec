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
	st, ss := openOneShard(t, kahadb.Options{Dir: dir})
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

// An idle durable subscription does not keep the journal forever: its record
// is rewritten forward and the old files go (ActiveMQ's rule), while its
// definition survives a restart.
func TestKahaDBIdleSubscriptionDoesNotPinJournal(t *testing.T) {
	dir := t.TempDir()
	open := func() (*kahadb.Store, engine.ShardStore) {
		return openOneShard(t, kahadb.Options{Dir: dir, JournalMaxFileLength: 64 << 10, CleanupInterval: 1})
	}
	st, ss := open()
	tp := message.TopicDest("news")
	key := engine.SubKey{ClientID: "c", Name: "s"}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAddSub, Dest: tp, Sub: engine.DurableSub{Key: key, Destination: tp}}}); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 1024)
	for i := 1; i <= 300; i++ {
		m := &message.Message{ID: "ID:x-1:1:1:" + itoa(i), Destination: tp, Persistent: true, BodyType: message.BytesBody, Body: body}
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: tp, Seq: uint64(i), Msg: m, Subs: []engine.SubKey{key}}}); err != nil {
			t.Fatal(err)
		}
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAck, Dest: tp, Seq: uint64(i), Sub: engine.DurableSub{Key: key}}}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	r, err := kahadb.Inspect(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) > 2 || r.Subscriptions != 1 {
		t.Fatalf("journal files %v, subscriptions %d: want the idle subscription kept in at most 2 files", r.Files, r.Subscriptions)
	}
	_, ss = open()
	subs := 0
	ss.Recover(func(it engine.RecoveredItem) error {
		if it.Sub != nil && it.Sub.Key == key {
			subs++
		}
		return nil
	})
	if subs != 1 {
		t.Fatalf("after restart the subscription is recovered %d times, want 1", subs)
	}
}

// ActiveMQ may store a message frame followed by stale bytes of its
// marshalling buffer; they are ignored, as ActiveMQ's reader ignores them.
func TestKahaDBStoredFrameWithTrailingBytes(t *testing.T) {
	dir := t.TempDir()
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ss, _ := st.OpenShard(0, 1)
	q := message.QueueDest("q")
	m := &message.Message{ID: "ID:x-1:1:1:1", Destination: q, Persistent: true, BodyType: message.TextBody, Body: []byte("hello")}
	// Hand the store an original form with 30 stray bytes after the frame.
	frame, err := kahadb.MarshalForTest(m)
	if err != nil {
		t.Fatal(err)
	}
	m.Original = message.Encoded{Protocol: "openwire", Bytes: append(frame, make([]byte, 30)...)}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: m}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, _ = kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	defer st.Close()
	ss, _ = st.OpenShard(0, 1)
	var got []string
	ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil {
			got = append(got, string(it.Msg.Body))
		}
		return nil
	})
	if len(got) != 1 || got[0] != "hello" {
		t.Fatalf("recovered %q, want the message despite the trailing bytes", got)
	}
}
