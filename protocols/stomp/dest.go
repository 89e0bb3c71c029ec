package stomp

import (
	"strings"

	"wharf/engine/message"
)

// Destination prefixes (ActiveMQ LegacyFrameTranslator).
const (
	prefixQueue      = "/queue/"
	prefixTopic      = "/topic/"
	prefixTempQueue  = "/temp-queue/"
	prefixTempTopic  = "/temp-topic/"
	prefixRemoteTmpQ = "/remote-temp-queue/"
	prefixRemoteTmpT = "/remote-temp-topic/"
)

// toDestination converts a STOMP destination header. ok is false for a name
// with no known prefix; SEND, SUBSCRIBE and UNSUBSCRIBE then fall back to a
// queue of that name, as ActiveMQ 5.17 does, while reply-to keeps the raw
// string as a property.
func (s *session) toDestination(name string) (d message.Destination, ok bool, err *protocolError) {
	if strings.IndexByte(name, ',') >= 0 {
		return s.toComposite(name)
	}
	switch {
	case strings.HasPrefix(name, prefixQueue):
		return message.QueueDest(name[len(prefixQueue):]), true, nil
	case strings.HasPrefix(name, prefixTopic):
		return message.TopicDest(name[len(prefixTopic):]), true, nil
	case strings.HasPrefix(name, prefixTempQueue), strings.HasPrefix(name, prefixTempTopic):
		d, err := s.tempDestination(name)
		return d, err == nil, err
	case strings.HasPrefix(name, prefixRemoteTmpQ):
		return message.Destination{Type: message.TempQueue, Name: name[len(prefixRemoteTmpQ):]}, true, nil
	case strings.HasPrefix(name, prefixRemoteTmpT):
		return message.Destination{Type: message.TempTopic, Name: name[len(prefixRemoteTmpT):]}, true, nil
	}
	return message.QueueDest(name), false, nil
}

// toComposite converts "a,b,c", each element with its own STOMP prefix,
// into a composite destination, as ActiveMQ's LegacyFrameTranslator.
// convertDestination does: every element becomes its qualified name
// ("/topic/b" → "topic://b"), they are joined with commas, and
// ActiveMQDestination.createDestination(joined, QUEUE_TYPE) takes the first
// element's kind for the composite and leaves the others qualified
// ("/queue/a,/topic/b" → queue "a,topic://b"). An element without a prefix
// is a queue; ok is false then.
func (s *session) toComposite(name string) (d message.Destination, ok bool, err *protocolError) {
	ok = true
	parts := strings.Split(name, ",")
	for i, part := range parts {
		el, elOK, err := s.toDestination(part)
		if err != nil {
			return message.Destination{}, false, err
		}
		ok = ok && elOK
		parts[i] = el.String()
	}
	return message.ParseQualified(strings.Join(parts, ","), message.Queue), ok, nil
}

// tempDestination maps "/temp-queue/x" to a temporary destination of this
// connection, creating it the first time the name is used.
func (s *session) tempDestination(name string) (message.Destination, *protocolError) {
	s.mu.Lock()
	d, ok := s.tempByKey[name]
	s.mu.Unlock()
	if ok {
		return d, nil
	}
	if s.conn == nil {
		return message.Destination{}, perr("Not connected.")
	}
	d, err := s.conn.CreateTemp(strings.HasPrefix(name, prefixTempTopic))
	if err != nil {
		return message.Destination{}, engineError(err)
	}
	s.mu.Lock()
	if s.tempByKey == nil {
		s.tempByKey, s.tempName = map[string]message.Destination{}, map[message.Destination]string{}
	}
	s.tempByKey[name] = d
	s.tempName[d] = name
	s.mu.Unlock()
	return d, nil
}

// appendDestination renders a destination for a MESSAGE frame: this
// connection's temporary destinations under the name it gave them, other
// connections' as /remote-temp-queue/<id>.
func (s *session) appendDestination(dst []byte, d message.Destination) []byte {
	switch d.Type {
	case message.Topic:
		dst = append(dst, prefixTopic...)
	case message.TempQueue, message.TempTopic:
		s.mu.Lock()
		name, mine := s.tempName[d]
		s.mu.Unlock()
		if mine {
			return append(dst, name...)
		}
		if d.Type == message.TempQueue {
			dst = append(dst, prefixRemoteTmpQ...)
		} else {
			dst = append(dst, prefixRemoteTmpT...)
		}
	default:
		dst = append(dst, prefixQueue...)
	}
	return append(dst, d.Name...)
}
