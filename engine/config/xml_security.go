package config

import (
	"fmt"
	"strings"

	"wharf/engine/message"
)

// Jasypt's bean classes, as ActiveMQ's examples/conf/activemq-security.xml
// wires them (5.17 names the spring4 configurer; jasypt-spring ships one
// per Spring generation, all alike).
const (
	jasyptEnvConfig = "org.jasypt.encryption.pbe.config.EnvironmentStringPBEConfig"
	jasyptEncryptor = "org.jasypt.encryption.pbe.StandardPBEStringEncryptor"
)

var jasyptConfigurers = map[string]bool{
	"org.jasypt.spring.properties.EncryptablePropertyPlaceholderConfigurer":   true,
	"org.jasypt.spring2.properties.EncryptablePropertyPlaceholderConfigurer":  true,
	"org.jasypt.spring3.properties.EncryptablePropertyPlaceholderConfigurer":  true,
	"org.jasypt.spring31.properties.EncryptablePropertyPlaceholderConfigurer": true,
	"org.jasypt.spring4.properties.EncryptablePropertyPlaceholderConfigurer":  true,
}

func attrValue(e *xmlElem, name string) string {
	for _, a := range e.attrs {
		if a.name == name {
			return a.value
		}
	}
	return ""
}

// beans reads the <bean>s of <beans>: the Jasypt encryptor first (an
// ENC() value in a properties file needs it), then the placeholder
// configurers; any other class is refused.
func (p *xmlParser) beans(kids []*xmlElem) {
	encs := map[string]*Encryption{} // by bean id
	configs := map[string]*Encryption{}
	var configurers, encryptors []*xmlElem
	for _, k := range kids {
		if k.name != "bean" {
			continue
		}
		switch class := attrValue(k, "class"); {
		case class == jasyptEnvConfig:
			configs[attrValue(k, "id")] = p.jasyptBean(k, false, nil)
		case class == jasyptEncryptor:
			encryptors = append(encryptors, k)
		case class == placeholderConfigurer, class == placeholderConfigurer2, jasyptConfigurers[class]:
			configurers = append(configurers, k)
		case dataSourceClasses[class]:
			if p.dataSources == nil {
				p.dataSources = map[string]*xmlElem{}
			}
			p.dataSources[attrValue(k, "id")] = k
		default:
			p.l.problemAt("", k.line, k.col, fmt.Sprintf("<bean class=%q> is not supported by Wharf yet (only %s, the JDBC data sources %s and %s, and Jasypt's %s, %s and EncryptablePropertyPlaceholderConfigurer for ENC() values)",
				class, placeholderConfigurer, pgSimpleDataSource, dbcp2DataSource, jasyptEnvConfig, jasyptEncryptor))
		}
	}
	for _, k := range encryptors {
		encs[attrValue(k, "id")] = p.jasyptBean(k, true, configs)
	}
	// The encryptor must be known before a properties file is read: its
	// ENC() values are decrypted when a placeholder resolves to them.
	var chosen *xmlElem
	for _, k := range configurers {
		if !jasyptConfigurers[attrValue(k, "class")] {
			continue
		}
		if chosen != nil {
			p.l.problemAt("", k.line, k.col, fmt.Sprintf("<bean class=%q>: only one EncryptablePropertyPlaceholderConfigurer is supported (another at line %d)", attrValue(k, "class"), chosen.line))
			continue
		}
		chosen = k
		p.encryptableConfigurer(k, encs)
	}
	for _, k := range configurers {
		p.bean(k, jasyptConfigurers[attrValue(k, "class")])
	}
}

// encryptableConfigurer reads <constructor-arg ref="encryptor"/> of an
// EncryptablePropertyPlaceholderConfigurer and makes that encryptor the
// load's Encryption.
func (p *xmlParser) encryptableConfigurer(e *xmlElem, encs map[string]*Encryption) {
	var arg *xmlElem
	for _, k := range e.kids {
		if k.name != "constructor-arg" {
			continue
		}
		if arg != nil {
			p.l.problemAt("", k.line, k.col, "<constructor-arg> appears more than once: the configurer takes one, the encryptor")
			continue
		}
		arg = k
	}
	if arg == nil {
		p.l.problemAt("", e.line, e.col, fmt.Sprintf("<bean class=%q>: add <constructor-arg ref=\"...\"/> naming the StandardPBEStringEncryptor bean", attrValue(e, "class")))
		return
	}
	var ref string
	p.attrs(arg, "", map[string]func(val){"ref": func(v val) { ref = v.raw }})
	p.noText(arg, "")
	for _, kk := range arg.kids {
		p.unsupported(kk, "", "write the encryptor as <constructor-arg ref=\"id\"/>")
	}
	if ref == "" {
		if len(arg.kids) == 0 {
			p.l.problemAt("", arg.line, arg.col, "<constructor-arg>: ref (the id of the StandardPBEStringEncryptor bean) is required")
		}
		return
	}
	enc, ok := encs[ref]
	if !ok {
		p.l.problemAt("", arg.line, arg.col, fmt.Sprintf("<constructor-arg ref=%q>: no %s bean has id %q", ref, jasyptEncryptor, ref))
		return
	}
	if enc != nil {
		c := *enc
		p.l.cfg.Encryption = &c
	}
}

// jasyptBean reads an EnvironmentStringPBEConfig (encryptor false) or a
// StandardPBEStringEncryptor: algorithm, password and passwordEnvName (the
// config), or config ref, algorithm and password (the encryptor). It
// returns nil when the bean has problems.
func (p *xmlParser) jasyptBean(e *xmlElem, encryptor bool, configs map[string]*Encryption) *Encryption {
	l := p.l
	before := len(l.problems)
	p.attrs(e, "", map[string]func(val){"class": func(val) {}, "id": func(val) {}})
	p.noText(e, "")
	enc := &Encryption{Algorithm: EncryptionAlgorithm, Line: e.line}
	var algo *val
	for _, k := range e.kids {
		if k.name != "property" {
			p.unsupported(k, "", "")
			continue
		}
		var name string
		var value, ref *val
		p.attrs(k, "", map[string]func(val){
			"name":  func(v val) { name = v.raw },
			"value": func(v val) { value = &v },
			"ref":   func(v val) { ref = &v },
		})
		p.noText(k, "")
		for _, kk := range k.kids {
			p.unsupported(kk, "", "write the value as an attribute")
		}
		switch {
		case name == "config" && encryptor:
			if ref == nil {
				l.problemAt("", k.line, k.col, `<property name="config">: ref (the id of the EnvironmentStringPBEConfig bean) is required`)
				continue
			}
			c, ok := configs[ref.raw]
			if !ok {
				l.problemAt("", ref.line, ref.col, fmt.Sprintf("%s: no %s bean has id %q", ref.label, jasyptEnvConfig, ref.raw))
				continue
			}
			if c == nil {
				continue // reported with the config bean
			}
			if enc.PasswordEnv == "" {
				enc.PasswordEnv = c.PasswordEnv
			}
			if enc.Password == "" {
				enc.Password = c.Password
			}
			if algo == nil {
				enc.Algorithm = c.Algorithm
			}
		case (name == "algorithm" || name == "password" || name == "passwordEnvName") && value != nil:
			if name == "passwordEnvName" && encryptor {
				l.problemAt("", k.line, k.col, fmt.Sprintf("<property name=%q> belongs to %s, not to the encryptor", name, jasyptEnvConfig))
				continue
			}
			var s string
			l.setString(&s, *value)
			switch name {
			case "algorithm":
				algo = value
				enc.Algorithm = s
			case "password":
				enc.Password = s
			case "passwordEnvName":
				enc.PasswordEnv = s
			}
		case name == "algorithm" || name == "password" || name == "passwordEnvName":
			l.problemAt("", k.line, k.col, fmt.Sprintf("<property name=%q>: value is required", name))
		default:
			l.problemAt("", k.line, k.col, fmt.Sprintf("<property name=%q> of %s is not supported by Wharf (supported: %s)",
				name, attrValue(e, "class"), map[bool]string{false: "algorithm, password, passwordEnvName", true: "config, algorithm, password"}[encryptor]))
		}
	}
	if algo != nil && !strings.EqualFold(enc.Algorithm, EncryptionAlgorithm) {
		l.problemAt("", algo.line, algo.col, fmt.Sprintf("%s: algorithm %q is not supported by Wharf (only %s, what `activemq encrypt` uses)", algo.label, enc.Algorithm, EncryptionAlgorithm))
	}
	enc.Algorithm = EncryptionAlgorithm
	if encryptor && enc.Password == "" && enc.PasswordEnv == "" && len(l.problems) == before {
		l.problemAt("", e.line, e.col, fmt.Sprintf("<bean class=%q>: the encryptor has no password: give it <property name=\"config\" ref=\"...\"/> (an %s with passwordEnvName) or <property name=\"password\" value=\"...\"/>", jasyptEncryptor, jasyptEnvConfig))
	}
	if len(l.problems) > before {
		return nil
	}
	return enc
}

// plugins reads <plugins>: at most one authentication plugin and at most
// one <authorizationPlugin>. Every other broker plugin is refused.
func (p *xmlParser) plugins(e *xmlElem) {
	l, c := p.l, &p.l.cfg
	p.attrs(e, "security", nil)
	p.noText(e, "security")
	var authz *xmlElem
	for _, k := range e.kids {
		switch k.name {
		case AuthSimple, AuthJAAS, AuthJAASCertificate, AuthJAASDual:
			if a := c.Security.Authentication; a != nil {
				l.problemAt("security.authentication", k.line, k.col, fmt.Sprintf("<%s>: only one authentication plugin may be configured (<%s> at line %d)", k.name, a.Kind, a.Line))
				continue
			}
			p.authentication(k)
		case "authorizationPlugin":
			if authz != nil {
				l.problemAt("security.authorization", k.line, k.col, fmt.Sprintf("<authorizationPlugin> appears more than once in <plugins> (first at line %d)", authz.line))
				continue
			}
			authz = k
			p.authorizationPlugin(k)
		default:
			p.unsupported(k, "security", "<plugins> may hold simpleAuthenticationPlugin, jaasAuthenticationPlugin, jaasCertificateAuthenticationPlugin, jaasDualAuthenticationPlugin and authorizationPlugin")
		}
	}
}

// authentication reads one authentication plugin element.
func (p *xmlParser) authentication(e *xmlElem) {
	l := p.l
	const ap = "security.authentication"
	a := defaultAuthentication(e.name)
	a.Line = e.line
	l.cfg.Security.Authentication = a
	l.note(ap, e.line, e.col, "<"+e.name+">")
	f := func(key string, set func(val)) func(val) { return at(ap+"."+key, set) }
	h := map[string]func(val){}
	switch e.name {
	case AuthSimple:
		h["anonymousAccessAllowed"] = f("anonymous_access_allowed", func(v val) { l.setBool(&a.AnonymousAccessAllowed, v) })
		h["anonymousUser"] = f("anonymous_user", func(v val) { l.setString(&a.AnonymousUser, v) })
		h["anonymousGroup"] = f("anonymous_group", func(v val) { l.setString(&a.AnonymousGroup, v) })
	default:
		h["configuration"] = f("configuration", func(v val) { l.setString(&a.Configuration, v) })
		// JaasAuthenticationPlugin.discoverLoginConfig (default true):
		// when java.security.auth.login.config is not set, use the
		// login.config ActiveMQ finds on its class path (conf/).
		h["discoverLoginConfig"] = f("discover_login_config", func(v val) {
			discover := true
			l.setBool(&discover, v)
			l.noLoginDiscovery = !discover
		})
		if e.name == AuthJAASDual {
			h["sslConfiguration"] = f("ssl_configuration", func(v val) { l.setString(&a.SSLConfiguration, v) })
		}
	}
	p.attrs(e, ap, h)
	p.noText(e, ap)
	usersSeen := false
	for _, k := range e.kids {
		switch {
		case e.name == AuthSimple && k.name == "users":
			if usersSeen {
				l.problemAt(ap, k.line, k.col, "<users> appears more than once in <simpleAuthenticationPlugin>")
				continue
			}
			usersSeen = true
			p.users(k, a)
		case e.name == AuthSimple && (k.name == "userPasswords" || k.name == "userGroups"):
			p.unsupported(k, ap, "list each user as <authenticationUser username=\"..\" password=\"..\" groups=\"..\"/> in <users>")
		default:
			p.unsupported(k, ap, "")
		}
	}
}

// users reads <users><authenticationUser username password groups/>...
func (p *xmlParser) users(e *xmlElem, a *Authentication) {
	l := p.l
	p.attrs(e, "security.authentication.users", nil)
	p.noText(e, "security.authentication.users")
	if a.Users == nil {
		a.Users = []AuthUser{}
	}
	for _, k := range e.kids {
		if k.name != "authenticationUser" {
			p.unsupported(k, "security.authentication.users", "")
			continue
		}
		i := len(a.Users)
		up := fmt.Sprintf("security.authentication.users[%d]", i)
		l.note(up, k.line, k.col, "<authenticationUser>")
		var u AuthUser
		set := map[string]bool{}
		f := func(key string, fn func(val)) func(val) {
			return at(up+"."+key, func(v val) { set[key] = true; fn(v) })
		}
		p.attrs(k, up, map[string]func(val){
			"username": f("username", func(v val) { l.setString(&u.Username, v) }),
			"password": f("password", func(v val) { l.setString(&u.Password, v) }),
			"groups":   f("groups", func(v val) { l.setGroups(&u.Groups, v) }),
		})
		p.noText(k, up)
		for _, kk := range k.kids {
			p.unsupported(kk, up, "")
		}
		if !set["password"] {
			l.userNoPassword = append(l.userNoPassword, i)
		}
		a.Users = append(a.Users, u)
	}
}

// setGroups sets a comma-separated group list, each name trimmed and
// empty names dropped (AuthorizationEntry.parseACLs and
// SimpleAuthenticationPlugin.setUsers use a StringTokenizer on ",").
func (l *loader) setGroups(dst *[]string, v val) {
	l.record(v)
	s, ok := l.text(v)
	if !ok {
		return
	}
	*dst = splitGroups(s)
}

func splitGroups(s string) []string {
	var out []string
	for _, g := range strings.Split(s, ",") {
		if g = strings.TrimSpace(g); g != "" {
			out = append(out, g)
		}
	}
	return out
}

// authorizationPlugin reads <authorizationPlugin><map><authorizationMap>.
func (p *xmlParser) authorizationPlugin(e *xmlElem) {
	const zp = "security.authorization"
	m := p.only(e, zp, "map")
	if m == nil {
		p.l.problemAt(zp, e.line, e.col, "<authorizationPlugin>: add <map><authorizationMap>...</authorizationMap></map> (ActiveMQ refuses to start without a map)")
		return
	}
	am := p.only(m, zp, "authorizationMap")
	if am == nil {
		return
	}
	l := p.l
	z := &AuthorizationMap{GroupClass: DefaultGroupClass}
	l.cfg.Security.Authorization = z
	l.note(zp, am.line, am.col, "<authorizationMap>")
	p.attrs(am, zp, map[string]func(val){
		"groupClass": at(zp+".group_class", func(v val) { l.setString(&z.GroupClass, v) }),
	})
	p.noText(am, zp)
	once := map[string]bool{}
	for _, k := range am.kids {
		if once[k.name] {
			l.problemAt(zp, k.line, k.col, fmt.Sprintf("<%s> appears more than once in <authorizationMap>", k.name))
			continue
		}
		once[k.name] = true
		switch k.name {
		case "authorizationEntries":
			p.attrs(k, zp+".entries", nil)
			p.noText(k, zp+".entries")
			z.Entries = []AuthorizationEntry{}
			for _, ke := range k.kids {
				if ke.name != "authorizationEntry" {
					p.unsupported(ke, zp+".entries", "<authorizationEntries> holds <authorizationEntry> elements")
					continue
				}
				ep := fmt.Sprintf("%s.entries[%d]", zp, len(z.Entries))
				z.Entries = append(z.Entries, p.authorizationEntry(ke, ep, entryListed))
			}
		case "defaultEntry":
			if d := p.only(k, zp+".default", "authorizationEntry"); d != nil {
				ent := p.authorizationEntry(d, zp+".default", entryDefault)
				z.Default = &ent
			}
		case "tempDestinationAuthorizationEntry":
			if d := p.only(k, zp+".temp", "tempDestinationAuthorizationEntry"); d != nil {
				ent := p.authorizationEntry(d, zp+".temp", entryTemp)
				z.Temp = &ent
			}
		default:
			p.unsupported(k, zp, "")
		}
	}
	if z.Entries == nil {
		// XBeanAuthorizationMap.afterPropertiesSet iterates the entries
		// and fails on a map without them.
		l.problemAt(zp, am.line, am.col, "<authorizationMap>: add <authorizationEntries> (ActiveMQ refuses to start without it; it may be empty)")
	}
}

// Where an authorization entry sits.
type entryKind int

const (
	entryListed  entryKind = iota // in <authorizationEntries>: names its destination
	entryDefault                  // <defaultEntry>: every destination
	entryTemp                     // <tempDestinationAuthorizationEntry>: temp destinations
)

// authorizationEntry reads one <authorizationEntry> or
// <tempDestinationAuthorizationEntry>.
func (p *xmlParser) authorizationEntry(e *xmlElem, path string, kind entryKind) AuthorizationEntry {
	l := p.l
	ent := AuthorizationEntry{Line: e.line}
	if kind == entryTemp {
		ent.Destination.Type = message.TempQueue
	}
	l.note(path, e.line, e.col, "<"+e.name+">")
	f := func(key string, set func(val)) func(val) { return at(path+"."+key, set) }
	dest := func(key string, t message.DestType) func(val) {
		return f(key, func(v val) {
			if kind != entryListed {
				l.record(v)
				l.problemAt(v.path, v.line, v.col, fmt.Sprintf("%s: %s", v.label, entryPlaceWhy(kind)))
				return
			}
			l.setDest(&ent.Destination, t, v)
		})
	}
	temp := func(key string, t message.DestType) func(val) {
		return f(key, func(v val) {
			if kind != entryListed {
				l.record(v)
				l.problemAt(v.path, v.line, v.col, fmt.Sprintf("%s: %s", v.label, entryPlaceWhy(kind)))
				return
			}
			l.setTempDest(&ent.Destination, t, v)
		})
	}
	p.attrs(e, path, map[string]func(val){
		"queue":      dest("queue", message.Queue),
		"topic":      dest("topic", message.Topic),
		"tempQueue":  temp("temp_queue", message.TempQueue),
		"tempTopic":  temp("temp_topic", message.TempTopic),
		"read":       f("read", func(v val) { l.setGroups(&ent.Read, v) }),
		"write":      f("write", func(v val) { l.setGroups(&ent.Write, v) }),
		"admin":      f("admin", func(v val) { l.setGroups(&ent.Admin, v) }),
		"groupClass": f("group_class", func(v val) { l.setString(&ent.GroupClass, v) }),
	})
	p.noText(e, path)
	for _, k := range e.kids {
		p.unsupported(k, path, "")
	}
	return ent
}

func entryPlaceWhy(kind entryKind) string {
	if kind == entryTemp {
		return "the temporary destination entry applies to every temporary queue and topic; remove the destination"
	}
	return "the default entry applies to every destination; remove the destination"
}

// setTempDest handles an entry's tempQueue="true" or tempTopic="true":
// every temporary queue (topic), ActiveMQ's DestinationMapEntry sets the
// destination to temp-queue ">" (temp-topic ">").
func (l *loader) setTempDest(dst *message.Destination, t message.DestType, v val) {
	var b bool
	before := len(l.problems)
	l.setBool(&b, v)
	if len(l.problems) > before {
		return
	}
	if !b {
		// DestinationMapEntry.setTempQueue ignores its argument: "false"
		// would still cover every temporary queue.
		l.problemAt(v.path, v.line, v.col, v.label+": ActiveMQ reads this as true whatever its value; remove the attribute, or write \"true\"")
		return
	}
	if dst.Name != "" {
		l.problemAt(v.path, v.line, v.col, fmt.Sprintf("%s: set exactly one of queue, topic, tempQueue and tempTopic (already %s)", v.label, dst))
		return
	}
	*dst = message.Destination{Type: t, Name: ">"}
}

// sslContext reads <sslContext><sslContext .../></sslContext>.
func (p *xmlParser) sslContext(e *xmlElem) {
	const sp = "ssl_context"
	k := p.only(e, sp, "sslContext")
	if k == nil {
		return
	}
	l := p.l
	s := defaultSSLContext()
	s.Line = k.line
	l.cfg.SSLContext = s
	l.note(sp, k.line, k.col, "<sslContext>")
	f := func(key string, set func(val)) func(val) { return at(sp+"."+key, set) }
	// The JCA algorithm names choose Java's key and trust manager and
	// random generator; Go has one of each, so only the standard names
	// (whose behaviour Go's matches) are accepted, and change nothing.
	algorithm := func(key string, names ...string) func(val) {
		return f(key, func(v val) {
			var a string
			l.setString(&a, v)
			for _, n := range names {
				if strings.EqualFold(a, n) {
					return
				}
			}
			l.bad(v, a, fmt.Sprintf("not supported by Wharf (accepted, with no effect: %s)", strings.Join(names, ", ")))
		})
	}
	p.attrs(k, sp, map[string]func(val){
		"keyStore":              f("key_store", func(v val) { l.setStorePath(&s.KeyStore, v) }),
		"keyStorePassword":      f("key_store_password", func(v val) { l.setString(&s.KeyStorePassword, v) }),
		"keyStoreKeyPassword":   f("key_store_key_password", func(v val) { l.setString(&s.KeyStoreKeyPassword, v) }),
		"keyStoreType":          f("key_store_type", func(v val) { l.setString(&s.KeyStoreType, v) }),
		"trustStore":            f("trust_store", func(v val) { l.setStorePath(&s.TrustStore, v) }),
		"trustStorePassword":    f("trust_store_password", func(v val) { l.setString(&s.TrustStorePassword, v) }),
		"trustStoreType":        f("trust_store_type", func(v val) { l.setString(&s.TrustStoreType, v) }),
		"protocol":              f("protocol", func(v val) { l.setString(&s.Protocol, v) }),
		"keyStoreAlgorithm":     algorithm("key_store_algorithm", "SunX509", "NewSunX509", "PKIX"),
		"trustStoreAlgorithm":   algorithm("trust_store_algorithm", "PKIX", "SunX509"),
		"secureRandomAlgorithm": algorithm("secure_random_algorithm", "SHA1PRNG", "NativePRNG", "NativePRNGBlocking", "NativePRNGNonBlocking", "DRBG"),
	})
	p.noText(k, sp)
	for _, kk := range k.kids {
		p.unsupported(kk, sp, "")
	}
}
