package memory_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/storage/memory"
)

// model is a naive, obviously correct memory store: slices scanned
// linearly. TestStoreMemoryModel checks the real one against it after every
// random batch, failed ones included, which exercises the undo log and the
// compaction that the shared suite reaches only along a few paths.
type model struct {
	subs  []engine.DurableSub // in first-add order
	dests []*modelDest        // in creation order
	jobs  []engine.Job        // in first-add order
}

type modelDest struct {
	d    message.Destination
	msgs []modelMsg
}

type modelMsg struct {
	seq     uint64
	msg     *message.Message
	counter int32
	subs    []engine.SubKey
}

func (m *model) clone() *model {
	c := &model{subs: slices.Clone(m.subs), jobs: slices.Clone(m.jobs)}
	for _, d := range m.dests {
		nd := &modelDest{d: d.d}
		for _, e := range d.msgs {
			e.subs = slices.Clone(e.subs)
			nd.msgs = append(nd.msgs, e)
		}
		c.dests = append(c.dests, nd)
	}
	return c
}

func (m *model) dest(d message.Destination) *modelDest {
	for _, md := range m.dests {
		if md.d == d {
			return md
		}
	}
	return nil
}

func (md *modelDest) find(seq uint64) int {
	if md == nil {
		return -1
	}
	return slices.IndexFunc(md.msgs, func(e modelMsg) bool { return e.seq == seq })
}

func (m *model) ack(md *modelDest, i int, k engine.SubKey) {
	e := &md.msgs[i]
	j := slices.Index(e.subs, k)
	if j < 0 {
		return
	}
	e.subs = slices.Delete(e.subs, j, j+1)
	if len(e.subs) == 0 {
		md.msgs = slices.Delete(md.msgs, i, i+1)
	}
}

func (m *model) removeSub(k engine.SubKey) {
	m.subs = slices.DeleteFunc(m.subs, func(s engine.DurableSub) bool { return s.Key == k })
	for _, md := range m.dests {
		if !md.d.Type.IsTopic() {
			continue
		}
		for i := len(md.msgs) - 1; i >= 0; i-- {
			m.ack(md, i, k)
		}
	}
}

// apply returns false when the batch must fail (a duplicate add).
func (m *model) apply(ops []engine.StoreOp) bool {
	for _, op := range ops {
		md := m.dest(op.Dest)
		switch op.Kind {
		case engine.OpAdd:
			if md.find(op.Seq) >= 0 {
				return false
			}
			if op.Dest.Type.IsTopic() && len(op.Subs) == 0 {
				continue
			}
			if md == nil {
				md = &modelDest{d: op.Dest}
				m.dests = append(m.dests, md)
			}
			e := modelMsg{seq: op.Seq, msg: op.Msg, counter: op.Msg.RedeliveryCounter}
			if op.Dest.Type.IsTopic() {
				e.subs = slices.Clone(op.Subs)
			}
			md.msgs = append(md.msgs, e)
		case engine.OpAddDest:
			if md == nil {
				m.dests = append(m.dests, &modelDest{d: op.Dest})
			}
		case engine.OpRemove:
			if i := md.find(op.Seq); i >= 0 {
				md.msgs = slices.Delete(md.msgs, i, i+1)
			}
		case engine.OpAck:
			if i := md.find(op.Seq); i >= 0 {
				m.ack(md, i, op.Sub.Key)
			}
		case engine.OpUpdate:
			if i := md.find(op.Seq); i >= 0 {
				md.msgs[i].counter = op.Count
			}
		case engine.OpAddSub:
			if i := slices.IndexFunc(m.subs, func(s engine.DurableSub) bool { return s.Key == op.Sub.Key }); i >= 0 {
				m.subs[i] = op.Sub
			} else {
				m.subs = append(m.subs, op.Sub)
			}
		case engine.OpRemoveSub:
			m.removeSub(op.Sub.Key)
		case engine.OpRemoveDest:
			if op.Dest.Type.IsTopic() {
				for _, s := range slices.Clone(m.subs) {
					if s.Destination == op.Dest {
						m.removeSub(s.Key)
					}
				}
			}
			m.dests = slices.DeleteFunc(m.dests, func(x *modelDest) bool { return x.d == op.Dest })
		case engine.OpAddJob:
			if i := slices.IndexFunc(m.jobs, func(j engine.Job) bool { return j.ID == op.Job.ID }); i >= 0 {
				m.jobs[i] = *op.Job
			} else {
				m.jobs = append(m.jobs, *op.Job)
			}
		case engine.OpRemoveJob:
			m.jobs = slices.DeleteFunc(m.jobs, func(j engine.Job) bool { return j.ID == op.JobID })
		}
	}
	return true
}

// lines renders recovered state one item a line, subscriptions of a message
// sorted, so that the model and the store compare as text.
func (m *model) lines() []string {
	var out []string
	for _, md := range m.dests {
		out = append(out, "dest "+md.d.String())
	}
	for _, s := range m.subs {
		out = append(out, fmt.Sprintf("sub %+v", s))
	}
	for _, md := range m.dests {
		for _, e := range md.msgs {
			out = append(out, msgLine(md.d, e.seq, e.msg.ID, e.counter, e.subs))
		}
	}
	for _, j := range m.jobs {
		out = append(out, jobLine(j))
	}
	return out
}

func jobLine(j engine.Job) string {
	return fmt.Sprintf("job %s msg=%s next=%d repeat=%d", j.ID, j.Msg.ID, j.Next, j.Repeat)
}

func msgLine(d message.Destination, seq uint64, id string, counter int32, subs []engine.SubKey) string {
	subs = slices.Clone(subs)
	slices.SortFunc(subs, func(a, b engine.SubKey) int { return cmp.Compare(a.String(), b.String()) })
	return fmt.Sprintf("msg %s %d %s counter=%d subs=%v", d, seq, id, counter, subs)
}

func recoveredLines(t *testing.T, ss engine.ShardStore) []string {
	t.Helper()
	var out []string
	err := ss.Recover(func(it engine.RecoveredItem) error {
		if it.Created {
			out = append(out, "dest "+it.Dest.String())
			return nil
		}
		if it.Sub != nil {
			out = append(out, fmt.Sprintf("sub %+v", *it.Sub))
			return nil
		}
		if it.Job != nil {
			out = append(out, jobLine(*it.Job))
			return nil
		}
		out = append(out, msgLine(it.Dest, it.Seq, it.Msg.ID, it.Msg.RedeliveryCounter, it.Subs))
		return nil
	})
	if err != nil {
		t.Fatalf("Recover: got error %v, want nil", err)
	}
	return out
}

func TestStoreMemoryModel(t *testing.T) {
	const batches = 5_000
	r := rand.New(rand.NewPCG(1, 2))
	dests := []message.Destination{message.QueueDest("q1"), message.QueueDest("q2"), message.TopicDest("t1"), message.TopicDest("t2")}
	subs := []engine.DurableSub{
		{Key: engine.SubKey{ClientID: "a", Name: "1"}, Destination: dests[2]},
		{Key: engine.SubKey{ClientID: "b", Name: "2"}, Destination: dests[2], Selector: "x > 1"},
		{Key: engine.SubKey{ClientID: "c", Name: "3"}, Destination: dests[3]},
		{Key: engine.SubKey{ClientID: "d", Name: "4"}, Destination: message.TopicDest("t.>")},
	}
	next := map[message.Destination]uint64{}
	msgs := 0

	s := memory.New()
	ss, err := s.OpenShard(0, 1)
	if err != nil {
		t.Fatalf("OpenShard(0, 1): got error %v, want nil", err)
	}
	want := &model{}
	for b := range batches {
		var ops []engine.StoreOp
		for range 1 + r.IntN(8) {
			d := dests[r.IntN(len(dests))]
			// Sequences mostly grow; some reach back, so that removes miss
			// and adds collide.
			seq := next[d] + 1
			if r.IntN(4) == 0 && next[d] > 0 {
				seq = next[d] - r.Uint64N(min(next[d], 50)) // recent ones are likely still stored
			}
			// Removes, acks and updates mostly hit a stored message, so
			// that the state stays small; some miss.
			target := 1 + r.Uint64N(next[d]+1)
			if md := want.dest(d); md != nil && len(md.msgs) > 0 && r.IntN(5) > 0 {
				target = md.msgs[r.IntN(len(md.msgs))].seq
			}
			var op engine.StoreOp
			switch p := r.IntN(100); {
			case p < 40:
				if seq > next[d] {
					next[d] = seq
				}
				msgs++
				m := &message.Message{ID: fmt.Sprintf("m%d", msgs), Destination: d, RedeliveryCounter: int32(r.IntN(2))}
				op = engine.StoreOp{Kind: engine.OpAdd, Dest: d, Seq: seq, Msg: m}
				for _, s := range subs {
					if r.IntN(2) == 0 {
						op.Subs = append(op.Subs, s.Key)
					}
				}
			case p < 70:
				op = engine.StoreOp{Kind: engine.OpRemove, Dest: d, Seq: target}
			case p < 88:
				if !d.Type.IsTopic() {
					continue
				}
				op = engine.StoreOp{Kind: engine.OpAck, Dest: d, Seq: target, Sub: engine.DurableSub{Key: subs[r.IntN(len(subs))].Key}}
			case p < 93:
				op = engine.StoreOp{Kind: engine.OpUpdate, Dest: d, Seq: target, Count: int32(r.IntN(5))}
			case p < 97:
				op = engine.StoreOp{Kind: engine.OpAddSub, Sub: subs[r.IntN(len(subs))]}
			case p < 98:
				op = engine.StoreOp{Kind: engine.OpRemoveSub, Sub: engine.DurableSub{Key: subs[r.IntN(len(subs))].Key}}
			case p < 99 && r.IntN(4) == 0:
				// A destination created with nothing in it, or one
				// the shard holds (no change).
				op = engine.StoreOp{Kind: engine.OpAddDest, Dest: d}
			case p < 99 && r.IntN(3) > 0:
				// Scheduled jobs: a few ids, added (or rescheduled) and
				// removed, in batches that may fail.
				id := fmt.Sprintf("job%d", r.IntN(6))
				if r.IntN(3) == 0 {
					op = engine.StoreOp{Kind: engine.OpRemoveJob, JobID: id}
					break
				}
				msgs++
				op = engine.StoreOp{Kind: engine.OpAddJob, Job: &engine.Job{
					ID: id, Msg: &message.Message{ID: fmt.Sprintf("m%d", msgs), Destination: d},
					Next: int64(r.IntN(1000)), Repeat: int32(r.IntN(3)),
				}}
			default:
				op = engine.StoreOp{Kind: engine.OpRemoveDest, Dest: d}
			}
			ops = append(ops, op)
		}
		next := want.clone()
		ok := next.apply(ops)
		err := ss.Apply(ops)
		if ok != (err == nil) {
			t.Fatalf("batch %d %v: got error %v, want failure %v", b, ops, err, !ok)
		}
		if ok {
			want = next
		}
		if got, w := recoveredLines(t, ss), want.lines(); !slices.Equal(got, w) {
			t.Fatalf("batch %d (%d ops, failed %v): recovered state differs:\n got  %q\n want %q", b, len(ops), !ok, got, w)
		}
		if b%500 == 499 { // restart now and then
			if err := ss.Close(); err != nil {
				t.Fatalf("Close: got error %v, want nil", err)
			}
			if ss, err = s.OpenShard(0, 1); err != nil {
				t.Fatalf("OpenShard(0, 1) again: got error %v, want nil", err)
			}
		}
	}
}
