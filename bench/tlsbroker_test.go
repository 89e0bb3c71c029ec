package bench

import (
	"path/filepath"
	"strings"
	"testing"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
)

// tlsFixtures is security/testdata/tls: the broker's JKS key store and
// trust store (password "password"), the CA and client1's PEM files.
func tlsFixtures(tb testing.TB) (dir string) {
	tb.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "security", "testdata", "tls"))
	if err != nil {
		tb.Fatal(err)
	}
	return dir
}

// tlsBrokerOptions say how startTLSBroker configures the broker.
type tlsBrokerOptions struct {
	// auth configures seed 000's simpleAuthenticationPlugin (orders-svc
	// in producers, fulfilment in consumers, ops in admins) and its
	// authorization map.
	auth bool
}

// Users and passwords of the authenticated broker.
const (
	benchProducerUser, benchProducerPassword = "orders-svc", "o-secret"
	benchConsumerUser, benchConsumerPassword = "fulfilment", "f-secret"
)

// startTLSBroker starts an in-process Wharf with the default plain
// connectors and, beside each, its TLS form on the same broker:
// stomp+ssl, ssl (OpenWire), mqtt+ssl and amqp+ssl, named after their
// schemes, with the fixtures' <sslContext>; and "ssl-need", an ssl
// connector with needClientAuth=true.
func startTLSBroker(tb testing.TB, o tlsBrokerOptions) *brokertest.Broker {
	tb.Helper()
	dir := tlsFixtures(tb)
	ssl := &config.SSLContext{
		KeyStore: filepath.Join(dir, "broker.ks"), KeyStorePassword: "password",
		TrustStore: filepath.Join(dir, "broker.ts"), TrustStorePassword: "password",
		KeyStoreType: "jks", TrustStoreType: "jks", Protocol: "TLS",
	}
	return brokertest.Start(tb, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		c.SSLContext = ssl
		// The options as the loader leaves them: the URI's query and
		// its parsed TLSOptions.
		add := func(name, scheme string, need bool) {
			tr := config.Transport{
				Name: name, URI: scheme + "://127.0.0.1:0", Scheme: scheme, Host: "127.0.0.1",
				Options: map[string]string{}, TLS: ssl,
			}
			if need {
				tr.URI += "?needClientAuth=true"
				tr.Options["needClientAuth"] = "true"
				tr.TLSOptions.NeedClientAuth = true
			}
			c.Transports = append(c.Transports, tr)
		}
		add("stomp+ssl", "stomp+ssl", false)
		add("ssl", "ssl", false)
		add("mqtt+ssl", "mqtt+ssl", false)
		add("amqp+ssl", "amqp+ssl", false)
		add("ssl-need", "ssl", true)
		if o.auth {
			c.Security = seed000Security()
		}
	}))
}

// seed000Security is the <simpleAuthenticationPlugin> and
// <authorizationPlugin> of seed 000 ("Sécuriser le broker"), with the
// passwords written out.
func seed000Security() config.Security {
	g := func(s string) []string { return strings.Split(s, ",") }
	entry := func(d message.Destination, read, write, admin string) config.AuthorizationEntry {
		return config.AuthorizationEntry{Destination: d, Read: g(read), Write: g(write), Admin: g(admin)}
	}
	temp := entry(message.Destination{Type: message.TempQueue}, "everyone", "everyone", "everyone")
	return config.Security{
		Authentication: &config.Authentication{Kind: config.AuthSimple, AnonymousUser: "anonymous", AnonymousGroup: "anonymous",
			Users: []config.AuthUser{
				{Username: benchProducerUser, Password: benchProducerPassword, Groups: g("producers")},
				{Username: benchConsumerUser, Password: benchConsumerPassword, Groups: g("consumers")},
				{Username: "ops", Password: "ops-secret", Groups: g("admins")},
			}},
		Authorization: &config.AuthorizationMap{GroupClass: config.DefaultGroupClass, Temp: &temp, Entries: []config.AuthorizationEntry{
			entry(message.QueueDest("orders.>"), "consumers", "producers", "producers,consumers"),
			entry(message.QueueDest("DLQ.>"), "admins", "admins", "admins"),
			entry(message.QueueDest(">"), "admins", "admins", "admins"),
			entry(message.TopicDest(">"), "admins", "admins", "admins"),
			entry(message.TopicDest("ActiveMQ.Advisory.>"), "everyone", "everyone", "everyone"),
		}},
	}
}
