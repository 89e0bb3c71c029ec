package amqp

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// pipeConn serves a session on one end of a net.Pipe, for go-amqp on the
// other; with tls set it is a transport.TLSConn whose client presented
// certs.
type pipeConn struct {
	nc    net.Conn
	tls   bool
	certs []*x509.Certificate
}

var pipeAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

func (p *pipeConn) Write(b []byte) error { _, err := p.nc.Write(b); return err }
func (p *pipeConn) WriteNotify(b []byte, done func(error)) error {
	err := p.Write(b)
	if done != nil {
		done(err)
	}
	return err
}
func (p *pipeConn) Close() error         { return p.nc.Close() }
func (p *pipeConn) PauseReading()        {}
func (p *pipeConn) ResumeReading()       {}
func (p *pipeConn) RemoteAddr() net.Addr { return pipeAddr }
func (p *pipeConn) LocalAddr() net.Addr  { return pipeAddr }
func (p *pipeConn) ID() uint64           { return 1 }

type tlsPipeConn struct{ *pipeConn }

func (p tlsPipeConn) ConnectionState() tls.ConnectionState {
	return (&conntest.TLSConn{Certs: p.certs}).ConnectionState()
}

// securedAMQP is an engine with conntest.Auth and an AMQP server on it.
func securedAMQP(t *testing.T, anonymous bool) (*engine.Engine, *Server, *conntest.Auth) {
	t.Helper()
	auth := &conntest.Auth{Anonymous: anonymous}
	e, err := engine.New(engine.Options{Shards: 2, Store: memory.New(), TickInterval: time.Hour,
		Authenticator: auth, Authorizer: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, NewServer(e, DefaultOptions()), auth
}

// dialPipe connects go-amqp to a session of srv over a pipe.
func dialPipe(t *testing.T, srv *Server, pc *pipeConn, sasl goamqp.SASLType) (*goamqp.Conn, error) {
	t.Helper()
	client, server := net.Pipe()
	pc.nc = server
	var tc transport.Conn = pc
	if pc.tls {
		tc = tlsPipeConn{pc}
	}
	h := srv.Handler(tc)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				h.OnData(buf[:n])
			}
			if err != nil {
				h.OnClose(err)
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := goamqp.NewConn(ctx, client, &goamqp.ConnOptions{SASLType: sasl, ContainerID: t.Name()})
	if err != nil {
		client.Close()
		return nil, err
	}
	t.Cleanup(func() { c.Close() })
	return c, nil
}

// SASL as ActiveMQ 5.17's AmqpAuthenticator runs it: PLAIN and ANONYMOUS
// offered; refused credentials get sasl-outcome auth (1).
func TestAMQPSASL(t *testing.T) {
	_, srv, auth := securedAMQP(t, false)
	if _, err := dialPipe(t, srv, &pipeConn{}, goamqp.SASLTypePlain("user", "secret")); err != nil {
		t.Fatalf("PLAIN user/secret: %v", err)
	}
	for name, sasl := range map[string]goamqp.SASLType{
		"bad password": goamqp.SASLTypePlain("user", "wrong"),
		"unknown user": goamqp.SASLTypePlain("nobody", "secret"),
		"anonymous":    goamqp.SASLTypeAnonymous(),
	} {
		_, err := dialPipe(t, srv, &pipeConn{}, sasl)
		if err == nil || !strings.Contains(err.Error(), "code 0x1") {
			t.Fatalf("%s: got %v, want a SASL failure with code 1 (auth)", name, err)
		}
	}
	// EXTERNAL is not offered without a client certificate.
	if _, err := dialPipe(t, srv, &pipeConn{tls: true}, goamqp.SASLTypeExternal("")); err == nil {
		t.Fatal("EXTERNAL accepted without a client certificate")
	}
	seen := auth.Seen()
	if len(seen) == 0 || seen[0].Username != "user" || seen[0].Password != "secret" || seen[0].Protocol != "amqp" {
		t.Fatalf("authenticator saw %+v", seen)
	}
}

func TestAMQPSASLAnonymousAllowed(t *testing.T) {
	_, srv, _ := securedAMQP(t, true)
	if _, err := dialPipe(t, srv, &pipeConn{}, goamqp.SASLTypeAnonymous()); err != nil {
		t.Fatalf("ANONYMOUS with anonymous access allowed: %v", err)
	}
}

// EXTERNAL authenticates with the client certificate alone.
func TestAMQPSASLExternal(t *testing.T) {
	_, srv, auth := securedAMQP(t, false)
	pc := &pipeConn{tls: true, certs: []*x509.Certificate{conntest.Cert("cert-user")}}
	c, err := dialPipe(t, srv, pc, goamqp.SASLTypeExternal(""))
	if err != nil {
		t.Fatalf("EXTERNAL with a certificate: %v", err)
	}
	if _, err := c.NewSession(context.Background(), nil); err != nil {
		t.Fatalf("session after EXTERNAL: %v", err)
	}
	seen := auth.Seen()
	if len(seen) == 0 || !seen[0].TLS || len(seen[0].Certs) != 1 || seen[0].Username != "" {
		t.Fatalf("authenticator saw %+v", seen)
	}
	// A certificate the authenticator does not map is refused.
	pc = &pipeConn{tls: true, certs: []*x509.Certificate{conntest.Cert("stranger")}}
	if _, err := dialPipe(t, srv, pc, goamqp.SASLTypeExternal("")); err == nil || !strings.Contains(err.Error(), "code 0x1") {
		t.Fatalf("EXTERNAL with an unknown certificate: %v", err)
	}
}

// The SASL frames themselves: the mechanisms offered, sys-perm (3) for a
// mechanism not offered, as AmqpAuthenticator answers it, and the close.
func TestAMQPSASLFrames(t *testing.T) {
	_, srv, _ := securedAMQP(t, false)
	mechs := func(ms ...wire.Symbol) []byte {
		return wire.AppendSASLFrame(nil, &wire.SASLMechanisms{Mechanisms: ms})
	}
	plain := &conntest.Conn{}
	srv.Handler(plain).OnData(wire.AppendHeader(nil, wire.ProtocolSASL))
	if !bytes.Contains(plain.Written(), mechs("PLAIN", "ANONYMOUS")) {
		t.Fatalf("mechanisms on a plain connection: % x", plain.Written())
	}
	withCert := &conntest.TLSConn{Certs: []*x509.Certificate{conntest.Cert("cert-user")}}
	h := srv.Handler(withCert)
	h.OnData(wire.AppendHeader(nil, wire.ProtocolSASL))
	if !bytes.Contains(withCert.Written(), mechs("PLAIN", "ANONYMOUS", "EXTERNAL")) {
		t.Fatalf("mechanisms with a client certificate: % x", withCert.Written())
	}
	tc := &conntest.Conn{}
	h = srv.Handler(tc)
	h.OnData(wire.AppendSASLFrame(wire.AppendHeader(nil, wire.ProtocolSASL), &wire.SASLInit{Mechanism: "CRAM-MD5"}))
	if !bytes.HasSuffix(tc.Written(), wire.AppendSASLFrame(nil, &wire.SASLOutcome{Code: wire.SASLSysPerm})) || !tc.Closed() {
		t.Fatalf("unknown mechanism: % x (closed %v)", tc.Written(), tc.Closed())
	}
	// ActiveMQ's PlainMechanism also takes "user NUL password".
	tc = &conntest.Conn{}
	srv.Handler(tc).OnData(wire.AppendSASLFrame(wire.AppendHeader(nil, wire.ProtocolSASL), &wire.SASLInit{Mechanism: "PLAIN", InitialResponse: []byte("user\x00secret")}))
	if !bytes.HasSuffix(tc.Written(), wire.AppendSASLFrame(nil, &wire.SASLOutcome{Code: wire.SASLOK})) || tc.Closed() {
		t.Fatalf("PLAIN user NUL password: % x", tc.Written())
	}
}

// A link to a refused address is refused with amqp:unauthorized-access and
// ActiveMQ's text; a transfer to one through the anonymous relay is
// rejected with it; the connection stays usable; nothing is stored.
func TestAMQPNotAuthorized(t *testing.T) {
	e, srv, _ := securedAMQP(t, false)
	c, err := dialPipe(t, srv, &pipeConn{}, goamqp.SASLTypePlain("user", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.NewSession(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	unauthorized := func(what string, err error, text string) {
		t.Helper()
		var ae *goamqp.Error
		if !errors.As(err, &ae) || ae.Condition != goamqp.ErrCondUnauthorizedAccess || ae.Description != text {
			t.Fatalf("%s: got %v, want amqp:unauthorized-access %q", what, err, text)
		}
	}
	_, err = s.NewSender(ctx, "queue://secret.x", nil)
	unauthorized("sender", err, "User user is not authorized to write to: queue://secret.x")
	_, err = s.NewReceiver(ctx, "queue://secret.x", nil)
	unauthorized("receiver", err, "User user is not authorized to read from: queue://secret.x")
	_, err = s.NewReceiver(ctx, "topic://secret.t", nil)
	unauthorized("topic receiver", err, "User user is not authorized to read from: topic://secret.t")

	relay, err := s.NewSender(ctx, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	to := "queue://secret.x"
	err = relay.Send(ctx, &goamqp.Message{Data: [][]byte{[]byte("x")}, Properties: &goamqp.MessageProperties{To: &to}}, nil)
	unauthorized("relay transfer", err, "User user is not authorized to write to: queue://secret.x")

	open, err := s.NewSender(ctx, "queue://open", nil)
	if err != nil {
		t.Fatalf("allowed sender after refusals: %v", err)
	}
	if err := open.Send(ctx, goamqp.NewMessage([]byte("fine")), nil); err != nil {
		t.Fatalf("allowed send after refusals: %v", err)
	}
	if n := e.Stats(message.QueueDest("secret.x")).EnqueueCount; n != 0 {
		t.Fatalf("%d refused messages stored", n)
	}
	if n := e.Stats(message.QueueDest("open")).EnqueueCount; n != 1 {
		t.Fatalf("open has %d messages, want 1", n)
	}
}

// A connection that skipped SASL (allowNonSaslConnections) and is refused
// at Open gets ActiveMQ's Open (connection-establishment-failed) then Close
// with amqp:unauthorized-access.
func TestAMQPOpenRefused(t *testing.T) {
	auth := &conntest.Auth{}
	e, err := engine.New(engine.Options{Shards: 1, Store: memory.New(), TickInterval: time.Hour, Authenticator: auth, Authorizer: auth})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	o := DefaultOptions()
	o.AllowNonSASL = true
	srv := NewServer(e, o)
	tc := &conntest.Conn{}
	in := wire.AppendHeader(nil, wire.ProtocolAMQP)
	in = wire.AppendFrame(in, 0, wire.NewOpen("c"), nil)
	srv.Handler(tc).OnData(in)
	out := tc.Written()
	if !bytes.Contains(out, []byte("amqp:connection-establishment-failed")) ||
		!bytes.Contains(out, []byte("amqp:unauthorized-access")) ||
		!bytes.Contains(out, []byte("User name [] or password is invalid.")) || !tc.Closed() {
		t.Fatalf("refused Open: %q (closed %v)", out, tc.Closed())
	}
}
