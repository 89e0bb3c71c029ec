package wiring

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"wharf/engine"
	"wharf/engine/config"
	httpserver "wharf/protocols/http"
	"wharf/protocols/http/jolokia"
	"wharf/protocols/mqtt"
	"wharf/protocols/stomp"
	"wharf/protocols/transport"
	"wharf/protocols/transport/ws"
	"wharf/security"
)

// StartHTTP starts the web server cfg.HTTP configures, before the broker
// is started: /healthz answers while the store recovers, and /readyz says
// 503 until the caller hands the started broker's engine to Ready (and
// again after NotReady, before the broker is closed). journal, when not
// nil, adds the KahaDB journal's histograms to /metrics: hand it to
// FactoriesObserved too. anyPort binds port 0 (tests).
//
// Logins are checked against the realm file (jetty-realm.properties) when
// one is configured, else against the broker's authentication plugin when
// <plugins> has one; else nobody can log in and the server is open, on
// loopback only.
func StartHTTP(cfg *config.Config, anyPort bool, journal *httpserver.JournalMetrics, log *slog.Logger) (*httpserver.Server, error) {
	h := cfg.HTTP
	log = log.With("connector", "http")
	port := func(p int) string {
		if anyPort {
			p = 0
		}
		return strconv.Itoa(p)
	}
	connectors, store := JolokiaServices(cfg)
	o := httpserver.Options{
		Addr:                 net.JoinHostPort(h.Host, port(h.Port)),
		Authenticate:         h.Authenticate,
		RealmName:            h.RealmName,
		MaxDestinationSeries: h.MaxDestinationSeries,
		Journal:              journal,
		Logger:               log,
		Jolokia: func(e *engine.Engine, stop func()) http.Handler {
			return jolokia.New(e, jolokia.Options{
				Prefix: "/api/jolokia",
				// Operations (browse too: message bodies are the users'
				// data) and writes need the admin role. DEVIATION:
				// ActiveMQ 5.17's jetty.xml lets roles user and admin
				// reach /api/* alike; Wharf keeps changes to admins, as
				// its console's *.action pages are.
				CanWrite:           func(r *http.Request) bool { return httpserver.LoginFrom(r).Admin() },
				Connectors:         connectors,
				PersistenceAdapter: store,
				// The Broker bean's stop: wharf run stops the broker when
				// the server's StopRequested is closed.
				Stop:   stop,
				Logger: log.With("api", "jolokia"),
			})
		},
	}
	if len(h.WebSocket) > 0 {
		o.WebSocket = map[string]func(*engine.Engine) (httpserver.Endpoint, error){}
		for _, proto := range h.WebSocket {
			o.WebSocket["/"+proto] = httpWebSocket(proto, log.With("path", "/"+proto))
		}
	}
	auth, err := httpAuth(cfg, log)
	if err != nil {
		return nil, err
	}
	o.Auth = auth
	if s := h.HTTPS; s != nil {
		tc, err := security.ServerTLS(&s.TLS, config.TLSOptions{})
		if err != nil {
			return nil, fmt.Errorf("https connector: %w", err)
		}
		o.TLS, o.TLSAddr = tc, net.JoinHostPort(s.Host, port(s.Port))
	}
	return httpserver.Listen(o)
}

// httpAuth is the web server's login check: the realm file's users, or
// the broker's authentication plugin (its groups are the roles: admins
// may write, users may read), or nil when neither has anyone.
func httpAuth(cfg *config.Config, log *slog.Logger) (httpserver.Authenticator, error) {
	if path := cfg.HTTP.Realm; path != "" {
		r, err := security.LoadRealm(path)
		if err != nil {
			return nil, err
		}
		if r.Len() == 0 {
			return nil, nil
		}
		log.Info("web server logins", "realm", path, "users", r.Len())
		return r.Authenticate, nil
	}
	if cfg.Security.Authentication == nil {
		return nil, nil
	}
	p, err := security.New(cfg, log.With("plugin", "security"))
	if err != nil {
		return nil, fmt.Errorf("web server logins: %w", err)
	}
	log.Info("web server logins", "plugin", cfg.Security.Authentication.Kind)
	return func(user, password string) ([]string, error) {
		s, err := p.Authenticate(engine.Credentials{Username: user, Password: password, Protocol: "http"})
		if err != nil {
			return nil, err
		}
		return s.Groups, nil
	}, nil
}

// AdminTarget is where the admin commands reach the web server that cfg
// configures (wharf dstat --config FILE, on the broker's host): its
// HTTPS connector when it has one, else its plain one, on loopback when
// it listens on every interface. With HTTPS, tc trusts exactly the
// certificate of the broker's keystore (read from the configuration, as
// the broker reads it), whatever names it carries: the client talks to
// the broker on its own host, by an address its certificate rarely
// names.
func AdminTarget(cfg *config.Config) (url string, tc *tls.Config, err error) {
	h := cfg.HTTP
	where := h.File
	if where == "" {
		where = "the configuration"
	}
	if !h.Enabled {
		return "", nil, fmt.Errorf("%s starts no web server (http enabled: false)", where)
	}
	local := func(host string) string {
		switch host {
		case "", "0.0.0.0":
			return "127.0.0.1"
		case "::", "[::]":
			return "::1"
		}
		return host
	}
	s := h.HTTPS
	if s == nil {
		return "http://" + net.JoinHostPort(local(h.Host), strconv.Itoa(h.Port)), nil, nil
	}
	server, err := security.ServerTLS(&s.TLS, config.TLSOptions{})
	if err != nil {
		return "", nil, fmt.Errorf("https connector of %s: %w", where, err)
	}
	leaf := server.Certificates[0].Certificate[0]
	tc = &tls.Config{
		// Verified below: the server's certificate must be the keystore's.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], leaf) {
				return fmt.Errorf("the server's certificate is not the one in the keystore %s", s.TLS.KeyStore)
			}
			return nil
		},
	}
	return "https://" + net.JoinHostPort(local(s.Host), strconv.Itoa(s.Port)), tc, nil
}

// httpWebSocket builds the WebSocket endpoint of the web server's path
// /stomp or /mqtt (YAML http.websocket): the protocol's sessions, with
// the options and subprotocols of a ws:// connector without URI options
// (v12.stomp, v11.stomp, v10.stomp, stomp; mqttv3.1, mqtt; a client
// offering none is served the path's protocol). The sessions log in
// against the broker's authentication plugin and are checked by its
// authorization map as on any connector.
func httpWebSocket(proto string, log *slog.Logger) func(*engine.Engine) (httpserver.Endpoint, error) {
	return func(e *engine.Engine) (httpserver.Endpoint, error) {
		wo := ws.Options{Logger: log, DefaultSubprotocol: proto}
		var protos map[string]transport.HandlerFactory
		switch proto {
		case "stomp":
			so, err := stomp.ParseOptions(map[string]string{})
			if err != nil {
				return nil, err
			}
			so.Logger = log
			protos = ws.Subprotocols(stomp.NewServer(e, so).Handler, ws.STOMPSubprotocols...)
		case "mqtt":
			mo, err := mqtt.ParseOptions(map[string]string{})
			if err != nil {
				return nil, err
			}
			mo.Logger = log
			protos = ws.Subprotocols(mqtt.NewServer(e, mo).Handler, ws.MQTTSubprotocols...)
		default:
			return nil, fmt.Errorf("no WebSocket endpoint for protocol %q", proto)
		}
		srv, err := ws.NewServer(protos, wo)
		if err != nil {
			return nil, err
		}
		return srv, nil
	}
}

// JolokiaServices are the connector and store beans the Jolokia API
// serves for cfg: one ConnectorViewMBean per transport connector, and
// service=PersistenceAdapter for a KahaDB store.
func JolokiaServices(cfg *config.Config) ([]jolokia.Connector, *jolokia.PersistenceAdapter) {
	var cs []jolokia.Connector
	for _, t := range cfg.Transports {
		cc := t.ClusterClients
		cs = append(cs, jolokia.Connector{Name: t.Name, Protocol: connectorProtocol(t.Scheme),
			UpdateClusterClients: cc.Update, RebalanceClusterClients: cc.Rebalance,
			UpdateClusterClientsOnRemove: cc.UpdateOnRemove, UpdateClusterFilter: cc.Filter})
	}
	var pa *jolokia.PersistenceAdapter
	if cfg.Persistent && cfg.Persistence.Kind == config.KindKahaDB {
		dir := cfg.Persistence.KahaDB.Directory
		if dir == "" {
			dir = filepath.Join(cfg.DataDirectory, "kahadb") // as openKahaDB
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		pa = &jolokia.PersistenceAdapter{Dir: dir}
	}
	return cs, pa
}

// connectorProtocol is the protocol the connections of a connector with
// URI scheme s report (engine.ConnectionInfo.Protocol): "stomp+nio" is
// STOMP, "tcp", "nio", "ssl" and "auto" OpenWire. A WebSocket connector's
// connections report the protocol they speak, which the scheme does not
// say: "ws".
func connectorProtocol(s string) string {
	base, _, _ := strings.Cut(s, "+")
	switch base {
	case "tcp", "nio", "ssl", "auto":
		return "openwire"
	}
	return base
}
