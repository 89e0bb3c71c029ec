package streamconn

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"wharf/protocols/internal/logthrottle"
)

// acceptRetryMax caps the back-off after a failed Accept (EMFILE...).
const acceptRetryMax = time.Second

// GateConfig is what a Gate is built from.
type GateConfig struct {
	Listener   net.Listener // the TCP listener
	MaxConns   int          // 0: no limit
	MaxPending int          // handshakes under way at once, > 0
	HSTimeout  time.Duration
	Log        *slog.Logger
	Attrs      []any                                                       // name the transport in log lines
	Now        func() time.Time                                            // time.Now; a fake clock in tests
	Reason     func(err error, timeout time.Duration) (string, slog.Level) // transport.HandshakeReason
}

// Gate is the admission of a TLS port, shared by transport.ListenTLS and
// the wss listener: it accepts TCP sockets and applies MaxConnections and
// the pending-handshake bound to each before any TLS byte is read, so a
// flood of sockets that never handshake costs a refused socket each, not a
// goroutine. It counts sockets from accept until the listener releases
// them, and logs refusals and failed handshakes with constant messages,
// rate-limited.
//
// Goroutines: one accepts; each admitted socket gets one, running what
// the listener's admit returned.
type Gate struct {
	cfg   GateConfig
	slots chan struct{} // one token per handshake under way
	done  chan struct{} // closed by Close

	connLimit  logthrottle.Throttle // rate-limits "connection limit reached"
	hsLimit    logthrottle.Throttle // rate-limits "too many pending tls handshakes"
	acceptFail logthrottle.Throttle // rate-limits "accept failed"
	hsFailed   logthrottle.Burst    // rate-limits "tls handshake failed"

	// mu guards the count and closing; taken when a socket is accepted or
	// released and by Open and Close, for a few instructions.
	mu      sync.Mutex
	open    int // sockets admitted, not yet released
	closing bool
	wg      sync.WaitGroup // the accept loop and every admitted socket's goroutine
}

// NewGate returns a Gate over cfg.Listener; Start starts accepting.
func NewGate(cfg GateConfig) *Gate {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Gate{
		cfg:        cfg,
		slots:      make(chan struct{}, cfg.MaxPending),
		done:       make(chan struct{}),
		connLimit:  logthrottle.Throttle{Every: 10 * time.Second},
		hsLimit:    logthrottle.Throttle{Every: 10 * time.Second},
		acceptFail: logthrottle.Throttle{Every: 10 * time.Second},
		hsFailed:   logthrottle.Burst{Every: 10 * time.Second, Max: 20},
	}
}

// Start starts the accept loop. admit is called for each socket let in,
// with the Gate's lock held (so Close sees every socket it registers), and
// returns what runs on the socket's own goroutine: the handshake, and for
// ListenTLS the whole connection. The socket holds a handshake slot until
// HandshakeDone and counts until Release.
func (g *Gate) Start(admit func(nc net.Conn) (run func())) {
	g.wg.Add(1)
	go g.acceptLoop(admit)
}

// Addr is the listener's address.
func (g *Gate) Addr() net.Addr { return g.cfg.Listener.Addr() }

// Done is closed once Close is called.
func (g *Gate) Done() <-chan struct{} { return g.done }

// Open is the number of sockets admitted and not yet released. Safe from
// any goroutine.
func (g *Gate) Open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// Closing reports whether Close was called. Safe from any goroutine.
func (g *Gate) Closing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closing
}

// Close stops admitting and closes the port; the caller then cuts its
// sockets and calls Wait. Call it once.
func (g *Gate) Close() error {
	g.mu.Lock()
	g.closing = true
	g.mu.Unlock()
	close(g.done)
	return g.cfg.Listener.Close()
}

// Wait waits for the accept loop and every admitted socket's goroutine.
func (g *Gate) Wait() { g.wg.Wait() }

// Release gives a socket's count back, once it is gone.
func (g *Gate) Release() {
	g.mu.Lock()
	g.open--
	g.mu.Unlock()
}

// HandshakeDone gives a socket's handshake slot back, once its handshake
// has ended, either way.
func (g *Gate) HandshakeDone() { <-g.slots }

// acceptLoop accepts until the listener is closed. A failed Accept (out
// of descriptors) is retried with a back-off from 5 ms to 1 s, as
// net/http does, instead of spinning or giving up.
func (g *Gate) acceptLoop(admit func(net.Conn) func()) {
	defer g.wg.Done()
	var delay time.Duration
	for {
		nc, err := g.cfg.Listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || g.Closing() {
				return
			}
			delay = min(max(2*delay, 5*time.Millisecond), acceptRetryMax)
			if ok, suppressed := g.acceptFail.Allow(g.cfg.Now()); ok {
				g.cfg.Log.Warn("accept failed", "addr", g.Addr().String(), "err", err, "retry_in", delay, "suppressed", suppressed)
			}
			select {
			case <-time.After(delay):
			case <-g.done:
				return
			}
			continue
		}
		delay = 0
		g.admit(nc, admit)
	}
}

// admit applies MaxConnections and the pending-handshake bound to a new
// socket, before any TLS byte is read, and starts its goroutine.
func (g *Gate) admit(nc net.Conn, admit func(net.Conn) func()) {
	g.mu.Lock()
	if g.closing {
		g.mu.Unlock()
		_ = nc.Close()
		return
	}
	if g.cfg.MaxConns > 0 && g.open >= g.cfg.MaxConns {
		used := g.open
		g.mu.Unlock()
		_ = nc.Close()
		if ok, suppressed := g.connLimit.Allow(g.cfg.Now()); ok {
			g.log(slog.LevelWarn, "connection limit reached, connection refused", nc,
				"limit", g.cfg.MaxConns, "used", used, "suppressed", suppressed)
		}
		return
	}
	select {
	case g.slots <- struct{}{}:
	default:
		g.mu.Unlock()
		_ = nc.Close()
		if ok, suppressed := g.hsLimit.Allow(g.cfg.Now()); ok {
			g.log(slog.LevelWarn, "too many pending tls handshakes, connection refused", nc,
				"limit", cap(g.slots), "suppressed", suppressed)
		}
		return
	}
	run := admit(nc)
	g.open++
	g.wg.Add(1)
	g.mu.Unlock()
	go func() {
		defer g.wg.Done()
		run()
	}()
}

// HandshakeFailed logs a failed handshake of nc, with a reason an
// operator can act on, unless the listener is closing (it cut it). At
// most 20 lines per 10 s per listener: a scan or a flood costs a few
// lines, each counting those it held back.
func (g *Gate) HandshakeFailed(nc net.Conn, err error) {
	if g.Closing() {
		return
	}
	ok, suppressed := g.hsFailed.Allow(g.cfg.Now())
	if !ok {
		return
	}
	reason, level := g.cfg.Reason(err, g.cfg.HSTimeout)
	g.log(level, "tls handshake failed, connection closed", nc,
		"local", nc.LocalAddr().String(), "reason", reason, "err", err, "suppressed", suppressed)
}

// log writes one line naming the remote address and the transport.
func (g *Gate) log(level slog.Level, msg string, nc net.Conn, args ...any) {
	all := make([]any, 0, 2+len(g.cfg.Attrs)+len(args))
	all = append(all, "remote", nc.RemoteAddr().String())
	all = append(all, g.cfg.Attrs...)
	g.cfg.Log.Log(context.Background(), level, msg, append(all, args...)...)
}
