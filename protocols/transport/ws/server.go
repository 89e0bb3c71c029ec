package ws

import (
	"bufio"
	"cmp"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"wharf/protocols/internal/logthrottle"
	"wharf/protocols/transport"
	"wharf/protocols/transport/internal/streamconn"
	"wharf/protocols/transport/ws/wire"
)

// handshakeTimeout bounds writing the 101 response to a new connection.
const handshakeTimeout = 10 * time.Second

// Server upgrades HTTP requests to WebSocket connections and serves each
// with the protocol session its subprotocol names. It is an http.Handler,
// so it can be mounted on a path of another HTTP server (/stomp, /mqtt);
// Listen runs one on its own port. Close ends every connection it
// upgraded: http.Server.Shutdown does not, upgraded connections being
// hijacked.
type Server struct {
	protos    map[string]transport.HandlerFactory
	fallback  string // key of protos for clients offering no subprotocol, or ""
	types     map[string]wire.Opcode
	supported string // the served names, for the 400 answer
	origin    func(*http.Request) bool

	maxOutbound int // bytes
	maxConns    int
	limits      wire.Limits
	log         *slog.Logger

	connLimit    logthrottle.Throttle // rate-limits "connection limit reached"
	outboundFull logthrottle.Throttle // rate-limits "outbound limit exceeded"
	conn         streamconn.Config    // what every connection shares

	mu      sync.Mutex
	open    int // connections counted against MaxConnections: upgrading or upgraded
	conns   map[*conn]struct{}
	closing bool
	wg      sync.WaitGroup // one per registered connection, until its OnClose has run
}

// NewServer returns a server for protos, a map from subprotocol name
// (Sec-WebSocket-Protocol) to the protocol that serves it.
func NewServer(protos map[string]transport.HandlerFactory, o Options) (*Server, error) {
	if len(protos) == 0 {
		return nil, fmt.Errorf("ws: no subprotocol to serve: %w", transport.ErrInvalidOptions)
	}
	for name, f := range protos {
		if f == nil || name == "" || strings.ContainsAny(name, ", \t") {
			return nil, fmt.Errorf("ws: subprotocol %q: nil factory or not a token: %w", name, transport.ErrInvalidOptions)
		}
	}
	if o.MaxOutboundBytes < 0 || o.MaxConnections < 0 || o.MaxTextMessageBytes < -1 || o.MaxBinaryMessageBytes < -1 {
		return nil, fmt.Errorf("ws: negative limit (max_outbound_bytes %d, max_connections %d, max_text_message_bytes %d, max_binary_message_bytes %d): %w",
			o.MaxOutboundBytes, o.MaxConnections, o.MaxTextMessageBytes, o.MaxBinaryMessageBytes, transport.ErrInvalidOptions)
	}
	if o.MaxOutboundBytes == 0 {
		o.MaxOutboundBytes = transport.DefaultMaxOutboundBytes
	}
	messageLimit := func(n int) int64 {
		switch n {
		case 0:
			return DefaultMaxMessageBytes
		case -1:
			return 0 // the decoder's "no limit"
		}
		return int64(n)
	}
	fallback := o.DefaultSubprotocol
	if fallback == "" {
		// ActiveMQ's connector takes a client offering no subprotocol for a
		// STOMP client (WSServlet: "When no sub-protocol is requested we
		// default to STOMP for legacy reasons").
		fallback = "stomp"
		if protos[fallback] == nil {
			fallback = ""
		}
	} else if protos[fallback] == nil {
		return nil, fmt.Errorf("ws: default subprotocol %q is not served: %w", fallback, transport.ErrInvalidOptions)
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{
		protos:       make(map[string]transport.HandlerFactory, len(protos)),
		fallback:     fallback,
		types:        map[string]wire.Opcode{},
		origin:       o.CheckOrigin,
		maxOutbound:  o.MaxOutboundBytes,
		maxConns:     o.MaxConnections,
		limits:       wire.Limits{MaxTextMessageBytes: messageLimit(o.MaxTextMessageBytes), MaxBinaryMessageBytes: messageLimit(o.MaxBinaryMessageBytes)},
		log:          logger,
		connLimit:    logthrottle.Throttle{Every: 10 * time.Second},
		outboundFull: logthrottle.Throttle{Every: time.Second},
		conns:        map[*conn]struct{}{},
	}
	s.conn = streamconn.Config{
		Log:          logger,
		MaxOutbound:  o.MaxOutboundBytes,
		OutboundFull: &s.outboundFull,
		ReadBufBytes: readBufBytes,
		DrainTimeout: drainTimeout,
		CloseWait:    closeWaitTimeout,
		Errors:       streamErrors,
	}
	names := make([]string, 0, len(protos))
	for name, f := range protos {
		s.protos[name] = f
		names = append(names, name)
		op := wire.OpBinary
		switch o.MessageTypes[name] {
		case Text:
			op = wire.OpText
		case Binary:
		default:
			if strings.Contains(name, "stomp") {
				op = wire.OpText
			}
		}
		s.types[name] = op
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(preference(a)-preference(b), strings.Compare(a, b)) })
	s.supported = strings.Join(names, ", ")
	return s, nil
}

// preference ranks a subprotocol name within its protocol: lower is
// preferred. Names ActiveMQ knows keep its order; others rank after them.
func preference(name string) int {
	if i := slices.Index(STOMPSubprotocols, name); i >= 0 {
		return i
	}
	if i := slices.Index(MQTTSubprotocols, name); i >= 0 {
		return i
	}
	return len(STOMPSubprotocols) + len(MQTTSubprotocols)
}

// family groups the subprotocol names of one protocol, as ActiveMQ's
// WSServlet does: names starting "mqtt" are MQTT, names containing "stomp"
// are STOMP.
func family(name string) string {
	switch {
	case strings.HasPrefix(name, "mqtt"):
		return "mqtt"
	case strings.Contains(name, "stomp"):
		return "stomp"
	}
	return name
}

// negotiate picks the subprotocol for the offered names (in the client's
// order) [RFC 6455 §4.2.2 item 5.5]: the protocol is that of the first
// offered name we serve, and among the offered names of that protocol the
// server's preference wins, as ActiveMQ's getAcceptedSubProtocol picks by
// priority. It returns the key of protos, whether to echo it in
// Sec-WebSocket-Protocol, and false when nothing offered is served.
func (s *Server) negotiate(offered []string) (name string, echo, ok bool) {
	if len(offered) == 0 {
		// No Sec-WebSocket-Protocol header: the server must not send one
		// back [RFC 6455 §4.1, client step 6].
		return s.fallback, false, s.fallback != ""
	}
	fam := ""
	for _, o := range offered {
		if s.protos[o] != nil {
			fam = family(o)
			break
		}
	}
	if fam == "" {
		// DEVIATION: ActiveMQ accepts a client whose subprotocols it does
		// not know as a STOMP client and answers "stomp", which the client
		// never offered, so browsers fail the handshake anyway. Wharf says
		// 400 and names what it serves.
		return "", false, false
	}
	best := ""
	for _, o := range offered {
		if s.protos[o] != nil && family(o) == fam && (best == "" || preference(o) < preference(best)) {
			best = o
		}
	}
	return best, true, true
}

// offeredSubprotocols lists the Sec-WebSocket-Protocol tokens in order,
// across repeated headers and comma lists [RFC 6455 §11.3.4].
func offeredSubprotocols(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Sec-WebSocket-Protocol") {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// hasToken reports whether a comma-separated header contains token,
// compared case-insensitively (Connection: keep-alive, Upgrade).
func hasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// ServeHTTP answers a WebSocket opening handshake [RFC 6455 §4.2] and, on
// success, serves the connection on this goroutine until it ends. Any
// other request gets the HTTP error the handshake rules name.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !hasToken(r.Header, "Connection", "upgrade") || !hasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Upgrade", "websocket") // [RFC 7231 §6.5.15] 426 names the protocol
		http.Error(w, "this is a WebSocket endpoint: send a WebSocket upgrade request", http.StatusUpgradeRequired)
		return
	}
	if r.Method != http.MethodGet || !r.ProtoAtLeast(1, 1) {
		// [RFC 6455 §4.1 item 2] "The method of the request MUST be GET, and
		// the HTTP version MUST be at least 1.1."
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "a WebSocket upgrade is an HTTP/1.1 GET", http.StatusMethodNotAllowed)
		return
	}
	if r.Header.Get("Sec-WebSocket-Version") != "13" {
		// [RFC 6455 §4.4] answer with the versions we speak.
		w.Header().Set("Sec-WebSocket-Version", "13")
		http.Error(w, "unsupported WebSocket version: only 13 is served", http.StatusUpgradeRequired)
		return
	}
	keys := r.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 || !wire.ValidKey(strings.TrimSpace(keys[0])) {
		http.Error(w, "missing or invalid Sec-WebSocket-Key", http.StatusBadRequest)
		return
	}
	if s.origin != nil && !s.origin(r) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
		return
	}
	offered := offeredSubprotocols(r.Header)
	proto, echo, ok := s.negotiate(offered)
	if !ok {
		msg := fmt.Sprintf("no supported WebSocket subprotocol offered (offered: %s); supported: %s", strings.Join(offered, ", "), s.supported)
		if len(offered) == 0 {
			msg = "a WebSocket subprotocol is required; supported: " + s.supported
		}
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	if !s.reserve(r) {
		http.Error(w, "connection limit reached or server closing", http.StatusServiceUnavailable)
		return
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// HTTP/2 (RFC 8441 WebSockets) and test recorders cannot be hijacked.
		s.unreserve()
		http.Error(w, "WebSocket needs an HTTP/1.1 connection", http.StatusHTTPVersionNotSupported)
		return
	}
	s.serve(nc, brw.Reader, strings.TrimSpace(keys[0]), proto, echo)
}

// reserve counts a connection against MaxConnections, or refuses it.
func (s *Server) reserve(r *http.Request) bool {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return false
	}
	if s.maxConns > 0 && s.open >= s.maxConns {
		used := s.open
		s.mu.Unlock()
		if ok, suppressed := s.connLimit.Allow(time.Now()); ok {
			s.log.Warn("connection limit reached, connection refused",
				"remote", r.RemoteAddr, "limit", s.maxConns, "used", used, "suppressed", suppressed)
		}
		return false
	}
	s.open++
	s.mu.Unlock()
	return true
}

func (s *Server) unreserve() {
	s.mu.Lock()
	s.open--
	s.mu.Unlock()
}

// serve completes the handshake on a hijacked connection and runs it.
func (s *Server) serve(nc net.Conn, br *bufio.Reader, key, proto string, echo bool) {
	// The server may have set deadlines for the request; the connection is
	// ours now (net/http Hijacker).
	_ = nc.SetDeadline(time.Time{})
	resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		wire.AcceptKey(key) + "\r\n"
	if echo {
		resp += "Sec-WebSocket-Protocol: " + proto + "\r\n"
	}
	resp += "\r\n"
	_ = nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	_, err := nc.Write([]byte(resp))
	_ = nc.SetWriteDeadline(time.Time{})
	if err != nil {
		_ = nc.Close()
		s.unreserve()
		return
	}
	c := newConn(s, nc, br, proto)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		_ = nc.Close()
		s.unreserve()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	if sc := slotOf(nc); sc != nil {
		// On a wss port the socket's slot is given back when remove has
		// run, after OnClose, not when the socket closes just before it.
		sc.hold(true)
	}
	c.run(s.protos[proto])
}

// remove forgets a connection once its OnClose has run.
func (s *Server) remove(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.open--
	s.mu.Unlock()
	if sc := slotOf(c.nc); sc != nil {
		sc.hold(false)
	}
	s.wg.Done()
}

// Conns is the number of WebSocket connections open (upgrading or
// upgraded, not yet closed). Safe from any goroutine.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// Close refuses further upgrades (503), cuts every connection (each Handler
// gets OnClose with transport.ErrListenerClosed; bytes still queued are
// dropped) and returns when every OnClose has run. Safe from any goroutine;
// later calls wait likewise. It must not be called from a Handler method,
// which it would wait for.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closing = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Cut(transport.ErrListenerClosed)
	}
	s.wg.Wait()
	return nil
}
