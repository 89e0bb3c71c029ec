package mqtt

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"wharf/protocols/internal/logthrottle"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/options"
	"wharf/protocols/internal/wheel"
	"wharf/protocols/mqtt/wire"
	"wharf/protocols/transport"
)

// Options configure the MQTT adapter. They come from the transport
// connector's URI options, named as ActiveMQ names them.
type Options struct {
	// Limits bound packets (wireFormat.maxFrameSize: 256 MiB, ActiveMQ's
	// MQTTWireFormat.MAX_MESSAGE_LENGTH).
	Limits wire.Limits
	// DefaultKeepAlive applies to a CONNECT with keep-alive 0
	// (transport.defaultKeepAlive, ms; 0: none, as in ActiveMQ).
	DefaultKeepAlive time.Duration
	// ConnectTimeout is how long a new connection may take to send CONNECT
	// (transport.connectAttemptTimeout; ActiveMQ: 30 s).
	ConnectTimeout time.Duration
	// SubscriptionPrefetch, when above 0, replaces the prefetch of every
	// subscription (transport.activeMQSubscriptionPrefetch).
	SubscriptionPrefetch int
	// PublishDollarTopics lets clients publish to topics starting with '$'
	// (transport.publishDollarTopics); otherwise such publishes are
	// acknowledged and dropped, as ActiveMQ does.
	PublishDollarTopics bool
	// VirtualTopics selects ActiveMQ's mqtt-virtual-topic-subscriptions
	// strategy (transport.subscriptionStrategy=mqtt-virtual-topic-subscriptions):
	// publishes go to VirtualTopic.<topic>, and the durable subscriptions of
	// persistent sessions are queues Consumer.<client id>:<QoS>.VirtualTopic.<filter>.
	VirtualTopics bool
	// TopicAliasMaximum is the number of topic aliases an MQTT 5 client may
	// use towards the broker (announced in CONNACK).
	TopicAliasMaximum uint16
	// ReceiveMaximum is how many QoS 1 and 2 publishes an MQTT 5 client may
	// have unacknowledged towards the broker (announced in CONNACK).
	ReceiveMaximum uint16
	Logger         *slog.Logger
}

// DefaultOptions are ActiveMQ 5.17's defaults, plus the MQTT 5 settings
// ActiveMQ does not have.
func DefaultOptions() Options {
	return Options{
		Limits:            wire.DefaultLimits(),
		ConnectTimeout:    30 * time.Second,
		TopicAliasMaximum: 64,
		ReceiveMaximum:    maxOutstandingSends,
	}
}

// ParseOptions reads a transport connector's URI options
// (mqtt://host:port?transport.defaultKeepAlive=60000) into Options. Options
// it does not know are an error naming them.
func ParseOptions(query map[string]string) (Options, error) {
	o := DefaultOptions()
	for k, v := range query {
		var err error
		switch k {
		case "wireFormat.maxFrameSize":
			o.Limits.MaxPacketBytes, err = options.PositiveInt(v)
		case "transport.defaultKeepAlive":
			var ms int
			ms, err = strconv.Atoi(strings.TrimSpace(v))
			if err == nil && ms < 0 {
				err = fmt.Errorf("must not be negative")
			}
			o.DefaultKeepAlive = time.Duration(ms) * time.Millisecond
		case "transport.connectAttemptTimeout":
			var ms int
			ms, err = options.PositiveInt(v)
			o.ConnectTimeout = time.Duration(ms) * time.Millisecond
		case "transport.activeMQSubscriptionPrefetch":
			o.SubscriptionPrefetch, err = strconv.Atoi(strings.TrimSpace(v))
		case "transport.publishDollarTopics":
			o.PublishDollarTopics, err = strconv.ParseBool(v)
		case "transport.subscriptionStrategy":
			switch v {
			case "mqtt-default-subscriptions":
				o.VirtualTopics = false
			case "mqtt-virtual-topic-subscriptions":
				o.VirtualTopics = true
			default:
				err = fmt.Errorf("want mqtt-default-subscriptions or mqtt-virtual-topic-subscriptions")
			}
		case "transport.topicAliasMaximum":
			var n int
			n, err = strconv.Atoi(strings.TrimSpace(v))
			if err == nil && (n < 0 || n > 65535) {
				err = fmt.Errorf("must be 0..65535")
			}
			o.TopicAliasMaximum = uint16(n)
		case "transport.receiveMaximum":
			var n int
			n, err = options.PositiveInt(v)
			if err == nil && n > 65535 {
				err = fmt.Errorf("must be 1..65535")
			}
			o.ReceiveMaximum = uint16(n)
		default:
			return o, fmt.Errorf("%w: %q is not an MQTT transport option Wharf supports", ErrBadOption, k)
		}
		if err != nil {
			return o, fmt.Errorf("%w: %s=%q: %v", ErrBadOption, k, v, err)
		}
	}
	return o, nil
}

// Server creates MQTT sessions on an engine and keeps what outlives a
// connection: which session holds each client id, delayed wills, session
// expiry, and the QoS 2 exchanges of persistent sessions.
type Server struct {
	e    *engine.Engine
	opts Options
	log  *slog.Logger
	// refusedPub rate-limits the "publish refused" warnings of all the
	// server's sessions (a client publishing in a loop where it may not:
	// at most 20 lines per 10 s, then one with the count held back).
	refusedPub logthrottle.Burst
	// wheel times every session's connect deadline and keep-alive (one
	// embedded wheel.Timer per session instead of a runtime timer each).
	wheel *wheel.Wheel

	// mu guards clients. Lock order: a session's mu before mu.
	mu      sync.Mutex
	clients map[string]*clientState
	// shareMembers counts the members of each shared subscription queue;
	// the share ends with its last member.
	shareMembers map[message.Destination]int
}

// clientState is what the server keeps per client id. It is kept in
// memory, as ActiveMQ keeps its MQTT packet-id state (publisherRecs,
// the packet id generator): a broker restart forgets the QoS 2 exchanges
// in flight, while the session's subscriptions and the messages they hold
// are durable subscriptions in the store.
type clientState struct {
	active *session // the session holding the client id, nil when offline
	// ext is the rest, made on first use (x): a clean session that does
	// not use QoS 2 never needs it (issue 18).
	ext *clientExt
}

// clientExt is the part of a clientState a session needs only once it
// uses QoS 2, shared subscriptions or a session that outlives it.
type clientExt struct {
	// inQoS2 are packet ids of QoS 2 publishes received and stored, whose
	// PUBREL has not come yet [MQTT-4.3.3]; a DUP re-send of one is not
	// stored again.
	inQoS2 map[uint16]bool
	// released are packet ids of QoS 2 deliveries the client acknowledged
	// with PUBREC and that await its PUBCOMP; they are re-sent as PUBREL
	// when a persistent session resumes [MQTT-4.4.0-1]. The value is true
	// once the acknowledgement is on disk (relDone): only then may PUBREL
	// go out.
	released map[uint16]bool
	// shared are the shared subscriptions (full filter -> QoS) of a
	// persistent session, kept as group memberships while it is away.
	shared map[string]byte
	// willTimer publishes a delayed will (MQTT 5 Will Delay Interval);
	// expiryTimer ends an offline MQTT 5 session.
	willTimer, expiryTimer *time.Timer
}

// x returns cs's clientExt, making it. Called with Server.mu held.
func (cs *clientState) x() *clientExt {
	if cs.ext == nil {
		cs.ext = &clientExt{}
	}
	return cs.ext
}

// xIfMade returns cs's clientExt, or an empty one (not to be written)
// when none was made. Called with Server.mu held.
func (cs *clientState) xIfMade() *clientExt {
	if cs.ext == nil {
		return &noClientExt
	}
	return cs.ext
}

// noClientExt is what xIfMade reads when there is no clientExt: all nil.
var noClientExt clientExt

// NewServer returns an MQTT server for e.
func NewServer(e *engine.Engine, o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.ReceiveMaximum == 0 {
		o.ReceiveMaximum = maxOutstandingSends
	}
	s := &Server{e: e, opts: o, log: o.Logger, clients: map[string]*clientState{}, shareMembers: map[message.Destination]int{},
		refusedPub: logthrottle.Burst{Every: 10 * time.Second, Max: 20}, wheel: wheel.New(wheelTick(o))}
	s.restoreShares()
	s.restoreShareMembers()
	return s
}

// maxWheelTick is the wheel's tick (resolution) for second-scale
// deadlines: a keep-alive of N s closes the connection between 1.5 N s and
// 1.5 N s plus this after the last packet.
const maxWheelTick = 250 * time.Millisecond

// wheelTick is the wheel's tick for o: maxWheelTick, or finer when the
// connect timeout or the default keep-alive is short (a tenth of it).
func wheelTick(o Options) time.Duration {
	t := min(maxWheelTick, o.ConnectTimeout/10)
	if o.DefaultKeepAlive > 0 {
		t = min(t, o.DefaultKeepAlive/10)
	}
	return t
}

// restoreShareMembers gives back, after a restart, the memberships of
// shared subscriptions that persistent sessions held: each is kept in the
// store as a durable subscription of the client id that keeps nothing
// (recordShare). The session's client state holds the membership again,
// and the share is fed, until the session resumes or is dropped.
func (s *Server) restoreShareMembers() {
	subs := s.e.AllDurableSubs() // before mu: LOCKS.md has no Server.mu → Engine.mu order
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ds := range subs {
		qos, full, ok := parseDurableName(ds.Key.Name)
		if !ok {
			continue
		}
		group, f, shared, err := wire.ParseShared(full)
		if err != nil || !shared {
			continue
		}
		cs := s.client(ds.Key.ClientID)
		if cs.x().shared == nil {
			cs.x().shared = map[string]byte{}
		}
		cs.x().shared[full] = qos
		q := shareQueue(group, f)
		s.shareMembers[q]++
		s.e.AddShare(ds.Destination, q)
	}
}

// restoreShares re-registers the copies to the shared subscription queues
// a restarted broker recovered, so that their messages keep coming until
// the members are back. Their names hold the group and the filter.
func (s *Server) restoreShares() {
	for _, d := range s.e.Destinations() {
		if d.Type != message.Queue || !strings.HasPrefix(d.Name, sharePrefix) {
			continue
		}
		_, filter, ok := strings.Cut(strings.TrimPrefix(d.Name, sharePrefix), "/")
		if !ok {
			continue
		}
		name := convertName(filter)
		if s.opts.VirtualTopics && !strings.HasPrefix(name, virtualTopicPrefix) {
			name = virtualTopicPrefix + name
		}
		s.e.AddShare(message.TopicDest(name), d)
	}
}

// shareJoin adds a member to the shared subscription queue fed from pattern.
func (s *Server) shareJoin(pattern, queue message.Destination) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shareMembers[queue]++
	s.e.AddShare(pattern, queue)
}

// shareLeave removes a member; the last one ends the share and deletes its
// queue, with the messages no member took.
func (s *Server) shareLeave(queue message.Destination) {
	s.mu.Lock()
	s.shareMembers[queue]--
	last := s.shareMembers[queue] <= 0
	if last {
		delete(s.shareMembers, queue)
		s.e.RemoveShare(queue)
	}
	s.mu.Unlock()
	if last {
		if err := s.e.RemoveDestination(queue); err != nil {
			s.log.Warn("shared subscription queue not removed", "dest", queue.String(), "err", err)
		}
	}
}

// Handler is the transport.HandlerFactory of the server.
func (s *Server) Handler(c transport.Conn) transport.Handler {
	return newSession(s, c)
}

// client returns the state of clientID, creating it.
func (s *Server) client(clientID string) *clientState {
	cs := s.clients[clientID]
	if cs == nil {
		cs = &clientState{} // its maps are made on first use
		s.clients[clientID] = cs
	}
	return cs
}

// claim makes s the session of clientID and returns the client's state and
// the session that held the id before, if any, which the caller takes
// over. A delayed will or a session expiry pending for the id is stopped:
// the client is back [MQTT-3.1.3-9].
func (s *Server) claim(clientID string, ss *session) (*clientState, *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.client(clientID)
	old := cs.active
	cs.active = ss
	if x := cs.ext; x != nil {
		if x.willTimer != nil {
			x.willTimer.Stop()
			x.willTimer = nil
		}
		if x.expiryTimer != nil {
			x.expiryTimer.Stop()
			x.expiryTimer = nil
		}
	}
	return cs, old
}

// unclaim undoes claim for a session whose CONNECT failed.
func (s *Server) unclaim(clientID string, ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs := s.clients[clientID]; cs != nil && cs.active == ss {
		cs.active = nil
		if x := cs.xIfMade(); len(x.inQoS2) == 0 && len(x.released) == 0 && len(x.shared) == 0 {
			delete(s.clients, clientID)
		}
	}
}

// resetClient forgets the QoS 2 exchanges of a session that starts clean.
func (s *Server) resetClient(cs *clientState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if x := cs.ext; x != nil {
		clear(x.inQoS2)
		clear(x.released)
	}
}

// offline records that ss, holding its client id, has ended. A session that
// does not persist is dropped with its durable subscriptions; an MQTT 5
// session with a finite expiry is dropped when it expires.
func (s *Server) offline(ss *session) {
	id := ss.clientID
	s.mu.Lock()
	cs := s.clients[id]
	if cs == nil || cs.active != ss {
		s.mu.Unlock()
		return // taken over: the new session owns the state
	}
	cs.active = nil
	switch {
	case !ss.persistent:
		delete(s.clients, id)
		shared := cs.xIfMade().shared
		s.mu.Unlock()
		if ss.version == wire.Version5 {
			// MQTT 5 ends a session with expiry 0 at disconnect; a 3.x
			// clean session's durable subscriptions cannot exist (they
			// are deleted at CONNECT, as ActiveMQ does).
			s.dropSession(id, shared)
		}
		return
	case ss.version == wire.Version5 && ss.expiry != 0xFFFFFFFF:
		var t *time.Timer
		t = time.AfterFunc(time.Duration(ss.expiry)*time.Second, func() {
			s.mu.Lock()
			cur := s.clients[id]
			if cur == nil || cur.active != nil || cur.xIfMade().expiryTimer != t {
				s.mu.Unlock()
				return
			}
			delete(s.clients, id)
			shared := cur.xIfMade().shared
			s.mu.Unlock()
			s.log.Info("session expired", "client_id", id)
			s.dropSession(id, shared)
		})
		cs.x().expiryTimer = t
	}
	s.mu.Unlock()
}

// dropSession deletes what the engine keeps for an MQTT session: its
// durable subscriptions (and, with virtual topics, its consumer queues),
// and its memberships of shared subscriptions.
func (s *Server) dropSession(clientID string, shared map[string]byte) {
	for full := range shared {
		if group, f, ok, _ := wire.ParseShared(full); ok {
			s.shareLeave(shareQueue(group, f))
		}
	}
	for _, ds := range s.e.DurableSubs(clientID) {
		if _, _, ok := parseDurableName(ds.Key.Name); !ok {
			continue // not an MQTT subscription: leave a JMS client's alone
		}
		if err := s.e.Unsubscribe(ds.Key); err != nil && !errors.Is(err, engine.ErrNoSuchSubscription) {
			s.log.Warn("durable subscription not removed", "client_id", clientID, "sub", ds.Key.Name, "err", err)
		}
	}
	if s.opts.VirtualTopics {
		for _, d := range s.virtualQueues(clientID) {
			if err := s.e.RemoveDestination(d); err != nil {
				s.log.Warn("subscription queue not removed", "client_id", clientID, "dest", d.String(), "err", err)
			}
		}
	}
}

// virtualQueues are the consumer queues the virtual-topic strategy made for
// clientID's durable subscriptions.
func (s *Server) virtualQueues(clientID string) []message.Destination {
	prefix := virtualQueuePrefix(clientID)
	var out []message.Destination
	for _, d := range s.e.Destinations() {
		if d.Type == message.Queue && strings.HasPrefix(d.Name, prefix) {
			out = append(out, d)
		}
	}
	return out
}

// delayWill publishes will after delay seconds (MQTT 5 Will Delay
// Interval), or when the session expires if that is sooner, unless the
// client reconnects first.
func (s *Server) delayWill(clientID string, will *message.Message, creds engine.Credentials, delay, expiry uint32) {
	if expiry < delay {
		delay = expiry
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.client(clientID)
	var t *time.Timer
	t = time.AfterFunc(time.Duration(delay)*time.Second, func() {
		s.mu.Lock()
		cur := s.clients[clientID]
		if cur == nil || cur.xIfMade().willTimer != t {
			s.mu.Unlock()
			return
		}
		cur.x().willTimer = nil
		s.mu.Unlock()
		creds.ClientID = ""
		c, err := s.e.Connect(creds)
		if err != nil {
			s.log.Warn("delayed will not published", "client_id", clientID, "err", err)
			return
		}
		defer c.Close()
		if err := c.Send(will, "", nil, 0); err != nil {
			s.log.Warn("delayed will not published", "client_id", clientID, "err", err)
		}
	})
	cs.x().willTimer = t
}
