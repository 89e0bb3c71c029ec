package lsm

import (
	"encoding/binary"

	"github.com/dgraph-io/badger/v4"

	"wharf/engine"
	"wharf/engine/message"
)

// The producer audit (engine.ProducerAuditor): per destination, the
// highest producer sequence id each producer's adds had, at most
// engine.MaxAuditedProducers producers, as Wharf's KahaDB keeps it (ActiveMQ
// has no LSM store; its KahaDB's producerSequenceIdTracker is the model).
// Each change is an A key written in the batch of the add; a removed
// destination's A keys are orphans, deleted with its other keys.
//
// Unlike KahaDB, this store does not reject the add of a message id its
// destination already holds (ActiveMQ's JDBC store, by default, does not
// either): it keeps no index of message ids.

func auditKey(dest uint64, producer string) []byte {
	k := make([]byte, 9, 9+len(producer))
	k[0] = pAudit
	binary.BigEndian.PutUint64(k[1:], dest)
	return append(k, producer...)
}

// auditNote records the add of message id on d, in d's audit and in txn.
func (ss *shardStore) auditNote(txn *badger.Txn, d *destState, id string) error {
	p, seq, ok := engine.SplitMessageID(id)
	if !ok {
		return nil
	}
	last, known := d.audit[p]
	if known && seq <= last {
		return nil
	}
	if d.audit == nil {
		d.audit = make(map[string]int64)
	}
	if !known && len(d.audit) >= engine.MaxAuditedProducers {
		for k := range d.audit {
			delete(d.audit, k)
			if err := txn.Delete(auditKey(d.id, k)); err != nil {
				return err
			}
			break
		}
	}
	if !known {
		p = string([]byte(p)) // a copy: the id may be part of a larger block
	}
	d.audit[p] = seq
	// Written once per batch (flushAudit): a batch of adds from one
	// producer would otherwise set its key once per message, and a
	// badger transaction counts every set.
	if ss.auditDirty == nil {
		ss.auditDirty = make(map[auditRef]struct{})
	}
	ss.auditDirty[auditRef{d, p}] = struct{}{}
	return nil
}

// auditRef is a producer in a destination's audit.
type auditRef struct {
	d *destState
	p string
}

// flushAudit writes the audit entries the batch changed.
func (ss *shardStore) flushAudit(txn *badger.Txn) error {
	for r := range ss.auditDirty {
		if seq, ok := r.d.audit[r.p]; ok {
			if err := txn.Set(auditKey(r.d.id, r.p), binary.BigEndian.AppendUint64(nil, uint64(seq))); err != nil {
				return err
			}
		}
	}
	clear(ss.auditDirty)
	return nil
}

// loadAudit reads the A keys into the destinations' audits.
func (ss *shardStore) loadAudit(txn *badger.Txn) error {
	return scan(txn, []byte{pAudit}, true, func(k, v []byte) error {
		if len(k) < 9 || len(v) != 8 {
			ss.orphanKeys = append(ss.orphanKeys, k)
			return nil
		}
		d := ss.destIDs[binary.BigEndian.Uint64(k[1:])]
		if d == nil {
			ss.orphanKeys = append(ss.orphanKeys, k)
			return nil
		}
		if d.audit == nil {
			d.audit = make(map[string]int64)
		}
		d.audit[string(k[9:])] = int64(binary.BigEndian.Uint64(v))
		return nil
	})
}

// ProducerAudit hands the audit to the engine.
func (ss *shardStore) ProducerAudit(fn func(d message.Destination, producer string, seq int64)) error {
	if ss.closed.Load() {
		return ErrClosed
	}
	for _, d := range ss.dests {
		for p, seq := range d.audit {
			fn(d.d, p, seq)
		}
	}
	return nil
}
