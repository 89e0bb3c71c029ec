package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// HTTP is the broker's web server (protocols/http: health, metrics and the
// management API), as ActiveMQ users configure theirs: the jetty.xml that
// activemq.xml imports (<import resource="jetty.xml"/>) or YAML http.
type HTTP struct {
	// Enabled starts the server (YAML http.enabled; wharf run --http=false
	// turns it off whatever the file says).
	Enabled bool
	// Host and Port are where it listens: jetty.xml's jettyPort bean
	// (org.apache.activemq.web.WebConsolePort host and port), or a
	// literal host or port on its plain ServerConnector.
	Host string
	Port int
	// Authenticate is the Constraint beans' authenticate property: false
	// (in any of them) serves every request without a login, which is
	// allowed on loopback only.
	Authenticate bool
	// Realm is the users file of the HashLoginService bean (its config
	// property: jetty-realm.properties, "user: password, role..."); ""
	// when none is configured, in which case the broker's authentication
	// plugin checks the logins, if there is one.
	Realm string
	// RealmName is the HashLoginService's name, sent in the
	// WWW-Authenticate challenge (default ActiveMQRealm, as jetty.xml).
	RealmName string
	// HTTPS is jetty.xml's SecureConnector (a ServerConnector built with an
	// SslContextFactory), nil when there is none. It serves the same
	// handlers as the plain connector.
	HTTPS *HTTPS
	// WebSocket lists the protocols served over WebSocket on the web
	// server's own ports, each at its path: "stomp" at /stomp, "mqtt" at
	// /mqtt (YAML http.websocket, <broker wharf:httpWebSocket="stomp,mqtt">).
	// Empty (the default) serves none: ActiveMQ's port 8161 serves no
	// WebSocket, and a configuration's transport connectors stay the list
	// of protocols the broker serves unless this adds to it.
	WebSocket []string
	// MaxDestinationSeries caps the destinations /metrics reports one by
	// one (each is a set of series): past it the rest are left out and
	// the server logs it once.
	MaxDestinationSeries int
	// File and Line are where the server is configured: jetty.xml or the
	// YAML file ("" and 0 for the defaults).
	File string
	Line int
}

// HTTPS is a TLS listener of the web server.
type HTTPS struct {
	// Host and Port: the SecureConnector's host and port properties. A
	// connector without a host listens on every interface, as Jetty's
	// ServerConnector does.
	Host string
	Port int
	// TLS is the SslContextFactory: keyStorePath, keyStorePassword,
	// keyManagerPassword, keyStoreType (default "jks", as Jetty's),
	// trustStorePath, trustStorePassword and trustStoreType.
	TLS SSLContext
}

// Loopback reports whether the plain listener binds a loopback address.
func (h *HTTP) Loopback() bool { return isLoopback(h.Host) }

// Loopback reports whether the TLS listener binds a loopback address.
func (h *HTTPS) Loopback() bool { return isLoopback(h.Host) }

// DefaultMaxDestinationSeries is HTTP.MaxDestinationSeries's default:
// enough for most brokers, small enough that a broker with tens of
// thousands of destinations does not swamp a Prometheus server.
const DefaultMaxDestinationSeries = 1000

// defaultHTTP is jetty.xml's settings as ActiveMQ ships it: 127.0.0.1:8161
// (the jettyPort bean), login required, realm ActiveMQRealm. Without a
// jetty.xml (or YAML http.realm) there are no realm users.
func defaultHTTP() HTTP {
	return HTTP{
		Enabled:              true,
		Host:                 "127.0.0.1", // jetty.xml jettyPort host
		Port:                 8161,        // jetty.xml jettyPort port
		Authenticate:         true,        // jetty.xml Constraint authenticate
		RealmName:            "ActiveMQRealm",
		MaxDestinationSeries: DefaultMaxDestinationSeries,
		WebSocket:            nil, // ActiveMQ's 8161 serves no WebSocket: the connectors list what is served
	}
}

// validateHTTP checks the web server's settings.
func (l *loader) validateHTTP() {
	h := &l.cfg.HTTP
	if !h.Enabled {
		return
	}
	if h.Port < 0 || h.Port > 65535 {
		l.fail("http.port", "%d is not a port (0..65535)", h.Port)
	}
	if h.Host == "" {
		l.fail("http.host", "must not be empty")
	}
	if h.MaxDestinationSeries < 0 {
		l.fail("http.max_destination_series", "%d must not be negative", h.MaxDestinationSeries)
	}
	l.validateHTTPWebSocket()
	if s := h.HTTPS; s != nil {
		if s.Port < 0 || s.Port > 65535 {
			l.fail("http.https.port", "%d is not a port (0..65535)", s.Port)
		}
		if s.TLS.KeyStore == "" {
			l.fail("http.https.key_store", "an HTTPS connector needs a key store (keyStorePath)")
		}
		if s.Port != 0 && s.Port == h.Port && (s.Host == h.Host || s.Host == "" || h.Host == "0.0.0.0") {
			l.fail("http.https.port", "%d is also the HTTP port", s.Port)
		}
		for _, t := range []*string{&s.TLS.KeyStoreType, &s.TLS.TrustStoreType} {
			*t = strings.ToLower(strings.TrimSpace(*t))
			if *t != "jks" && *t != "pkcs12" {
				l.fail("http.https", "store type %q: want jks or pkcs12", *t)
			}
		}
	}
}

// besideFile finds a file a configuration names: p itself when it exists
// or is absolute, else p relative to dir (the directory of the file that names it), else
// the file of p's name in dir. The last rule finds
// ${activemq.conf}/jetty-realm.properties beside jetty.xml when
// activemq.conf is not set (it defaults to ./conf), as it is beside it in
// ActiveMQ's conf/.
func besideFile(p, dir string) (string, error) {
	p = strings.TrimPrefix(strings.TrimSpace(p), "file:")
	if p == "" {
		return "", errors.New("the path is empty")
	}
	_, err := os.Stat(p)
	if err == nil {
		return p, nil
	}
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("cannot read %q: %v", p, unwrapPath(err))
	}
	for _, alt := range []string{filepath.Join(dir, p), filepath.Join(dir, filepath.Base(p))} {
		if _, err := os.Stat(alt); err == nil {
			return alt, nil
		}
	}
	return "", fmt.Errorf("cannot read %q (nor %q beside %s): %v", p, filepath.Base(p), dir, unwrapPath(err))
}

// setFilePath sets a path read with besideFile, relative to the file being
// read.
func (l *loader) setFilePath(dst *string, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	p, err := besideFile(s, filepath.Dir(l.file))
	if err != nil {
		l.bad(v, s, err.Error())
		return
	}
	*dst = p
}

// HTTPWebSocketProtocols are the protocols the web server can serve over
// WebSocket, each at the path "/" + its name.
var HTTPWebSocketProtocols = []string{"stomp", "mqtt"}

// validateHTTPWebSocket checks http.websocket: known protocols, each once,
// and, as for a transport connector, authentication (or a trusted
// network) when the web server listens elsewhere than on loopback: the
// WebSocket paths are not behind the web server's login, the protocols
// log in as on their own connectors.
func (l *loader) validateHTTPWebSocket() {
	h := &l.cfg.HTTP
	seen := map[string]bool{}
	for _, p := range h.WebSocket {
		switch {
		case !slices.Contains(HTTPWebSocketProtocols, p):
			l.fail("http.websocket", "%q is not a protocol the web server serves over WebSocket (want %s)", p, strings.Join(HTTPWebSocketProtocols, ", "))
		case seen[p]:
			l.fail("http.websocket", "%q is listed twice", p)
		}
		seen[p] = true
	}
	if len(h.WebSocket) == 0 || l.cfg.TrustedNetwork || l.cfg.Security.Authentication != nil {
		return
	}
	host := ""
	switch {
	case !h.Loopback():
		host = h.Host
	case h.HTTPS != nil && !h.HTTPS.Loopback():
		host = h.HTTPS.Host
	default:
		return
	}
	l.fail("http.websocket", "serving %s over WebSocket on the web server listening on %q needs authentication: %s. "+
		"Otherwise listen on 127.0.0.1, or, only on a network you trust with the broker, let anyone who can reach the port connect without credentials: "+
		"wharf run --trusted-network, <broker xmlns:wharf=%q wharf:trustedNetwork=\"true\">, or trusted_network: true in YAML",
		strings.Join(h.WebSocket, " and "), host, l.authAdvice(), WharfNS)
}
