package kahadb_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// writeShards writes a store of len(perShard) shards in dir, shard i
// holding a message of each destination in perShard[i] (a topic gets a
// durable subscription instead).
func writeShards(t *testing.T, dir string, perShard ...[]message.Destination) {
	t.Helper()
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for i, dests := range perShard {
		ss, err := st.OpenShard(i, len(perShard))
		if err != nil {
			t.Fatal(err)
		}
		var ops []engine.StoreOp
		for _, d := range dests {
			if d.Type == message.Topic {
				key := engine.SubKey{ClientID: "c", Name: d.Name}
				ops = append(ops, engine.StoreOp{Kind: engine.OpAddSub, Dest: d, Sub: engine.DurableSub{Key: key, Destination: d}})
				continue
			}
			ops = append(ops, engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: 1, Msg: queueMsg(d, 1)})
		}
		if err := ss.Apply(ops); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
}

// PlanMKahaDB gives every shard but the last a filter naming its
// destinations (one: queue= or topic=; several: a composite of qualified
// names), the last the catch-all, and leaves out a shard holding nothing;
// the links are named as ActiveMQ 5.17 names those children.
func TestKahaDBPlanMKahaDB(t *testing.T) {
	dir := t.TempDir()
	a, b, top := message.QueueDest("a"), message.QueueDest("b"), message.TopicDest("prices")
	writeShards(t, dir, []message.Destination{top}, nil, []message.Destination{b, a, top}, []message.Destination{a})
	plan, err := kahadb.PlanMKahaDB(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []kahadb.MKahaDBChild{
		{Shard: "shard-0-of-4", Attr: "topic", Value: "prices", Link: "topic#3a#2f#2fprices", Destinations: []message.Destination{top}},
		{Shard: "shard-2-of-4", Attr: "queue", Value: "queue://a,queue://b,topic://prices",
			Link: "queue#3a#2f#2fa#2cqueue#3a#2f#2fb#2ctopic#3a#2f#2fprices", Destinations: []message.Destination{a, b, top}},
		{Shard: "shard-3-of-4", Link: "#210", Destinations: []message.Destination{a}},
	}
	if !reflect.DeepEqual(plan, want) {
		t.Fatalf("plan =\n%+v\nwant\n%+v", plan, want)
	}
	if err := kahadb.LinkMKahaDB(dir, plan); err != nil {
		t.Fatal(err)
	}
	// Again: links already in place are kept.
	if err := kahadb.LinkMKahaDB(dir, plan); err != nil {
		t.Fatalf("second LinkMKahaDB: %v", err)
	}
	for _, c := range plan {
		if got, err := os.Readlink(filepath.Join(dir, c.Link)); err != nil || got != c.Shard {
			t.Errorf("link %s = %q, %v; want %s", c.Link, got, err, c.Shard)
		}
	}
	// Wharf still opens the store with its four shards.
	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.OpenShard(0, 4); err != nil {
		t.Errorf("Wharf reopening the linked store: %v", err)
	}
	st.Close()

	// A link name taken by something else is refused.
	other := []kahadb.MKahaDBChild{{Shard: "shard-0-of-4", Link: plan[1].Link}}
	if err := kahadb.LinkMKahaDB(dir, other); err == nil {
		t.Error("LinkMKahaDB replaced a link to another shard")
	}
}

func TestKahaDBPlanMKahaDBRefuses(t *testing.T) {
	one := t.TempDir()
	writeShards(t, one, []message.Destination{message.QueueDest("a")})
	if _, err := kahadb.PlanMKahaDB(one); !errors.Is(err, kahadb.ErrNotSharded) {
		t.Errorf("plain KahaDB directory: err = %v, want ErrNotSharded", err)
	}
	bad := t.TempDir()
	writeShards(t, bad, []message.Destination{message.QueueDest("odd,name")}, nil)
	if _, err := kahadb.PlanMKahaDB(bad); err == nil {
		t.Error("a destination named with a comma was put in a filter")
	}
}
