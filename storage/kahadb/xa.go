package kahadb

import (
	"fmt"
	"slices"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire"
	"wharf/protocols/openwire/wire"
	"wharf/storage/kahadb/command"
	"wharf/storage/kahadb/journal"
)

// Prepared XA transactions, written as ActiveMQ's KahaDBTransactionStore
// writes them: the transaction's adds (KahaAddMessageCommand) and acks
// (KahaRemoveMessageCommand, its ack field an OpenWire MessageAck: see
// preparedAck), each with a transactionInfo holding the XATransactionId, then a KahaPrepareCommand, all in one batch; later a
// KahaCommitCommand or KahaRollbackCommand with the same id.
//
// Until its end record, every journal file holding one of its records is
// pinned (cleanup keeps it) and no checkpoint is taken (the index would
// start replay after its records). Files holding transaction records are
// never compacted: a commit record needs the records before it.
//
// A commit writes the commit record only: the engine's OpAdd/OpRemove/OpAck
// that follow the OpCommit in the batch are matched with the transaction's
// records (adds by destination and message id, acks by destination,
// sequence and subscription) and write nothing, as the commit record makes
// those records count on a replay. The engine's sequence numbers of the
// matched adds go, in the transaction's add order, at the commit record's
// place in the batch's sequence trace. A send the engine does not store at
// commit (consumed before the write, a topic no durable subscription
// wants) is cancelled by a remove (or unmatched acks) right after the
// commit record, so that a replay drops it again.

type txAckKey struct {
	dest message.Destination
	seq  uint64
	sub  engine.SubKey
}

type prepAdd struct {
	dest message.Destination
	id   string
	loc  journal.Location // its tx-tagged add record
}

// prepTx is one prepared transaction of the shard.
type prepTx struct {
	ti       command.TransactionInfo
	adds     []prepAdd
	acks     map[txAckKey]bool
	files    []int // pinned: one per record written
	released bool

	// While its commit is encoded: the slots of its adds in the batch's
	// sequence trace, which were matched, and the commit record's index.
	slot0     int
	matched   []bool
	commitRec int
}

func xaInfo(x engine.XID) command.TransactionInfo {
	return command.TransactionInfo{XATransactionID: &command.XATransactionID{
		FormatID: x.FormatID, GlobalTransactionID: slices.Clone(x.GlobalID), BranchQualifier: slices.Clone(x.Branch),
	}}
}

func engineXID(x *command.XATransactionID) engine.XID {
	return engine.XID{FormatID: x.FormatID, GlobalID: slices.Clone(x.GlobalTransactionID), Branch: slices.Clone(x.BranchQualifier)}
}

// pin keeps the file of one of p's records until p ends.
func (ss *shardStore) pin(p *prepTx, l journal.Location) {
	if l.File == 0 {
		return
	}
	ss.noCompact[l.File] = true
	if p.released {
		return
	}
	p.files = append(p.files, l.File)
	ss.live[l.File]++
}

func (ss *shardStore) unpin(p *prepTx) {
	p.released = true
	for _, f := range p.files {
		ss.release(f)
	}
	p.files = nil
}

func (ss *shardStore) encodePrepare(t *engine.PreparedTx) error {
	key := t.XID.String()
	if ss.prepared[key] != nil {
		return fmt.Errorf("transaction %s is already prepared", key)
	}
	p := &prepTx{ti: xaInfo(t.XID), acks: map[txAckKey]bool{}}
	ti := &p.ti
	pin := func(l journal.Location) { ss.pin(p, l) }
	for _, m := range t.Adds {
		b, err := marshal(m, m.RedeliveryCounter)
		if err != nil {
			return err
		}
		i := len(p.adds)
		p.adds = append(p.adds, prepAdd{dest: m.Destination, id: m.ID})
		ss.add(command.Encode(nil, &command.AddMessage{
			Transaction: ti, Destination: kahaDest(m.Destination), MessageID: m.ID, Message: b, Priority: int32(m.Priority),
		}), func(l journal.Location) {
			p.adds[i].loc = l
			pin(l)
		})
	}
	for _, a := range t.Acks {
		s := ss.msgs[msgKey{a.Dest, a.Seq}]
		if s == nil {
			continue
		}
		p.acks[txAckKey{a.Dest, a.Seq, a.Sub}] = true
		ack, err := preparedAck(a.Dest, s.id, t.XID)
		if err != nil {
			return err
		}
		rm := &command.RemoveMessage{Transaction: ti, Destination: kahaDest(a.Dest), MessageID: s.id, Ack: ack}
		if a.Sub != (engine.SubKey{}) {
			rm.SubscriptionKey = a.Sub.String()
		}
		ss.add(command.Encode(nil, rm), pin)
	}
	ss.add(command.Encode(nil, &command.Prepare{Transaction: p.ti}), pin)
	ss.prepared[key] = p
	return nil
}

// preparedAck is the OpenWire MessageAck (store format) that a prepared
// transaction's remove record carries in its ack field, as ActiveMQ's
// KahaDBMessageStore writes the client's ack there. ActiveMQ needs it:
// KahaDBTransactionStore.recover unmarshals the ack of every remove of a
// prepared transaction (a record without one stops the broker's start
// with a NullPointerException), takes the destination from it, and hides
// the message whose producer key its LastMessageId gives until the
// transaction ends. id is the message's key in the journal (its producer
// key), so LastMessageId is the structured id of that key.
func preparedAck(d message.Destination, id string, x engine.XID) ([]byte, error) {
	mid := openwire.MessageIDFromEngine(id)
	return wire.Marshal(&wire.MessageAck{
		Destination: openwire.DestFromEngine(d), TransactionId: openwire.XIDFromEngine(x),
		AckType: wire.AckStandard, FirstMessageId: mid, LastMessageId: mid, MessageCount: 1,
	}, wire.StoreFormat())
}

// encodeEnd writes the commit or rollback record of a prepared
// transaction; a commit's adds and acks are matched in encode until
// finishCommits.
func (ss *shardStore) encodeEnd(op *engine.StoreOp) {
	key := op.Tx.XID.String()
	p := ss.prepared[key]
	if p == nil {
		return
	}
	delete(ss.prepared, key)
	noCompact := func(l journal.Location) {
		if l.File != 0 {
			ss.noCompact[l.File] = true
		}
	}
	ss.unpin(p)
	if op.Kind == engine.OpRollback {
		ss.add(command.Encode(nil, &command.Rollback{Transaction: p.ti}), noCompact)
		return
	}
	p.commitRec = len(ss.recs)
	ss.add(command.Encode(nil, &command.Commit{Transaction: p.ti}), noCompact)
	p.slot0 = len(ss.seqs)
	ss.seqs = append(ss.seqs, make([]uint64, len(p.adds))...)
	p.matched = make([]bool, len(p.adds))
	ss.committing = append(ss.committing, p)
}

// committedAdd finds the add of a transaction committing in this batch
// that op stores.
func (ss *shardStore) committedAdd(op *engine.StoreOp) (*prepTx, int) {
	if len(ss.committing) == 0 {
		return nil, -1
	}
	for _, p := range ss.committing {
		for i, a := range p.adds {
			if !p.matched[i] && a.id == op.Msg.ID && a.dest == op.Dest {
				return p, i
			}
		}
	}
	return nil, -1
}

// committedAck reports whether a remove or ack is one of a committing
// transaction's acks (which its commit record applies).
func (ss *shardStore) committedAck(k txAckKey) bool {
	for _, p := range ss.committing {
		if p.acks[k] {
			delete(p.acks, k)
			return true
		}
	}
	return false
}

// finishCommits writes, right after each commit record of the batch, the
// removes that cancel the transaction's adds the engine did not store.
func (ss *shardStore) finishCommits() {
	for j := len(ss.committing) - 1; j >= 0; j-- {
		p := ss.committing[j]
		var extra [][]byte
		for i, a := range p.adds {
			if p.matched[i] {
				continue
			}
			if !a.dest.Type.IsTopic() {
				extra = append(extra, command.Encode(nil, &command.RemoveMessage{Destination: kahaDest(a.dest), MessageID: a.id}))
				continue
			}
			// A replay keeps a topic message for every durable
			// subscription of the topic: each acknowledges it.
			for key, r := range ss.subs {
				if r.sub.Destination.Matches(a.dest) {
					extra = append(extra, command.Encode(nil, &command.RemoveMessage{
						Destination: kahaDest(a.dest), MessageID: a.id, SubscriptionKey: key.String(), Ack: []byte{},
					}))
				}
			}
		}
		if len(extra) == 0 {
			continue
		}
		at := p.commitRec + 1
		ss.recs = slices.Insert(ss.recs, at, extra...)
		ss.owners = slices.Insert(ss.owners, at, make([]func(journal.Location), len(extra))...)
	}
	clear(ss.committing)
	ss.committing = ss.committing[:0]
}

// replayPrepare puts a prepared transaction found in the journal back in
// doubt: recs are its adds and removes, l its prepare record.
func (r *replayer) replayPrepare(c *command.Prepare, recs []replayed, l journal.Location) {
	ss := r.ss
	x := c.Transaction.XATransactionID
	if x == nil {
		return // KahaDB prepares XA transactions only
	}
	t := &engine.PreparedTx{XID: engineXID(x)}
	key := t.XID.String()
	if ss.prepared[key] != nil {
		ss.log.Warn("second prepare record of a transaction ignored", "xid", key, "file", l.File, "offset", l.Offset)
		return
	}
	p := &prepTx{ti: xaInfo(t.XID), acks: map[txAckKey]bool{}}
	for _, rc := range recs {
		switch x := rc.cmd.(type) {
		case *command.AddMessage:
			m, err := unmarshal(x.Message)
			if err != nil {
				ss.log.Warn("prepared message skipped", "xid", key, "msg_id", x.MessageID, "err", err)
				continue
			}
			d := engineDest(x.Destination)
			m.Destination = d
			t.Adds = append(t.Adds, m)
			p.adds = append(p.adds, prepAdd{dest: d, id: x.MessageID, loc: rc.loc})
		case *command.RemoveMessage:
			d := engineDest(x.Destination)
			seq, ok := r.seqOf(d, x.MessageID)
			if !ok {
				continue
			}
			a := engine.TxAck{Dest: d, Seq: seq}
			if x.SubscriptionKey != "" {
				a.Sub = subKey(x.SubscriptionKey)
			}
			t.Acks = append(t.Acks, a)
			p.acks[txAckKey{a.Dest, a.Seq, a.Sub}] = true
		}
	}
	if err := ss.idx.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: t}}); err != nil {
		ss.log.Warn("prepared transaction skipped", "xid", key, "err", err)
		return
	}
	for _, rc := range recs {
		ss.pin(p, rc.loc)
	}
	ss.pin(p, l)
	ss.prepared[key] = p
	r.prepared[txKey(&c.Transaction)] = true
}

// replayEnd ends a prepared transaction at its commit or rollback record.
func (r *replayer) replayEnd(kind engine.StoreOpKind, t *command.TransactionInfo) error {
	ss := r.ss
	if t.XATransactionID == nil {
		return nil
	}
	x := engineXID(t.XATransactionID)
	p := ss.prepared[x.String()]
	if p == nil {
		return nil
	}
	delete(ss.prepared, x.String())
	delete(r.prepared, txKey(t))
	ss.unpin(p)
	return ss.idx.Apply([]engine.StoreOp{{Kind: kind, Tx: &engine.PreparedTx{XID: x}}})
}
