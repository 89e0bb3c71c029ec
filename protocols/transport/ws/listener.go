package ws

import (
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
func Listen(addr string, protos map[string]transport.HandlerFactory, o Options) (transport.Listener, error) {
	if strings.Contains(addr, "://") {
		return nil, fmt.Errorf("listen %q: want host:port without a scheme: %w", addr, transport.ErrInvalidOptions)
	}
	s, err := NewServer(protos, o)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	l := &listener{
		s:  s,
		ln: ln,
		hs: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: readHeaderTimeout,
			IdleTimeout:       idleTimeout,
			MaxHeaderBytes:    maxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(s.log.With("component", "http").Handler(), slog.LevelWarn),
		},
		served: make(chan struct{}),
		log:    s.log,
	}
	go func() {
		defer close(l.served)
		if err := l.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			l.log.Error("websocket listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	s.log.Info("listener up", "addr", ln.Addr().String(), "transport", "websocket", "subprotocols", s.supported,
		"limit_outbound_bytes", s.maxOutbound, "limit_connections", s.maxConns,
		"limit_text_message_bytes", s.limits.MaxTextMessageBytes, "limit_binary_message_bytes", s.limits.MaxBinaryMessageBytes)
	return l, nil
}

// Addr implements transport.Listener.
func (l *listener) Addr() net.Addr { return l.ln.Addr() }

// Conns implements transport.Listener.
func (l *listener) Conns() int { return l.s.Conns() }

// Close implements transport.Listener: no more connections are accepted,
// HTTP connections not upgraded are closed, and every WebSocket
// connection is cut (OnClose(transport.ErrListenerClosed)). It returns when
// all of them are gone. It must not be called from a Handler method.
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
		l.log.Info("listener closed", "addr", l.ln.Addr().String(), "transport", "websocket")
	})
	return l.closeErr
}
