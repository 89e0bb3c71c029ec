package lsm_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/lsm"
)

func addOps(q message.Destination, from, n int, size int) []engine.StoreOp {
	ops := make([]engine.StoreOp, 0, n)
	for seq := from; seq < from+n; seq++ {
		m := textMsg(q, uint64(seq), "")
		m.BodyType, m.Body = message.BytesBody, bytes.Repeat([]byte{byte(seq)}, size)
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: uint64(seq), Msg: m})
	}
	return ops
}

// Below minFreeDisk a batch that stores something is refused with
// ErrDiskFull, naming the directory and both sizes, and none of it is
// written; a batch that only removes still goes through; once there is
// room again the store takes batches as before.
func TestLSMDiskFullGuard(t *testing.T) {
	var free atomic.Int64
	free.Store(1 << 30)
	o := testOptions(t.TempDir())
	o.MinFreeDisk = 100 << 20
	o.FreeBytes = func(string) int64 { return free.Load() }
	_, ss := openOneShard(t, o)
	defer ss.Close()
	q := message.QueueDest("q")
	if err := ss.Apply(addOps(q, 1, 3, 10)); err != nil {
		t.Fatal(err)
	}
	free.Store(50 << 20)
	err := ss.Apply(addOps(q, 4, 3, 10))
	if !errors.Is(err, lsm.ErrDiskFull) || !strings.Contains(err.Error(), o.Dir) || !strings.Contains(err.Error(), "52428800 bytes free") {
		t.Fatalf("Apply with 50 MiB free of 100 MiB needed: got error %v, want %v naming %s and the free bytes", err, lsm.ErrDiskFull, o.Dir)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 1}}); err != nil {
		t.Fatalf("a batch of removes with 50 MiB free: got error %v, want nil (consumers drain a full store)", err)
	}
	free.Store(10 << 20)
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 2}}); !errors.Is(err, lsm.ErrDiskFull) {
		t.Fatalf("a batch of removes with 10 MiB free: got error %v, want %v (below a quarter of minFreeDisk)", err, lsm.ErrDiskFull)
	}
	free.Store(1 << 30)
	if err := ss.Apply(addOps(q, 4, 1, 10)); err != nil {
		t.Fatalf("Apply once there is room again: got error %v, want nil", err)
	}
	if got, want := recoveredSeqs(t, ss), []uint64{2, 3, 4}; !slices.Equal(got, want) {
		t.Fatalf("recovered %v, want %v", got, want)
	}
}

// On a real file system that fills up (a 48 MiB tmpfs), batches of 1 KiB
// messages are accepted until the free space falls below minFreeDisk,
// then refused with ErrDiskFull (not a crash: badger's mapped files are
// never written on a full disk); the store can still be drained, and
// after a restart on the full disk it holds exactly what was accepted
// and not removed.
func TestLSMDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root or CAP_SYS_ADMIN): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	o := lsm.Options{Dir: filepath.Join(mnt, "lsm"), SyncWrites: true, MemTableSize: 2 << 20, ValueLogFileSize: 2 << 20, BlockCacheSize: 1 << 20}
	s, ss := openOneShard(t, o)
	t.Cleanup(func() { s.Close() }) // before the umount (cleanups run last first)
	q := message.QueueDest("q")
	const batch = 50
	var stored []uint64
	var err error
	for seq := 1; seq < 1_000_000; seq += batch {
		if err = ss.Apply(addOps(q, seq, batch, 1024)); err != nil {
			break
		}
		for i := range batch {
			stored = append(stored, uint64(seq+i))
		}
	}
	if !errors.Is(err, lsm.ErrDiskFull) || !strings.Contains(err.Error(), o.Dir) {
		t.Fatalf("filling a 48 MiB file system: got error %v, want %v naming %s", err, lsm.ErrDiskFull, o.Dir)
	}
	if len(stored) < 10_000 {
		t.Fatalf("stored %d messages of 1 KiB before the disk was full, want at least 10000 on 48 MiB", len(stored))
	}
	t.Logf("%d messages stored before: %v", len(stored), err)
	logTree := func(when string) {
		var n int64
		filepath.WalkDir(o.Dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
		t.Logf("%s: %d bytes (apparent size) in %s", when, n, o.Dir)
	}
	logTree("full")
	// Drain the oldest half.
	half := len(stored) / 2
	var rm []engine.StoreOp
	for _, seq := range stored[:half] {
		rm = append(rm, engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: seq})
		if len(rm) == 500 {
			if err := ss.Apply(rm); err != nil {
				t.Fatalf("draining a full store: got error %v, want nil", err)
			}
			rm = rm[:0]
		}
	}
	if err := ss.Apply(rm); err != nil {
		t.Fatalf("draining a full store: got error %v, want nil", err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, ss = openOneShard(t, o)
	if got := recoveredSeqs(t, ss); !slices.Equal(got, stored[half:]) {
		t.Fatalf("after a restart on the full disk: recovered %d messages (%v...), want the %d accepted and not removed", len(got), got[:min(5, len(got))], len(stored)-half)
	}
	if _, err := os.Stat(o.Dir); err != nil {
		t.Fatal(err)
	}
}
