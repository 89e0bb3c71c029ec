package stomp

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/stomp/wire"
)

// ActiveMQ's client-side prefetch defaults, which its STOMP converter uses
// (ActiveMQPrefetchPolicy).
const (
	queuePrefetch   = 1000
	topicPrefetch   = 32767
	durablePrefetch = 100
	browserPrefetch = 500
)

// subscription is one SUBSCRIBE of a session; it is the engine Sink.
type subscription struct {
	s        *session
	id       string // the SUBSCRIBE id header ("" in 1.0 without one)
	num      uint64 // session-local number, part of the ack ids
	dest     message.Destination
	ackMode  engine.AckMode
	sub      *engine.Subscription
	browser  bool
	giveBack func(error) // returns an auto-ack delivery's credit once written
	esub     atomic.Pointer[engine.Subscription]

	// mu guards buf and pending: Deliver runs on shard goroutines (several
	// at once for a wildcard subscription), ACK on the transport goroutine.
	mu      sync.Mutex
	buf     []byte
	pending []pendingAck
}

// pendingAck is a delivery that awaits ACK or NACK (client and
// client-individual modes).
type pendingAck struct {
	msgID string
	id    uint64
}

func boolHeader(f *wire.Frame, name string) bool {
	v, _ := f.Get(name)
	return strings.EqualFold(v, "true")
}

func (s *session) onSubscribe(f *wire.Frame) *protocolError {
	if err := s.checkConnected(); err != nil {
		return err
	}
	id, hasID := f.Get("id")
	if s.version != wire.V10 && !hasID {
		return perr("SUBSCRIBE received without a subscription id!")
	}
	destName, _ := f.Get("destination")
	if destName == "" {
		return perr("Invalid empty or 'null' Destination header")
	}
	// DEVIATION: ActiveMQ 5.17 accepts a SUBSCRIBE reusing a live id and
	// silently replaces its map entry, leaving the first consumer attached
	// but no longer addressable by UNSUBSCRIBE or ACK; Wharf refuses it
	// with this ERROR (STOMP 1.2 "SUBSCRIBE id Header": the id must be
	// unique per connection).
	if _, dup := s.subs[id]; dup {
		return perr("Duplicate subscription id: " + id)
	}
	dest, _, pe := s.toDestination(destName)
	if pe != nil {
		return pe
	}
	spec := engine.SubSpec{Destination: dest, ConvertStrings: true}
	durable, _ := f.Get("activemq.subscriptionName")
	switch {
	case !dest.Type.IsTopic():
		spec.Prefetch = queuePrefetch
	case durable != "":
		spec.Prefetch = durablePrefetch
	default:
		spec.Prefetch = topicPrefetch
	}
	if boolHeader(f, "browser") {
		if s.version == wire.V10 {
			return perr("Queue Browser feature only valid for Stomp v1.1+ clients!")
		}
		spec.Browser = true
		spec.Prefetch = browserPrefetch
	}
	spec.Selector, _ = f.Get("selector")
	spec.DefaultPrefetch = true
	// DEVIATION: ActiveMQ sets these through IntrospectionSupport, which
	// ignores a value it cannot convert (the default stays); Wharf refuses
	// the frame with an ERROR naming the header.
	if v, ok := f.Get("activemq.prefetchSize"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > 32767 {
			return perr("Invalid activemq.prefetchSize: " + v)
		}
		spec.Prefetch = n
		spec.DefaultPrefetch = false
	}
	if v, ok := f.Get("activemq.priority"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < -128 || n > 127 {
			return perr("Invalid activemq.priority: " + v)
		}
		spec.Priority = int8(n)
	}
	spec.Exclusive = boolHeader(f, "activemq.exclusive")
	spec.NoLocal = boolHeader(f, "activemq.noLocal")
	spec.Retroactive = boolHeader(f, "activemq.retroactive")
	spec.DurableName = durable
	if durable != "" && !dest.Type.IsTopic() {
		return perr("Invalid Subscription: cannot durably subscribe to a Queue destination!")
	}
	ack, _ := f.Get("ack")
	switch ack {
	case "client":
		spec.AckMode = engine.AckClient
	case "client-individual":
		spec.AckMode = engine.AckIndividual
	default:
		spec.AckMode = engine.AckAuto
	}
	if spec.Browser {
		spec.AckMode = engine.AckAuto
	}
	s.subSeq++
	sub := &subscription{s: s, id: id, num: s.subSeq, dest: dest, ackMode: spec.AckMode, browser: spec.Browser}
	sub.giveBack = func(error) {
		// Deliver stored the engine subscription before writing, so it is
		// set whenever a write completes.
		if es := sub.esub.Load(); es != nil {
			es.AddCredit(1)
		}
	}
	// With a receipt, subscribe with the window shut and open it after the
	// RECEIPT, so that no MESSAGE overtakes it (ActiveMQ does the same with a
	// ConsumerControl).
	_, wantReceipt := f.Get("receipt")
	spec.Paused = wantReceipt && !spec.Browser
	s.mu.Lock()
	if s.bySubNum == nil {
		s.bySubNum = map[uint64]*subscription{}
	}
	s.bySubNum[sub.num] = sub
	s.mu.Unlock()
	es, err := s.conn.Subscribe(spec, sub)
	if err != nil {
		s.mu.Lock()
		delete(s.bySubNum, sub.num)
		s.mu.Unlock()
		return engineError(err)
	}
	sub.mu.Lock()
	sub.sub = es
	sub.mu.Unlock()
	if s.subs == nil {
		s.subs = map[string]*subscription{}
	}
	s.subs[id] = sub
	s.subList = append(s.subList, sub)
	s.receipt(f)
	if spec.Paused {
		es.Start()
	}
	return nil
}

func (s *session) onUnsubscribe(f *wire.Frame) *protocolError {
	if err := s.checkConnected(); err != nil {
		return err
	}
	id, hasID := f.Get("id")
	destName, hasDest := f.Get("destination")
	if s.version != wire.V10 && !hasID {
		return perr("UNSUBSCRIBE received without a subscription id!")
	}
	if !hasID && !hasDest {
		return perr("Must specify the subscriptionId or the destination you are unsubscribing from")
	}
	// With activemq.subscriptionName the frame only destroys the durable
	// subscription, as ActiveMQ's onStompUnsubscribe does (it sends just a
	// RemoveSubscriptionInfo): a consumer still attached to it is not
	// closed, and the engine refuses with "in use" as ActiveMQ does. Close
	// it first with a plain UNSUBSCRIBE.
	if durable, isDurable := f.Get("activemq.subscriptionName"); isDurable {
		// DEVIATION: ActiveMQ in 1.0 mode uses the subscription name as the
		// client id here; Wharf always uses the connection's client id.
		if err := s.conn.Unsubscribe(durable); err != nil {
			return engineError(err)
		}
		s.receipt(f)
		return nil
	}
	var target *subscription
	if hasID {
		target = s.subs[id]
	} else {
		d, _, pe := s.toDestination(destName)
		if pe != nil {
			return pe
		}
		for _, sub := range s.subList {
			if sub.dest == d {
				target = sub
				break
			}
		}
	}
	if target == nil {
		return perr("No subscription matched.")
	}
	s.removeSub(target)
	if err := s.conn.CloseSubscription(target.sub); err != nil {
		return engineError(err)
	}
	s.receipt(f)
	return nil
}

func (s *session) removeSub(sub *subscription) {
	delete(s.subs, sub.id)
	for i, x := range s.subList {
		if x == sub {
			s.subList = append(s.subList[:i], s.subList[i+1:]...)
			break
		}
	}
	s.mu.Lock()
	delete(s.bySubNum, sub.num)
	s.mu.Unlock()
}

// Deliver writes a MESSAGE frame (LegacyFrameTranslator's mapping). It runs
// on a shard goroutine.
func (sub *subscription) Deliver(d engine.Delivery) {
	s := sub.s
	if sub.esub.Load() == nil {
		sub.esub.Store(d.Sub)
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	b := sub.buf[:0]
	if d.BrowseEnd {
		b = append(b, "MESSAGE\nsubscription:"...)
		b = wire.AppendEscaped(b, sub.id, s.version)
		b = append(b, "\ndestination:"...)
		b = s.appendDestination(b, sub.dest)
		b = append(b, "\nmessage-id:0\nbrowser:end\n\n\x00\n"...)
		sub.buf = b
		s.write(b)
		return
	}
	m := d.Msg
	v := s.version
	b = append(b, "MESSAGE\nsubscription:"...)
	b = wire.AppendEscaped(b, sub.id, v)
	b = append(b, "\ndestination:"...)
	b = s.appendDestEscaped(b, m.Destination, v)
	b = append(b, "\nmessage-id:"...)
	b = wire.AppendEscaped(b, m.ID, v)
	if sub.ackMode != engine.AckAuto {
		if v == wire.V12 {
			b = append(b, "\nack:"...)
			b = strconv.AppendUint(b, sub.num, 10)
			b = append(b, '-')
			b = strconv.AppendUint(b, d.ID, 10)
		}
		sub.pending = append(sub.pending, pendingAck{msgID: m.ID, id: d.ID})
	}
	if m.CorrelationID != "" {
		b = append(b, "\ncorrelation-id:"...)
		b = wire.AppendEscaped(b, m.CorrelationID, v)
	}
	b = append(b, "\nexpires:"...)
	b = strconv.AppendInt(b, m.Expiration, 10)
	if d.Redeliveries > 0 {
		b = append(b, "\nredelivered:true"...)
	}
	b = append(b, "\npriority:"...)
	b = strconv.AppendInt(b, int64(m.Priority), 10)
	if !m.ReplyTo.IsZero() {
		b = append(b, "\nreply-to:"...)
		b = s.appendDestEscaped(b, m.ReplyTo, v)
	}
	b = append(b, "\ntimestamp:"...)
	b = strconv.AppendInt(b, m.Timestamp, 10)
	if m.Type != "" {
		b = append(b, "\ntype:"...)
		b = wire.AppendEscaped(b, m.Type, v)
	}
	if m.UserID != "" {
		b = append(b, "\nJMSXUserID:"...)
		b = wire.AppendEscaped(b, m.UserID, v)
	}
	// No JMSXGroupID, JMSXGroupSeq or JMSXGroupFirstForConsumer: ActiveMQ's
	// FrameTranslator.Helper.copyStandardHeadersFromMessageToFrame copies
	// ActiveMQMessage.getProperties() only, and these three are message
	// fields there (setObjectProperty routes them to setGroupID,
	// setGroupSequence and setJMSXGroupFirstForConsumer), so a STOMP
	// consumer of ActiveMQ never sees them.
	if !m.OriginalDestination.IsZero() {
		b = append(b, "\noriginal-destination:"...)
		b = s.appendDestEscaped(b, m.OriginalDestination, v)
	}
	if m.Persistent {
		b = append(b, "\npersistent:true"...)
	}
	for i := range m.Props {
		p := &m.Props[i]
		if p.Name == "JMSXGroupFirstForConsumer" {
			continue // a message field in ActiveMQ, see above
		}
		b = append(b, '\n')
		b = wire.AppendEscaped(b, p.Name, v)
		b = append(b, ':')
		b = wire.AppendEscaped(b, p.Value.Text(), v)
	}
	var body []byte
	switch {
	case m.Advisory != nil:
		body = advisoryJSON(m.Advisory)
		// ActiveMQ's JmsFrameTranslator names the rendering it chose.
		b = append(b, "\ntransformation:jms-advisory-json"...)
	case m.BodyType == message.TextBody:
		body = m.Body
	case m.BodyType == message.BytesBody:
		body = m.Body
		b = append(b, "\ncontent-length:"...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
	}
	// Map, stream and object bodies reach STOMP as an empty body unless a
	// transformation asked for XML or JSON, which Wharf does not offer yet.
	b = append(b, "\n\n"...)
	b = append(b, body...)
	b = append(b, 0, '\n')
	sub.buf = b
	s.live.Wrote()
	if sub.ackMode == engine.AckAuto && !sub.browser {
		if err := s.tc.WriteNotify(b, sub.giveBack); err != nil {
			s.log.Debug("write failed", "err", err)
		}
		return
	}
	s.write(b)
}

// appendDestEscaped appends a rendered destination escaped for version v,
// without allocating in the common case of a name that needs no escaping.
func (s *session) appendDestEscaped(b []byte, d message.Destination, v string) []byte {
	start := len(b)
	b = s.appendDestination(b, d)
	if v == wire.V10 {
		return b
	}
	for _, c := range b[start:] {
		if c == ':' || c == '\\' || c == '\n' || c == '\r' {
			raw := string(b[start:])
			return wire.AppendEscaped(b[:start], raw, v)
		}
	}
	return b
}
