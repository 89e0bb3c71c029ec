package kahadb_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
	"weak"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/storetest"
)

func TestStoreKahaDB(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store {
			s, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, EnableJournalDiskSyncs: false, JournalMaxFileLength: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	})
}

// ApplyNoSync writes without an fsync; the next Apply syncs it along, and
// both survive a restart.
func TestKahaDBApplyNoSync(t *testing.T) {
	dir := t.TempDir()
	open := func() (*kahadb.Store, engine.ShardStore) {
		return openOneShard(t, kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
	}
	st, ss := open()
	ns, ok := ss.(engine.NoSyncApplier)
	if !ok {
		t.Fatalf("%T does not implement engine.NoSyncApplier", ss)
	}
	q := message.QueueDest("q")
	add := func(seq uint64) engine.StoreOp {
		return engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
			ID: fmt.Sprintf("ID:nosync-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4, BodyType: message.TextBody, Body: []byte("m")}}
	}
	syncs := func() uint64 { return st.Stats().Syncs }
	before := syncs()
	if err := ss.Apply([]engine.StoreOp{add(1), add(2), add(3)}); err != nil {
		t.Fatal(err)
	}
	if got := syncs() - before; got != 1 {
		t.Fatalf("Apply: %d fsyncs, want 1", got)
	}
	before = syncs()
	if err := ns.ApplyNoSync([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 1}}); err != nil {
		t.Fatal(err)
	}
	if got := syncs() - before; got != 0 {
		t.Fatalf("ApplyNoSync: %d fsyncs, want 0", got)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, ss = open()
	defer st.Close()
	if seqs := recoveredSeqs(t, ss); len(seqs) != 1 || seqs[0] != 3 {
		t.Fatalf("recovered %v, want [3]", seqs)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
}

// recoveredSeqs lists the sequences of the messages ss recovers.
func recoveredSeqs(t *testing.T, ss engine.ShardStore) []uint64 {
	t.Helper()
	var seqs []uint64
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil {
			seqs = append(seqs, it.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return seqs
}

// journalDiskSyncStrategy="periodic": batches are acknowledged unsynced
// (the engine applies them inline: Syncs is false), and the journal is
// synced once the interval has passed, by the next Apply or by Housekeep
// when the shard is idle — once for everything written meanwhile.
func TestKahaDBPeriodicSync(t *testing.T) {
	dir := t.TempDir()
	st, ss := openOneShard(t, kahadb.Options{Dir: dir, JournalDiskSyncInterval: time.Second, CheckpointInterval: -1})
	defer st.Close()
	if ss.(engine.Syncer).Syncs() {
		t.Fatal("periodic strategy: Syncs() = true, want sends acknowledged after the write")
	}
	hk, ok := ss.(engine.Housekeeper)
	if !ok {
		t.Fatalf("%T does not implement engine.Housekeeper", ss)
	}
	q := message.QueueDest("q")
	add := func(seq uint64) {
		t.Helper()
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
			ID: fmt.Sprintf("ID:periodic-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4, BodyType: message.TextBody, Body: []byte("m")}}}); err != nil {
			t.Fatal(err)
		}
	}
	syncs := func() uint64 { return st.Stats().Syncs }
	before := syncs()
	add(1)
	add(2)
	if err := hk.Housekeep(); err != nil {
		t.Fatal(err)
	}
	if got := syncs() - before; got != 0 {
		t.Fatalf("within the interval: %d fsyncs, want 0", got)
	}
	kahadb.AgeSyncForTest(ss, time.Second)
	if err := hk.Housekeep(); err != nil {
		t.Fatal(err)
	}
	if got := syncs() - before; got != 1 {
		t.Fatalf("idle after the interval: %d fsyncs, want 1 for both batches", got)
	}
	before = syncs()
	add(3)
	kahadb.AgeSyncForTest(ss, time.Second)
	add(4)
	if got := syncs() - before; got != 1 {
		t.Fatalf("a write after the interval: %d fsyncs, want 1", got)
	}
	before = syncs()
	kahadb.AgeSyncForTest(ss, time.Second)
	if err := hk.Housekeep(); err != nil {
		t.Fatal(err)
	}
	if got := syncs() - before; got != 0 {
		t.Fatalf("nothing written since the last sync: %d fsyncs, want 0", got)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
}

// The store keeps no message in memory: once a batch is applied (and
// after a restart, recovered as stubs) the engine's messages are not
// reachable from it; the stubs carry what the engine needs, and each
// loads its message from the journal.
func TestKahaDBKeepsNoMessageInMemory(t *testing.T) {
	dir := t.TempDir()
	open := func() (*kahadb.Store, engine.ShardStore) { return openOneShard(t, kahadb.Options{Dir: dir}) }
	st, ss := open()
	q := message.QueueDest("nobody.q")
	var refs []weak.Pointer[message.Message]
	var ops []engine.StoreOp
	for i := 1; i <= 100; i++ {
		m := &message.Message{ID: fmt.Sprintf("ID:nobody-1:1:1:%d", i), Destination: q, Persistent: true, Priority: uint8(i % 10),
			Expiration: int64(i), BodyType: message.BytesBody, Body: bytes.Repeat([]byte{byte(i)}, 4096)}
		refs = append(refs, weak.Make(m))
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: m})
	}
	if err := ss.Apply(ops); err != nil {
		t.Fatal(err)
	}
	clear(ops)
	runtime.GC()
	for i, r := range refs {
		if r.Value() != nil {
			t.Fatalf("message %d still reachable after Apply: the store keeps it in memory", i+1)
		}
	}
	st.Close()
	st, ss = open()
	defer st.Close()
	ld := ss.(engine.MessageLoader)
	n := 0
	err := ld.RecoverStubs(func(it engine.RecoveredItem) error {
		if it.Created {
			return nil
		}
		n++
		i := int(it.Seq)
		if it.Msg != nil || it.Ref.Len == 0 || it.Priority != uint8(i%10) || it.Expiration != int64(i) || it.Size < 4096 {
			return fmt.Errorf("seq %d: got msg %v, ref %+v, priority %d, expiration %d, size %d; want a stub with priority %d, expiration %d, size >= 4096",
				i, it.Msg != nil, it.Ref, it.Priority, it.Expiration, it.Size, i%10, i)
		}
		m, err := ld.LoadMessage(it.Ref)
		if err != nil {
			return err
		}
		if m.ID != fmt.Sprintf("ID:nobody-1:1:1:%d", i) || !bytes.Equal(m.Body, bytes.Repeat([]byte{byte(i)}, 4096)) || m.Destination != q {
			return fmt.Errorf("seq %d loaded %s on %s with %d bytes", i, m.ID, m.Destination, len(m.Body))
		}
		return nil
	})
	if err != nil || n != 100 {
		t.Fatalf("RecoverStubs: %d items, %v; want 100 stubs", n, err)
	}
}

// openOneShard opens a one-shard KahaDB store with o and its shard.
func openOneShard(t *testing.T, o kahadb.Options) (*kahadb.Store, engine.ShardStore) {
	t.Helper()
	st, err := kahadb.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		st.Close()
		t.Fatal(err)
	}
	return st, ss
}
