package lsm_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/lsm"
)

// Removing a destination with a backlog, and a subscription with one, is
// one small batch whatever the backlog (a memtable of 2 MiB takes at most
// 300 KiB per batch; deleting 20,000 keys one by one would not fit): the
// backlog is gone from Recover at once and after a restart, and
// Housekeep deletes its keys a slice at a time. The same queue created
// again starts empty.
func TestLSMRemoveBacklog(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir)
	o.MemTableSize = 2 << 20
	s, ss := openOneShard(t, o)
	q, top := message.QueueDest("backlog"), message.TopicDest("news")
	a := engine.DurableSub{Key: engine.SubKey{ClientID: "c", Name: "a"}, Destination: top}
	b := engine.DurableSub{Key: engine.SubKey{ClientID: "c", Name: "b"}, Destination: top}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAddSub, Sub: a}, {Kind: engine.OpAddSub, Sub: b}}); err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	for from := 1; from <= n; from += 500 {
		if err := ss.Apply(addOps(q, from, 500, 100)); err != nil {
			t.Fatal(err)
		}
	}
	var tops []engine.StoreOp
	for seq := 1; seq <= 1000; seq++ {
		subs := []engine.SubKey{a.Key}
		if seq%2 == 0 {
			subs = append(subs, b.Key)
		}
		tops = append(tops, engine.StoreOp{Kind: engine.OpAdd, Dest: top, Seq: uint64(seq), Msg: textMsg(top, uint64(seq), "t"), Subs: subs})
	}
	if err := ss.Apply(tops); err != nil {
		t.Fatal(err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemoveDest, Dest: q}, {Kind: engine.OpRemoveSub, Sub: engine.DurableSub{Key: a.Key}}}); err != nil {
		t.Fatalf("removing a queue of %d messages and a subscription of 1000: got error %v, want nil", n, err)
	}
	var want []uint64
	for seq := uint64(2); seq <= 1000; seq += 2 {
		want = append(want, seq)
	}
	check := func(when string) {
		t.Helper()
		var got []uint64
		if err := ss.Recover(func(it engine.RecoveredItem) error {
			switch {
			case it.Msg != nil && it.Dest == top:
				if !slices.Equal(it.Subs, []engine.SubKey{b.Key}) {
					t.Errorf("%s: topic message %d: got subs %v, want [%v]", when, it.Seq, it.Subs, b.Key)
				}
				got = append(got, it.Seq)
			case it.Msg != nil || it.Created && it.Dest == q:
				t.Errorf("%s: recovered %s seq %d (created %v), want nothing of the removed queue", when, it.Dest, it.Seq, it.Created)
			case it.Sub != nil && it.Sub.Key == a.Key:
				t.Errorf("%s: recovered the removed subscription %v", when, a.Key)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: recovered %d topic messages, want the %d subscription b still needs", when, len(got), len(want))
		}
	}
	check("after the removal")
	ss.Close()
	s.Close()
	s, ss = openOneShard(t, o)
	defer s.Close()
	check("after a restart")
	if lsm.Orphans(ss) == 0 {
		t.Fatalf("orphans after a restart: got none, want the removed backlog")
	}
	for i := 0; lsm.Orphans(ss) > 0; i++ {
		if i == 100 {
			t.Fatalf("orphans left after 100 housekeeping turns: %d", lsm.Orphans(ss))
		}
		if err := ss.(engine.Housekeeper).Housekeep(); err != nil {
			t.Fatal(err)
		}
	}
	if m, w := lsm.KeyCount(ss, 'M'), lsm.KeyCount(ss, 'W'); m != len(want) || w != len(want) {
		t.Errorf("after housekeeping: %d message and %d waiting keys, want %d of each", m, w, len(want))
	}
	check("after housekeeping")
	if err := ss.Apply(addOps(q, 1, 1, 10)); err != nil {
		t.Fatal(err)
	}
	var qs []uint64
	ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil && it.Dest == q {
			qs = append(qs, it.Seq)
		}
		return nil
	})
	if !slices.Equal(qs, []uint64{1}) {
		t.Errorf("the queue created again: recovered %v, want [1]", qs)
	}
}

func vlogFiles(t *testing.T, dir string) int {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if strings.HasSuffix(e.Name(), ".vlog") {
			n++
		}
	}
	return n
}

// Value log GC runs at the cleanup interval (by the store's clock, on
// Housekeep) and frees the value log files of consumed messages; before
// the interval has passed Housekeep leaves them.
func TestLSMValueLogGC(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lsm")
	now := time.Unix(1_800_000_000, 0)
	o := testOptions(dir)
	o.MemTableSize, o.ValueLogFileSize, o.CleanupInterval = 1<<20, 1<<20, time.Minute
	o.Clock = func() time.Time { return now }
	_, ss := openOneShard(t, o)
	defer ss.Close()
	hk := ss.(engine.Housekeeper)
	q := message.QueueDest("gc")
	// 24 MiB of 4 KiB bodies, consumed as they go: the memtable (1 MiB)
	// flushes and compactions drop the removed keys, which tells GC what
	// is garbage.
	seq := 1
	for range 60 {
		if err := ss.Apply(addOps(q, seq, 100, 4<<10)); err != nil {
			t.Fatal(err)
		}
		var rm []engine.StoreOp
		for i := seq; i < seq+100; i++ {
			rm = append(rm, engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: uint64(i)})
		}
		if err := ss.Apply(rm); err != nil {
			t.Fatal(err)
		}
		seq += 100
	}
	before := vlogFiles(t, dir)
	if before < 10 {
		t.Fatalf("value log files after 24 MiB: got %d, want at least 10", before)
	}
	if err := hk.Housekeep(); err != nil {
		t.Fatal(err)
	}
	if got := vlogFiles(t, dir); got != before {
		t.Fatalf("value log files after Housekeep within the interval: got %d, want %d (no GC yet)", got, before)
	}
	// Compactions run in badger's background: each round passes the
	// interval and runs GC again, until files are freed or the deadline.
	deadline := time.Now().Add(30 * time.Second)
	for vlogFiles(t, dir) > before/2 {
		if time.Now().After(deadline) {
			t.Fatalf("value log files: still %d of %d after 30 s of GC rounds, want at most half", vlogFiles(t, dir), before)
		}
		now = now.Add(time.Minute)
		if err := hk.Housekeep(); err != nil {
			t.Fatal(err)
		}
		// More writes give the compactions work (and GC its statistics).
		if err := ss.Apply(addOps(q, seq, 1, 10)); err != nil {
			t.Fatal(err)
		}
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: uint64(seq)}}); err != nil {
			t.Fatal(err)
		}
		seq++
	}
	t.Logf("value log files: %d before GC, %d after", before, vlogFiles(t, dir))
}
