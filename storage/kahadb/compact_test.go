package kahadb_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

func journalFiles(t *testing.T, dir string) []int {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "db-*.log"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, p := range m {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "db-"), ".log"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, n)
	}
	slices.Sort(ids)
	return ids
}

func bigMsg(d message.Destination, n int) *message.Message {
	m := cpMsg(d, n)
	m.Body = bytes.Repeat([]byte{'x'}, 2000)
	return m
}

// compactionScenario keeps message 1 pending in the first journal file
// while many more are added and consumed (each one batch after its add, so
// its ack lands in a later file than the message): ack compaction must free
// every file between the first and the head, and no restart may bring a
// consumed message back.
func compactionScenario(t *testing.T, d message.Destination, subs []engine.DurableSub) {
	dir := t.TempDir()
	o := kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: time.Nanosecond,
		EnableAckCompaction: true, CompactAcksAfterNoGC: 3}
	c := openCP(t, dir, o)
	var keys []engine.SubKey
	for _, s := range subs {
		c.apply(t, engine.StoreOp{Kind: engine.OpAddSub, Dest: d, Sub: s})
		keys = append(keys, s.Key)
	}
	consume := func(n int) []engine.StoreOp {
		if len(subs) == 0 {
			return []engine.StoreOp{{Kind: engine.OpRemove, Dest: d, Seq: uint64(n)}}
		}
		var ops []engine.StoreOp
		for _, s := range subs {
			ops = append(ops, engine.StoreOp{Kind: engine.OpAck, Dest: d, Seq: uint64(n), Sub: s})
		}
		return ops
	}
	c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: 1, Msg: bigMsg(d, 1), Subs: keys})
	const n = 400
	for i := 2; i <= n; i++ {
		ops := []engine.StoreOp{{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: bigMsg(d, i), Subs: keys}}
		if i > 2 {
			ops = append(ops, consume(i-1)...)
		}
		c.apply(t, ops...)
	}
	c.apply(t, consume(n)...)
	want := c.state(t)
	if len(want) != len(subs)+2 || want[0] != "dest "+d.String() || !strings.Contains(strings.Join(want, "\n"), cpMsg(d, 1).ID+" ") {
		t.Fatalf("state before restart: %d items, want %d", len(want), len(subs)+1)
	}
	files := journalFiles(t, dir)
	if files[0] != 1 || len(files) > 3 || files[len(files)-1] < 10 {
		t.Fatalf("journal files after compaction: %v, want 1, then at most the last two of many", files)
	}
	// A replay of the journal alone (ActiveMQ's view: no index).
	sameState(t, "full replay", fullReplayState(t, dir), want)
	c.close(t)

	c = openCP(t, dir, o)
	if r := c.st.Recovery(); r.FromIndex == 0 {
		t.Fatalf("restart: recovery %+v, want the index", r)
	}
	sameState(t, "restart from the index", c.state(t), want)
	c.close(t)
	if err := os.Remove(filepath.Join(dir, "wharf-index.bin")); err != nil {
		t.Fatal(err)
	}
	c = openCP(t, dir, o)
	sameState(t, "restart without the index", c.state(t), want)
	// The tracking rebuilt by the replay keeps compacting correctly.
	for i := n + 1; i <= n+200; i++ {
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: bigMsg(d, i), Subs: keys})
		c.apply(t, consume(i)...)
	}
	if files := journalFiles(t, dir); files[0] != 1 || len(files) > 3 {
		t.Fatalf("journal files after a second round: %v", files)
	}
	sameState(t, "second round", c.state(t), want)
	sameState(t, "second round, full replay", fullReplayState(t, dir), want)
	c.close(t)
	c = openCP(t, dir, o)
	sameState(t, "second round, restart", c.state(t), want)
	c.close(t)
}

func TestKahaDBAckCompactionQueue(t *testing.T) {
	compactionScenario(t, message.QueueDest("compact.q"), nil)
}

func TestKahaDBAckCompactionDurable(t *testing.T) {
	topic := message.TopicDest("compact.t")
	compactionScenario(t, topic, []engine.DurableSub{
		{Key: engine.SubKey{ClientID: "c1", Name: "s1"}, Destination: topic},
		{Key: engine.SubKey{ClientID: "c2", Name: "s2"}, Destination: topic},
	})
}

// Without enableAckCompaction only the prefix goes: the pinned first file
// keeps every later one.
func TestKahaDBAckCompactionDisabled(t *testing.T) {
	dir := t.TempDir()
	d := message.QueueDest("compact.off")
	c := openCP(t, dir, kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: time.Nanosecond, CompactAcksAfterNoGC: 1})
	c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: 1, Msg: bigMsg(d, 1)})
	for i := 2; i <= 200; i++ {
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: bigMsg(d, i)})
		c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: uint64(i)})
	}
	files := journalFiles(t, dir)
	c.close(t)
	if files[0] != 1 || len(files) < 5 || files[len(files)-1] != len(files) {
		t.Fatalf("journal files: %v, want all of them", files)
	}
}

// compactAcksIgnoresStoreGrowth=false (ActiveMQ's default): while every
// cleanup cycle finds the journal in a new data file, ack compaction waits;
// once writes stop filling files it runs. With true it runs while the
// journal grows.
func TestKahaDBAckCompactionStoreGrowth(t *testing.T) {
	d, other := message.QueueDest("compact.grow"), message.QueueDest("compact.small")
	huge := func(n int) *message.Message {
		m := cpMsg(d, n)
		m.Body = bytes.Repeat([]byte{'x'}, 40<<10) // one batch per 64 KiB file
		return m
	}
	// grow pins message 1 in db-1.log, then adds a message per Apply, each
	// in a new file, removing the one before.
	grow := func(t *testing.T, ignore bool) (cpStore, string) {
		dir := t.TempDir()
		c := openCP(t, dir, kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: time.Nanosecond,
			EnableAckCompaction: true, CompactAcksAfterNoGC: 2, CompactAcksIgnoresStoreGrowth: ignore})
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: 1, Msg: cpMsg(d, 1)})
		for i := 2; i <= 40; i++ {
			ops := []engine.StoreOp{{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: huge(i)}}
			if i > 2 {
				ops = append(ops, engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: uint64(i - 1)})
			}
			c.apply(t, ops...)
		}
		return c, dir
	}
	t.Run("false waits while the journal grows", func(t *testing.T) {
		c, dir := grow(t, false)
		files := journalFiles(t, dir)
		if len(files) < 35 || files[0] != 1 {
			t.Fatalf("journal files while growing: %v, want all of them (no compaction)", files)
		}
		// The journal stops growing: small writes stay in the last file.
		c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: 40})
		for i := 1; i <= 6; i++ {
			c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: other, Seq: uint64(i), Msg: cpMsg(other, i)})
		}
		files = journalFiles(t, dir)
		if files[0] != 1 || len(files) > 3 {
			t.Fatalf("journal files once growth stopped: %v, want db-1.log and at most the last two", files)
		}
		want := c.state(t)
		sameState(t, "full replay", fullReplayState(t, dir), want)
		c.close(t)
	})
	t.Run("true compacts while the journal grows", func(t *testing.T) {
		c, dir := grow(t, true)
		files := journalFiles(t, dir)
		if files[0] != 1 || len(files) > 5 {
			t.Fatalf("journal files while growing: %v, want db-1.log and a few of the last", files)
		}
		want := c.state(t)
		sameState(t, "full replay", fullReplayState(t, dir), want)
		c.close(t)
	})
}
