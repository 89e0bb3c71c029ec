package mqtt

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/connlog"
	"wharf/protocols/internal/sendflow"
	"wharf/protocols/internal/wheel"
	"wharf/protocols/mqtt/wire"
	"wharf/protocols/transport"
)

// session is one MQTT network connection and the MQTT session it carries.
//
// An idle connection holds this struct, its decoder and its engine
// connection, nothing more (issue 18: a few hundred bytes per connection,
// for brokers holding 100,000 of them). What only a connection that does
// something needs (a will, subscriptions, deliveries in flight, publishes
// under flow control) is in sessionExt, made on first use (ext); the
// logger is made when something is logged (logger); the keep-alive and the
// connect deadline are one Timer of the server's shared wheel, embedded
// here, and a tick stamp.
type session struct {
	srv *Server
	tc  transport.Conn
	// dec is the decoder while a packet is under way (or after one failed);
	// between packets it goes back to decoders and is nil. Transport
	// goroutine only, under mu.
	dec *wire.Decoder

	// mu guards everything down to outMu. It is held while a packet is
	// handled (transport goroutine), while the session is released
	// (OnClose), and by a newer session taking the client id over.
	mu         sync.Mutex
	version    byte
	persistent bool   // the session outlives the connection
	dead       bool   // no more packets are handled
	released   bool   // the engine connection is closed
	expiry     uint32 // MQTT 5 Session Expiry Interval (s); ^0 never
	conn       *engine.Conn
	clientID   string
	cs         *clientState // registered in srv.clients when clientID != ""

	// outMu guards the outbound side, which shard goroutines (Deliver,
	// Complete) share with the transport goroutine. It is never held
	// while calling the engine, except Subscription.Settle and AddCredit,
	// which only post.
	outMu     sync.Mutex
	recvMax   int32 // the client's Receive Maximum
	maxPacket int32 // the client's Maximum Packet Size (bytes); 0 none

	// Liveness: live has connectedBit once CONNECT is accepted and
	// closedBit once OnClose ran; keepAliveMs is the keep-alive in force
	// (ms; 0 none), set before connectedBit; readTick is the wheel tick of
	// the last read; timer is the connect deadline until CONNECT, then the
	// keep-alive check (Fire). Sizes are chosen for a 160-byte session.
	live        atomic.Uint32
	keepAliveMs uint32
	readTick    atomic.Int64
	timer       wheel.Timer

	extp atomic.Pointer[sessionExt] // see ext
}

// sessionExt is the part of a session that an idle connection does not
// need, made by the first packet or delivery that does (ext).
type sessionExt struct {
	// Guarded by session.mu.
	willCreds *engine.Credentials // for a delayed will only (release)
	will      *message.Message
	willDelay uint32 // MQTT 5 Will Delay Interval (s)
	subs      map[string]*subscription
	aliases   map[uint16]string // MQTT 5 inbound topic aliases
	inTopic   topicCache        // publishDest: MQTT topic -> engine name

	// Guarded by session.outMu.
	out      []byte     // encode buffer of deliveries
	outTopic topicCache // deliveryTopic: engine name -> MQTT topic
	inflight flights
	waiting  []waitingDelivery

	// flow stops reading past maxOutstandingSends publishes the engine has
	// not completed. inflightIn counts QoS 1 and 2 publishes not yet
	// acknowledged to the client (MQTT 5 Receive Maximum).
	flow       sendflow.Gate
	inflightIn atomic.Int64
	// acksOut counts the acknowledgements of QoS 2 deliveries whose
	// PUBREL waits for the store (relDone); release waits for them, so
	// that a resumed session finds them durable.
	acksOut sync.WaitGroup
}

// Bits of session.live.
const (
	connectedBit = 1 << iota
	closedBit
)

// connected reports whether CONNECT was accepted. Safe from any goroutine.
func (s *session) connected() bool { return s.live.Load()&connectedBit != 0 }

// closed reports whether OnClose ran: late completions and deliveries
// write nothing. Safe from any goroutine.
func (s *session) closed() bool { return s.live.Load()&closedBit != 0 }

// ext returns the session's sessionExt, making it on first use. Safe from
// any goroutine.
func (s *session) ext() *sessionExt {
	if x := s.extp.Load(); x != nil {
		return x
	}
	x := &sessionExt{subs: map[string]*subscription{}}
	x.flow = sendflow.Gate{Limit: maxOutstandingSends, Conn: s.tc, Log: s.logger()}
	if !s.extp.CompareAndSwap(nil, x) {
		return s.extp.Load()
	}
	return x
}

// extIfMade returns the session's sessionExt, or nil when nothing made it:
// for the paths an idle connection takes too (release), which must not
// make it only to find it empty.
func (s *session) extIfMade() *sessionExt { return s.extp.Load() }

// logger is the connection's logger: made at each call, since logging is
// rare and a logger kept per connection would cost every idle one ~200
// bytes. Safe from any goroutine once CONNECT was handled (it reads the
// client id).
func (s *session) logger() *slog.Logger {
	l := connlog.New(s.srv.log, s.tc.ID(), s.tc.RemoteAddr(), "mqtt")
	if s.clientID != "" {
		l = l.With("client_id", s.clientID)
	}
	return l
}

func newSession(srv *Server, tc transport.Conn) *session {
	s := &session{
		srv:     srv,
		tc:      tc,
		recvMax: 65535,
	}
	srv.wheel.After(&s.timer, srv.opts.ConnectTimeout, s)
	return s
}

// Fire is the session's wheel timer: before CONNECT the connect deadline,
// after it the keep-alive check. It runs on the wheel's goroutine, so what
// takes locks or writes goes to a goroutine of its own.
func (s *session) Fire(now int64) {
	if s.closed() {
		return
	}
	if !s.connected() {
		// A client that opens a socket and never sends CONNECT does not
		// hold it for ever (ActiveMQ's transport.connectAttemptTimeout).
		go s.connectExpired()
		return
	}
	k := time.Duration(s.keepAliveMs) * time.Millisecond
	if k <= 0 {
		return // the deadline fired as CONNECT was accepted
	}
	// [MQTT-3.1.2-24]: nothing received for 1.5 times the keep-alive.
	period := s.srv.wheel.Ticks(k * 3 / 2)
	due := s.readTick.Load() + period
	if due <= now && s.flowPaused() {
		// Reading is stopped (flow control): the client cannot be judged
		// by what it sent; wait for another period.
		due = now + period
	}
	if due > now {
		s.srv.wheel.At(&s.timer, due, s)
		return
	}
	go s.keepAliveExpired(k)
}

// flowPaused reports whether flow control has stopped reading.
func (s *session) flowPaused() bool {
	x := s.extIfMade()
	return x != nil && x.flow.Paused()
}

func (s *session) connectExpired() {
	if s.closed() || s.connected() {
		return
	}
	// Not logger(): the client id is not set, and may be being set.
	connlog.New(s.srv.log, s.tc.ID(), s.tc.RemoteAddr(), "mqtt").Debug("connect timeout", "timeout", s.srv.opts.ConnectTimeout)
	s.srv.e.CountHandshakeTimeout("mqtt")
	s.tc.Close()
}

// packetBufs holds the slices OnData decodes packets into: a slice per
// connection, kept between reads, would cost every idle connection its
// size (issue 18's budget for an idle connection).
var packetBufs = sync.Pool{New: func() any { return new([]wire.Packet) }}

// decoders holds the decoders of connections between packets: an idle
// connection holds none (wire.Decoder.Idle).
var decoders = sync.Pool{New: func() any { return new(wire.Decoder) }}

// encodeBufs holds the buffers packets the transport goroutine writes
// (CONNACK, PINGRESP, acknowledgements) are encoded into: Write copies
// them, so none is kept per connection.
var encodeBufs = sync.Pool{New: func() any { return new([]byte) }}

// OnData decodes packets and handles them in order.
func (s *session) OnData(b []byte) error {
	s.readTick.Store(s.srv.wheel.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return nil
	}
	d := s.dec
	if d == nil {
		d = decoders.Get().(*wire.Decoder)
		d.Resume(s.srv.opts.Limits, s.version, s.connected())
		s.dec = d
	}
	buf := packetBufs.Get().(*[]wire.Packet)
	packets, err := d.Feed(b, (*buf)[:0])
	for i := range packets {
		if s.dead {
			break
		}
		s.handle(&packets[i])
	}
	clear(packets) // what the packets pointed to is not kept by the pool
	*buf = packets[:0]
	packetBufs.Put(buf)
	if err != nil && !s.dead {
		s.decodeFailed(err)
	}
	if d.Idle() && !s.dead {
		s.dec = nil
		decoders.Put(d)
	}
	return nil
}

// decodeFailed ends the connection on a packet that cannot be decoded: with
// CONNACK 0x01 for an unknown protocol level [MQTT-3.1.2-2], an MQTT 5
// DISCONNECT with the reason code the error carries, or a plain close.
func (s *session) decodeFailed(err error) {
	s.logger().Warn("malformed packet, closing", "err", err)
	reason := wire.ReasonMalformedPacket
	var we *wire.Error
	if errors.As(err, &we) {
		reason = we.Reason
	}
	v := s.version
	if v == 0 {
		// A CONNECT that failed to decode still names its level when its
		// name and level were valid: answer in the client's own format.
		v = s.dec.Version()
	}
	switch {
	case !s.connected() && reason == wire.ReasonUnsupportedProtocolVersion:
		s.writePacket(&wire.Packet{Type: wire.CONNACK, ReasonCode: wire.ConnRefusedProtocolVersion}, wire.Version311)
	case !s.connected() && v == wire.Version5:
		// No DISCONNECT before a CONNACK [MQTT-3.14.0-1]: refuse in CONNACK.
		s.writePacket(&wire.Packet{Type: wire.CONNACK, ReasonCode: reason, Props: &wire.Properties{ReasonString: err.Error()}}, wire.Version5)
	case s.connected() && v == wire.Version5:
		s.writePacket(&wire.Packet{Type: wire.DISCONNECT, ReasonCode: reason}, wire.Version5)
	}
	s.abort()
}

// protocolError ends the connection for a packet that breaks the protocol;
// MQTT 5 clients get a DISCONNECT with reason and its text.
func (s *session) protocolError(reason byte, msg string) {
	s.logger().Warn("protocol error, closing", "reason", reason, "err", msg)
	if s.version == wire.Version5 && s.connected() {
		p := wire.Packet{Type: wire.DISCONNECT, ReasonCode: reason, Props: &wire.Properties{ReasonString: msg}}
		s.writePacket(&p, wire.Version5)
	}
	s.abort()
}

// abort stops handling packets and closes the network connection; OnClose
// then releases the session, publishing the will.
func (s *session) abort() {
	s.dead = true
	s.tc.Close()
}

// OnClose releases everything the connection held.
func (s *session) OnClose(err error) {
	s.live.Or(closedBit)
	s.srv.wheel.Stop(&s.timer)
	s.mu.Lock()
	s.dead = true
	s.release(true)
	s.mu.Unlock()
	if err != nil {
		s.logger().Debug("connection closed", "err", err)
	}
}

// release closes the engine connection, publishing the will first when
// publishWill is set and the client did not disconnect normally, and
// leaves what the MQTT session keeps with the server. Called with mu held.
func (s *session) release(publishWill bool) {
	if s.released || s.conn == nil {
		s.released = true
		return
	}
	s.released = true
	x := s.extIfMade()
	if x != nil && x.will != nil && publishWill {
		if x.willDelay > 0 && s.persistent && s.clientID != "" {
			s.srv.delayWill(s.clientID, x.will, *x.willCreds, x.willDelay, s.expiry)
		} else if err := s.conn.Send(x.will, "", nil, 0); err != nil {
			s.logger().Warn("will not published", "dest", x.will.Destination.String(), "err", err)
		}
	}
	if x != nil {
		x.will = nil
	}
	if err := s.conn.Close(); err != nil {
		s.logger().Warn("connection cleanup failed", "err", err)
	}
	if x == nil {
		// Nothing was subscribed, delivered or willed.
		if s.clientID != "" {
			s.srv.offline(s)
		}
		return
	}
	// relDone takes neither mu nor anything its waiters hold.
	x.acksOut.Wait()
	if !s.persistent {
		// A session that ends leaves its shared subscriptions; a
		// persistent one stays a member while away (clientExt.shared).
		for _, sub := range x.subs {
			if !sub.share.IsZero() {
				s.srv.shareLeave(sub.share)
			}
		}
	}
	if s.clientID != "" {
		s.srv.offline(s)
	}
}

// takeOver ends this session's connection because a new one connected with
// the same client id [MQTT-3.1.4-3]; newClean is the new connection's clean
// start. Called by the new session, which holds its own mu.
func (s *session) takeOver(newClean bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.released {
		return
	}
	s.logger().Info("client id taken over by a new connection", "client_id", s.clientID)
	if s.version == wire.Version5 {
		s.writePacket(&wire.Packet{Type: wire.DISCONNECT, ReasonCode: wire.ReasonSessionTakenOver}, wire.Version5)
	}
	s.dead = true
	publishWill := true
	if x := s.extIfMade(); x != nil && x.willDelay > 0 && s.persistent {
		// MQTT 5 §3.1.3.2.2: with a will delay the will is not sent when
		// the session goes on; a clean start ends it, and the will goes now.
		publishWill = newClean
		x.willDelay = 0
	}
	s.release(publishWill)
	s.tc.Close()
}

// writePacket encodes p into a pooled buffer and writes it.
func (s *session) writePacket(p *wire.Packet, version byte) {
	buf := encodeBufs.Get().(*[]byte)
	*buf = wire.AppendPacket((*buf)[:0], p, version)
	if err := s.tc.Write(*buf); err != nil {
		s.logger().Debug("write failed", "err", err)
	}
	if cap(*buf) <= maxPooledEncode {
		encodeBufs.Put(buf)
	}
}

// maxPooledEncode is the largest encode buffer (bytes) put back in
// encodeBufs; a bigger one (a CONNACK with a long reason string) is left
// to the collector.
const maxPooledEncode = 4 << 10

// writeAck writes a short acknowledgement from any goroutine.
// Called without outMu held: the order of acknowledgements among
// themselves and with deliveries is the transport's write order.
func (s *session) writeAck(t wire.Type, pid uint16, reason byte) {
	s.writePacket(&wire.Packet{Type: t, PacketID: pid, ReasonCode: reason}, s.version)
}

// handle dispatches one packet.
func (s *session) handle(p *wire.Packet) {
	if p.Type != wire.CONNECT && !s.connected() {
		// [MQTT-3.1.0-1]: the first packet must be CONNECT.
		s.logger().Warn("packet before CONNECT, closing", "packet", p.Type.String())
		s.abort()
		return
	}
	switch p.Type {
	case wire.CONNECT:
		if s.connected() {
			s.protocolError(wire.ReasonProtocolError, "second CONNECT [MQTT-3.1.0-2]")
			return
		}
		s.onConnect(p)
	case wire.PUBLISH:
		s.onPublish(p)
	case wire.PUBACK:
		s.onPubAck(p)
	case wire.PUBREC:
		s.onPubRec(p)
	case wire.PUBREL:
		s.onPubRel(p)
	case wire.PUBCOMP:
		s.onPubComp(p)
	case wire.SUBSCRIBE:
		s.onSubscribe(p)
	case wire.UNSUBSCRIBE:
		s.onUnsubscribe(p)
	case wire.PINGREQ:
		s.writePacket(&wire.Packet{Type: wire.PINGRESP}, s.version)
	case wire.DISCONNECT:
		s.onDisconnect(p)
	case wire.AUTH:
		// Enhanced authentication is not offered: CONNECT with an
		// Authentication Method is refused, so AUTH is never expected.
		s.protocolError(wire.ReasonProtocolError, "AUTH without an authentication method")
	default:
		s.protocolError(wire.ReasonProtocolError, p.Type.String()+" is not sent by clients")
	}
}

func (s *session) onConnect(p *wire.Packet) {
	c := p.Connect
	v := c.ProtocolLevel
	s.version = v
	s.dec.SetVersion(v)
	refuse := func(code3, code5 byte, why string) {
		s.logger().Info("connection refused", "client_id", c.ClientID, "err", why)
		ack := wire.Packet{Type: wire.CONNACK, ReasonCode: code3}
		if v == wire.Version5 {
			ack.ReasonCode = code5
			ack.Props = &wire.Properties{ReasonString: why}
		}
		s.writePacket(&ack, v)
		s.abort()
	}
	if v != wire.Version5 && c.PasswordFlag && !c.UsernameFlag {
		// [MQTT-3.1.2-22]; ActiveMQ closes without a CONNACK.
		s.logger().Warn("password without user name, closing")
		s.abort()
		return
	}
	if p.Props != nil && p.Props.AuthMethod != "" {
		refuse(wire.ConnRefusedNotAuthorized, wire.ReasonBadAuthMethod, "authentication method "+p.Props.AuthMethod+" is not supported")
		return
	}
	if c.WillFlag {
		if err := wire.ValidTopicName(c.WillTopic); err != nil {
			// [MQTT-3.1.2-14]: the will topic is a topic name.
			refuse(wire.ConnRefusedServerUnavailable, wire.ReasonTopicNameInvalid, "will topic: "+err.Error())
			return
		}
	}
	clientID := strings.Clone(c.ClientID)
	assigned := false
	if clientID == "" {
		switch {
		case v == wire.Version5:
			clientID = "wharf-" + randomID()
			assigned = true
		case !c.CleanSession:
			// [MQTT-3.1.3-8]
			refuse(wire.ConnRefusedIdentifierRejected, wire.ReasonClientIDNotValid, "a client id is required when the session is not clean")
			return
		}
	}
	s.persistent = !c.CleanSession
	if v == wire.Version5 {
		s.expiry = 0
		if p.Props != nil && p.Props.HasSessionExpiry {
			s.expiry = p.Props.SessionExpiry
		}
		s.persistent = s.expiry > 0
		if p.Props != nil && p.Props.HasReceiveMaximum {
			s.recvMax = int32(p.Props.ReceiveMaximum)
		}
		if p.Props != nil && p.Props.HasMaximumPacketSize {
			s.maxPacket = int32(min(p.Props.MaximumPacketSize, math.MaxInt32))
		}
	}
	certs, isTLS := transport.PeerCertificates(s.tc)
	creds := engine.Credentials{
		Username: c.Username, Password: string(c.Password), ClientID: clientID,
		Certs: certs, TLS: isTLS,
		Remote: s.tc.RemoteAddr(), Protocol: "mqtt",
	}
	// Authenticate before the client id is claimed: a refused CONNECT
	// must not take over (and so disconnect) the session that holds the
	// id. ActiveMQ's authentication broker sits in front of the region
	// broker that steals the link, so it never gets that far either.
	// The subject is then connected as it is: the Authenticator (and its
	// JAAS login modules) runs once per CONNECT, as ActiveMQ's does in
	// addConnection.
	subj, err := s.srv.e.Authenticate(creds)
	if err != nil {
		s.refuseLogin(refuse, err)
		return
	}
	// Take the client id over from a session that holds it, and stop what
	// an offline session had pending.
	cs := &clientState{} // its maps are made on first use
	if clientID != "" {
		var old *session
		cs, old = s.srv.claim(clientID, s)
		if old != nil {
			old.takeOver(c.CleanSession)
		}
	}
	s.cs = cs
	conn, err := s.srv.e.ConnectAuthenticated(subj, creds)
	if err != nil {
		if clientID != "" {
			s.srv.unclaim(clientID, s)
		}
		s.refuseLogin(refuse, err)
		return
	}
	s.conn = conn
	conn.SetCloser(func() { s.tc.Close() }) // an operator's close (web console)
	s.clientID = clientID
	if c.WillFlag {
		x := s.ext()
		x.will = s.willMessage(c)
		if c.WillProps != nil && c.WillProps.HasWillDelay {
			x.willDelay = c.WillProps.WillDelay
			// A delayed will is published by the server after the
			// connection is gone, as this client: only then are the
			// credentials kept (a session holds no password otherwise).
			x.willCreds = &creds
		}
	}
	present := false
	if c.CleanSession {
		s.srv.resetClient(cs)
		s.dropStoredSession()
	} else {
		present = s.hasStoredSession()
	}
	ack := wire.Packet{Type: wire.CONNACK, SessionPresent: present && v != wire.Version31}
	if v == wire.Version5 {
		ack.Props = s.connackProps(assigned)
	}
	keepAlive := time.Duration(c.KeepAlive) * time.Second
	if keepAlive == 0 {
		keepAlive = s.srv.opts.DefaultKeepAlive
	}
	s.startKeepAlive(keepAlive)
	s.writePacket(&ack, v)
	if present {
		s.resumeSession()
	}
}

// connackProps are the MQTT 5 CONNACK properties: what the broker allows.
func (s *session) connackProps(assigned bool) *wire.Properties {
	pr := &wire.Properties{
		TopicAliasMaximum: s.srv.opts.TopicAliasMaximum, HasTopicAliasMaximum: s.srv.opts.TopicAliasMaximum > 0,
		ReceiveMaximum: s.srv.opts.ReceiveMaximum, HasReceiveMaximum: true,
	}
	if n := s.srv.opts.Limits.MaxPacketBytes; n > 0 {
		pr.MaximumPacketSize, pr.HasMaximumPacketSize = uint32(n), true
	}
	if assigned {
		pr.AssignedClientID = s.clientID
	}
	if s.expiry == 0xFFFFFFFF {
		pr.SessionExpiry, pr.HasSessionExpiry = s.expiry, true
	}
	return pr
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// startKeepAlive ends the connect deadline and, for a keep-alive k above
// 0, closes the connection when nothing arrives for 1.5 times k
// [MQTT-3.1.2-24] (ActiveMQ: the same, through its inactivity monitor's
// read check). The check is the session's wheel timer (Fire): it fires
// between 1.5 k and 1.5 k plus one wheel tick after the last read, and
// what arrived before this call does not count.
func (s *session) startKeepAlive(k time.Duration) {
	s.keepAliveMs = uint32(min(max(k, 0)/time.Millisecond, math.MaxUint32))
	s.live.Or(connectedBit)
	if k <= 0 {
		s.srv.wheel.Cancel(&s.timer)
		return
	}
	w := s.srv.wheel
	now := w.Now()
	s.readTick.Store(now)
	w.At(&s.timer, now+w.Ticks(k*3/2), s)
}

// keepAliveExpired closes a connection whose keep-alive expired; an MQTT 5
// client hears DISCONNECT 0x8D first.
func (s *session) keepAliveExpired(k time.Duration) {
	s.logger().Info("keep-alive expired, closing", "keep_alive", k.String())
	s.mu.Lock()
	if s.version == wire.Version5 && !s.dead {
		s.writePacket(&wire.Packet{Type: wire.DISCONNECT, ReasonCode: wire.ReasonKeepAliveTimeout}, wire.Version5)
	}
	s.mu.Unlock()
	s.tc.Close()
}

func (s *session) onDisconnect(p *wire.Packet) {
	publishWill := false
	if s.version == wire.Version5 {
		// Reason 0x04 asks for the will [MQTT-3.14.2-1 note].
		publishWill = p.ReasonCode == wire.ReasonDisconnectWithWill
		if p.Props != nil && p.Props.HasSessionExpiry {
			if s.expiry == 0 && p.Props.SessionExpiry != 0 {
				s.protocolError(wire.ReasonProtocolError, "session expiry set on DISCONNECT after 0 at CONNECT [MQTT-3.14.2-2]")
				return
			}
			s.expiry = p.Props.SessionExpiry
			s.persistent = s.expiry > 0
		}
	}
	s.dead = true
	s.release(publishWill)
	s.tc.Close()
}

// refuseLogin answers a CONNECT the engine refused. The reason string (MQTT
// 5 only) is ActiveMQ's text for the failure (engine.ClientText).
//
// MQTT 3.1 and 3.1.1: ActiveMQ 5.17's MQTTProtocolConverter.onMQTTConnect
// maps the SecurityException its authentication plugins throw for a wrong
// password, an unknown user and missing credentials alike to CONNACK 5
// (not authorized), never 4, and closes the connection; so does Wharf, for
// ErrBadCredentials and ErrNotAuthorized both. MQTT 5, which ActiveMQ 5.17
// does not speak, gets the reason codes [MQTT-3.2.2.2] has for each: 0x86
// bad user name or password, 0x87 not authorized.
func (s *session) refuseLogin(refuse func(code3, code5 byte, why string), err error) {
	switch {
	case errors.Is(err, engine.ErrBadCredentials):
		refuse(wire.ConnRefusedNotAuthorized, wire.ReasonBadUserNameOrPassword, engine.ClientText(err))
	case errors.Is(err, engine.ErrNotAuthorized):
		refuse(wire.ConnRefusedNotAuthorized, wire.ReasonNotAuthorized, engine.ClientText(err))
	case errors.Is(err, engine.ErrClientIDInUse):
		refuse(wire.ConnRefusedIdentifierRejected, wire.ReasonClientIDNotValid, engine.ClientText(err))
	default:
		refuse(wire.ConnRefusedServerUnavailable, wire.ReasonServerUnavailable, engine.ClientText(err))
	}
}
