package openwire

import (
	"time"

	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// onMessage hands a producer's message to the engine. Its Response (when
// asked for: persistent sends are synchronous in the Java client) or
// ProducerAck (producers with a window) goes out when the engine has it:
// after the store write for a persistent message, or when flow control lets
// it in.
func (s *session) onMessage(w *wire.Message) {
	base := w.Base()
	if err := s.needConn(); err != nil {
		s.respond(w, err)
		return
	}
	// Set before marshal.ToEngine, which keeps w as the message's original form.
	w.BrokerInTime = time.Now().UnixMilli()
	m, err := marshal.ToEngine(w)
	if err != nil {
		s.respond(w, err)
		return
	}
	ps := pendingSend{}
	if base.ResponseRequired {
		ps.corr = base.CommandId
	} else if w.ProducerId != nil {
		if p := s.producers[w.ProducerId.String()]; p != nil && p.window > 0 {
			ps.producer = w.ProducerId
			ps.ackSize = messageSize(w)
		}
	}
	var token uint64
	if ps.corr != 0 || ps.producer != nil {
		s.pendingMu.Lock()
		s.tokenSeq++
		token = s.tokenSeq
		put(&s.pending, token, ps)
		s.pendingMu.Unlock()
	}
	if err := s.conn.Send(m, txKey(w.TransactionId), s, token); err != nil {
		if token != 0 {
			s.pendingMu.Lock()
			delete(s.pending, token)
			s.pendingMu.Unlock()
		}
		if !base.ResponseRequired {
			// An async send refused at once (not authorized, say) is
			// reported as the broker reports any failed async command:
			// TransportConnection.service hands it to serviceException,
			// which dispatches a ConnectionError; the JMS client gives it
			// to the connection's exception listener and stays connected.
			if ok, held := s.srv.refusedSend.Allow(time.Now()); ok {
				s.log.Warn("async send refused", "err", err, "suppressed", held)
			}
			s.send(&wire.ConnectionError{Exception: javaException(err), ConnectionId: s.connID})
			return
		}
		s.respond(w, err)
	}
}

// messageSize is ActiveMQ's Message.getSize for a received message: the
// minimum message size (1024) plus the marshalled properties and content.
// The Java client counts its producer window with the same figure, so a
// ProducerAck must carry exactly it.
func messageSize(w *wire.Message) int32 {
	return int32(1024 + len(w.MarshalledProperties) + len(w.Content))
}

// Complete answers a send the engine has finished. Called from shard
// goroutines (or at once, inside Send, for transacted sends).
func (s *session) Complete(token uint64, err error) {
	if token == 0 {
		if err != nil && !s.closed.Load() {
			// An async send has no Response to fail: ActiveMQ reports it
			// with a ConnectionError, which the client hands to its
			// exception listener.
			s.send(&wire.ConnectionError{Exception: javaException(err), ConnectionId: s.connID})
		}
		return
	}
	s.pendingMu.Lock()
	ps, ok := s.pending[token]
	delete(s.pending, token)
	s.pendingMu.Unlock()
	if !ok || s.closed.Load() {
		return
	}
	switch {
	case ps.corr != 0:
		s.respondTo(ps.corr, err)
	case ps.producer != nil:
		if err != nil {
			s.log.Debug("async send failed", "err", err)
		}
		s.send(&wire.ProducerAck{ProducerId: ps.producer, Size: ps.ackSize})
	}
}
