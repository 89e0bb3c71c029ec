package transport

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"
)

// testPKI is a certificate authority made for one test, with the server
// certificate (for 127.0.0.1) and client certificates it signs: a valid
// one, an expired one, and one signed by another CA the server does not
// trust.
type testPKI struct {
	pool      *x509.CertPool // trusts ca only
	server    tls.Certificate
	client    tls.Certificate // CN=client
	expired   tls.Certificate // CN=expired, NotAfter an hour ago
	untrusted tls.Certificate // CN=untrusted, signed by another CA
}

// newTestPKI generates the certificates with crypto/x509 (ECDSA P-256, so
// it is quick).
func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	now := time.Now()
	ca, caKey := makeCert(t, "Wharf test CA", nil, nil, now.Add(-time.Hour), now.Add(time.Hour), true)
	other, otherKey := makeCert(t, "Other CA", nil, nil, now.Add(-time.Hour), now.Add(time.Hour), true)
	p := &testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.server = leaf(t, "127.0.0.1", ca, caKey, now.Add(-time.Hour), now.Add(time.Hour))
	p.client = leaf(t, "client", ca, caKey, now.Add(-time.Hour), now.Add(time.Hour))
	p.expired = leaf(t, "expired", ca, caKey, now.Add(-2*time.Hour), now.Add(-time.Hour))
	p.untrusted = leaf(t, "untrusted", other, otherKey, now.Add(-time.Hour), now.Add(time.Hour))
	return p
}

// makeCert makes a certificate for cn signed by parent (self-signed when
// parent is nil).
func makeCert(t testing.TB, cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey,
	notBefore, notAfter time.Time, isCA bool) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"Wharf tests"}},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		tmpl.ExtKeyUsage = nil
	}
	if ip := net.ParseIP(cn); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// leaf makes an end-entity certificate as a tls.Certificate.
func leaf(t testing.TB, cn string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	cert, key := makeCert(t, cn, ca, caKey, notBefore, notAfter, false)
	return tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}
}

// serverConfig is a server config for the PKI asking for client
// certificates as auth says.
func (p *testPKI) serverConfig(auth tls.ClientAuthType) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.server}, ClientAuth: auth, ClientCAs: p.pool}
}

// clientConfig trusts the PKI's CA and presents cert, if not nil.
func (p *testPKI) clientConfig(cert *tls.Certificate) *tls.Config {
	cfg := &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1"}
	if cert != nil {
		// Always send it: with Certificates the client would leave out a
		// certificate whose CA the server's request does not list.
		c := *cert
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c, nil }
	}
	return cfg
}
