package lsm_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/lsm"
	"wharf/storage/storetest"
)

// testOptions keep badger small: tests open many databases at once.
func testOptions(dir string) lsm.Options {
	return lsm.Options{Dir: dir, MemTableSize: 8 << 20, ValueLogFileSize: 4 << 20, BlockCacheSize: 1 << 20, MinFreeDisk: -1}
}

func open(t testing.TB, o lsm.Options) *lsm.Store {
	t.Helper()
	s, err := lsm.Open(o)
	if err != nil {
		t.Fatalf("lsm.Open(%s): got error %v, want nil", o.Dir, err)
	}
	return s
}

func TestStoreLSM(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store { return open(t, testOptions(dir)) }
	})
}

func openOneShard(t testing.TB, o lsm.Options) (*lsm.Store, engine.ShardStore) {
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
	return &message.Message{ID: fmt.Sprintf("ID:lsm-test-1:1:1:%d", seq), Destination: d, Persistent: true,
		Priority: 4, BodyType: message.TextBody, Body: []byte(body)}
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

func TestLSMInvalidOps(t *testing.T) {
	_, ss := openOneShard(t, testOptions(t.TempDir()))
	defer ss.Close()
	q := message.QueueDest("q")
	ops := []engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: textMsg(q, 1, "m")}, {Kind: engine.OpAck, Dest: q, Seq: 1}}
	if err := ss.Apply(ops); !errors.Is(err, lsm.ErrInvalidOp) {
		t.Fatalf("Apply(add, ack on a queue): got error %v, want %v", err, lsm.ErrInvalidOp)
	}
	if seqs := recoveredSeqs(t, ss); len(seqs) != 0 {
		t.Fatalf("recovered after a rejected batch: got %v, want none", seqs)
	}
}

// A shard count other than the one a directory was written with is
// refused, naming both.
func TestLSMShardCountChange(t *testing.T) {
	dir := t.TempDir()
	s := open(t, testOptions(dir))
	for i := range 2 {
		ss, err := s.OpenShard(i, 2)
		if err != nil {
			t.Fatal(err)
		}
		ss.Close()
	}
	s.Close()
	s = open(t, testOptions(dir))
	defer s.Close()
	if _, err := s.OpenShard(0, 3); !errors.Is(err, lsm.ErrShardCount) {
		t.Fatalf("OpenShard(0, 3) of a 2-shard directory: got error %v, want %v", err, lsm.ErrShardCount)
	}
	if _, err := s.OpenShard(0, 1); !errors.Is(err, lsm.ErrShardCount) {
		t.Fatalf("OpenShard(0, 1) of a 2-shard directory: got error %v, want %v", err, lsm.ErrShardCount)
	}
}

// A batch larger than one badger transaction fails whole, with an error
// naming the setting to raise, and the store stays usable.
func TestLSMBatchTooBig(t *testing.T) {
	o := testOptions(t.TempDir())
	o.MemTableSize = 1 << 20
	_, ss := openOneShard(t, o)
	defer ss.Close()
	q := message.QueueDest("q")
	err := ss.Apply(addOps(q, 1, 2000, 100))
	if !errors.Is(err, lsm.ErrBatchTooBig) || !strings.Contains(err.Error(), "memTableSize") {
		t.Fatalf("Apply of 2000 adds with a 1 MiB memtable: got error %v, want %v naming memTableSize", err, lsm.ErrBatchTooBig)
	}
	if seqs := recoveredSeqs(t, ss); len(seqs) != 0 {
		t.Fatalf("recovered after a refused batch: got %d messages, want none", len(seqs))
	}
	if err := ss.Apply(addOps(q, 1, 10, 100)); err != nil {
		t.Fatalf("Apply after a refused batch: got error %v, want nil", err)
	}
}

// ApplyNoSync writes without a sync; both it and the synced batch after it
// survive a restart; Syncs follows syncWrites.
func TestLSMApplyNoSync(t *testing.T) {
	o := testOptions(t.TempDir())
	o.SyncWrites = true
	s, ss := openOneShard(t, o)
	if !ss.(engine.Syncer).Syncs() {
		t.Fatalf("Syncs with syncWrites: got false, want true")
	}
	q := message.QueueDest("q")
	if err := ss.Apply(addOps(q, 1, 3, 10)); err != nil {
		t.Fatal(err)
	}
	if err := ss.(engine.NoSyncApplier).ApplyNoSync([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 1}}); err != nil {
		t.Fatal(err)
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

// A message record that does not decode (a crash of the machine between
// badger's log sync and its value log sync can leave one for a batch
// nobody was told was stored) is skipped with a warning and deleted; the
// others are recovered.
func TestLSMUnreadableRecordSkipped(t *testing.T) {
	o := testOptions(t.TempDir())
	s, ss := openOneShard(t, o)
	q := message.QueueDest("q")
	if err := ss.Apply(addOps(q, 1, 3, 10)); err != nil {
		t.Fatal(err)
	}
	// The queue is the shard's first destination: id 1.
	if err := lsm.PutMessageRecord(ss, 1, 4, []byte{1, 0, 0, 0, 0, 0xde, 0xad}); err != nil {
		t.Fatal(err)
	}
	ss.Close()
	s.Close()
	s, ss = openOneShard(t, o)
	defer s.Close()
	if got := recoveredSeqs(t, ss); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Fatalf("recovered %v, want [1 2 3] (the damaged 4 skipped)", got)
	}
	if n := lsm.KeyCount(ss, 'M'); n != 3 {
		t.Fatalf("message keys after Recover: got %d, want 3 (the damaged one deleted)", n)
	}
}

// A shard's database is locked while open: a second broker on the same
// directory is refused with an error naming it (badger's directory lock;
// it does not wait as KahaDB's lock does).
func TestLSMDirectoryLocked(t *testing.T) {
	o := testOptions(t.TempDir())
	_, ss := openOneShard(t, o)
	defer ss.Close()
	s2 := open(t, o)
	defer s2.Close()
	if _, err := s2.OpenShard(0, 1); err == nil || !strings.Contains(err.Error(), o.Dir) || !strings.Contains(err.Error(), "lock") {
		t.Fatalf("OpenShard of a directory another store has open: got error %v, want one naming %s and its lock", err, o.Dir)
	}
}
