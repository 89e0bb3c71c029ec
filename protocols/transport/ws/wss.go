package ws

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"wharf/protocols/transport"
	"wharf/protocols/transport/internal/streamconn"
)

// wssListener is the net.Listener a wss:// Listen's http.Server serves,
// the counterpart of transport.ListenTLS's admission, on the same
// streamconn.Gate: MaxConnections and the pending-handshake bound are
// applied when a TCP socket is accepted, before any TLS byte is read, and
// the handshake runs here (one goroutine per socket, within the handshake
// timeout), so Accept hands http.Server only *tls.Conns whose handshake is
// complete (http.Server's own HandshakeContext is then a no-op) and failed
// handshakes are logged here, with a constant message and rate-limited.
// See doc.go, "TLS (wss)".
//
// Goroutines: one accepts; each socket being handshaken has one, gone
// when its handshake has ended.
type wssListener struct {
	gate      *streamconn.Gate
	cfg       *tls.Config
	hsTimeout time.Duration
	ready     chan net.Conn // handshaken *tls.Conns for Accept; unbuffered

	// mu guards the socket set; taken when a socket is accepted or gone,
	// and by Close, for a few instructions.
	mu    sync.Mutex
	conns map[*slotConn]struct{} // sockets accepted, not yet released

	closeOnce sync.Once
	closeErr  error
}

func newWSSListener(ln net.Listener, cfg *tls.Config, o Options, log *slog.Logger, now func() time.Time) *wssListener {
	l := &wssListener{
		cfg:       cfg,
		hsTimeout: o.TLSHandshakeTimeout,
		ready:     make(chan net.Conn),
		conns:     map[*slotConn]struct{}{},
	}
	l.gate = streamconn.NewGate(streamconn.GateConfig{
		Listener:   ln,
		MaxConns:   o.MaxConnections,
		MaxPending: o.MaxPendingHandshakes,
		HSTimeout:  o.TLSHandshakeTimeout,
		Log:        log,
		Attrs:      []any{"transport", "websocket", "scheme", "wss"},
		Now:        now,
		Reason:     transport.HandshakeReason,
	})
	l.gate.Start(l.admit)
	return l
}

// Accept implements net.Listener for http.Server: the next connection
// whose TLS handshake is complete. Safe from any goroutine.
func (l *wssListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.gate.Done():
		return nil, net.ErrClosed
	}
}

// Addr implements net.Listener.
func (l *wssListener) Addr() net.Addr { return l.gate.Addr() }

// Close implements net.Listener (http.Server.Close calls it): the port
// closes and handshakes under way are cut. Connections already handed to
// http.Server are its own, or the Server's once upgraded; closeAll ends
// what remains. Safe from any goroutine; it does not wait.
func (l *wssListener) Close() error {
	l.closeOnce.Do(func() {
		// Once the gate is closing it admits nothing: every socket is in
		// the set.
		l.closeErr = l.gate.Close()
		l.mu.Lock()
		var cut []*slotConn
		for c := range l.conns {
			if !c.handedOver {
				cut = append(cut, c)
			}
		}
		l.mu.Unlock()
		for _, c := range cut {
			_ = c.Close()
		}
	})
	return l.closeErr
}

// closeAll closes the listener, then every socket still counted (one
// Accept handed out while http.Server was closing), and waits for the
// accept and handshake goroutines. The ws listener calls it last in
// Close, once the Server has cut its WebSocket connections.
func (l *wssListener) closeAll() {
	_ = l.Close()
	l.mu.Lock()
	rest := slices.Collect(maps.Keys(l.conns))
	l.mu.Unlock()
	for _, c := range rest {
		c.hold(false)
		_ = c.Close()
	}
	l.gate.Wait()
}

// Conns is the number of sockets counted against MaxConnections:
// handshaking, reading an HTTP request, or upgraded, not yet gone. Safe
// from any goroutine.
func (l *wssListener) Conns() int { return l.gate.Open() }

// admit registers a socket the gate let in and returns its handshake.
func (l *wssListener) admit(nc net.Conn) func() {
	c := &slotConn{Conn: nc, l: l}
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
	return func() { l.handshake(c) }
}

// handshake runs the server handshake of one socket within the timeout,
// then hands the connection to Accept, or logs the failure and closes it.
func (l *wssListener) handshake(c *slotConn) {
	tc := tls.Server(c, l.cfg)
	_ = c.SetDeadline(time.Now().Add(l.hsTimeout))
	err := tc.Handshake()
	l.gate.HandshakeDone()
	if err != nil {
		l.gate.HandshakeFailed(c, err)
		var rh tls.RecordHeaderError
		if errors.As(err, &rh) && rh.Conn != nil && looksLikeHTTP(rh.RecordHeader) {
			// A ws:// URL on a wss port: say so, as http.Server does.
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
		}
		_ = c.Close()
		return
	}
	_ = c.SetDeadline(time.Time{})
	l.mu.Lock()
	c.handedOver = true
	l.mu.Unlock()
	select {
	case l.ready <- tc:
	case <-l.gate.Done():
		_ = c.Close()
	}
}

// looksLikeHTTP reports whether a TLS record header is the start of a
// plain-text HTTP request.
func looksLikeHTTP(hdr [5]byte) bool {
	for _, m := range []string{"GET /", "HEAD ", "POST ", "PUT /", "OPTIO"} {
		if bytes.Equal(hdr[:], []byte(m)) {
			return true
		}
	}
	return false
}

// release forgets a socket once it is closed (or, for a WebSocket
// connection, once its OnClose has run, whichever is later).
func (l *wssListener) release(c *slotConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	l.gate.Release()
}

// slotConn is a socket counted against the listener's limits: the slot
// is released when it is closed, except that a WebSocket connection's
// socket, closed before its OnClose runs, keeps the slot until the Server
// has forgotten it (hold), as transport's listeners give a slot back
// after OnClose. Safe from any goroutine.
type slotConn struct {
	net.Conn
	l *wssListener

	handedOver bool // given to http.Server; guarded by l.mu

	mu       sync.Mutex
	held     bool // a WebSocket connection not yet forgotten by the Server
	closed   bool
	released bool
}

// Close closes the socket and releases the slot unless held.
func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.mu.Lock()
	c.closed = true
	rel := !c.held && !c.released
	c.released = c.released || rel
	c.mu.Unlock()
	if rel {
		c.l.release(c)
	}
	return err
}

// hold keeps the slot past Close (on) or gives it back if the socket is
// already closed (off).
func (c *slotConn) hold(on bool) {
	c.mu.Lock()
	c.held = on
	rel := !on && c.closed && !c.released
	c.released = c.released || rel
	c.mu.Unlock()
	if rel {
		c.l.release(c)
	}
}

// slotOf returns the counted socket under a hijacked connection, or nil
// (a ws:// connection, or a Server mounted on another HTTP server).
func slotOf(nc net.Conn) *slotConn {
	if tc, ok := nc.(*tls.Conn); ok {
		nc = tc.NetConn()
	}
	sc, _ := nc.(*slotConn)
	return sc
}
