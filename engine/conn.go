package engine

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"unsafe"

	"wharf/engine/message"
	"wharf/engine/selector"
)

// Conn is a client connection's handle on the engine. A Conn belongs to its
// protocol session: its methods must be called from one goroutine at a time
// (the session's), except where a method says otherwise.
type Conn struct {
	e        *Engine
	id       string
	clientID string
	subject  *Subject
	// user, protocol and remote are what the connection's listings and
	// advisories show of its Credentials; the rest (the password above
	// all) is not kept once the connection is authenticated.
	user, protocol string
	remote         net.Addr

	msgSeq uint64
	// idArena is where NextMessageID writes its ids (see there).
	idArena   []byte
	prodSeq   uint64
	producers []*Producer
	tempSeq   uint64
	subs      map[*Subscription]struct{}
	temps     []message.Destination
	txs       map[string]*tx
	closed    bool
	// audit: sends are checked against the producer audit (audit.go).
	audit bool
	// grants caches what the Authorizer granted (security.go); only the
	// session goroutine touches it.
	grants map[message.Destination]grant
	// closer ends the connection from the broker's side (SetCloser,
	// CloseConnection); guarded by e.mu.
	closer func()
}

// Connect authenticates a client and registers its client id, which must be
// unique among connected clients (javax.jms.InvalidClientIDException
// otherwise). An empty client id is allowed; durable subscriptions need one.
// It is Authenticate followed by ConnectAuthenticated. Safe from any
// goroutine.
func (e *Engine) Connect(cr Credentials) (*Conn, error) {
	subj, err := e.Authenticate(cr)
	if err != nil {
		return nil, err
	}
	return e.ConnectAuthenticated(subj, cr)
}

// ConnectAuthenticated is Connect for a client whose credentials the
// protocol has already checked, so that one login runs the Authenticator
// (and its JAAS login modules) exactly once: MQTT authenticates before it
// takes a client id over, AMQP during SASL. subj must be what
// e.Authenticate returned for cr (AMQP's client id, known only at Open,
// aside). A nil subj is refused with ErrNoSubject: a nil subject is the
// broker's own, never checked, and a client never gets it (Authenticate
// never returns it). Safe from any goroutine.
func (e *Engine) ConnectAuthenticated(subj *Subject, cr Credentials) (*Conn, error) {
	if subj == nil {
		return nil, ErrNoSubject
	}
	n := e.connSeq.Add(1)
	c := &Conn{
		e:        e,
		id:       e.brokerID + "-" + strconv.FormatUint(n, 10) + ":1",
		clientID: cr.ClientID,
		subject:  subj,
		user:     cr.Username,
		protocol: cr.Protocol,
		remote:   cr.Remote,
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if c.clientID != "" {
		if holder, taken := e.clientIDs[c.clientID]; taken {
			return nil, errClientIDInUse(e.opts.BrokerName, c.clientID, holder.remote)
		}
		e.clientIDs[c.clientID] = c
	}
	e.mu.Unlock()
	e.connectionAdded(c)
	e.mu.Lock() // for the deferred unlock
	return c, nil
}

// ID is the connection's id, ActiveMQ style ("ID:host-pid-start-n:1").
func (c *Conn) ID() string { return c.id }

// ClientID is the client id given at Connect.
func (c *Conn) ClientID() string { return c.clientID }

// Subject is who the connection authenticated as.
func (c *Conn) Subject() *Subject { return c.subject }

// addSub records one of the connection's subscriptions. The map is made
// on the first: a connection that never subscribes (a producer, an idle
// device) holds none.
func (c *Conn) addSub(sub *Subscription) {
	if c.subs == nil {
		c.subs = map[*Subscription]struct{}{}
	}
	c.subs[sub] = struct{}{}
}

// NextMessageID returns a fresh message id in ActiveMQ's format
// (<connection id>:<session>:<producer>:<seq>).
//
// The ids are carved out of a block (idArena) that is never written again
// where an id was handed out: only the bytes past its length are appended
// to, and a full block is replaced, not reused. So each id is a string
// over those bytes without a copy, and a message costs no allocation of
// its own for its id (issue 18: one allocation per message on the
// engine's path). The price is that a block lives while any of its ids
// does: at most idArenaSize bytes for an id of a message kept long after
// its neighbours.
func (c *Conn) NextMessageID() string {
	c.msgSeq++
	need := len(c.id) + len(msgIDMid) + 20 // 20: the digits of the largest uint64
	if cap(c.idArena)-len(c.idArena) < need {
		c.idArena = make([]byte, 0, max(idArenaSize, need))
	}
	start := len(c.idArena)
	c.idArena = strconv.AppendUint(append(append(c.idArena, c.id...), msgIDMid...), c.msgSeq, 10)
	id := c.idArena[start:]
	return unsafe.String(&id[0], len(id))
}

// msgIDMid is what comes between the connection id and the sequence number
// in a message id: session 1, producer 1. (Appended per id rather than kept
// as a prefix string: every idle connection would hold that string.)
const msgIDMid = ":1:1:"

// idArenaSize is the size of NextMessageID's blocks: a few dozen ids of
// ActiveMQ's form ("ID:host-port-time-n:c:1:1:seq", 40 to 60 bytes).
const idArenaSize = 2048

// Send hands a message to the engine. Errors found at once (bad
// destination, not authorized, unknown transaction) are returned; otherwise
// comp, when not nil, is told the outcome once the message is stored (or
// accepted, for non-persistent ones). In a transaction the message is held
// until Commit and comp is told at once. The message must not be changed
// after Send.
func (c *Conn) Send(m *message.Message, txID string, comp Completion, token uint64) error {
	if c.closed {
		return ErrConnClosed
	}
	if m.Destination.Name == "" {
		return fmt.Errorf("%w: no destination", ErrBadDestination)
	}
	if m.Destination.IsWildcard() {
		return fmt.Errorf("%w: %s", ErrWildcardSend, m.Destination)
	}
	// AuthorizationBroker.send: write on the destination as named, a
	// composite whole (security.go).
	if err := c.authorize(ActionWrite, m.Destination); err != nil {
		return err
	}
	if m.Destination.IsComposite() {
		if txID != "" && c.txs[txID] == nil {
			return fmt.Errorf("%w: %q", ErrUnknownTx, txID)
		}
		els := m.Destination.Elements()
		if len(els) == 0 {
			return fmt.Errorf("%w: empty composite %q", ErrBadDestination, m.Destination.Name)
		}
		for _, el := range els {
			if el.IsWildcard() {
				return fmt.Errorf("%w: %s", ErrWildcardSend, el)
			}
		}
		// Every member that a copy would create needs admin, and so do the
		// forwards of members that are configured composites.
		// DEVIATION: ActiveMQ's CompositeDestinationBroker sends the copies
		// one by one and stops at the first refused creation, the earlier
		// members keeping theirs; Wharf refuses the whole send before any
		// member gets a copy.
		if err := c.checkCreate(els); err != nil {
			return err
		}
		for _, el := range els {
			if err := c.checkForwards(m, el); err != nil {
				return err
			}
		}
		if m.ID == "" {
			m.ID = c.NextMessageID()
		}
		m.Origin = c.id
		return c.sendComposite(m, els, txID, comp, token)
	}
	if txID != "" && c.txs[txID] == nil {
		return fmt.Errorf("%w: %q", ErrUnknownTx, txID)
	}
	if txID != "" {
		// The shard adds it at Commit, but ActiveMQ creates (and checks)
		// the destination at the send (AbstractRegion.send).
		if err := c.checkCreate([]message.Destination{m.Destination}); err != nil {
			return err
		}
	}
	if err := c.checkForwards(m, m.Destination); err != nil {
		return err
	}
	if m.ID == "" {
		m.ID = c.NextMessageID()
	}
	m.Origin = c.id
	return c.send(m, txID, comp, token)
}

// send hands a checked message for one plain destination to its shard, or
// to the transaction.
func (c *Conn) send(m *message.Message, txID string, comp Completion, token uint64) error {
	if txID != "" {
		t := c.txs[txID]
		if t == nil {
			return fmt.Errorf("%w: %q", ErrUnknownTx, txID)
		}
		t.sends = append(t.sends, m)
		if comp != nil {
			comp.Complete(token, nil)
		}
		return nil
	}
	// flag: the connection holds admin on it (checkCreate), which the
	// shard need not ask again should it have to create it.
	granted := c.grants[m.Destination]&(1<<ActionAdmin) != 0
	return c.e.shardFor(m.Destination).post(command{op: opSend, msg: m, comp: comp, token: token, subj: c.subject, flag: granted, audit: c.audit})
}

// CreateTemp creates a temporary queue or topic owned by this connection,
// named as ActiveMQ names them (<connection id>:<n>). It is deleted when the
// connection closes.
func (c *Conn) CreateTemp(topic bool) (message.Destination, error) {
	if c.closed {
		return message.Destination{}, ErrConnClosed
	}
	c.tempSeq++
	d := message.Destination{Type: message.TempQueue, Name: c.id + ":" + strconv.FormatUint(c.tempSeq, 10)}
	if topic {
		d.Type = message.TempTopic
	}
	// Not cached: a temporary destination's name is never used again.
	if err := c.e.opts.Authorizer.Authorize(c.subject, ActionAdmin, d); err != nil {
		return message.Destination{}, err
	}
	if err := c.createTemp(d); err != nil {
		return message.Destination{}, err
	}
	c.temps = append(c.temps, d)
	return d, nil
}

// AddTemp creates a temporary destination under the name the client chose
// (OpenWire clients name theirs "<connection id>:<n>" and announce them with
// DestinationInfo), owned by this connection.
func (c *Conn) AddTemp(d message.Destination) error {
	if c.closed {
		return ErrConnClosed
	}
	if !d.Type.IsTemp() || d.Name == "" {
		return fmt.Errorf("%w: %s is not a temporary destination", ErrBadDestination, d)
	}
	if err := c.e.opts.Authorizer.Authorize(c.subject, ActionAdmin, d); err != nil {
		return err
	}
	if err := c.createTemp(d); err != nil {
		return err
	}
	c.temps = append(c.temps, d)
	return nil
}

// createTemp creates temporary destination d, owned by the connection, on
// its shard.
func (c *Conn) createTemp(d message.Destination) error {
	return c.e.request([]int{c.e.shardFor(d).idx}, func(*shard) command {
		return command{op: opCreateTemp, ctl: &tempCmd{dest: d, owner: c.id}}
	})
}

// MarkDelivered records that the client has a delivery without having
// consumed it yet (OpenWire DELIVERED ack): its credit is given back so the
// window slides, and the message stays unacknowledged. Applied in order
// with the connection's other commands.
func (c *Conn) MarkDelivered(sub *Subscription, id uint64) error {
	if c.closed {
		return ErrConnClosed
	}
	return c.e.shards[id&0xff].post(command{op: opTxMark, sub: sub, id: id, ctl: deliveredMark})
}

// deliveredMark is the pseudo-transaction MarkDelivered tags entries with:
// their credit is returned, and an ack later returns none.
var deliveredMark = &tx{}

// CountRedelivery increments the redelivery counter of a delivery the
// client is redelivering itself (OpenWire REDELIVERED ack), so that when it
// goes back to the queue its counter is right.
func (c *Conn) CountRedelivery(sub *Subscription, id uint64) error {
	if c.closed {
		return ErrConnClosed
	}
	return c.e.shards[id&0xff].post(command{op: opCountRedelivery, sub: sub, id: id})
}

// DeleteTemp deletes one of the connection's temporary destinations.
func (c *Conn) DeleteTemp(d message.Destination) error {
	for i, t := range c.temps {
		if t == d {
			c.temps = append(c.temps[:i], c.temps[i+1:]...)
			return c.e.RemoveDestination(d)
		}
	}
	return TempGoneError(d)
}

// Subscribe registers a consumer and returns once it is in place (and has
// been given what is waiting for it).
func (c *Conn) Subscribe(spec SubSpec, sink Sink) (*Subscription, error) {
	if c.closed {
		return nil, ErrConnClosed
	}
	d := spec.Destination
	if d.Name == "" {
		return nil, fmt.Errorf("%w: no destination", ErrBadDestination)
	}
	// AuthorizationBroker.addConsumer: read on the destination as named.
	if err := c.authorize(ActionRead, d); err != nil {
		return nil, err
	}
	if err := c.checkSubscribe(spec); err != nil {
		return nil, err
	}
	var sel *selector.Selector
	if spec.Selector != "" {
		var err error
		sel, err = selector.ParseWith(spec.Selector, selector.Options{ConvertStringExpressions: spec.ConvertStrings})
		if err != nil {
			// ActiveMQ's InvalidSelectorException carries only the
			// selector's text (SelectorParser.parse).
			return nil, WithClientText(fmt.Errorf("%w: %w", ErrBadSelector, err), spec.Selector)
		}
	}
	if spec.DefaultPrefetch {
		spec.Prefetch = policyPrefetch(c.e.opts.PolicyFor(d), spec)
	}
	sub := &Subscription{id: c.e.subSeq.Add(1), conn: c, spec: spec, sel: sel, sink: sink}
	sub.prefetch.Store(int32(spec.Prefetch))
	if spec.Paused {
		sub.credit.Store(0)
	} else {
		sub.started.Store(true)
		sub.credit.Store(int64(spec.Prefetch))
	}
	wild := d.IsWildcard() || d.IsComposite()
	if wild {
		sub.shards = make([]int, len(c.e.shards))
		for i := range sub.shards {
			sub.shards[i] = i
		}
	} else {
		sub.shards = []int{c.e.shardFor(d).idx}
	}
	switch {
	case spec.Browser:
		if d.Type.IsTopic() {
			return nil, fmt.Errorf("%w: only queues can be browsed, not %s", ErrBadDestination, d)
		}
		c.addSub(sub)
		c.e.consumerAdded(sub)
		sub.browsing.Store(int32(len(sub.shards)))
		for _, i := range sub.shards {
			if err := c.e.shards[i].post(command{op: opBrowse, sub: sub}); err != nil {
				return nil, err
			}
		}
		return sub, nil
	case spec.DurableName != "":
		if err := c.subscribeDurable(sub); err != nil {
			return nil, err
		}
	default:
		// Any connection may consume from a temporary destination that
		// exists: ActiveMQ's broker allows it (TempQueue.addSubscription);
		// only its Java client refuses another connection's.
		// One round trip: the shard refuses a temporary destination that
		// is gone and a plain one the subscriber may not create, then
		// attaches the part.
		if err := c.e.request(sub.shards, func(*shard) command {
			return command{op: opSubscribe, ctl: &subscribeCmd{sub: sub, checkTemp: d.Type.IsTemp() && !wild, checkCreate: !wild}}
		}); err != nil {
			return nil, err
		}
	}
	c.addSub(sub)
	c.e.consumerAdded(sub)
	if IsAdvisory(d) {
		c.e.replayAdvisories(sub)
	}
	return sub, nil
}

// Ack acknowledges a delivery of sub (with AckClient, every earlier one
// too). Inside a transaction the acknowledgement takes effect at Commit.
// Acks are applied asynchronously, in order with the connection's other
// commands on that destination, and nobody is told when the store has them:
// a batch holding only such acks is written without a disk sync
// (NoSyncApplier), so a crash may undo them and the messages come back.
// Use AckDurable for an ack the client waits to have confirmed.
func (c *Conn) Ack(sub *Subscription, id uint64, txID string) error {
	return c.AckDurable(sub, id, txID, nil, 0)
}

// AckDurable is Ack for an acknowledgement the client asked to have
// confirmed (a STOMP ACK with a receipt, an OpenWire MessageAck with
// responseRequired, an MQTT PUBREC answered with PUBREL): comp, when not
// nil, is told with token once the acknowledgement is as durable as the
// store makes it — the shard's batch holding it went through a synced
// Apply, as ActiveMQ syncs the journal write of a queue ack that asked for
// a response — so that a message whose ack was confirmed never comes back
// after a crash. Send the confirmation from comp, never before. An ack of a
// delivery the shard no longer has in flight is told too (nothing to
// store). Inside a transaction nothing is stored before Commit (which waits
// for the disk itself): comp is told at once.
func (c *Conn) AckDurable(sub *Subscription, id uint64, txID string, comp Completion, token uint64) error {
	if c.closed {
		return ErrConnClosed
	}
	cumulative := sub.spec.AckMode == AckClient
	if txID != "" {
		t := c.txs[txID]
		if t == nil {
			return fmt.Errorf("%w: %q", ErrUnknownTx, txID)
		}
		t.acks = append(t.acks, txAck{sub: sub, id: id, cumulative: cumulative})
		mark := command{op: opTxMark, sub: sub, id: id, flag: cumulative, ctl: t}
		if cumulative && len(sub.shards) > 1 {
			for _, i := range sub.shards {
				if err := c.e.shards[i].post(mark); err != nil {
					return err
				}
			}
		} else if err := c.e.shards[id&0xff].post(mark); err != nil {
			return err
		}
		if comp != nil {
			comp.Complete(token, nil)
		}
		return nil
	}
	if cumulative && len(sub.shards) > 1 {
		// Every shard the subscription spans acknowledges its share; comp
		// is told once all of them are durable.
		var all Completion
		if comp != nil {
			all = &joinCompletion{comp: comp, token: token, left: int32(len(sub.shards))}
		}
		for n, i := range sub.shards {
			if err := c.e.shards[i].post(command{op: opAck, sub: sub, id: id, flag: true, comp: all}); err != nil {
				if all != nil {
					// The shards not reached yet will never tell it.
					for range sub.shards[n:] {
						all.Complete(0, err)
					}
				}
				return err
			}
		}
		return nil
	}
	return c.e.shards[id&0xff].post(command{op: opAck, sub: sub, id: id, flag: cumulative, comp: comp, token: token})
}

// Nack negatively acknowledges one delivery; kind says what happens to the
// message, cause is recorded as dlqDeliveryFailureCause if it is
// dead-lettered.
func (c *Conn) Nack(sub *Subscription, id uint64, kind NackKind, cause string) error {
	return c.NackDurable(sub, id, kind, cause, nil, 0)
}

// NackDurable is Nack for a negative acknowledgement the client asked to
// have confirmed (a STOMP NACK with a receipt): comp, when not nil, is told
// with token once what the nack changed in this destination's store (the
// removal of a dead-lettered message, a redelivery counter) is as durable
// as the store makes it, as AckDurable.
//
// DEVIATION: the copy a poison nack sends to a dead-letter queue on another
// shard is stored by that shard, which comp does not wait for.
func (c *Conn) NackDurable(sub *Subscription, id uint64, kind NackKind, cause string, comp Completion, token uint64) error {
	if c.closed {
		return ErrConnClosed
	}
	return c.e.shards[id&0xff].post(command{op: opNack, sub: sub, id: id, nack: kind, cause: cause, comp: comp, token: token})
}

// CloseSubscription removes a consumer. Unacknowledged queue messages are
// redelivered to other consumers with the redelivered flag; a durable
// subscription stays, offline, collecting messages.
func (c *Conn) CloseSubscription(sub *Subscription) error {
	if _, ok := c.subs[sub]; !ok {
		return ErrSubClosed
	}
	delete(c.subs, sub)
	return c.closeSub(sub)
}

func (c *Conn) closeSub(sub *Subscription) error {
	sub.closed.Store(true)
	c.e.consumerRemoved(sub)
	if sub.spec.Browser {
		return nil
	}
	err := c.e.request(sub.shards, func(*shard) command { return command{op: opCloseSub, sub: sub} })
	if sub.key != (SubKey{}) {
		c.e.mu.Lock()
		if r := c.e.durables[sub.key]; r != nil && r.active == sub {
			r.active = nil
		}
		c.e.mu.Unlock()
	}
	return err
}

// Unsubscribe destroys the durable subscription name of this connection's
// client id, and the messages kept for it.
func (c *Conn) Unsubscribe(name string) error {
	if c.clientID == "" {
		return ErrNoClientID
	}
	return c.e.Unsubscribe(SubKey{ClientID: c.clientID, Name: name})
}

// Unsubscribe destroys a durable subscription. It fails with
// ErrNoSuchSubscription if there is none, ErrDurableInUse while a consumer
// is attached.
func (e *Engine) Unsubscribe(key SubKey) error {
	e.mu.Lock()
	r := e.durables[key]
	switch {
	case r == nil:
		e.mu.Unlock()
		return errNoSuchSubscription(key)
	case r.active != nil:
		e.mu.Unlock()
		return errUnsubscribeInUse(key)
	}
	delete(e.durables, key)
	e.mu.Unlock()
	if e.advisories() {
		e.fire(e.newAdvisory(consumerAdvisoryTopic(r.sub.Destination), &message.Advisory{
			Command: "RemoveSubscriptionInfo",
			Fields:  message.Properties{str("ClientId", key.ClientID), str("SubscriptionName", key.Name)},
		}), nil)
	}
	return e.removeDurable(r.shards, key)
}

// removeDurable destroys the parts of durable subscription key on shards
// idx.
func (e *Engine) removeDurable(idx []int, key SubKey) error {
	return e.request(idx, func(*shard) command { return command{op: opRemoveDurable, ctl: key} })
}

// subscribeDurable attaches sub to its durable subscription, creating it,
// or re-creating it when the topic, selector or noLocal changed (as
// ActiveMQ does).
func (c *Conn) subscribeDurable(sub *Subscription) error {
	spec := sub.spec
	if c.clientID == "" {
		return ErrNoClientID
	}
	if !spec.Destination.Type.IsTopic() {
		return fmt.Errorf("%w: %s", ErrDurableOnQueue, spec.Destination)
	}
	key := SubKey{ClientID: c.clientID, Name: spec.DurableName}
	want := DurableSub{Key: key, Destination: spec.Destination, Selector: spec.Selector, NoLocal: spec.NoLocal}
	e := c.e
	e.mu.Lock()
	r := e.durables[key]
	if r != nil && r.active != nil {
		e.mu.Unlock()
		return errDurableInUse(key)
	}
	recreate := r != nil && r.sub != want
	if r == nil || recreate {
		r = &durableReg{sub: want, shards: sub.shards}
		old := e.durables[key]
		e.durables[key] = r
		r.active = sub
		e.mu.Unlock()
		if recreate {
			if err := e.removeDurable(old.shards, key); err != nil {
				return err
			}
		}
		sub.key = key
		return e.request(r.shards, func(*shard) command {
			ds := want
			return command{op: opSubscribe, ctl: &subscribeCmd{sub: sub, durable: &ds, storeSub: true}}
		})
	}
	r.active = sub
	sub.shards = r.shards
	e.mu.Unlock()
	sub.key = key
	return e.request(r.shards, func(*shard) command {
		ds := r.sub
		return command{op: opSubscribe, ctl: &subscribeCmd{sub: sub, durable: &ds}}
	})
}

// Close ends the connection: its subscriptions close (queue messages in
// flight are redelivered), open transactions roll back, temporary
// destinations are deleted and the client id is released. Safe to call
// more than once.
func (c *Conn) Close() error {
	if c.closed {
		return nil
	}
	var errs []error
	for id := range c.txs {
		errs = append(errs, c.Rollback(id))
	}
	for sub := range c.subs {
		errs = append(errs, c.closeSub(sub))
	}
	c.subs = nil
	for _, d := range c.temps {
		errs = append(errs, c.e.RemoveDestination(d))
	}
	c.temps = nil
	for len(c.producers) > 0 {
		c.RemoveProducer(c.producers[0])
	}
	c.closed = true
	c.e.connectionRemoved(c)
	if c.clientID != "" {
		c.e.mu.Lock()
		if c.e.clientIDs[c.clientID] == c {
			delete(c.e.clientIDs, c.clientID)
		}
		c.e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// policyPrefetch is the prefetch a destination policy gives a consumer that
// asked for its kind's default.
func policyPrefetch(p Policy, spec SubSpec) int {
	n := 0
	switch {
	case spec.Browser:
		n = p.QueueBrowserPrefetch
	case !spec.Destination.Type.IsTopic():
		n = p.QueuePrefetch
	case spec.DurableName != "":
		n = p.DurableTopicPrefetch
	default:
		n = p.TopicPrefetch
	}
	if n <= 0 {
		return spec.Prefetch
	}
	return n
}

// sendComposite sends a copy of m to each element of its composite
// destination, with OriginalDestination naming the composite, as ActiveMQ's
// CompositeDestinationBroker does. comp is told once every copy is done.
func (c *Conn) sendComposite(m *message.Message, els []message.Destination, txID string, comp Completion, token uint64) error {
	var all *joinCompletion
	if comp != nil {
		all = &joinCompletion{comp: comp, token: token, left: int32(len(els))}
	}
	for _, el := range els {
		cp := m.Clone()
		cp.Original = m.Original
		cp.Destination = el
		cp.OriginalDestination = m.Destination
		var cc Completion
		if all != nil {
			cc = all
		}
		if err := c.send(cp, txID, cc, 0); err != nil {
			return err
		}
	}
	return nil
}

// joinCompletion completes once all its parts have, with the first error.
type joinCompletion struct {
	comp  Completion
	token uint64
	mu    sync.Mutex
	left  int32
	err   error
}

func (j *joinCompletion) Complete(_ uint64, err error) {
	j.mu.Lock()
	if err != nil && j.err == nil {
		j.err = err
	}
	j.left--
	done := j.left == 0
	err = j.err
	j.mu.Unlock()
	if done {
		j.comp.Complete(j.token, err)
	}
}

// DurableSubs returns the durable subscriptions of clientID, active or not,
// in no particular order. Safe from any goroutine.
func (e *Engine) DurableSubs(clientID string) []DurableSub {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []DurableSub
	for k, r := range e.durables {
		if k.ClientID == clientID {
			out = append(out, r.sub)
		}
	}
	return out
}

// AllDurableSubs returns every durable subscription, active or not, in no
// particular order (a protocol rebuilding its sessions at start). Safe
// from any goroutine.
func (e *Engine) AllDurableSubs() []DurableSub {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]DurableSub, 0, len(e.durables))
	for _, r := range e.durables {
		out = append(out, r.sub)
	}
	return out
}
