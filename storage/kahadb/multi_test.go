package kahadb_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/storetest"
)

func multiOpts(dir string, filters ...kahadb.Filter) kahadb.MultiOptions {
	for i := range filters {
		filters[i].Options.JournalMaxFileLength = 1 << 20
	}
	return kahadb.MultiOptions{Dir: dir, Filters: filters}
}

func openMulti(t *testing.T, o kahadb.MultiOptions) *kahadb.MultiStore {
	t.Helper()
	s, err := kahadb.OpenMulti(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// twoFilters routes the storetest's queue "storetest.a" (and the orders
// queues of the routing tests) to their own children, the rest to a
// catch-all.
func twoFilters(dir string) kahadb.MultiOptions {
	return multiOpts(dir,
		kahadb.Filter{Dest: message.QueueDest("storetest.a")},
		kahadb.Filter{Dest: message.QueueDest("orders.>")},
		kahadb.Filter{},
	)
}

func TestStoreMultiKahaDB(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store { return openMulti(t, twoFilters(dir)) }
	})
}

func TestStoreMultiKahaDBPerDestination(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		dir := t.TempDir()
		return func() engine.Store {
			return openMulti(t, multiOpts(dir,
				kahadb.Filter{Dest: message.TopicDest("storetest.>")},
				kahadb.Filter{PerDestination: true}))
		}
	})
}

func TestMultiKahaDBChildName(t *testing.T) {
	check := func(d message.Destination, want string) {
		t.Helper()
		if got := kahadb.ChildName(d); got != want {
			t.Errorf("ChildName(%v) = %q, want %q", d, got, want)
		}
	}
	check(message.QueueDest("orders.>"), "queue#3a#2f#2forders.#3e")
	check(message.TopicDest("news.*"), "topic#3a#2f#2fnews.#2a")
	check(message.Destination{}, "#210") // ActiveMQ 5.17: matchAll's name "!0"
	long := message.QueueDest("a.very.long.queue.name.that.goes.on.and.on.past.sixty.four.characters")
	if got := kahadb.ChildName(long); len(got) != 64 || got != "queue#3a#2f#2fa.very.long.queue.name.that.goes.on.and.on.past.sixty.four.characters"[len("queue#3a#2f#2fa.very.long.queue.name.that.goes.on.and.on.past.sixty.four.characters")-64:] {
		t.Errorf("ChildName(long) = %q (%d chars), want the last 64", got, len(got))
	}
}

func queueMsg(d message.Destination, n int) *message.Message {
	return &message.Message{ID: "ID:multi-1:1:1:" + d.Name + ":" + string(rune('a'+n)), Destination: d,
		Persistent: true, BodyType: message.TextBody, Body: []byte("hello")}
}

// journalAdds counts the pending messages of each destination in the
// KahaDB journal(s) under dir (its shard-* directories, if any), as
// kahadb.Inspect replays them.
func journalAdds(t *testing.T, dir string) map[string]int {
	t.Helper()
	dirs, err := kahadb.Dirs(dir)
	if err != nil {
		return nil // no journal written
	}
	out := map[string]int{}
	for _, d := range dirs {
		r, err := kahadb.Inspect(d, nil, nil)
		if err != nil {
			t.Fatalf("Inspect(%s): %v", d, err)
		}
		for _, p := range r.Pins {
			for dest, n := range p.Messages {
				out[dest] += n
			}
		}
	}
	return out
}

func TestMultiKahaDBRouting(t *testing.T) {
	for _, shards := range []int{1, 2} {
		t.Run("shards="+string(rune('0'+shards)), func(t *testing.T) {
			dir := t.TempDir()
			st := openMulti(t, twoFilters(dir))
			orders, eu, other := message.QueueDest("orders.us"), message.QueueDest("orders.eu"), message.QueueDest("billing")
			news := message.TopicDest("orders.news") // a topic: queue filters never match it
			sub := engine.DurableSub{Key: engine.SubKey{ClientID: "c", Name: "s"}, Destination: news}
			ss, err := st.OpenShard(0, shards)
			if err != nil {
				t.Fatal(err)
			}
			job := &engine.Job{ID: "job-1", Msg: queueMsg(other, 9), Delay: 1000, Start: 1, Next: 1001}
			ops := []engine.StoreOp{
				{Kind: engine.OpAddSub, Dest: news, Sub: sub},
				{Kind: engine.OpAdd, Dest: orders, Seq: 1, Msg: queueMsg(orders, 1)},
				{Kind: engine.OpAdd, Dest: eu, Seq: 1, Msg: queueMsg(eu, 1)},
				{Kind: engine.OpAdd, Dest: other, Seq: 1, Msg: queueMsg(other, 1)},
				{Kind: engine.OpAdd, Dest: news, Seq: 1, Msg: queueMsg(news, 1), Subs: []engine.SubKey{sub.Key}},
				{Kind: engine.OpAddJob, Job: job},
			}
			if err := ss.Apply(ops); err != nil {
				t.Fatal(err)
			}
			if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: orders, Seq: 2, Msg: queueMsg(orders, 2)}}); err != nil {
				t.Fatal(err)
			}
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}

			ordersDir := filepath.Join(dir, "queue#3a#2f#2forders.#3e")
			catchAll := filepath.Join(dir, "#210")
			if got, want := journalAdds(t, ordersDir), map[string]int{"queue://orders.us": 2, "queue://orders.eu": 1}; !equalCounts(got, want) {
				t.Errorf("orders child adds = %v, want %v", got, want)
			}
			if got, want := journalAdds(t, catchAll), map[string]int{"queue://billing": 1, "topic://orders.news": 1}; !equalCounts(got, want) {
				t.Errorf("catch-all child adds = %v, want %v", got, want)
			}
			// The storetest queue's child exists and holds nothing.
			if got := journalAdds(t, filepath.Join(dir, "queue#3a#2f#2fstoretest.a")); len(got) != 0 {
				t.Errorf("storetest.a child adds = %v, want none", got)
			}

			// Restart: everything comes back, subscriptions first, jobs last.
			st = openMulti(t, twoFilters(dir))
			defer st.Close()
			ss, err = st.OpenShard(0, shards)
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			got := map[message.Destination][]uint64{}
			err = ss.Recover(func(it engine.RecoveredItem) error {
				switch {
				case it.Created:
					if len(kinds) > 0 {
						t.Errorf("destination %s recovered after %v, want every destination first", it.Dest, kinds)
					}
				case it.Sub != nil:
					kinds = append(kinds, "sub")
				case it.Job != nil:
					kinds = append(kinds, "job")
					if it.Job.ID != job.ID {
						t.Errorf("job %q, want %q", it.Job.ID, job.ID)
					}
				default:
					kinds = append(kinds, "msg")
					got[it.Dest] = append(got[it.Dest], it.Seq)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"sub", "msg", "msg", "msg", "msg", "msg", "job"}; !slices.Equal(kinds, want) {
				t.Errorf("recovered kinds %v, want %v", kinds, want)
			}
			if !slices.Equal(got[orders], []uint64{1, 2}) || len(got[eu]) != 1 || len(got[other]) != 1 || len(got[news]) != 1 {
				t.Errorf("recovered %v", got)
			}
			// The recovered messages are removed in their own child.
			if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpRemove, Dest: orders, Seq: 1}, {Kind: engine.OpAck, Dest: news, Seq: 1, Sub: sub}}); err != nil {
				t.Fatal(err)
			}
			n := 0
			ss.Recover(func(it engine.RecoveredItem) error {
				if it.Msg != nil {
					n++
				}
				return nil
			})
			if n != 3 {
				t.Errorf("after remove and ack: %d messages, want 3", n)
			}
		})
	}
}

func equalCounts(got, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func TestMultiKahaDBPerDestination(t *testing.T) {
	dir := t.TempDir()
	o := multiOpts(dir, kahadb.Filter{Dest: message.QueueDest("big.>")}, kahadb.Filter{PerDestination: true})
	st := openMulti(t, o)
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, b, big := message.QueueDest("a"), message.QueueDest("b"), message.QueueDest("big.one")
	var ops []engine.StoreOp
	for i, d := range []message.Destination{a, b, big, a} {
		ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: uint64(i + 1), Msg: queueMsg(d, i)})
	}
	if err := ss.Apply(ops); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	// Jobs go to the only fixed child, big.>.
	want := []string{"queue#3a#2f#2fa", "queue#3a#2f#2fb", "queue#3a#2f#2fbig.#3e"}
	if !slices.Equal(dirs, want) {
		t.Errorf("children %v, want %v", dirs, want)
	}
	if got := journalAdds(t, filepath.Join(dir, "queue#3a#2f#2fa")); !equalCounts(got, map[string]int{"queue://a": 2}) {
		t.Errorf("child a adds = %v", got)
	}

	// Restart: the per-destination children are found on disk.
	st = openMulti(t, o)
	defer st.Close()
	ss, err = st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if !it.Created {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("recovered %d messages, want 4", n)
	}
}

func TestMultiKahaDBNoFilter(t *testing.T) {
	st := openMulti(t, multiOpts(t.TempDir(), kahadb.Filter{Dest: message.QueueDest("only")}))
	defer st.Close()
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := message.QueueDest("other")
	err = ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: d, Seq: 1, Msg: queueMsg(d, 1)}})
	if err == nil {
		t.Fatal("Apply to a destination no filter matches: got nil error")
	}
}

// An mKahaDB shard writes unsynced batches through its children too, and
// they are there after a restart.
func TestKahaDBMultiApplyNoSync(t *testing.T) {
	dir := t.TempDir()
	o := twoFilters(dir)
	for i := range o.Filters {
		o.Filters[i].Options.EnableJournalDiskSyncs = true
	}
	q := message.QueueDest("orders.eu")
	for round := range 2 {
		s := openMulti(t, o)
		ss, err := s.OpenShard(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		ns, ok := ss.(engine.NoSyncApplier)
		if !ok {
			t.Fatalf("%T does not implement engine.NoSyncApplier", ss)
		}
		if round == 0 {
			var ops []engine.StoreOp
			for seq := uint64(1); seq <= 2; seq++ {
				ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: seq, Msg: &message.Message{
					ID: fmt.Sprintf("ID:multi-nosync-1:1:1:%d", seq), Destination: q, Persistent: true, Priority: 4, BodyType: message.TextBody, Body: []byte("m")}})
			}
			if err := ss.Apply(ops); err != nil {
				t.Fatal(err)
			}
			if err := ns.ApplyNoSync([]engine.StoreOp{{Kind: engine.OpRemove, Dest: q, Seq: 1}}); err != nil {
				t.Fatal(err)
			}
		} else {
			if seqs := recoveredSeqs(t, ss); len(seqs) != 1 || seqs[0] != 2 {
				t.Fatalf("recovered %v, want [2]", seqs)
			}
		}
		if err := ss.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMultiKahaDBOldCatchAllRenamed: a store an earlier Wharf wrote, its
// catch-all child under the old name "queue#3a#2f#2f#3e#2ctopic#3a#2f#2f#3e",
// opens with that directory renamed to ActiveMQ's "#210" and its messages
// recovered; with both directories present the open is refused.
func TestMultiKahaDBOldCatchAllRenamed(t *testing.T) {
	const oldName = "queue#3a#2f#2f#3e#2ctopic#3a#2f#2f#3e"
	dir := t.TempDir()
	st := openMulti(t, twoFilters(dir))
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	billing := message.QueueDest("billing")
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: billing, Seq: 1, Msg: queueMsg(billing, 1)}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	// Lay the store out as the earlier Wharf did.
	if err := os.Rename(filepath.Join(dir, kahadb.ChildName(message.Destination{})), filepath.Join(dir, oldName)); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	o := twoFilters(dir)
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	st = openMulti(t, o)
	ss, err = st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil && it.Dest == billing {
			got = append(got, it.Seq)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []uint64{1}) {
		t.Errorf("recovered billing seqs %v, want [1]", got)
	}
	if _, err := os.Stat(filepath.Join(dir, oldName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("old catch-all directory still there (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "#210")); err != nil {
		t.Errorf("catch-all directory #210: %v", err)
	}
	if l := logs.String(); !strings.Contains(l, "level=INFO") || !strings.Contains(l, oldName) || !strings.Contains(l, "#210") {
		t.Errorf("no Info log naming both directories:\n%s", l)
	}

	// Both names present: refused, naming both.
	if err := os.Mkdir(filepath.Join(dir, oldName), 0o755); err != nil {
		t.Fatal(err)
	}
	st2, err := kahadb.OpenMulti(context.Background(), twoFilters(dir))
	if err == nil {
		st2.Close()
		t.Fatal("OpenMulti with both catch-all directories succeeded, want an error")
	}
	if !strings.Contains(err.Error(), oldName) || !strings.Contains(err.Error(), "#210") {
		t.Errorf("error %q does not name both directories", err)
	}
}
