package kahadb_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// cleanupInterval 0 disables the periodic cleanup, as in ActiveMQ 5.17
// (CheckpointRunner cleans only when cleanupInterval > 0): every journal
// file stays while the store runs, however long ago the last cleanup was,
// and a clean stop still cleans up (cleanupOnStop). A positive interval
// cleans once it has passed.
func TestKahaDBCleanupIntervalZeroDisables(t *testing.T) {
	d := message.QueueDest("cleanup.q")
	run := func(t *testing.T, interval time.Duration, noCleanupOnStop bool) (running, stopped []int) {
		dir := t.TempDir()
		c := openCP(t, dir, kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: interval, NoCleanupOnStop: noCleanupOnStop})
		for i := 1; i <= 200; i++ {
			c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: bigMsg(d, i)})
			c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: uint64(i)})
		}
		// A day passes; the next write is where a due cleanup runs.
		kahadb.AgeCleanupForTest(c.ss, 24*time.Hour)
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: 1000, Msg: bigMsg(d, 1000)})
		running = journalFiles(t, dir)
		c.close(t)
		return running, journalFiles(t, dir)
	}
	t.Run("zero disables", func(t *testing.T) {
		running, stopped := run(t, 0, false)
		if len(running) < 5 || running[0] != 1 || running[len(running)-1] != len(running) {
			t.Errorf("journal files while running: %v, want every file from db-1.log on", running)
		}
		if len(stopped) != 1 || stopped[0] != running[len(running)-1] {
			t.Errorf("journal files after a clean stop: %v, want only the last, db-%d.log", stopped, running[len(running)-1])
		}
	})
	t.Run("positive cleans once due", func(t *testing.T) {
		running, _ := run(t, time.Hour, false)
		if len(running) > 2 {
			t.Errorf("journal files while running: %v, want at most the last two", running)
		}
	})
	t.Run("cleanupOnStop false", func(t *testing.T) {
		running, stopped := run(t, 0, true)
		if len(running) < 5 || !slices.Equal(stopped, running) {
			t.Errorf("journal files after a clean stop: %v, want all of them as while running, %v", stopped, running)
		}
	})
}

// A durable subscription without backlog whose record pins the oldest
// journal file is written again at the head before cleanup removes the
// file. When that write fails, the file must stay: it holds the only
// record of the subscription.
func TestKahaDBRewriteForwardFailureKeepsFile(t *testing.T) {
	dir := t.TempDir()
	topic := message.TopicDest("rewrite.t")
	sub := engine.DurableSub{Key: engine.SubKey{ClientID: "c1", Name: "s1"}, Destination: topic}
	o := kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: time.Hour}
	c := openCP(t, dir, o)
	// send adds message i and acks it; with cleanup, a cleanup is due at
	// the ack, when the subscription has no backlog.
	send := func(c cpStore, i int, cleanup bool) {
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: topic, Seq: uint64(i), Msg: bigMsg(topic, i), Subs: []engine.SubKey{sub.Key}})
		if cleanup {
			kahadb.AgeCleanupForTest(c.ss, 24*time.Hour)
		}
		c.apply(t, engine.StoreOp{Kind: engine.OpAck, Dest: topic, Seq: uint64(i), Sub: sub})
	}
	c.apply(t, engine.StoreOp{Kind: engine.OpAddSub, Dest: topic, Sub: sub})
	for i := 1; i <= 100; i++ {
		send(c, i, false)
	}
	if files := journalFiles(t, dir); len(files) < 3 || files[0] != 1 {
		t.Fatalf("journal files: %v, want several from db-1.log on", files)
	}
	want := c.state(t)
	if len(want) != 2 || want[0] != "dest "+topic.String() || !strings.HasPrefix(want[1], "sub ") {
		t.Fatalf("state: %q, want the topic and its subscription alone", want)
	}

	injected := errors.New("injected journal write failure")
	kahadb.FailRewriteForTest(c.ss, injected)
	send(c, 101, true)
	if files := journalFiles(t, dir); files[0] != 1 {
		t.Fatalf("journal files after a failed rewrite: %v, want db-1.log kept", files)
	}
	sameState(t, "full replay after a failed rewrite", fullReplayState(t, dir), want)
	c.close(t) // cleanupOnStop: the rewrite fails again
	if files := journalFiles(t, dir); files[0] != 1 {
		t.Fatalf("journal files after a clean stop: %v, want db-1.log kept", files)
	}

	c = openCP(t, dir, o)
	sameState(t, "restart after failed rewrites", c.state(t), want)
	// Once the write works, the record moves forward and the file goes.
	send(c, 102, true)
	if files := journalFiles(t, dir); len(files) > 2 {
		t.Fatalf("journal files after a working rewrite: %v, want at most the last two", files)
	}
	sameState(t, "full replay after the rewrite", fullReplayState(t, dir), want)
	c.close(t)
	c = openCP(t, dir, o)
	sameState(t, "restart after the rewrite", c.state(t), want)
	c.close(t)
}
