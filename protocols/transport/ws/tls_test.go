package ws

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"wharf/protocols/transport"
)

// wssPKI is a CA made for one test, a server certificate for 127.0.0.1
// and a client certificate (CN=client) it signs.
type wssPKI struct {
	pool   *x509.CertPool
	server tls.Certificate
	client tls.Certificate
}

func newWSSPKI(t *testing.T) *wssPKI {
	t.Helper()
	now := time.Now()
	mk := func(cn string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
		tmpl := &x509.Certificate{
			SerialNumber: serial,
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}
		if parent == nil {
			tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
			tmpl.KeyUsage |= x509.KeyUsageCertSign
			parent, parentKey = tmpl, key
		}
		if ip := net.ParseIP(cn); ip != nil {
			tmpl.IPAddresses = []net.IP{ip}
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
	ca, caKey := mk("Wharf wss test CA", nil, nil)
	p := &wssPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	sc, sk := mk("127.0.0.1", ca, caKey)
	p.server = tls.Certificate{Certificate: [][]byte{sc.Raw}, PrivateKey: sk, Leaf: sc}
	cc, ck := mk("client", ca, caKey)
	p.client = tls.Certificate{Certificate: [][]byte{cc.Raw}, PrivateKey: ck, Leaf: cc}
	return p
}

// wssDial opens a gorilla/websocket client over TLS offering proto.
func wssDial(t *testing.T, l transport.Listener, p *wssPKI, cert *tls.Certificate, proto string) (*websocket.Conn, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: p.pool, ServerName: "127.0.0.1"}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	d := websocket.Dialer{TLSClientConfig: cfg, Subprotocols: []string{proto}, HandshakeTimeout: testTimeout}
	wc, resp, err := d.Dial("wss://"+l.Addr().String()+"/", nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = wc.Close() })
	_ = wc.SetReadDeadline(time.Now().Add(testTimeout))
	return wc, nil
}

// TestWSSEchoWithClientCertificate serves wss with client certificates
// required: a gorilla/websocket client with a certificate echoes text and
// binary messages, the session sees a transport.TLSConn whose
// PeerCertificates is the client's verified chain, and a client without
// a certificate never reaches a session.
func TestWSSEchoWithClientCertificate(t *testing.T) {
	p := newWSSPKI(t)
	var mu sync.Mutex
	var cns []string
	var tlsSeen []bool
	f := newStubs("mqtt", echo)
	protos := Subprotocols(func(c transport.Conn) transport.Handler {
		certs, isTLS := transport.PeerCertificates(c)
		mu.Lock()
		tlsSeen = append(tlsSeen, isTLS)
		if len(certs) > 0 {
			cns = append(cns, certs[0].Subject.CommonName)
		}
		mu.Unlock()
		return f.factory(c)
	}, MQTTSubprotocols...)
	l := listen(t, protos, Options{TLS: &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
	}})

	wc, err := wssDial(t, l, p, &p.client, "mqtt")
	if err != nil {
		t.Fatalf("wss dial with a client certificate: %v", err)
	}
	s := f.next(t)
	for _, size := range []int{1, 125, 126, 65535, 65536 - 14} {
		msg := bytes.Repeat([]byte{byte(size)}, size)
		if err := wc.WriteMessage(websocket.BinaryMessage, msg); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for len(got) < size {
			_, b, err := wc.ReadMessage()
			if err != nil {
				t.Fatalf("size %d: read echo: %v", size, err)
			}
			got = append(got, b...)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("size %d: echo differs", size)
		}
	}
	mu.Lock()
	if len(cns) != 1 || cns[0] != "client" || len(tlsSeen) != 1 || !tlsSeen[0] {
		t.Fatalf("session saw tls %v, certificates %v; want a TLS conn with CN client", tlsSeen, cns)
	}
	mu.Unlock()
	if tc, ok := s.c.(transport.TLSConn); !ok || !tc.ConnectionState().HandshakeComplete || tc.ConnectionState().NegotiatedProtocol == "h2" {
		t.Fatalf("session conn %T: want a TLSConn with a completed HTTP/1.1 handshake", s.c)
	}

	// Without a certificate the handshake fails; no session is made.
	if _, err := wssDial(t, l, p, nil, "mqtt"); err == nil {
		t.Fatal("wss dial without a client certificate succeeded")
	}
	select {
	case extra := <-f.made:
		t.Fatalf("a session was made for a refused handshake (%v)", extra.c.RemoteAddr())
	default:
	}
	if err := wc.WriteMessage(websocket.BinaryMessage, []byte("still")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := wc.ReadMessage(); err != nil || string(b) != "still" {
		t.Fatalf("echo after a refused client: %q, %v", b, err)
	}
	_ = wc.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	if err := s.waitClosed(t); err != nil {
		t.Fatalf("OnClose: got %v, want nil", err)
	}
}

// TestWSPlainIsNotTLSConn checks that a ws:// connection does not claim to
// be TLS, and that Listen refuses a TLS config without a certificate.
func TestWSPlainIsNotTLSConn(t *testing.T) {
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, MQTTSubprotocols...), Options{})
	_ = dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	if _, isTLS := transport.PeerCertificates(s.c); isTLS {
		t.Fatal("a ws:// connection reports TLS")
	}
	_, err := Listen("127.0.0.1:0", Subprotocols(f.factory, "mqtt"), Options{TLS: &tls.Config{}, Logger: testLogger()})
	if !errors.Is(err, transport.ErrInvalidOptions) {
		t.Fatalf("Listen with a certificate-less TLS config: got %v, want ErrInvalidOptions", err)
	}
}

// TestWSSPlainHTTPOnTLSPort sends a plain-text upgrade to a wss port: the
// client gets no upgrade, and the failure is logged with its address.
func TestWSSPlainHTTPOnTLSPort(t *testing.T) {
	p := newWSSPKI(t)
	var logs syncLog
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, MQTTSubprotocols...), Options{
		TLS:    &tls.Config{Certificates: []tls.Certificate{p.server}},
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	c, resp := handshake(t, l.Addr().String(), "/", "mqtt")
	if resp.StatusCode == http.StatusSwitchingProtocols {
		t.Fatal("a plain-text upgrade on a wss port was accepted")
	}
	eventually(t, func() error {
		if !strings.Contains(logs.String(), c.nc.LocalAddr().String()) {
			return errors.New("no log line names the plain-text client")
		}
		return nil
	})
	select {
	case <-f.made:
		t.Fatal("a session was made for a plain-text client")
	default:
	}
}

// syncLog is a log sink safe for concurrent handlers.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
