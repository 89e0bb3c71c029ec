package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// harness drives one subtest's store: it opens count shards, applies
// batches, restarts and checks recovered state.
type harness struct {
	t      *testing.T
	reopen func() engine.Store
	count  int
	store  engine.Store
	shards []engine.ShardStore // nil while closed
}

// start makes a fresh backing location and opens count shards over it. The
// store is closed when the test ends.
func start(t *testing.T, newStore func(*testing.T) func() engine.Store, count int) *harness {
	t.Helper()
	h := &harness{t: t, reopen: newStore(t), count: count}
	h.open()
	t.Cleanup(h.close)
	return h
}

func (h *harness) open() {
	h.t.Helper()
	h.store = h.reopen()
	if h.store == nil {
		h.t.Fatalf("reopen: got nil Store, want a Store")
	}
	h.shards = make([]engine.ShardStore, h.count)
	for i := range h.shards {
		ss, err := h.store.OpenShard(i, h.count)
		if err != nil {
			h.t.Fatalf("OpenShard(%d, %d): got error %v, want nil", i, h.count, err)
		}
		h.shards[i] = ss
	}
}

// close closes every shard, then the store. It is idempotent.
func (h *harness) close() {
	h.t.Helper()
	for i, ss := range h.shards {
		if ss == nil {
			continue
		}
		if err := ss.Close(); err != nil {
			h.t.Errorf("shard %d Close: got error %v, want nil", i, err)
		}
	}
	h.shards = nil
	if h.store != nil {
		if err := h.store.Close(); err != nil {
			h.t.Errorf("Store Close: got error %v, want nil", err)
		}
		h.store = nil
	}
}

// restart closes everything and reopens it over the same data, as a broker
// restart does.
func (h *harness) restart() {
	h.t.Helper()
	h.close()
	h.open()
}

func (h *harness) apply(shard int, ops ...engine.StoreOp) {
	h.t.Helper()
	if err := h.shards[shard].Apply(ops); err != nil {
		h.t.Fatalf("shard %d Apply(%s): got error %v, want nil", shard, opsString(ops), err)
	}
}

// recoverAll returns every recovered item; it fails the test on an error or
// an item that is not exactly one of subscription and message.
func (h *harness) recoverAll(shard int) []engine.RecoveredItem {
	h.t.Helper()
	var items []engine.RecoveredItem
	err := h.shards[shard].Recover(func(it engine.RecoveredItem) error {
		if it.Sub != nil {
			s := *it.Sub // the store may reuse what it points to
			it.Sub = &s
		}
		it.Subs, it.Delivered = slices.Clone(it.Subs), slices.Clone(it.Delivered)
		items = append(items, it)
		return nil
	})
	if err != nil {
		h.t.Fatalf("shard %d Recover: got error %v, want nil", shard, err)
	}
	for i, it := range items {
		n := 0
		for _, set := range []bool{it.Created, it.Sub != nil, it.Msg != nil, it.Job != nil, it.Tx != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			h.t.Fatalf("shard %d Recover item %d: got Created %v, Sub %v, Msg %v, Job %v and Tx %v, want exactly one set", shard, i, it.Created, it.Sub, it.Msg, it.Job, it.Tx)
		}
		if it.Job != nil {
			j := *it.Job // the store may reuse what it points to
			items[i].Job = &j
		}
	}
	h.checkStubs(shard, items)
	return items
}

// checkStubs, for a store that recovers stubs (engine.MessageLoader),
// checks that RecoverStubs yields what Recover yielded (full), in the same
// order, and that each stub loads the message Recover handed, its
// priority, expiration and redelivery counter given right.
func (h *harness) checkStubs(shard int, full []engine.RecoveredItem) {
	h.t.Helper()
	ld, ok := h.shards[shard].(engine.MessageLoader)
	if !ok {
		return
	}
	var items []engine.RecoveredItem
	err := ld.RecoverStubs(func(it engine.RecoveredItem) error {
		it.Subs, it.Delivered = slices.Clone(it.Subs), slices.Clone(it.Delivered)
		items = append(items, it)
		return nil
	})
	if err != nil {
		h.t.Fatalf("shard %d RecoverStubs: got error %v, want nil", shard, err)
	}
	if len(items) != len(full) {
		h.t.Fatalf("shard %d RecoverStubs: got %d items, want %d as Recover", shard, len(items), len(full))
	}
	for i, it := range items {
		want := full[i]
		if want.Msg == nil {
			if it.Msg != nil || it.Ref != (engine.StoreRef{}) || it.Created != want.Created || (it.Created && it.Dest != want.Dest) ||
				(it.Sub == nil) != (want.Sub == nil) || (it.Job == nil) != (want.Job == nil) || (it.Tx == nil) != (want.Tx == nil) {
				h.t.Errorf("shard %d RecoverStubs item %d: got %+v, want the kind Recover yielded (%+v)", shard, i, it, want)
			}
			continue
		}
		if it.Dest != want.Dest || it.Seq != want.Seq || !sameKeys(it.Subs, want.Subs) || !sameKeys(it.Delivered, want.Delivered) {
			h.t.Errorf("shard %d RecoverStubs item %d: got %s seq %d subs %v delivered %v, want %s seq %d subs %v delivered %v",
				shard, i, it.Dest, it.Seq, it.Subs, it.Delivered, want.Dest, want.Seq, want.Subs, want.Delivered)
			continue
		}
		m := it.Msg
		if m == nil {
			if it.Ref.Len == 0 {
				h.t.Errorf("shard %d RecoverStubs item %d (%s seq %d): got neither a message nor a reference", shard, i, it.Dest, it.Seq)
				continue
			}
			w := want.Msg
			if it.Priority != w.Priority || it.Expiration != w.Expiration || it.Redeliveries != w.RedeliveryCounter {
				h.t.Errorf("shard %d stub %s seq %d: got priority %d, expiration %d, redeliveries %d, want %d, %d, %d",
					shard, it.Dest, it.Seq, it.Priority, it.Expiration, it.Redeliveries, w.Priority, w.Expiration, w.RedeliveryCounter)
			}
			if it.Size < int64(len(w.Body)) || it.Size <= 0 {
				h.t.Errorf("shard %d stub %s seq %d: got size %d, want at least the body's %d bytes", shard, it.Dest, it.Seq, it.Size, len(w.Body))
			}
			var err error
			if m, err = ld.LoadMessage(it.Ref); err != nil {
				h.t.Errorf("shard %d LoadMessage(%+v) of %s seq %d: got error %v, want nil", shard, it.Ref, it.Dest, it.Seq, err)
				continue
			}
			m.RedeliveryCounter = it.Redeliveries
		}
		if d := diffMessage(m, want.Msg); len(d) > 0 {
			h.t.Errorf("shard %d stub %s seq %d loaded: differs from Recover's message:\n%s", shard, it.Dest, it.Seq, strings.Join(d, "\n"))
		}
	}
}

func sameKeys(a, b []engine.SubKey) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	less := func(x, y engine.SubKey) int { return strings.Compare(x.String(), y.String()) }
	slices.SortFunc(a, less)
	slices.SortFunc(b, less)
	return slices.Equal(a, b)
}

// stored is a message the store should hold.
type stored struct {
	dest message.Destination
	seq  uint64
	msg  *message.Message
	subs []engine.SubKey // topic: who has not acknowledged it yet
}

// state is what a shard should recover.
type state struct {
	subs []engine.DurableSub
	msgs []stored // in add order per destination
	jobs []engine.Job
	txs  []engine.PreparedTx // prepared transactions, compared as a set by XID
}

// check recovers the shard and compares it with want: subscriptions first
// and as a set; messages per destination in order, each with every field
// and its remaining subscriptions as a set. The destinations it leaves to
// checkDests.
func (h *harness) check(shard int, want state) {
	h.t.Helper()
	items := h.recoverAll(shard)
	var gotSubs []engine.DurableSub
	var gotMsgs []stored
	var gotJobs []engine.Job
	var gotTxs []engine.PreparedTx
	for i, it := range items {
		if it.Created {
			if i > 0 && !items[i-1].Created {
				h.t.Errorf("shard %d Recover item %d: got destination %s after another kind of item, want every destination first", shard, i, it.Dest)
			}
			continue
		}
		if it.Job != nil {
			gotJobs = append(gotJobs, *it.Job)
			continue
		}
		if len(gotJobs) > 0 {
			h.t.Errorf("shard %d Recover item %d: got a subscription, message or transaction after a job, want every job last", shard, i)
		}
		if it.Tx != nil {
			gotTxs = append(gotTxs, *it.Tx)
			continue
		}
		if len(gotTxs) > 0 {
			h.t.Errorf("shard %d Recover item %d: got a subscription or message after a prepared transaction, want transactions after every message", shard, i)
		}
		if it.Sub != nil {
			if len(gotMsgs) > 0 {
				h.t.Errorf("shard %d Recover item %d: got subscription %s after a message, want every subscription first", shard, i, it.Sub.Key)
			}
			gotSubs = append(gotSubs, *it.Sub)
			continue
		}
		gotMsgs = append(gotMsgs, stored{dest: it.Dest, seq: it.Seq, msg: it.Msg, subs: it.Subs})
	}
	h.checkSubs(shard, gotSubs, want.subs)
	h.checkMsgs(shard, gotMsgs, want.msgs)
	h.checkJobs(shard, gotJobs, want.jobs)
	h.checkTxs(shard, gotTxs, want.txs)
}

// checkDests recovers the shard and compares the destinations it knows
// (RecoveredItem.Created) with want, as a set; they must come first.
func (h *harness) checkDests(shard int, want ...message.Destination) {
	h.t.Helper()
	var got []message.Destination
	for i, it := range h.recoverAll(shard) {
		if !it.Created {
			continue
		}
		if len(got) != i {
			h.t.Errorf("shard %d Recover item %d: got destination %s after another kind of item, want every destination first", shard, i, it.Dest)
		}
		got = append(got, it.Dest)
	}
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, compareDests)
	slices.SortFunc(want, compareDests)
	if !slices.Equal(got, want) {
		h.t.Errorf("shard %d recovered destinations: got %v, want %v", shard, got, want)
	}
}

// checkTxs compares prepared transactions as a set by XID: the adds in
// order per destination with every field, the acks as a set.
func (h *harness) checkTxs(shard int, got, want []engine.PreparedTx) {
	h.t.Helper()
	byXID := func(a, b engine.PreparedTx) int { return strings.Compare(a.XID.String(), b.XID.String()) }
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, byXID)
	slices.SortFunc(want, byXID)
	xids := func(ts []engine.PreparedTx) []string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = t.XID.String()
		}
		return s
	}
	if g, w := xids(got), xids(want); !slices.Equal(g, w) {
		h.t.Errorf("shard %d recovered prepared transactions: got %v, want %v", shard, g, w)
		return
	}
	byAck := func(a, b engine.TxAck) int {
		if c := compareDests(a.Dest, b.Dest); c != 0 {
			return c
		}
		if a.Seq != b.Seq {
			return cmp.Compare(a.Seq, b.Seq)
		}
		return compareKeys(a.Sub, b.Sub)
	}
	for i := range want {
		g, w := got[i], want[i]
		x := w.XID.String()
		// In order per destination: a store split by destination
		// (mKahaDB) cannot keep the order between them.
		byDest := func(a, b *message.Message) int { return compareDests(a.Destination, b.Destination) }
		g.Adds, w.Adds = slices.Clone(g.Adds), slices.Clone(w.Adds)
		slices.SortStableFunc(g.Adds, byDest)
		slices.SortStableFunc(w.Adds, byDest)
		if len(g.Adds) != len(w.Adds) {
			h.t.Errorf("shard %d transaction %s: got %d adds, want %d", shard, x, len(g.Adds), len(w.Adds))
		} else {
			for j := range w.Adds {
				for _, line := range diffMessage(g.Adds[j], w.Adds[j]) {
					h.t.Errorf("shard %d transaction %s add %d: %s", shard, x, j, line)
				}
			}
		}
		ga, wa := slices.Clone(g.Acks), slices.Clone(w.Acks)
		slices.SortFunc(ga, byAck)
		slices.SortFunc(wa, byAck)
		if !slices.Equal(ga, wa) {
			h.t.Errorf("shard %d transaction %s acks:\n got  %+v\n want %+v", shard, x, ga, wa)
		}
	}
}

// checkJobs compares jobs as a set by ID, every field and the message.
func (h *harness) checkJobs(shard int, got, want []engine.Job) {
	h.t.Helper()
	byID := func(a, b engine.Job) int { return strings.Compare(a.ID, b.ID) }
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, byID)
	slices.SortFunc(want, byID)
	ids := func(js []engine.Job) []string {
		s := make([]string, len(js))
		for i, j := range js {
			s[i] = j.ID
		}
		return s
	}
	if g, w := ids(got), ids(want); !slices.Equal(g, w) {
		h.t.Errorf("shard %d recovered jobs: got %v, want %v", shard, g, w)
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		gf, wf := g, w // every field but the message, compared below
		gf.Msg, wf.Msg = nil, nil
		if gf != wf {
			h.t.Errorf("shard %d job %s:\n got  %+v\n want %+v", shard, w.ID, gf, wf)
		}
		for _, line := range diffMessage(g.Msg, w.Msg) {
			h.t.Errorf("shard %d job %s message: %s", shard, w.ID, line)
		}
	}
}

func (h *harness) checkSubs(shard int, got, want []engine.DurableSub) {
	h.t.Helper()
	byKey := func(a, b engine.DurableSub) int { return compareKeys(a.Key, b.Key) }
	got, want = slices.Clone(got), slices.Clone(want)
	slices.SortFunc(got, byKey)
	slices.SortFunc(want, byKey)
	if !slices.Equal(got, want) {
		h.t.Errorf("shard %d recovered subscriptions:\n got  %+v\n want %+v", shard, got, want)
	}
}

func (h *harness) checkMsgs(shard int, got, want []stored) {
	h.t.Helper()
	gotBy, gotDests := groupByDest(got)
	wantBy, wantDests := groupByDest(want)
	slices.SortFunc(gotDests, compareDests)
	slices.SortFunc(wantDests, compareDests)
	if !slices.Equal(gotDests, wantDests) {
		h.t.Errorf("shard %d recovered destinations: got %v, want %v", shard, gotDests, wantDests)
	}
	for _, d := range wantDests {
		g, w := gotBy[d], wantBy[d]
		if gs, ws := seqs(g), seqs(w); !slices.Equal(gs, ws) {
			h.t.Errorf("shard %d %s: recovered sequences differ: %s", shard, d, seqDiff(gs, ws))
			continue
		}
		for i := range w {
			for _, line := range diffMessage(g[i].msg, w[i].msg) {
				h.t.Errorf("shard %d %s seq %d: %s", shard, d, w[i].seq, line)
			}
			if gk, wk := sortedKeys(g[i].subs), sortedKeys(w[i].subs); !slices.Equal(gk, wk) {
				h.t.Errorf("shard %d %s seq %d: remaining subscriptions: got %s, want %s", shard, d, w[i].seq, keysString(gk), keysString(wk))
			}
		}
	}
}

func groupByDest(ms []stored) (map[message.Destination][]stored, []message.Destination) {
	by := make(map[message.Destination][]stored)
	var dests []message.Destination
	for _, m := range ms {
		if _, ok := by[m.dest]; !ok {
			dests = append(dests, m.dest)
		}
		by[m.dest] = append(by[m.dest], m)
	}
	return by, dests
}

func compareDests(a, b message.Destination) int {
	if a.Type != b.Type {
		return int(a.Type) - int(b.Type)
	}
	switch {
	case a.Name < b.Name:
		return -1
	case a.Name > b.Name:
		return 1
	}
	return 0
}

func seqs(ms []stored) []uint64 {
	s := make([]uint64, len(ms))
	for i, m := range ms {
		s[i] = m.seq
	}
	return s
}

// seqDiff describes two differing sequence lists briefly: lists of thousands
// are summarised at their first difference.
func seqDiff(got, want []uint64) string {
	if len(got) <= 20 && len(want) <= 20 {
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	around := func(s []uint64) []uint64 { return s[max(0, i-3):min(len(s), i+4)] }
	return fmt.Sprintf("got %d seqs, want %d; first difference at index %d: got %v..., want %v...",
		len(got), len(want), i, around(got), around(want))
}

func opsString(ops []engine.StoreOp) string {
	if len(ops) > 4 {
		return fmt.Sprintf("%d ops: %s ...", len(ops), opsString(ops[:4]))
	}
	s := ""
	for i := range ops {
		if i > 0 {
			s += ", "
		}
		s += opString(&ops[i])
	}
	return s
}

func opString(op *engine.StoreOp) string {
	switch op.Kind {
	case engine.OpAdd:
		return fmt.Sprintf("add %s seq %d subs %s", op.Dest, op.Seq, keysString(op.Subs))
	case engine.OpRemove:
		return fmt.Sprintf("remove %s seq %d", op.Dest, op.Seq)
	case engine.OpAck:
		return fmt.Sprintf("ack %s seq %d by %s", op.Dest, op.Seq, op.Sub.Key)
	case engine.OpAddSub:
		return fmt.Sprintf("add-sub %s on %s", op.Sub.Key, op.Sub.Destination)
	case engine.OpRemoveSub:
		return fmt.Sprintf("remove-sub %s", op.Sub.Key)
	case engine.OpUpdate:
		return fmt.Sprintf("update %s seq %d counter %d", op.Dest, op.Seq, op.Count)
	case engine.OpRemoveDest:
		return fmt.Sprintf("remove-dest %s", op.Dest)
	case engine.OpAddDest:
		return fmt.Sprintf("add-dest %s", op.Dest)
	case engine.OpAddJob:
		return fmt.Sprintf("add-job %s next %d", op.Job.ID, op.Job.Next)
	case engine.OpRemoveJob:
		return fmt.Sprintf("remove-job %s", op.JobID)
	}
	return fmt.Sprintf("kind(%d)", op.Kind)
}
