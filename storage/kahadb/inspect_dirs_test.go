package kahadb_test

import (
	"path/filepath"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
)

// wharf kahadb commands given an mKahaDB directory inspect each child.
func TestKahaDBDirsOfMultiKahaDB(t *testing.T) {
	dir := t.TempDir()
	st := openMulti(t, twoFilters(dir))
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	orders, other := message.QueueDest("orders.eu"), message.QueueDest("billing")
	if err := ss.Apply([]engine.StoreOp{
		{Kind: engine.OpAdd, Dest: orders, Seq: 1, Msg: queueMsg(orders, 1)},
		{Kind: engine.OpAdd, Dest: other, Seq: 1, Msg: queueMsg(other, 1)},
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	dirs, err := kahadb.Dirs(dir)
	if err != nil {
		t.Fatalf("Dirs of an mKahaDB directory: %v", err)
	}
	var names []string
	for _, d := range dirs {
		rel, _ := filepath.Rel(dir, d)
		names = append(names, rel)
	}
	got := strings.Join(names, " ")
	for _, want := range []string{kahadb.ChildName(message.QueueDest("orders.>")), kahadb.ChildName(message.Destination{})} {
		if !strings.Contains(got, want) {
			t.Fatalf("Dirs = %v, want a journal under %s", names, want)
		}
	}
	if adds := journalAdds(t, dir); adds["queue://orders.eu"] != 1 || adds["queue://billing"] != 1 {
		t.Fatalf("pending messages read through Dirs: %v", adds)
	}
}
