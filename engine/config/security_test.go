package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"wharf/engine/message"
)

// seedSecurityVars are the placeholder values seed 000's snippets need.
func seedSecurityVars(t *testing.T) map[string]string {
	v := stockVars(t)
	v["orders.password"] = "o-secret"
	v["fulfilment.password"] = "f-secret"
	v["ops.password"] = "ops-secret"
	return v
}

// wantSeed000Security is what seed 000's <plugins> and <sslContext>
// snippets configure.
func wantSeed000Security(t *testing.T) (Security, *SSLContext) {
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	entry := func(d message.Destination, read, write, admin string) AuthorizationEntry {
		return AuthorizationEntry{Destination: d, Read: strings.Split(read, ","), Write: strings.Split(write, ","), Admin: strings.Split(admin, ",")}
	}
	temp := entry(message.Destination{Type: message.TempQueue}, "everyone", "everyone", "everyone")
	sec := Security{
		Authentication: &Authentication{Kind: AuthSimple, AnonymousUser: "anonymous", AnonymousGroup: "anonymous", Users: []AuthUser{
			{Username: "orders-svc", Password: "o-secret", Groups: []string{"producers"}},
			{Username: "fulfilment", Password: "f-secret", Groups: []string{"consumers"}},
			{Username: "ops", Password: "ops-secret", Groups: []string{"admins"}},
		}},
		Authorization: &AuthorizationMap{GroupClass: DefaultGroupClass, Temp: &temp, Entries: []AuthorizationEntry{
			entry(message.QueueDest("orders.>"), "consumers", "producers", "producers,consumers"),
			entry(message.QueueDest("DLQ.>"), "admins", "admins", "admins"),
			entry(message.QueueDest(">"), "admins", "admins", "admins"),
			entry(message.TopicDest(">"), "admins", "admins", "admins"),
			entry(message.TopicDest("ActiveMQ.Advisory.>"), "everyone", "everyone", "everyone"),
		}},
	}
	ssl := &SSLContext{KeyStore: filepath.Join(dir, "broker.ks"), KeyStorePassword: "password",
		TrustStore: filepath.Join(dir, "broker.ts"), TrustStorePassword: "password",
		KeyStoreType: "jks", TrustStoreType: "jks", Protocol: "TLS"}
	return sec, ssl
}

// TestConfigSecuritySeed000: seed 000's simple authentication plugin
// (passwords from ${...}), authorization map and sslContext load into the
// security types, in activemq.xml and in YAML alike; the connectors on
// 0.0.0.0 are allowed because authentication is configured, and the TLS
// connectors carry the SSL context and their TLS options.
func TestConfigSecuritySeed000(t *testing.T) {
	x := load(t, "seed000-security.xml", seedSecurityVars(t))
	y := load(t, "seed000-security.yaml", seedSecurityVars(t))
	if a := x.Security.Authentication; a == nil || a.Line != 7 || x.Security.Authorization.Entries[0].Line != 18 || x.SSLContext.Line != 32 {
		t.Errorf("lines: authentication %+v, first entry %+v, sslContext %+v", a, x.Security.Authorization.Entries, x.SSLContext)
	}
	clearLines(x)
	clearLines(y)
	sec, ssl := wantSeed000Security(t)
	if !reflect.DeepEqual(x.Security.Authentication, sec.Authentication) {
		t.Errorf("Authentication = %+v\nwant %+v", x.Security.Authentication, sec.Authentication)
	}
	if !reflect.DeepEqual(x.Security.Authorization, sec.Authorization) {
		t.Errorf("Authorization = %+v\nwant %+v", x.Security.Authorization, sec.Authorization)
	}
	if !reflect.DeepEqual(x.SSLContext, ssl) {
		t.Errorf("SSLContext = %+v\nwant %+v", x.SSLContext, ssl)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("XML and YAML differ:\nxml  %+v\nyaml %+v", x, y)
	}
	if len(x.Transports) != 3 {
		t.Fatalf("Transports = %+v", x.Transports)
	}
	if tr := x.Transports[0]; tr.TLS != nil || !reflect.DeepEqual(tr.TLSOptions, TLSOptions{}) {
		t.Errorf("plain connector got TLS: %+v", tr)
	}
	if tr := x.Transports[1]; !reflect.DeepEqual(tr.TLS, ssl) || tr.TLS == x.SSLContext || !tr.TLSOptions.NeedClientAuth || tr.TLSOptions.WantClientAuth {
		t.Errorf("ssl connector: TLS %+v (shared %v), options %+v", tr.TLS, tr.TLS == x.SSLContext, tr.TLSOptions)
	}
	if o := x.Transports[2].TLSOptions; !reflect.DeepEqual(o.Versions, []uint16{tls.VersionTLS12, tls.VersionTLS13}) || o.NeedClientAuth {
		t.Errorf("stomp+ssl options = %+v", o)
	}
	if x.TrustedNetwork {
		t.Error("TrustedNetwork set")
	}
}

// TestConfigSecurityJAAS: the JAAS plugins get ActiveMQ's defaults, and
// the login.config is found as ActiveMQ finds it: -D
// java.security.auth.login.config, else the environment, else beside the
// configuration file.
func TestConfigSecurityJAAS(t *testing.T) {
	c := load(t, "seed000-jaas.xml", nil)
	want := &Authentication{Kind: AuthJAAS, Configuration: "activemq", LoginConfig: filepath.Join("testdata", "login.config"), Line: 4}
	if !reflect.DeepEqual(c.Security.Authentication, want) {
		t.Errorf("Authentication = %+v\nwant %+v", c.Security.Authentication, want)
	}
	c = load(t, "seed000-jaas.xml", map[string]string{"java.security.auth.login.config": "file:/etc/wharf/login.config"})
	if got := c.Security.Authentication.LoginConfig; got != "/etc/wharf/login.config" {
		t.Errorf("with -D: LoginConfig = %q", got)
	}
	t.Setenv("JAVA_SECURITY_AUTH_LOGIN_CONFIG", "/env/login.config")
	c = load(t, "seed000-jaas.xml", nil)
	if got := c.Security.Authentication.LoginConfig; got != "/env/login.config" {
		t.Errorf("with the environment: LoginConfig = %q", got)
	}

	for _, tc := range []struct{ xml, yaml string }{
		{`<jaasCertificateAuthenticationPlugin/>`, "{kind: jaas_certificate}"},
		{`<jaasDualAuthenticationPlugin/>`, "{kind: jaas_dual}"},
		{`<jaasDualAuthenticationPlugin configuration="pw" sslConfiguration="certs"/>`, "{kind: jaas_dual, configuration: pw, ssl_configuration: certs}"},
		{`<jaasAuthenticationPlugin/>`, "{kind: jaas, login_config: /env/login.config}"},
	} {
		x, err := ParseXML(strings.NewReader(secDoc("<plugins>"+tc.xml+"</plugins>")), "activemq.xml", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.xml, err)
		}
		y, err := ParseYAML(strings.NewReader("security: {authentication: "+tc.yaml+"}"), "wharf.yaml", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		x.Security.Authentication.Line, y.Security.Authentication.Line = 0, 0
		if !reflect.DeepEqual(x.Security.Authentication, y.Security.Authentication) {
			t.Errorf("%s = %+v\n%s = %+v", tc.xml, x.Security.Authentication, tc.yaml, y.Security.Authentication)
		}
		a := x.Security.Authentication
		if a.Configuration == "" || a.LoginConfig != "/env/login.config" || (a.Kind == AuthJAASDual) != (a.SSLConfiguration != "") {
			t.Errorf("%s: %+v", tc.xml, a)
		}
		if a.Kind == AuthJAASDual && a.Configuration == "activemq-domain" && a.SSLConfiguration != "activemq-ssl-domain" {
			t.Errorf("%s: dual defaults %+v", tc.xml, a)
		}
	}
}

// fakeDecrypt stands in for package security's Jasypt cipher: the
// "ciphertext" is base64-free text that decrypts to itself reversed, and
// "bad" fails.
func fakeDecrypt(ciphertext, password string) (string, error) {
	if ciphertext == "bad==" {
		return "", errors.New("bad padding")
	}
	return "plain(" + ciphertext + "," + password + ")", nil
}

// TestConfigSecurityEncrypted: ENC() values, from the Jasypt configurer's
// properties file or written in the file, are decrypted through
// LoadOptions.Decrypt with the password from ACTIVEMQ_ENCRYPTION_PASSWORD,
// in activemq.xml (ActiveMQ's activemq-security.xml beans) and YAML.
func TestConfigSecurityEncrypted(t *testing.T) {
	t.Setenv("ACTIVEMQ_ENCRYPTION_PASSWORD", "activemq")
	o := LoadOptions{Decrypt: fakeDecrypt}
	x, err := LoadFileWith(filepath.Join("testdata", "activemq-encrypted.xml"), stockVars(t), o)
	if err != nil {
		t.Fatal(err)
	}
	vars := stockVars(t)
	vars["guest.password"] = "ENC(Cf3Jf3tM+UrSOoaKU50od5CuBa8rxjoL)"
	y, err := LoadFileWith(filepath.Join("testdata", "encrypted.yaml"), vars, o)
	if err != nil {
		t.Fatal(err)
	}
	wantUsers := []AuthUser{
		{Username: "system", Password: "plain(mYRkg+4Q4hua1kvpCCI2hg==,activemq)", Groups: []string{"users", "admins"}},
		{Username: "guest", Password: "plain(Cf3Jf3tM+UrSOoaKU50od5CuBa8rxjoL,activemq)", Groups: []string{"guests"}},
	}
	if got := x.Security.Authentication.Users; !reflect.DeepEqual(got, wantUsers) {
		t.Errorf("Users = %+v\nwant %+v", got, wantUsers)
	}
	if got := x.SSLContext.KeyStorePassword; got != "plain(a2V5c3RvcmU=,activemq)" {
		t.Errorf("KeyStorePassword = %q", got)
	}
	wantEnc := &Encryption{Algorithm: EncryptionAlgorithm, PasswordEnv: "ACTIVEMQ_ENCRYPTION_PASSWORD"}
	if x.Encryption == nil || x.Encryption.Line != 8 {
		t.Errorf("Encryption = %+v, want line 8 (the encryptor bean)", x.Encryption)
	}
	clearLines(x)
	clearLines(y)
	if !reflect.DeepEqual(x.Encryption, wantEnc) {
		t.Errorf("Encryption = %+v, want %+v", x.Encryption, wantEnc)
	}
	if !reflect.DeepEqual(x, y) {
		t.Errorf("XML and YAML differ:\nxml  %+v\nyaml %+v", x, y)
	}

	// The encryptor's own password, as in the commented-out variant of
	// activemq-security.xml.
	doc := `<beans>
<bean id="enc" class="org.jasypt.encryption.pbe.StandardPBEStringEncryptor">
  <property name="algorithm" value="PBEWithMD5AndDES"/>
  <property name="password" value="literal"/>
</bean>
<bean class="org.jasypt.spring31.properties.EncryptablePropertyPlaceholderConfigurer">
  <constructor-arg ref="enc"/>
</bean>
<broker brokerName="b"><sslContext><sslContext keyStore="testdata/broker.ks" keyStorePassword="ENC(x)"/></sslContext></broker>
</beans>`
	c, err := parseXML(strings.NewReader(doc), "activemq.xml", nil, o)
	if err != nil {
		t.Fatal(err)
	}
	if c.SSLContext.KeyStorePassword != "plain(x,literal)" || c.Encryption.Password != "literal" || c.Encryption.PasswordEnv != "" {
		t.Errorf("SSLContext = %+v, Encryption = %+v", c.SSLContext, c.Encryption)
	}
}

// secDoc wraps lines of <broker> content; the first line of body is line 3.
func secDoc(body string) string {
	return "<beans>\n<broker brokerName=\"b\">\n" + body + "\n</broker>\n</beans>\n"
}

const jasyptBeans = `<bean id="cfg" class="org.jasypt.encryption.pbe.config.EnvironmentStringPBEConfig">
  <property name="passwordEnvName" value="WHARF_TEST_ENC_PASSWORD"/>
</bean>
<bean id="enc" class="org.jasypt.encryption.pbe.StandardPBEStringEncryptor"><property name="config" ref="cfg"/></bean>
<bean class="org.jasypt.spring4.properties.EncryptablePropertyPlaceholderConfigurer"><constructor-arg ref="enc"/></bean>
`

// TestConfigSecurityXMLErrors: every refused security setting in
// activemq.xml is reported at its line with what to do.
func TestConfigSecurityXMLErrors(t *testing.T) {
	ks, err := filepath.Abs(filepath.Join("testdata", "broker.ks"))
	if err != nil {
		t.Fatal(err)
	}
	ssl := `<sslContext><sslContext keyStore="` + ks + `"/></sslContext>`
	tls12 := `<sslContext><sslContext keyStore="` + ks + `" trustStore="` + ks + `" protocol="TLSv1.2"/></sslContext>`
	cases := []struct {
		name      string
		doc       string
		line, col int
		err       string
		env       string // WHARF_TEST_ENC_PASSWORD, "-" for unset
	}{
		{name: "other plugin", doc: secDoc("<plugins>\n  <loggingBrokerPlugin/>\n</plugins>"), line: 4, col: 3, err: "<loggingBrokerPlugin> is not supported by Wharf yet"},
		{name: "runtime configuration plugin", doc: secDoc("<plugins><runtimeConfigurationPlugin checkPeriod=\"1000\"/></plugins>"), line: 3, col: 10, err: "<runtimeConfigurationPlugin> is not supported by Wharf yet"},
		{name: "two authentication plugins", doc: secDoc("<plugins>\n<jaasAuthenticationPlugin/>\n<simpleAuthenticationPlugin/>\n</plugins>"), line: 5, col: 1,
			err: "<simpleAuthenticationPlugin>: only one authentication plugin may be configured (<jaasAuthenticationPlugin> at line 4)"},
		{name: "user maps", doc: secDoc("<plugins><simpleAuthenticationPlugin>\n<userPasswords/></simpleAuthenticationPlugin></plugins>"), line: 4, col: 1,
			err: `<userPasswords> is not supported by Wharf yet: list each user as <authenticationUser`},
		{name: "misspelt attribute", doc: secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" passwrd=\"x\"/></users></simpleAuthenticationPlugin></plugins>"), line: 4, col: 34,
			err: "unknown attribute passwrd; did you mean password?"},
		{name: "no password", doc: secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\"/></users></simpleAuthenticationPlugin></plugins>"), line: 4, col: 1,
			err: `password is required (ActiveMQ would never authenticate "a")`},
		{name: "empty password", doc: secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" password=\"\"/></users></simpleAuthenticationPlugin></plugins>"), line: 4, col: 34,
			err: `the password of "a" is empty`},
		{name: "duplicate user", doc: secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" password=\"x\"/>\n<authenticationUser username=\"a\" password=\"y\"/></users></simpleAuthenticationPlugin></plugins>"), line: 5, col: 21,
			err: `user "a" is already defined (user 0)`},
		{name: "unresolved password", doc: secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" password=\"${nope}\"/></users></simpleAuthenticationPlugin></plugins>"), line: 4, col: 34,
			err: "unresolved placeholder ${nope}"},
		{name: "anonymous on jaas", doc: secDoc("<plugins><jaasAuthenticationPlugin\n anonymousAccessAllowed=\"true\"/></plugins>"), line: 4, col: 2,
			err: "attribute anonymousAccessAllowed is not supported"},
		{name: "no login.config", doc: secDoc("<plugins>\n<jaasAuthenticationPlugin discoverLoginConfig=\"false\"/></plugins>"), line: 4, col: 1,
			err: "no login.config: set -Djava.security.auth.login.config=FILE"},
		{name: "entry with queue and topic", doc: secDoc(authzDoc(`<authorizationEntry queue="a" topic="b" read="x"/>`)), line: 5, col: 33,
			err: `set exactly one of queue and topic, not both`},
		{name: "entry without destination", doc: secDoc(authzDoc(`<authorizationEntry read="x"/>`)), line: 5, col: 3,
			err: "set exactly one of queue, topic, tempQueue and tempTopic"},
		{name: "entry with a bad pattern", doc: secDoc(authzDoc(`<authorizationEntry queue="a.>.b" read="x"/>`)), line: 5, col: 23,
			err: `"a.>.b" has ">" before its last element`},
		{name: "composite pattern", doc: secDoc(authzDoc(`<authorizationEntry topic="a,b" read="x"/>`)), line: 5, col: 23,
			err: "composite pattern"},
		{name: "tempQueue false", doc: secDoc(authzDoc(`<authorizationEntry tempQueue="false" read="x"/>`)), line: 5, col: 23,
			err: "ActiveMQ reads this as true whatever its value"},
		{name: "tempQueue and queue", doc: secDoc(authzDoc(`<authorizationEntry queue="a" tempQueue="true" read="x"/>`)), line: 5, col: 33,
			err: "set exactly one of queue, topic, tempQueue and tempTopic"},
		{name: "default entry with a destination", doc: secDoc("<plugins><authorizationPlugin><map><authorizationMap><authorizationEntries/>\n<defaultEntry><authorizationEntry queue=\">\" read=\"a\"/></defaultEntry>\n</authorizationMap></map></authorizationPlugin></plugins>"), line: 4, col: 35,
			err: "the default entry applies to every destination; remove the destination"},
		{name: "temp entry with a destination", doc: secDoc("<plugins><authorizationPlugin><map><authorizationMap><authorizationEntries/>\n<tempDestinationAuthorizationEntry><tempDestinationAuthorizationEntry topic=\">\"/></tempDestinationAuthorizationEntry>\n</authorizationMap></map></authorizationPlugin></plugins>"), line: 4, col: 71,
			err: "the temporary destination entry applies to every temporary queue and topic"},
		{name: "map without entries", doc: secDoc("<plugins><authorizationPlugin><map>\n<authorizationMap/></map></authorizationPlugin></plugins>"), line: 4, col: 1,
			err: "<authorizationMap>: add <authorizationEntries>"},
		{name: "LDAP map", doc: secDoc("<plugins><authorizationPlugin><map>\n<cachedLDAPAuthorizationMap/></map></authorizationPlugin></plugins>"), line: 4, col: 1,
			err: "<cachedLDAPAuthorizationMap> is not supported by Wharf yet"},
		{name: "only authorization off loopback", doc: secDoc(authzDoc(`<authorizationEntry queue="a" read="x"/>`) + "\n<transportConnectors><transportConnector uri=\"tcp://0.0.0.0:1\"/></transportConnectors>"), line: 8, col: 42,
			err: `listening on "0.0.0.0" needs authentication: add an authentication plugin to <plugins>`},
		{name: "ssl without sslContext", doc: secDoc("<transportConnectors>\n<transportConnector uri=\"ssl://127.0.0.1:1\"/></transportConnectors>"), line: 4, col: 21,
			err: `scheme "ssl" needs the broker's certificate: add <sslContext><sslContext keyStore=`},
		{name: "amqps without sslContext", doc: secDoc("<transportConnectors>\n<transportConnector uri=\"amqps://127.0.0.1:1\"/></transportConnectors>"), line: 4, col: 21,
			err: `scheme "amqps" needs the broker's certificate`},
		{name: "missing key store", doc: secDoc("<sslContext>\n<sslContext keyStore=\"file:/nonexistent/broker.ks\"/></sslContext>"), line: 4, col: 13,
			err: `<sslContext keyStore="file:/nonexistent/broker.ks">: cannot read "/nonexistent/broker.ks": no such file or directory`},
		{name: "key store is a directory", doc: secDoc("<sslContext>\n<sslContext keyStore=\"testdata\"/></sslContext>"), line: 4, col: 13,
			err: `"testdata" is a directory`},
		{name: "classpath key store", doc: secDoc("<sslContext>\n<sslContext trustStore=\"classpath:broker.ts\"/></sslContext>"), line: 4, col: 13,
			err: "only file paths and file: URLs"},
		{name: "crlPath", doc: secDoc("<sslContext>\n<sslContext crlPath=\"crl.pem\"/></sslContext>"), line: 4, col: 13,
			err: "attribute crlPath is not supported by Wharf yet"},
		{name: "store type", doc: secDoc("<sslContext>\n<sslContext keyStoreType=\"JCEKS\"/></sslContext>"), line: 4, col: 13,
			err: `<sslContext keyStoreType="JCEKS">: "jceks" is not supported by Wharf (want jks or pkcs12)`},
		{name: "old protocol", doc: secDoc("<sslContext>\n<sslContext protocol=\"TLSv1.1\"/></sslContext>"), line: 4, col: 13,
			err: `"TLSv1.1" is not supported: Wharf's minimum is TLS 1.2`},
		{name: "key manager algorithm", doc: secDoc("<sslContext>\n<sslContext keyStoreAlgorithm=\"IbmX509\"/></sslContext>"), line: 4, col: 13,
			err: `<sslContext keyStoreAlgorithm="IbmX509">: not supported by Wharf (accepted, with no effect: SunX509, NewSunX509, PKIX)`},
		{name: "TLS connector without key store", doc: secDoc("<sslContext><sslContext trustStore=\"" + ks + "\"/></sslContext>\n<transportConnectors><transportConnector name=\"s\" uri=\"ssl://127.0.0.1:1\"/></transportConnectors>"), line: 3, col: 13,
			err: `keyStore is required: TLS connector "s" needs the broker's certificate and key`},
		{name: "TLS option on a plain connector", doc: secDoc("<transportConnectors>\n<transportConnector uri=\"tcp://127.0.0.1:1?transport.needClientAuth=true\"/></transportConnectors>"), line: 4, col: 21,
			err: `option "transport.needClientAuth" applies to TLS connectors only`},
		{name: "TLS 1.1", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledProtocols=TLSv1.1,TLSv1.2\"/></transportConnectors>"), line: 4, col: 42,
			err: `option transport.enabledProtocols="TLSv1.1,TLSv1.2": TLSv1.1 is not supported: Wharf's minimum is TLS 1.2`},
		{name: "SSLv2Hello alone", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledProtocols=SSLv2Hello\"/></transportConnectors>"), line: 4, col: 42,
			err: `names no protocol`},
		{name: "unknown protocol", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledProtocols=TLSv2\"/></transportConnectors>"), line: 4, col: 42,
			err: `"TLSv2" is not a protocol name`},
		{name: "unknown cipher suite", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledCipherSuites=TLS_FOO\"/></transportConnectors>"), line: 4, col: 42,
			err: `"TLS_FOO" is not a cipher suite Go implements`},
		{name: "insecure cipher suite", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledCipherSuites=TLS_RSA_WITH_RC4_128_SHA\"/></transportConnectors>"), line: 4, col: 42,
			err: "TLS_RSA_WITH_RC4_128_SHA is insecure"},
		{name: "client auth not a boolean", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"nio+ssl://127.0.0.1:1?needClientAuth=maybe\"/></transportConnectors>"), line: 4, col: 42,
			err: `option needClientAuth="maybe": not a boolean`},
		{name: "client auth without trust store", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.needClientAuth=TRUE\"/></transportConnectors>"), line: 4, col: 42,
			err: `option transport.needClientAuth="TRUE" needs a trustStore in the SSL context to verify client certificates`},
		{name: "TLS 1.3 under a TLSv1.2 context", doc: secDoc(tls12 + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledProtocols=TLSv1.3\"/></transportConnectors>"), line: 4, col: 42,
			err: `option transport.enabledProtocols="TLSv1.3": none of these is allowed by <sslContext protocol="TLSv1.2">`},
		{name: "TLS 1.3 suites under a TLSv1.2 context", doc: secDoc(tls12 + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledCipherSuites=TLS_AES_128_GCM_SHA256\"/></transportConnectors>"), line: 4, col: 42,
			err: `option transport.enabledCipherSuites="TLS_AES_128_GCM_SHA256" lists TLS 1.3 suites only, but TLS 1.3 is not enabled`},
		{name: "renegotiation SCSV alone", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledCipherSuites=TLS_EMPTY_RENEGOTIATION_INFO_SCSV\"/></transportConnectors>"), line: 4, col: 42,
			err: `option transport.enabledCipherSuites="TLS_EMPTY_RENEGOTIATION_INFO_SCSV": names no cipher suite`},
		{name: "TLS 1.3 CCM suite", doc: secDoc(ssl + "\n<transportConnectors><transportConnector uri=\"ssl://127.0.0.1:1?transport.enabledCipherSuites=TLS_AES_128_CCM_SHA256\"/></transportConnectors>"), line: 4, col: 42,
			err: `"TLS_AES_128_CCM_SHA256" is not a cipher suite Go implements`},
		{name: "other bean", doc: "<beans>\n<bean class=\"org.example.Thing\"/>\n<broker/></beans>", line: 2, col: 1,
			err: `<bean class="org.example.Thing"> is not supported by Wharf yet`},
		{name: "ENC without encryptor", doc: secDoc(ssl[:len(ssl)-len("/></sslContext>")] + ` keyStorePassword="ENC(abc)"/></sslContext>`), line: 3, col: 37 + len(ks),
			err: `an ENC() value but no EncryptablePropertyPlaceholderConfigurer bean`},
		{name: "ENC placeholder without encryptor", doc: secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" password=\"${p:ENC(abc)}\"/></users></simpleAuthenticationPlugin></plugins>"), line: 4, col: 34,
			err: `${p} is an ENC() value but no EncryptablePropertyPlaceholderConfigurer bean`},
		{name: "encryption password unset", env: "-", doc: strings.Replace(secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" password=\"${p:ENC(abc)}\"/></users></simpleAuthenticationPlugin></plugins>"), "<beans>\n", "<beans>"+jasyptBeans, 1), line: 8, col: 34,
			err: `${p} is an ENC() value but the encryption password variable WHARF_TEST_ENC_PASSWORD is not set`},
		{name: "decryption fails", env: "pw", doc: strings.Replace(secDoc("<plugins><simpleAuthenticationPlugin><users>\n<authenticationUser username=\"a\" password=\"${p:ENC(bad==)}\"/></users></simpleAuthenticationPlugin></plugins>"), "<beans>\n", "<beans>"+jasyptBeans, 1), line: 8, col: 34,
			err: `${p} is an ENC() value that cannot be decrypted with the PBEWithMD5AndDES password: bad padding`},
		{name: "other algorithm", doc: "<beans>\n<bean class=\"org.jasypt.encryption.pbe.StandardPBEStringEncryptor\">\n<property name=\"algorithm\" value=\"PBEWITHHMACSHA512ANDAES_256\"/><property name=\"password\" value=\"p\"/></bean><broker/></beans>", line: 3, col: 28,
			err: `algorithm "PBEWITHHMACSHA512ANDAES_256" is not supported by Wharf (only PBEWithMD5AndDES`},
		{name: "encryptor without password", doc: "<beans>\n<bean class=\"org.jasypt.encryption.pbe.StandardPBEStringEncryptor\"/><broker/></beans>", line: 2, col: 1,
			err: "the encryptor has no password"},
		{name: "unknown encryptor ref", doc: "<beans>\n<bean class=\"org.jasypt.spring31.properties.EncryptablePropertyPlaceholderConfigurer\">\n<constructor-arg ref=\"nope\"/></bean><broker/></beans>", line: 3, col: 1,
			err: `<constructor-arg ref="nope">: no org.jasypt.encryption.pbe.StandardPBEStringEncryptor bean has id "nope"`},
		{name: "other encryptor property", doc: "<beans>\n<bean class=\"org.jasypt.encryption.pbe.StandardPBEStringEncryptor\">\n<property name=\"keyObtentionIterations\" value=\"1000\"/><property name=\"password\" value=\"p\"/></bean><broker/></beans>", line: 3, col: 1,
			err: `<property name="keyObtentionIterations"> of org.jasypt.encryption.pbe.StandardPBEStringEncryptor is not supported by Wharf`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			switch tc.env {
			case "":
			case "-":
				t.Setenv("WHARF_TEST_ENC_PASSWORD", "")
				os.Unsetenv("WHARF_TEST_ENC_PASSWORD")
			default:
				t.Setenv("WHARF_TEST_ENC_PASSWORD", tc.env)
			}
			_, err := parseXML(strings.NewReader(tc.doc), "activemq.xml", nil, LoadOptions{Decrypt: fakeDecrypt})
			wantProblem(t, err, tc.line, tc.col, tc.err)
		})
	}
}

// authzDoc is an authorization plugin whose entry is on line 5 of secDoc.
func authzDoc(entry string) string {
	return "<plugins><authorizationPlugin><map><authorizationMap>\n<authorizationEntries>\n  " + entry + "\n</authorizationEntries>\n</authorizationMap></map></authorizationPlugin></plugins>"
}

// TestConfigSecurityYAMLErrors: the YAML form's refusals, at their keys.
func TestConfigSecurityYAMLErrors(t *testing.T) {
	cases := []struct {
		name, yaml string
		line, col  int
		err        string
	}{
		{"no kind", "security:\n  authentication: {users: []}", 2, 19, "security.authentication: kind is required (simple, jaas, jaas_certificate or jaas_dual)"},
		{"unknown kind", "security:\n  authentication: {kind: ldap}", 2, 26, `security.authentication.kind "ldap": not one of simple, jaas, jaas_certificate, jaas_dual`},
		{"users with jaas", "security:\n  authentication: {kind: jaas, users: []}", 2, 32, "security.authentication.users: applies to kind simple only"},
		{"ssl configuration with jaas", "security:\n  authentication: {kind: jaas, ssl_configuration: x}", 2, 32, "applies to kind jaas_dual only"},
		{"configuration with simple", "security:\n  authentication: {kind: simple, configuration: x}", 2, 34, "applies to kind jaas, jaas_certificate, jaas_dual only"},
		{"user without password", "security:\n  authentication:\n    kind: simple\n    users: [{username: a}]", 4, 13, "password is required"},
		{"comma in a group list element", "security:\n  authentication:\n    kind: simple\n    users: [{username: a, password: b, groups: ['x,y']}]", 4, 49, "one group per list element"},
		{"entry without destination", "security:\n  authorization:\n    entries: [{read: [a]}]", 3, 15, "set exactly one of queue, topic, temp_queue and temp_topic"},
		{"entry with both", "security:\n  authorization:\n    entries: [{queue: a, topic: b}]", 3, 33, "set exactly one of queue and topic, not both"},
		{"default with a queue", "security:\n  authorization:\n    default: {queue: a}", 3, 15, "the default entry applies to every destination"},
		{"unknown authorization key", "security:\n  authorization:\n    entry: []", 3, 5, `security.authorization: unknown key "entry"`},
		{"off loopback without authentication", "transport_connectors: [{name: a, uri: 'tcp://0.0.0.0:5'}]", 1, 39, "needs authentication: add security: {authentication: {kind: simple, users: [...]}}"},
		{"tls without ssl_context", "transport_connectors: [{name: a, uri: 'mqtt+wss://127.0.0.1:5'}]", 1, 39, `scheme "mqtt+wss" needs the broker's certificate: add ssl_context`},
		{"want without trust_store", "ssl_context: {key_store: testdata/broker.ks}\ntransport_connectors: [{name: a, uri: 'ssl://127.0.0.1:5?wantClientAuth=true'}]", 2, 39, `option wantClientAuth="true" needs a trust_store in the SSL context`},
		{"unknown ssl_context key", "ssl_context: {key_store_algorithm: SunX509}", 1, 15, `unknown key "key_store_algorithm"`},
		{"missing key store", "ssl_context: {key_store: /nonexistent.ks}", 1, 26, `cannot read "/nonexistent.ks"`},
		{"ENC without encryption", "ssl_context: {key_store_password: ENC(abc)}", 1, 35, "an ENC() value but no encryption (password_env or password) is configured"},
		{"encryption without password", "encryption: {algorithm: PBEWithMD5AndDES}", 1, 1, "the encryptor has no password"},
		{"encryption algorithm", "encryption: {password: p, algorithm: PBEWithSHA1AndDESede}", 1, 38, `algorithm "PBEWithSHA1AndDESede" is not supported by Wharf`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseYAML(strings.NewReader(tc.yaml), "wharf.yaml", nil, LoadOptions{Decrypt: fakeDecrypt})
			wantProblem(t, err, tc.line, tc.col, tc.err)
		})
	}
}

// TestConfigSecurityTLSSchemes: every TLS scheme is accepted with an SSL
// context, gets a copy of it, and takes the TLS options, unprefixed
// client-auth ones included.
func TestConfigSecurityTLSSchemes(t *testing.T) {
	var b strings.Builder
	b.WriteString("ssl_context: {key_store: testdata/broker.ks, key_store_type: PKCS12, trust_store: testdata/broker.ts}\ntransport_connectors:\n")
	schemes := []string{"ssl", "nio+ssl", "stomp+ssl", "stomp+nio+ssl", "mqtt+ssl", "mqtt+nio+ssl", "amqp+ssl", "amqp+nio+ssl", "amqps", "wss", "stomp+wss", "mqtt+wss", "amqp+wss"}
	for i, s := range schemes {
		fmt.Fprintf(&b, "  - {name: c%d, uri: '%s://127.0.0.1:%d?wantClientAuth=true&transport.enabledProtocols=SSLv2Hello,TLSv1.2&transport.enabledCipherSuites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_EMPTY_RENEGOTIATION_INFO_SCSV'}\n", i, s, 1000+i)
	}
	c, err := ParseYAML(strings.NewReader(b.String()), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range c.Transports {
		if tr.Scheme != schemes[i] || !IsTLSScheme(tr.Scheme) || tr.TLS == nil || tr.TLS.KeyStoreType != "pkcs12" || tr.TLS.KeyStore != "testdata/broker.ks" {
			t.Errorf("%s: %+v", schemes[i], tr)
		}
		// SSLv2Hello and the renegotiation SCSV are accepted and
		// ignored.
		want := TLSOptions{WantClientAuth: true, Versions: []uint16{tls.VersionTLS12}, CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}
		if !reflect.DeepEqual(tr.TLSOptions, want) {
			t.Errorf("%s: TLSOptions = %+v, want %+v", schemes[i], tr.TLSOptions, want)
		}
	}
	if IsTLSScheme("tcp") || IsTLSScheme("ws") {
		t.Error("plain schemes reported as TLS")
	}
}

// TestConfigSecurityFreeze: a loaded Config shares no security memory with
// the loader's copy.
func TestConfigSecurityFreeze(t *testing.T) {
	c := load(t, "seed000-security.xml", seedSecurityVars(t))
	f := freeze(*c)
	c.Security.Authentication.Users[0].Groups[0] = "x"
	c.Security.Authentication.Users[1].Password = "x"
	c.Security.Authorization.Entries[0].Read[0] = "x"
	c.Security.Authorization.Temp.Admin[0] = "x"
	c.SSLContext.KeyStorePassword = "x"
	c.Transports[1].TLS.KeyStorePassword = "x"
	c.Transports[2].TLSOptions.Versions[0] = 0
	if f.Security.Authentication.Users[0].Groups[0] != "producers" || f.Security.Authentication.Users[1].Password != "f-secret" ||
		f.Security.Authorization.Entries[0].Read[0] != "consumers" || f.Security.Authorization.Temp.Admin[0] != "everyone" ||
		f.SSLContext.KeyStorePassword != "password" || f.Transports[1].TLS.KeyStorePassword != "password" ||
		f.Transports[2].TLSOptions.Versions[0] != tls.VersionTLS12 {
		t.Errorf("frozen copy changed with the original: %+v %+v", f.Security, f.Transports)
	}
}
