package stomp

import (
	"strconv"
	"strings"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/stomp/wire"
)

// Headers that never become message properties (FrameTranslator
// copyStandardHeadersFromFrameToMessage and ProtocolConverter.onStompSend).
var sendHeadersDropped = map[string]bool{
	"destination": true, "receipt": true, "message-id": true, "redelivered": true,
	"subscription": true, "JMSXUserID": true, "transaction": true,
	"correlation-id": true, "expires": true, "timestamp": true, "priority": true,
	"type": true, "reply-to": true, "persistent": true,
}

func (s *session) onSend(f *wire.Frame) *protocolError {
	if err := s.checkConnected(); err != nil {
		return err
	}
	destName, ok := f.Get("destination")
	if !ok || destName == "" {
		return perr("SEND received without a Destination specified!")
	}
	m, perr := s.toMessage(f, destName)
	if perr != nil {
		return perr
	}
	txID, _ := f.Get("transaction")
	if txID != "" && !s.txs[txID] {
		return perrf("Invalid transaction id: " + txID)
	}
	var token uint64
	if r, ok := f.Get("receipt"); ok {
		s.mu.Lock()
		s.tokenSeq++
		token = s.tokenSeq
		s.addReceiptLocked(token, r)
		s.mu.Unlock()
	}
	// Flow control: a send the engine has not completed yet is outstanding
	// (a full destination parks it). Past the window, stop reading this
	// connection, as ActiveMQ stops reading a STOMP producer it blocks, so
	// the producer is held back by TCP instead of by the broker's memory.
	s.flow.Started()
	if err := s.conn.Send(m, txID, s, token); err != nil {
		s.flow.Done()
		if token != 0 {
			s.mu.Lock()
			delete(s.receipts, token)
			s.mu.Unlock()
		}
		return engineError(err)
	}
	return nil
}

func perrf(msg string) *protocolError { return perr(msg) }

// maxOutstandingSends is how many sends a connection may have waiting for
// the engine before its socket stops being read.
const maxOutstandingSends = 1024

// Complete is told when a SEND is stored (or failed); it writes the RECEIPT
// the frame asked for, or the ERROR. Called from shard goroutines.
func (s *session) Complete(token uint64, err error) {
	s.flow.Done()
	s.answer(token, err)
}

// answer writes the RECEIPT (token not 0) or the ERROR of a frame the
// engine has completed. Safe from any goroutine.
func (s *session) answer(token uint64, err error) {
	var receipt string
	if token != 0 {
		s.mu.Lock()
		receipt = s.receipts[token]
		delete(s.receipts, token)
		s.mu.Unlock()
	}
	if s.live.Closed() {
		return
	}
	var f wire.Frame
	switch {
	case err != nil:
		msg := engine.ClientText(err)
		f = wire.Frame{Command: wire.CmdError, Headers: []wire.Header{
			{Name: "message", Value: msg},
			{Name: "content-type", Value: "text/plain"},
		}, Body: []byte(msg)}
		if receipt != "" {
			f.Headers = append(f.Headers, wire.Header{Name: "receipt-id", Value: receipt})
		}
	case token != 0:
		f = wire.Frame{Command: wire.CmdReceipt, Headers: []wire.Header{{Name: "receipt-id", Value: receipt}}}
	default:
		return
	}
	s.writeFrame(&f) // its buffer is its own (pooled), safe here too
}

// toMessage translates a SEND frame as LegacyFrameTranslator does.
func (s *session) toMessage(f *wire.Frame, destName string) (*message.Message, *protocolError) {
	dest, _, perr := s.toDestination(destName)
	if perr != nil {
		return nil, perr
	}
	m := &message.Message{
		Destination: dest,
		Priority:    message.DefaultPriority,
		Body:        f.Body,
	}
	_, hasLength := f.Get(wire.HdrContentLength)
	if t, ok := f.Get("amq-msg-type"); ok {
		switch strings.ToLower(t) {
		case "text":
			m.BodyType = message.TextBody
		case "bytes":
			m.BodyType = message.BytesBody
		default:
			return nil, perrf("Unsupported message type '" + t + "'")
		}
	} else if hasLength {
		m.BodyType = message.BytesBody
	} else {
		m.BodyType = message.TextBody
	}
	seen := make(map[string]bool, len(f.Headers))
	for _, h := range f.Headers {
		// Repeated headers: the first occurrence counts (STOMP 1.2).
		if seen[h.Name] {
			continue
		}
		seen[h.Name] = true
		switch h.Name {
		case "correlation-id":
			m.CorrelationID = h.Value
		case "expires":
			n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 64)
			if err != nil {
				return nil, perrf("Invalid expires header: " + h.Value)
			}
			m.Expiration = n
		case "timestamp":
			n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 64)
			if err != nil {
				return nil, perrf("Invalid timestamp header: " + h.Value)
			}
			m.Timestamp = n
		case "priority":
			n, err := strconv.Atoi(strings.TrimSpace(h.Value))
			if err != nil || n < 0 || n > 9 {
				return nil, perrf("Invalid priority header: " + h.Value)
			}
			m.Priority = uint8(n)
		case "type":
			m.Type = h.Value
		case "reply-to":
			d, ok, perr := s.toDestination(h.Value)
			if perr != nil {
				return nil, perr
			}
			if ok {
				m.ReplyTo = d
			} else {
				m.Props.Set("reply-to", message.StringValue(h.Value))
			}
		case "persistent":
			m.Persistent = h.Value == "true"
		case "JMSXGroupID":
			m.GroupID = h.Value
		case "JMSXGroupSeq":
			n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 32)
			if err != nil {
				return nil, perrf("Invalid JMSXGroupSeq header: " + h.Value)
			}
			m.GroupSeq = int32(n)
		case wire.HdrContentLength:
			if m.BodyType == message.BytesBody && !hasAMQType(f) {
				continue // LegacyFrameTranslator removes it for BytesMessages
			}
			m.Props = append(m.Props, message.Property{Name: h.Name, Value: message.StringValue(h.Value)})
		case "AMQ_SCHEDULED_DELAY", "AMQ_SCHEDULED_PERIOD":
			n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 64)
			if err != nil {
				return nil, perrf("Invalid " + h.Name + " header: " + h.Value)
			}
			m.Props = append(m.Props, message.Property{Name: h.Name, Value: message.LongValue(n)})
		case "AMQ_SCHEDULED_REPEAT":
			n, err := strconv.ParseInt(strings.TrimSpace(h.Value), 10, 32)
			if err != nil {
				return nil, perrf("Invalid " + h.Name + " header: " + h.Value)
			}
			m.Props = append(m.Props, message.Property{Name: h.Name, Value: message.IntValue(int32(n))})
		default:
			if sendHeadersDropped[h.Name] {
				continue
			}
			m.Props = append(m.Props, message.Property{Name: h.Name, Value: message.StringValue(h.Value)})
		}
	}
	if m.Timestamp == 0 {
		m.Timestamp = time.Now().UnixMilli()
	}
	m.UserID = ""
	return m, nil
}

func hasAMQType(f *wire.Frame) bool {
	_, ok := f.Get("amq-msg-type")
	return ok
}
