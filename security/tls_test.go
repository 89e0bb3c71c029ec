package security

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wharf/engine/config"
)

// fixture is the path of a file of testdata/tls (see its README.md).
func fixture(name string) string { return filepath.Join("testdata", "tls", name) }

// brokerSSL is the <sslContext> of the fixtures: broker.ks and broker.ts.
func brokerSSL() *config.SSLContext {
	return &config.SSLContext{
		KeyStore: fixture("broker.ks"), KeyStorePassword: "password",
		TrustStore: fixture("broker.ts"), TrustStorePassword: "password",
	}
}

// clientTLS is a client configuration trusting the fixtures' CA, with
// the certificate of the fixture pair name (client1, expired, untrusted)
// unless name is "". The certificate is always sent: Go's client, like
// Java's key manager, would otherwise send none when the server's list of
// acceptable CAs does not name its issuer (the untrusted client), and the
// server's verification would not be tested.
func clientTLS(t testing.TB, name string) *tls.Config {
	t.Helper()
	ca, err := os.ReadFile(fixture("ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("ca.pem holds no certificate")
	}
	c := &tls.Config{RootCAs: roots, ServerName: "localhost"}
	if name != "" {
		pair, err := tls.LoadX509KeyPair(fixture(name+".pem"), fixture(name+"-key.pem"))
		if err != nil {
			t.Fatal(err)
		}
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
	}
	return c
}

// tlsOptions parses a connector's options with the config loader's
// parser, failing the test on an error.
func tlsOptions(t testing.TB, opts map[string]string) config.TLSOptions {
	t.Helper()
	o, err := config.ParseTLSOptions(opts)
	if err != nil {
		t.Fatalf("ParseTLSOptions(%v): %v", opts, err)
	}
	return o
}

// serverTLS is ServerTLS with the options opts parse into, failing the
// test on an error.
func serverTLS(t testing.TB, ssl *config.SSLContext, opts map[string]string) *tls.Config {
	t.Helper()
	tc, err := ServerTLS(ssl, tlsOptions(t, opts))
	if err != nil {
		t.Fatalf("ServerTLS: %v", err)
	}
	return tc
}

// handshakeResult is what each side of a handshake saw.
type handshakeResult struct {
	server, client error               // nil when that side accepted
	state          tls.ConnectionState // the server's, when it accepted
}

// handshake runs one TLS handshake on 127.0.0.1 between a server with
// sc and a client with cc. The server writes one byte when its handshake
// succeeds, so the client knows it was accepted even in TLS 1.3, where a
// refused client certificate is only reported after the client's
// handshake has returned.
func handshake(t testing.TB, sc, cc *tls.Config) handshakeResult {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		err   error
		state tls.ConnectionState
	}
	done := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer c.Close()
		s := tls.Server(c, sc)
		if err := s.HandshakeContext(ctx); err != nil {
			done <- result{err: err}
			return
		}
		_, err = s.Write([]byte{'k'})
		done <- result{err: err, state: s.ConnectionState()}
	}()
	d := tls.Dialer{Config: cc}
	var res handshakeResult
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err == nil {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var b [1]byte
		_, err = io.ReadFull(c, b[:])
		c.Close()
	}
	res.client = err
	r := <-done
	res.server, res.state = r.err, r.state
	if (res.server == nil) != (res.client == nil) {
		t.Fatalf("server and client disagree: server %v, client %v", res.server, res.client)
	}
	return res
}

// TestSecurityTLSKeyStores: the broker's key is read from JKS and PKCS12
// stores, with a key password of its own, and from a store whose
// configured type is the other format (as Java 17 reads it); a client
// trusting the CA completes a handshake and sees CN=broker.
func TestSecurityTLSKeyStores(t *testing.T) {
	for _, tc := range []struct {
		name, file, typ, keyPassword string
	}{
		{"jks", "broker.ks", "jks", ""},
		{"jks by default", "broker.ks", "", ""},
		{"pkcs12", "broker.p12", "PKCS12", ""},
		{"jks with a key password", "broker-keypass.ks", "jks", "keypass"},
		{"pkcs12 file configured as jks", "broker.p12", "jks", ""},
		{"jks file configured as pkcs12", "broker.ks", "pkcs12", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ssl := &config.SSLContext{KeyStore: fixture(tc.file), KeyStorePassword: "password",
				KeyStoreType: tc.typ, KeyStoreKeyPassword: tc.keyPassword}
			sc := serverTLS(t, ssl, nil)
			if len(sc.Certificates) != 1 || len(sc.Certificates[0].Certificate) != 2 {
				t.Fatalf("certificates %d, want 1 with a chain of 2 (broker, CA)", len(sc.Certificates))
			}
			cc := clientTLS(t, "")
			var seen string
			cc.VerifyConnection = func(cs tls.ConnectionState) error {
				seen = cs.PeerCertificates[0].Subject.String()
				return nil
			}
			r := handshake(t, sc, cc)
			if r.client != nil {
				t.Fatalf("handshake: %v", r.client)
			}
			if want := "CN=broker,OU=Wharf,O=Test,C=FR"; seen != want {
				t.Errorf("server certificate %q, want %q", seen, want)
			}
			if r.state.Version != tls.VersionTLS13 {
				t.Errorf("version %x, want TLS 1.3 (%x) by default", r.state.Version, tls.VersionTLS13)
			}
		})
	}
}

// TestSecurityTLSClientAuth: needClientAuth accepts only a client with a
// certificate the truststore verifies; wantClientAuth also accepts one
// without a certificate, but not one with a bad certificate; with
// neither, no certificate is asked for.
func TestSecurityTLSClientAuth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   map[string]string
		trust  string // truststore fixture
		client string // client certificate fixture
		ok     bool
	}{
		{"need: trusted client", map[string]string{"transport.needClientAuth": "true"}, "broker.ts", "client1", true},
		{"need: other trusted client", map[string]string{"transport.needClientAuth": "true"}, "broker.ts", "client2", true},
		{"need: pkcs12 truststore", map[string]string{"transport.needClientAuth": "true"}, "broker-ts.p12", "client1", true},
		{"need: untrusted client", map[string]string{"transport.needClientAuth": "true"}, "broker.ts", "untrusted", false},
		{"need: expired client", map[string]string{"transport.needClientAuth": "true"}, "broker.ts", "expired", false},
		{"need: no client certificate", map[string]string{"transport.needClientAuth": "true"}, "broker.ts", "", false},
		{"need, unprefixed: no client certificate", map[string]string{"needClientAuth": "TRUE"}, "broker.ts", "", false},
		{"need wins over want", map[string]string{"needClientAuth": "true", "wantClientAuth": "true"}, "broker.ts", "", false},
		{"want: trusted client", map[string]string{"transport.wantClientAuth": "true"}, "broker.ts", "client1", true},
		{"want: no client certificate", map[string]string{"transport.wantClientAuth": "true"}, "broker.ts", "", true},
		{"want, unprefixed: no client certificate", map[string]string{"wantClientAuth": "true"}, "broker.ts", "", true},
		{"want: untrusted client", map[string]string{"transport.wantClientAuth": "true"}, "broker.ts", "untrusted", false},
		{"want: expired client", map[string]string{"transport.wantClientAuth": "true"}, "broker.ts", "expired", false},
		{"need=false: untrusted client ignored", map[string]string{"transport.needClientAuth": "false"}, "broker.ts", "untrusted", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ssl := brokerSSL()
			ssl.TrustStore = fixture(tc.trust)
			sc, err := ServerTLS(ssl, tlsOptions(t, tc.opts))
			if err != nil {
				t.Fatal(err)
			}
			if rest := config.NonTLSOptions(tc.opts); len(rest) != 0 {
				t.Errorf("options left over: %v, want none", rest)
			}
			r := handshake(t, sc, clientTLS(t, tc.client))
			if (r.server == nil) != tc.ok {
				t.Fatalf("server handshake error %v, want accepted=%v", r.server, tc.ok)
			}
			if !tc.ok {
				// The server says why, in crypto/tls's and crypto/x509's words.
				want := map[string]string{"untrusted": "certificate signed by unknown authority",
					"expired": "certificate has expired", "": "didn't provide a certificate"}[tc.client]
				if !strings.Contains(r.server.Error(), want) {
					t.Errorf("server error %q does not say %q", r.server, want)
				}
				return
			}
			certs := r.state.PeerCertificates
			switch {
			case tc.client == "" || tc.name == "need=false: untrusted client ignored":
				if len(certs) != 0 {
					t.Errorf("server got %d client certificates, want none", len(certs))
				}
			case len(certs) == 0 || certs[0].Subject.CommonName != tc.client:
				t.Errorf("server got client certificates %v, want CN=%s", certs, tc.client)
			case len(r.state.VerifiedChains) == 0:
				t.Error("the client certificate was not verified")
			}
		})
	}
}

// TestSecurityTLSProtocols: transport.enabledProtocols and <sslContext
// protocol> set the versions; a TLS 1.2-only client is refused by a TLS
// 1.3-only server; versions below TLS 1.2 are refused with an error.
func TestSecurityTLSProtocols(t *testing.T) {
	for _, tc := range []struct {
		name      string
		protocol  string // <sslContext protocol>
		enabled   string // transport.enabledProtocols, "" for none
		clientMax uint16
		want      uint16 // negotiated version, 0 when refused
	}{
		{"default, TLS 1.2 client", "", "", tls.VersionTLS12, tls.VersionTLS12},
		{"TLSv1.3 only, TLS 1.3 client", "", "TLSv1.3", 0, tls.VersionTLS13},
		{"TLSv1.3 only, TLS 1.2 client refused", "", "TLSv1.3", tls.VersionTLS12, 0},
		{"TLSv1.2 only", "", "TLSv1.2", 0, tls.VersionTLS12},
		{"both, SSLv2Hello ignored", "", "SSLv2Hello, TLSv1.2,TLSv1.3", 0, tls.VersionTLS13},
		{"context TLSv1.2", "TLSv1.2", "", 0, tls.VersionTLS12},
		{"context TLSv1.2 caps TLSv1.3", "TLSv1.2", "TLSv1.2,TLSv1.3", 0, tls.VersionTLS12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ssl := brokerSSL()
			ssl.Protocol = tc.protocol
			opts := map[string]string{}
			if tc.enabled != "" {
				opts["transport.enabledProtocols"] = tc.enabled
			}
			cc := clientTLS(t, "")
			cc.MaxVersion = tc.clientMax
			r := handshake(t, serverTLS(t, ssl, opts), cc)
			if tc.want == 0 {
				if r.server == nil {
					t.Fatalf("accepted with version %x, want refused", r.state.Version)
				}
				return
			}
			if r.server != nil || r.state.Version != tc.want {
				t.Fatalf("version %x, error %v; want %x", r.state.Version, r.server, tc.want)
			}
		})
	}
}

// TestSecurityTLSCipherSuites: transport.enabledCipherSuites chooses the
// TLS 1.2 suites; a client offering none of them is refused; a list of
// TLS 1.3 suites only makes the server TLS 1.3 only.
func TestSecurityTLSCipherSuites(t *testing.T) {
	const suites = "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, TLS_AES_128_GCM_SHA256"
	sc := serverTLS(t, brokerSSL(), map[string]string{"transport.enabledCipherSuites": suites})
	cc := clientTLS(t, "")
	cc.MaxVersion = tls.VersionTLS12
	r := handshake(t, sc, cc)
	if r.server != nil || r.state.CipherSuite != tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("suite %s, error %v; want TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", tls.CipherSuiteName(r.state.CipherSuite), r.server)
	}
	cc.CipherSuites = []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}
	if r := handshake(t, sc, cc); r.server == nil {
		t.Errorf("a client offering only TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 was accepted with %s", tls.CipherSuiteName(r.state.CipherSuite))
	}
	// TLS 1.3 still works: Go does not let its suites be chosen.
	if r := handshake(t, sc, clientTLS(t, "")); r.server != nil || r.state.Version != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 client: version %x, error %v", r.state.Version, r.server)
	}

	// The renegotiation SCSV is a signal, not a suite: accepted beside
	// suites and ignored.
	sc = serverTLS(t, brokerSSL(), map[string]string{"transport.enabledCipherSuites": "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_EMPTY_RENEGOTIATION_INFO_SCSV"})
	if len(sc.CipherSuites) != 1 || sc.CipherSuites[0] != tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 {
		t.Errorf("with the SCSV: CipherSuites %x, want only TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", sc.CipherSuites)
	}
	sc = serverTLS(t, brokerSSL(), map[string]string{"transport.enabledCipherSuites": "TLS_AES_256_GCM_SHA384"})
	if sc.MinVersion != tls.VersionTLS13 {
		t.Errorf("TLS 1.3 suites only: MinVersion %x, want TLS 1.3", sc.MinVersion)
	}
	cc = clientTLS(t, "")
	cc.MaxVersion = tls.VersionTLS12
	if r := handshake(t, sc, cc); r.server == nil {
		t.Error("TLS 1.3 suites only: a TLS 1.2 client was accepted")
	}
}

// TestSecurityTLSErrors: every bad store or option is an error that
// names the file and store type, or the option and its value: the
// loader's parser refuses the bad values (parse), ServerTLS the options
// its <sslContext> cannot serve (ErrTLSOption) and the bad stores.
func TestSecurityTLSErrors(t *testing.T) {
	ks, p12, ts := fixture("broker.ks"), fixture("broker.p12"), fixture("broker.ts")
	for _, tc := range []struct {
		name  string
		ssl   func(*config.SSLContext)
		opts  map[string]string
		parse bool   // refused by config.ParseTLSOptions, with text
		is    error  // else ServerTLS's error
		text  string // the whole message when not ""
	}{
		{"wrong jks password", func(s *config.SSLContext) { s.KeyStorePassword = "wrong" }, nil, false,
			ErrStorePassword, "keystore " + ks + " (jks): wrong password or damaged file"},
		{"wrong pkcs12 password", func(s *config.SSLContext) { s.KeyStore, s.KeyStoreType, s.KeyStorePassword = p12, "pkcs12", "wrong" }, nil, false,
			ErrStorePassword, "keystore " + p12 + " (pkcs12): wrong password or damaged file"},
		{"wrong key password", func(s *config.SSLContext) { s.KeyStore = fixture("broker-keypass.ks") }, nil, false,
			ErrStorePassword, "keystore " + fixture("broker-keypass.ks") + ` (jks): key "broker": wrong password or damaged file (keyStoreKeyPassword, or keyStorePassword when it is not set)`},
		{"wrong truststore password", func(s *config.SSLContext) { s.TrustStorePassword = "wrong" }, nil, false,
			ErrStorePassword, "truststore " + ts + " (jks): wrong password or damaged file"},
		{"unsupported type", func(s *config.SSLContext) { s.KeyStoreType = "JCEKS" }, nil, false,
			ErrStoreType, "keystore " + ks + ` (JCEKS): unsupported store type "JCEKS": want jks or pkcs12`},
		{"missing file", func(s *config.SSLContext) { s.KeyStore = fixture("nope.ks") }, nil, false, fs.ErrNotExist, ""},
		{"not a store", func(s *config.SSLContext) { s.KeyStore = fixture("ca.pem") }, nil, false,
			ErrStoreFormat, "keystore " + fixture("ca.pem") + " (jks): not a JKS or PKCS12 file"},
		{"keystore without a key", func(s *config.SSLContext) { s.KeyStore = ts }, nil, false,
			ErrNoKey, "keystore " + ts + " (jks): no private key entry"},
		{"truststore without a certificate is a store", func(s *config.SSLContext) { s.TrustStore = fixture("README.md") }, nil, false, ErrStoreFormat, ""},
		{"no sslContext keystore", func(s *config.SSLContext) { s.KeyStore = "" }, nil, false, ErrNoSSLContext, ""},
		{"needClientAuth without truststore", func(s *config.SSLContext) { s.TrustStore = "" }, map[string]string{"transport.needClientAuth": "true"}, false,
			ErrTLSOption, "bad TLS option: needClientAuth=true needs a trustStore in <sslContext> to verify client certificates"},
		{"wantClientAuth without truststore", func(s *config.SSLContext) { s.TrustStore = "" }, map[string]string{"wantClientAuth": "true"}, false,
			ErrTLSOption, "bad TLS option: wantClientAuth=true needs a trustStore in <sslContext> to verify client certificates"},
		{"bad boolean", nil, map[string]string{"transport.needClientAuth": "yes"}, true,
			nil, `option transport.needClientAuth="yes": not a boolean (want "true" or "false")`},
		{"TLSv1.1", nil, map[string]string{"transport.enabledProtocols": "TLSv1.1,TLSv1.2"}, true,
			nil, `option transport.enabledProtocols="TLSv1.1,TLSv1.2": TLSv1.1 is not supported: Wharf's minimum is TLS 1.2 (enable TLSv1.2 and/or TLSv1.3)`},
		{"TLSv1", nil, map[string]string{"transport.enabledProtocols": "TLSv1"}, true, nil, ""},
		{"SSLv3", nil, map[string]string{"transport.enabledProtocols": "SSLv3"}, true, nil, ""},
		{"unknown protocol", nil, map[string]string{"transport.enabledProtocols": "TLSv2"}, true, nil, ""},
		{"no protocol", nil, map[string]string{"transport.enabledProtocols": "SSLv2Hello"}, true,
			nil, `option transport.enabledProtocols="SSLv2Hello": names no protocol (want TLSv1.2 and/or TLSv1.3)`},
		{"context protocol TLSv1.1", func(s *config.SSLContext) { s.Protocol = "TLSv1.1" }, nil, false,
			ErrTLSOption, `bad TLS option: <sslContext protocol="TLSv1.1"> is not supported: Wharf's minimum is TLS 1.2 (write TLS, TLSv1.2 or TLSv1.3)`},
		{"context TLSv1.2 with TLSv1.3 only", func(s *config.SSLContext) { s.Protocol = "TLSv1.2" }, map[string]string{"transport.enabledProtocols": "TLSv1.3"}, false,
			ErrTLSOption, `bad TLS option: option transport.enabledProtocols="TLSv1.3": none of these is allowed by <sslContext protocol="TLSv1.2">`},
		{"unknown cipher suite", nil, map[string]string{"transport.enabledCipherSuites": "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256"}, true,
			nil, `option transport.enabledCipherSuites="TLS_DHE_RSA_WITH_AES_128_GCM_SHA256": "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256" is not a cipher suite Go implements (write IANA names such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)`},
		{"TLS 1.3 CCM suite, which Java does not implement either", nil, map[string]string{"transport.enabledCipherSuites": "TLS_AES_128_CCM_SHA256"}, true, nil, ""},
		{"RC4 cipher suite", nil, map[string]string{"transport.enabledCipherSuites": "TLS_ECDHE_RSA_WITH_RC4_128_SHA"}, true,
			nil, `option transport.enabledCipherSuites="TLS_ECDHE_RSA_WITH_RC4_128_SHA": TLS_ECDHE_RSA_WITH_RC4_128_SHA is insecure and not supported by Wharf`},
		{"3DES cipher suite", nil, map[string]string{"transport.enabledCipherSuites": "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"}, true, nil, ""},
		{"SCSV alone", nil, map[string]string{"transport.enabledCipherSuites": "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"}, true, nil, ""},
		{"TLS 1.3 suites with TLS 1.2 only", nil, map[string]string{"transport.enabledProtocols": "TLSv1.2", "transport.enabledCipherSuites": "TLS_AES_128_GCM_SHA256"}, false,
			ErrTLSOption, `bad TLS option: option transport.enabledCipherSuites="TLS_AES_128_GCM_SHA256" lists TLS 1.3 suites only, but TLS 1.3 is not enabled`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := config.ParseTLSOptions(tc.opts)
			if tc.parse {
				if err == nil {
					t.Fatalf("ParseTLSOptions(%v) = %+v, want an error", tc.opts, opts)
				}
				if tc.text != "" && err.Error() != tc.text {
					t.Errorf("error %q\nwant  %q", err, tc.text)
				}
				for k, v := range tc.opts {
					if !strings.Contains(err.Error(), k+"="+strconv.Quote(v)) {
						t.Errorf("error %q does not name %s=%q", err, k, v)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ssl := brokerSSL()
			if tc.ssl != nil {
				tc.ssl(ssl)
			}
			got, err := ServerTLS(ssl, opts)
			if !errors.Is(err, tc.is) || got != nil {
				t.Fatalf("ServerTLS = %v, %v; want error %v", got != nil, err, tc.is)
			}
			if tc.text != "" && err.Error() != tc.text {
				t.Errorf("error %q\nwant  %q", err, tc.text)
			}
		})
	}
	if _, err := ServerTLS(nil, config.TLSOptions{}); !errors.Is(err, ErrNoSSLContext) {
		t.Errorf("no <sslContext>: %v, want %v", err, ErrNoSSLContext)
	}
	if !strings.Contains(ErrNoSSLContext.Error(), "sslContext") {
		t.Error("ErrNoSSLContext does not name <sslContext>")
	}
}
