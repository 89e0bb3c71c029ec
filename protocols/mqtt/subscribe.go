package mqtt

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/mqtt/wire"
)

// ActiveMQ's MQTT subscription prefetches (MQTTSubscriptionStrategy).
const (
	topicPrefetch   = 32767
	durablePrefetch = 100
	queuePrefetch   = 1000
)

// subscription is one topic filter of a session; it is the engine Sink.
type subscription struct {
	s       *session
	filter  string // as subscribed
	qos     byte   // granted
	durable string // durable subscription name, "" when not durable
	queue   message.Destination
	share   message.Destination // the group's queue of a shared subscription
	rap     bool                // MQTT 5 retain-as-published
	subID   uint32              // MQTT 5 subscription identifier, 0 none
	// skipDollar: a filter starting with a wildcard matches no topic
	// starting with '$' [MQTT-4.7.2-1].
	//
	// DEVIATION: ActiveMQ 5.17 maps + and # to JMS's * and > and so hands
	// such a subscriber $SYS/... messages too (seen with raw frames; the
	// conform case mqtt/topics/dollar-published pins it). Wharf keeps the
	// MQTT rule, which MQTT clients rely on.
	skipDollar bool
	es         atomic.Pointer[engine.Subscription]
	closed     atomic.Bool
	giveBack   func(error) // returns an auto-ack delivery's credit once written
}

// outFlight is a QoS 1 or 2 delivery awaiting the client's PUBACK, or
// PUBREC then PUBCOMP.
type outFlight struct {
	es       *engine.Subscription // nil for a PUBREL resumed from an earlier connection
	id       uint64
	qos      byte
	released bool // QoS 2: PUBREC came, the acknowledgement is posted
	// durable: QoS 2, the acknowledgement is on disk and PUBREL may go
	// out (relDone); PUBCOMP is taken only after it.
	durable bool
	used    bool // a delivery is in this slot of flights.ring
}

// waitingDelivery is a delivery held back by the client's Receive Maximum.
type waitingDelivery struct {
	sub *subscription
	d   engine.Delivery
	qos byte
}

func (s *session) onSubscribe(p *wire.Packet) {
	var subID uint32
	if p.Props != nil && len(p.Props.SubscriptionIDs) > 0 {
		subID = p.Props.SubscriptionIDs[0]
	}
	codes := make([]byte, len(p.Subscriptions))
	var started []*engine.Subscription
	for i, r := range p.Subscriptions {
		var es *engine.Subscription
		codes[i], es = s.subscribe(r, subID)
		if es != nil {
			started = append(started, es)
		}
	}
	s.writePacket(&wire.Packet{Type: wire.SUBACK, PacketID: p.PacketID, ReasonCodes: codes}, s.version)
	// Subscribed with the window shut, opened after the SUBACK: no retained
	// message overtakes it [MQTT-3.8.4-1 order].
	for _, es := range started {
		es.Start()
	}
}

// subscribe makes one subscription and returns its SUBACK code and, on
// success, the engine subscription to start.
func (s *session) subscribe(r wire.Subscription, subID uint32) (byte, *engine.Subscription) {
	fail := func(code5 byte) byte {
		if s.version == wire.Version5 {
			return code5
		}
		return 0x80
	}
	filter := strings.Clone(r.Filter)
	if err := wire.ValidTopicFilter(filter); err != nil {
		s.logger().Info("subscription refused", "filter", filter, "err", err)
		return fail(wire.ReasonTopicFilterInvalid), nil
	}
	qos := min(r.QoS, 2)
	if s.version == wire.Version5 {
		group, f, ok, err := wire.ParseShared(filter)
		if err != nil {
			return wire.ReasonTopicFilterInvalid, nil
		}
		if ok {
			if r.NoLocal {
				// [MQTT-3.8.3-4]: a protocol error.
				s.protocolError(wire.ReasonProtocolError, "no-local on a shared subscription")
				return wire.ReasonProtocolError, nil
			}
			return s.subscribeShared(filter, group, f, qos, subID)
		}
	}
	old := s.ext().subs[filter]
	isNew := old == nil
	if old != nil {
		s.closeSub(old)
		delete(s.ext().subs, filter)
	}
	sub, spec := s.newSubscription(filter, qos)
	if old != nil && old.durable != "" && old.durable != sub.durable {
		s.dropDurable(old)
	}
	sub.rap = r.RetainAsPublished
	sub.subID = subID
	spec.NoLocal = r.NoLocal
	spec.Paused = true
	// Retain Handling: 0 sends retained messages at every subscribe, 1 only
	// for a new subscription, 2 never [MQTT-3.3.1-9..11].
	spec.Retroactive = r.RetainHandling == 0 || (r.RetainHandling == 1 && isNew)
	es, err := s.conn.Subscribe(spec, sub)
	if err != nil {
		s.logger().Info("subscription refused", "filter", filter, "err", err)
		if errors.Is(err, engine.ErrNotAuthorized) {
			if s.version == wire.Version31 {
				// MQTT 3.1 has no failure code: ActiveMQ 5.17 grants the
				// requested QoS and the subscription silently gets
				// nothing (AbstractMQTTSubscriptionStrategy.doSubscribe:
				// "version 3.1 don't supports silent fail"; observed:
				// SUBACK 01 for a refused QoS 1 subscribe).
				return qos, nil
			}
			return fail(wire.ReasonNotAuthorized), nil
		}
		return fail(wire.ReasonUnspecifiedError), nil
	}
	sub.es.Store(es)
	s.ext().subs[filter] = sub
	return qos, es
}

// newSubscription describes the engine subscription of filter at qos under
// the session's strategy (MQTTDefaultSubscriptionStrategy or
// MQTTVirtualTopicSubscriptionStrategy).
func (s *session) newSubscription(filter string, qos byte) (*subscription, engine.SubSpec) {
	sub := &subscription{s: s, filter: filter, qos: qos}
	sub.skipDollar = strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")
	sub.giveBack = func(error) {
		if es := sub.es.Load(); es != nil {
			es.AddCredit(1)
		}
	}
	dest := s.topicFor(filter)
	spec := engine.SubSpec{Destination: dest, Prefetch: topicPrefetch, AckMode: engine.AckAuto}
	if qos > 0 {
		spec.AckMode = engine.AckIndividual
	}
	if s.persistent && qos > 0 {
		if s.srv.opts.VirtualTopics && !strings.HasPrefix(convertName(filter), virtualTopicPrefix) {
			// A queue per client and subscription, fed by the virtual topic.
			sub.queue = message.QueueDest(virtualQueuePrefix(s.clientID) + qosNames[qos] + "." + dest.Name)
			spec.Destination = sub.queue
			spec.Prefetch = queuePrefetch
		} else {
			sub.durable = durableName(qos, filter)
			spec.DurableName = sub.durable
			spec.Prefetch = durablePrefetch
		}
	}
	if n := s.srv.opts.SubscriptionPrefetch; n > 0 {
		spec.Prefetch = n
	}
	return sub, spec
}

// shareQueue is the queue of shared subscription group on filter:
// "$share/<group>/<filter>", with the characters that would make it a
// composite (',') or a pattern ('.', which would let "*" and ">" become
// wildcard elements) replaced.
func shareQueue(group, filter string) message.Destination {
	r := strings.NewReplacer(",", "_", ".", "_")
	return message.QueueDest(sharePrefix + r.Replace(group) + "/" + r.Replace(filter))
}

// sharePrefix starts the names of shared subscription queues.
const sharePrefix = "$share/"

// subscribeShared joins the shared subscription group on filter
// (full is "$share/<group>/<filter>"): the group's members consume from one
// queue that every matching topic message is copied to, so each message
// goes to one of them [MQTT 5 §4.8.2]. Retained messages are not sent.
func (s *session) subscribeShared(full, group, filter string, qos byte, subID uint32) (byte, *engine.Subscription) {
	queue := shareQueue(group, filter)
	if old := s.ext().subs[full]; old != nil {
		s.closeSub(old)
		delete(s.ext().subs, full)
		s.srv.shareLeave(old.share)
		if s.persistent && old.qos != qos {
			s.forgetShare(full, old.qos)
		}
	}
	s.srv.shareJoin(s.topicFor(filter), queue)
	sub := &subscription{s: s, filter: full, qos: qos, share: queue, subID: subID}
	sub.giveBack = func(error) {
		if es := sub.es.Load(); es != nil {
			es.AddCredit(1)
		}
	}
	spec := engine.SubSpec{Destination: queue, Prefetch: durablePrefetch, AckMode: engine.AckAuto, Paused: true}
	if qos > 0 {
		spec.AckMode = engine.AckIndividual
	}
	es, err := s.conn.Subscribe(spec, sub)
	if err != nil {
		s.srv.shareLeave(queue)
		s.logger().Info("shared subscription refused", "filter", full, "err", err)
		if errors.Is(err, engine.ErrNotAuthorized) {
			return wire.ReasonNotAuthorized, nil
		}
		return wire.ReasonUnspecifiedError, nil
	}
	sub.es.Store(es)
	s.ext().subs[full] = sub
	if s.persistent {
		s.recordShare(full, filter, qos)
		s.srv.mu.Lock()
		if s.cs.x().shared == nil {
			s.cs.x().shared = map[string]byte{}
		}
		s.cs.x().shared[full] = qos
		s.srv.mu.Unlock()
	}
	return qos, es
}

// recordShare keeps the membership of a persistent session in shared
// subscription full (group on filter, at qos) in the store, so that a
// restart gives it back (Server.restoreShareMembers): a durable
// subscription of the client id named <QoS>:$share/<group>/<filter>, on
// the topic the share is fed from, whose selector matches nothing, so it
// keeps no message (the share's queue keeps them).
//
// DEVIATION: ActiveMQ 5.17 has no MQTT 5; this record is Wharf's, and
// JMX and ActiveMQ reading the journal see it as an ordinary durable
// subscription with selector FALSE.
func (s *session) recordShare(full, filter string, qos byte) {
	spec := engine.SubSpec{Destination: s.topicFor(filter), DurableName: durableName(qos, full), Selector: "FALSE", AckMode: engine.AckAuto, Paused: true}
	es, err := s.conn.Subscribe(spec, discardSink{})
	if err != nil {
		s.logger().Warn("shared subscription not recorded", "filter", full, "err", err)
		return
	}
	if err := s.conn.CloseSubscription(es); err != nil && !errors.Is(err, engine.ErrSubClosed) {
		s.logger().Warn("subscription close failed", "filter", full, "err", err)
	}
}

// forgetShare deletes what recordShare stored for full at qos.
func (s *session) forgetShare(full string, qos byte) {
	if err := s.conn.Unsubscribe(durableName(qos, full)); err != nil && !errors.Is(err, engine.ErrNoSuchSubscription) {
		s.logger().Warn("durable subscription not removed", "sub", durableName(qos, full), "err", err)
	}
}

// discardSink is the sink of recordShare's subscription, which matches
// nothing and is closed at once.
type discardSink struct{}

// Deliver drops d.
func (discardSink) Deliver(engine.Delivery) {}

// virtualQueuePrefix starts the names of the consumer queues of clientID
// under the virtual-topic strategy: Consumer.<client id>:<QoS>.VirtualTopic.<filter>.
func virtualQueuePrefix(clientID string) string {
	return "Consumer." + convertName(clientID) + ":"
}

// closeSub ends sub's consumer; the durable subscription (or queue) stays.
func (s *session) closeSub(sub *subscription) {
	sub.closed.Store(true)
	if es := sub.es.Load(); es != nil {
		if err := s.conn.CloseSubscription(es); err != nil && !errors.Is(err, engine.ErrSubClosed) {
			s.logger().Warn("subscription close failed", "filter", sub.filter, "err", err)
		}
	}
}

// dropDurable deletes what keeps sub's messages while the client is away.
func (s *session) dropDurable(sub *subscription) {
	switch {
	case sub.durable != "":
		if err := s.conn.Unsubscribe(sub.durable); err != nil && !errors.Is(err, engine.ErrNoSuchSubscription) {
			s.logger().Warn("durable subscription not removed", "sub", sub.durable, "err", err)
		}
	case !sub.queue.IsZero():
		if err := s.srv.e.RemoveDestination(sub.queue); err != nil {
			s.logger().Warn("subscription queue not removed", "dest", sub.queue.String(), "err", err)
		}
	}
}

func (s *session) onUnsubscribe(p *wire.Packet) {
	codes := make([]byte, len(p.Topics))
	for i, f := range p.Topics {
		sub := s.ext().subs[f]
		if sub == nil {
			codes[i] = wire.ReasonNoSubscriptionExisted
			continue
		}
		delete(s.ext().subs, f)
		s.closeSub(sub)
		s.dropDurable(sub)
		if !sub.share.IsZero() {
			s.srv.shareLeave(sub.share)
			s.srv.mu.Lock()
			delete(s.cs.x().shared, f)
			s.srv.mu.Unlock()
			if s.persistent {
				s.forgetShare(f, sub.qos)
			}
		}
	}
	ack := wire.Packet{Type: wire.UNSUBACK, PacketID: p.PacketID}
	if s.version == wire.Version5 {
		ack.ReasonCodes = codes
	}
	s.writePacket(&ack, s.version)
}

// hasStoredSession reports whether the client id has subscriptions kept
// from an earlier connection.
func (s *session) hasStoredSession() bool {
	if s.clientID == "" {
		return false
	}
	for _, ds := range s.srv.e.DurableSubs(s.clientID) {
		if _, _, ok := parseDurableName(ds.Key.Name); ok {
			return true
		}
	}
	if s.srv.opts.VirtualTopics && len(s.srv.virtualQueues(s.clientID)) > 0 {
		return true
	}
	s.srv.mu.Lock()
	defer s.srv.mu.Unlock()
	return len(s.cs.xIfMade().released) > 0
}

// dropStoredSession deletes an earlier session of the client id: CONNECT
// with clean session deletes its durable subscriptions (ActiveMQ does).
func (s *session) dropStoredSession() {
	if s.clientID != "" {
		s.srv.mu.Lock()
		var shared map[string]byte
		if x := s.cs.ext; x != nil {
			shared, x.shared = x.shared, nil
		}
		s.srv.mu.Unlock()
		s.srv.dropSession(s.clientID, shared)
	}
}

// resumeSession re-creates the subscriptions of the stored session, which
// then deliver what they kept, and re-sends PUBREL for the QoS 2 deliveries
// whose PUBCOMP had not come [MQTT-4.4.0-1].
func (s *session) resumeSession() {
	for _, ds := range s.srv.e.DurableSubs(s.clientID) {
		qos, filter, ok := parseDurableName(ds.Key.Name)
		if !ok || qos == 0 {
			continue
		}
		if _, _, shared, _ := wire.ParseShared(filter); shared {
			continue // a membership recorded by recordShare: clientExt.shared has it
		}
		s.resume(filter, qos)
	}
	if s.srv.opts.VirtualTopics {
		prefix := virtualQueuePrefix(s.clientID)
		for _, d := range s.srv.virtualQueues(s.clientID) {
			rest := strings.TrimPrefix(d.Name, prefix)
			q, topic, ok := strings.Cut(rest, ".")
			if !ok {
				continue
			}
			for i, n := range qosNames {
				if n == q && i > 0 {
					s.resume(convertName(strings.TrimPrefix(topic, virtualTopicPrefix)), byte(i))
				}
			}
		}
	}
	s.srv.mu.Lock()
	shared := maps.Clone(s.cs.x().shared)
	s.srv.mu.Unlock()
	for full, qos := range shared {
		if group, f, ok, _ := wire.ParseShared(full); ok {
			// The membership held while away: the share is joined again,
			// then left once, so the count stays one for this client.
			// subscribeShared subscribes paused (for SUBSCRIBE, opened
			// after the SUBACK); a resumed one opens at once, as resume's.
			if _, es := s.subscribeShared(full, group, f, qos, 0); es != nil {
				es.Start()
			}
			s.srv.shareLeave(shareQueue(group, f))
		}
	}
	s.srv.mu.Lock()
	pids := make([]uint16, 0, len(s.cs.x().released))
	for pid, durable := range s.cs.x().released {
		// release waited for the earlier connection's acknowledgements,
		// so each is durable unless its store write failed (then gone).
		if durable {
			pids = append(pids, pid)
		}
	}
	s.srv.mu.Unlock()
	s.outMu.Lock()
	x := s.ext()
	for _, pid := range pids {
		x.inflight.put(pid, outFlight{qos: 2, released: true, durable: true})
	}
	s.outMu.Unlock()
	for _, pid := range pids {
		s.writeAck(wire.PUBREL, pid, 0)
	}
}

func (s *session) resume(filter string, qos byte) {
	sub, spec := s.newSubscription(filter, qos)
	es, err := s.conn.Subscribe(spec, sub)
	if err != nil {
		s.logger().Warn("stored subscription not resumed", "filter", filter, "err", err)
		return
	}
	sub.es.Store(es)
	s.ext().subs[filter] = sub
}

// Deliver sends a PUBLISH for a delivery (MQTTProtocolConverter.convertMessage
// and its mapping, reference/mappings.md §2.4). It runs on a shard
// goroutine.
func (sub *subscription) Deliver(d engine.Delivery) {
	s := sub.s
	if s.closed() || sub.closed.Load() {
		return // the engine takes unacknowledged deliveries back on close
	}
	m := d.Msg
	qos := min(sub.qos, messageQoS(m))
	if sub.skipDollar && strings.HasPrefix(m.Destination.Name, "$") {
		sub.settle(d)
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if qos == 0 {
		if !s.writePublish(sub, d, 0, 0) {
			sub.settle(d)
			return
		}
		if sub.qos > 0 {
			// A QoS 0 message on a QoS 1 or 2 subscription: nothing will
			// acknowledge it (ActiveMQ acks it at once as well).
			d.Sub.Settle(d.ID)
		}
		return
	}
	if x := s.ext(); x.inflight.len() >= int(s.recvMax) || !x.inflight.canAlloc() {
		x.waiting = append(x.waiting, waitingDelivery{sub: sub, d: d, qos: qos})
		return
	}
	s.sendInflight(sub, d, qos)
}

// settle gives up a delivery the session cannot send.
func (sub *subscription) settle(d engine.Delivery) {
	if sub.qos == 0 {
		d.Sub.AddCredit(1)
		return
	}
	d.Sub.Settle(d.ID)
}

// sendInflight sends a QoS 1 or 2 delivery under a fresh packet id.
// Called with outMu held.
func (s *session) sendInflight(sub *subscription, d engine.Delivery, qos byte) {
	x := s.ext()
	pid := x.inflight.alloc(outFlight{es: d.Sub, id: d.ID, qos: qos})
	if !s.writePublish(sub, d, qos, pid) {
		x.inflight.del(pid)
		d.Sub.Settle(d.ID)
	}
}

// pump sends the deliveries held back by the Receive Maximum. Called with
// outMu held.
func (s *session) pump() {
	x := s.ext()
	for len(x.waiting) > 0 && x.inflight.len() < int(s.recvMax) && x.inflight.canAlloc() {
		w := x.waiting[0]
		x.waiting[0] = waitingDelivery{}
		x.waiting = x.waiting[1:]
		if w.sub.closed.Load() {
			continue
		}
		s.sendInflight(w.sub, w.d, w.qos)
	}
	if len(x.waiting) == 0 {
		x.waiting = nil
	}
}

// writePublish encodes and writes the PUBLISH of d. It reports false when
// the packet exceeds the client's Maximum Packet Size, and is dropped
// [MQTT-3.1.2-25]. Called with outMu held.
func (s *session) writePublish(sub *subscription, d engine.Delivery, qos byte, pid uint16) bool {
	m := d.Msg
	p := wire.Packet{
		Type:     wire.PUBLISH,
		QoS:      qos,
		PacketID: pid,
		Dup:      qos > 0 && d.Redeliveries > 0,
		Topic:    s.deliveryTopic(m.Destination, m.OriginalDestination),
		Payload:  payloadOf(m),
	}
	if v, ok := m.Props.Get(engine.RetainedProperty); ok && v.Bool() {
		p.Retain = true
	} else if sub.rap && m.Retain {
		p.Retain = true
	}
	if s.version == wire.Version5 {
		p.Props = s.publishProps(sub, m)
	}
	x := s.ext()
	x.out = wire.AppendPacket(x.out[:0], &p, s.version)
	if s.maxPacket > 0 && len(x.out) > int(s.maxPacket) {
		s.logger().Debug("message over the client's maximum packet size dropped", "msg_id", m.ID, "size", len(x.out), "limit", s.maxPacket)
		return false
	}
	var err error
	if qos == 0 && sub.qos == 0 {
		err = s.tc.WriteNotify(x.out, sub.giveBack)
	} else {
		err = s.tc.Write(x.out)
	}
	if err != nil {
		s.logger().Debug("write failed", "err", err)
	}
	return true
}

// publishProps are the MQTT 5 properties of a delivery: the inverse of
// toMessage's mapping, plus the subscription identifier.
func (s *session) publishProps(sub *subscription, m *message.Message) *wire.Properties {
	pr := &wire.Properties{}
	if m.BodyType == message.TextBody {
		pr.PayloadFormat, pr.HasPayloadFormat = 1, true
	}
	if m.Expiration > 0 {
		left := (m.Expiration - time.Now().UnixMilli() + 999) / 1000
		pr.MessageExpiry, pr.HasMessageExpiry = uint32(max(left, 1)), true
	}
	if !m.ReplyTo.IsZero() {
		pr.ResponseTopic = s.mqttTopic(m.ReplyTo, message.Destination{})
	}
	if m.CorrelationID != "" {
		pr.CorrelationData = []byte(m.CorrelationID)
	}
	if sub.subID != 0 {
		pr.SubscriptionIDs = []uint32{sub.subID}
	}
	for i := range m.Props {
		p := &m.Props[i]
		switch p.Name {
		case QoSProperty, engine.RetainedProperty:
		case ContentTypeProperty:
			pr.ContentType = p.Value.Text()
		default:
			pr.User = append(pr.User, wire.UserProperty{Key: p.Name, Value: p.Value.Text()})
		}
	}
	return pr
}

// messageQoS is the QoS a message is delivered with at most: its
// ActiveMQ.MQTT.QoS, or for messages from other protocols 1 when
// persistent and 0 when not.
//
// DEVIATION: ActiveMQ 5.17 writes "persistent ? 0 : 1" here
// (reference/mappings.md §2.4), which sends persistent JMS messages at QoS
// 0 and non-persistent ones at QoS 1; Wharf maps persistence the way the
// inbound side does.
func messageQoS(m *message.Message) byte {
	if v, ok := m.Props.Get(QoSProperty); ok {
		switch {
		case v.IsInteger():
			return byte(min(max(v.Int(), 0), 2))
		case v.Kind == message.String:
			// ActiveMQ reads it with getIntProperty, which converts a
			// string (what a STOMP header becomes).
			if n, err := strconv.ParseInt(strings.TrimSpace(v.Str()), 10, 32); err == nil {
				return byte(min(max(n, 0), 2))
			}
		}
	}
	if m.Persistent {
		return 1
	}
	return 0
}

// payloadOf is the PUBLISH payload of a message: text as UTF-8, bytes as
// they are, a map as Java's Map.toString renders it, anything else as its
// raw body (ActiveMQ sends the marshalled content).
func payloadOf(m *message.Message) []byte {
	switch m.BodyType {
	case message.MapBody:
		return javaMapString(m.Map)
	default:
		return m.Body
	}
}

// javaMapString renders a map body as ActiveMQ's MQTT converter does:
// toString of the java.util.HashMap that MarshallingSupport unmarshals it
// into (new HashMap(size)), in that table's bucket order. Entries of one
// bucket come in wire order, which is the iteration order of the sender's
// map (ActiveMQMapMessage's new HashMap(), 16 buckets and growing): that
// order is rebuilt first, from the entries as given.
func javaMapString(entries message.Properties) []byte {
	n := len(entries)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	hashes := make([]int32, n)
	for i := range entries {
		h := javaStringHash(entries[i].Name)
		hashes[i] = h ^ int32(uint32(h)>>16)
	}
	byBuckets := func(capacity int) {
		slices.SortStableFunc(order, func(a, b int) int {
			return int(hashes[a]&int32(capacity-1)) - int(hashes[b]&int32(capacity-1))
		})
	}
	byBuckets(javaTableSize(16, n)) // the sender's new HashMap()
	receiver := 1
	for receiver < n {
		receiver <<= 1 // HashMap.tableSizeFor(n)
	}
	byBuckets(javaTableSize(receiver, n)) // the broker's new HashMap(n)
	b := []byte{'{'}
	for i, j := range order {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, entries[j].Name...)
		b = append(b, '=')
		b = append(b, entries[j].Value.Text()...)
	}
	return append(b, '}')
}

// javaTableSize is the table size of a java.util.HashMap created with
// capacity after n puts: doubled whenever n passes 0.75 of it.
func javaTableSize(capacity, n int) int {
	for float64(n) > 0.75*float64(capacity) {
		capacity <<= 1
	}
	return capacity
}

// javaStringHash is java.lang.String.hashCode: over UTF-16 code units.
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

func (s *session) onPubAck(p *wire.Packet) {
	s.outMu.Lock()
	fp := s.ext().inflight.get(p.PacketID)
	if fp == nil || fp.qos != 1 {
		s.outMu.Unlock()
		return // unknown or duplicate: nothing to do
	}
	f := *fp
	s.ext().inflight.del(p.PacketID)
	s.pump()
	s.outMu.Unlock()
	s.ack(&f)
}

func (s *session) onPubRec(p *wire.Packet) {
	s.outMu.Lock()
	fp := s.ext().inflight.get(p.PacketID)
	if fp == nil || fp.qos != 2 {
		s.outMu.Unlock()
		if s.version == wire.Version5 {
			s.writeAck(wire.PUBREL, p.PacketID, wire.ReasonPacketIDNotFound)
		}
		return
	}
	first := !fp.released
	fp.released = true
	f := *fp // fp is good while outMu is held
	if s.version == wire.Version5 && p.ReasonCode >= 0x80 {
		// The client refused the message: the exchange ends here, and the
		// broker confirms nothing: the fast path.
		s.ext().inflight.del(p.PacketID)
		s.pump()
		s.outMu.Unlock()
		s.ack(&f)
		return
	}
	durable := f.durable
	s.outMu.Unlock()
	if first {
		// DEVIATION: ActiveMQ acknowledges a QoS 2 delivery on PUBCOMP;
		// Wharf on PUBREC, after which the client owns the message and a
		// resumed session re-sends PUBREL, never the PUBLISH: exactly once
		// across reconnects [MQTT-4.3.3]. PUBREL is the broker's word that
		// it has let the message go, after which the client forgets the
		// packet id: it goes out once the acknowledgement is on disk
		// (relDone), so that a crash cannot bring the message back as a
		// new PUBLISH, a duplicate (issue 13 item 9; ActiveMQ syncs a
		// queue ack that asked for a response).
		s.srv.mu.Lock()
		if s.cs.x().released == nil {
			s.cs.x().released = map[uint16]bool{}
		}
		s.cs.x().released[p.PacketID] = false
		s.srv.mu.Unlock()
		s.ackDurable(&f, p.PacketID)
		return
	}
	if durable {
		s.writeAck(wire.PUBREL, p.PacketID, 0)
	}
	// Otherwise relDone sends it once the acknowledgement is on disk.
}

// ackDurable acknowledges the QoS 2 delivery f, whose PUBREC came on packet
// id pid, and has relDone send PUBREL once the store has it.
func (s *session) ackDurable(f *outFlight, pid uint16) {
	if f.es == nil {
		return
	}
	s.ext().acksOut.Add(1)
	if err := s.conn.AckDurable(f.es, f.id, "", (*relDone)(s), uint64(pid)); err != nil {
		s.ext().acksOut.Done()
		// Not acknowledged: no PUBREL, now or from a resumed session;
		// the engine gives the delivery back.
		s.srv.mu.Lock()
		delete(s.cs.x().released, pid)
		s.srv.mu.Unlock()
		if !errors.Is(err, engine.ErrConnClosed) {
			s.logger().Warn("ack failed", "err", err)
		}
	}
}

// relDone is the session as the engine.Completion of the acknowledgements
// of QoS 2 deliveries (session.Complete is the one of publishes).
type relDone session

// Complete sends the PUBREL of packet id token once the acknowledgement of
// its delivery is on disk; a resumed session sends it from then on
// (clientExt.released). If the store failed, the connection is closed:
// PUBREL never goes out for an acknowledgement the store may not have.
// It runs on the shard's writer goroutine: it takes Server.mu and outMu,
// never session.mu, and calls nothing in the engine.
func (r *relDone) Complete(token uint64, err error) {
	s := (*session)(r)
	defer s.ext().acksOut.Done()
	pid := uint16(token)
	s.srv.mu.Lock()
	if _, ok := s.cs.x().released[pid]; ok {
		if err != nil {
			delete(s.cs.x().released, pid)
		} else {
			s.cs.x().released[pid] = true
		}
	}
	s.srv.mu.Unlock()
	if err != nil {
		s.logger().Warn("acknowledgement not stored, closing", "err", err)
		s.tc.Close()
		return
	}
	s.outMu.Lock()
	f := s.ext().inflight.get(pid)
	send := f != nil && f.released && !f.durable
	if send {
		f.durable = true
	}
	s.outMu.Unlock()
	if send && !s.closed() {
		s.writeAck(wire.PUBREL, pid, 0)
	}
}

func (s *session) onPubComp(p *wire.Packet) {
	s.outMu.Lock()
	f := s.ext().inflight.get(p.PacketID)
	if f == nil || !f.durable {
		// Unknown, or before its PUBREL: the packet id stays taken.
		s.outMu.Unlock()
		return
	}
	s.ext().inflight.del(p.PacketID)
	s.pump()
	s.outMu.Unlock()
	s.srv.mu.Lock()
	delete(s.cs.x().released, p.PacketID)
	s.srv.mu.Unlock()
}

// ack acknowledges an in-flight delivery to the engine.
func (s *session) ack(f *outFlight) {
	if f.es == nil {
		return
	}
	if err := s.conn.Ack(f.es, f.id, ""); err != nil && !errors.Is(err, engine.ErrConnClosed) {
		s.logger().Debug("ack failed", "err", err)
	}
}
