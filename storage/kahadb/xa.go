package kahadb

import (
	"bytes"
	"fmt"
	"slices"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/marshal"
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
// pinned (cleanup keeps it). A checkpoint index records it (checkpoint.go:
// its records' locations and what they are, and the acks as a replay
// resolves them), so that a start from the index puts it back in doubt
// as a replay does and a commit record after the index finds its records.
// Files holding transaction records are never compacted: a commit record
// needs the records before it.
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

// prepRec is one of a prepared transaction's add or remove records, as
// the checkpoint index records it.
type prepRec struct {
	remove bool
	loc    journal.Location
	dest   message.Destination
	id     string // the message's KahaDB key
	sub    string // a remove's subscription key ("" for a queue)
}

// prepTx is one prepared transaction of the shard.
type prepTx struct {
	ti       command.TransactionInfo
	adds     []prepAdd
	acks     map[txAckKey]bool
	files    []int // pinned: one per record written
	released bool

	// For the checkpoint index: its add and remove records in journal
	// order, its prepare record, and its acks as a replay resolves them
	// (the engine.PreparedTx.Acks a restart hands back).
	recs    []prepRec
	prepLoc journal.Location
	txAcks  []engine.TxAck

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
		b, err := marshalMessage(m, m.RedeliveryCounter)
		if err != nil {
			return err
		}
		i, r := len(p.adds), len(p.recs)
		p.adds = append(p.adds, prepAdd{dest: m.Destination, id: m.ID})
		p.recs = append(p.recs, prepRec{dest: m.Destination, id: m.ID})
		ss.add(command.Encode(nil, &command.AddMessage{
			Transaction: ti, Destination: kahaDest(m.Destination), MessageID: m.ID, Message: b, Priority: int32(m.Priority),
		}), func(l journal.Location) {
			p.adds[i].loc = l
			p.recs[r].loc = l
			pin(l)
		})
	}
	for _, a := range t.Acks {
		s := ss.msgs[msgKey{a.Dest, a.Seq}]
		if s == nil {
			continue
		}
		p.acks[txAckKey{a.Dest, a.Seq, a.Sub}] = true
		p.txAcks = append(p.txAcks, a)
		ack, err := preparedAck(a.Dest, s.id, t.XID)
		if err != nil {
			return err
		}
		rm := &command.RemoveMessage{Transaction: ti, Destination: kahaDest(a.Dest), MessageID: s.id, Ack: ack}
		if a.Sub != (engine.SubKey{}) {
			rm.SubscriptionKey = a.Sub.String()
		}
		r := len(p.recs)
		p.recs = append(p.recs, prepRec{remove: true, dest: a.Dest, id: s.id, sub: rm.SubscriptionKey})
		ss.add(command.Encode(nil, rm), func(l journal.Location) {
			p.recs[r].loc = l
			pin(l)
		})
	}
	ss.add(command.Encode(nil, &command.Prepare{Transaction: p.ti}), func(l journal.Location) {
		p.prepLoc = l
		pin(l)
	})
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
	mid := marshal.MessageIDFromEngine(id)
	return wire.Marshal(&wire.MessageAck{
		Destination: marshal.DestFromEngine(d), TransactionId: &wire.XATransactionId{FormatId: x.FormatID, GlobalTransactionId: x.GlobalID, BranchQualifier: x.Branch},
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
	p := &prepTx{ti: xaInfo(t.XID), acks: map[txAckKey]bool{}, prepLoc: l}
	for _, rc := range recs {
		switch x := rc.cmd.(type) {
		case *command.AddMessage:
			p.recs = append(p.recs, prepRec{loc: rc.loc, dest: engineDest(x.Destination), id: x.MessageID})
			m, err := unmarshalMessage(x.Message)
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
			p.recs = append(p.recs, prepRec{remove: true, loc: rc.loc, dest: d, id: x.MessageID, sub: x.SubscriptionKey})
			seq, ok := r.seqOf(d, x.MessageID)
			if !ok {
				continue
			}
			a := engine.TxAck{Dest: d, Seq: seq}
			if x.SubscriptionKey != "" {
				a.Sub = ss.ackKey(d, seq, x.SubscriptionKey)
			}
			t.Acks = append(t.Acks, a)
			p.acks[txAckKey{a.Dest, a.Seq, a.Sub}] = true
		}
	}
	p.txAcks = t.Acks
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

// indexTx is a prepared transaction as the checkpoint index records it.
type indexTx struct {
	xid     engine.XID
	prepLoc journal.Location
	recs    []prepRec
	acks    []engine.TxAck
}

// indexTxOf copies what the index records of p (snapshot: on the shard's
// goroutine; the copy is the snapshot's own).
func indexTxOf(p *prepTx) (indexTx, error) {
	xid := engineXID(p.ti.XATransactionID)
	if p.prepLoc.File == 0 {
		return indexTx{}, fmt.Errorf("prepared transaction %s has no journal location", xid)
	}
	for _, r := range p.recs {
		if r.loc.File == 0 {
			return indexTx{}, fmt.Errorf("a record of prepared transaction %s has no journal location", xid)
		}
	}
	return indexTx{xid: xid, prepLoc: p.prepLoc, recs: slices.Clone(p.recs), acks: slices.Clone(p.txAcks)}, nil
}

// restorePrepared puts a prepared transaction the index names back in
// doubt, as replayPrepare does at its prepare record: its adds are read
// from the journal (the engine holds a prepared transaction's sends as
// messages), its acks are the index's. Its records are kept for the
// replay of the journal after the index (loadedTxs), where its commit
// record may be.
func (ss *shardStore) restorePrepared(x *indexTx) error {
	key := x.xid.String()
	if ss.prepared[key] != nil {
		return fmt.Errorf("%w: transaction %s named twice", ErrIndexCorrupt, key)
	}
	p := &prepTx{ti: xaInfo(x.xid), acks: map[txAckKey]bool{}, recs: x.recs, prepLoc: x.prepLoc, txAcks: x.acks}
	sameXID := func(t *command.TransactionInfo) bool {
		return t != nil && t.XATransactionID != nil && engineXID(t.XATransactionID).String() == key
	}
	c, err := ss.readRecord(x.prepLoc)
	if pc, ok := c.(*command.Prepare); err != nil || !ok || !sameXID(&pc.Transaction) {
		return fmt.Errorf("%w: record %v is not the prepare record of %s (%v)", ErrIndexStale, x.prepLoc, key, err)
	}
	t := &engine.PreparedTx{XID: x.xid, Acks: x.acks}
	recs := make([]replayed, 0, len(x.recs))
	for _, r := range x.recs {
		if r.remove {
			recs = append(recs, replayed{r.loc, &command.RemoveMessage{
				Transaction: &p.ti, Destination: kahaDest(r.dest), MessageID: r.id, SubscriptionKey: r.sub,
			}})
			continue
		}
		c, err := ss.readRecord(r.loc)
		add, ok := c.(*command.AddMessage)
		if err != nil || !ok || add.MessageID != r.id || engineDest(add.Destination) != r.dest || !sameXID(add.Transaction) {
			return fmt.Errorf("%w: record %v is not message %s of transaction %s (%v)", ErrIndexStale, r.loc, r.id, key, err)
		}
		held := *add // the record's fields must not alias the journal's read buffer
		held.Transaction, held.Message = &p.ti, bytes.Clone(add.Message)
		recs = append(recs, replayed{r.loc, &held})
		m, err := unmarshalMessage(held.Message)
		if err != nil {
			ss.log.Warn("prepared message skipped", "xid", key, "msg_id", r.id, "err", err)
			continue
		}
		m.Destination = r.dest
		t.Adds = append(t.Adds, m)
		p.adds = append(p.adds, prepAdd{dest: r.dest, id: r.id, loc: r.loc})
	}
	for _, a := range x.acks {
		p.acks[txAckKey{a.Dest, a.Seq, a.Sub}] = true
	}
	if err := ss.idx.Apply([]engine.StoreOp{{Kind: engine.OpPrepare, Tx: t}}); err != nil {
		return fmt.Errorf("%w: prepared transaction %s: %w", ErrIndexStale, key, err)
	}
	for _, r := range x.recs {
		ss.pin(p, r.loc)
	}
	ss.pin(p, x.prepLoc)
	ss.prepared[key] = p
	if ss.loadedTxs == nil {
		ss.loadedTxs = map[string][]replayed{}
	}
	ss.loadedTxs[txKey(&p.ti)] = recs
	return nil
}

// readRecord reads and decodes the journal record at l.
func (ss *shardStore) readRecord(l journal.Location) (command.Command, error) {
	b, err := ss.j.Read(l)
	if err != nil {
		return nil, err
	}
	return command.Decode(b)
}
