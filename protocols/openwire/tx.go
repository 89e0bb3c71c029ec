package openwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"wharf/engine"

	"wharf/protocols/openwire/wire"
)

// XA prepare votes (javax.transaction.xa.XAResource).
const (
	xaOK       = 0
	xaReadOnly = 3
)

// onTransaction handles TransactionInfo for local and XA transactions.
//
// XA transactions run on the engine's transactions; a prepared one leaves
// its connection for the engine's registry (and is logged in the store, so
// it outlives a restart), so RECOVER on any connection lists it and any
// connection may finish it.
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
			// A BEGIN of a transaction this connection has begun is a
			// replayed command (the failover transport replays them):
			// answered, and nothing else, as TransportConnection.
			// processBeginTransaction does ("Avoid replaying dup commands").
			break
		}
		if err = s.conn.Begin(key); err == nil {
			put(&s.txs, key, true)
		} else if errors.Is(err, engine.ErrTxExists) {
			// TransactionBroker.beginTransaction's words.
			err = engine.WithClientText(err, "Transaction '"+javaTxString(t.TransactionId)+"' has already been started.")
		}
	case wire.TransactionEnd:
		// XA end: the branch stops associating work; nothing to do.
	case wire.TransactionPrepare:
		if !s.txs[key] {
			err = engine.WithClientText(fmt.Errorf("%w: %s", ErrUnknownTx, key),
				"Cannot prepare a transaction that had not been started or previously returned XA_RDONLY: "+javaTxString(t.TransactionId)) // TransportConnection.processPrepareTransaction
			break
		}
		x, ok := t.TransactionId.(*wire.XATransactionId)
		if !ok {
			err = fmt.Errorf("prepare of %s: only an XA transaction can be prepared", key)
			break
		}
		delete(s.txs, key)
		delete(s.txAcked, key)
		var readOnly bool
		if readOnly, err = s.conn.Prepare(XIDToEngine(x)); err != nil {
			break
		}
		if t.ResponseRequired {
			vote := int32(xaOK)
			if readOnly {
				vote = xaReadOnly
			}
			s.send(&wire.IntegerResponse{Response: wire.Response{CorrelationId: t.CommandId}, Result: vote})
		}
		return
	case wire.TransactionCommitOnePhase, wire.TransactionCommitTwoPhase:
		// A prepared transaction may be another connection's: the engine
		// finds it by id.
		delete(s.txs, key)
		delete(s.txAcked, key)
		err = s.conn.Commit(key)
	case wire.TransactionRollback:
		delete(s.txs, key)
		s.restoreAcked(key)
		err = s.conn.RollbackKeep(key)
	case wire.TransactionForget:
		delete(s.txs, key)
		s.restoreAcked(key)
		if e := s.conn.RollbackKeep(key); e != nil && !errors.Is(e, engine.ErrUnknownTx) {
			err = e
		}
	case wire.TransactionRecover:
		data := []wire.DataStructure{} // never null: the Java client reads its length
		for _, x := range s.srv.e.Prepared() {
			data = append(data, XIDFromEngine(x))
		}
		if t.ResponseRequired {
			s.send(&wire.DataArrayResponse{Response: wire.Response{CorrelationId: t.CommandId}, Data: data})
		}
		return
	default:
		err = fmt.Errorf("unknown transaction operation %d", t.Type)
	}
	if errors.Is(err, engine.ErrUnknownTx) && engine.ClientText(err) == err.Error() {
		// TransactionBroker.getTransaction's words for a commit or
		// rollback of a transaction it does not know.
		err = engine.WithClientText(err, "Transaction '"+javaTxString(t.TransactionId)+"' has not been started.")
	}
	s.respond(t, err)
}

// XIDToEngine converts an OpenWire XATransactionId to the engine's XID.
func XIDToEngine(x *wire.XATransactionId) engine.XID {
	return engine.XID{FormatID: x.FormatId, GlobalID: x.GlobalTransactionId, Branch: x.BranchQualifier}
}

// XIDFromEngine converts the engine's XID to an OpenWire XATransactionId.
func XIDFromEngine(x engine.XID) *wire.XATransactionId {
	return &wire.XATransactionId{FormatId: x.FormatID, GlobalTransactionId: x.GlobalID, BranchQualifier: x.Branch}
}

// javaTxString is a transaction id as ActiveMQ's TransactionId.toString
// prints it in its error texts: TX:<connection id>:<n> for a local one;
// for an XA one XATransactionId.getTransactionKey, whose ids are written
// byte by byte with Integer.toHexString (so 0x0a is "a" and 0xab, sign
// extended, "ffffffab"), or for Arjuna's format (131077) as its fields.
// It is not the engine's transaction key (txKey), which keeps every byte.
func javaTxString(t wire.TransactionId) string {
	x, ok := t.(*wire.XATransactionId)
	if !ok {
		return txKey(t)
	}
	return "XID:[" + strconv.Itoa(int(x.FormatId)) + ",globalId=" + javaXIDPart(x.FormatId, x.GlobalTransactionId) +
		",branchId=" + javaXIDPart(x.FormatId, x.BranchQualifier) + "]"
}

func javaXIDPart(format int32, uid []byte) string {
	const arjuna = 131077
	var b strings.Builder
	if format == arjuna && len(uid) >= 28 {
		b.WriteString(strconv.FormatInt(int64(binary.BigEndian.Uint64(uid[0:])), 16))
		b.WriteByte(':')
		b.WriteString(strconv.FormatInt(int64(binary.BigEndian.Uint64(uid[8:])), 16))
		for _, off := range []int{16, 20, 24} {
			b.WriteByte(':')
			b.WriteString(strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(uid[off:]))), 16))
		}
		return b.String()
	}
	for _, c := range uid {
		b.WriteString(strconv.FormatUint(uint64(uint32(int32(int8(c)))), 16))
	}
	return b.String()
}
