package stomp

import (
	"strconv"
	"strings"

	"wharf/engine"
	"wharf/protocols/stomp/wire"
)

// onAck handles ACK and NACK (ProtocolConverter.onStompAck/onStompNack).
// NACK is ActiveMQ's POISON ack: the message goes straight to its DLQ.
func (s *session) onAck(f *wire.Frame, nack bool) *protocolError {
	if err := s.checkConnected(); err != nil {
		return err
	}
	verb := "ACK"
	if nack {
		verb = "NACK"
		if s.version == wire.V10 {
			return perr("NACK received but connection is in v1.0 mode.")
		}
	}
	msgID, hasMsgID := f.Get("message-id")
	var sub *subscription
	idx := -1
	switch s.version {
	case wire.V12:
		ackID, ok := f.Get("id")
		if !ok {
			// ActiveMQ words the two differently (onStompAck, onStompNack).
			if nack {
				return perr("NACK received without an ack header to acknowledge!")
			}
			return perr("ACK received without a ack id for acknowledge!")
		}
		// ActiveMQ's "Unexpected ACK" error names the frame's message-id
		// header, which a 1.2 client need not send: then it says [null]
		// (ProtocolConverter.onStompAck).
		if !hasMsgID {
			msgID = "null"
		}
		sub, idx = s.findByAckID(ackID)
	case wire.V11:
		subID, ok := f.Get("subscription")
		// onStompAck checks message-id first, onStompNack subscription.
		if !hasMsgID && (!nack || ok) {
			return perr(verb + " received without a message-id to acknowledge!")
		}
		if !ok {
			return perr(verb + " received without a subscription id for acknowledge!")
		}
		if sub = s.subs[subID]; sub != nil {
			idx = sub.findMsg(msgID)
		}
	default:
		if !hasMsgID {
			return perr(verb + " received without a message-id to acknowledge!")
		}
		// 1.0: the first subscription that dispatched that message.
		for _, x := range s.subList {
			if i := x.findMsg(msgID); i >= 0 {
				sub, idx = x, i
				break
			}
		}
	}
	txID, _ := f.Get("transaction")
	if txID != "" && !s.txs[txID] {
		return perr("Invalid transaction id: " + txID)
	}
	if sub == nil || idx < 0 {
		return perr("Unexpected " + verb + " received for message-id [" + msgID + "]")
	}
	sub.mu.Lock()
	p := sub.pending[idx]
	if nack || sub.ackMode == engine.AckIndividual {
		sub.pending = append(sub.pending[:idx], sub.pending[idx+1:]...)
	} else {
		// client mode acknowledges every earlier delivery too.
		n := copy(sub.pending, sub.pending[idx+1:])
		clear(sub.pending[n:])
		sub.pending = sub.pending[:n]
	}
	sub.mu.Unlock()
	// With a receipt the client waits for the broker to have the
	// acknowledgement: the RECEIPT goes out once the engine has it on disk
	// (ActiveMQ answers a STOMP ACK with a receipt after the synced journal
	// write of its MessageAck), so that a message whose ACK was confirmed
	// never comes back after a crash. Without one, the fast path: the ack
	// is written without waiting for the disk.
	var comp engine.Completion
	var token uint64
	if r, ok := f.Get("receipt"); ok {
		s.mu.Lock()
		s.tokenSeq++
		token = s.tokenSeq
		s.addReceiptLocked(token, r)
		s.mu.Unlock()
		s.acksOut.Add(1)
		comp = (*ackDone)(s)
	}
	var err error
	if nack {
		// A poison ack cannot be transacted in ActiveMQ; STOMP's NACK in a
		// transaction is applied at once there too.
		err = s.conn.NackDurable(sub.sub, p.id, engine.NackPoison, "", comp, token)
	} else {
		err = s.conn.AckDurable(sub.sub, p.id, txID, comp, token)
	}
	if err != nil {
		if comp != nil {
			s.mu.Lock()
			delete(s.receipts, token)
			s.mu.Unlock()
			s.acksOut.Done()
		}
		return engineError(err)
	}
	return nil
}

// ackDone is the session as the engine.Completion of ACKs and NACKs with
// a receipt (session.Complete is the one of sends, which also counts them
// for flow control).
type ackDone session

// Complete writes the RECEIPT of a confirmed ACK or NACK, or the ERROR if
// the store failed. Called from a shard's goroutine, or at once inside a
// transaction.
func (a *ackDone) Complete(token uint64, err error) {
	s := (*session)(a)
	s.answer(token, err)
	s.acksOut.Done()
}

func (sub *subscription) findMsg(msgID string) int {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for i, p := range sub.pending {
		if p.msgID == msgID {
			return i
		}
	}
	return -1
}

// findByAckID resolves a 1.2 ack id ("<subscription number>-<delivery>").
func (s *session) findByAckID(ackID string) (*subscription, int) {
	a, b, ok := strings.Cut(ackID, "-")
	if !ok {
		return nil, -1
	}
	num, err1 := strconv.ParseUint(a, 10, 64)
	id, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		return nil, -1
	}
	s.mu.Lock()
	sub := s.bySubNum[num]
	s.mu.Unlock()
	if sub == nil {
		return nil, -1
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for i, p := range sub.pending {
		if p.id == id {
			return sub, i
		}
	}
	return nil, -1
}

// onTx handles BEGIN, COMMIT and ABORT.
func (s *session) onTx(f *wire.Frame, verb string) *protocolError {
	if err := s.checkConnected(); err != nil {
		return err
	}
	txID, _ := f.Get("transaction")
	var err error
	switch verb {
	case "BEGIN":
		if txID == "" {
			return perr("Must specify the transaction you are beginning")
		}
		if s.txs[txID] {
			return perr("The transaction was already started: " + txID)
		}
		err = s.conn.Begin(txID)
		if err == nil {
			if s.txs == nil {
				s.txs = map[string]bool{}
			}
			s.txs[txID] = true
		}
	case "COMMIT", "ABORT":
		if txID == "" {
			return perr("Must specify the transaction you are committing")
		}
		if !s.txs[txID] {
			return perr("Invalid transaction id: " + txID)
		}
		delete(s.txs, txID)
		if verb == "COMMIT" {
			err = s.conn.Commit(txID)
		} else {
			// DEVIATION: ActiveMQ 5.17 leaves messages acked in an aborted
			// transaction with the consumer, ackable again under their old
			// ids; Wharf's engine redelivers them at once (redelivered:true,
			// new ack ids), the transaction semantics every protocol shares.
			err = s.conn.Rollback(txID)
		}
	}
	if err != nil {
		return engineError(err)
	}
	s.receipt(f)
	return nil
}
