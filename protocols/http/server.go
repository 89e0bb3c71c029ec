package http

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/protocols/http/console"
)

// Options configure a Server.
type Options struct {
	// Addr is the plain listener's host:port (port 0 picks one).
	Addr string
	// TLSAddr and TLS are the HTTPS listener's address and configuration
	// (jetty.xml's SecureConnector); none when TLS is nil.
	TLSAddr string
	TLS     *tls.Config
	// Authenticate asks every request but the health checks for a login
	// (jetty.xml's Constraint authenticate).
	Authenticate bool
	// Auth checks logins; nil when nobody can log in (no realm users and
	// no authentication plugin), which serves without a login on
	// loopback and is refused elsewhere.
	Auth Authenticator
	// RealmName is named in the Basic challenge (ActiveMQRealm).
	RealmName string
	// Jolokia builds the management API for the broker when it is ready
	// (Ready); it is served at /api/jolokia/ to logins that may read, and
	// wraps its writes in RequireAdmin. Until Ready, and after NotReady,
	// /api/jolokia/ answers 503. Nil answers 404 there. stop, for the
	// API's stop operation, calls RequestStop once the request that
	// called it has been answered (the rest of a bulk request still
	// reads a running broker).
	Jolokia func(e *engine.Engine, stop func()) http.Handler
	// WebSocket builds, when the broker is ready (Ready), the WebSocket
	// endpoints served at their paths ("/stomp", "/mqtt"): each upgrades
	// requests on the plain and the HTTPS listener alike and serves the
	// connections with a protocol session, as a ws:// connector does.
	// They are not behind the web server's login: the protocol's own
	// CONNECT logs in, against the broker's authentication plugin, as on
	// the ws connectors (a browser's WebSocket cannot send a Basic
	// login). Until Ready, and from NotReady on, the paths answer 503;
	// NotReady and Close close every connection they upgraded.
	WebSocket map[string]func(*engine.Engine) (Endpoint, error)
	// MaxDestinationSeries caps the destinations /metrics reports one by
	// one; 0 reports none of them.
	MaxDestinationSeries int
	// Journal adds the KahaDB journal's histograms to /metrics; nil
	// leaves them out (a store without a journal, or no observer).
	Journal *JournalMetrics
	// Logger; nil discards.
	Logger *slog.Logger
}

// Endpoint is a WebSocket endpoint mounted on a path (a
// protocols/transport/ws Server): it answers upgrade requests and serves
// the connections until Close, which cuts them all and returns once they
// are gone.
type Endpoint interface {
	http.Handler
	Close() error
}

// Server is a running web server. Its methods are safe from any
// goroutine.
type Server struct {
	o       Options
	log     *slog.Logger
	srv     *http.Server
	ln, tln net.Listener
	// engine is the broker reported on, nil until Ready and after
	// NotReady; api is what Options.Jolokia built for it.
	engine atomic.Pointer[engine.Engine]
	api    atomic.Pointer[http.Handler]
	rest   *messageAPI   // /api/message
	done   chan struct{} // closed when every Serve has returned

	stopOnce    sync.Once
	stopReq     chan struct{} // closed by RequestStop
	stopPending atomic.Bool   // the API's stop ran; RequestStop once its request is answered

	// wsMu guards endpoints: the WebSocket endpoints by path while the
	// broker is ready, nil before Ready and after NotReady or Close.
	wsMu      sync.Mutex
	endpoints map[string]Endpoint
	// readyAt is when Ready was called (ms since the epoch): the
	// console's uptime.
	readyAt atomic.Int64
}

// shutdownTimeout bounds how long Close waits for requests in progress.
const shutdownTimeout = 5 * time.Second

// Listen binds the listeners and serves. A listener on a non-loopback
// address is refused, with an error saying why (ErrNoLogin, ErrNoUsers,
// ErrDefaultAdmin), unless logins are required and admin/admin does not
// log in: the management API mounted on it changes the broker.
func Listen(o Options) (*Server, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, log: log, done: make(chan struct{}), stopReq: make(chan struct{})}
	addrs := []string{o.Addr}
	if o.TLS != nil {
		addrs = append(addrs, o.TLSAddr)
	}
	for _, a := range addrs {
		if err := s.exposure(a); err != nil {
			return nil, err
		}
	}
	mux, err := s.routes()
	if err != nil {
		return nil, err
	}
	s.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	if s.ln, err = net.Listen("tcp", o.Addr); err != nil {
		return nil, fmt.Errorf("http: listen on %s: %w", o.Addr, err)
	}
	if o.TLS != nil {
		ln, err := net.Listen("tcp", o.TLSAddr)
		if err != nil {
			s.ln.Close()
			return nil, fmt.Errorf("https: listen on %s: %w", o.TLSAddr, err)
		}
		s.tln = tls.NewListener(ln, o.TLS.Clone())
	}
	errs := make(chan error, 2)
	serves := 0
	for _, ln := range []net.Listener{s.ln, s.tln} {
		if ln == nil {
			continue
		}
		serves++
		go func() { errs <- s.srv.Serve(ln) }()
	}
	go func() {
		for range serves {
			if err := <-errs; !errors.Is(err, http.ErrServerClosed) {
				log.Error("web server stopped", "err", err)
			}
		}
		close(s.done)
	}()
	if s.open() {
		why := "no realm users and no authentication plugin"
		if !o.Authenticate {
			why = "authentication is off"
		}
		log.Info("web server without login: loopback only", "reason", why)
	}
	attrs := []any{"addr", s.ln.Addr().String()}
	if s.tln != nil {
		attrs = append(attrs, "https_addr", s.tln.Addr().String())
	}
	if len(o.WebSocket) > 0 {
		paths := slices.Sorted(maps.Keys(o.WebSocket))
		attrs = append(attrs, "websocket", strings.Join(paths, ","))
	}
	log.Info("web server listening", attrs...)
	return s, nil
}

// exposure refuses a non-loopback listener that anyone could use.
func (s *Server) exposure(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("http: address %q: %w", addr, err)
	}
	if loopback(host) {
		return nil
	}
	where := fmt.Sprintf("listening on %q", addr)
	switch {
	case !s.o.Authenticate:
		return fmt.Errorf("%w: %s needs a login (turn authentication on in jetty.xml's Constraint beans or YAML http.authenticate, or listen on 127.0.0.1)", ErrNoLogin, where)
	case s.o.Auth == nil:
		return fmt.Errorf("%w: %s needs users (in the jetty-realm.properties of jetty.xml's securityLoginService, YAML http.realm, or an authentication plugin in <plugins>), or listen on 127.0.0.1", ErrNoUsers, where)
	}
	if roles, err := s.o.Auth("admin", "admin"); err == nil && (Login{Roles: roles}).reader() {
		return fmt.Errorf("%w: %s needs the admin password of jetty-realm.properties changed from ActiveMQ's default (or listen on 127.0.0.1)", ErrDefaultAdmin, where)
	}
	return nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// routes builds the handlers: the health checks open to all, the rest
// behind the login.
func (s *Server) routes() (*http.ServeMux, error) {
	metrics, err := s.metricsHandler()
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.authenticated(metrics))
	mux.Handle("GET /admin/xml/queues.jsp", s.authenticated(s.feed(writeQueuesFeed)))
	mux.Handle("GET /admin/xml/topics.jsp", s.authenticated(s.feed(writeTopicsFeed)))
	mux.Handle("GET /admin/xml/subscribers.jsp", s.authenticated(s.feed(writeSubscribersFeed)))
	s.rest = newMessageAPI(s)
	rest := s.authenticated(RequireAdmin(s.rest))
	mux.Handle(restDestinationPrefix, rest)
	mux.Handle(restDestinationPrefix+"/", rest)
	if s.o.Jolokia != nil {
		mux.Handle("/api/jolokia/", s.authenticated(http.HandlerFunc(s.jolokia)))
	}
	for path := range s.o.WebSocket {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " {}") {
			return nil, fmt.Errorf("http: WebSocket path %q: want /name", path)
		}
		mux.Handle(path, s.websocket(path))
	}
	// The web console, under ActiveMQ's /admin/; the XML feeds above keep
	// their paths (more specific patterns win).
	con, err := console.New(console.Options{
		Prefix:  consolePrefix,
		Engine:  s.engine.Load,
		Started: func() time.Time { return time.UnixMilli(s.readyAt.Load()) },
		Login: func(r *http.Request) (string, bool) {
			l := LoginFrom(r)
			return l.User, l.Admin()
		},
		Logger: s.log.With("api", "console"),
	})
	if err != nil {
		return nil, err
	}
	mux.Handle(consolePrefix+"/", s.authenticated(con))
	// The feeds answer other methods 405, as before the console took the
	// rest of /admin/.
	for _, feed := range []string{"queues", "topics", "subscribers"} {
		mux.HandleFunc(consolePrefix+"/xml/"+feed+".jsp", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		})
	}
	mux.Handle("GET "+consolePrefix, http.RedirectHandler(consolePrefix+"/", http.StatusFound))
	mux.Handle("GET /{$}", http.RedirectHandler(consolePrefix+"/", http.StatusFound))
	return mux, nil
}

// consolePrefix is where the web console is served.
const consolePrefix = "/admin"

// Addr is the plain listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// TLSAddr is the HTTPS listener's address, nil without one.
func (s *Server) TLSAddr() net.Addr {
	if s.tln == nil {
		return nil
	}
	return s.tln.Addr()
}

// Ready makes /readyz answer 200, /metrics report e and /api/jolokia/
// serve the API Options.Jolokia builds for e: the broker has recovered its
// store and its connectors listen.
func (s *Server) Ready(e *engine.Engine) {
	if s.o.Jolokia != nil {
		h := s.o.Jolokia(e, func() { s.stopPending.Store(true) })
		s.api.Store(&h)
	}
	if len(s.o.WebSocket) > 0 {
		eps := make(map[string]Endpoint, len(s.o.WebSocket))
		for path, build := range s.o.WebSocket {
			ep, err := build(e)
			if err != nil {
				s.log.Error("websocket endpoint not served", "path", path, "err", err)
				continue
			}
			eps[path] = ep
		}
		s.wsMu.Lock()
		s.endpoints = eps
		s.wsMu.Unlock()
	}
	s.readyAt.Store(time.Now().UnixMilli())
	s.engine.Store(e)
}

// NotReady makes /readyz and /api/jolokia/ answer 503 again (the broker
// is stopping), so that load balancers stop sending clients before the
// connectors close.
func (s *Server) NotReady() {
	s.engine.Store(nil)
	s.rest.closeAll()
	s.closeEndpoints()
}

// closeEndpoints closes the WebSocket endpoints (their connections are
// cut, each session closing as on a connector's close) and forgets them:
// their paths answer 503 from now on.
func (s *Server) closeEndpoints() {
	s.wsMu.Lock()
	eps := s.endpoints
	s.endpoints = nil
	s.wsMu.Unlock()
	for path, ep := range eps {
		if err := ep.Close(); err != nil {
			s.log.Warn("websocket endpoint close", "path", path, "err", err)
		}
	}
}

// websocket serves the endpoint at path while the broker is ready.
func (s *Server) websocket(path string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.wsMu.Lock()
		ep := s.endpoints[path]
		s.wsMu.Unlock()
		if ep == nil {
			http.Error(w, "503 service unavailable: the broker is starting or stopping", http.StatusServiceUnavailable)
			return
		}
		ep.ServeHTTP(w, r)
	})
}

// RequestStop asks whoever runs the broker to stop it (the management
// API's stop operation): StopRequested is closed. It returns at once, and
// later calls do nothing. Safe from any goroutine.
func (s *Server) RequestStop() {
	s.stopOnce.Do(func() { close(s.stopReq) })
}

// StopRequested is closed once RequestStop has been called: wharf run
// then stops the broker as it does on SIGTERM.
func (s *Server) StopRequested() <-chan struct{} { return s.stopReq }

// jolokia serves the management API of a ready broker.
func (s *Server) jolokia(w http.ResponseWriter, r *http.Request) {
	h := s.api.Load()
	if h == nil || s.engine.Load() == nil {
		http.Error(w, "503 service unavailable: the broker is starting or stopping", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
	if s.stopPending.Load() {
		s.RequestStop()
	}
}

// Close stops accepting, lets requests in progress finish (5 s at most)
// and closes the listeners.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
	}
	<-s.done
	s.rest.closeAll()
	s.closeEndpoints()
	s.log.Info("web server stopped")
	return err
}
