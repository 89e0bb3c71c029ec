package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// debianConf is where Debian's activemq package puts ActiveMQ's sample
// configuration, jetty.xml and jetty-realm.properties among it.
const debianConf = "/usr/share/doc/activemq/examples/conf"

// importingXML is an activemq.xml that imports jetty.xml.
const importingXML = `<beans xmlns="http://www.springframework.org/schema/beans">
<broker xmlns="http://activemq.apache.org/schema/core">
  <persistenceAdapter><memoryPersistenceAdapter/></persistenceAdapter>
</broker>
<import resource="jetty.xml"/>
</beans>`

// confDir writes files (name -> content) into a new directory and returns
// the path of its activemq.xml (importingXML unless files has one).
func confDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files["activemq.xml"]; !ok {
		files["activemq.xml"] = []byte(importingXML)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "activemq.xml")
}

// debianFiles reads Debian's jetty.xml and jetty-realm.properties, or
// skips the test.
func debianFiles(t *testing.T) (jetty, realm []byte) {
	t.Helper()
	jetty, err := os.ReadFile(filepath.Join(debianConf, "jetty.xml"))
	if err != nil {
		t.Skipf("Debian's ActiveMQ sample configuration is missing (%v): apt-get install activemq", err)
	}
	realm, err = os.ReadFile(filepath.Join(debianConf, "jetty-realm.properties"))
	if err != nil {
		t.Fatal(err)
	}
	return jetty, realm
}

func TestConfigHTTPDefaults(t *testing.T) {
	c, err := ParseYAML(strings.NewReader("persistent: false"), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	h := c.HTTP
	if !h.Enabled || h.Host != "127.0.0.1" || h.Port != 8161 || !h.Authenticate || h.Realm != "" || h.HTTPS != nil ||
		h.RealmName != "ActiveMQRealm" || h.MaxDestinationSeries != DefaultMaxDestinationSeries {
		t.Errorf("HTTP = %+v, want jetty.xml's defaults without a realm", h)
	}
	c, err = LoadFileWith(confDir(t, map[string][]byte{"activemq.xml": []byte(strings.Replace(importingXML, `<import resource="jetty.xml"/>`, "", 1))}), nil, LoadOptions{NoHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Enabled {
		t.Error("LoadOptions.NoHTTP left the web server enabled")
	}
}

// TestConfigHTTPJettyDebian reads the jetty.xml and jetty-realm.properties
// Debian ships, imported by an activemq.xml beside them.
func TestConfigHTTPJettyDebian(t *testing.T) {
	jetty, realm := debianFiles(t)
	file := confDir(t, map[string][]byte{"jetty.xml": jetty, "jetty-realm.properties": realm})
	c, err := LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := c.HTTP
	wantRealm := filepath.Join(filepath.Dir(file), "jetty-realm.properties")
	if !h.Enabled || h.Host != "127.0.0.1" || h.Port != 8161 || !h.Authenticate || h.Realm != wantRealm || h.RealmName != "ActiveMQRealm" || h.HTTPS != nil {
		t.Errorf("HTTP = %+v, want 127.0.0.1:8161, login on, realm %s, no HTTPS", h, wantRealm)
	}
	if h.File != filepath.Join(filepath.Dir(file), "jetty.xml") {
		t.Errorf("HTTP.File = %q, want the jetty.xml", h.File)
	}
}

// TestConfigHTTPJettySecureConnector enables the SecureConnector that
// Debian's jetty.xml has in a comment, with the test keystore as its
// ${activemq.conf}/broker.ks.
func TestConfigHTTPJettySecureConnector(t *testing.T) {
	jetty, realm := debianFiles(t)
	s := string(jetty)
	s = strings.Replace(s, `<!-- bean id="SecureConnector"`, `<bean id="SecureConnector"`, 1)
	s = strings.Replace(s, `</bean -->`, `</bean>`, 1)
	if s == string(jetty) {
		t.Fatal("Debian's jetty.xml has no commented-out SecureConnector")
	}
	ks, err := os.ReadFile("../../security/testdata/tls/broker.ks")
	if err != nil {
		t.Fatal(err)
	}
	file := confDir(t, map[string][]byte{"jetty.xml": []byte(s), "jetty-realm.properties": realm, "broker.ks": ks})
	c, err := LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := c.HTTP.HTTPS
	if h == nil {
		t.Fatal("no HTTPS connector")
	}
	want := SSLContext{KeyStore: filepath.Join(filepath.Dir(file), "broker.ks"), KeyStorePassword: "password", KeyStoreType: "jks", TrustStoreType: "jks", Protocol: "TLS", Line: h.TLS.Line}
	// No host: Jetty's ServerConnector binds every interface.
	if h.Host != "" || h.Port != 8162 || h.TLS != want {
		t.Errorf("HTTPS = %+v, want port 8162 on every interface with %+v", h, want)
	}
	if c.HTTP.Port != 8161 {
		t.Errorf("HTTP port = %d, want 8161 beside the SecureConnector", c.HTTP.Port)
	}
}

func TestConfigHTTPJettyEdits(t *testing.T) {
	jetty, err := os.ReadFile("testdata/jetty.xml")
	if err != nil {
		t.Fatal(err)
	}
	realm := []byte("admin: secret, admin\n")
	cases := []struct {
		name, from, to string
		check          func(t *testing.T, h HTTP)
		err            string
	}{
		{name: "port and host", from: `value="8161"`, to: `value="${web.port}"`, check: func(t *testing.T, h HTTP) {
			if h.Port != 9161 {
				t.Errorf("port %d, want 9161 from ${web.port}", h.Port)
			}
		}},
		{name: "login off", from: `<property name="authenticate" value="true"/>`, to: `<property name="authenticate" value="false"/>`, check: func(t *testing.T, h HTTP) {
			if h.Authenticate {
				t.Error("authenticate=\"false\" left the login on")
			}
		}},
		{name: "literal connector port", from: `value="#{systemProperties['jetty.port']}"`, to: `value="8999"`, check: func(t *testing.T, h HTTP) {
			if h.Port != 8999 {
				t.Errorf("port %d, want the connector's 8999", h.Port)
			}
		}},
		{name: "unknown property", from: `<property name="port" value="8161"/>`, to: `<property name="port" value="8161"/><property name="ssl" value="true"/>`,
			err: `jetty.xml:31:45: <bean class="org.apache.activemq.web.WebConsolePort">: <property name="ssl"> is not supported by Wharf`},
		{name: "bad port", from: `value="8161"`, to: `value="eighty"`, err: `<property name="port" value="eighty">: not an integer`},
		{name: "port out of range", from: `value="8161"`, to: `value="80000"`, err: `80000 is not a port`},
		{name: "missing realm", from: `/jetty-realm.properties`, to: `/nobody.properties`, err: `cannot read "./conf/nobody.properties" (nor "nobody.properties" beside`},
		{name: "syntax", from: `</beans>`, to: ``, err: "jetty.xml:48: XML syntax error: unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			edited := strings.Replace(string(jetty), tc.from, tc.to, 1)
			if edited == string(jetty) {
				t.Fatalf("%q is not in testdata/jetty.xml", tc.from)
			}
			file := confDir(t, map[string][]byte{"jetty.xml": []byte(edited), "jetty-realm.properties": realm})
			c, err := LoadFile(file, map[string]string{"web.port": "9161"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c.HTTP)
		})
	}
}

func TestConfigHTTPYAML(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"realm.properties", "broker.ks"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x: y, admin\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y := `persistent: false
http:
  host: 0.0.0.0
  port: 9000
  authenticate: true
  realm: realm.properties
  realm_name: Wharf
  max_destination_series: 50
  https: {port: 9443, key_store: broker.ks, key_store_password: pw, key_store_type: PKCS12}
`
	file := filepath.Join(dir, "wharf.yaml")
	if err := os.WriteFile(file, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := c.HTTP
	if h.Host != "0.0.0.0" || h.Port != 9000 || h.Realm != filepath.Join(dir, "realm.properties") || h.RealmName != "Wharf" || h.MaxDestinationSeries != 50 {
		t.Errorf("HTTP = %+v", h)
	}
	if s := h.HTTPS; s == nil || s.Host != "127.0.0.1" || s.Port != 9443 || s.TLS.KeyStore != filepath.Join(dir, "broker.ks") || s.TLS.KeyStorePassword != "pw" || s.TLS.KeyStoreType != "pkcs12" {
		t.Errorf("HTTPS = %+v, want 127.0.0.1:9443 with the pkcs12 broker.ks", s)
	}

	for _, tc := range []struct{ yaml, err string }{
		{"http: {prot: 1}", `unknown key "prot"; did you mean "port"?`},
		{"http: {port: -1}", "-1 is not a port"},
		{"http: {max_destination_series: -1}", "must not be negative"},
		{"http: {https: {port: 8161}}", "needs a key store"},
		{"http: {realm: /nonexistent/realm}", `cannot read "/nonexistent/realm"`},
		{"http: {https: {port: 9443, key_store: /etc/hostname, key_store_type: pem}}", `store type "pem"`},
	} {
		_, err := ParseYAML(strings.NewReader(tc.yaml), "wharf.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.yaml, err, tc.err)
		}
	}
	c, err = ParseYAML(strings.NewReader("http: {enabled: false}"), "wharf.yaml", nil)
	if err != nil || c.HTTP.Enabled {
		t.Errorf("enabled: false: %v, Enabled %v", err, c != nil && c.HTTP.Enabled)
	}
}

// TestConfigHTTPWebSocket: http.websocket (YAML list or comma string,
// <broker wharf:httpWebSocket>) names the protocols served over WebSocket
// on the web server's ports; none by default; unknown or repeated names
// are refused, and so is a web server off loopback serving them without
// authentication, unless the network is trusted.
func TestConfigHTTPWebSocket(t *testing.T) {
	c, err := ParseYAML(strings.NewReader("persistent: false"), "wharf.yaml", nil)
	if err != nil || len(c.HTTP.WebSocket) != 0 {
		t.Fatalf("default: %v, WebSocket %q; want none", err, c.HTTP.WebSocket)
	}
	for _, y := range []string{"http: {websocket: [stomp, mqtt]}", `http: {websocket: "stomp, mqtt"}`} {
		c, err := ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
		if err != nil || strings.Join(c.HTTP.WebSocket, ",") != "stomp,mqtt" {
			t.Errorf("%s: %v, WebSocket %q", y, err, c.HTTP.WebSocket)
		}
	}
	c, err = ParseXML(strings.NewReader(strings.Replace(wharfNSDoc, "%s", `wharf:trustedNetwork="true" wharf:httpWebSocket="mqtt"`, 1)), "activemq.xml", nil)
	if err != nil || strings.Join(c.HTTP.WebSocket, ",") != "mqtt" {
		t.Errorf("wharf:httpWebSocket: %v, WebSocket %q; want mqtt", err, c.HTTP.WebSocket)
	}
	auth := "security: {authentication: {kind: simple, users: [{username: u, password: p}]}}\n"
	for _, tc := range []struct{ yaml, err string }{
		{"http:\n  websocket: [stomp, amqp]\n", `http.websocket: "amqp" is not a protocol the web server serves over WebSocket (want stomp, mqtt)`},
		{"http:\n  websocket: [mqtt, mqtt]\n", `"mqtt" is listed twice`},
		{"http:\n  websocket: [stomp]\n  host: 0.0.0.0\n", `serving stomp over WebSocket on the web server listening on "0.0.0.0" needs authentication`},
		{"http:\n  websocket: [mqtt]\n  https: {host: 0.0.0.0, port: 8162, key_store: /etc/hostname}\n", `serving mqtt over WebSocket on the web server listening on "0.0.0.0" needs authentication`},
	} {
		_, err := ParseYAML(strings.NewReader(tc.yaml), "wharf.yaml", nil)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.yaml, err, tc.err)
		}
	}
	// Off loopback with authentication, or on a trusted network: allowed.
	for _, y := range []string{auth + "http: {websocket: [stomp], host: 0.0.0.0}", "trusted_network: true\nhttp: {websocket: [stomp], host: 0.0.0.0}"} {
		if _, err := ParseYAML(strings.NewReader(y), "wharf.yaml", nil); err != nil {
			t.Errorf("%s: %v", y, err)
		}
	}
}
