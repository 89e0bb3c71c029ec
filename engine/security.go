package engine

import (
	"crypto/x509"
	"errors"
	"net"

	"wharf/engine/message"
)

// Credentials are what a client presents when it connects.
type Credentials struct {
	Username string
	Password string
	// Certs is the verified TLS client certificate chain, leaf first, or nil.
	Certs []*x509.Certificate
	// Remote is the client's address; Protocol names the protocol ("stomp").
	Remote   net.Addr
	Protocol string
	ClientID string
}

// Subject is an authenticated user and its groups.
type Subject struct {
	User   string
	Groups []string
}

// Authenticator turns credentials into a subject. Implementations are called
// from connection goroutines concurrently and must be safe for that.
type Authenticator interface {
	Authenticate(c Credentials) (*Subject, error)
}

// Action is what a subject wants to do to a destination; ActiveMQ's
// authorization map grants read, write and admin per destination pattern.
type Action uint8

// The authorization actions.
const (
	ActionRead  Action = iota // consume and browse
	ActionWrite               // send
	ActionAdmin               // create or remove destinations
)

func (a Action) String() string {
	switch a {
	case ActionWrite:
		return "write"
	case ActionAdmin:
		return "admin"
	}
	return "read"
}

// Authorizer decides whether a subject may act on a destination (temporary
// and advisory destinations included: the implementation sees their kind and
// name). Safe for concurrent use.
type Authorizer interface {
	Authorize(s *Subject, a Action, d message.Destination) error
}

// ErrNotAuthorized is wrapped by authorizers' errors; protocols map it to
// their security error (a STOMP ERROR, MQTT 0x05, AMQP unauthorized-access).
var ErrNotAuthorized = errors.New("engine: not authorized")

// ErrBadCredentials is wrapped by authenticators' errors for a wrong user or
// password.
var ErrBadCredentials = errors.New("engine: user name or password is invalid")

// AllowAll is the default security: every connection is accepted as an
// anonymous subject and may do anything. While it is in place the broker
// binds to loopback only, unless the operator declares the network trusted
// (config.Config.TrustedNetwork).
type AllowAll struct{}

// Authenticate accepts everyone.
func (AllowAll) Authenticate(c Credentials) (*Subject, error) {
	return &Subject{User: c.Username}, nil
}

// Authorize allows everything.
func (AllowAll) Authorize(*Subject, Action, message.Destination) error { return nil }

// Authenticate checks credentials without connecting: AMQP's SASL exchange
// authenticates before the client id is known. Safe from any goroutine.
func (e *Engine) Authenticate(cr Credentials) (*Subject, error) {
	return e.opts.Authenticator.Authenticate(cr)
}
