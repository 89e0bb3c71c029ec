package security

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/config"
)

// recorder is a slog.Handler that keeps every record for assertions.
type recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.recs = append(r.recs, rec.Clone())
	r.mu.Unlock()
	return nil
}
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// lines renders each record as "LEVEL msg k=v k=v".
func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.recs {
		var sb strings.Builder
		sb.WriteString(rec.Level.String() + " " + rec.Message)
		rec.Attrs(func(a slog.Attr) bool {
			sb.WriteString(" " + a.Key + "=" + a.Value.String())
			return true
		})
		out = append(out, sb.String())
	}
	return out
}

// copyJAAS copies testdata/jaas into a temporary directory (tests rewrite
// the files) and returns the login.config path there.
func copyJAAS(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir("testdata/jaas")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata/jaas", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "login.config")
}

func newPlugin(t *testing.T, sec config.Security, log *slog.Logger) *Plugin {
	t.Helper()
	p, err := New(&config.Config{Security: sec}, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// checkRefused asserts err is a refused login with ActiveMQ's text.
func checkRefused(t *testing.T, err error, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("login accepted, want refused with %q", text)
	}
	if !errors.Is(err, engine.ErrBadCredentials) {
		t.Errorf("error %v does not wrap engine.ErrBadCredentials", err)
	}
	if got := engine.ClientText(err); got != text {
		t.Errorf("client text = %q, want %q", got, text)
	}
}

func checkSubject(t *testing.T, s *engine.Subject, err error, user string, groups, users []string) {
	t.Helper()
	if err != nil {
		t.Fatalf("login refused: %v", err)
	}
	if s.User != user {
		t.Errorf("user = %q, want %q", s.User, user)
	}
	g := slices.Clone(s.Groups)
	slices.Sort(g)
	slices.Sort(groups)
	if !slices.Equal(g, groups) {
		t.Errorf("groups = %q, want %q", g, groups)
	}
	u := slices.Clone(s.UserPrincipals)
	slices.Sort(u)
	slices.Sort(users)
	if !slices.Equal(u, users) {
		t.Errorf("user principals = %q, want %q", u, users)
	}
}

func TestSecurityNoneAllowsAll(t *testing.T) {
	p := newPlugin(t, config.Security{}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "x", Password: "y"})
	if err != nil || s.User != "x" {
		t.Fatalf("Authenticate = %v, %v; want subject x", s, err)
	}
	if err := p.Authorize(s, engine.ActionAdmin, queue("anything")); err != nil {
		t.Fatalf("Authorize = %v, want nil", err)
	}
}

func seedSimple(anon bool) *config.Authentication {
	return &config.Authentication{
		Kind: config.AuthSimple,
		Users: []config.AuthUser{
			{Username: "orders-svc", Password: "orders-pw", Groups: []string{"producers"}},
			{Username: "fulfilment", Password: "fulfil-pw", Groups: []string{"consumers"}},
			{Username: "ops", Password: "ops-pw", Groups: []string{"admins"}},
			{Username: "lonely", Password: "pw"},
		},
		AnonymousAccessAllowed: anon,
	}
}

func TestSecuritySimpleAuthentication(t *testing.T) {
	p := newPlugin(t, config.Security{Authentication: seedSimple(false)}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "orders-svc", Password: "orders-pw"})
	checkSubject(t, s, err, "orders-svc", []string{"producers"}, nil)
	s, err = p.Authenticate(engine.Credentials{Username: "lonely", Password: "pw"})
	checkSubject(t, s, err, "lonely", nil, nil)

	for _, tc := range []struct{ name, user, pw, text string }{
		{"wrong password", "ops", "nope", "User name [ops] or password is invalid."},
		{"unknown user", "mallory", "ops-pw", "User name [mallory] or password is invalid."},
		{"empty password", "ops", "", "User name [ops] or password is invalid."},
		{"no user name without anonymous access", "", "", "User name [null] or password is invalid."},
		{"no user name with a password", "", "ops-pw", "User name [null] or password is invalid."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Authenticate(engine.Credentials{Username: tc.user, Password: tc.pw})
			checkRefused(t, err, tc.text)
		})
	}
}

func TestSecuritySimpleAnonymous(t *testing.T) {
	a := seedSimple(true)
	p := newPlugin(t, config.Security{Authentication: a}, nil)
	s, err := p.Authenticate(engine.Credentials{})
	checkSubject(t, s, err, "anonymous", []string{"anonymous"}, nil)
	// A password without a user name is not anonymous.
	_, err = p.Authenticate(engine.Credentials{Password: "x"})
	checkRefused(t, err, "User name [null] or password is invalid.")
	// Named users still need their password.
	_, err = p.Authenticate(engine.Credentials{Username: "ops"})
	checkRefused(t, err, "User name [ops] or password is invalid.")

	a.AnonymousUser, a.AnonymousGroup = "guest", "everyone"
	p = newPlugin(t, config.Security{Authentication: a}, nil)
	s, err = p.Authenticate(engine.Credentials{})
	checkSubject(t, s, err, "guest", []string{"everyone"}, nil)
}

func jaasAuth(kind, loginConfig, entry string) *config.Authentication {
	return &config.Authentication{Kind: kind, LoginConfig: loginConfig, Configuration: entry}
}

func TestSecurityJAASProperties(t *testing.T) {
	lc := copyJAAS(t)
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "activemq")}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "orders-svc", Password: "orders-pw"})
	checkSubject(t, s, err, "orders-svc", []string{"producers", "admins"}, []string{"orders-svc"})
	// "fulfilment = fulfil-pw" and "ops:ops-pw": Java's separators.
	s, err = p.Authenticate(engine.Credentials{Username: "fulfilment", Password: "fulfil-pw"})
	checkSubject(t, s, err, "fulfilment", []string{"consumers"}, []string{"fulfilment"})
	s, err = p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
	checkSubject(t, s, err, "ops", []string{"admins"}, []string{"ops"})

	for _, tc := range []struct{ name, user, pw, reason, text string }{
		{"wrong password", "ops", "x", "Password does not match", "User name [ops] or password is invalid."},
		{"unknown user", "eve", "x", "User does exist", "User name [eve] or password is invalid."},
		{"no user name", "", "", "user name is null", "User name [null] or password is invalid."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Authenticate(engine.Credentials{Username: tc.user, Password: tc.pw})
			checkRefused(t, err, tc.text)
			if !errors.Is(err, ErrLoginFailed) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("error %v: want ErrLoginFailed with reason %q", err, tc.reason)
			}
		})
	}
}

func TestSecurityJAASDefaultEntryName(t *testing.T) {
	lc := copyJAAS(t)
	_, err := New(&config.Config{Security: config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "")}}, nil)
	if !errors.Is(err, ErrNoLoginEntry) || !strings.Contains(err.Error(), "No LoginModules configured for activemq-domain") {
		t.Fatalf("New = %v, want ErrNoLoginEntry naming activemq-domain", err)
	}
}

func TestSecurityJAASGuestFallback(t *testing.T) {
	lc := copyJAAS(t)
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "guest-fallback")}, nil)
	// Good credentials: the sufficient module ends the login; no guest.
	s, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
	checkSubject(t, s, err, "ops", []string{"admins"}, []string{"ops"})
	// Bad ones: the guest module lets the client in as the guest; the
	// subject keeps the name the client gave, as ActiveMQ's.
	s, err = p.Authenticate(engine.Credentials{Username: "ops", Password: "bad"})
	checkSubject(t, s, err, "ops", []string{"visitors"}, []string{"visitor"})
	s, err = p.Authenticate(engine.Credentials{})
	checkSubject(t, s, err, "", []string{"visitors"}, []string{"visitor"})
}

// writeConfig writes a login.config with one entry "e" whose modules are
// given, next to copies of the test files.
func writeConfig(t *testing.T, modules string) string {
	t.Helper()
	lc := copyJAAS(t)
	if err := os.WriteFile(lc, []byte("e {\n"+modules+"\n};\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return lc
}

const (
	propsModule = `org.apache.activemq.jaas.PropertiesLoginModule %s
	org.apache.activemq.jaas.properties.user="users.properties"
	org.apache.activemq.jaas.properties.group="groups.properties";`
	guestModuleCfg  = `org.apache.activemq.jaas.GuestLoginModule %s;`
	guestInvalidate = `org.apache.activemq.jaas.GuestLoginModule %s credentialsInvalidate=true;`
)

func TestSecurityJAASControlFlags(t *testing.T) {
	type result struct {
		ok     bool
		groups []string
		reason string // the LoginException message when refused
	}
	good := engine.Credentials{Username: "ops", Password: "ops-pw"}
	bad := engine.Credentials{Username: "ops", Password: "bad"}
	for _, tc := range []struct {
		name    string
		modules []string // format with flag already applied
		cr      engine.Credentials
		want    result
	}{
		{"required fails, optional guest still runs but login fails",
			[]string{sprintf(propsModule, "required"), sprintf(guestModuleCfg, "optional")}, bad,
			result{reason: "Password does not match"}},
		{"required succeeds with optional guest: both modules' principals",
			[]string{sprintf(propsModule, "required"), sprintf(guestModuleCfg, "optional")}, good,
			result{ok: true, groups: []string{"admins", "guests"}}},
		{"requisite failure stops before the guest",
			[]string{sprintf(propsModule, "requisite"), sprintf(guestModuleCfg, "sufficient")}, bad,
			result{reason: "Password does not match"}},
		{"sufficient failure then required guest",
			[]string{sprintf(propsModule, "sufficient"), sprintf(guestModuleCfg, "required")}, bad,
			result{ok: true, groups: []string{"guests"}}},
		{"sufficient after a failed required does not end the login",
			[]string{sprintf(propsModule, "required"), sprintf(guestModuleCfg, "sufficient")}, bad,
			result{reason: "Password does not match"}},
		{"optional failure alone fails with its reason",
			[]string{sprintf(propsModule, "optional")}, bad,
			result{reason: "Password does not match"}},
		{"optional failure with optional guest succeeds",
			[]string{sprintf(propsModule, "optional"), sprintf(guestModuleCfg, "optional")}, bad,
			result{ok: true, groups: []string{"guests"}}},
		{"credentialsInvalidate guest ignores a client with a password",
			[]string{sprintf(guestInvalidate, "required")}, bad,
			result{reason: "Login Failure: all modules ignored"}},
		{"credentialsInvalidate guest takes a client without a password",
			[]string{sprintf(guestInvalidate, "required")}, engine.Credentials{},
			result{ok: true, groups: []string{"guests"}}},
		{"credentialsInvalidate guest after a failed sufficient login",
			[]string{sprintf(propsModule, "sufficient"), sprintf(guestInvalidate, "sufficient")}, bad,
			result{reason: "Password does not match"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := writeConfig(t, strings.Join(tc.modules, "\n"))
			p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, nil)
			s, err := p.Authenticate(tc.cr)
			if !tc.want.ok {
				checkRefused(t, err, "User name ["+nullName(tc.cr.Username)+"] or password is invalid.")
				if err != nil && !strings.HasSuffix(err.Error(), tc.want.reason) {
					t.Errorf("error %q, want the reason %q", err, tc.want.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			g := slices.Clone(s.Groups)
			slices.Sort(g)
			if !slices.Equal(g, tc.want.groups) {
				t.Errorf("groups = %q, want %q", g, tc.want.groups)
			}
		})
	}
}

func sprintf(format, flag string) string { return strings.Replace(format, "%s", flag, 1) }

func TestSecurityJAASReload(t *testing.T) {
	for _, reload := range []bool{true, false} {
		t.Run("reload="+map[bool]string{true: "true", false: "false"}[reload], func(t *testing.T) {
			opt := ""
			if reload {
				opt = " reload=true"
			}
			lc := writeConfig(t, strings.Replace(sprintf(propsModule, "required"), ";", opt+";", 1))
			dir := filepath.Dir(lc)
			p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, nil)
			if _, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"}); err != nil {
				t.Fatalf("first login: %v", err)
			}
			users := filepath.Join(dir, "users.properties")
			groups := filepath.Join(dir, "groups.properties")
			mustWrite(t, users, "ops=new-pw\nnewbie=n\n")
			mustWrite(t, groups, "admins=ops,newbie\n")
			// A fresh mtime, set explicitly: no sleeping for the clock.
			future := time.Now().Add(time.Hour)
			for _, f := range []string{users, groups} {
				if err := os.Chtimes(f, future, future); err != nil {
					t.Fatal(err)
				}
			}
			_, errOld := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
			s, errNew := p.Authenticate(engine.Credentials{Username: "newbie", Password: "n"})
			if reload {
				checkRefused(t, errOld, "User name [ops] or password is invalid.")
				checkSubject(t, s, errNew, "newbie", []string{"admins"}, []string{"newbie"})
			} else {
				if errOld != nil {
					t.Errorf("old password refused without reload: %v", errOld)
				}
				checkRefused(t, errNew, "User name [newbie] or password is invalid.")
			}
		})
	}
}

func TestSecurityJAASReloadBrokenFileFailsClosed(t *testing.T) {
	lc := writeConfig(t, strings.Replace(sprintf(propsModule, "required"), ";", " reload=true;", 1))
	users := filepath.Join(filepath.Dir(lc), "users.properties")
	rec := &recorder{}
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, slog.New(rec))
	mustWrite(t, users, "ops=\\uZZZZ\n")
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(users, future, future); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
		checkRefused(t, err, "User name [ops] or password is invalid.")
	}
	n := 0
	for _, l := range rec.lines() {
		if strings.HasPrefix(l, "ERROR properties reload failed") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("reload failure logged %d times, want once: %q", n, rec.lines())
	}
	// Fixed: logins work again.
	mustWrite(t, users, "ops=ops-pw\n")
	later := future.Add(time.Hour)
	if err := os.Chtimes(users, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"}); err != nil {
		t.Fatalf("login after the fix: %v", err)
	}
}

func mustWrite(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSecurityJAASDebugLog(t *testing.T) {
	lc := writeConfig(t, strings.Replace(sprintf(propsModule, "required"), ";", " debug=true;", 1))
	rec := &recorder{}
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, slog.New(rec))
	_, _ = p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
	_, _ = p.Authenticate(engine.Credentials{Username: "ops", Password: "s3cret-wrong"})
	lines := rec.lines()
	want := []string{
		"INFO login user=ops result=true groups=[admins]",
		"INFO login user=ops result=false reason=Password does not match",
	}
	for _, w := range want {
		if !slices.Contains(lines, w) {
			t.Errorf("log lacks %q; got %q", w, lines)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "ops-pw") || strings.Contains(l, "s3cret") {
			t.Errorf("log line shows a password: %q", l)
		}
	}
	// Without debug=true there is no decision log.
	lc = writeConfig(t, sprintf(propsModule, "required"))
	rec = &recorder{}
	p = newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, "e")}, slog.New(rec))
	_, _ = p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
	if l := rec.lines(); len(l) != 0 {
		t.Errorf("log without debug: %q", l)
	}
}

func TestSecurityJAASConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, config, entry string
		want                []string
	}{
		{"unsupported module names it and its line",
			"e {\n  org.apache.activemq.jaas.LDAPLoginModule required;\n};", "e",
			[]string{"login.config:2:", "unsupported login module", "org.apache.activemq.jaas.LDAPLoginModule"}},
		{"missing entry", "a { org.apache.activemq.jaas.GuestLoginModule required; };", "activemq",
			[]string{"No LoginModules configured for activemq"}},
		{"bad flag", "e { org.apache.activemq.jaas.GuestLoginModule mandatory; };", "e",
			[]string{"login.config:1:", "invalid control flag, mandatory"}},
		{"missing semicolon", "e { org.apache.activemq.jaas.GuestLoginModule required }", "e",
			[]string{"expected [option key], found [}]"}},
		{"missing users file", "e {\n org.apache.activemq.jaas.PropertiesLoginModule required\n org.apache.activemq.jaas.properties.user=\"nope.properties\";\n};", "e",
			[]string{"login.config:2:", "nope.properties"}},
		{"unknown system property", "e { org.apache.activemq.jaas.PropertiesLoginModule required x=\"${no.such}\"; };", "e",
			[]string{"unable to expand property no.such"}},
		{"duplicate entry", "e { org.apache.activemq.jaas.GuestLoginModule required; };\ne { };", "e",
			[]string{"login.config:2:", "multiple entries for e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := copyJAAS(t)
			mustWrite(t, lc, tc.config)
			_, err := New(&config.Config{Security: config.Security{Authentication: jaasAuth(config.AuthJAAS, lc, tc.entry)}}, nil)
			if err == nil {
				t.Fatal("New accepted the config")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func loadCert(t *testing.T, name string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/dn", name+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// plainDN is testdata/dn's "plain" certificate's subject as Java prints
// it: a certificate login's subject is named by it, as ActiveMQ 5.17's
// JaasCertificateSecurityContext names it; the mapped user is its
// UserPrincipal.
const plainDN = "CN=client, OU=Wharf, O=Example, L=LA, ST=CA, C=US"

func TestSecurityJAASCertificate(t *testing.T) {
	lc := copyJAAS(t)
	p := newPlugin(t, config.Security{Authentication: jaasAuth(config.AuthJAASCertificate, lc, "cert-domain")}, nil)
	s, err := p.Authenticate(engine.Credentials{Certs: []*x509.Certificate{loadCert(t, "plain")}, TLS: true})
	checkSubject(t, s, err, plainDN, []string{"consumers"}, []string{"client"})
	// A /regexp/ value maps every DN it matches whole.
	s, err = p.Authenticate(engine.Credentials{Certs: []*x509.Certificate{loadCert(t, "email")}, TLS: true})
	checkSubject(t, s, err, "SERIALNUMBER=42, UID=u1, DC=com, DC=example, EMAILADDRESS=a@b.example, CN=mail", nil, []string{"mailer"})

	_, err = p.Authenticate(engine.Credentials{TLS: true, Username: "x"})
	checkRefused(t, err, "Unable to authenticate transport without SSL certificate.")
	_, err = p.Authenticate(engine.Credentials{Certs: []*x509.Certificate{loadCert(t, "comma")}, TLS: true})
	checkRefused(t, err, `User name [null] or password is invalid. No user for client certificate: CN=a, O="Example, Inc.", C=US`)
}

func TestSecurityJAASDual(t *testing.T) {
	lc := copyJAAS(t)
	a := jaasAuth(config.AuthJAASDual, lc, "activemq")
	a.SSLConfiguration = "cert-domain"
	p := newPlugin(t, config.Security{Authentication: a}, nil)
	s, err := p.Authenticate(engine.Credentials{Username: "ops", Password: "ops-pw"})
	checkSubject(t, s, err, "ops", []string{"admins"}, []string{"ops"})
	s, err = p.Authenticate(engine.Credentials{TLS: true, Certs: []*x509.Certificate{loadCert(t, "plain")}})
	checkSubject(t, s, err, plainDN, []string{"consumers"}, []string{"client"})
	// On a TLS connector the password is not used.
	_, err = p.Authenticate(engine.Credentials{TLS: true, Username: "ops", Password: "ops-pw"})
	checkRefused(t, err, "Unable to authenticate transport without SSL certificate.")

	// The default SSL entry name is activemq-ssl-domain.
	a.SSLConfiguration = ""
	_, err = New(&config.Config{Security: config.Security{Authentication: a}}, nil)
	if !errors.Is(err, ErrNoLoginEntry) || !strings.Contains(err.Error(), "activemq-ssl-domain") {
		t.Fatalf("New = %v, want the missing activemq-ssl-domain entry", err)
	}
}

func TestSecurityJavaDN(t *testing.T) {
	// Each .dn file is what Java 17 prints for the .pem next to it
	// (testdata/dn/PrintDN.java: getSubjectDN().getName()).
	pems, _ := filepath.Glob("testdata/dn/*.pem")
	if len(pems) < 5 {
		t.Fatalf("only %d certificates in testdata/dn", len(pems))
	}
	for _, f := range pems {
		name := strings.TrimSuffix(filepath.Base(f), ".pem")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(strings.TrimSuffix(f, ".pem") + ".dn")
			if err != nil {
				t.Fatal(err)
			}
			got, err := javaDN(loadCert(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("javaDN = %q\nJava     %q", got, want)
			}
		})
	}
}
