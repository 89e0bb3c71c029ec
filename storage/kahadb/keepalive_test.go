package kahadb_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/journal"
)

// TestKahaDBLockKeepAlive: with lockKeepAlivePeriod the store checks its
// directory lock; once another broker has modified the lock file (its
// time stamp, as a broker that took the lock writes it), LockLost closes,
// every later write fails with ErrLockLost, and Close writes nothing
// more into the directory (no checkpoint, no cleanup). Without a period
// there is no keep-alive (LockLost is nil).
func TestKahaDBLockKeepAlive(t *testing.T) {
	dir := t.TempDir()
	st, ss := openOneShard(t, kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true, LockKeepAlivePeriod: 5 * time.Millisecond})
	q := message.QueueDest("q")
	add := func(seq uint64) engine.StoreOp {
		return engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
			ID: fmt.Sprintf("ID:keepalive-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4, BodyType: message.TextBody, Body: []byte("m")}}
	}
	if err := ss.Apply([]engine.StoreOp{add(1)}); err != nil {
		t.Fatalf("Apply while the lock is held: %v", err)
	}
	select {
	case <-st.LockLost():
		t.Fatal("LockLost closed while the lock is held")
	default:
	}
	later := time.Now().Add(3 * time.Second)
	if err := os.Chtimes(filepath.Join(dir, journal.LockFileName), later, later); err != nil {
		t.Fatal(err)
	}
	select {
	case <-st.LockLost():
	case <-time.After(10 * time.Second):
		t.Fatal("LockLost not closed 10 s after the lock file was modified")
	}
	if err := ss.Apply([]engine.StoreOp{add(2)}); !errors.Is(err, kahadb.ErrLockLost) {
		t.Fatalf("Apply after the lock was lost: %v, want ErrLockLost", err)
	}
	before := dirState(t, dir)
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("Close after the lock was lost changed the directory:\nbefore %s\nafter  %s", before, after)
	}

	st2, ss2 := openOneShard(t, kahadb.Options{Dir: t.TempDir(), EnableJournalDiskSyncs: true})
	if st2.LockLost() != nil {
		t.Fatal("LockLost without a keep-alive period: want nil")
	}
	ss2.Close()
	st2.Close()
}

// dirState lists every file under dir with its size and modification
// time, but the lock file.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var out string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || fi.Name() == journal.LockFileName {
			return err
		}
		out += fmt.Sprintf("%s:%d:%d ", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
