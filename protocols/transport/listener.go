package transport

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"wharf/protocols/internal/logthrottle"

	"github.com/panjf2000/gnet/v2"
)

// DefaultMaxOutboundBytes is the per-connection cap on queued-but-unsent
// bytes used when Options.MaxOutboundBytes is 0. 64 MiB matches the ActiveMQ
// default memoryUsage a single slow consumer could otherwise pin.
const DefaultMaxOutboundBytes = 64 << 20

// Options configures a Listener. The zero value is usable.
type Options struct {
	// MaxOutboundBytes caps, per connection, the bytes queued by Write and
	// not yet handed to the kernel (Wharf's queue plus gnet's outbound
	// buffer), in bytes. Beyond it the connection is cut (ErrOutboundFull).
	// 0 means DefaultMaxOutboundBytes.
	MaxOutboundBytes int
	// MaxConnections caps the connections open at once on this listener;
	// connections beyond it are closed as soon as they are accepted, without
	// a Handler (ActiveMQ transportConnector maximumConnections). 0 means
	// unlimited.
	MaxConnections int
	// NumEventLoop is the number of gnet event loops serving connections
	// (gnet WithNumEventLoop). 0 means one per CPU (runtime.NumCPU()), which
	// is gnet's WithMulticore(true).
	NumEventLoop int
	// Logger receives lifecycle and error logs; nil means slog.Default().
	Logger *slog.Logger
	// TLSHandshakeTimeout bounds, for ListenTLS, the TLS handshake of each
	// connection, from accept to its end; a client that takes longer is
	// closed (and logged) without a Handler. 0 means
	// DefaultTLSHandshakeTimeout (10 s). Listen ignores it.
	TLSHandshakeTimeout time.Duration
	// MaxPendingHandshakes bounds, for ListenTLS, the TLS handshakes under
	// way at once on the listener; a connection accepted beyond it is
	// closed at once, before any TLS byte is read, so a handshake flood
	// cannot pin goroutines without bound. 0 means
	// DefaultMaxPendingHandshakes (256). Listen ignores it.
	MaxPendingHandshakes int
}

// Listener is a bound TCP listener serving protocol sessions.
type Listener interface {
	// Addr is the address the listener is bound to, with the real port when
	// Listen was given port 0. Safe from any goroutine.
	Addr() net.Addr
	// Close stops accepting, closes every open connection (each Handler gets
	// OnClose with ErrListenerClosed, on its event loop) and returns when all
	// of them are closed and the event loops have exited. Bytes still queued
	// are written best-effort only: a graceful drain is Conn.Close's job.
	// Safe from any goroutine; later calls wait for the first and return its
	// result. It must not be called from a Handler method (it would wait for
	// the event loop it is running on).
	Close() error
	// Conns is the number of connections currently open (accepted and not
	// yet closed; refused connections are not counted). Safe from any
	// goroutine.
	Conns() int
}

// tickIdle is how long gnet's ticker sleeps between calls once the engine is
// up. The first tick only tells Listen the event loops are running; no
// periodic work hangs off it.
const tickIdle = time.Hour

// debugLevel is slog's debug level, named for Enabled guards on hot paths.
const debugLevel = slog.LevelDebug

// listener is the gnet event handler of one engine. Its callbacks run on the
// engine's goroutines: OnBoot and OnShutdown on the Run goroutine, OnTick on
// gnet's ticker goroutine, OnOpen/OnTraffic/OnClose on the event loop that
// owns the connection.
type listener struct {
	gnet.BuiltinEventEngine

	factory      HandlerFactory
	bindAddr     string // as given to Listen
	maxOutbound  int    // bytes
	maxConns     int64
	log          *slog.Logger
	connLimit    logthrottle.Throttle // rate-limits "connection limit reached"
	outboundFull logthrottle.Throttle // rate-limits "outbound limit exceeded"
	readHeld     logthrottle.Throttle // rate-limits "cannot stop reading a paused connection"

	addr    net.Addr    // set in OnBoot, read after started is closed
	eng     gnet.Engine // set in OnBoot, read after started is closed
	started chan struct{}
	tickOne sync.Once

	runDone chan struct{} // closed when gnet.Run has returned
	runErr  error         // gnet.Run's result, read after runDone is closed

	conns   atomic.Int64 // open, accepted connections
	closing atomic.Bool  // Close was called

	closeOnce sync.Once
	closeErr  error
}

// Listen binds addr (host:port; port 0 picks a free port) and serves it with
// gnet, building one Handler per accepted connection with f. It returns once
// the listener is bound and its event loops run, so the caller may dial
// Addr() at once, or with the bind error.
func Listen(addr string, f HandlerFactory, o Options) (Listener, error) {
	if f == nil {
		return nil, fmt.Errorf("listen %s: nil handler factory: %w", addr, ErrInvalidOptions)
	}
	if o.MaxOutboundBytes < 0 || o.MaxConnections < 0 || o.NumEventLoop < 0 {
		return nil, fmt.Errorf("listen %s: negative limit (max_outbound_bytes %d, max_connections %d, num_event_loop %d): %w",
			addr, o.MaxOutboundBytes, o.MaxConnections, o.NumEventLoop, ErrInvalidOptions)
	}
	if strings.Contains(addr, "://") {
		return nil, fmt.Errorf("listen %q: want host:port without a scheme: %w", addr, ErrInvalidOptions)
	}
	if o.MaxOutboundBytes == 0 {
		o.MaxOutboundBytes = DefaultMaxOutboundBytes
	}
	loops := o.NumEventLoop
	if loops == 0 {
		loops = runtime.NumCPU()
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	l := &listener{
		factory:      f,
		bindAddr:     addr,
		maxOutbound:  o.MaxOutboundBytes,
		maxConns:     int64(o.MaxConnections),
		log:          logger,
		connLimit:    logthrottle.Throttle{Every: 10 * time.Second},
		outboundFull: logthrottle.Throttle{Every: time.Second},
		readHeld:     logthrottle.Throttle{Every: 10 * time.Second},
		started:      make(chan struct{}),
		runDone:      make(chan struct{}),
	}
	go func() {
		defer close(l.runDone)
		l.runErr = gnet.Run(l, "tcp://"+addr,
			gnet.WithNumEventLoop(loops),
			// SO_REUSEPORT stays off: with it gnet binds one socket per loop
			// by re-resolving the address, so port 0 would give every loop a
			// different port. Without it one reactor accepts and hands
			// connections to the loops.
			gnet.WithReusePort(false),
			// SO_REUSEADDR: a restarted broker must bind its port while the
			// last run's connections sit in TIME_WAIT.
			gnet.WithReuseAddr(true),
			gnet.WithTCPNoDelay(gnet.TCPNoDelay),
			gnet.WithTicker(true),
			gnet.WithLogger(gnetLogger{logger.With("component", "gnet")}),
		)
	}()
	select {
	case <-l.started:
	case <-l.runDone:
		// gnet.Run returned before the engine was up: bind or start failed.
		if l.runErr == nil {
			return nil, fmt.Errorf("listen %s: engine stopped during start", addr)
		}
		return nil, fmt.Errorf("listen %s: %w", addr, l.runErr)
	}
	logger.Info("listener up", "addr", l.addr.String(), "event_loops", loops,
		"limit_outbound_bytes", l.maxOutbound, "limit_connections", o.MaxConnections)
	return l, nil
}

// Addr implements Listener.
func (l *listener) Addr() net.Addr { return l.addr }

// Conns implements Listener.
func (l *listener) Conns() int { return int(l.conns.Load()) }

// Close implements Listener.
func (l *listener) Close() error {
	l.closeOnce.Do(func() {
		l.closing.Store(true)
		// Engine.Stop starts the shutdown and then polls every 500 ms until
		// it completes. Given an already-cancelled context it starts the
		// shutdown and returns at once; the end is then awaited on runDone,
		// which closes when gnet.Run returns: after every loop has exited and
		// closed its connections (each OnClose has run).
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = l.eng.Stop(ctx) // context.Canceled by construction; an engine already down reports its own error via runErr
		<-l.runDone
		l.closeErr = l.runErr
		l.log.Info("listener closed", "addr", l.addr.String())
	})
	return l.closeErr
}

// OnBoot runs on the gnet.Run goroutine once the listening socket is bound
// and listening, before the event loops start.
func (l *listener) OnBoot(eng gnet.Engine) gnet.Action {
	l.eng = eng
	if fd, err := eng.Dup(); err == nil {
		l.addr = listenerAddr(fd)
	}
	return gnet.None
}

// OnTick runs on gnet's ticker goroutine, which starts after the event loops.
// The first call releases Listen.
func (l *listener) OnTick() (time.Duration, gnet.Action) {
	l.tickOne.Do(func() {
		if l.addr == nil {
			// Not on Unix, or getsockname failed: fall back to what gnet
			// resolved (correct unless the port was 0).
			l.addr = l.resolvedAddr()
		}
		close(l.started)
	})
	return tickIdle, gnet.None
}

// resolvedAddr is the listener address when the kernel could not be asked.
func (l *listener) resolvedAddr() net.Addr {
	if a, err := net.ResolveTCPAddr("tcp", l.bindAddr); err == nil {
		return a
	}
	return &net.TCPAddr{}
}

// OnOpen runs on the connection's event loop when it has been accepted.
func (l *listener) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if l.closing.Load() {
		return nil, gnet.Close
	}
	n := l.conns.Add(1)
	if l.maxConns > 0 && n > l.maxConns {
		l.conns.Add(-1)
		if ok, suppressed := l.connLimit.Allow(time.Now()); ok {
			l.log.Warn("connection limit reached, connection refused",
				"remote", gc.RemoteAddr().String(), "limit", l.maxConns, "used", n-1, "suppressed", suppressed)
		}
		return nil, gnet.Close
	}
	c := newConn(l, gc)
	h, ok := c.callFactory()
	if !ok {
		// gnet closes the socket without OnClose: mark the conn gone so that
		// a task the factory posted (PauseReading) does not touch the
		// descriptor, which may be reused by then.
		c.gone = true
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		l.conns.Add(-1)
		return nil, gnet.Close
	}
	c.h = h
	gc.SetContext(c)
	c.endCallback()
	return nil, gnet.None
}

// OnTraffic runs on the connection's event loop when bytes arrived.
// While the connection's reading is paused the input is left unconsumed:
// gnet then keeps it in its inbound buffer, for ResumeReading to deliver.
func (l *listener) OnTraffic(gc gnet.Conn) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.Close
	}
	if held, act := c.holdInput(); held {
		return act
	}
	b, _ := gc.Next(-1) // all buffered input; cannot fail for n <= 0
	return c.onTraffic(b)
}

// OnClose runs on the connection's event loop once the connection is gone,
// whoever closed it.
func (l *listener) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.None // refused in OnOpen: never counted, no Handler
	}
	gc.SetContext(nil)
	c.onClose(err)
	l.conns.Add(-1)
	return gnet.None
}
