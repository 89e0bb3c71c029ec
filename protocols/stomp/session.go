package stomp

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/internal/version"
	"wharf/protocols/internal/connlog"
	"wharf/protocols/internal/inactivity"
	"wharf/protocols/internal/sendflow"
	"wharf/protocols/stomp/wire"
	"wharf/protocols/transport"
)

// supportedVersions are offered in this order of preference (highest wins,
// as StompCodec.detectVersion takes the maximum of the common versions).
var supportedVersions = []string{wire.V12, wire.V11, wire.V10}

type session struct {
	srv *Server
	tc  transport.Conn
	log *slog.Logger
	// dec is the decoder while a read is handled or a frame is partly
	// read; between frames it goes back to decoders and is nil (issue 18:
	// an idle connection holds none). Transport goroutine only.
	dec *wire.Decoder

	// Touched only by the transport goroutine (OnData, OnClose). The
	// maps here and under mu are nil until their first entry.
	version string
	conn    *engine.Conn
	subs    map[string]*subscription // by SUBSCRIBE id ("" for 1.0 without id)
	subList []*subscription          // in creation order, for 1.0 ACK lookups
	subSeq  uint64
	txs     map[string]bool
	dead    bool

	// mu guards what deliveries and completions (shard goroutines) share
	// with frame handling: the temporary destinations' names and the
	// receipts awaiting a store write.
	mu        sync.Mutex
	tempByKey map[string]message.Destination // "/temp-queue/x" -> destination
	tempName  map[message.Destination]string // the other way
	receipts  map[uint64]string
	tokenSeq  uint64
	// acksOut counts the ACKs and NACKs with a receipt whose RECEIPT waits
	// for the store (ackDone); DISCONNECT waits for them.
	acksOut  sync.WaitGroup
	bySubNum map[uint64]*subscription

	// flow stops reading past maxOutstandingSends sends the engine has not
	// completed (flow control).
	flow sendflow.Gate
	live inactivity.Monitor // heart-beats and the connect timeout
}

func newSession(srv *Server, tc transport.Conn) *session {
	s := &session{
		srv:     srv,
		tc:      tc,
		log:     connlog.New(srv.log, tc.ID(), tc.RemoteAddr(), "stomp"),
		version: wire.V10,
		// The maps are made on first use (issue 18: an idle connection
		// holds none); reading or deleting from a nil map is safe.
	}
	s.flow = sendflow.Gate{Limit: maxOutstandingSends, Conn: tc, Log: s.log}
	s.live.ConnectDeadline(srv.opts.ConnectTimeout, tc, s.log, func() { srv.e.CountHandshakeTimeout("stomp") })
	return s
}

// OnData decodes frames and handles them in order.
func (s *session) OnData(b []byte) error {
	s.live.Read()
	if s.dead {
		return nil
	}
	handshake := !s.live.Connected()
	if s.dec == nil {
		s.dec = decoders.Get().(*wire.Decoder)
		s.dec.Resume(s.srv.opts.Limits, s.version)
	}
	buf := frameBufs.Get().(*[]wire.Frame)
	frames, _, err := s.dec.Feed(b, (*buf)[:0])
	for {
		for i := range frames {
			if s.dead {
				break
			}
			s.handle(&frames[i])
			frames[i] = wire.Frame{}
		}
		// The decoder stops after CONNECT so that what follows is decoded
		// under the negotiated version; feed it the rest now.
		if err != nil || s.dead || len(frames) == 0 || s.dec.Buffered() == 0 {
			break
		}
		frames, _, err = s.dec.Feed(nil, frames[:0])
	}
	clear(frames) // what the frames pointed to is not kept by the pool
	*buf = frames[:0]
	frameBufs.Put(buf)
	if handshake && s.live.Connected() {
		// The CONNECT frame grew the decoder's buffers; an idle
		// connection keeps none (issue 18: a few KiB per connection).
		s.dec.Trim()
	}
	if err != nil && !s.dead {
		// A frame that cannot be parsed is fatal (ActiveMQ StompFrameError).
		s.sendError(nil, fatal(wireErrorText(err)))
	}
	if s.dec.Idle() && !s.dead {
		decoders.Put(s.dec)
		s.dec = nil
	}
	return nil
}

// decoders holds the decoders of connections between frames.
var decoders = sync.Pool{New: func() any { return new(wire.Decoder) }}

// OnClose releases everything the connection held in the engine.
func (s *session) OnClose(err error) {
	s.live.Close()
	if s.conn != nil {
		if cerr := s.conn.Close(); cerr != nil {
			s.log.Warn("connection cleanup failed", "err", cerr)
		}
	}
	if err != nil {
		s.log.Debug("connection closed", "err", err)
	}
}

// addReceiptLocked records the receipt r of the frame whose completion
// carries token. Called with s.mu held.
func (s *session) addReceiptLocked(token uint64, r string) {
	if s.receipts == nil {
		s.receipts = map[uint64]string{}
	}
	s.receipts[token] = r
}

func (s *session) write(b []byte) {
	s.live.Wrote()
	if err := s.tc.Write(b); err != nil {
		s.log.Debug("write failed", "err", err)
	}
}

func (s *session) writeFrame(f *wire.Frame) {
	buf := outBufs.Get().(*[]byte)
	*buf = wire.AppendFrame((*buf)[:0], f, s.version)
	s.write(*buf) // Write copies what it queues
	if cap(*buf) <= 64<<10 {
		outBufs.Put(buf)
	}
}

// frameBufs and outBufs hold the slices OnData decodes frames into and
// writeFrame encodes into: kept per connection, they would cost every
// idle connection their size (issue 18's budget for an idle connection).
var (
	frameBufs = sync.Pool{New: func() any { return new([]wire.Frame) }}
	outBufs   = sync.Pool{New: func() any { return new([]byte) }}
)

// sendError writes an ERROR frame for a failed frame (nil when none), and
// closes the connection if the error is fatal.
func (s *session) sendError(f *wire.Frame, e *protocolError) {
	if ok, held := s.srv.rejected.Allow(time.Now()); ok {
		s.log.Warn("frame rejected", "frame", commandOf(f), "err", e.msg, "fatal", e.fatal, "suppressed", held)
	}
	ef := wire.Frame{Command: wire.CmdError, Headers: []wire.Header{
		{Name: "message", Value: e.msg},
		{Name: "content-type", Value: "text/plain"},
	}}
	if f != nil {
		if r, ok := f.Get("receipt"); ok {
			ef.Headers = append(ef.Headers, wire.Header{Name: "receipt-id", Value: r})
		}
	}
	ef.Body = []byte(e.msg)
	// The message header cannot carry an EOL in 1.0; the body has the text.
	if s.version == wire.V10 {
		ef.Headers[0].Value = strings.ReplaceAll(e.msg, "\n", " ")
	}
	s.writeFrame(&ef)
	if e.fatal {
		s.dead = true
		s.tc.Close()
	}
}

func commandOf(f *wire.Frame) string {
	if f == nil {
		return "(unparsable)"
	}
	if len(f.Command) > 32 {
		return f.Command[:32]
	}
	return f.Command
}

func (s *session) receipt(f *wire.Frame) {
	if r, ok := f.Get("receipt"); ok {
		s.writeFrame(&wire.Frame{Command: wire.CmdReceipt, Headers: []wire.Header{{Name: "receipt-id", Value: r}}})
	}
}

// handle dispatches one frame. Commands match by prefix, in
// ProtocolConverter.onStompCommand's order.
func (s *session) handle(f *wire.Frame) {
	var err *protocolError
	cmd := f.Command
	switch {
	case strings.HasPrefix(cmd, "SEND"):
		err = s.onSend(f)
	case strings.HasPrefix(cmd, "ACK"):
		err = s.onAck(f, false)
	case strings.HasPrefix(cmd, "NACK"):
		err = s.onAck(f, true)
	case strings.HasPrefix(cmd, "BEGIN"):
		err = s.onTx(f, "BEGIN")
	case strings.HasPrefix(cmd, "COMMIT"):
		err = s.onTx(f, "COMMIT")
	case strings.HasPrefix(cmd, "ABORT"):
		err = s.onTx(f, "ABORT")
	case strings.HasPrefix(cmd, "SUB"):
		err = s.onSubscribe(f)
	case strings.HasPrefix(cmd, "UNSUB"):
		err = s.onUnsubscribe(f)
	case strings.HasPrefix(cmd, "CONNECT"), strings.HasPrefix(cmd, "STOMP"):
		err = s.onConnect(f)
	case strings.HasPrefix(cmd, "DISCONNECT"):
		err = s.onDisconnect(f)
	default:
		err = fatal("Unknown STOMP action: " + commandOf(f))
	}
	if err != nil {
		s.sendError(f, err)
	}
}

func (s *session) checkConnected() *protocolError {
	if s.conn == nil {
		return perr("Not connected.")
	}
	return nil
}

// wireErrorText is the ERROR message for a frame the decoder refused: the
// text ActiveMQ's StompWireFormat and StompCodec give for the same fault,
// which scripts match on. The faults ActiveMQ does not refuse (a header
// line without a colon, an undefined escape: DEVIATION in wire) keep the
// decoder's own text.
func wireErrorText(err error) string {
	switch {
	case errors.Is(err, wire.ErrCommandTooLong):
		return "The maximum command length was exceeded"
	case errors.Is(err, wire.ErrHeaderTooLong):
		return "The maximum header length was exceeded"
	case errors.Is(err, wire.ErrTooManyHeaders):
		return "The maximum number of headers was exceeded"
	case errors.Is(err, wire.ErrBodyTooLarge):
		return "The maximum data length was exceeded"
	case errors.Is(err, wire.ErrFrameTooLarge):
		return "The maximum frame size was exceeded"
	case errors.Is(err, wire.ErrBadContentLength):
		return "Specified content-length is not a valid integer"
	case errors.Is(err, wire.ErrMissingNUL):
		return "content-length bytes were read and there was no trailing null byte"
	}
	return err.Error()
}

// engineError turns an engine error into the ERROR frame ActiveMQ sends for
// the matching JMS exception: its message header is the exception's
// message (ProtocolConverter.handleException), which engine.ClientText
// gives in ActiveMQ's words; for a SecurityException the body is that
// message too. A frame with a receipt gets the ERROR with its receipt-id
// (createResponseHandler); one without gets it too, with no receipt-id:
// the broker reports a failed command that asked for no response with a
// ConnectionError (TransportConnection.service -> serviceException), which
// ProtocolConverter.onActiveMQCommand turns into the same ERROR. Either
// way the connection stays open (observed on ActiveMQ 5.17.2 for a
// refused SEND and SUBSCRIBE: conformance/security-reference.md).
func engineError(err error) *protocolError {
	if errors.Is(err, engine.ErrNotAuthorized) || errors.Is(err, engine.ErrBadCredentials) {
		return &protocolError{msg: engine.ClientText(err), security: true}
	}
	return perr(engine.ClientText(err))
}

func parseHeartBeat(v string) (cx, cy int64, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), ",")
	if !ok {
		return 0, 0, fmt.Errorf("Invalid heart-beat header:%s", v)
	}
	cx, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	cy, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
	if err1 != nil || err2 != nil || cx < 0 || cy < 0 {
		return 0, 0, fmt.Errorf("Invalid heart-beat header:%s", v)
	}
	return cx, cy, nil
}

func (s *session) onConnect(f *wire.Frame) *protocolError {
	if s.conn != nil {
		return perr("Already connected.")
	}
	accepts, ok := f.Get("accept-version")
	if !ok {
		accepts = wire.V10
	}
	version := ""
	for _, v := range supportedVersions {
		for _, a := range strings.Split(strings.TrimSpace(accepts), ",") {
			if a == v {
				version = v
				break
			}
		}
		if version != "" {
			break
		}
	}
	if version == "" {
		return fatal("Invalid Protocol version[" + accepts + "], supported versions are: [1.0, 1.1, 1.2]")
	}
	hb, ok := f.Get("heart-beat")
	if !ok {
		hb = s.srv.opts.DefaultHeartBeat
	}
	cx, cy, err := parseHeartBeat(hb)
	if err != nil {
		return fatal(err.Error())
	}
	login, _ := f.Get("login")
	passcode, _ := f.Get("passcode")
	clientID, _ := f.Get("client-id")
	certs, isTLS := transport.PeerCertificates(s.tc)
	conn, err := s.srv.e.Connect(engine.Credentials{
		Username: login, Password: passcode, ClientID: clientID,
		Certs: certs, TLS: isTLS,
		Remote: s.tc.RemoteAddr(), Protocol: "stomp",
	})
	if err != nil {
		// A failed login closes the connection after the ERROR frame
		// (onStompConnect's response handler: handleException, then
		// onException), "User name [x] or password is invalid." in both
		// the message header and the body.
		pe := engineError(err)
		pe.fatal = true
		return pe
	}
	s.conn = conn
	conn.SetCloser(func() { s.tc.Close() }) // an operator's close (web console)
	s.version = version
	s.dec.SetVersion(version)
	s.live.SetConnected()
	session := clientID
	if session == "" {
		// ActiveMQ uses the connection id as the client id when none is given.
		session = conn.ID()
	}
	h := []wire.Header{
		{Name: "session", Value: session},
		{Name: "version", Value: version},
		{Name: "heart-beat", Value: strconv.FormatInt(cy, 10) + "," + strconv.FormatInt(cx, 10)},
		{Name: "server", Value: serverHeader},
	}
	rid, ok := f.Get("request-id")
	if !ok {
		rid, ok = f.Get("receipt")
	}
	if ok {
		h = append(h, wire.Header{Name: "response-id", Value: rid}, wire.Header{Name: "receipt-id", Value: rid})
	}
	s.writeFrame(&wire.Frame{Command: wire.CmdConnected, Headers: h})
	s.startHeartBeats(cx, cy)
	return nil
}

// serverHeader is the server header of CONNECTED (STOMP 1.2 "CONNECTED
// Frame": name/version).
const serverHeader = "Wharf/" + version.Broker

// startHeartBeats arms the read check (the client promised to send every cx
// ms) and the write ticker (the client wants to hear from us every cy ms).
func (s *session) startHeartBeats(cx, cy int64) {
	if cx > 0 {
		period := time.Duration(float64(cx)*s.srv.opts.HeartBeatGrace) * time.Millisecond
		s.live.ReadCheck(period, s.flow.Paused, func() {
			s.log.Info("heart-beat missed, closing", "interval_ms", cx)
			s.tc.Close()
		})
	}
	if cy > 0 {
		s.live.Heartbeat(time.Duration(cy)*time.Millisecond, func() { s.tc.Write(heartBeat) })
	}
}

var heartBeat = []byte{'\n'}

func (s *session) onDisconnect(f *wire.Frame) *protocolError {
	// Release the connection's subscriptions, transactions and temporary
	// destinations before the receipt, as ActiveMQ answers only after
	// removing the connection: a client that has the receipt must not still
	// own a consumer that the broker can hand a message (with ack:auto, a
	// message dispatched there would be gone). OnClose's Close is then a
	// no-op.
	if s.conn != nil {
		if err := s.conn.Close(); err != nil {
			s.log.Warn("connection cleanup failed", "err", err)
		}
	}
	// The RECEIPTs of earlier ACKs go out before this one, as the client
	// that has the DISCONNECT's receipt expects everything before it done.
	s.acksOut.Wait()
	s.receipt(f)
	s.dead = true
	s.tc.Close()
	return nil
}
