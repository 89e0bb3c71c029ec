package ws

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"wharf/protocols/transport"
)

// debugLevel is slog's debug level, named for Enabled guards.
const debugLevel = slog.LevelDebug

// HTTP limits of the upgrade request on a Listen port.
const (
	// readHeaderTimeout bounds how long a client may take to send the
	// upgrade request's headers (a slow-loris defence).
	readHeaderTimeout = 10 * time.Second
	// idleTimeout closes a keep-alive HTTP connection that sent a plain
	// request and nothing since.
	idleTimeout = 30 * time.Second
	// maxHeaderBytes bounds the upgrade request's headers, in bytes; a
	// browser's cookies fit.
	maxHeaderBytes = 64 << 10
)

// listener is a Server on its own port (an ActiveMQ ws:// connector).
type listener struct {
	s      *Server
	ln     net.Listener
	wss    *wssListener // the admitting listener of a wss port, or nil
	hs     *http.Server
	served chan struct{} // closed when http.Server.Serve has returned
	log    *slog.Logger

	closeOnce sync.Once
	closeErr  error
}

// Listen binds addr (host:port; port 0 picks a free port) and serves
// WebSocket connections there with protos, a map from subprotocol name to
// the protocol serving it (see Subprotocols, STOMPSubprotocols,
// MQTTSubprotocols). It returns once the port is bound, so the caller may
// dial Addr() at once. The result's Close closes every connection, each
// Handler getting OnClose(transport.ErrListenerClosed), and returns when
// all OnClose calls have run.
//
// With Options.TLS it serves wss://: MaxConnections and
// MaxPendingHandshakes are applied when a socket is accepted, before the
// TLS handshake, as transport.ListenTLS does; see doc.go, "TLS (wss)".
func Listen(addr string, protos map[string]transport.HandlerFactory, o Options) (transport.Listener, error) {
	return listenClock(addr, protos, o, time.Now)
}

// listenClock is Listen with the clock its log throttles read (tests pass a
// fake one to see a throttle's interval end).
func listenClock(addr string, protos map[string]transport.HandlerFactory, o Options, now func() time.Time) (transport.Listener, error) {
	if strings.Contains(addr, "://") {
		return nil, fmt.Errorf("listen %q: want host:port without a scheme: %w", addr, transport.ErrInvalidOptions)
	}
	if o.TLSHandshakeTimeout < 0 || o.MaxPendingHandshakes < 0 {
		return nil, fmt.Errorf("listen %s: negative limit (tls_handshake_timeout %s, max_pending_handshakes %d): %w",
			addr, o.TLSHandshakeTimeout, o.MaxPendingHandshakes, transport.ErrInvalidOptions)
	}
	s, err := NewServer(protos, o)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	var tc *tls.Config
	if o.TLS != nil {
		if len(o.TLS.Certificates) == 0 && o.TLS.GetCertificate == nil && o.TLS.GetConfigForClient == nil {
			return nil, fmt.Errorf("listen %s: tls config has no server certificate (Certificates, GetCertificate or GetConfigForClient): %w", addr, transport.ErrInvalidOptions)
		}
		tc = o.TLS.Clone()
		// WebSocket upgrades are HTTP/1.1 (RFC 6455 §4.1); offering h2
		// would let a browser pick a protocol this server cannot upgrade.
		tc.NextProtos = []string{"http/1.1"}
		if o.TLSHandshakeTimeout == 0 {
			o.TLSHandshakeTimeout = transport.DefaultTLSHandshakeTimeout
		}
		if o.MaxPendingHandshakes == 0 {
			o.MaxPendingHandshakes = transport.DefaultMaxPendingHandshakes
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	l := &listener{
		s:      s,
		ln:     ln,
		served: make(chan struct{}),
		log:    s.log,
	}
	scheme := "ws"
	if tc != nil {
		// The wss listener counts every socket against MaxConnections from
		// accept on and gives the slot back when the socket (or, once
		// upgraded, the WebSocket connection) is gone; the Server's own
		// count at the upgrade would only repeat it, and could refuse an
		// upgrade in the instant between a socket closing and its
		// connection being forgotten.
		l.wss = newWSSListener(ln, tc, o, s.log, now)
		ln = l.wss
		s.maxConns = 0
		scheme = "wss"
	}
	l.hs = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          newHTTPErrorLog(s.log, now),
		// Non-nil and empty: no HTTP/2 over TLS (see NextProtos).
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	go func() {
		defer close(l.served)
		if err := l.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.log.Error("websocket listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	attrs := []any{"addr", ln.Addr().String(), "transport", "websocket", "scheme", scheme, "subprotocols", s.supported,
		"limit_outbound_bytes", s.maxOutbound, "limit_connections", o.MaxConnections,
		"limit_text_message_bytes", s.limits.MaxTextMessageBytes, "limit_binary_message_bytes", s.limits.MaxBinaryMessageBytes}
	if tc != nil {
		attrs = append(attrs, "client_auth", tc.ClientAuth.String(), "tls_handshake_timeout", o.TLSHandshakeTimeout,
			"limit_pending_handshakes", o.MaxPendingHandshakes)
	}
	s.log.Info("listener up", attrs...)
	return l, nil
}

// Addr implements transport.Listener.
func (l *listener) Addr() net.Addr { return l.ln.Addr() }

// Conns implements transport.Listener: on a ws port the WebSocket
// connections (upgrading or upgraded); on a wss port every socket counted
// against MaxConnections (handshaking, reading a request, or upgraded), as
// transport.ListenTLS counts.
func (l *listener) Conns() int {
	if l.wss != nil {
		return l.wss.Conns()
	}
	return l.s.Conns()
}

// Close implements transport.Listener: no more connections are accepted,
// TLS handshakes under way and HTTP connections not upgraded are closed,
// and every WebSocket connection is cut (OnClose(transport.ErrListenerClosed)).
// It returns when all of them are gone. It must not be called from a
// Handler method.
func (l *listener) Close() error {
	l.closeOnce.Do(func() {
		// Upgrades from now on get 503, then the port closes; hijacked
		// connections are not http.Server's to close, the Server cuts them.
		l.s.mu.Lock()
		l.s.closing = true
		l.s.mu.Unlock()
		err := l.hs.Close()
		l.closeErr = errors.Join(err, l.s.Close())
		<-l.served
		if l.wss != nil {
			l.wss.closeAll()
		}
		l.log.Info("listener closed", "addr", l.ln.Addr().String(), "transport", "websocket")
	})
	return l.closeErr
}
