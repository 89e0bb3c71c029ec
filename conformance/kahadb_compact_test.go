package conformance

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb"
)

// TestConformanceKahaDBCompactedJournalToActiveMQ: a Wharf journal whose
// middle files ack compaction removed (one old message pinned the first
// file while hundreds went through) is recovered by ActiveMQ 5.17 with the
// pinned message only: the gap in the file numbers is what ActiveMQ's own
// GC leaves, and the acks rewritten at the head keep the consumed messages
// from coming back.
func TestConformanceKahaDBCompactedJournalToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	dir := filepath.Join(t.TempDir(), "kahadb")
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, JournalMaxFileLength: 64 << 10,
		EnableJournalDiskSyncs: true, CleanupInterval: time.Nanosecond, EnableAckCompaction: true, CompactAcksAfterNoGC: 3})
	if err != nil {
		t.Fatal(err)
	}
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := message.QueueDest("compacted")
	msg := func(i int) *message.Message {
		m := &message.Message{ID: "ID:wharf-compact-1:1:1:1:" + strconv.Itoa(i), Destination: q, Persistent: true,
			Priority: 4, Timestamp: 1_700_000_000_000, BodyType: message.TextBody, Body: []byte(strings.Repeat("x", 2000))}
		m.Props.Set("key", message.StringValue(fmt.Sprintf("m%d", i)))
		return m
	}
	apply := func(ops ...engine.StoreOp) {
		t.Helper()
		if err := ss.Apply(ops); err != nil {
			t.Fatal(err)
		}
	}
	apply(engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: msg(1)})
	const n = 400
	for i := 2; i <= n; i++ {
		ops := []engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: uint64(i), Msg: msg(i)}}
		if i > 2 {
			ops = append(ops, engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: uint64(i - 1)})
		}
		apply(ops...)
	}
	apply(engine.StoreOp{Kind: engine.OpRemove, Dest: q, Seq: n})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	files := logFiles(t, dir)
	gap := false
	for i := 1; i < len(files); i++ {
		gap = gap || files[i] != files[i-1]+1
	}
	if !gap || files[0] != 1 {
		t.Fatalf("journal files %v: want db-1.log kept and a gap after it (ack compaction)", files)
	}
	t.Logf("journal files after compaction: %v", files)
	amq := startActiveMQ(t, dir)
	c := dialOW(t, amq.openwire, "compacted-reader")
	s := must(c.Session(false))(t)
	k := must(s.Consumer(wire.NewQueue("compacted"), client.ConsumerOptions{}))(t)
	got := receiveN(t, k, "compacted queue", 1)
	if key := propKey(got[0]); key != "m1" {
		t.Fatalf("ActiveMQ recovered %q first, want m1, the one pending message", key)
	}
	expectMarkerNext(t, must(s.Producer(wire.NewQueue("compacted")))(t), k, "compacted queue")
	if bad := grepLine(amq.log.String(), "ERROR"); bad != "" {
		t.Errorf("ActiveMQ logged an error: %s", bad)
	}
	amq.stop()
}

func logFiles(t *testing.T, dir string) []int {
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
