package kahadb

import (
	"wharf/engine"
	"wharf/engine/message"
)

// Duplicate adds and the producer audit.
//
// ActiveMQ's MessageDatabase.updateIndex rejects the add of a message
// whose id its destination's messageIdIndex already holds (the message is
// still stored: the broker was asked to store a duplicate before the first
// copy was consumed), logging "Duplicate message add attempt rejected",
// and in any event records the id in metadata.producerSequenceIdTracker,
// the producer audit getLastProducerSequenceId answers from. Wharf's
// byID is the messageIdIndex; a rejected add writes no journal record and
// leaves the message unknown to the store, so the engine's later remove
// or ack of its sequence number is ignored (engine.StoreOp's rules).
//
// The audit (engine.ProducerAuditor) is kept per destination: the highest
// producer sequence id of each producer's adds, at most
// engine.MaxAuditedProducers per destination. It is written into the
// checkpoint index (checkpoint.go) and rebuilt from the AddMessage records
// replayed after it, or from the whole journal when there is no index, as
// ActiveMQ replays its journal to rebuild the tracker when db.data holds
// none. DEPARTURE: ActiveMQ keeps the tracker Java-serialized in a
// KahaProducerAuditCommand record that db.data points to; Wharf writes no
// db.data (doc.go) and keeps its audit in wharf-index.bin, so a Wharf
// journal recovered by ActiveMQ gives it the audit of the messages whose
// records remain, as ActiveMQ's own replay without db.data does. A
// KahaProducerAuditCommand in a journal ActiveMQ wrote is not read.

// dropDuplicateAdds returns ops without the adds of a message id that its
// destination already holds (stored before, or added earlier in ops),
// noting every add in the audit. ops itself is not changed: when something
// is dropped the result is a copy (a rare case: no buffer is kept).
func (ss *shardStore) dropDuplicateAdds(ops []engine.StoreOp) []engine.StoreOp {
	for i := range ops {
		if ops[i].Kind == engine.OpCommit {
			// An XA commit's adds are matched with their prepare
			// records (xa.go); its batch is left alone.
			return ops
		}
	}
	clear(ss.batchIDs)
	out := ops
	copied := false
	for i := range ops {
		op := &ops[i]
		switch op.Kind {
		case engine.OpRemove:
			// ss.batchIDs: true, added in ops; false, removed in ops.
			k := msgKey{op.Dest, op.Seq}
			if id, ok := ss.batchSeqs[k]; ok {
				ss.batchIDs[batchID{op.Dest, id}] = false
			} else if s := ss.msgs[k]; s != nil {
				ss.batchIDs[batchID{op.Dest, s.id}] = false
			}
		case engine.OpRemoveDest:
			for k := range ss.batchIDs {
				if k.dest == op.Dest {
					delete(ss.batchIDs, k)
				}
			}
		case engine.OpAdd:
			if op.Msg == nil || op.Dest.Type.IsTopic() && len(op.Subs) == 0 {
				break
			}
			ss.auditNote(op.Dest, op.Msg.ID)
			k := batchID{op.Dest, op.Msg.ID}
			added, inBatch := ss.batchIDs[k]
			_, stored := ss.byID[op.Dest][op.Msg.ID]
			if !added && !(stored && !inBatch) {
				ss.batchIDs[k] = true
				ss.batchSeqs[msgKey{op.Dest, op.Seq}] = op.Msg.ID
				if copied {
					out = append(out, *op)
				}
				continue
			}
			ss.log.Warn("Duplicate message add attempt rejected", "dest", op.Dest.String(), "msg_id", op.Msg.ID)
			if !copied {
				out = append(make([]engine.StoreOp, 0, len(ops)-1), ops[:i]...)
				copied = true
			}
			continue
		}
		if copied {
			out = append(out, *op)
		}
	}
	clear(ss.batchSeqs)
	return out
}

// batchID is a message id on a destination, for dropDuplicateAdds.
type batchID struct {
	dest message.Destination
	id   string
}

// auditNote records an add of message id on d in the producer audit.
func (ss *shardStore) auditNote(d message.Destination, id string) {
	p, seq, ok := engine.SplitMessageID(id)
	if !ok {
		return
	}
	ss.auditSet(d, p, seq)
}

func (ss *shardStore) auditSet(d message.Destination, p string, seq int64) {
	m := ss.audit[d]
	if last, ok := m[p]; ok {
		if seq > last {
			m[p] = seq
		}
		return
	}
	if m == nil {
		m = map[string]int64{}
		ss.audit[d] = m
	}
	if len(m) >= engine.MaxAuditedProducers {
		for k := range m {
			delete(m, k)
			break
		}
	}
	m[p] = seq
}

// ProducerAudit hands the recovered producer audit to the engine
// (engine.ProducerAuditor).
func (ss *shardStore) ProducerAudit(fn func(d message.Destination, producer string, seq int64)) error {
	for d, m := range ss.audit {
		for p, seq := range m {
			fn(d, p, seq)
		}
	}
	return nil
}

// ProducerAudit hands every child's audit to the engine.
func (ms *multiShard) ProducerAudit(fn func(d message.Destination, producer string, seq int64)) error {
	for _, c := range ms.children {
		if err := c.ss.ProducerAudit(fn); err != nil {
			return err
		}
	}
	return nil
}

// subscribed tells whether topic d has a durable subscription.
func (ss *shardStore) subscribed(d message.Destination) bool {
	for _, s := range ss.subs {
		if s.sub.Destination.Matches(d) {
			return true
		}
	}
	return false
}
