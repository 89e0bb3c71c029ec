package config

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"wharf/engine/message"
)

// yamlAuthKinds maps YAML security.authentication.kind to the plugin.
var yamlAuthKinds = map[string]string{
	"simple":           AuthSimple,
	"jaas":             AuthJAAS,
	"jaas_certificate": AuthJAASCertificate,
	"jaas_dual":        AuthJAASDual,
}

// encryptionFirst reads the top-level encryption key before anything else,
// so that an ENC() value anywhere in the file can be decrypted whatever
// the key order.
func (p *yamlParser) encryptionFirst(n *yaml.Node) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k.Value == "encryption" {
			p.l.note("encryption", k.Line, k.Column, "encryption")
			p.encryption(n.Content[i+1], "encryption")
			return
		}
	}
}

// encryption reads encryption: {password_env, password, algorithm}, the
// twin of the Jasypt beans.
func (p *yamlParser) encryption(n *yaml.Node, path string) {
	e := &Encryption{Algorithm: EncryptionAlgorithm, Line: deref(n).Line}
	var algo string
	var algoVal val
	p.mapping(n, path, map[string]handler{
		"password_env": p.str(&e.PasswordEnv),
		"password":     p.str(&e.Password),
		"algorithm": p.scalar(func(l *loader, v val) {
			l.setString(&algo, v)
			algoVal = v
		}),
	})
	if algo != "" && !strings.EqualFold(algo, EncryptionAlgorithm) {
		p.l.problemAt(algoVal.path, algoVal.line, algoVal.col, fmt.Sprintf("%s: algorithm %q is not supported by Wharf (only %s, what `activemq encrypt` uses)", algoVal.label, algo, EncryptionAlgorithm))
	}
	p.l.cfg.Encryption = e
}

// security reads security: {authentication: {...}, authorization: {...}}.
func (p *yamlParser) security(n *yaml.Node, path string) {
	p.mapping(n, path, map[string]handler{
		"authentication": p.authentication,
		"authorization":  p.authorization,
	})
}

// authentication reads security.authentication. kind chooses the plugin;
// the other keys must belong to it.
func (p *yamlParser) authentication(n *yaml.Node, path string) {
	l := p.l
	n = deref(n)
	// kind first: the defaults depend on it.
	kind := ""
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := deref(n.Content[i]); k.Value == "kind" {
				v := deref(n.Content[i+1])
				var ok bool
				if kind, ok = yamlAuthKinds[v.Value]; !ok {
					l.problemAt(path+".kind", v.Line, v.Column, fmt.Sprintf("%s.kind %q: not one of simple, jaas, jaas_certificate, jaas_dual", path, v.Value))
					return
				}
			}
		}
	}
	if kind == "" {
		if n.Kind == yaml.MappingNode {
			l.problemAt(path, n.Line, n.Column, path+": kind is required (simple, jaas, jaas_certificate or jaas_dual)")
		} else {
			p.mapping(n, path, nil) // reports what it is
		}
		return
	}
	a := defaultAuthentication(kind)
	a.Line = n.Line
	l.cfg.Security.Authentication = a
	only := func(kinds []string, h handler) handler {
		return func(n *yaml.Node, kp string) {
			for _, k := range kinds {
				if k == kind {
					h(n, kp)
					return
				}
			}
			var names []string
			for y, k := range yamlAuthKinds {
				for _, want := range kinds {
					if k == want {
						names = append(names, y)
					}
				}
			}
			l.fail(kp, "applies to kind %s only", strings.Join(slices.Sorted(slices.Values(names)), ", "))
		}
	}
	simple := []string{AuthSimple}
	jaas := []string{AuthJAAS, AuthJAASCertificate, AuthJAASDual}
	p.mapping(n, path, map[string]handler{
		"kind":                     func(*yaml.Node, string) {},
		"anonymous_access_allowed": only(simple, p.boolean(&a.AnonymousAccessAllowed)),
		"anonymous_user":           only(simple, p.str(&a.AnonymousUser)),
		"anonymous_group":          only(simple, p.str(&a.AnonymousGroup)),
		"users": only(simple, func(n *yaml.Node, path string) {
			p.list(n, path, func(el *yaml.Node, ep string) {
				var u AuthUser
				hasPassword := false
				p.mapping(el, ep, map[string]handler{
					"username": p.str(&u.Username),
					"password": func(n *yaml.Node, kp string) {
						hasPassword = true
						p.str(&u.Password)(n, kp)
					},
					"groups": p.groups(&u.Groups),
				})
				if !hasPassword {
					l.userNoPassword = append(l.userNoPassword, len(a.Users))
				}
				a.Users = append(a.Users, u)
			})
		}),
		"configuration":     only(jaas, p.str(&a.Configuration)),
		"ssl_configuration": only([]string{AuthJAASDual}, p.str(&a.SSLConfiguration)),
		"login_config":      only(jaas, p.str(&a.LoginConfig)),
	})
}

// groups reads a group list: a YAML list of names, or one comma-separated
// string as activemq.xml writes it.
func (p *yamlParser) groups(dst *[]string) handler {
	return func(n *yaml.Node, path string) {
		n = deref(n)
		if n.Kind == yaml.ScalarNode {
			p.scalar(func(l *loader, v val) { l.setGroups(dst, v) })(n, path)
			return
		}
		var out []string
		p.list(n, path, func(el *yaml.Node, ep string) {
			var g string
			p.str(&g)(el, ep)
			if g = strings.TrimSpace(g); g != "" {
				if strings.Contains(g, ",") {
					p.l.problemAt(ep, el.Line, el.Column, fmt.Sprintf("%s %q: one group per list element", ep, g))
					return
				}
				out = append(out, g)
			}
		})
		*dst = out
	}
}

// authorization reads security.authorization: {group_class, entries,
// default, temp}, the twin of <authorizationMap>.
func (p *yamlParser) authorization(n *yaml.Node, path string) {
	z := &AuthorizationMap{GroupClass: DefaultGroupClass}
	p.l.cfg.Security.Authorization = z
	entry := func(kind entryKind) func(n *yaml.Node, path string) AuthorizationEntry {
		return func(n *yaml.Node, path string) AuthorizationEntry {
			ent := AuthorizationEntry{Line: deref(n).Line}
			hs := map[string]handler{
				"read":        p.groups(&ent.Read),
				"write":       p.groups(&ent.Write),
				"admin":       p.groups(&ent.Admin),
				"group_class": p.str(&ent.GroupClass),
			}
			if kind == entryListed {
				hs["queue"] = p.dest(&ent.Destination, message.Queue)
				hs["topic"] = p.dest(&ent.Destination, message.Topic)
				hs["temp_queue"] = p.scalar(func(l *loader, v val) { l.setTempDest(&ent.Destination, message.TempQueue, v) })
				hs["temp_topic"] = p.scalar(func(l *loader, v val) { l.setTempDest(&ent.Destination, message.TempTopic, v) })
			} else {
				for _, k := range []string{"queue", "topic", "temp_queue", "temp_topic"} {
					hs[k] = func(_ *yaml.Node, kp string) { p.l.fail(kp, "%s", entryPlaceWhy(kind)) }
				}
			}
			if kind == entryTemp {
				ent.Destination.Type = message.TempQueue
			}
			p.mapping(n, path, hs)
			return ent
		}
	}
	p.mapping(n, path, map[string]handler{
		"group_class": p.str(&z.GroupClass),
		"entries": func(n *yaml.Node, path string) {
			p.list(n, path, func(el *yaml.Node, ep string) {
				z.Entries = append(z.Entries, entry(entryListed)(el, ep))
			})
		},
		"default": func(n *yaml.Node, path string) {
			e := entry(entryDefault)(n, path)
			z.Default = &e
		},
		"temp": func(n *yaml.Node, path string) {
			e := entry(entryTemp)(n, path)
			z.Temp = &e
		},
	})
}

// sslContext reads ssl_context, the twin of <sslContext>.
func (p *yamlParser) sslContext(n *yaml.Node, path string) {
	s := defaultSSLContext()
	s.Line = deref(n).Line
	p.l.cfg.SSLContext = s
	p.mapping(n, path, map[string]handler{
		"key_store":              p.scalar(func(l *loader, v val) { l.setStorePath(&s.KeyStore, v) }),
		"key_store_password":     p.str(&s.KeyStorePassword),
		"key_store_key_password": p.str(&s.KeyStoreKeyPassword),
		"key_store_type":         p.str(&s.KeyStoreType),
		"trust_store":            p.scalar(func(l *loader, v val) { l.setStorePath(&s.TrustStore, v) }),
		"trust_store_password":   p.str(&s.TrustStorePassword),
		"trust_store_type":       p.str(&s.TrustStoreType),
		"protocol":               p.str(&s.Protocol),
	})
}
