package openwire

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/connlog"
	"wharf/protocols/internal/timers"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
)

// session is one OpenWire connection.
type session struct {
	srv *Server
	tc  transport.Conn
	log *slog.Logger
	dec *wire.Decoder

	// writeMu guards enc: see the package comment.
	writeMu sync.Mutex
	enc     *wire.Encoder

	// Touched only by the transport goroutine.
	negotiated bool
	format     wire.Format
	conn       *engine.Conn
	connID     *wire.ConnectionId
	sessions   map[int64]*jmsSession
	consumers  map[string]*consumer
	producers  map[string]*producer
	txs        map[string]bool
	txAcked    map[string][]txAckedBatch
	dead       bool
	// duplex is the client side of the connection when the remote broker
	// asked for a duplex bridge (duplex.go): it is handed the frames that
	// answer it. Stored once by the bridge's goroutine; duplexStarted is
	// the transport goroutine's.
	duplex        atomic.Pointer[client.Conn]
	duplexStarted bool
	// reconnect: the ConnectionInfo was a failover client's reconnection;
	// network: a broker introduced itself (BrokerInfo). Either turns the
	// producer audit on (auditProducers).
	reconnect, network bool

	// pendingMu guards sends awaiting their engine completion.
	pendingMu sync.Mutex
	pending   map[uint64]pendingSend
	tokenSeq  uint64

	closed   atomic.Bool
	readSeen atomic.Bool
	// flow bounds what consumers queue unwritten (outflow.go); set with
	// the first consumer.
	flow  atomic.Pointer[outFlow]
	wrote atomic.Bool
	// handshook is negotiated, for the negotiation timer's goroutine.
	handshook atomic.Bool
	timers    timers.Set // heart-beat, keep-alive and connect timers
}

// put sets m[k] = v, making the map on the first entry. The session's
// maps start nil: an idle connection (one session, nothing else) holds
// none of them (issue 18: eight empty maps were 380 of the 5,600 heap
// bytes an idle OpenWire connection held). Reads, deletes and ranges of a
// nil map need nothing.
func put[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

type jmsSession struct {
	consumers map[string]*consumer
	producers map[string]*producer
}

type producer struct {
	id     *wire.ProducerId
	window int32
	reg    *engine.Producer
}

// pendingSend is what a send's completion must answer.
type pendingSend struct {
	corr     int32 // CommandId to answer with a Response; 0 for none
	producer *wire.ProducerId
	ackSize  int32 // ProducerAck size when the producer has a window
}

func newSession(srv *Server, tc transport.Conn) *session {
	s := &session{
		srv: srv,
		tc:  tc,
		log: connlog.New(srv.log, tc.ID(), tc.RemoteAddr(), "openwire"),
		dec: wire.NewDecoder(wire.InitialFormat(srv.opts.Local.Version), srv.opts.Limits),
		enc: wire.NewEncoder(wire.InitialFormat(srv.opts.Local.Version)),
	}
	// Both sides send WireFormatInfo at once (reference/openwire.md §3).
	s.send(srv.info)
	// The timeout runs until WireFormatInfo is read, as ActiveMQ's connect
	// check does (AbstractInactivityMonitor: stopped by the inbound
	// WireFormatInfo, not by any byte): a client that sends part of one,
	// or trickles bytes, is closed by it all the same.
	s.timers.After(srv.opts.NegotiationTimeout, func() {
		if !s.closed.Load() && !s.handshook.Load() {
			s.log.Info("wire format negotiation timeout", "timeout", srv.opts.NegotiationTimeout)
			srv.e.CountHandshakeTimeout("openwire")
			s.tc.Close()
		}
	})
	return s
}

// send encodes and writes a command. Safe from any goroutine.
func (s *session) send(ds wire.DataStructure) { _ = s.sendErr(ds) }

// sendErr is send reporting what failed (the duplex bridge's writer).
func (s *session) sendErr(ds wire.DataStructure) error {
	bp := outBufs.Get().(*[]byte)
	defer putOutBuf(bp)
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	b, err := s.enc.Append((*bp)[:0], ds)
	*bp = b
	if err != nil {
		s.log.Warn("encode failed", "type", wire.TypeName(ds.DataStructureType()), "err", err)
		return err
	}
	s.wrote.Store(true)
	if err := s.tc.Write(b); err != nil { // Write copies b
		s.log.Debug("write failed", "err", err)
		return err
	}
	if f := s.flow.Load(); f != nil {
		s.accountWrite(f, len(b))
	}
	return nil
}

// outBufs are the buffers frames are encoded into before the transport
// copies them. Pooled rather than one per session (issue 18): an idle
// connection holds none (it held the largest frame it had sent, 350 bytes
// after the handshake, a whole message after a large dispatch).
var outBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledOut is the largest buffer put back in outBufs: one encoded for
// a larger frame is left to the collector rather than kept for small ones.
const maxPooledOut = 64 << 10

func putOutBuf(bp *[]byte) {
	if cap(*bp) > maxPooledOut {
		*bp = nil
	}
	outBufs.Put(bp)
}

// respond answers a command that asked for a response.
func (s *session) respond(cmd wire.Command, err error) {
	if !cmd.Base().ResponseRequired {
		if err != nil {
			s.log.Debug("command failed", "type", wire.TypeName(cmd.DataStructureType()), "err", err)
		}
		return
	}
	s.respondTo(cmd.Base().CommandId, err)
}

func (s *session) respondTo(corr int32, err error) {
	if err != nil {
		s.send(&wire.ExceptionResponse{Response: wire.Response{CorrelationId: corr}, Exception: javaException(err)})
		return
	}
	s.send(&wire.Response{CorrelationId: corr})
}

// OnData decodes commands and handles them in order.
func (s *session) OnData(b []byte) error {
	s.readSeen.Store(true)
	if s.dead {
		return nil
	}
	s.dec.Feed(b)
	for !s.dead {
		ds, err := s.dec.Next()
		if err != nil {
			// A frame that cannot be decoded leaves the stream unusable:
			// tell the client why, then close (ActiveMQ closes the transport).
			s.log.Warn("bad frame", "err", err)
			s.send(&wire.ConnectionError{Exception: &wire.Throwable{ClassName: "java.io.IOException", Message: err.Error()}, ConnectionId: s.connID})
			s.fail()
			return nil
		}
		if ds == nil {
			return nil
		}
		s.handle(ds)
	}
	return nil
}

func (s *session) fail() {
	s.dead = true
	s.tc.Close()
}

// OnClose releases what the connection held.
func (s *session) OnClose(err error) {
	s.closed.Store(true)
	s.timers.Stop()
	if rc := s.duplex.Load(); rc != nil {
		// The reverse bridge ends with the connection.
		rc.Detach(err)
	}
	s.closeConnection()
	if err != nil {
		s.log.Debug("connection closed", "err", err)
	}
}

func (s *session) closeConnection() {
	if s.conn == nil {
		return
	}
	if s.srv.cluster != nil {
		s.srv.cluster.leave(s)
	}
	if err := s.conn.Close(); err != nil {
		s.log.Warn("connection cleanup failed", "err", err)
	}
	s.conn = nil
	s.consumers = nil
	s.producers = nil
	s.sessions = nil
}

func (s *session) handle(ds wire.DataStructure) {
	if !s.negotiated {
		wf, ok := ds.(*wire.WireFormatInfo)
		if !ok {
			s.log.Warn("command before WireFormatInfo", "type", wire.TypeName(ds.DataStructureType()))
			s.send(&wire.ConnectionError{Exception: &wire.Throwable{ClassName: "java.io.IOException", Message: ErrNotNegotiated.Error()}})
			s.fail()
			return
		}
		s.negotiate(wf)
		return
	}
	if rc := s.duplex.Load(); rc != nil && rc.Inbound(ds) {
		return // an answer to the reverse bridge (duplex.go)
	}
	switch c := ds.(type) {
	case *wire.Message:
		s.onMessage(c)
	case *wire.MessageAck:
		if deferred, err := s.onAck(c); !deferred {
			s.respond(c, err)
		}
	case *wire.MessagePull:
		s.onPull(c)
	case *wire.ConnectionInfo:
		err := s.onConnection(c)
		s.respond(c, err)
		if err != nil && s.conn == nil {
			// TransportConnection.processAddConnection stops the transport
			// after any failed ConnectionInfo (AMQ-6561), a failed login
			// included, once the ExceptionResponse is out. ActiveMQ waits
			// 2 s (delayedStop) for the client to read it; Wharf closes
			// after the write, which delivers it as well.
			if ok, held := s.srv.refused.Allow(time.Now()); ok {
				s.log.Warn("connection refused", "user", c.UserName, "client_id", c.ClientId, "err", err, "suppressed", held)
			}
			s.fail()
		}
	case *wire.SessionInfo:
		s.respond(c, s.onSession(c))
	case *wire.ConsumerInfo:
		s.onConsumer(c)
	case *wire.ProducerInfo:
		s.respond(c, s.onProducer(c))
	case *wire.RemoveInfo:
		s.respond(c, s.onRemove(c))
	case *wire.TransactionInfo:
		s.onTransaction(c)
	case *wire.DestinationInfo:
		s.respond(c, s.onDestination(c))
	case *wire.RemoveSubscriptionInfo:
		s.respond(c, s.onRemoveSubscription(c))
	case *wire.ShutdownInfo:
		s.respond(c, nil)
		s.closeConnection()
		s.dead = true
		s.tc.Close()
	case *wire.ConsumerControl:
		// A failover client restores its consumers with prefetch 0, then
		// gives each its prefetch back with a ConsumerControl.
		if c.ConsumerId != nil {
			if cons := s.consumers[c.ConsumerId.String()]; cons != nil && !c.Close {
				cons.sub.SetPrefetch(int(c.Prefetch))
			}
		}
		s.respond(c, nil)
	case *wire.WireFormatInfo:
		// A second WireFormatInfo changes nothing (ActiveMQ ignores it too).
	case *wire.KeepAliveInfo:
		// With an inactivity monitor (the default), ActiveMQ's monitor
		// consumes KeepAliveInfo and echoes one when a response is asked
		// for, rather than a Response (AbstractInactivityMonitor.onCommand);
		// without one, TransportConnection answers it like any command.
		if s.format.MaxInactivityDuration <= 0 {
			s.respond(c, nil)
		} else if c.ResponseRequired {
			s.send(&wire.KeepAliveInfo{})
		}
	case *wire.BrokerInfo:
		// A network bridge introducing its broker. A duplex one expects
		// this broker to run the reverse bridge over the connection
		// (TransportConnection.processBrokerInfo), which it starts at
		// once, as ActiveMQ 5.17 does (duplex.go).
		if c.NetworkConnection && c.DuplexConnection {
			s.startDuplex(c)
		} else if c.NetworkConnection {
			s.log.Info("network bridge connected", "remote_broker", c.BrokerName)
			s.syncDurableSubs(c) // netsync.go
		}
		// TransportConnection.processBrokerInfo: any BrokerInfo makes the
		// connection a network connection.
		s.network = true
		s.auditProducers()
		s.respond(c, nil)
	case wire.Command:
		// FlushCommand, ControlCommand, ConsumerControl, ConnectionControl:
		// nothing to do but answer when asked.
		s.respond(c, nil)
	}
}

// negotiate settles the wire format with the client's WireFormatInfo and
// starts the inactivity monitor.
func (s *session) negotiate(wf *wire.WireFormatInfo) {
	if !wf.Valid() {
		s.log.Warn("bad WireFormatInfo magic")
		s.fail()
		return
	}
	remote, err := wf.Options()
	if err != nil {
		s.log.Warn("bad WireFormatInfo", "err", err)
		s.fail()
		return
	}
	f, err := wire.Negotiate(s.srv.opts.Local, remote)
	if err != nil {
		s.log.Warn("wire format negotiation failed", "err", err)
		s.send(&wire.ConnectionError{Exception: &wire.Throwable{ClassName: "java.io.IOException", Message: err.Error()}})
		s.fail()
		return
	}
	s.format = f
	s.dec.SetFormat(f)
	s.writeMu.Lock()
	s.enc.SetFormat(f)
	s.writeMu.Unlock()
	s.negotiated = true
	s.handshook.Store(true)
	// BrokerInfo lets failover: clients learn the broker
	// (TransportConnection.start).
	s.send(&wire.BrokerInfo{
		BrokerId:   &wire.BrokerId{Value: s.srv.e.BrokerID()},
		BrokerName: s.srv.e.BrokerName(),
		BrokerURL:  s.srv.opts.BrokerURL,
	})
	s.startInactivityMonitor(f.MaxInactivityDuration)
}

// startInactivityMonitor closes a connection that sends nothing for the
// negotiated MaxInactivityDuration, and keeps ours alive with KeepAliveInfo
// when we have written nothing for half of it (AbstractInactivityMonitor).
func (s *session) startInactivityMonitor(d time.Duration) {
	if d <= 0 {
		return
	}
	s.readSeen.Store(false)
	var readCheck func()
	readCheck = func() {
		if s.closed.Load() {
			return
		}
		if !s.readSeen.Swap(false) {
			s.log.Info("inactivity timeout, closing", "max_inactivity", d)
			s.tc.Close()
			return
		}
		s.timers.After(d, readCheck)
	}
	s.timers.After(d, readCheck)
	var writeCheck func()
	writeCheck = func() {
		if s.closed.Load() {
			return
		}
		if !s.wrote.Swap(false) {
			s.send(&wire.KeepAliveInfo{})
		}
		s.timers.After(d/2, writeCheck)
	}
	s.timers.After(d/2, writeCheck)
}

func (s *session) onConnection(c *wire.ConnectionInfo) error {
	if s.conn != nil {
		return fmt.Errorf("connection %s already started", s.connID)
	}
	if c.ClientId == "" {
		return ErrNoClientID
	}
	certs, isTLS := transport.PeerCertificates(s.tc)
	conn, err := s.srv.e.Connect(engine.Credentials{
		Username: c.UserName, Password: c.Password, ClientID: c.ClientId,
		Certs: certs, TLS: isTLS,
		Remote: s.tc.RemoteAddr(), Protocol: "openwire",
	})
	if err != nil {
		// The engine's error carries ActiveMQ's words: "User name [x] or
		// password is invalid." for a failed login, RegionBroker.
		// addConnection's for a client id in use (engine.ClientText).
		return err
	}
	s.conn = conn
	conn.SetCloser(func() { s.tc.Close() }) // an operator's close (web console)
	s.reconnect = c.FailoverReconnect
	s.auditProducers()
	s.connID = c.ConnectionId
	if c.Manageable {
		// ActiveMQ's TransportConnection sends every manageable connection
		// (each JMS client's) its connector's ConnectionControl. Without
		// updateClusterClients/rebalanceClusterClients that names no
		// brokers and asks for nothing; a failover client then keeps its
		// own URI list. A reconnection of a failover client is never
		// asked to rebalance (TransportConnection.processAddConnection).
		cc := &wire.ConnectionControl{RebalanceConnection: s.srv.opts.RebalanceClients}
		if s.srv.cluster != nil {
			cc = s.srv.cluster.control()
		}
		cc.RebalanceConnection = cc.RebalanceConnection && !c.FailoverReconnect
		s.send(cc)
	}
	if s.srv.cluster != nil && c.FaultTolerant && s.format.Version >= 6 {
		// Told again each time the network changes (clusterclients.go).
		s.srv.cluster.join(s)
	}
	return nil
}

// auditProducers turns the engine's producer audit on for the
// connection's sends when ActiveMQ's TransportConnection.
// getProducerBrokerExchange would: a failover client's reconnection
// (ConnectionInfo.failoverReconnect, ConnectionContext.isReconnect), or a
// network connection on a connector with auditNetworkProducers. A
// re-sent persistent message whose producer sequence id is at or below
// the last one stored for its producer is then answered and dropped.
func (s *session) auditProducers() {
	if s.conn != nil && (s.reconnect || s.network && s.srv.opts.AuditNetworkProducers) {
		s.conn.SetProducerAudit(true)
	}
}

func (s *session) needConn() error {
	if s.conn == nil {
		return ErrNoConnection
	}
	return nil
}

func (s *session) onSession(c *wire.SessionInfo) error {
	if err := s.needConn(); err != nil {
		return err
	}
	if c.SessionId != nil {
		put(&s.sessions, c.SessionId.Value, &jmsSession{})
	}
	return nil
}

func (s *session) jmsSessionOf(connID string, sessionID int64) *jmsSession {
	js := s.sessions[sessionID]
	if js == nil {
		// Sessions are implicit for some clients (and the Java client's
		// connection-level advisory consumer uses session -1).
		js = &jmsSession{}
		put(&s.sessions, sessionID, js)
	}
	return js
}

func (s *session) onProducer(c *wire.ProducerInfo) error {
	if err := s.needConn(); err != nil {
		return err
	}
	if c.ProducerId == nil {
		return fmt.Errorf("ProducerInfo without a ProducerId")
	}
	var d message.Destination
	if c.Destination != nil {
		d = marshal.DestToEngine(c.Destination)
		if d.Type.IsTemp() && !s.srv.e.Stats(d).Exists {
			return engine.TempGoneError(d)
		}
		// A producer on a destination needs write access when it is
		// created, not at its first send (AuthorizationBroker.addProducer).
		if err := s.conn.AuthorizeProducer(d); err != nil {
			return err
		}
	}
	p := &producer{id: c.ProducerId, window: c.WindowSize, reg: s.conn.AddProducer(d)}
	key := c.ProducerId.String()
	put(&s.producers, key, p)
	put(&s.jmsSessionOf(c.ProducerId.ConnectionId, c.ProducerId.SessionId).producers, key, p)
	return nil
}

func (s *session) onRemove(c *wire.RemoveInfo) error {
	switch id := c.ObjectId.(type) {
	case *wire.ConnectionId:
		s.closeConnection()
	case *wire.SessionId:
		js := s.sessions[id.Value]
		if js == nil {
			return nil
		}
		for key, cons := range js.consumers {
			s.closeConsumer(key, cons)
		}
		for key, p := range js.producers {
			s.removeProducer(key, p)
		}
		delete(s.sessions, id.Value)
	case *wire.ConsumerId:
		key := id.String()
		if cons := s.consumers[key]; cons != nil {
			s.closeConsumer(key, cons)
		}
	case *wire.ProducerId:
		key := id.String()
		if p := s.producers[key]; p != nil {
			s.removeProducer(key, p)
		}
	}
	return nil
}

func (s *session) removeProducer(key string, p *producer) {
	delete(s.producers, key)
	if js := s.sessions[p.id.SessionId]; js != nil {
		delete(js.producers, key)
	}
	if s.conn != nil && p.reg != nil {
		s.conn.RemoveProducer(p.reg)
	}
}

func (s *session) onDestination(c *wire.DestinationInfo) error {
	if err := s.needConn(); err != nil {
		return err
	}
	if c.Destination == nil {
		return fmt.Errorf("%w: DestinationInfo without a destination", engine.ErrBadDestination)
	}
	d := marshal.DestToEngine(c.Destination)
	if !d.Type.IsTemp() {
		return nil // regular destinations are created when used
	}
	if c.OperationType == wire.DestinationRemove {
		return s.conn.DeleteTemp(d)
	}
	return s.conn.AddTemp(d)
}

func (s *session) onRemoveSubscription(c *wire.RemoveSubscriptionInfo) error {
	if err := s.needConn(); err != nil {
		return err
	}
	clientID := c.ClientId
	if clientID == "" {
		clientID = s.conn.ClientID()
	}
	return s.srv.e.Unsubscribe(engine.SubKey{ClientID: clientID, Name: c.SubscriptionName})
}

// txKey names a transaction for the engine.
func txKey(t wire.TransactionId) string {
	if t == nil {
		return ""
	}
	switch x := t.(type) {
	case *wire.LocalTransactionId:
		return x.String()
	case *wire.XATransactionId:
		return x.String()
	}
	return ""
}
