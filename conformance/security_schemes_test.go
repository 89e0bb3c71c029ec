package conformance

import (
	"context"
	"crypto/tls"
	"path/filepath"
	"testing"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	mqttwire "wharf/protocols/mqtt/wire"
)

// schemesConfig is the broker of TestConformanceSecurityTLSSchemeAliases.
const schemesConfig = "testdata/badinput/schemes.xml"

// TestConformanceSecurityTLSSchemeAliases: every TLS scheme the issue
// names that the other TLS tests do not start (nio+ssl, stomp+nio+ssl,
// mqtt+nio+ssl, amqp+nio+ssl, amqps, stomp+wss, mqtt+wss, amqp+wss) is a
// TLS connector of its protocol with the <sslContext> and its
// needClientAuth: with client1's certificate the user logs in and a wrong
// password gets the protocol's refusal (ActiveMQ's words) and the close;
// without a certificate, or in plain text, nobody logs in.
func TestConformanceSecurityTLSSchemeAliases(t *testing.T) {
	if external {
		t.Skipf("needs an in-process broker (%s is set)", envSTOMPAddr)
	}
	cfg, err := config.LoadFile(filepath.FromSlash(schemesConfig), map[string]string{
		"activemq.data": t.TempDir(),
		"tls.dir":       badInputTLSDir(t),
	})
	if err != nil {
		t.Fatalf("load %s: %v", schemesConfig, err)
	}
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *cfg
		c.Persistence.Kind = config.KindMemory
	}))
	// The login functions and refusal texts of the bad-input cases, by
	// protocol.
	byName := map[string]badInputProtocol{}
	for _, p := range badInputProtocols() {
		byName[p.name] = p
	}
	for _, c := range []struct {
		connector, protocol, ws string
	}{
		{"nio+ssl", "openwire+ssl", ""},
		{"stomp+nio+ssl", "stomp+ssl", ""},
		{"mqtt+nio+ssl", "mqtt+ssl", ""},
		{"amqp+nio+ssl", "amqp+ssl", ""},
		{"amqps", "amqp+ssl", ""},
		{"stomp+wss", "stomp+wss", "v12.stomp"},
		{"mqtt+wss", "mqtt+wss", "mqtt"},
		{"amqp+wss", "amqp+ssl", "amqp"},
	} {
		t.Run(c.connector, func(t *testing.T) {
			p, ok := byName[c.protocol]
			if !ok {
				t.Fatalf("no bad-input protocol %q", c.protocol)
			}
			addr := badAddr(t, b, c.connector)
			dial := func(cfg *tls.Config) dialer {
				switch {
				case c.ws != "" && cfg != nil:
					return wsDialer("wss://"+addr+"/", c.ws, cfg)
				case c.ws != "":
					return wsDialer("ws://"+addr+"/", c.ws, nil)
				case cfg != nil:
					return tlsDialer(addr, cfg)
				}
				return tcpDialer(addr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 4*wait)
			defer cancel()
			withCert := dial(badInputClientTLS(t, "client1"))
			l, err := try(ctx, withCert, p.fn, badInputUser, badInputPassword, uniq(t), false)
			if err != nil || !l.accepted {
				t.Fatalf("login with a client certificate: %+v, %v", l, err)
			}
			l, err = try(ctx, withCert, p.fn, badInputUser, "not-the-password", uniq(t), true)
			if err != nil {
				t.Fatalf("wrong password: %v", err)
			}
			if l.accepted || l.refusal != p.wrong || !l.closed {
				t.Errorf("wrong password: accepted=%v refusal %q closed=%v, want refusal %q and the close", l.accepted, l.refusal, l.closed, p.wrong)
			}
			// needClientAuth: no certificate, no login.
			if l, err := try(ctx, dial(badInputClientTLS(t, "")), p.fn, badInputUser, badInputPassword, uniq(t), false); err == nil && l.accepted {
				t.Errorf("login without a client certificate was accepted on a needClientAuth connector")
			}
			// Plain text on the TLS port: no login.
			if l, err := try(ctx, dial(nil), p.fn, badInputUser, badInputPassword, uniq(t), false); err == nil && l.accepted {
				t.Errorf("a plain-text login was accepted on a TLS connector")
			}
		})
	}
}

// certPluginConfig is the broker of TestConformanceSecurityCertificatePlugin.
const certPluginConfig = "testdata/badinput/certplugin.xml"

// TestConformanceSecurityCertificatePlugin: <jaasCertificateAuthenticationPlugin>
// on its own (the dual plugin is TestTLSCertificateUser's), with real
// STOMP and MQTT clients: a client certificate whose DN users-dn.properties
// maps logs in with no user name or password; a trusted certificate with
// no user is refused with ActiveMQ's JaasCertificateAuthenticationBroker
// text naming the DN; no certificate on a TLS connector, and any login on
// a plain connector, are refused with "Unable to authenticate transport
// without SSL certificate."; each refusal closes the connection.
func TestConformanceSecurityCertificatePlugin(t *testing.T) {
	if external {
		t.Skipf("needs an in-process broker (%s is set)", envSTOMPAddr)
	}
	lc, err := filepath.Abs(filepath.Join("tlsclients", "login.config"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadFile(filepath.FromSlash(certPluginConfig), map[string]string{
		"activemq.data":                   t.TempDir(),
		"tls.dir":                         badInputTLSDir(t),
		"java.security.auth.login.config": lc,
	})
	if err != nil {
		t.Fatalf("load %s: %v", certPluginConfig, err)
	}
	if a := cfg.Security.Authentication; a == nil || a.Kind != config.AuthJAASCertificate {
		t.Fatalf("authentication %+v, want the JAAS certificate plugin", a)
	}
	b := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *cfg
		c.Persistence.Kind = config.KindMemory
	}))
	const noCert = "Unable to authenticate transport without SSL certificate."
	unmapped := "User name [null] or password is invalid. No user for client certificate: CN=client2, OU=Wharf, O=Test, C=FR"
	stompSSL, mqttSSL, stompPlain := badAddr(t, b, "stomp+ssl"), badAddr(t, b, "mqtt+ssl"), badAddr(t, b, "stomp")
	mqtt := mqttLogin(mqttwire.Version311)
	for _, c := range []struct {
		name       string
		d          dialer
		fn         loginFunc
		user, pass string
		want       string // "" = accepted
	}{
		{"stomp+ssl/mapped certificate", tlsDialer(stompSSL, badInputClientTLS(t, "client1")), badInputSTOMPLogin, "", "", ""},
		{"stomp+ssl/mapped certificate and a password", tlsDialer(stompSSL, badInputClientTLS(t, "client1")), badInputSTOMPLogin, "someone", "anything", ""},
		{"stomp+ssl/unmapped certificate", tlsDialer(stompSSL, badInputClientTLS(t, "client2")), badInputSTOMPLogin, "", "", unmapped},
		{"stomp+ssl/no certificate", tlsDialer(stompSSL, badInputClientTLS(t, "")), badInputSTOMPLogin, badInputUser, badInputPassword, noCert},
		{"stomp/plain", tcpDialer(stompPlain), badInputSTOMPLogin, badInputUser, badInputPassword, noCert},
		{"mqtt+ssl/mapped certificate", tlsDialer(mqttSSL, badInputClientTLS(t, "client1")), mqtt, "", "", ""},
		{"mqtt+ssl/unmapped certificate", tlsDialer(mqttSSL, badInputClientTLS(t, "client2")), mqtt, "", "", "CONNACK 5"},
		{"mqtt+ssl/no certificate", tlsDialer(mqttSSL, badInputClientTLS(t, "")), mqtt, badInputUser, badInputPassword, "CONNACK 5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*wait)
			defer cancel()
			l, err := try(ctx, c.d, c.fn, c.user, c.pass, uniq(t), c.want != "")
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == "" && !l.accepted:
				t.Errorf("refused (%q), want accepted", l.refusal)
			case c.want != "" && (l.accepted || l.refusal != c.want || !l.closed):
				t.Errorf("accepted=%v refusal %q closed=%v, want refusal %q and the close", l.accepted, l.refusal, l.closed, c.want)
			}
		})
	}
}
