package config

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The jetty.xml beans Wharf reads (ActiveMQ 5.17's conf/jetty.xml).
const (
	jettyPortClass      = "org.apache.activemq.web.WebConsolePort"
	hashLoginClass      = "org.eclipse.jetty.security.HashLoginService"
	constraintClass     = "org.eclipse.jetty.util.security.Constraint"
	serverConnector     = "org.eclipse.jetty.server.ServerConnector"
	sslContextFactory   = "org.eclipse.jetty.util.ssl.SslContextFactory"
	sslContextFactory94 = "org.eclipse.jetty.util.ssl.SslContextFactory$Server"
)

// importElem reads <import resource="jetty.xml"/>: the file beside the
// configuration (Spring resolves an import relative to the importing
// file), with placeholders and a file: prefix allowed. Other resources are
// refused.
func (p *xmlParser) importElem(e *xmlElem) {
	var res *val
	p.attrs(e, "", map[string]func(val){"resource": func(v val) { res = &v }})
	if res == nil {
		p.l.problemAt("", e.line, e.col, "<import>: resource is required")
		return
	}
	s, ok := p.l.text(*res)
	if !ok {
		return
	}
	if filepath.Base(strings.TrimPrefix(s, "file:")) != "jetty.xml" {
		p.l.problemAt("", e.line, e.col, fmt.Sprintf("<import resource=%q> is not supported by Wharf yet (only jetty.xml, the web server's configuration)", res.raw))
		return
	}
	path, err := besideFile(s, filepath.Dir(p.l.file))
	if err != nil {
		p.l.problemAt("http", e.line, e.col, fmt.Sprintf("<import resource=%q>: %v", res.raw, err))
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		p.l.problemAt("http", e.line, e.col, fmt.Sprintf("<import resource=%q>: %v", res.raw, err))
		return
	}
	// Problems inside jetty.xml name it, and its relative paths are
	// relative to it.
	outer := p.l.file
	p.l.file = path
	defer func() { p.l.file = outer }()
	root, err := buildXMLTree(data)
	if err != nil {
		line := 0
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			line = se.Line
		}
		p.l.problemAt("http", line, 0, "XML syntax error: "+strings.TrimPrefix(err.Error(), fmt.Sprintf("XML syntax error on line %d: ", line)))
		return
	}
	h := &p.l.cfg.HTTP
	h.File, h.Line = path, root.line
	p.l.note("http", root.line, root.col, "jetty.xml")
	p.jettyBeans(root)
}

// jettyBeans reads the beans of jetty.xml that say where the server
// listens, who may log in and over TLS with which key: jettyPort,
// securityLoginService, the Constraints and the ServerConnectors. The
// other beans wire Jetty's servlets together (the console and the API
// webapps, rewrite rules); Wharf serves its own handlers, so it does not
// read them.
//
// DEVIATION: unlike the rest of the configuration, unknown beans are not
// errors here: jetty.xml is Jetty's wiring, and refusing its every bean
// would refuse the file ActiveMQ ships. The beans Wharf reads refuse the
// properties it does not implement.
func (p *xmlParser) jettyBeans(e *xmlElem) {
	if e.name == "bean" {
		switch attrValue(e, "class") {
		case jettyPortClass:
			p.jettyPort(e)
			return
		case hashLoginClass:
			p.loginService(e)
			return
		case constraintClass:
			p.constraint(e)
			return
		case serverConnector:
			p.serverConnector(e)
			return
		}
	}
	for _, k := range e.kids {
		p.jettyBeans(k)
	}
}

// beanProperties calls hs[name] with each <property name value>'s value;
// a property without a handler is an error naming the bean.
func (p *xmlParser) beanProperties(e *xmlElem, path string, hs map[string]func(val)) {
	for _, k := range e.kids {
		if k.name != "property" {
			continue // constructor-arg: read by the caller
		}
		name, value := attrValue(k, "name"), attrValue(k, "value")
		h, ok := hs[name]
		if !ok {
			p.l.problemAt(path, k.line, k.col, fmt.Sprintf("<bean class=%q>: <property name=%q> is not supported by Wharf", attrValue(e, "class"), name))
			continue
		}
		h(val{raw: value, path: path, line: k.line, col: k.col, label: fmt.Sprintf("<property name=%q value=%q>", name, value)})
	}
}

func (p *xmlParser) jettyPort(e *xmlElem) {
	l, h := p.l, &p.l.cfg.HTTP
	p.beanProperties(e, "http", map[string]func(val){
		"host": at("http.host", func(v val) { l.setString(&h.Host, v) }),
		"port": at("http.port", func(v val) { l.setInt(&h.Port, v) }),
	})
}

func (p *xmlParser) loginService(e *xmlElem) {
	l, h := p.l, &p.l.cfg.HTTP
	p.beanProperties(e, "http", map[string]func(val){
		"name":   at("http.realm_name", func(v val) { l.setString(&h.RealmName, v) }),
		"config": at("http.realm", func(v val) { l.setFilePath(&h.Realm, v) }),
	})
}

// constraint reads a Constraint bean: its authenticate property turns the
// login off for the whole server when false (Wharf has one constraint for
// every path; see protocols/http). Its name (BASIC) and roles are Jetty's
// and ActiveMQ's fixed choice: basic authentication, role admin for writes.
func (p *xmlParser) constraint(e *xmlElem) {
	l, h := p.l, &p.l.cfg.HTTP
	var ignored string
	p.beanProperties(e, "http", map[string]func(val){
		"name":  func(val) {},
		"roles": func(v val) { l.setString(&ignored, v) },
		"authenticate": at("http.authenticate", func(v val) {
			auth := true
			l.setBool(&auth, v)
			h.Authenticate = h.Authenticate && auth
		}),
	})
}

// serverConnector reads a ServerConnector: the SecureConnector when one of
// its constructor arguments is an SslContextFactory, else the plain one,
// whose host and port are the jettyPort bean's (jetty.xml writes
// #{systemProperties['jetty.host']}) unless it sets literal ones.
func (p *xmlParser) serverConnector(e *xmlElem) {
	l, h := p.l, &p.l.cfg.HTTP
	var ssl *xmlElem
	for _, k := range e.kids {
		if k.name != "constructor-arg" {
			continue
		}
		for _, b := range k.kids {
			if c := attrValue(b, "class"); b.name == "bean" && (c == sslContextFactory || c == sslContextFactory94) {
				ssl = b
			}
		}
	}
	literal := func(set func(val)) func(val) {
		return func(v val) {
			if !strings.HasPrefix(strings.TrimSpace(v.raw), "#{") {
				set(v)
			}
		}
	}
	if ssl == nil {
		p.beanProperties(e, "http", map[string]func(val){
			"host": at("http.host", literal(func(v val) { l.setString(&h.Host, v) })),
			"port": at("http.port", literal(func(v val) { l.setInt(&h.Port, v) })),
		})
		return
	}
	if h.HTTPS != nil {
		l.problemAt("http.https", e.line, e.col, "only one SecureConnector is supported")
		return
	}
	s := &HTTPS{TLS: SSLContext{KeyStoreType: "jks", TrustStoreType: "jks", Protocol: "TLS", Line: ssl.line}}
	h.HTTPS = s
	l.note("http.https", e.line, e.col, "<bean class=\""+serverConnector+"\">")
	p.beanProperties(e, "http.https", map[string]func(val){
		"host": at("http.https.host", func(v val) { l.setString(&s.Host, v) }),
		"port": at("http.https.port", func(v val) { l.setInt(&s.Port, v) }),
	})
	t := &s.TLS
	p.beanProperties(ssl, "http.https", map[string]func(val){
		"keyStorePath":       at("http.https.key_store", func(v val) { l.setFilePath(&t.KeyStore, v) }),
		"keyStorePassword":   at("http.https.key_store_password", func(v val) { l.setString(&t.KeyStorePassword, v) }),
		"keyManagerPassword": at("http.https.key_store_key_password", func(v val) { l.setString(&t.KeyStoreKeyPassword, v) }),
		"keyStoreType":       at("http.https.key_store_type", func(v val) { l.setString(&t.KeyStoreType, v) }),
		"trustStorePath":     at("http.https.trust_store", func(v val) { l.setFilePath(&t.TrustStore, v) }),
		"trustStorePassword": at("http.https.trust_store_password", func(v val) { l.setString(&t.TrustStorePassword, v) }),
		"trustStoreType":     at("http.https.trust_store_type", func(v val) { l.setString(&t.TrustStoreType, v) }),
	})
}
