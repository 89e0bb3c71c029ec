package memory_test

import (
	"errors"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/memory"
	"wharf/storage/storetest"
)

func TestStoreMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		// Close keeps a memory Store's state and leaves it reusable, so a
		// restart reopens the same value.
		s := memory.New()
		return func() engine.Store { return s }
	})
}

func TestStoreMemoryInvalidOps(t *testing.T) {
	q, top := message.QueueDest("q"), message.TopicDest("t")
	key := engine.SubKey{ClientID: "c", Name: "s"}
	cases := []struct {
		name string
		op   engine.StoreOp
	}{
		{"unknown kind", engine.StoreOp{Kind: 99, Dest: q, Seq: 1}},
		{"zero kind", engine.StoreOp{Dest: q, Seq: 1}},
		{"add without message", engine.StoreOp{Kind: engine.OpAdd, Dest: q, Seq: 1}},
		{"add without destination", engine.StoreOp{Kind: engine.OpAdd, Seq: 1, Msg: &message.Message{}}},
		{"remove without destination", engine.StoreOp{Kind: engine.OpRemove, Seq: 1}},
		{"ack on a queue", engine.StoreOp{Kind: engine.OpAck, Dest: q, Seq: 1, Sub: engine.DurableSub{Key: key}}},
		{"ack without subscription", engine.StoreOp{Kind: engine.OpAck, Dest: top, Seq: 1}},
		{"add-sub on a queue", engine.StoreOp{Kind: engine.OpAddSub, Sub: engine.DurableSub{Key: key, Destination: q}}},
		{"add-sub without key", engine.StoreOp{Kind: engine.OpAddSub, Sub: engine.DurableSub{Destination: top}}},
		{"remove-sub without key", engine.StoreOp{Kind: engine.OpRemoveSub}},
		{"negative redelivery counter", engine.StoreOp{Kind: engine.OpUpdate, Dest: q, Seq: 1, Count: -1}},
		{"remove-dest without destination", engine.StoreOp{Kind: engine.OpRemoveDest}},
		{"add-job without job", engine.StoreOp{Kind: engine.OpAddJob}},
		{"add-job without id", engine.StoreOp{Kind: engine.OpAddJob, Job: &engine.Job{Msg: &message.Message{Destination: q}}}},
		{"add-job without message", engine.StoreOp{Kind: engine.OpAddJob, Job: &engine.Job{ID: "j"}}},
		{"remove-job without id", engine.StoreOp{Kind: engine.OpRemoveJob}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ss, err := memory.New().OpenShard(0, 1)
			if err != nil {
				t.Fatalf("OpenShard(0, 1): got error %v, want nil", err)
			}
			ops := []engine.StoreOp{{Kind: engine.OpAdd, Dest: q, Seq: 7, Msg: &message.Message{ID: "m"}}, tc.op}
			if err := ss.Apply(ops); !errors.Is(err, memory.ErrInvalidOp) {
				t.Errorf("Apply: got error %v, want %v", err, memory.ErrInvalidOp)
			}
			n := 0
			if err := ss.Recover(func(engine.RecoveredItem) error { n++; return nil }); err != nil {
				t.Fatalf("Recover: got error %v, want nil", err)
			}
			if n != 0 {
				t.Errorf("items recovered after a rejected batch: got %d, want 0", n)
			}
		})
	}
}

func TestStoreMemoryDuplicateError(t *testing.T) {
	ss, err := memory.New().OpenShard(0, 1)
	if err != nil {
		t.Fatalf("OpenShard(0, 1): got error %v, want nil", err)
	}
	add := engine.StoreOp{Kind: engine.OpAdd, Dest: message.QueueDest("q"), Seq: 1, Msg: &message.Message{}}
	if err := ss.Apply([]engine.StoreOp{add, add}); !errors.Is(err, memory.ErrDuplicate) {
		t.Errorf("Apply(add, same add): got error %v, want %v", err, memory.ErrDuplicate)
	}
}

func TestStoreMemoryTopicAddWithoutSubs(t *testing.T) {
	ss, err := memory.New().OpenShard(0, 1)
	if err != nil {
		t.Fatalf("OpenShard(0, 1): got error %v, want nil", err)
	}
	op := engine.StoreOp{Kind: engine.OpAdd, Dest: message.TopicDest("t"), Seq: 1, Msg: &message.Message{}}
	if err := ss.Apply([]engine.StoreOp{op}); err != nil {
		t.Fatalf("Apply(topic add without subs): got error %v, want nil", err)
	}
	n := 0
	if err := ss.Recover(func(engine.RecoveredItem) error { n++; return nil }); err != nil {
		t.Fatalf("Recover: got error %v, want nil", err)
	}
	if n != 0 {
		t.Errorf("items recovered after a topic add nobody needs: got %d, want 0", n)
	}
}

func TestStoreMemoryShardLifecycle(t *testing.T) {
	s := memory.New()
	ss, err := s.OpenShard(0, 2)
	if err != nil {
		t.Fatalf("OpenShard(0, 2): got error %v, want nil", err)
	}
	if _, err := s.OpenShard(0, 2); !errors.Is(err, memory.ErrShardOpen) {
		t.Errorf("OpenShard(0, 2) while open: got error %v, want %v", err, memory.ErrShardOpen)
	}
	if _, err := s.OpenShard(1, 3); !errors.Is(err, memory.ErrShardCount) {
		t.Errorf("OpenShard(1, 3) after count 2: got error %v, want %v", err, memory.ErrShardCount)
	}
	for _, c := range [][2]int{{2, 2}, {-1, 2}, {0, 0}} {
		if _, err := s.OpenShard(c[0], c[1]); !errors.Is(err, memory.ErrShardIndex) {
			t.Errorf("OpenShard(%d, %d): got error %v, want %v", c[0], c[1], err, memory.ErrShardIndex)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Store Close: got error %v, want nil", err)
	}
	if err := ss.Apply(nil); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Apply after Store Close: got error %v, want %v", err, memory.ErrClosed)
	}
	if err := ss.Recover(func(engine.RecoveredItem) error { return nil }); !errors.Is(err, memory.ErrClosed) {
		t.Errorf("Recover after Store Close: got error %v, want %v", err, memory.ErrClosed)
	}
	if err := ss.Close(); err != nil {
		t.Errorf("second Close: got error %v, want nil", err)
	}
	ss2, err := s.OpenShard(0, 2)
	if err != nil {
		t.Fatalf("OpenShard(0, 2) after Close: got error %v, want nil", err)
	}
	// Closing the detached handle must not close the new one.
	if err := ss.Close(); err != nil {
		t.Errorf("Close of the old handle: got error %v, want nil", err)
	}
	if err := ss2.Apply(nil); err != nil {
		t.Errorf("Apply on the reopened shard: got error %v, want nil", err)
	}
}
