package amqp

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
)

// Filters ActiveMQ reads from a source's filter set (AmqpSupport).
const (
	selectorFilterName = wire.Symbol("apache.org:selector-filter:string")
	selectorFilterCode = uint64(0x0000468C00000004)
	noLocalFilterName  = wire.Symbol("apache.org:no-local-filter:list")
	noLocalFilterCode  = uint64(0x0000468C00000003)
)

// link is one attached link. receiving links carry the client's messages
// to the broker (the client is the sender); the others carry deliveries
// to the client.
type link struct {
	s         *session
	handle    uint32
	name      string
	receiving bool

	// Receiving links (transport goroutine).
	target      message.Destination // zero: the anonymous relay
	coordinator bool

	// Sending links.
	es         atomic.Pointer[engine.Subscription]
	durable    string              // durable subscription name (the link name)
	temp       message.Destination // a dynamic node, deleted with the link
	presettled bool                // snd-settle-mode settled

	// Flow state. For receiving links it is touched by the transport
	// goroutine only; for sending links it is under c.outMu.
	deliveryCount uint32
	credit        uint32
	drain         bool
	// attached is set once the broker's Attach is written; deliveries the
	// engine hands over before that (a browse starts at once) wait in
	// early, so that no transfer precedes the attach (§2.6.3). Under
	// c.outMu.
	attached bool
	early    []pendingTransfer
	// to caches the address of the deliveries' destination (under
	// c.outMu, with the delivery's mapping).
	to addrCache

	closed atomic.Bool
}

// outDelivery is a delivery the broker sent and the client has not settled.
// It travels by value (session.unsettled, pendingTransfer), so that a
// delivery allocates none (BenchmarkAMQPDeliverEncode).
type outDelivery struct {
	l          *link
	es         *engine.Subscription
	id         uint64 // the engine's delivery id
	deliveryID uint32
	presettled bool
	format     uint32 // the transfer's message-format
}

func (s *session) onAttach(a *wire.Attach) {
	if _, dup := s.links[a.Handle]; dup {
		s.c.closeWith(wire.ErrCondHandleInUse, fmt.Sprintf("handle %d is in use", a.Handle))
		return
	}
	delete(s.detached, a.Handle)
	l := &link{s: s, handle: a.Handle, name: a.Name, receiving: a.Role == wire.RoleSender}
	var err *wire.Error
	if l.receiving {
		err = l.attachReceiving(a)
	} else {
		err = l.attachSending(a)
	}
	reply := &wire.Attach{Name: a.Name, Handle: a.Handle, Role: !a.Role,
		SndSettleMode: a.SndSettleMode, RcvSettleMode: a.RcvSettleMode,
		Source: a.Source, Target: a.Target}
	if err != nil {
		// A refused link: attach with no terminus on our side, then detach
		// with the error (AMQP 1.0 §2.6.3).
		s.c.log.Info("link refused", "link", a.Name, "condition", string(err.Condition), "err", err.Description)
		if l.receiving {
			reply.Target = nil
		} else {
			reply.Source = nil
		}
		s.c.writeFrame(s.ch, reply)
		s.c.writeFrame(s.ch, &wire.Detach{Handle: a.Handle, Closed: true, Error: err})
		s.detached[a.Handle] = true
		return
	}
	s.links[a.Handle] = l
	if l.receiving {
		// The broker settles what it receives as soon as it is stored,
		// whatever the client asked: say so (§2.8.3).
		reply.RcvSettleMode = wire.RcvSettleFirst
		if !l.temp.IsZero() {
			reply.Target = &wire.Target{Address: FormatAddress(l.temp), Dynamic: true}
		}
		s.c.writeFrame(s.ch, reply)
		// Grant the producer credit (ActiveMQ: transport.producerCredit).
		l.credit = s.c.srv.opts.ProducerCredit
		if a.InitialDeliveryCount != nil {
			l.deliveryCount = *a.InitialDeliveryCount
		}
		s.c.writeFrame(s.ch, s.flowFrame(l))
		return
	}
	if src := reply.Source; src != nil && !l.temp.IsZero() {
		c := *src
		c.Address = FormatAddress(l.temp)
		reply.Source = &c
	}
	if a.Source == nil && l.durable != "" {
		reply.Source = l.recoveredSource()
	}
	zero := uint32(0)
	reply.InitialDeliveryCount = &zero
	s.c.outMu.Lock()
	s.c.writeFrameLocked(s.ch, reply)
	l.attached = true
	for _, p := range l.early {
		s.transferLocked(l, p.d, p.payload)
	}
	l.early = nil
	s.c.outMu.Unlock()
	if es := l.es.Load(); es != nil {
		es.Start()
	}
}

// attachReceiving sets up a link on which the client sends: to a node, to
// the anonymous relay (no address), to a dynamic node, or to the
// transaction coordinator.
func (l *link) attachReceiving(a *wire.Attach) *wire.Error {
	c := l.s.c
	switch t := a.Target.(type) {
	case *wire.Coordinator:
		l.coordinator = true
		return nil
	case *wire.Target:
		if t.Dynamic {
			d, err := c.ec.CreateTemp(hasCapability(t.Capabilities, "temporary-topic"))
			if err != nil {
				return engineError(err)
			}
			l.temp, l.target = d, d
			return nil
		}
		if t.Address == "" {
			return nil // the anonymous relay: each message's "to" decides
		}
		d, err := ParseAddress(t.Address)
		if err != nil {
			return &wire.Error{Condition: wire.ErrCondInvalidField, Description: err.Error()}
		}
		// The producer needs write access when the link attaches, as
		// ActiveMQ's AmqpSession.createReceiver sends a ProducerInfo that
		// AuthorizationBroker.addProducer refuses with unauthorized-access.
		if err := c.ec.AuthorizeProducer(d); err != nil {
			return engineError(err)
		}
		l.target = d
		return nil
	case nil:
		return nil
	}
	return &wire.Error{Condition: wire.ErrCondInvalidField, Description: "unsupported target"}
}

// attachSending subscribes for a link on which the client receives.
func (l *link) attachSending(a *wire.Attach) *wire.Error {
	c := l.s.c
	src := a.Source
	spec := engine.SubSpec{Prefetch: 0, AckMode: engine.AckIndividual, Paused: true}
	l.presettled = a.SndSettleMode == wire.SndSettleSettled
	if l.presettled {
		spec.AckMode = engine.AckAuto
	}
	switch {
	case src == nil:
		// A re-attach to a durable subscription by link name, refused in
		// ActiveMQ's words when there is none (AmqpSession.createSender).
		ds := c.findDurable(a.Name)
		if ds == nil {
			return &wire.Error{Condition: wire.ErrCondNotFound, Description: "Unknown subscription link: " + a.Name}
		}
		spec.Destination, spec.Selector, spec.NoLocal = ds.Destination, ds.Selector, ds.NoLocal
		spec.DurableName = a.Name
		l.durable = a.Name
	case src.Dynamic:
		d, err := c.ec.CreateTemp(hasCapability(src.Capabilities, "temporary-topic"))
		if err != nil {
			return engineError(err)
		}
		l.temp = d
		spec.Destination = d
	default:
		d, err := ParseAddress(src.Address)
		if err != nil {
			return &wire.Error{Condition: wire.ErrCondInvalidField, Description: err.Error()}
		}
		spec.Destination = d
		if sel, ok, err := selectorOf(src.Filter); err != nil {
			return err
		} else if ok {
			spec.Selector = sel
		}
		spec.NoLocal = hasFilter(src.Filter, noLocalFilterName, noLocalFilterCode)
		if src.DistributionMode == wire.DistModeCopy && !d.Type.IsTopic() {
			spec.Browser = true
			spec.AckMode = engine.AckAuto
		}
		if d.Type.IsTopic() && src.Durable != wire.DurableNone {
			spec.DurableName = a.Name
			l.durable = a.Name
		}
	}
	c.log.Debug("attach sending link", "link", a.Name, "dest", spec.Destination.String(), "durable", spec.DurableName, "src_durable", src != nil && src.Durable != wire.DurableNone)
	es, err := c.ec.Subscribe(spec, l)
	if err != nil {
		if !l.temp.IsZero() {
			c.ec.DeleteTemp(l.temp)
		}
		return engineError(err)
	}
	l.es.Store(es)
	return nil
}

// recoveredSource is the source of a re-attached durable subscription.
func (l *link) recoveredSource() *wire.Source {
	es := l.es.Load()
	if es == nil {
		return nil
	}
	spec := es.Spec()
	src := &wire.Source{Address: FormatAddress(spec.Destination), Durable: wire.DurableUnsettledState,
		ExpiryPolicy: wire.ExpiryNever, DistributionMode: wire.DistModeCopy}
	if spec.Selector != "" {
		src.Filter = wire.NewMap(selectorFilterName, wire.Described{Descriptor: selectorFilterCode, Value: spec.Selector})
	}
	return src
}

func (c *conn) findDurable(name string) *engine.DurableSub {
	for _, ds := range c.srv.e.DurableSubs(c.ec.ClientID()) {
		if ds.Key.Name == name {
			return &ds
		}
	}
	return nil
}

func hasCapability(caps []wire.Symbol, want wire.Symbol) bool {
	for _, c := range caps {
		if c == want {
			return true
		}
	}
	return false
}

// selectorOf reads the JMS selector filter of a source.
func selectorOf(filters *wire.Map) (string, bool, *wire.Error) {
	if filters == nil {
		return "", false, nil
	}
	for _, e := range filters.Entries {
		d, ok := e.Value.(wire.Described)
		if !ok {
			continue
		}
		if d.Descriptor == selectorFilterName || d.Descriptor == selectorFilterCode {
			s, ok := d.Value.(string)
			if !ok {
				return "", false, &wire.Error{Condition: wire.ErrCondInvalidField, Description: "the selector filter is not a string"}
			}
			return s, true, nil
		}
	}
	return "", false, nil
}

func hasFilter(filters *wire.Map, name wire.Symbol, code uint64) bool {
	if filters == nil {
		return false
	}
	for _, e := range filters.Entries {
		if d, ok := e.Value.(wire.Described); ok && (d.Descriptor == name || d.Descriptor == code) {
			return true
		}
	}
	return false
}

// engineError maps an engine error to an AMQP error condition, with the
// text ActiveMQ gives for it (engine.ClientText) as the description.
//
// DEVIATION: ActiveMQ's AMQP transport (AmqpSession.createSender and
// createReceiver) answers every failed subscribe or producer with
// amqp:internal-error, but for a SecurityException (unauthorized-access)
// and an InvalidSelectorException (invalid-field); Wharf names the
// condition AMQP 1.0 §2.8.15 has for the failure (not-found,
// resource-locked, resource-limit-exceeded, ...), so that clients can tell
// them apart. The descriptions are ActiveMQ's.
func engineError(err error) *wire.Error {
	cond := wire.ErrCondInternalError
	switch {
	case errors.Is(err, engine.ErrNotAuthorized), errors.Is(err, engine.ErrBadCredentials):
		cond = wire.ErrCondUnauthorizedAccess
	case errors.Is(err, engine.ErrResourceAllocation):
		cond = wire.ErrCondResourceLimitExceeded
	case errors.Is(err, engine.ErrBadDestination), errors.Is(err, engine.ErrBadSelector), errors.Is(err, engine.ErrWildcardSend):
		cond = wire.ErrCondInvalidField
	case errors.Is(err, engine.ErrTempGone), errors.Is(err, engine.ErrNoSuchSubscription):
		cond = wire.ErrCondNotFound
	case errors.Is(err, engine.ErrDurableInUse), errors.Is(err, engine.ErrClientIDInUse):
		cond = wire.ErrCondResourceLocked
	case errors.Is(err, engine.ErrUnknownTx):
		cond = wire.ErrCondTransactionUnknownID
	}
	return &wire.Error{Condition: cond, Description: engine.ClientText(err)}
}

// onFlow applies the client's link flow state.
func (l *link) onFlow(f *wire.Flow) {
	c := l.s.c
	if l.receiving {
		if f.Echo {
			c.writeFrame(l.s.ch, l.s.flowFrame(l))
		}
		return
	}
	es := l.es.Load()
	if es == nil || f.LinkCredit == nil {
		return
	}
	// credit = delivery-count(receiver) + link-credit(receiver) -
	// delivery-count(sender) (§2.6.7).
	c.outMu.Lock()
	rcvCount := l.deliveryCount
	if f.DeliveryCount != nil {
		rcvCount = *f.DeliveryCount
	}
	newCredit := int64(rcvCount) + int64(*f.LinkCredit) - int64(l.deliveryCount)
	newCredit = max(newCredit, 0)
	delta := newCredit - int64(l.credit)
	l.credit = uint32(newCredit)
	l.drain = f.Drain
	c.outMu.Unlock()
	c.log.Debug("link flow", "link", l.name, "credit", newCredit, "delta", delta, "drain", f.Drain)
	switch {
	case delta > 0:
		es.AddCredit(int(delta))
	case delta < 0:
		for i := int64(0); i < -delta && es.Revoke(); i++ {
		}
	}
	if f.Drain {
		l.drainNow(es)
	} else if f.Echo {
		c.writeFrame(l.s.ch, l.s.flowFrame(l))
	}
}

// drainNow uses up the link credit the engine cannot fill now: after Sync
// every deliverable message has been handed over, so what credit is left
// is advanced as if spent, and reported (§2.6.7 drain).
func (l *link) drainNow(es *engine.Subscription) {
	c := l.s.c
	es.Sync()
	n := uint32(0)
	for es.Revoke() {
		n++
	}
	c.outMu.Lock()
	if n > l.credit {
		n = l.credit
	}
	l.deliveryCount += n
	l.credit -= n
	f := l.s.flowFrameLocked(l)
	f.Drain = true
	l.drain = false
	c.writeFrameLocked(l.s.ch, f)
	c.outMu.Unlock()
}

// Deliver sends an engine delivery to the client. It runs on a shard
// goroutine.
func (l *link) Deliver(d engine.Delivery) {
	c := l.s.c
	if l.closed.Load() || c.live.Closed() {
		return
	}
	if d.BrowseEnd {
		return
	}
	now := time.Now().UnixMilli()
	c.outMu.Lock()
	defer c.outMu.Unlock()
	// Mapped into the connection's scratch outMessage and encoded into its
	// buffer: sendLocked copies it into the frames at once; only a held
	// transfer keeps a copy of its own. So a delivery allocates no
	// message of its own (BenchmarkAMQPDeliverEncode).
	am := fromMessage(&c.outMsg, &l.to, d.Msg, d.Redeliveries, now)
	c.msgBuf = wire.AppendMessage(c.msgBuf[:0], am)
	c.outMsg = outMessage{} // drop the references to d.Msg
	payload := c.msgBuf
	l.deliveryCount++
	if l.credit > 0 {
		l.credit--
	}
	od := outDelivery{l: l, es: d.Sub, id: d.ID, presettled: l.presettled || d.Sub.Spec().Browser, format: MessageFormat(d.Msg)}
	if !l.attached {
		l.early = append(l.early, pendingTransfer{l: l, d: od, payload: bytes.Clone(payload)})
		return
	}
	l.s.transferLocked(l, od, payload)
}

// settle applies the client's outcome for a delivery (mappings.md §3.5).
// comp, when not nil, is told once the outcome is as durable as the store
// makes it (engine.Conn.AckDurable); settle reports whether it will be:
// when it returns false (a non-final state, an unknown transaction, a
// refused outcome) the caller tells comp itself.
func (l *link) settle(od *outDelivery, state wire.DeliveryState, comp engine.Completion) bool {
	c := l.s.c
	txID := ""
	if ts, ok := state.(*wire.TransactionalState); ok {
		txID = string(ts.TxnID)
		state = ts.Outcome
		if !c.txs[txID] {
			c.closeWith(wire.ErrCondTransactionUnknownID, "unknown transaction")
			return false
		}
	}
	var err error
	switch st := state.(type) {
	case *wire.Accepted, nil:
		err = c.ec.AckDurable(od.es, od.id, txID, comp, 0)
	case *wire.Rejected:
		cause := "rejected"
		if st.Error != nil {
			cause = string(st.Error.Condition) + ": " + st.Error.Description
		}
		err = c.ec.NackDurable(od.es, od.id, engine.NackPoison, cause, comp, 0)
	case *wire.Released:
		err = c.ec.NackDurable(od.es, od.id, engine.NackRelease, "", comp, 0)
	case *wire.Modified:
		switch {
		case st.UndeliverableHere:
			err = c.ec.NackDurable(od.es, od.id, engine.NackPoison, "undeliverable-here", comp, 0)
		case st.DeliveryFailed:
			err = c.ec.NackDurable(od.es, od.id, engine.NackRedeliver, "delivery-failed", comp, 0)
		default:
			err = c.ec.NackDurable(od.es, od.id, engine.NackRelease, "", comp, 0)
		}
	default:
		return false // Received: not final
	}
	if err != nil {
		if !errors.Is(err, engine.ErrConnClosed) {
			c.log.Debug("settle failed", "err", err)
		}
		return false
	}
	return true
}

// used counts one delivery received on a receiving link and tops the
// credit up when half of it is spent (ActiveMQ's AmqpReceiver does the same).
func (l *link) used() {
	l.deliveryCount++
	if l.credit > 0 {
		l.credit--
	}
	if l.credit <= l.s.c.srv.opts.ProducerCredit/2 {
		l.credit = l.s.c.srv.opts.ProducerCredit
		l.s.c.writeFrame(l.s.ch, l.s.flowFrame(l))
	}
}

// onDelivery handles a whole message the client sent on l.
func (l *link) onDelivery(t *wire.Transfer, payload []byte) {
	c := l.s.c
	l.used()
	settled := t.Settled != nil && *t.Settled
	id := *t.DeliveryID
	if l.coordinator {
		l.onCoordinator(id, payload)
		return
	}
	txID := ""
	if ts, ok := t.State.(*wire.TransactionalState); ok {
		txID = string(ts.TxnID)
		if !c.txs[txID] {
			l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondTransactionUnknownID, Description: "unknown transaction"}})
			return
		}
	}
	// Decoded into the connection's reused Message: ToMessage keeps
	// nothing of am but slices of payload, which is the delivery's own.
	am, err := c.msgDec.Decode(payload)
	if err != nil {
		l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondDecodeError, Description: err.Error()}})
		return
	}
	m, err := ToMessage(am, l.target, time.Now().UnixMilli())
	if err != nil {
		l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondInvalidField, Description: err.Error()}})
		return
	}
	if t.MessageFormat != nil && *t.MessageFormat != 0 {
		SetMessageFormat(m, *t.MessageFormat)
	}
	if m.Destination.IsZero() {
		// ActiveMQ's words (AmqpReceiver). DEVIATION: its condition is
		// the non-standard symbol "failed"; Wharf's is amqp:invalid-field
		// (AMQP 1.0 §2.8.15), the properties.to field being the fault.
		l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondInvalidField, Description: "Missing to field for message sent to an anonymous producer"}})
		return
	}
	var comp engine.Completion
	var token uint64
	if !settled {
		comp, token = l, uint64(id)
	}
	if err := c.ec.Send(m, txID, comp, token); err != nil {
		if !settled {
			l.dispose(id, &wire.Rejected{Error: engineError(err)})
		}
		c.log.Debug("send refused", "err", err)
	}
}

// Complete is told by the engine when a message the client sent is stored:
// the delivery is accepted, or rejected with ActiveMQ's condition. It runs
// on a shard goroutine.
func (l *link) Complete(token uint64, err error) {
	if l.s.c.live.Closed() {
		return
	}
	if err != nil {
		l.dispose(uint32(token), &wire.Rejected{Error: engineError(err)})
		return
	}
	l.s.c.accept(l.s, uint32(token))
}

// dispose settles an inbound delivery with state. Safe from any goroutine.
func (l *link) dispose(id uint32, state wire.DeliveryState) {
	l.s.c.writeFrame(l.s.ch, &wire.Disposition{Role: wire.RoleReceiver, First: id, Settled: true, State: state})
}

// onCoordinator handles a Declare or Discharge sent to the transaction
// coordinator (AMQP 1.0 §4.5).
func (l *link) onCoordinator(id uint32, payload []byte) {
	c := l.s.c
	am, err := wire.DecodeMessage(payload)
	if err != nil || am.BodyKind != wire.BodyValue {
		l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondDecodeError, Description: "coordinator message without an amqp-value body"}})
		return
	}
	v, err := wire.DecodeComposite(am.Value, c.dec.Limits())
	if err != nil {
		l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondDecodeError, Description: err.Error()}})
		return
	}
	switch p := v.(type) {
	case *wire.Declare:
		txID := c.nextTxID()
		if err := c.ec.Begin(string(txID)); err != nil {
			l.dispose(id, &wire.Rejected{Error: engineError(err)})
			return
		}
		if c.txs == nil {
			c.txs = map[string]bool{}
		}
		c.txs[string(txID)] = true
		l.dispose(id, &wire.Declared{TxnID: txID})
	case *wire.Discharge:
		tx := string(p.TxnID)
		if !c.txs[tx] {
			l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondTransactionUnknownID, Description: "unknown transaction"}})
			return
		}
		delete(c.txs, tx)
		var err error
		if p.Fail {
			err = c.ec.Rollback(tx)
		} else {
			err = c.ec.Commit(tx)
		}
		if err != nil {
			cond := engineError(err)
			if !p.Fail {
				cond.Condition = wire.ErrCondTransactionRollback
			}
			l.dispose(id, &wire.Rejected{Error: cond})
			return
		}
		l.dispose(id, &wire.Accepted{})
	default:
		l.dispose(id, &wire.Rejected{Error: &wire.Error{Condition: wire.ErrCondNotImplemented, Description: fmt.Sprintf("%T sent to the coordinator", v)}})
	}
}

func (s *session) onDetach(d *wire.Detach) {
	l := s.links[d.Handle]
	if l == nil && s.detached[d.Handle] {
		// The client's answer to our detach: the link is gone already.
		delete(s.detached, d.Handle)
		return
	}
	if l == nil {
		s.c.closeWith(wire.ErrCondUnattachedHandle, fmt.Sprintf("detach of handle %d, which is not attached", d.Handle))
		return
	}
	delete(s.links, d.Handle)
	l.detach(d.Closed)
	s.c.writeFrame(s.ch, &wire.Detach{Handle: d.Handle, Closed: d.Closed})
}

// detachWith detaches l from the broker's side with an error.
func (l *link) detachWith(cond wire.Symbol, desc string) {
	delete(l.s.links, l.handle)
	l.s.detached[l.handle] = true
	l.detach(false)
	l.s.c.writeFrame(l.s.ch, &wire.Detach{Handle: l.handle, Closed: true, Error: &wire.Error{Condition: cond, Description: desc}})
}

// detach releases what the link holds. closed (a link close, not a
// detach) also destroys its durable subscription, as ActiveMQ does.
func (l *link) detach(closed bool) {
	if !l.closed.CompareAndSwap(false, true) {
		return
	}
	c := l.s.c
	if c.ec == nil {
		return
	}
	if es := l.es.Load(); es != nil {
		if err := c.ec.CloseSubscription(es); err != nil && !errors.Is(err, engine.ErrSubClosed) {
			c.log.Debug("subscription close failed", "err", err)
		}
		if closed && l.durable != "" {
			if err := c.ec.Unsubscribe(l.durable); err != nil && !errors.Is(err, engine.ErrNoSuchSubscription) {
				c.log.Info("durable subscription not removed", "sub", l.durable, "err", err)
			}
		}
	}
	if !l.temp.IsZero() {
		if err := c.ec.DeleteTemp(l.temp); err != nil && !errors.Is(err, engine.ErrTempGone) {
			c.log.Debug("temporary destination not deleted", "dest", l.temp.String(), "err", err)
		}
	}
}
