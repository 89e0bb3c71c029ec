package kahadb_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
	"wharf/storage/storetest"
)

// The storetest suite with a checkpoint after every Apply: every restart
// loads an index that is as fresh as it gets.
func TestStoreKahaDBCheckpointEveryApply(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store {
			s, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, JournalMaxFileLength: 1 << 20,
				CheckpointInterval: time.Nanosecond, CleanupInterval: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	})
}

// The storetest suite without any index: every restart replays the journal.
func TestStoreKahaDBNoCheckpoint(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store {
			s, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir, JournalMaxFileLength: 1 << 20, CheckpointInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}, storetest.OnlyNamedDestinations())
}

var (
	cpQueue = message.QueueDest("cp.q")
	cpTopic = message.TopicDest("cp.t")
	cpSub1  = engine.DurableSub{Key: engine.SubKey{ClientID: "c1", Name: "s1"}, Destination: cpTopic, Selector: "n > 0"}
	cpSub2  = engine.DurableSub{Key: engine.SubKey{ClientID: "c2", Name: "s2"}, Destination: cpTopic, NoLocal: true}
)

func cpMsg(d message.Destination, n int) *message.Message {
	return &message.Message{ID: fmt.Sprintf("ID:cp-1:1:1:%d", n), Destination: d, Persistent: true, Priority: 4,
		BodyType: message.TextBody, Body: fmt.Appendf(nil, "body %d", n), Props: message.Properties{{Name: "n", Value: message.IntValue(int32(n))}}}
}

func cpJob(n int) *engine.Job {
	return &engine.Job{ID: fmt.Sprintf("job-%d", n), Msg: cpMsg(cpQueue, 9000+n), Delay: 1000, Start: 1, Next: int64(1000 + n)}
}

type cpStore struct {
	st *kahadb.Store
	ss engine.ShardStore
}

func openCP(t *testing.T, dir string, o kahadb.Options) cpStore {
	t.Helper()
	o.Dir = dir
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = time.Hour // only the explicit ones: Close and cleanup
	}
	st, ss := openOneShard(t, o)
	return cpStore{st, ss}
}

func (c cpStore) apply(t *testing.T, ops ...engine.StoreOp) {
	t.Helper()
	if err := c.ss.Apply(ops); err != nil {
		t.Fatal(err)
	}
}

func (c cpStore) close(t *testing.T) {
	t.Helper()
	if err := c.st.Close(); err != nil {
		t.Fatal(err)
	}
}

// state renders everything Recover yields, one line per item, in order.
func (c cpStore) state(t *testing.T) []string {
	t.Helper()
	var out []string
	err := c.ss.Recover(func(it engine.RecoveredItem) error {
		switch {
		case it.Created:
			out = append(out, "dest "+it.Dest.String())
		case it.Sub != nil:
			out = append(out, fmt.Sprintf("sub %s %s sel=%q nolocal=%v", it.Sub.Key, it.Sub.Destination, it.Sub.Selector, it.Sub.NoLocal))
		case it.Job != nil:
			j := it.Job
			out = append(out, fmt.Sprintf("job %s next=%d msg=%s body=%q", j.ID, j.Next, j.Msg.ID, j.Msg.Body))
		case it.Tx != nil:
			var adds []string
			for _, m := range it.Tx.Adds {
				adds = append(adds, fmt.Sprintf("%s/%s body=%q props=%v", m.Destination, m.ID, m.Body, m.Props))
			}
			out = append(out, fmt.Sprintf("tx %s adds=%v acks=%+v", it.Tx.XID, adds, it.Tx.Acks))
		default:
			subs := slices.Clone(it.Subs)
			slices.SortFunc(subs, func(a, b engine.SubKey) int { return strings.Compare(a.String(), b.String()) })
			out = append(out, fmt.Sprintf("msg %s #%d %s body=%q redelivered=%d props=%v subs=%v",
				it.Dest, it.Seq, it.Msg.ID, it.Msg.Body, it.Msg.RedeliveryCounter, it.Msg.Props, subs))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Recover promises the order of the messages of one destination, not
	// the order of subscriptions, jobs or destinations.
	slices.SortStableFunc(out, func(a, b string) int {
		ka, kb := a, b
		if strings.HasPrefix(a, "msg ") && strings.HasPrefix(b, "msg ") {
			ka, kb = strings.Fields(a)[1], strings.Fields(b)[1]
		}
		return strings.Compare(ka, kb)
	})
	return out
}

func sameState(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: recovered state differs\ngot:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// crashCopy copies the directory's files as they are on disk now, while
// the store that writes it is still open: what a restart after SIGKILL
// finds.
func crashCopy(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		in, err := os.Open(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dst, e.Name()))
		if err == nil {
			_, err = io.Copy(out, in)
			out.Close()
		}
		in.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// fullReplayState is the state a replay of dir's journal alone rebuilds
// (the index is removed first, in a copy).
func fullReplayState(t *testing.T, dir string) []string {
	t.Helper()
	cp := crashCopy(t, dir)
	if err := os.Remove(filepath.Join(cp, "wharf-index.bin")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	c := openCP(t, cp, kahadb.Options{CheckpointInterval: -1})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 0 {
		t.Fatalf("full replay of %s: recovery %+v, want no index", cp, r)
	}
	return c.state(t)
}

// populate writes a bit of everything: queue and topic messages, two
// durable subscriptions, acks, a redelivery update, scheduled jobs.
func populate(t *testing.T, c cpStore, from, n int) {
	t.Helper()
	if from == 1 {
		c.apply(t, engine.StoreOp{Kind: engine.OpAddSub, Dest: cpTopic, Sub: cpSub1},
			engine.StoreOp{Kind: engine.OpAddSub, Dest: cpTopic, Sub: cpSub2})
	}
	for i := from; i < from+n; i++ {
		c.apply(t,
			engine.StoreOp{Kind: engine.OpAdd, Dest: cpQueue, Seq: uint64(i), Msg: cpMsg(cpQueue, i)},
			engine.StoreOp{Kind: engine.OpAdd, Dest: cpTopic, Seq: uint64(i), Msg: cpMsg(cpTopic, 1000+i), Subs: []engine.SubKey{cpSub1.Key, cpSub2.Key}},
			engine.StoreOp{Kind: engine.OpAddJob, Job: cpJob(i)})
	}
}

// A restart after a clean stop reads the index and replays nothing; after
// a crash it replays only what was written since the last checkpoint, acks
// included, and rebuilds the same state as a replay of the whole journal.
func TestKahaDBCheckpointReplaysOnlyTail(t *testing.T) {
	dir := t.TempDir()
	c := openCP(t, dir, kahadb.Options{})
	populate(t, c, 1, 20)
	c.apply(t, engine.StoreOp{Kind: engine.OpUpdate, Dest: cpQueue, Seq: 3, Count: 2})
	c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: 1},
		engine.StoreOp{Kind: engine.OpAck, Dest: cpTopic, Seq: 1, Sub: cpSub1},
		engine.StoreOp{Kind: engine.OpRemoveJob, JobID: "job-1"})
	want := c.state(t)
	c.close(t)

	c = openCP(t, dir, kahadb.Options{})
	r := c.st.Recovery()
	if r.FromIndex != 1 || r.RecordsReplayed != 0 || r.IndexMessages != 39 {
		t.Fatalf("after a clean stop: recovery %+v, want the index with 39 messages and 0 records replayed", r)
	}
	sameState(t, "index after a clean stop", c.state(t), want)

	// Work after the checkpoint: acks and removes of messages the index
	// holds, an update, a subscription removed, new messages; then a crash.
	tail := [][]engine.StoreOp{
		{{Kind: engine.OpRemove, Dest: cpQueue, Seq: 2}, {Kind: engine.OpRemove, Dest: cpQueue, Seq: 4}},
		{{Kind: engine.OpAck, Dest: cpTopic, Seq: 2, Sub: cpSub1}, {Kind: engine.OpAck, Dest: cpTopic, Seq: 2, Sub: cpSub2}},
		{{Kind: engine.OpUpdate, Dest: cpQueue, Seq: 5, Count: 7}},
		{{Kind: engine.OpRemoveJob, JobID: "job-2"}},
		{{Kind: engine.OpRemoveSub, Dest: cpTopic, Sub: engine.DurableSub{Key: cpSub2.Key}}},
		{{Kind: engine.OpAdd, Dest: cpQueue, Seq: 21, Msg: cpMsg(cpQueue, 21)}},
	}
	for _, ops := range tail {
		c.apply(t, ops...)
	}
	want = c.state(t)
	crashed := crashCopy(t, dir) // no Close: no checkpoint of the tail
	c.close(t)

	c = openCP(t, crashed, kahadb.Options{})
	r = c.st.Recovery()
	// remove×2, ack×2, update, job remove, sub remove, trace+add.
	if r.FromIndex != 1 || r.RecordsReplayed != 9 {
		t.Fatalf("after a crash: recovery %+v, want the index and the 9 records written after it", r)
	}
	sameState(t, "index + tail after a crash", c.state(t), want)
	sameState(t, "full replay after a crash", fullReplayState(t, crashed), want)
	c.close(t)
}

// The periodic checkpoint runs on its own (CheckpointInterval), without a
// Close: a crash then replays only what followed the last one.
func TestKahaDBCheckpointPeriodic(t *testing.T) {
	dir := t.TempDir()
	c := openCP(t, dir, kahadb.Options{CheckpointInterval: time.Nanosecond})
	populate(t, c, 1, 5)
	if n := c.st.Recovery().Checkpoints; n != 6 {
		t.Fatalf("checkpoints after 6 applies with a 1ns interval: got %d, want 6", n)
	}
	if _, err := os.Stat(filepath.Join(dir, "wharf-index.bin")); err != nil {
		t.Fatalf("no index after periodic checkpoints: %v", err)
	}
	for _, name := range []string{"db.data", "db.redo", "wharf-index.bin.tmp"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s next to the journal: stat error %v, want not exist", name, err)
		}
	}
	want := c.state(t)
	crashed := crashCopy(t, dir)
	c.close(t)
	c = openCP(t, crashed, kahadb.Options{})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 1 || r.RecordsReplayed != 0 {
		t.Fatalf("recovery %+v, want the index and nothing to replay", r)
	}
	sameState(t, "after periodic checkpoints", c.state(t), want)
}

// An index that cannot be trusted is ignored (and replaced): the whole
// journal is replayed and the state is the same.
func TestKahaDBCheckpointUnusableIndex(t *testing.T) {
	tests := []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"flipped byte in the body", func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }},
		{"truncated", func(b []byte) []byte { return b[:len(b)-9] }},
		{"empty", func([]byte) []byte { return nil }},
		{"zeroed", func(b []byte) []byte { return make([]byte, len(b)) }},
		{"other format version", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 99); return b }},
		// Version 1 had no priority, expiration or size per message: a
		// start from it had to read every message.
		{"version 1", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 1); return b }},
		// Version 2 had no prepared XA transactions: a journal holding
		// one was never checkpointed past it.
		{"version 2", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 2); return b }},
		// Version 3 listed no destinations: the journal names more of
		// them than it did.
		{"version 3", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 3); return b }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			c := openCP(t, dir, kahadb.Options{})
			populate(t, c, 1, 10)
			c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: 1})
			want := c.state(t)
			c.close(t)
			p := filepath.Join(dir, "wharf-index.bin")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tc.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			c = openCP(t, dir, kahadb.Options{})
			r := c.st.Recovery()
			if r.FromIndex != 0 || r.RecordsReplayed == 0 {
				t.Fatalf("recovery %+v, want a full replay", r)
			}
			sameState(t, "full replay", c.state(t), want)
			c.close(t)
			// The clean stop wrote a good index again.
			c = openCP(t, dir, kahadb.Options{})
			defer c.close(t)
			if r := c.st.Recovery(); r.FromIndex != 1 || r.RecordsReplayed != 0 {
				t.Fatalf("after the next clean stop: recovery %+v, want the new index", r)
			}
			sameState(t, "new index", c.state(t), want)
		})
	}
}

// An index older than the journal's cleanup refers to a file that is gone:
// it is ignored and the journal alone rebuilds the state; none of the
// messages consumed since comes back.
func TestKahaDBCheckpointOlderThanCleanup(t *testing.T) {
	dir := t.TempDir()
	o := kahadb.Options{JournalMaxFileLength: 64 << 10, CleanupInterval: time.Nanosecond}
	c := openCP(t, dir, o)
	populate(t, c, 1, 10)
	c.close(t)
	old, err := os.ReadFile(filepath.Join(dir, "wharf-index.bin"))
	if err != nil {
		t.Fatal(err)
	}

	c = openCP(t, dir, o)
	// Consume everything, then push the journal over a few files so that
	// cleanup removes db-1.log, which the old index points into.
	for i := 1; i <= 10; i++ {
		c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: uint64(i)},
			engine.StoreOp{Kind: engine.OpAck, Dest: cpTopic, Seq: uint64(i), Sub: cpSub1},
			engine.StoreOp{Kind: engine.OpAck, Dest: cpTopic, Seq: uint64(i), Sub: cpSub2},
			engine.StoreOp{Kind: engine.OpRemoveJob, JobID: fmt.Sprintf("job-%d", i)})
	}
	for i := 100; i < 400; i++ {
		m := cpMsg(cpQueue, i)
		m.Body = make([]byte, 1024)
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: cpQueue, Seq: uint64(i), Msg: m})
		c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: uint64(i)})
	}
	c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: cpQueue, Seq: 500, Msg: cpMsg(cpQueue, 500)})
	want := c.state(t)
	c.close(t)
	if _, err := os.Stat(filepath.Join(dir, "db-1.log")); !os.IsNotExist(err) {
		t.Fatalf("db-1.log still there (stat error %v): the test needs cleanup to have removed it", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "wharf-index.bin"), old, 0o644); err != nil {
		t.Fatal(err)
	}

	c = openCP(t, dir, o)
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 0 {
		t.Fatalf("recovery %+v, want the stale index ignored", r)
	}
	sameState(t, "full replay after cleanup", c.state(t), want)
}

// A torn tail cut off by recovery, past which the index was written (the
// journal's last batch never reached the disk): the index is ignored.
func TestKahaDBCheckpointPastTruncatedJournal(t *testing.T) {
	dir := t.TempDir()
	c := openCP(t, dir, kahadb.Options{})
	populate(t, c, 1, 5)
	c.close(t)
	p := filepath.Join(dir, "db-1.log")
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Cut into the last batch (the EOF marker is 5 bytes).
	if err := os.Truncate(p, info.Size()-40); err != nil {
		t.Fatal(err)
	}
	want := fullReplayState(t, dir)
	c = openCP(t, dir, kahadb.Options{})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 0 {
		t.Fatalf("recovery %+v, want the index past the journal's end ignored", r)
	}
	sameState(t, "after a torn tail", c.state(t), want)
	if len(want) == 0 || strings.Contains(strings.Join(want, "\n"), "job-5") {
		t.Fatalf("the torn batch (job-5) should be gone and the rest kept: %q", want)
	}
}

// A journal replaced under the index (same file names, other content) is
// caught by the check of the last record before the checkpoint.
func TestKahaDBCheckpointJournalReplaced(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	c := openCP(t, dir, kahadb.Options{})
	populate(t, c, 1, 5)
	c.close(t)
	c = openCP(t, other, kahadb.Options{})
	c.apply(t, engine.StoreOp{Kind: engine.OpAddSub, Dest: cpTopic, Sub: cpSub2},
		engine.StoreOp{Kind: engine.OpAddSub, Dest: cpTopic, Sub: cpSub1})
	populate(t, c, 101, 6) // a longer journal, other content
	want := c.state(t)
	c.close(t)
	idx, err := os.ReadFile(filepath.Join(dir, "wharf-index.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "wharf-index.bin"), idx, 0o644); err != nil {
		t.Fatal(err)
	}
	c = openCP(t, other, kahadb.Options{})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 0 {
		t.Fatalf("recovery %+v, want an index of another journal ignored", r)
	}
	sameState(t, "other journal", c.state(t), want)
}

// A large state is checkpointed off the shard's goroutine, and only once
// enough has changed since the last index (one journal record per 8
// pending messages); the index is as good as a synchronous one.
func TestKahaDBCheckpointLargeState(t *testing.T) {
	dir := t.TempDir()
	c := openCP(t, dir, kahadb.Options{CheckpointInterval: time.Nanosecond, EnableJournalDiskSyncs: true})
	const n = 6000 // over the size written off the goroutine
	var ops []engine.StoreOp
	for i := 1; i <= n; i++ {
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: cpQueue, Seq: uint64(i), Msg: cpMsg(cpQueue, i)})
		if len(ops) == 2000 {
			c.apply(t, ops...)
			ops = ops[:0]
		}
	}
	kahadb.WaitCheckpointForTest(c.ss)
	before := c.st.Recovery().Checkpoints
	if before == 0 {
		t.Fatalf("no checkpoint after %d messages with a 1ns interval", n)
	}
	// One record is too little change for 6000 pending messages ...
	c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: 1})
	kahadb.WaitCheckpointForTest(c.ss)
	if got := c.st.Recovery().Checkpoints; got != before {
		t.Fatalf("checkpoints after one more record: %d, want still %d", got, before)
	}
	// ... n/8 records are enough.
	for i := 2; i <= 2+n/8; i++ {
		c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: cpQueue, Seq: uint64(i)})
	}
	kahadb.WaitCheckpointForTest(c.ss)
	if got := c.st.Recovery().Checkpoints; got != before+1 {
		t.Fatalf("checkpoints after %d more records: %d, want %d", n/8+1, got, before+1)
	}
	want := c.state(t)
	crashed := crashCopy(t, dir)
	c.close(t)
	c = openCP(t, crashed, kahadb.Options{})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 1 || r.IndexMessages == 0 {
		t.Fatalf("recovery %+v, want the index written off the goroutine", r)
	}
	sameState(t, "after a large checkpoint", c.state(t), want)
}

// An add that ActiveMQ appended after Wharf's last checkpoint (no sequence
// trace) takes a sequence after the messages Wharf wrote since its last
// replay, which the index holds: it used to take the index's stale
// next-sequence and collide with one of them ("duplicate message"), and
// the broker did not start on a journal handed back from ActiveMQ.
func TestKahaDBCheckpointThenActiveMQAdd(t *testing.T) {
	dir := t.TempDir()
	q := message.QueueDest("cp.foreign.q")
	open := func() (*kahadb.Store, engine.ShardStore) {
		return openOneShard(t, kahadb.Options{Dir: dir, EnableJournalDiskSyncs: true})
	}
	st, ss := open()
	for i := uint64(1); i <= 2; i++ {
		m := &message.Message{ID: fmt.Sprintf("ID:wharf-1:1:1:1:%d", i), Destination: q, Persistent: true,
			BodyType: message.TextBody, Body: fmt.Appendf(nil, "w%d", i)}
		if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: i, Msg: m}}); err != nil {
			t.Fatal(err)
		}
	}
	ss.Close()
	st.Close() // writes the checkpoint index

	j, err := journal.Open(journal.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	m := &message.Message{ID: "ID:amq-9:1:1:1:1", Destination: q, Persistent: true, BodyType: message.TextBody, Body: []byte("a1")}
	frame, err := kahadb.MarshalForTest(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append([][]byte{command.Encode(nil, &command.AddMessage{
		Destination: command.Destination{Type: command.Queue, Name: q.Name}, MessageID: m.ID, Message: frame, Priority: 4,
	})}); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	st, ss = open()
	defer st.Close()
	defer ss.Close()
	if r := st.Recovery(); r.FromIndex != 1 || r.RecordsReplayed != 1 {
		t.Fatalf("recovery %+v, want the checkpoint index and the 1 record after it", r)
	}
	msgs, _ := recoverShard(t, ss)
	if len(msgs) != 3 || msgs["w1"] != 1 || msgs["w2"] != 2 || msgs["a1"] <= 2 {
		t.Fatalf("recovered %v, want w1 (seq 1), w2 (seq 2) and a1 after them", msgs)
	}
}

// checkpointInterval="0" (NoPeriodicCheckpoint): no timed checkpoint, but
// a clean stop still writes the index and the next start uses it, as
// ActiveMQ checkpoints at close whatever its interval.
func TestKahaDBNoPeriodicCheckpoint(t *testing.T) {
	dir := t.TempDir()
	d := message.QueueDest("noperiodic.q")
	c := openCP(t, dir, kahadb.Options{CheckpointInterval: time.Nanosecond, NoPeriodicCheckpoint: true})
	for i := 1; i <= 20; i++ {
		c.apply(t, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: uint64(i), Msg: bigMsg(d, i)})
	}
	if r := c.st.Recovery(); r.Checkpoints != 0 {
		t.Fatalf("%d checkpoints while running, want none", r.Checkpoints)
	}
	want := c.state(t)
	c.close(t)
	c = openCP(t, dir, kahadb.Options{NoPeriodicCheckpoint: true})
	defer c.close(t)
	if r := c.st.Recovery(); r.FromIndex != 1 || r.RecordsReplayed != 0 {
		t.Fatalf("recovery %+v, want the index of the clean stop and nothing replayed", r)
	}
	sameState(t, "after a clean stop", c.state(t), want)
}

// The index lists the destinations the shard knows, empty ones included,
// as ActiveMQ's db.data keeps a StoredDestination per destination: a
// clean restart brings back one created with nothing else in the journal;
// a crash loses one created after the last checkpoint that no record
// names (ActiveMQ's db.data gets it at its next checkpoint), and keeps the
// checkpointed ones; the journal alone brings back those its records name.
func TestKahaDBCheckpointEmptyDestinations(t *testing.T) {
	dir := t.TempDir()
	early, late, drained := message.QueueDest("cp.early"), message.QueueDest("cp.late"), message.QueueDest("cp.drained")
	addDest := func(d message.Destination) engine.StoreOp { return engine.StoreOp{Kind: engine.OpAddDest, Dest: d} }
	c := openCP(t, dir, kahadb.Options{})
	c.apply(t, addDest(early)) // the journal holds no record at all
	c.close(t)
	c = openCP(t, dir, kahadb.Options{})
	sameState(t, "clean restart", c.state(t), []string{"dest " + early.String()})
	c.apply(t, addDest(drained), engine.StoreOp{Kind: engine.OpAdd, Dest: drained, Seq: 1, Msg: cpMsg(drained, 1)})
	c.apply(t, engine.StoreOp{Kind: engine.OpRemove, Dest: drained, Seq: 1})
	kahadb.CheckpointForTest(c.ss, false)
	c.apply(t, addDest(late))

	k := openCP(t, crashCopy(t, dir), kahadb.Options{})
	sameState(t, "after a crash", k.state(t), []string{"dest " + drained.String(), "dest " + early.String()})
	k.close(t)
	sameState(t, "journal alone", fullReplayState(t, dir), []string{"dest " + drained.String()})
	c.close(t)
	c = openCP(t, dir, kahadb.Options{})
	defer c.close(t)
	sameState(t, "clean restart", c.state(t), []string{"dest " + drained.String(), "dest " + early.String(), "dest " + late.String()})
}
