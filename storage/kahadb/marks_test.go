package kahadb

import (
	"log/slog"
	"slices"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb/command"
)

// A marks record reads back exactly what was written, whatever bytes the
// keys and the topic hold (spaces, quotes, newlines, colons, invalid
// UTF-8), and a damaged one is refused rather than misread.
func TestKahaDBMarksRecordRoundTrip(t *testing.T) {
	keys := []engine.SubKey{
		{ClientID: "paho-1", Name: "AT_LEAST_ONCE:a/b c"},
		{ClientID: "ID:host \"x\":1", Name: "line\nbreak"},
		{ClientID: "\xff\xfe", Name: ""},
	}
	topic := message.TopicDest("t.\" \n.\xff")
	ss := &shardStore{log: slog.New(slog.DiscardHandler), subs: map[engine.SubKey]*subRec{}, marks: map[markKey]uint64{}}
	var want []engine.StoreOp
	for i, k := range keys {
		ss.subs[k] = &subRec{}
		op := engine.StoreOp{Kind: engine.OpDelivered, Dest: topic, Seq: uint64(10 + i), Sub: engine.DurableSub{Key: k}}
		ss.noteMark(&op)
		want = append(want, op)
	}
	ss.addMarksRecord()
	if len(ss.recs) != 1 {
		t.Fatalf("%d records for one batch of marks, want 1", len(ss.recs))
	}
	c, err := command.Decode(ss.recs[0])
	tr, ok := c.(*command.Trace)
	if err != nil || !ok {
		t.Fatalf("marks record decodes to %T, %v; want a trace", c, err)
	}
	got, err := decodeMarks(tr.Message)
	if err != nil {
		t.Fatal(err)
	}
	sortOps := func(ops []engine.StoreOp) {
		slices.SortFunc(ops, func(a, b engine.StoreOp) int { return int(a.Seq) - int(b.Seq) })
	}
	sortOps(got)
	if !slices.EqualFunc(got, want, func(a, b engine.StoreOp) bool {
		return a.Kind == b.Kind && a.Dest == b.Dest && a.Seq == b.Seq && a.Sub.Key == b.Sub.Key
	}) {
		t.Fatalf("marks read back %+v, want %+v", got, want)
	}
	for _, bad := range []string{deliveredPrefix, deliveredPrefix + `"a" "b" 2 "t"`, deliveredPrefix + `"a" "b" x "t" 1`,
		deliveredPrefix + `"a" "b" 99 "t" 1`, deliveredPrefix + `"a" "b" 0 "queue" 1`, deliveredPrefix + `"a "b" 2 "t" 1`, deliveredPrefix + `"a" "b" 2 "t" 1 extra`} {
		if ops, err := decodeMarks(bad); err == nil {
			t.Errorf("decodeMarks(%q) = %+v, want an error", bad, ops)
		}
	}
}
