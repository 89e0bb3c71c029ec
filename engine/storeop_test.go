package engine

import (
	"errors"
	"testing"

	"wharf/engine/message"
)

// Check refuses what every store refuses, and String names the operation
// in the error a store returns.
func TestStoreOpCheckAndString(t *testing.T) {
	q, topic := message.QueueDest("q"), message.TopicDest("t")
	sub := DurableSub{Key: SubKey{ClientID: "c", Name: "s"}, Destination: topic}
	for _, tc := range []struct {
		op    StoreOp
		valid bool
		name  string
	}{
		{StoreOp{Kind: OpAdd, Dest: q, Seq: 3, Msg: &message.Message{}}, true, "add queue://q seq 3"},
		{StoreOp{Kind: OpAdd, Dest: q, Seq: 3}, false, "add queue://q seq 3"},
		{StoreOp{Kind: OpAck, Dest: q, Seq: 1, Sub: sub}, false, "ack queue://q seq 1 sub c:s"},
		{StoreOp{Kind: OpAck, Dest: topic, Seq: 1, Sub: sub}, true, "ack topic://t seq 1 sub c:s"},
		{StoreOp{Kind: OpAddSub, Sub: sub}, true, "add-sub c:s"},
		{StoreOp{Kind: OpAddJob}, false, "add-job <nil>"},
		{StoreOp{Kind: 99, Dest: q}, false, "kind(99) queue://q seq 0"},
	} {
		err := tc.op.Check()
		if tc.valid != (err == nil) || err != nil && !errors.Is(err, ErrInvalidStoreOp) {
			t.Errorf("%s: Check() = %v, want valid %v", tc.name, err, tc.valid)
		}
		if got := tc.op.String(); got != tc.name {
			t.Errorf("String() = %q, want %q", got, tc.name)
		}
	}
}
