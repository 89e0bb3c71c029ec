package engine

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"wharf/engine/message"
)

// Credentials are what a client presents when it connects.
type Credentials struct {
	Username string
	Password string
	// Certs is the verified TLS client certificate chain, leaf first, or nil.
	Certs []*x509.Certificate
	// TLS reports that the connection arrived on a TLS connector (with or
	// without a client certificate): jaasDualAuthenticationPlugin uses its
	// certificate login there and the password login elsewhere.
	TLS bool
	// Remote is the client's address; Protocol names the protocol ("stomp").
	Remote   net.Addr
	Protocol string
	ClientID string
}

// Subject is an authenticated user and its groups.
type Subject struct {
	User   string
	Groups []string
	// UserPrincipals are the JAAS UserPrincipal names the login gave
	// (PropertiesLoginModule: the user; GuestLoginModule: the guest user;
	// TextFileCertificateLoginModule: the mapped user); nil for
	// simpleAuthenticationPlugin, whose subjects hold only groups.
	// Authorization entries with groupClass
	// org.apache.activemq.jaas.UserPrincipal match these, not User.
	UserPrincipals []string
}

// Authenticator turns credentials into a subject. Implementations are called
// from connection goroutines concurrently and must be safe for that.
type Authenticator interface {
	Authenticate(c Credentials) (*Subject, error)
}

// Action is what a subject wants to do to a destination; ActiveMQ's
// authorization map grants read, write and admin per destination pattern.
type Action uint8

// The authorization actions.
const (
	ActionRead  Action = iota // consume and browse
	ActionWrite               // send
	ActionAdmin               // create or remove destinations
)

func (a Action) String() string {
	switch a {
	case ActionWrite:
		return "write"
	case ActionAdmin:
		return "admin"
	}
	return "read"
}

// Authorizer decides whether a subject may act on a destination (temporary
// and advisory destinations included: the implementation sees their kind and
// name). Safe for concurrent use.
type Authorizer interface {
	Authorize(s *Subject, a Action, d message.Destination) error
}

// ErrNotAuthorized is wrapped by authorizers' errors; protocols map it to
// their security error (a STOMP ERROR, MQTT 0x05, AMQP unauthorized-access).
var ErrNotAuthorized = errors.New("engine: not authorized")

// ErrBadCredentials is wrapped by authenticators' errors for a wrong user or
// password.
var ErrBadCredentials = errors.New("engine: user name or password is invalid")

// AllowAll is the default security: every connection is accepted as an
// anonymous subject and may do anything. While it is in place the broker
// binds to loopback only, unless the operator declares the network trusted
// (config.Config.TrustedNetwork).
type AllowAll struct{}

// Authenticate accepts everyone.
func (AllowAll) Authenticate(c Credentials) (*Subject, error) {
	return &Subject{User: c.Username}, nil
}

// Authorize allows everything.
func (AllowAll) Authorize(*Subject, Action, message.Destination) error { return nil }

// ErrNoSubject refuses ConnectAuthenticated without a subject: a nil
// subject is the broker's own, and a client must never connect as it.
var ErrNoSubject = errors.New("engine: connect without an authenticated subject")

// Authenticate checks credentials without connecting: AMQP's SASL exchange
// authenticates before the client id is known, and MQTT before it takes a
// client id over; they pass the subject to ConnectAuthenticated. On
// success the subject is never nil: where the Authenticator returns none,
// the client gets a subject of its user name (a nil subject is the
// broker's own, internal and never checked). Safe from any goroutine.
func (e *Engine) Authenticate(cr Credentials) (*Subject, error) {
	subj, err := e.opts.Authenticator.Authenticate(cr)
	if err != nil {
		return nil, err
	}
	if subj == nil {
		subj = &Subject{User: cr.Username}
	}
	return subj, nil
}

// What is checked where. Wharf asks its Authorizer exactly what ActiveMQ
// 5.17's AuthorizationBroker (activemq-broker, org.apache.activemq.security)
// asks its AuthorizationMap, at the same point, and before any engine state
// changes:
//
//   - Send (AuthorizationBroker.send): write on the message's destination
//     as the client named it. A client composite (queue://a,b) is asked
//     once, whole: ActiveMQ's DefaultAuthorizationMap.get answers a
//     composite key with the union of its members' entries, so the
//     Authorizer must too. CompositeDestinationBroker splits it below the
//     authorization filter, so the members are not asked for write again.
//     The decision is cached per connection (SecurityContext's
//     authorizedWriteDests; Conn.authorize).
//   - Producer registration (AuthorizationBroker.addProducer): write on its
//     destination, when it names one (Conn.AuthorizeProducer).
//   - Creation (AuthorizationBroker.addDestination via AbstractRegion.lookup,
//     which re-enters the broker chain "so that the proper security checks
//     are performed"): admin on a destination that does not exist yet and
//     that a send, a subscription (plain or durable) or a forward of a
//     configured composite destination (CompositeDestinationFilter.doForward
//     sends through the region broker with the producer's context) would
//     create; every member of a client composite for the same reason
//     (shard.mayCreate, Conn.checkCreate).
//   - Consume and browse (AuthorizationBroker.addConsumer): read on the
//     subscription's destination as named (wildcard or composite whole),
//     then (AuthorizationDestinationFilter.addSubscription) read on every
//     real destination it is attached to, now or when one appears later
//     (AbstractRegion.addConsumer, addSubscriptionsForDestination): a
//     wildcard subscription silently skips a destination it may not read,
//     any other subscription is refused as a whole (shard.readable).
//   - Temporary destinations (addDestinationInfo): admin, the Authorizer
//     seeing the temporary kind (tempDestinationAuthorizationEntry); sends
//     to them need write and consumers read, like any destination.
//   - Removal (removeDestination, removeDestinationInfo): admin
//     (Conn.RemoveDestination). DEVIATION: ActiveMQ 5.17's
//     checkDestinationAdmin lets anyone remove a destination that exists;
//     ActiveMQ fixed that after 5.17 (apache/activemq #2005: admin on an
//     existing destination, nothing to check on an absent one), which Wharf
//     follows.
//   - Nothing else: AuthorizationBroker does not override removeSubscription,
//     so destroying a durable subscription (Conn.Unsubscribe) is not
//     checked, nor are acks.
//
// Internal traffic carries no subject (a nil *Subject) and is never checked:
// advisories (AdvisoryBroker.fireAdvisory uses
// SecurityContext.BROKER_SECURITY_CONTEXT), dead-letter moves
// (RegionBroker.sendToDeadLetterQueue switches to the broker's context),
// scheduler re-sends and browse replies, expiry, retained-message copies,
// and virtual topic copies (VirtualTopicInterceptor.send calls
// Destination.send on the consumer queues that exist, below every check).
//
// DEVIATION: ActiveMQ 5.17 creates an advisory topic in the name of the
// client whose action fires the first advisory on it (AdvisoryBroker's
// addConnection, addConsumer and addProducer call fireAdvisory with the
// client's ConnectionContext, and creating the topic goes through
// addDestination's admin check before fireAdvisory switches to the
// broker's context). So with a map that gives a user no admin on
// ActiveMQ.Advisory.> (seed 000's, whose "everyone" nobody holds) that
// user cannot be the first to connect, the first consumer of a queue, or
// the first JMS producer of one, and the refused first consumer's queue is
// created anyway. Wharf creates advisory topics as the broker and refuses
// none of these; a configuration that works on ActiveMQ works the same on
// Wharf. conformance/activemq/security/wharf-differences.txt lists the
// matrix cells where this shows.

// grant is the set of actions a connection has been granted on one
// destination (bit 1<<Action), plus grantExists: the destination was seen
// to exist, so sending to it creates nothing. Only grants are cached; a
// refusal is asked again each time, so a reloaded policy can grant later.
// ActiveMQ keeps its grants for the connection's life too.
type grant uint8

const grantExists grant = 1 << 7

// maxGrants bounds a connection's cache; beyond it the cache starts again
// (a client sending to ever new temporary reply queues must not grow it).
const maxGrants = 1024

// authorize asks the Authorizer whether the connection may do a to d, once
// per destination and action for the connection's life: a cached grant
// costs one map lookup and no allocation.
func (c *Conn) authorize(a Action, d message.Destination) error {
	if c.e.openAuthz {
		return nil
	}
	bit := grant(1) << a
	if c.grants[d]&bit != 0 {
		return nil
	}
	if err := c.e.opts.Authorizer.Authorize(c.subject, a, d); err != nil {
		return err
	}
	c.remember(d, bit)
	return nil
}

func (c *Conn) remember(d message.Destination, g grant) {
	if c.grants == nil || len(c.grants) >= maxGrants && c.grants[d] == 0 {
		c.grants = make(map[message.Destination]grant, 16)
	}
	c.grants[d] |= g
}

// AuthorizeProducer checks that the connection may register a producer on
// d (OpenWire ProducerInfo): write, as AuthorizationBroker.addProducer asks.
// A producer without a destination (an anonymous one) is checked on each
// send instead. Protocols call it before AddProducer.
func (c *Conn) AuthorizeProducer(d message.Destination) error {
	if d.IsZero() {
		return nil
	}
	return c.authorize(ActionWrite, d)
}

// checkCreate checks, before anything is sent or registered, that every
// destination of ds that does not exist yet may be created by the
// connection (admin). Destinations already granted admin or seen to exist
// cost nothing; the others are looked up on their shards in one round trip.
// The shard checks again when the operation lands (a destination may be
// removed in between).
func (c *Conn) checkCreate(ds []message.Destination) error {
	var ask []message.Destination
	for _, d := range ds {
		if d.Type.IsTemp() || d.IsWildcard() || c.grants[d]&(grantExists|1<<ActionAdmin) != 0 {
			continue
		}
		ask = append(ask, d)
	}
	if len(ask) == 0 {
		return nil
	}
	// One question per shard, holding the destinations it owns.
	var idx []int
	byShard := map[int]*checkCreateCmd{}
	for _, d := range ask {
		i := c.e.shardFor(d).idx
		x := byShard[i]
		if x == nil {
			x = &checkCreateCmd{subj: c.subject}
			byShard[i] = x
			idx = append(idx, i)
		}
		x.ask = append(x.ask, d)
	}
	if err := c.e.request(idx, func(s *shard) command { return command{op: opCheckCreate, ctl: byShard[s.idx]} }); err != nil {
		return err
	}
	// The answers in the order ds asked, so that the first refusal wins.
	next := map[int]int{}
	for _, d := range ask {
		i := c.e.shardFor(d).idx
		x, k := byShard[i], next[i]
		next[i]++
		switch {
		case x.errs[k] != nil:
			return x.errs[k]
		case x.exists[k]:
			c.remember(d, grantExists)
		default:
			c.remember(d, 1<<ActionAdmin)
		}
	}
	return nil
}

// readable reports whether p's subscriber may read d, a destination its
// wildcard or composite pattern matches (AuthorizationDestinationFilter.
// addSubscription asks for each real destination a subscription is added
// to). A part without a subject (a durable subscription recovered from the
// store and not yet reattached) is internal.
func (s *shard) readable(p *part, d message.Destination) bool {
	if p.subj == nil {
		return true
	}
	if err := s.e.opts.Authorizer.Authorize(p.subj, ActionRead, d); err != nil {
		// AbstractRegion.addConsumer logs this at debug and goes on.
		s.log.Debug("subscription denied", "dest", d.String(), "sub", p.spec.Destination.String(), "err", err)
		return false
	}
	return true
}

// grantForwards marks a destination whose configured composite forwards
// (all of them unfiltered) were seen to exist or be creatable.
const grantForwards grant = 1 << 6

// checkForwards checks, for a send of m to d, that the forwards of d's
// configured composite destination (<compositeQueue>) that the message
// reaches may be created by the connection: CompositeDestinationFilter
// sends each copy through the region broker with the producer's context,
// so a forward that does not exist yet is created, and checked, as if the
// producer had sent to it. Its write permission is not asked.
// DEVIATION: ActiveMQ forwards in order and fails the send at the first
// refused creation (the earlier forwards keep their copies, the composite
// itself gets none); Wharf refuses the send before any copy is made.
func (c *Conn) checkForwards(m *message.Message, d message.Destination) error {
	cf := c.e.opts.CompositeFor
	if cf == nil || c.grants[d]&grantForwards != 0 {
		return nil
	}
	vc := cf(d)
	if vc == nil {
		c.remember(d, grantForwards)
		return nil
	}
	filtered := false
	ds := make([]message.Destination, 0, len(vc.Forwards))
	for _, f := range vc.Forwards {
		if f.Selector != nil {
			filtered = true
			if !f.Selector.Matches(m, m.RedeliveryCounter) {
				continue
			}
		}
		ds = append(ds, f.Destination)
	}
	if err := c.checkCreate(ds); err != nil {
		return err
	}
	if !filtered {
		c.remember(d, grantForwards)
	}
	return nil
}

// browsable is readable for a wildcard browser.
func (s *shard) browsable(sub *Subscription, d message.Destination) bool {
	if err := s.e.opts.Authorizer.Authorize(sub.conn.subject, ActionRead, d); err != nil {
		s.log.Debug("browse denied", "dest", d.String(), "sub", sub.spec.Destination.String(), "err", err)
		return false
	}
	return true
}

// checkSubscribe makes the checks a subscription needs beyond read on its
// destination as named, before anything is registered:
//   - a composite without a pattern in it is refused as a whole when one
//     of its members may not be read (AbstractRegion.addConsumer removes
//     the partial subscription and rethrows for a subscription that is not
//     a wildcard one); one with a pattern skips such members when it is
//     attached (shard.readable);
//   - the plain members of a composite, which Wharf creates (ActiveMQ
//     leaves them to be created by a producer), and the topic of a durable
//     subscription need admin when they do not exist yet (the plain
//     non-durable case is checked by the shard as it creates it).
func (c *Conn) checkSubscribe(spec SubSpec) error {
	d := spec.Destination
	switch {
	case spec.Browser:
		return nil // browsing creates nothing; wildcard browsers skip (shard.browsable)
	case d.IsComposite():
		els := d.Elements()
		wild := false
		for _, el := range els {
			wild = wild || el.IsWildcard()
		}
		plain := make([]message.Destination, 0, len(els))
		for _, el := range els {
			if el.IsWildcard() {
				continue
			}
			if err := c.authorize(ActionRead, el); err != nil {
				if wild {
					continue
				}
				return err
			}
			plain = append(plain, el)
		}
		return c.checkCreate(plain)
	case spec.DurableName != "" && !d.IsWildcard():
		return c.checkCreate([]message.Destination{d})
	}
	return nil
}

// RemoveDestination deletes a destination for the client (OpenWire
// DestinationInfo remove, a JMX-less client's delete): it needs admin on
// it, asked only when it exists (apache/activemq #2005's
// checkDestinationAdminRemove; see the DEVIATION above). The connection's
// cached grants for it are forgotten, as AuthorizationBroker forgets its
// authorized write destination.
func (c *Conn) RemoveDestination(d message.Destination) error {
	if c.closed {
		return ErrConnClosed
	}
	if d.Name == "" || d.IsWildcard() || d.IsComposite() {
		return fmt.Errorf("%w: cannot remove %s", ErrBadDestination, d)
	}
	delete(c.grants, d)
	subj := c.subject
	x := &removeDestCmd{dest: d, subj: subj, check: true}
	if err := c.e.request([]int{c.e.shardFor(d).idx}, func(*shard) command { return command{op: opRemoveDest, ctl: x} }); err != nil {
		return err
	}
	denied := x.denied
	if denied != nil && errors.Is(denied, ErrNotAuthorized) {
		// The Authorizer words admin refusals for creation; ActiveMQ says
		// what was refused (AuthorizationBroker.removeDestination).
		denied = WithClientText(denied, "User "+subj.User+" is not authorized to remove: "+d.String())
	}
	return denied
}
