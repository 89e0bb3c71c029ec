package jdbc_test

import (
	"context"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// TestJDBCWildcardSubRows: a wildcard durable subscription gets
// ActiveMQ's row per topic it stores a message for (CONTAINER the topic,
// SUB_DEST the pattern, LAST_ACKED_ID just below that first message,
// its selector), made once; removing the subscription removes them all.
func TestJDBCWildcardSubRows(t *testing.T) {
	o := newDB(t)
	s, ss := openOneShard(t, o)
	defer s.Close()
	k := engine.SubKey{ClientID: "c", Name: "w"}
	pattern := message.Destination{Type: message.Topic, Name: "news.>"}
	a := message.Destination{Type: message.Topic, Name: "news.a"}
	b := message.Destination{Type: message.Topic, Name: "news.b"}
	apply(t, ss, []engine.StoreOp{{Kind: engine.OpAddSub, Sub: engine.DurableSub{Key: k, Destination: pattern, Selector: "i > 0"}}})
	add := func(d message.Destination, seq uint64) engine.StoreOp {
		return engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: seq, Msg: textMsg(d, seq, "x"), Subs: []engine.SubKey{k}}
	}
	apply(t, ss, []engine.StoreOp{add(a, 1), add(b, 1), add(a, 2)})
	c := (&xaFixture{o: o}).conn(t)
	ctx := context.Background()
	rows, err := c.Query(ctx, "SELECT a.CONTAINER, a.SUB_DEST, a.SELECTOR, a.LAST_ACKED_ID, (SELECT MIN(m.ID) FROM ACTIVEMQ_MSGS m WHERE m.CONTAINER = a.CONTAINER) FROM ACTIVEMQ_ACKS a WHERE CLIENT_ID='c' AND SUB_NAME='w' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var container, subDest, sel string
		var last, first int64
		if err := rows.Scan(&container, &subDest, &sel, &last, &first); err != nil {
			t.Fatal(err)
		}
		got = append(got, container)
		if subDest != "topic://news.>" || sel != "i > 0" || last != first-1 {
			t.Errorf("row of %s: SUB_DEST %q, SELECTOR %q, LAST_ACKED_ID %d; want topic://news.>, i > 0, %d", container, subDest, sel, last, first-1)
		}
	}
	rows.Close()
	if len(got) != 2 || got[0] != "topic://news.a" || got[1] != "topic://news.b" {
		t.Fatalf("ActiveMQ rows of the wildcard subscription: %q, want one per topic (news.a, news.b)", got)
	}
	apply(t, ss, []engine.StoreOp{{Kind: engine.OpRemoveSub, Sub: engine.DurableSub{Key: k}}})
	var n int
	if err := c.QueryRow(ctx, "SELECT COUNT(*) FROM ACTIVEMQ_ACKS").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("after the unsubscribe: %d ACTIVEMQ_ACKS rows, want 0", n)
	}
}
