package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
	"wharf/protocols/internal/logthrottle"
	"wharf/protocols/transport/internal/streamconn"
)

// DefaultTLSHandshakeTimeout bounds a TLS handshake when
// Options.TLSHandshakeTimeout is 0. ActiveMQ's ssl:// connector has no
// handshake bound of its own (a Java SSLSocket handshakes on first use,
// bounded only by soTimeout, 0 by default); Wharf picks 10 s, net/http's
// order of magnitude and what the ws listener gives an upgrade request: a
// real client on a slow link handshakes in a few round trips, and a socket
// that sends nothing must not hold a goroutine and a handshake slot for
// long.
const DefaultTLSHandshakeTimeout = 10 * time.Second

// DefaultMaxPendingHandshakes bounds the TLS handshakes under way at once
// on one listener when Options.MaxPendingHandshakes is 0. Each costs a
// goroutine and a few KiB; 256 is far above what legitimate clients
// reconnecting together need, and caps what a handshake flood can pin.
const DefaultMaxPendingHandshakes = 256

const (
	// tlsReadBufBytes is each TLS connection's read buffer, in bytes: the
	// largest plaintext of one TLS record (RFC 8446 §5.1, 2^14), so one
	// Read returns one record, and what a paused connection holds at most.
	tlsReadBufBytes = 16 << 10
	// tlsCloseWait bounds the wait, once our close_notify and FIN are
	// sent, for the peer to close its side; then the socket is closed
	// anyway (the bytes were delivered, so the cause stays what it was).
	tlsCloseWait = 5 * time.Second
)

// tlsListener serves connections over crypto/tls; see doc.go, "TLS".
//
// Goroutines: one accepts (the gate's); each connection has a reader
// (handshake, HandlerFactory, reads, OnData, OnClose) and, while it has
// bytes to send, a writer.
type tlsListener struct {
	gate      *streamconn.Gate // accepts and admits, counts connections, runs their readers
	cfg       *tls.Config
	factory   HandlerFactory
	conn      streamconn.Config // what every connection shares
	hsTimeout time.Duration
	log       *slog.Logger

	outboundFull logthrottle.Throttle // rate-limits "outbound limit exceeded"

	// mu guards the connection set; taken when a connection is accepted
	// or gone and by Close, for a few instructions.
	mu    sync.Mutex
	conns map[*tlsConn]struct{}

	closeOnce sync.Once
	closeErr  error
}

// ListenTLS binds addr (host:port; port 0 picks a free port) and serves
// TLS connections there with crypto/tls and tc (the server certificate,
// ClientAuth and ClientCAs for certificate authentication, versions,
// suites; tc is cloned and not used afterwards). It is the listener of
// ActiveMQ's ssl://, nio+ssl://, stomp+ssl://, stomp+nio+ssl://,
// mqtt+ssl://, mqtt+nio+ssl://, amqp+ssl:// and amqps:// connectors.
//
// Each connection completes its handshake (within
// Options.TLSHandshakeTimeout) before f is called, so a Handler always sees
// an established connection, which implements TLSConn:
// PeerCertificates gives the verified client chain. A failed handshake is
// logged with the remote address and the reason and creates no Handler.
// The Conn contract is that of Listen; see doc.go, "TLS", for how this
// transport runs (goroutines, not gnet event loops) and what differs.
// It returns once the port is bound.
func ListenTLS(addr string, f HandlerFactory, o Options, tc *tls.Config) (Listener, error) {
	if f == nil {
		return nil, fmt.Errorf("listen %s: nil handler factory: %w", addr, ErrInvalidOptions)
	}
	if tc == nil {
		return nil, fmt.Errorf("listen %s: nil tls config: %w", addr, ErrInvalidOptions)
	}
	if len(tc.Certificates) == 0 && tc.GetCertificate == nil && tc.GetConfigForClient == nil {
		return nil, fmt.Errorf("listen %s: tls config has no server certificate (Certificates, GetCertificate or GetConfigForClient): %w", addr, ErrInvalidOptions)
	}
	if o.MaxOutboundBytes < 0 || o.MaxConnections < 0 || o.TLSHandshakeTimeout < 0 || o.MaxPendingHandshakes < 0 {
		return nil, fmt.Errorf("listen %s: negative limit (max_outbound_bytes %d, max_connections %d, tls_handshake_timeout %s, max_pending_handshakes %d): %w",
			addr, o.MaxOutboundBytes, o.MaxConnections, o.TLSHandshakeTimeout, o.MaxPendingHandshakes, ErrInvalidOptions)
	}
	if strings.Contains(addr, "://") {
		return nil, fmt.Errorf("listen %q: want host:port without a scheme: %w", addr, ErrInvalidOptions)
	}
	if o.MaxOutboundBytes == 0 {
		o.MaxOutboundBytes = DefaultMaxOutboundBytes
	}
	if o.TLSHandshakeTimeout == 0 {
		o.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if o.MaxPendingHandshakes == 0 {
		o.MaxPendingHandshakes = DefaultMaxPendingHandshakes
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	// net.Listen sets SO_REUSEADDR on Unix, so a restarted broker binds
	// its port while the last run's connections sit in TIME_WAIT; accepted
	// connections get TCP_NODELAY, as Listen's do.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	l := &tlsListener{
		cfg:       tc.Clone(),
		factory:   f,
		hsTimeout: o.TLSHandshakeTimeout,
		log:       logger,
		conns:     map[*tlsConn]struct{}{},
	}
	l.outboundFull = logthrottle.Throttle{Every: time.Second}
	l.conn = streamconn.Config{
		Log:          logger,
		MaxOutbound:  o.MaxOutboundBytes,
		OutboundFull: &l.outboundFull,
		ReadBufBytes: tlsReadBufBytes,
		DrainTimeout: drainTimeout,
		CloseWait:    tlsCloseWait,
		Errors:       streamErrors,
	}
	l.gate = streamconn.NewGate(streamconn.GateConfig{
		Listener:   ln,
		MaxConns:   o.MaxConnections,
		MaxPending: o.MaxPendingHandshakes,
		HSTimeout:  o.TLSHandshakeTimeout,
		Log:        logger,
		Attrs:      []any{"transport", "tls"},
		Reason:     HandshakeReason,
	})
	l.gate.Start(l.admit)
	logger.Info("listener up", "addr", ln.Addr().String(), "transport", "tls",
		"client_auth", l.cfg.ClientAuth.String(), "limit_outbound_bytes", o.MaxOutboundBytes,
		"limit_connections", o.MaxConnections, "tls_handshake_timeout", l.hsTimeout,
		"limit_pending_handshakes", o.MaxPendingHandshakes)
	return l, nil
}

// streamErrors are the sentinels the shared connection machinery returns
// and ends connections with.
var streamErrors = streamconn.Errors{
	Closed:       ErrClosed,
	OutboundFull: ErrOutboundFull,
	HandlerPanic: ErrHandlerPanic,
	DrainTimeout: ErrDrainTimeout,
}

// Addr implements Listener.
func (l *tlsListener) Addr() net.Addr { return l.gate.Addr() }

// Conns implements Listener: connections handshaking count, as they count
// against MaxConnections.
func (l *tlsListener) Conns() int { return l.gate.Open() }

// Close implements Listener: the port is closed, every connection is cut
// (established ones get OnClose(ErrListenerClosed); bytes still queued are
// dropped; handshaking ones just close), and Close returns when all their
// goroutines have finished. It must not be called from a Handler method.
func (l *tlsListener) Close() error {
	l.closeOnce.Do(func() {
		// Once the gate is closing it admits nothing: every connection is
		// in the set.
		l.closeErr = l.gate.Close()
		l.mu.Lock()
		conns := slices.Collect(maps.Keys(l.conns))
		l.mu.Unlock()
		for _, c := range conns {
			c.Cut(ErrListenerClosed)
		}
		l.gate.Wait()
		l.log.Info("listener closed", "addr", l.gate.Addr().String(), "transport", "tls")
	})
	return l.closeErr
}

// admit registers a socket the gate let in (MaxConnections and the
// pending-handshake bound applied before any TLS byte is read) and returns
// its reader.
func (l *tlsListener) admit(nc net.Conn) func() {
	c := newTLSConn(l, nc)
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return c.serve
}

// remove forgets a connection once it is gone (after OnClose, or after a
// failed handshake).
func (l *tlsListener) remove(c *tlsConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	l.gate.Release()
}

// HandshakeReason names why a server handshake failed, from crypto/tls's
// error, and the level to log it at: Warn for what an operator may have
// to look at (a client not speaking TLS, a certificate refused either
// way, a stalled handshake), Info for a client that just went away.
// timeout is the handshake timeout the listener applied. The WebSocket
// listener (ws, wss://) logs its handshakes with it too.
func HandshakeReason(err error, timeout time.Duration) (string, slog.Level) {
	var rh tls.RecordHeaderError
	var cv *tls.CertificateVerificationError
	var ne net.Error
	var alert tls.AlertError
	switch {
	case errors.As(err, &rh):
		return fmt.Sprintf("client does not speak TLS (plain text on a TLS port?); first bytes %q", rh.RecordHeader[:]), slog.LevelWarn
	case errors.As(err, &cv):
		return "client certificate rejected: " + cv.Err.Error(), slog.LevelWarn
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Sprintf("handshake not completed within %s", timeout), slog.LevelWarn
	case strings.Contains(err.Error(), "didn't provide a certificate"):
		// crypto/tls has no sentinel for it (RequireAnyClientCert,
		// RequireAndVerifyClientCert).
		return "client sent no certificate, one is required", slog.LevelWarn
	case errors.As(err, &alert):
		// An alert we sent: no common version or cipher suite, a missing
		// required client certificate...
		return "handshake refused: " + err.Error(), slog.LevelWarn
	case strings.Contains(err.Error(), "remote error"):
		// The client sent an alert: it refused our certificate, or found
		// nothing acceptable in our answer.
		return "client aborted the handshake: " + err.Error(), slog.LevelWarn
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "client closed the connection during the handshake", slog.LevelInfo
	}
	return "handshake failed: " + err.Error(), slog.LevelWarn
}
