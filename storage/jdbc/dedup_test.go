package jdbc_test

import (
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/storetest"
)

// TestJDBCProducerAudit: the JDBC store gives back the producer audit of
// the messages it still holds, as ActiveMQ's JDBC store answers
// getLastProducerSequenceId (MAX(MSGID_SEQ) of the stored rows).
func TestJDBCProducerAudit(t *testing.T) {
	storetest.RunProducerAudit(t, func(t *testing.T) func() engine.Store {
		o := newDB(t)
		return func() engine.Store { return open(t, o) }
	}, false)
}

// TestJDBCDuplicateAddStored: ActiveMQ's JDBC store rejects an add of a
// message id it holds only with enableAudit="true" on the adapter
// (JDBCMessageStore.addMessage; default false): by default both copies
// are stored, and so they are in Wharf's.
func TestJDBCDuplicateAddStored(t *testing.T) {
	o := newDB(t)
	s, ss := openOneShard(t, o)
	q := message.QueueDest("jdbc.dup")
	m := textMsg(q, 1, "first")
	again := textMsg(q, 1, "again")
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 1, Msg: m}}); err != nil {
		t.Fatal(err)
	}
	if err := ss.Apply([]engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 2, Msg: again}}); err != nil {
		t.Fatalf("second add of %s: %v, want it stored as ActiveMQ's JDBC store does by default", m.ID, err)
	}
	ss.Close()
	s.Close()
	s, ss = openOneShard(t, o)
	defer s.Close()
	defer ss.Close()
	var got []string
	if err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Msg != nil {
			got = append(got, string(it.Msg.Body))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "first" || got[1] != "again" {
		t.Fatalf("recovered %q, want [first again]", got)
	}
}
