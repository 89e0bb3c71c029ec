package openwire

import (
	"fmt"

	"wharf/protocols/openwire/wire"
)

// XA prepare votes (javax.transaction.xa.XAResource).
const (
	xaOK       = 0
	xaReadOnly = 3
)

// onTransaction handles TransactionInfo for local and XA transactions.
//
// DEVIATION: XA transactions run on the engine's local transactions: a
// prepared transaction is not written to a transaction log, so it does not
// survive the connection or a restart, and RECOVER lists only this
// connection's prepared transactions. The KahaDB issue brings the log.
func (s *session) onTransaction(t *wire.TransactionInfo) {
	if err := s.needConn(); err != nil {
		s.respond(t, err)
		return
	}
	key := txKey(t.TransactionId)
	var err error
	switch t.Type {
	case wire.TransactionBegin:
		if s.txs[key] {
			err = fmt.Errorf("transaction %s already started", key)
			break
		}
		if err = s.conn.Begin(key); err == nil {
			s.txs[key] = true
		}
	case wire.TransactionEnd:
		// XA end: the branch stops associating work; nothing to do.
	case wire.TransactionPrepare:
		if !s.txs[key] {
			err = fmt.Errorf("%w: Transaction '%s' has not been started", ErrUnknownTx, key)
			break
		}
		if xa, ok := t.TransactionId.(*wire.XATransactionId); ok {
			s.prepared[key] = xa
		}
		if t.ResponseRequired {
			s.send(&wire.IntegerResponse{Response: wire.Response{CorrelationId: t.CommandId}, Result: xaOK})
		}
		return
	case wire.TransactionCommitOnePhase, wire.TransactionCommitTwoPhase:
		if !s.txs[key] {
			err = fmt.Errorf("%w: Transaction '%s' has not been started", ErrUnknownTx, key)
			break
		}
		delete(s.txs, key)
		delete(s.prepared, key)
		err = s.conn.Commit(key)
	case wire.TransactionRollback:
		if !s.txs[key] {
			err = fmt.Errorf("%w: Transaction '%s' has not been started", ErrUnknownTx, key)
			break
		}
		delete(s.txs, key)
		delete(s.prepared, key)
		err = s.conn.Rollback(key)
	case wire.TransactionForget:
		delete(s.prepared, key)
		if s.txs[key] {
			delete(s.txs, key)
			err = s.conn.Rollback(key)
		}
	case wire.TransactionRecover:
		data := make([]wire.DataStructure, 0, len(s.prepared))
		for _, x := range s.prepared {
			data = append(data, x)
		}
		if t.ResponseRequired {
			s.send(&wire.DataArrayResponse{Response: wire.Response{CorrelationId: t.CommandId}, Data: data})
		}
		return
	default:
		err = fmt.Errorf("unknown transaction operation %d", t.Type)
	}
	s.respond(t, err)
}
