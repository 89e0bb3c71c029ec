package security

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
)

// Plugin is the security of one broker: cfg.Security's authentication
// plugin and authorization map. It satisfies broker.Security. Authenticate
// and Authorize are safe from any goroutine; Close once at shutdown.
type Plugin struct {
	log   *slog.Logger
	authn authenticator // nil: no authentication plugin
	authz *authzMap     // nil: no authorization plugin
}

// authenticator is one authentication plugin.
type authenticator interface {
	authenticate(c engine.Credentials) (*engine.Subject, error)
}

// New builds the security plugins cfg.Security configures. With neither
// part configured the Plugin accepts everyone and allows everything, as
// engine.AllowAll. With authentication only, every authenticated subject
// may do everything (ActiveMQ without authorizationPlugin). With
// authorization only, every client connects (as engine.AllowAll) but every
// operation is refused with "User is not authenticated.": ActiveMQ's
// AuthorizationBroker refuses a connection context without a security
// context, and without an authentication plugin none has one.
func New(cfg *config.Config, log *slog.Logger) (*Plugin, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Plugin{log: log}
	sec := cfg.Security
	if a := sec.Authentication; a != nil {
		var err error
		p.authn, err = newAuthenticator(a, log)
		if err != nil {
			return nil, fmt.Errorf("%s (line %d): %w", a.Kind, a.Line, err)
		}
	}
	if sec.Authorization != nil {
		var err error
		p.authz, err = newAuthzMap(sec.Authorization)
		if err != nil {
			return nil, fmt.Errorf("authorizationMap: %w", err)
		}
		if p.authn == nil {
			log.Warn("authorization without authentication: every operation is refused (User is not authenticated.), as in ActiveMQ")
		}
	}
	return p, nil
}

func newAuthenticator(a *config.Authentication, log *slog.Logger) (authenticator, error) {
	conf := a.Configuration
	if conf == "" {
		conf = "activemq-domain"
	}
	switch a.Kind {
	case config.AuthSimple:
		return newSimple(a), nil
	case config.AuthJAAS, config.AuthJAASCertificate, config.AuthJAASDual:
	default:
		return nil, fmt.Errorf("%w %q", ErrUnknownKind, a.Kind)
	}
	b, err := newJAASBuilder(a.LoginConfig, log)
	if err != nil {
		return nil, err
	}
	c, err := b.context(conf)
	if err != nil {
		return nil, err
	}
	switch a.Kind {
	case config.AuthJAAS:
		return &jaasPassword{ctx: c}, nil
	case config.AuthJAASCertificate:
		return &jaasCertificate{ctx: c}, nil
	}
	sslConf := a.SSLConfiguration
	if sslConf == "" {
		sslConf = "activemq-ssl-domain"
	}
	sc, err := b.context(sslConf)
	if err != nil {
		return nil, err
	}
	return &jaasDual{pw: &jaasPassword{ctx: c}, cert: &jaasCertificate{ctx: sc}}, nil
}

// Authenticate checks c with the configured authentication plugin. The
// error wraps engine.ErrBadCredentials and carries ActiveMQ's text (see
// the plugins). Safe from any goroutine.
func (p *Plugin) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	if p.authn == nil {
		return &engine.Subject{User: c.Username}, nil
	}
	return p.authn.authenticate(c)
}

// Authorize decides whether s may do a on d, as ActiveMQ's
// AuthorizationBroker does (see authzMap for how the map decides). The
// engine asks ActionWrite on each send (and producer creation), ActionRead
// on each consumer or browser (and on each destination a wildcard
// consumer is attached to), ActionAdmin when an operation creates a
// destination that does not exist yet. A refusal wraps
// engine.ErrNotAuthorized and carries ActiveMQ's text: "User u is not
// authorized to write to: queue://q" ("read from", "create"); the user is
// "null" for a subject without a name (a JAAS guest who gave none), as
// Java prints it. A nil s is refused with "User is not authenticated.".
// Safe from any goroutine; an allowed decision on a cached destination
// allocates nothing.
func (p *Plugin) Authorize(s *engine.Subject, a engine.Action, d message.Destination) error {
	if p.authz == nil {
		return nil
	}
	if s == nil || p.authn == nil {
		return engine.WithClientText(fmt.Errorf("%w: not authenticated", engine.ErrNotAuthorized), "User is not authenticated.")
	}
	set := p.authz.aclFor(a, d)
	if set == nil || set.allows(s) {
		return nil
	}
	return notAuthorized(s, a, d)
}

func notAuthorized(s *engine.Subject, a engine.Action, d message.Destination) error {
	user := s.User
	if user == "" {
		user = "null"
	}
	verb := "read from"
	switch a {
	case engine.ActionWrite:
		verb = "write to"
	case engine.ActionAdmin:
		verb = "create"
	}
	text := "User " + user + " is not authorized to " + verb + ": " + activemqDestString(d)
	return engine.WithClientText(fmt.Errorf("%w: %s %s %s", engine.ErrNotAuthorized, user, a, d), text)
}

// activemqDestString is ActiveMQDestination.toString: the qualified name
// ("queue://a"), but a composite's bare physical name ("a,b").
func activemqDestString(d message.Destination) string {
	if d.IsComposite() {
		return d.Name
	}
	return d.String()
}

// Close releases the plugin. Nothing runs in the background (files are
// checked for changes on login), so it only returns nil.
func (p *Plugin) Close() error { return nil }

// nullName is how Java prints a null user name.
func nullName(u string) string {
	if u == "" {
		return "null"
	}
	return u
}

// badCredentials is a refused login with ActiveMQ's text.
func badCredentials(user, text string, cause error) error {
	err := fmt.Errorf("%w: user %q", engine.ErrBadCredentials, user)
	if cause != nil {
		err = fmt.Errorf("%w: user %q: %w", engine.ErrBadCredentials, user, cause)
	}
	return engine.WithClientText(err, text)
}

// simple is simpleAuthenticationPlugin (SimpleAuthenticationBroker).
type simple struct {
	passwords map[string]string
	groups    map[string][]string
	anonymous bool
	anonUser  string
	anonGroup string
}

func newSimple(a *config.Authentication) *simple {
	s := &simple{passwords: map[string]string{}, groups: map[string][]string{},
		anonymous: a.AnonymousAccessAllowed, anonUser: a.AnonymousUser, anonGroup: a.AnonymousGroup}
	if s.anonUser == "" {
		s.anonUser = "anonymous"
	}
	if s.anonGroup == "" {
		s.anonGroup = "anonymous"
	}
	for _, u := range a.Users {
		s.passwords[u.Username] = u.Password
		var gs []string
		for _, g := range u.Groups {
			gs = appendUnique(gs, g)
		}
		s.groups[u.Username] = gs
	}
	return s
}

// authenticate is SimpleAuthenticationBroker.authenticate: with
// anonymousAccessAllowed, no user name and no password is the anonymous
// user in the anonymous group; anything else must be a configured user
// with its exact password, else "User name [x] or password is invalid."
// (x is "null" when no user name was given, as Java prints it).
func (s *simple) authenticate(c engine.Credentials) (*engine.Subject, error) {
	if s.anonymous && c.Username == "" && c.Password == "" {
		return &engine.Subject{User: s.anonUser, Groups: []string{s.anonGroup}}, nil
	}
	pw, ok := s.passwords[c.Username]
	if !ok || c.Username == "" || subtle.ConstantTimeCompare([]byte(pw), []byte(c.Password)) != 1 {
		return nil, badCredentials(c.Username, "User name ["+nullName(c.Username)+"] or password is invalid.", nil)
	}
	return &engine.Subject{User: c.Username, Groups: s.groups[c.Username]}, nil
}

// jaasPassword is jaasAuthenticationPlugin (JaasAuthenticationBroker): the
// entry's modules with the user name and password. The subject's name is
// the name the client gave (even when a GuestLoginModule let it in as the
// guest), as JaasSecurityContext's.
type jaasPassword struct{ ctx *jaasContext }

func (j *jaasPassword) authenticate(c engine.Credentials) (*engine.Subject, error) {
	p, err := j.ctx.login(&loginInput{user: c.Username, password: c.Password})
	if err != nil {
		return nil, badCredentials(c.Username, "User name ["+nullName(c.Username)+"] or password is invalid.", err)
	}
	return &engine.Subject{User: c.Username, Groups: p.groups, UserPrincipals: p.users}, nil
}

// jaasCertificate is jaasCertificateAuthenticationPlugin
// (JaasCertificateAuthenticationBroker): the entry's modules with the
// client certificate chain. The subject's name is the certificate's
// subject DN as Java prints it, as ActiveMQ 5.17's
// JaasCertificateSecurityContext.getUserName() returns
// certs[0].getSubjectDN().getName(): refusals name the DN ("User CN=client1,
// OU=Wharf, O=Test, C=FR is not authorized to read from: ..."), checked
// against ActiveMQ by conformance TestTLSCertificateUser. The mapped user
// is the subject's UserPrincipal; its groups decide.
type jaasCertificate struct{ ctx *jaasContext }

func (j *jaasCertificate) authenticate(c engine.Credentials) (*engine.Subject, error) {
	if len(c.Certs) == 0 {
		return nil, badCredentials(c.Username, "Unable to authenticate transport without SSL certificate.", errNoCertificate)
	}
	p, err := j.ctx.login(&loginInput{user: c.Username, password: c.Password, certs: c.Certs, certLogin: true})
	if err != nil {
		// Java appends the LoginException's message after a space.
		return nil, badCredentials(c.Username, "User name ["+nullName(c.Username)+"] or password is invalid. "+loginMessage(err), err)
	}
	dn, err := javaDN(c.Certs[0])
	if err != nil {
		// The login module read the same DN a moment ago.
		return nil, badCredentials(c.Username, "User name ["+nullName(c.Username)+"] or password is invalid. "+err.Error(), err)
	}
	return &engine.Subject{User: dn, Groups: p.groups, UserPrincipals: p.users}, nil
}

var errNoCertificate = errors.New("security: no client certificate")

// jaasDual is jaasDualAuthenticationPlugin (JaasDualAuthenticationBroker):
// the certificate login for connections on a TLS connector (or carrying a
// certificate, AMQ-5943), the password login otherwise.
type jaasDual struct {
	pw   *jaasPassword
	cert *jaasCertificate
}

func (j *jaasDual) authenticate(c engine.Credentials) (*engine.Subject, error) {
	if c.TLS || len(c.Certs) > 0 {
		return j.cert.authenticate(c)
	}
	return j.pw.authenticate(c)
}
