package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultGroupClass is the principal class of authorization group names
// when <authorizationMap groupClass> is not set
// (DefaultAuthorizationMap.DEFAULT_GROUP_CLASS).
const DefaultGroupClass = "org.apache.activemq.jaas.GroupPrincipal"

// loginConfigProperty is the Java system property naming the JAAS
// login.config file.
const loginConfigProperty = "java.security.auth.login.config"

// defaultAuthentication is an authentication plugin of the given kind with
// ActiveMQ 5.17.2's defaults.
func defaultAuthentication(kind string) *Authentication {
	a := &Authentication{Kind: kind}
	switch kind {
	case AuthSimple:
		// SimpleAuthenticationPlugin.DEFAULT_ANONYMOUS_USER/GROUP;
		// anonymousAccessAllowed = false.
		a.AnonymousUser, a.AnonymousGroup = "anonymous", "anonymous"
	default:
		a.Configuration = "activemq-domain" // JaasAuthenticationPlugin.configuration
		if kind == AuthJAASDual {
			a.SSLConfiguration = "activemq-ssl-domain" // JaasDualAuthenticationPlugin.sslConfiguration
		}
	}
	return a
}

// defaultSSLContext is SpringSslContext's defaults (keyStoreType and
// trustStoreType "jks") with SslContext's protocol "TLS".
func defaultSSLContext() *SSLContext {
	return &SSLContext{KeyStoreType: "jks", TrustStoreType: "jks", Protocol: "TLS"}
}

// setStorePath sets a keystore or truststore path: placeholders resolved,
// a "file:" URL prefix stripped. A relative path that does not exist in
// the working directory is taken relative to the configuration file's
// directory, as ActiveMQ finds it on its class path (conf/, through
// SpringSslContext's Utils.resourceFromString). The file must be readable
// (STYLE.md §8: TLS settings are checked at load time); its content is
// read by package security when the broker starts.
func (l *loader) setStorePath(dst *string, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	p := strings.TrimSpace(s)
	url := false
	switch {
	case strings.HasPrefix(p, "file://"):
		p, url = p[len("file://"):], true
	case strings.HasPrefix(p, "file:"):
		p, url = p[len("file:"):], true
	case strings.HasPrefix(p, "classpath:"), strings.Contains(p, "://"):
		l.bad(v, s, "only file paths and file: URLs can be read by Wharf")
		return
	}
	if p == "" {
		l.bad(v, s, "the path is empty")
		return
	}
	if !url && !filepath.IsAbs(p) {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			if alt := filepath.Join(filepath.Dir(l.file), p); alt != p {
				if _, err := os.Stat(alt); err == nil {
					p = alt
				}
			}
		}
	}
	f, err := os.Open(p)
	if err != nil {
		l.bad(v, s, fmt.Sprintf("cannot read %q: %v", p, unwrapPath(err)))
		return
	}
	st, err := f.Stat()
	f.Close()
	if err == nil && st.IsDir() {
		l.bad(v, s, fmt.Sprintf("%q is a directory, not a key store file", p))
		return
	}
	*dst = p
}

// unwrapPath drops the *PathError's repetition of the path.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// tlsSchemes are the TLS connector schemes, with the protocol each speaks
// (META-INF/services/org/apache/activemq/transport in ActiveMQ 5.17.2:
// ssl, nio+ssl, stomp+ssl, stomp+nio+ssl, mqtt+ssl, mqtt+nio+ssl,
// amqp+ssl, amqp+nio+ssl, wss, amqp+wss).
//
// DEVIATION: amqps, stomp+wss and mqtt+wss are Wharf's aliases, which
// ActiveMQ does not have: amqps for amqp+ssl (the scheme AMQP clients
// write), and stomp+wss and mqtt+wss as the TLS twins of Wharf's stomp+ws
// and mqtt+ws.
var tlsSchemes = map[string]string{
	"ssl": "openwire", "nio+ssl": "openwire",
	"stomp+ssl": "stomp", "stomp+nio+ssl": "stomp",
	"mqtt+ssl": "mqtt", "mqtt+nio+ssl": "mqtt",
	"amqp+ssl": "amqp", "amqp+nio+ssl": "amqp", "amqps": "amqp",
	"wss": "websocket", "stomp+wss": "websocket", "mqtt+wss": "websocket", "amqp+wss": "websocket",
}

func init() {
	for k, v := range tlsSchemes {
		transportSchemes[k] = v
	}
}

// IsTLSScheme reports whether a connector scheme ("ssl", "mqtt+nio+ssl",
// "wss", ...) is served over TLS.
func IsTLSScheme(scheme string) bool {
	_, ok := tlsSchemes[strings.ToLower(scheme)]
	return ok
}

// applySecurityDefaults fills what depends on other settings: the JAAS
// login.config path and each TLS connector's copy of <sslContext>.
func (l *loader) applySecurityDefaults() {
	c := &l.cfg
	if a := c.Security.Authentication; a != nil {
		if a.Kind != AuthSimple && a.LoginConfig == "" {
			a.LoginConfig = l.loginConfig()
		}
		if len(a.Users) == 0 {
			a.Users = nil // <users/> and no users read alike
		}
	}
	if z := c.Security.Authorization; z != nil && len(z.Entries) == 0 {
		z.Entries = nil
	}
	if s := c.SSLContext; s != nil {
		// KeyStore.getInstance is case-insensitive.
		s.KeyStoreType = strings.ToLower(strings.TrimSpace(s.KeyStoreType))
		s.TrustStoreType = strings.ToLower(strings.TrimSpace(s.TrustStoreType))
	}
	for i := range c.Transports {
		t := &c.Transports[i]
		if IsTLSScheme(t.Scheme) && c.SSLContext != nil {
			s := *c.SSLContext
			t.TLS = &s
		}
	}
}

// loginConfig finds the JAAS login.config as ActiveMQ does: the
// java.security.auth.login.config property (a -D var, else the environment
// variable of that name or JAVA_SECURITY_AUTH_LOGIN_CONFIG), else
// login.config beside the configuration file (bin/activemq sets the
// property to ${activemq.conf}/login.config, and JaasAuthenticationPlugin
// finds login.config on its class path, which holds conf/). Without
// discovery (discoverLoginConfig="false") only the property counts.
func (l *loader) loginConfig() string {
	v, ok := l.res.vars[loginConfigProperty]
	if !ok {
		v, ok = l.res.env(loginConfigProperty)
	}
	if !ok {
		v, ok = l.res.env(envName(loginConfigProperty))
	}
	if ok && strings.TrimSpace(v) != "" {
		// Java's "==path" replaces rather than adds to the default
		// configuration; for Wharf both mean this file.
		v = strings.TrimLeft(strings.TrimSpace(v), "=")
		v = strings.TrimPrefix(strings.TrimPrefix(v, "file://"), "file:")
		return v
	}
	if l.noLoginDiscovery {
		return ""
	}
	return filepath.Join(filepath.Dir(l.file), "login.config")
}

// validateSecurity checks the authentication and authorization plugins,
// the SSL context and the encryptor.
func (l *loader) validateSecurity() {
	c := &l.cfg
	if a := c.Security.Authentication; a != nil {
		const ap = "security.authentication"
		switch a.Kind {
		case AuthSimple:
			names := map[string]int{}
			for i, u := range a.Users {
				up := fmt.Sprintf("%s.users[%d]", ap, i)
				switch {
				case strings.TrimSpace(u.Username) == "":
					l.fail(up+".username", "the user name must not be empty")
				default:
					if j, dup := names[u.Username]; dup {
						// ActiveMQ keeps the last; a second entry is
						// almost certainly a mistake.
						l.fail(up+".username", "user %q is already defined (user %d)", u.Username, j)
					} else {
						names[u.Username] = i
					}
				}
				if l.missingPassword(i) {
					l.fail(up, "password is required (ActiveMQ would never authenticate %q)", u.Username)
				} else if u.Password == "" && !l.unresolved[up+".password"] {
					// DEVIATION: ActiveMQ accepts an empty password;
					// Wharf refuses it (STYLE.md §8: no credential anyone
					// can guess).
					l.fail(up+".password", "the password of %q is empty", u.Username)
				}
			}
			if a.AnonymousAccessAllowed && strings.TrimSpace(a.AnonymousUser) == "" {
				l.fail(ap+".anonymous_user", "must not be empty when anonymous access is allowed")
			}
			if a.AnonymousAccessAllowed && strings.TrimSpace(a.AnonymousGroup) == "" {
				l.fail(ap+".anonymous_group", "must not be empty when anonymous access is allowed")
			}
		case AuthJAAS, AuthJAASCertificate, AuthJAASDual:
			if strings.TrimSpace(a.Configuration) == "" {
				l.fail(ap+".configuration", "the login.config entry name must not be empty")
			}
			if a.Kind == AuthJAASDual && strings.TrimSpace(a.SSLConfiguration) == "" {
				l.fail(ap+".ssl_configuration", "the login.config entry name must not be empty")
			}
			if a.LoginConfig == "" {
				l.fail(ap, "no login.config: set -D%s=FILE (discoverLoginConfig is false)", loginConfigProperty)
			}
		}
	}
	if z := c.Security.Authorization; z != nil {
		const zp = "security.authorization"
		if strings.TrimSpace(z.GroupClass) == "" {
			l.fail(zp+".group_class", "must not be empty")
		}
		for i := range z.Entries {
			e := &z.Entries[i]
			ep := fmt.Sprintf("%s.entries[%d]", zp, i)
			if e.Destination.Name == "" {
				if l.xml {
					l.fail(ep, "set exactly one of queue, topic, tempQueue and tempTopic (the destination the entry covers)")
				} else {
					l.fail(ep, "set exactly one of queue, topic, temp_queue and temp_topic (the destination the entry covers)")
				}
				continue
			}
			if e.Destination.Type.IsTemp() {
				continue
			}
			if why := checkFilterPattern(e.Destination.Name); why != "" {
				l.fail(ep+"."+destKey(e.Destination.Type), "%q %s", e.Destination.Name, why)
			}
		}
	}
	if s := c.SSLContext; s != nil {
		const sp = "ssl_context"
		for _, st := range []struct{ key, v string }{{"key_store_type", s.KeyStoreType}, {"trust_store_type", s.TrustStoreType}} {
			switch st.v {
			case "jks", "pkcs12":
			default:
				l.fail(sp+"."+st.key, "%q is not supported by Wharf (want jks or pkcs12)", st.v)
			}
		}
		if _, err := contextMaxVersion(s.Protocol); err != nil {
			l.fail(sp+".protocol", "%q %v", s.Protocol, err)
		}
		if s.KeyStore == "" && !l.unresolved[sp+".key_store"] {
			for _, t := range c.Transports {
				if IsTLSScheme(t.Scheme) {
					l.fail(sp, "%s is required: TLS connector %q needs the broker's certificate and key", l.word("keyStore", "key_store"), t.Name)
					break
				}
			}
		}
	}
	if e := c.Encryption; e != nil && e.Password == "" && e.PasswordEnv == "" {
		l.fail("encryption", "the encryptor has no password: set password_env (the environment variable holding it) or password")
	}
}

// missingPassword reports whether user i of <users> has no password
// attribute (XML; YAML users are checked as they are read).
func (l *loader) missingPassword(i int) bool {
	for _, j := range l.userNoPassword {
		if j == i {
			return true
		}
	}
	return false
}

// tlsAdvice says how to add an SSL context, in the file's form.
func (l *loader) tlsAdvice() string {
	if l.xml {
		return `add <sslContext><sslContext keyStore="file:${activemq.conf}/broker.ks" keyStorePassword="..."/></sslContext> to <broker>`
	}
	return "add ssl_context: {key_store: ..., key_store_password: ...}"
}

// authAdvice says how to configure authentication, in the file's form.
func (l *loader) authAdvice() string {
	if l.xml {
		return `add an authentication plugin to <plugins> in <broker> (<simpleAuthenticationPlugin> with <users>, or <jaasAuthenticationPlugin configuration="activemq"/> with a login.config)`
	}
	return "add security: {authentication: {kind: simple, users: [...]}} (or kind: jaas with a login.config)"
}
