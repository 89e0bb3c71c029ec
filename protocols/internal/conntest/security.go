package conntest

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"strings"
	"sync"

	"wharf/engine"
	"wharf/engine/message"
)

// TLSConn is a Conn that reports a completed TLS handshake, as the
// connections of TLS listeners do (transport.TLSConn). With no Certs the
// client sent no certificate.
type TLSConn struct {
	Conn
	Certs []*x509.Certificate
}

// ConnectionState is a handshake whose verified chain is Certs.
func (c *TLSConn) ConnectionState() tls.ConnectionState {
	st := tls.ConnectionState{HandshakeComplete: true, Version: tls.VersionTLS13}
	if len(c.Certs) > 0 {
		st.PeerCertificates = c.Certs
		st.VerifiedChains = [][]*x509.Certificate{c.Certs}
	}
	return st
}

// Cert is a certificate with subject CN=cn, enough for an authenticator
// that maps subjects to users.
func Cert(cn string) *x509.Certificate {
	return &x509.Certificate{Subject: pkix.Name{CommonName: cn}}
}

// Auth is an Authenticator and Authorizer for protocol tests. It accepts
// user "user" with password "secret", any certificate whose CN is "cert-user"
// (as that user, with no password), and an empty user and password when
// Anonymous is set. It refuses every action on a destination whose name
// starts with "secret", with ActiveMQ's texts. It records the credentials
// it saw. Safe from any goroutine.
type Auth struct {
	Anonymous bool

	mu   sync.Mutex
	seen []engine.Credentials
}

// Authenticate checks c as described on Auth.
func (a *Auth) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	a.mu.Lock()
	a.seen = append(a.seen, c)
	a.mu.Unlock()
	switch {
	case len(c.Certs) > 0 && c.Certs[0].Subject.CommonName == "cert-user" && c.Password == "":
		return &engine.Subject{User: "cert-user"}, nil
	case c.Username == "user" && c.Password == "secret":
		return &engine.Subject{User: "user"}, nil
	case c.Username == "" && c.Password == "" && a.Anonymous:
		return &engine.Subject{User: "anonymous"}, nil
	}
	return nil, engine.WithClientText(fmt.Errorf("%w: %q", engine.ErrBadCredentials, c.Username),
		"User name ["+c.Username+"] or password is invalid.")
}

// Authorize refuses destinations named secret*.
func (a *Auth) Authorize(s *engine.Subject, act engine.Action, d message.Destination) error {
	if !strings.HasPrefix(d.Name, "secret") {
		return nil
	}
	verb := map[engine.Action]string{engine.ActionRead: "read from", engine.ActionWrite: "write to", engine.ActionAdmin: "create"}[act]
	return engine.WithClientText(fmt.Errorf("%w: %s %s", engine.ErrNotAuthorized, act, d),
		"User "+s.User+" is not authorized to "+verb+": "+AMQName(d))
}

// Seen returns the credentials Authenticate was called with, in order.
func (a *Auth) Seen() []engine.Credentials {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]engine.Credentials(nil), a.seen...)
}

// AMQName is ActiveMQDestination.toString: queue://x, topic://x,
// temp-queue://x, temp-topic://x.
func AMQName(d message.Destination) string {
	switch d.Type {
	case message.Topic:
		return "topic://" + d.Name
	case message.TempQueue:
		return "temp-queue://" + d.Name
	case message.TempTopic:
		return "temp-topic://" + d.Name
	}
	return "queue://" + d.Name
}
