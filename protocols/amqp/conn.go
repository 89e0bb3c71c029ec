package amqp

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"wharf/engine"
	"wharf/internal/version"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/connlog"
	"wharf/protocols/internal/inactivity"
	"wharf/protocols/transport"
)

// Connection phases.
const (
	phaseHeader     = iota // expecting the first protocol header
	phaseSASL              // SASL frames
	phaseAMQPHeader        // expecting the AMQP header after SASL
	phaseOpen              // expecting Open
	phaseOpened            // sessions and links
	phaseClosed            // Close sent or received; nothing more is read
)

// conn is one AMQP connection: the protocol header exchange, SASL, Open and
// Close, and its sessions.
type conn struct {
	srv *Server
	tc  transport.Conn
	log *slog.Logger
	dec *wire.Decoder
	// msgDec decodes the messages clients send (transport goroutine, mu).
	msgDec wire.MessageDecoder

	// mu is held while frames are handled (transport goroutine), by
	// OnClose and by the timers. Deliveries (shard goroutines) do not take
	// it: they use outMu, which is never held while calling the engine.
	mu       sync.Mutex
	frames   []wire.Frame
	phase    int
	creds    engine.Credentials
	subj     *engine.Subject // who SASL authenticated; nil without SASL
	ec       *engine.Conn
	sessions map[uint16]*session // by the client's channel
	txSeq    uint64
	txs      map[string]bool // open transactions, by id

	outMu    sync.Mutex
	out      []byte
	msgBuf   []byte     // the message being delivered, encoded (Deliver)
	outMsg   outMessage // the message being delivered, mapped (Deliver); zero between deliveries
	maxFrame uint32     // the client's max-frame-size
	// The Accepted outcomes of the client's transfers are batched into
	// range dispositions (acceptLocked); accepted is the range held back,
	// acceptArmed says a flush of the write queue will send it, and
	// acceptFlushed (made once) is that flush's callback.
	accepted      acceptRange
	acceptArmed   bool
	acceptFlushed func(error)
	dispFrame     wire.Disposition // scratch for acceptance dispositions
	xfer          xferScratch      // scratch for outgoing transfers (sendLocked)
	remoteIdle    time.Duration    // the client's idle-time-out

	live inactivity.Monitor // idle time-out, heart-beats and the connect timeout
}

func newConn(srv *Server, tc transport.Conn) *conn {
	c := &conn{
		srv:      srv,
		tc:       tc,
		log:      connlog.New(srv.log, tc.ID(), tc.RemoteAddr(), "amqp"),
		dec:      wire.NewDecoder(srv.opts.Limits),
		sessions: map[uint16]*session{},
		maxFrame: wire.MinMaxFrameSize,
	}
	// Every frame is handled before the next Feed (OnData); what outlives
	// it copies (partialTransfer, settleJoin).
	c.dec.ReuseBodies()
	c.acceptFlushed = c.onAcceptFlushed
	c.live.After(srv.opts.ConnectTimeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.phase < phaseOpened {
			c.log.Debug("connect timeout", "timeout", srv.opts.ConnectTimeout)
			srv.e.CountHandshakeTimeout("amqp")
			c.tc.Close()
		}
	})
	return c
}

// OnData decodes headers and frames and handles them in order.
func (c *conn) OnData(b []byte) error {
	c.live.Read()
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.phase != phaseClosed {
		frames, err := c.dec.Feed(b, c.frames[:0])
		b = nil
		for i := range frames {
			if c.phase == phaseClosed {
				break
			}
			c.handle(&frames[i])
			frames[i] = wire.Frame{}
		}
		c.frames = frames[:0]
		if err != nil {
			if c.phase != phaseClosed {
				c.decodeFailed(err)
			}
			return nil
		}
		// The decoder stops after a header and after each SASL frame,
		// which decide how the rest is read.
		if c.dec.Buffered() == 0 {
			return nil
		}
	}
	return nil
}

// decodeFailed answers a stream that cannot be decoded: a bad protocol
// header gets the broker's own header and a close (AMQP 1.0 §2.2), a bad
// frame a Close with the decoder's condition.
func (c *conn) decodeFailed(err error) {
	c.log.Warn("malformed input, closing", "err", err)
	if errors.Is(err, wire.ErrProtocolHeader) || c.phase == phaseHeader || c.phase == phaseAMQPHeader {
		h := wire.HeaderSASL
		if c.phase == phaseAMQPHeader || c.srv.opts.AllowNonSASL {
			h = wire.HeaderAMQP
		}
		c.writeRaw([]byte(h))
		c.shut()
		return
	}
	cond := wire.ErrCondDecodeError
	var we *wire.Error
	if errors.As(err, &we) && we.Condition != "" {
		cond = we.Condition
	}
	c.closeWith(cond, err.Error())
}

// closeWith sends Close with an error (after an Open of our own when the
// client's was never answered, as §2.4.2 requires) and closes.
func (c *conn) closeWith(cond wire.Symbol, desc string) {
	if c.phase == phaseClosed {
		return
	}
	if c.phase == phaseSASL {
		c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLSys})
		c.shut()
		return
	}
	if c.phase < phaseOpened {
		open := c.brokerOpen()
		open.Properties.Set(wire.Symbol("amqp:connection-establishment-failed"), true)
		c.writeFrame(0, open)
	}
	c.log.Info("closing connection", "condition", string(cond), "err", desc)
	c.writeFrame(0, &wire.Close{Error: &wire.Error{Condition: cond, Description: desc}})
	c.shut()
}

// shut stops handling input and closes the socket once the writes are out.
func (c *conn) shut() {
	c.phase = phaseClosed
	c.tc.Close()
}

// OnClose releases the engine connection and everything on it.
func (c *conn) OnClose(err error) {
	c.live.Close()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.phase = phaseClosed
	c.release()
	if err != nil {
		c.log.Debug("connection closed", "err", err)
	}
}

// release closes every link and the engine connection. Called with mu held.
func (c *conn) release() {
	for ch, s := range c.sessions {
		s.endLinks(false)
		delete(c.sessions, ch)
	}
	if c.ec != nil {
		if err := c.ec.Close(); err != nil {
			c.log.Warn("connection cleanup failed", "err", err)
		}
		c.ec = nil
	}
}

func (c *conn) writeRaw(b []byte) {
	c.live.Wrote()
	if err := c.tc.Write(b); err != nil {
		c.log.Debug("write failed", "err", err)
	}
}

// writeFrame encodes and writes one frame. Safe from any goroutine.
func (c *conn) writeFrame(channel uint16, p wire.Performative) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	c.writeFrameLocked(channel, p)
}

// writeFrameLocked picks the frame type by the performative alone: the
// broker writes only SASL performatives during the SASL phase, and phase
// belongs to the reader (mu), not to the writers here (a shard completing
// a disposition while the connection closes read it unguarded).
func (c *conn) writeFrameLocked(channel uint16, p wire.Performative) {
	c.flushAcceptedLocked()
	if isSASL(p) {
		c.out = wire.AppendSASLFrame(c.out[:0], p)
	} else {
		c.out = wire.AppendFrame(c.out[:0], channel, p, nil)
	}
	c.writeRaw(c.out)
}

func isSASL(p wire.Performative) bool {
	switch p.(type) {
	case *wire.SASLMechanisms, *wire.SASLOutcome, *wire.SASLChallenge:
		return true
	}
	return false
}

// handle dispatches one header or frame.
func (c *conn) handle(f *wire.Frame) {
	if f.Type == wire.FrameHeader {
		c.onHeader(f.Protocol)
		return
	}
	if f.Body == nil {
		return // an empty frame: a heartbeat (§2.4.5)
	}
	switch c.phase {
	case phaseSASL:
		c.onSASL(f.Body)
	case phaseOpen:
		o, ok := f.Body.(*wire.Open)
		if !ok {
			c.closeWith(wire.ErrCondIllegalState, fmt.Sprintf("%T before Open", f.Body))
			return
		}
		c.onOpen(o)
	case phaseOpened:
		c.onFrame(f)
	}
}

func (c *conn) onHeader(p wire.ProtocolID) {
	switch {
	case c.phase == phaseHeader && p == wire.ProtocolSASL:
		c.writeRaw([]byte(wire.HeaderSASL))
		c.phase = phaseSASL
		c.writeFrame(0, &wire.SASLMechanisms{Mechanisms: c.mechanisms()})
	case c.phase == phaseHeader && p == wire.ProtocolAMQP && c.srv.opts.AllowNonSASL:
		c.writeRaw([]byte(wire.HeaderAMQP))
		c.creds = c.baseCredentials()
		c.phase = phaseOpen
	case c.phase == phaseAMQPHeader && p == wire.ProtocolAMQP:
		c.writeRaw([]byte(wire.HeaderAMQP))
		c.phase = phaseOpen
	default:
		// SASL is required (wireFormat.allowNonSaslConnections=false) or
		// the header is out of place: answer with the header we want and
		// close (AMQP 1.0 §2.2).
		want := wire.HeaderSASL
		if c.phase == phaseAMQPHeader {
			want = wire.HeaderAMQP
		}
		c.log.Info("protocol header refused", "got", p.Header(), "want", want)
		c.writeRaw([]byte(want))
		c.shut()
	}
}

// mechanisms are the SASL mechanisms offered: PLAIN and ANONYMOUS, in
// that order, as ActiveMQ 5.17's AmqpAuthenticator offers them, and
// EXTERNAL after them when the client presented a certificate.
//
// DEVIATION: ActiveMQ 5.17 never offers EXTERNAL (a certificate reaches its
// authentication plugin with whatever PLAIN or ANONYMOUS gave); Wharf adds
// it on a TLS connection with a client certificate, so that a client can
// authenticate with the certificate alone (jaasCertificateAuthenticationPlugin).
func (c *conn) mechanisms() []wire.Symbol {
	ms := []wire.Symbol{"PLAIN", "ANONYMOUS"}
	if certs, _ := transport.PeerCertificates(c.tc); len(certs) > 0 {
		ms = append(ms, "EXTERNAL")
	}
	return ms
}

// baseCredentials are the connection's credentials before SASL adds a
// user: its address and, on a TLS connector, the client certificate.
func (c *conn) baseCredentials() engine.Credentials {
	certs, isTLS := transport.PeerCertificates(c.tc)
	return engine.Credentials{Certs: certs, TLS: isTLS, Remote: c.tc.RemoteAddr(), Protocol: "amqp"}
}

// onSASL runs the SASL exchange as ActiveMQ's AmqpAuthenticator does: one
// sasl-init; an unknown mechanism gets sasl-outcome sys-perm (2), a
// malformed PLAIN response or refused credentials auth (1), and either
// closes the connection after the outcome; success is ok (0). The subject
// is kept for Open, which connects it without authenticating again.
// DEVIATION: ActiveMQ 5.17's AmqpAuthenticator.tryAuthenticate drops the
// SecurityContext it gets and addConnection authenticates the
// ConnectionInfo again at Open, so its login modules run twice per AMQP
// login (and a reload in between can answer differently); Wharf's
// Authenticator runs once.
func (c *conn) onSASL(p wire.Performative) {
	init, ok := p.(*wire.SASLInit)
	if !ok {
		c.log.Warn("unexpected SASL frame", "frame", fmt.Sprintf("%T", p))
		c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLSysPerm})
		c.shut()
		return
	}
	cr := c.baseCredentials()
	switch init.Mechanism {
	case "PLAIN":
		// authzid NUL authcid NUL passwd (RFC 4616). Like ActiveMQ's
		// PlainMechanism, "authcid NUL passwd" is taken too, and an empty
		// response is an anonymous login.
		if len(init.InitialResponse) > 0 {
			parts := bytes.Split(init.InitialResponse, []byte{0})
			switch len(parts) {
			case 2:
				cr.Username, cr.Password = string(parts[0]), string(parts[1])
			case 3:
				cr.Username, cr.Password = string(parts[1]), string(parts[2])
			default:
				c.log.Info("SASL PLAIN response malformed", "parts", len(parts))
				c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLAuth})
				c.shut()
				return
			}
		}
	case "ANONYMOUS":
		// No user: accepted only where the authenticator takes an empty
		// user (anonymousAccessAllowed).
	case "EXTERNAL":
		if len(cr.Certs) == 0 {
			c.log.Info("SASL EXTERNAL without a client certificate")
			c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLAuth})
			c.shut()
			return
		}
		// The certificate is the credential; the authenticator maps its
		// subject to a user (TextFileCertificateLoginModule).
	default:
		c.log.Info("SASL mechanism not offered", "mechanism", string(init.Mechanism))
		c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLSysPerm})
		c.shut()
		return
	}
	subj, err := c.srv.e.Authenticate(cr)
	if err != nil {
		c.log.Info("authentication failed", "mechanism", string(init.Mechanism), "user", cr.Username, "err", err)
		c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLAuth})
		c.shut()
		return
	}
	c.creds, c.subj = cr, subj
	c.writeFrame(0, &wire.SASLOutcome{Code: wire.SASLOK})
	c.phase = phaseAMQPHeader
	c.dec.SetExpectHeader()
}

// brokerOpen is the broker's Open (AmqpConnection's): its capabilities and
// the address prefixes Qpid JMS reads.
func (c *conn) brokerOpen() *wire.Open {
	o := wire.NewOpen(c.srv.opts.BrokerName)
	o.MaxFrameSize = c.srv.opts.Limits.MaxFrameSize
	if o.MaxFrameSize == 0 {
		o.MaxFrameSize = wire.DefaultLimits().MaxFrameSize
	}
	o.ChannelMax = math.MaxUint16
	o.IdleTimeOut = c.srv.opts.IdleTimeout
	o.OfferedCapabilities = []wire.Symbol{"ANONYMOUS-RELAY", "DELAYED_DELIVERY"}
	o.Properties = &wire.Map{}
	o.Properties.Set(wire.Symbol("queue-prefix"), "queue://")
	o.Properties.Set(wire.Symbol("topic-prefix"), "topic://")
	o.Properties.Set(wire.Symbol("product"), "Wharf")
	o.Properties.Set(wire.Symbol("version"), version.Broker)
	return o
}

func (c *conn) onOpen(o *wire.Open) {
	cr := c.creds
	cr.ClientID = o.ContainerID
	var ec *engine.Conn
	var err error
	if c.subj != nil {
		ec, err = c.srv.e.ConnectAuthenticated(c.subj, cr)
	} else {
		// No SASL layer (allowNonSaslConnections): Open is the login.
		ec, err = c.srv.e.Connect(cr)
	}
	if err != nil {
		cond := wire.ErrCondInternalError
		switch {
		case errors.Is(err, engine.ErrClientIDInUse):
			// ActiveMQ: InvalidClientIDException ⇒ invalid-field on
			// container-id.
			open := c.brokerOpen()
			open.Properties.Set(wire.Symbol("amqp:connection-establishment-failed"), true)
			c.writeFrame(0, open)
			info := &wire.Map{}
			info.Set(wire.Symbol("invalid-field"), wire.Symbol("container-id"))
			c.writeFrame(0, &wire.Close{Error: &wire.Error{Condition: wire.ErrCondInvalidField, Description: engine.ClientText(err), Info: info}})
			c.shut()
			return
		case errors.Is(err, engine.ErrBadCredentials), errors.Is(err, engine.ErrNotAuthorized):
			cond = wire.ErrCondUnauthorizedAccess
		}
		c.closeWith(cond, engine.ClientText(err))
		return
	}
	c.ec = ec
	ec.SetCloser(func() { // an operator's close (web console)
		c.mu.Lock()
		c.closeWith(wire.ErrCondConnectionForced, "closed by the broker's operator")
		c.mu.Unlock()
	})
	c.log = c.log.With("client_id", o.ContainerID)
	c.outMu.Lock()
	c.maxFrame = max(o.MaxFrameSize, wire.MinMaxFrameSize)
	c.remoteIdle = o.IdleTimeOut
	c.outMu.Unlock()
	c.writeFrame(0, c.brokerOpen())
	c.phase = phaseOpened
	c.startIdle(o.IdleTimeOut)
}

// startIdle arms the read check (the client must send something within
// our idle-time-out) and the heartbeats (an empty frame at half the
// client's) (AMQP 1.0 §2.4.5).
func (c *conn) startIdle(remote time.Duration) {
	if local := c.srv.opts.IdleTimeout; local > 0 {
		c.live.ReadCheck(local, nil, func() {
			c.log.Info("idle timeout, closing", "idle_timeout", local.String())
			c.mu.Lock()
			c.closeWith(wire.ErrCondResourceLimitExceeded, "local-idle-timeout expired")
			c.mu.Unlock()
		})
	}
	if remote > 0 {
		c.live.Heartbeat(remote/2, func() { c.writeRaw(emptyFrame) })
	}
}

// emptyFrame is an AMQP heartbeat: size 8, doff 2, type 0, channel 0.
var emptyFrame = []byte{0, 0, 0, 8, 2, 0, 0, 0}

// onFrame handles a frame after Open.
func (c *conn) onFrame(f *wire.Frame) {
	switch p := f.Body.(type) {
	case *wire.Close:
		if p.Error != nil {
			c.log.Info("client closed with an error", "condition", string(p.Error.Condition), "err", p.Error.Description)
		}
		c.release()
		c.writeFrame(0, &wire.Close{})
		c.shut()
	case *wire.Begin:
		c.onBegin(f.Channel, p)
	case *wire.Open:
		c.closeWith(wire.ErrCondIllegalState, "second Open")
	default:
		s := c.sessions[f.Channel]
		if s == nil {
			c.closeWith(wire.ErrCondIllegalState, fmt.Sprintf("%T on channel %d, which has no session", p, f.Channel))
			return
		}
		s.onFrame(f)
	}
}

func (c *conn) onBegin(ch uint16, b *wire.Begin) {
	if _, dup := c.sessions[ch]; dup || b.RemoteChannel != nil {
		c.closeWith(wire.ErrCondIllegalState, fmt.Sprintf("Begin on channel %d, which is in use", ch))
		return
	}
	s := newSession(c, ch, b)
	c.sessions[ch] = s
	rc := ch
	c.writeFrame(ch, &wire.Begin{
		RemoteChannel:  &rc,
		NextOutgoingID: 1,
		IncomingWindow: incomingWindow,
		OutgoingWindow: math.MaxUint32,
		HandleMax:      math.MaxUint32,
	})
}

// nextTxID returns a fresh transaction id: AMQP's txn-id is ActiveMQ's
// LocalTransactionId value as 8 bytes big-endian.
func (c *conn) nextTxID() []byte {
	c.txSeq++
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = byte(c.txSeq >> (8 * (7 - i)))
	}
	return b[:]
}

// acceptRange is a run of consecutive delivery ids of one session whose
// transfers were accepted and not yet told; n is 0 when there is none.
type acceptRange struct {
	s           *session
	first, last uint32
	n           int
}

// stateAccepted is the Accepted outcome (no fields), shared by every
// acceptance disposition.
var stateAccepted = &wire.Accepted{}

// accept tells the client that its transfer id on s is accepted (stored;
// AMQP 1.0 §3.4.2), settled. The first acceptance is written at once, so
// that a client waiting for it (a synchronous send) waits no longer than
// before; the ones the engine completes until the write queue carrying it
// has been handed to the socket are held, and go out as one disposition
// over their range (§2.7.6 first/last) when it has, or before any other
// frame written meanwhile: a burst of N completions costs the client one
// frame instead of N. Called from a shard goroutine, without outMu.
//
// DEVIATION: ActiveMQ (Proton-J) writes one disposition per transfer;
// Wharf's ranges carry the same outcomes, and every AMQP 1.0 client reads
// them (go-amqp, Qpid JMS and Proton settle each id of the range).
func (c *conn) accept(s *session, id uint32) {
	c.outMu.Lock()
	if s.ended {
		c.outMu.Unlock()
		return
	}
	if c.acceptArmed {
		a := &c.accepted
		if a.n > 0 && a.s == s && a.last+1 == id {
			a.last, a.n = id, a.n+1
		} else {
			c.flushAcceptedLocked()
			c.accepted = acceptRange{s: s, first: id, last: id, n: 1}
		}
		c.outMu.Unlock()
		return
	}
	c.writeAcceptedLocked(s, id, id)
	c.acceptArmed = true
	c.outMu.Unlock()
	// The empty write rides on the flush that sends this disposition; its
	// callback (once those bytes have left for the kernel) sends what was
	// held meanwhile. Outside outMu: a transport may call it at once.
	if err := c.tc.WriteNotify(nil, c.acceptFlushed); err != nil {
		c.onAcceptFlushed(err)
	}
}

// onAcceptFlushed sends the acceptances held since the last one written
// (event loop goroutine). After a failed write the connection is closing
// and nothing needs telling.
func (c *conn) onAcceptFlushed(err error) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	c.acceptArmed = false
	if err != nil {
		c.accepted = acceptRange{}
		return
	}
	c.flushAcceptedLocked()
}

// flushAcceptedLocked writes the held acceptance range, if any: before
// every other frame, so that frames keep the order in which they were
// decided. Called with outMu held.
func (c *conn) flushAcceptedLocked() {
	a := c.accepted
	if a.n == 0 {
		return
	}
	c.accepted = acceptRange{}
	if a.s.ended {
		return
	}
	c.writeAcceptedLocked(a.s, a.first, a.last)
}

// writeAcceptedLocked writes a settled Accepted disposition for the
// client's deliveries first..last on s. Called with outMu held.
func (c *conn) writeAcceptedLocked(s *session, first, last uint32) {
	d := &c.dispFrame
	*d = wire.Disposition{Role: wire.RoleReceiver, First: first, Settled: true, State: stateAccepted}
	if last != first {
		l := last
		d.Last = &l
	}
	c.out = wire.AppendFrame(c.out[:0], s.ch, d, nil)
	c.writeRaw(c.out)
	*d = wire.Disposition{}
}
