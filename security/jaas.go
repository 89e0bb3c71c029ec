package security

import (
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// The login module classes Wharf implements.
const (
	classProperties = "org.apache.activemq.jaas.PropertiesLoginModule"
	classTextFileDN = "org.apache.activemq.jaas.TextFileCertificateLoginModule"
	classGuest      = "org.apache.activemq.jaas.GuestLoginModule"
)

// loginInput is what JAAS callbacks hand a login module: the user name and
// password (JassCredentialCallbackHandler) or the certificate chain
// (JaasCertificateCallbackHandler). Go has no null: an empty user name or
// password is taken as Java's null (what clients that send none give
// ActiveMQ).
type loginInput struct {
	user, password string
	certs          []*x509.Certificate
	// certLogin is set for the certificate plugins' logins, whose callback
	// handler answers only CertificateCallback.
	certLogin bool
}

// principals are what a successful login adds to the JAAS Subject:
// UserPrincipal and GroupPrincipal names.
type principals struct {
	users, groups []string
}

// loginModule is one configured module: login decides (ok false with a nil
// error is "ignore this module", as LoginModule.login returning false);
// the principals are what commit would add.
type loginModule interface {
	login(in *loginInput) (ok bool, p principals, err error)
}

// jaasModule is a module with its control flag.
type jaasModule struct {
	flag  controlFlag
	class string
	mod   loginModule
}

// jaasContext is a login.config entry ready to run: javax.security.auth.
// login.LoginContext over its modules. Safe from any goroutine: modules
// keep no per-login state (each login's state lives on its stack).
type jaasContext struct {
	name    string
	modules []jaasModule
}

// login runs the modules as LoginContext.login does (the "login" phase of
// LoginContext.invoke, then commit of every module whose login succeeded):
//   - a sufficient module that succeeds ends the login at once, successful,
//     if no required or requisite module failed before it;
//   - a requisite module that fails ends it at once, failed;
//   - a required module that fails fails the login, but the rest still run;
//   - optional and sufficient failures matter only if nothing succeeds;
//   - a login in which every module was ignored fails ("Login Failure: all
//     modules ignored").
//
// The error is the first required failure, else the first other failure:
// the LoginException's message ActiveMQ appends to some texts.
func (c *jaasContext) login(in *loginInput) (principals, error) {
	var firstRequired, firstError error
	success := false
	var committed []principals
	for _, m := range c.modules {
		ok, p, err := m.mod.login(in)
		if err == nil && ok {
			committed = append(committed, p)
			if m.flag == flagSufficient && firstRequired == nil {
				return merge(committed), nil
			}
			success = true
			continue
		}
		if err == nil {
			continue // ignored
		}
		switch m.flag {
		case flagRequisite:
			if firstRequired == nil {
				firstRequired = err
			}
			return principals{}, firstRequired
		case flagRequired:
			if firstRequired == nil {
				firstRequired = err
			}
		default:
			if firstError == nil {
				firstError = err
			}
		}
	}
	switch {
	case firstRequired != nil:
		return principals{}, firstRequired
	case !success && firstError != nil:
		return principals{}, firstError
	case !success:
		return principals{}, fmt.Errorf("%w: Login Failure: all modules ignored", ErrLoginFailed)
	}
	return merge(committed), nil
}

func merge(ps []principals) principals {
	if len(ps) == 1 {
		return ps[0]
	}
	var out principals
	for _, p := range ps {
		for _, u := range p.users {
			out.users = appendUnique(out.users, u)
		}
		for _, g := range p.groups {
			out.groups = appendUnique(out.groups, g)
		}
	}
	return out
}

// loginFailure is a LoginException with its message.
func loginFailure(msg string) error { return fmt.Errorf("%w: %s", ErrLoginFailed, msg) }

// loginMessage is the LoginException's getMessage(): the text after the
// sentinel.
func loginMessage(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, ErrLoginFailed.Error()+": "); ok {
		return rest
	}
	return s
}

// jaasBuilder builds jaasContexts from one login.config, sharing properties
// files by absolute path.
type jaasBuilder struct {
	cfg     *loginConfig
	baseDir string
	log     *slog.Logger
	files   map[string]*propsFile
}

// newJAASBuilder reads and parses the login.config at path. System
// properties known to ${...} expansion: java.security.auth.login.config
// (the file), activemq.conf (its directory, as bin/activemq sets
// -Dactivemq.conf to the directory holding login.config), activemq.base
// and activemq.home (that directory's parent), user.home, user.dir and
// file.separator.
func newJAASBuilder(path string, log *slog.Logger) (*jaasBuilder, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no login.config (java.security.auth.login.config) for the JAAS plugin", ErrNoLoginEntry)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("login.config: %w", err)
	}
	dir := filepath.Dir(abs)
	props := map[string]string{
		"java.security.auth.login.config": abs,
		"activemq.conf":                   dir,
		"activemq.base":                   filepath.Dir(dir),
		"activemq.home":                   filepath.Dir(dir),
		"file.separator":                  "/",
	}
	if h, err := os.UserHomeDir(); err == nil {
		props["user.home"] = h
	}
	if wd, err := os.Getwd(); err == nil {
		props["user.dir"] = wd
	}
	cfg, err := parseLoginConfig(abs, b, func(k string) (string, bool) {
		v, ok := props[k]
		return v, ok
	})
	if err != nil {
		return nil, err
	}
	return &jaasBuilder{cfg: cfg, baseDir: dir, log: log, files: map[string]*propsFile{}}, nil
}

// context builds the entry name's login context.
func (b *jaasBuilder) context(name string) (*jaasContext, error) {
	e, ok := b.cfg.entries[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w: No LoginModules configured for %s", b.cfg.file, ErrNoLoginEntry, name)
	}
	if len(e.modules) == 0 {
		return nil, fmt.Errorf("%s:%d: %w: No LoginModules configured for %s", b.cfg.file, e.line, ErrNoLoginEntry, name)
	}
	c := &jaasContext{name: name}
	var errs []error
	for _, m := range e.modules {
		mod, err := b.module(name, m)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s:%d: %w", b.cfg.file, m.line, err))
			continue
		}
		c.modules = append(c.modules, jaasModule{flag: m.flag, class: m.class, mod: mod})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func (b *jaasBuilder) module(entry string, m moduleEntry) (loginModule, error) {
	// debug=true logs each decision at Info. ActiveMQ's modules log them
	// at DEBUG, which its log4j configuration must also enable for their
	// category; Wharf has no per-category levels, and an operator who
	// writes debug=true wants to see them at the default level.
	debug := strings.EqualFold(m.options["debug"], "true")
	log := b.log.With("jaas_entry", entry, "module", shortClass(m.class))
	known := map[string]bool{"debug": true}
	var mod loginModule
	switch m.class {
	case classProperties:
		for _, k := range []string{propUserFile, propGroupFile, "reload", "decrypt", "algorithm", "baseDir"} {
			known[k] = true
		}
		users, err := b.file(m, propUserFile, "user")
		if err != nil {
			return nil, err
		}
		groups, err := b.file(m, propGroupFile, "group")
		if err != nil {
			return nil, err
		}
		mod = &propertiesModule{users: users, groups: groups, debug: debug, log: log}
	case classTextFileDN:
		for _, k := range []string{dnUserFile, dnGroupFile, "reload", "decrypt", "algorithm", "baseDir"} {
			known[k] = true
		}
		users, err := b.file(m, dnUserFile, "")
		if err != nil {
			return nil, err
		}
		groups, err := b.file(m, dnGroupFile, "")
		if err != nil {
			return nil, err
		}
		mod = &textFileDNModule{users: users, groups: groups, debug: debug, log: log}
	case classGuest:
		for _, k := range []string{guestUser, guestGroup, "credentialsInvalidate"} {
			known[k] = true
		}
		g := &guestModule{user: "guest", group: "guests", debug: debug, log: log,
			credentialsInvalidate: strings.EqualFold(m.options["credentialsInvalidate"], "true")}
		if v, ok := m.options[guestUser]; ok {
			g.user = v
		}
		if v, ok := m.options[guestGroup]; ok {
			g.group = v
		}
		mod = g
	default:
		return nil, fmt.Errorf("%w %s (supported: %s, %s, %s)", ErrUnsupportedLoginModule, m.class, classProperties, classTextFileDN, classGuest)
	}
	for k := range m.options {
		if !known[k] {
			// Java hands options to the module, which ignores those
			// it does not know; say so rather than stay silent.
			log.Warn("login module option ignored", "option", k, "line", m.line)
		}
	}
	if debug {
		log.Info("initialized debug", "line", m.line)
	}
	return mod, nil
}

func shortClass(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 {
		return c[i+1:]
	}
	return c
}

// The module options naming files.
const (
	propUserFile  = "org.apache.activemq.jaas.properties.user"
	propGroupFile = "org.apache.activemq.jaas.properties.group"
	dnUserFile    = "org.apache.activemq.jaas.textfiledn.user"
	dnGroupFile   = "org.apache.activemq.jaas.textfiledn.group"
	guestUser     = "org.apache.activemq.jaas.guest.user"
	guestGroup    = "org.apache.activemq.jaas.guest.group"
)

// file resolves and loads a module's file as PropertiesLoader.FileNameKey
// does: the option's value (else fallback) relative to the baseDir option,
// else to login.config's directory. A TextFileCertificateLoginModule
// without the option names the directory itself, which ActiveMQ fails to
// read (logged, empty): Wharf gives it an empty file with a warning.
// Other files must exist and parse when New runs (DEVIATION: ActiveMQ
// loads them on the first login and logs a failure then; Wharf refuses to
// start, which says what is wrong before a client is refused).
func (b *jaasBuilder) file(m moduleEntry, option, fallback string) (*propsFile, error) {
	name, ok := m.options[option]
	if !ok {
		name = fallback
	}
	base := b.baseDir
	if d, ok := m.options["baseDir"]; ok {
		base = d
	}
	log := b.log.With("jaas_module", shortClass(m.class))
	if name == "" {
		log.Warn("login module has no file option; it is empty", "option", option, "line", m.line)
		f := &propsFile{path: "", log: log}
		f.snap.Store(newSnapshot(&properties{values: map[string]string{}}, log))
		return f, nil
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(base, name)
	}
	path = filepath.Clean(path)
	if f, ok := b.files[path]; ok {
		return f, nil
	}
	decrypt := strings.EqualFold(m.options["decrypt"], "true")
	if decrypt {
		if alg, ok := m.options["algorithm"]; ok && alg != "PBEWithMD5AndDES" {
			return nil, fmt.Errorf("%w: algorithm %q (only PBEWithMD5AndDES)", ErrDecrypt, alg)
		}
	}
	f := &propsFile{path: path, reload: strings.EqualFold(m.options["reload"], "true"), decrypt: decrypt, log: log}
	if err := f.load(); err != nil {
		return nil, fmt.Errorf("%s=%q: %w", option, name, err)
	}
	b.files[path] = f
	return f, nil
}

// propertiesModule is PropertiesLoginModule: users.properties
// (user=password) and groups.properties (group=user1,user2).
type propertiesModule struct {
	users, groups *propsFile
	debug         bool
	log           *slog.Logger
}

func (m *propertiesModule) login(in *loginInput) (bool, principals, error) {
	if in.certLogin {
		// The certificate callback handler cannot answer NameCallback:
		// an UnsupportedCallbackException without message, hence Java's
		// "null".
		return false, principals{}, loginFailure("null not available to obtain information from user")
	}
	users := m.users.obtain()
	groups := m.groups.obtain()
	if in.user == "" {
		return m.fail(in, "user name is null")
	}
	pw, ok := users.props.get(in.user)
	if !ok {
		return m.fail(in, "User does exist") // sic, ActiveMQ's text
	}
	if subtle.ConstantTimeCompare([]byte(pw), []byte(in.password)) != 1 {
		return m.fail(in, "Password does not match")
	}
	p := principals{users: []string{in.user}, groups: groups.groupsOf[in.user]}
	if m.debug {
		m.log.Info("login", "user", in.user, "result", true, "groups", p.groups)
	}
	return true, p, nil
}

func (m *propertiesModule) fail(in *loginInput, reason string) (bool, principals, error) {
	if m.debug {
		m.log.Info("login", "user", in.user, "result", false, "reason", reason)
	}
	return false, principals{}, loginFailure(reason)
}

// textFileDNModule is TextFileCertificateLoginModule: a users file of
// user=DN (or user=/regexp/) and a groups file as PropertiesLoginModule's.
type textFileDNModule struct {
	users, groups *propsFile
	debug         bool
	log           *slog.Logger
}

func (m *textFileDNModule) login(in *loginInput) (bool, principals, error) {
	// The password callback handler leaves CertificateCallback unanswered
	// (no certificates), like a certificate login without one.
	if !in.certLogin || len(in.certs) == 0 {
		return false, principals{}, loginFailure("Client certificates not found. Cannot authenticate.")
	}
	users := m.users.obtain()
	groups := m.groups.obtain()
	dn, err := javaDN(in.certs[0])
	if err != nil {
		return false, principals{}, loginFailure("cannot read the certificate subject: " + err.Error())
	}
	user, ok := users.userOfDN[dn]
	if !ok {
		for _, r := range users.dnRegexps {
			if r.re.MatchString(dn) {
				user, ok = r.user, true
				break
			}
		}
	}
	if !ok {
		if m.debug {
			m.log.Info("login", "dn", dn, "result", false)
		}
		return false, principals{}, loginFailure("No user for client certificate: " + dn)
	}
	if m.debug {
		m.log.Info("certificate for user", "user", user, "dn", dn)
	}
	return true, principals{users: []string{user}, groups: groups.groupsOf[user]}, nil
}

// guestModule is GuestLoginModule: everyone logs in as the guest user in
// the guest group; with credentialsInvalidate, a client that gives a
// password is ignored by this module (login returns false).
type guestModule struct {
	user, group           string
	credentialsInvalidate bool
	debug                 bool
	log                   *slog.Logger
}

func (m *guestModule) login(in *loginInput) (bool, principals, error) {
	// With the certificate callback handler the PasswordCallback is
	// unsupported, which GuestLoginModule swallows: a guest.
	if m.credentialsInvalidate && !in.certLogin && in.password != "" {
		if m.debug {
			m.log.Info("guest login failing (credentialsInvalidate=true) on presence of a password")
		}
		return false, principals{}, nil
	}
	if m.debug {
		m.log.Info("guest login", "result", true)
	}
	return true, principals{users: []string{m.user}, groups: []string{m.group}}, nil
}
