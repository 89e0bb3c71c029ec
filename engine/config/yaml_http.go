package config

import (
	yaml "go.yaml.in/yaml/v3"
)

// http reads YAML http, the twin of jetty.xml:
//
//	http:
//	  enabled: true
//	  host: 127.0.0.1
//	  port: 8161
//	  authenticate: true
//	  realm: jetty-realm.properties
//	  realm_name: ActiveMQRealm
//	  max_destination_series: 1000
//	  websocket: [stomp, mqtt]   # served at /stomp and /mqtt
//	  https: {host: 127.0.0.1, port: 8162, key_store: broker.ks, key_store_password: password}
func (p *yamlParser) http(n *yaml.Node, path string) {
	l, h := p.l, &p.l.cfg.HTTP
	h.File, h.Line = l.file, deref(n).Line
	p.mapping(n, path, map[string]handler{
		"enabled":      p.boolean(&h.Enabled),
		"host":         p.str(&h.Host),
		"port":         p.integer(&h.Port),
		"authenticate": p.boolean(&h.Authenticate),
		"realm": p.scalar(func(l *loader, v val) {
			l.setFilePath(&h.Realm, v)
		}),
		"realm_name":             p.str(&h.RealmName),
		"max_destination_series": p.integer(&h.MaxDestinationSeries),
		"websocket":              p.groups(&h.WebSocket),
		"https": func(n *yaml.Node, path string) {
			s := &HTTPS{Host: "127.0.0.1", TLS: SSLContext{KeyStoreType: "jks", TrustStoreType: "jks", Protocol: "TLS", Line: deref(n).Line}}
			h.HTTPS = s
			t := &s.TLS
			p.mapping(n, path, map[string]handler{
				"host":                   p.str(&s.Host),
				"port":                   p.integer(&s.Port),
				"key_store":              p.scalar(func(l *loader, v val) { l.setFilePath(&t.KeyStore, v) }),
				"key_store_password":     p.str(&t.KeyStorePassword),
				"key_store_key_password": p.str(&t.KeyStoreKeyPassword),
				"key_store_type":         p.str(&t.KeyStoreType),
				"trust_store":            p.scalar(func(l *loader, v val) { l.setFilePath(&t.TrustStore, v) }),
				"trust_store_password":   p.str(&t.TrustStorePassword),
				"trust_store_type":       p.str(&t.TrustStoreType),
			})
		},
	})
}
