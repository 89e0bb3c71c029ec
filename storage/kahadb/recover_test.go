package kahadb_test

import (
	"context"
	"fmt"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/kahadb"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

// A transacted add whose commit record comes batches later, as ActiveMQ
// writes it when other work lands between the send and the commit, is
// recovered with its own bytes. Found by the interop test: replay held the
// add in the journal's read buffer, which the next batch overwrote, so the
// message was skipped as undecodable or recovered with another's content.
func TestKahaDBReplayTransactedAddAcrossBatches(t *testing.T) {
	dir := t.TempDir()
	j, err := journal.Open(journal.DefaultOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	q := command.Destination{Type: command.Queue, Name: "tx.q"}
	add := func(i int, tx *command.TransactionInfo) []byte {
		m := &message.Message{ID: fmt.Sprintf("ID:amq-1:1:1:1:%d", i), Destination: message.QueueDest("tx.q"),
			Persistent: true, BodyType: message.TextBody, Body: fmt.Appendf(nil, "body %d", i)}
		frame, err := kahadb.MarshalForTest(m)
		if err != nil {
			t.Fatal(err)
		}
		return command.Encode(nil, &command.AddMessage{Transaction: tx, Destination: q, MessageID: m.ID, Message: frame, Priority: 4})
	}
	tx := command.TransactionInfo{LocalTransactionID: &command.LocalTransactionID{ConnectionID: "ID:amq-1:1", TransactionID: 1}}
	// One batch per Append: the transacted adds, then plain adds whose
	// frames occupy the same place in the read buffer, then the commit.
	for _, recs := range [][][]byte{
		{add(1, &tx), add(2, &tx)},
		{add(3, nil), add(4, nil)},
		{command.Encode(nil, &command.Commit{Transaction: tx})},
	} {
		if _, err := j.Append(recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}

	st, err := kahadb.Open(context.Background(), kahadb.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ss, err := st.OpenShard(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil {
			got[it.Msg.ID] = string(it.Msg.Body)
		}
		return nil
	})
	for i := 1; i <= 4; i++ {
		id := fmt.Sprintf("ID:amq-1:1:1:1:%d", i)
		if want := fmt.Sprintf("body %d", i); got[id] != want {
			t.Errorf("message %s recovered with body %q, want %q (all: %q)", id, got[id], want, got)
		}
	}
}
