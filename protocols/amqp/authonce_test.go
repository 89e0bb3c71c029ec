package amqp

import (
	"bytes"
	"context"
	"crypto/x509"
	"testing"
	"time"

	goamqp "github.com/Azure/go-amqp"

	"wharf/engine"
	"wharf/protocols/amqp/wire"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// One AMQP login runs the Authenticator exactly once, accepted or refused:
// SASL authenticates and Open connects the subject it gave
// (engine.ConnectAuthenticated); a connection that skipped SASL
// (allowNonSaslConnections) is authenticated once, at Open. Each case
// sends the whole login (SASL header and sasl-init, AMQP header, Open) in
// one read.
func TestAMQPAuthenticatesOnce(t *testing.T) {
	type outcome int
	const (
		opened      outcome = iota // the broker's Open, no failure
		saslRefused                // sasl-outcome auth (1) and the close
		openRefused                // Open with connection-establishment-failed, Close
	)
	cases := []struct {
		name      string
		anonymous bool   // the authenticator takes an empty user
		noSASL    bool   // skip SASL (AllowNonSASL)
		mechanism string // sasl-init mechanism
		response  string // sasl-init initial response
		cert      string // CN of a client certificate, on a TLS connection
		holdID    bool   // an engine connection holds the container id
		want      outcome
	}{
		{name: "PLAIN accepted", mechanism: "PLAIN", response: "\x00user\x00secret", want: opened},
		{name: "PLAIN bad password", mechanism: "PLAIN", response: "\x00user\x00wrong", want: saslRefused},
		{name: "PLAIN unknown user", mechanism: "PLAIN", response: "\x00nobody\x00secret", want: saslRefused},
		{name: "ANONYMOUS accepted", anonymous: true, mechanism: "ANONYMOUS", want: opened},
		{name: "ANONYMOUS refused", mechanism: "ANONYMOUS", want: saslRefused},
		{name: "EXTERNAL accepted", mechanism: "EXTERNAL", cert: "cert-user", want: opened},
		{name: "EXTERNAL unknown certificate", mechanism: "EXTERNAL", cert: "stranger", want: saslRefused},
		{name: "PLAIN accepted, container id in use", mechanism: "PLAIN", response: "\x00user\x00secret", holdID: true, want: openRefused},
		{name: "no SASL, accepted", anonymous: true, noSASL: true, want: opened},
		{name: "no SASL, refused", noSASL: true, want: openRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			auth := &conntest.Auth{Anonymous: tc.anonymous}
			e, err := engine.New(engine.Options{Shards: 1, Store: memory.New(), TickInterval: time.Hour, Authenticator: auth, Authorizer: auth})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			o := DefaultOptions()
			o.AllowNonSASL = tc.noSASL
			srv := NewServer(e, o)
			if tc.holdID {
				c, err := e.Connect(engine.Credentials{Username: "user", Password: "secret", ClientID: "c1", Protocol: "openwire"})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
			}
			before := len(auth.Seen())

			var tcConn transport.Conn
			var out func() []byte
			var closed func() bool
			if tc.cert != "" {
				c := &conntest.TLSConn{Certs: []*x509.Certificate{conntest.Cert(tc.cert)}}
				tcConn, out, closed = c, c.Written, c.Closed
			} else {
				c := &conntest.Conn{}
				tcConn, out, closed = c, c.Written, c.Closed
			}
			var in []byte
			if !tc.noSASL {
				in = wire.AppendHeader(in, wire.ProtocolSASL)
				in = wire.AppendSASLFrame(in, &wire.SASLInit{Mechanism: wire.Symbol(tc.mechanism), InitialResponse: []byte(tc.response)})
			}
			in = wire.AppendHeader(in, wire.ProtocolAMQP)
			in = wire.AppendFrame(in, 0, wire.NewOpen("c1"), nil)
			h := srv.Handler(tcConn)
			h.OnData(in)
			got := out()

			failed := bytes.Contains(got, []byte("amqp:connection-establishment-failed"))
			switch tc.want {
			case opened:
				if failed || !bytes.Contains(got, []byte("Wharf")) || closed() {
					t.Fatalf("login not opened: %q (closed %v)", got, closed())
				}
			case saslRefused:
				if !bytes.Contains(got, wire.AppendSASLFrame(nil, &wire.SASLOutcome{Code: wire.SASLAuth})) || !closed() {
					t.Fatalf("SASL not refused: %q (closed %v)", got, closed())
				}
			case openRefused:
				if !failed || !closed() {
					t.Fatalf("Open not refused: %q (closed %v)", got, closed())
				}
			}
			seen := auth.Seen()[before:]
			if len(seen) != 1 {
				t.Fatalf("the Authenticator ran %d times for one login, want 1: %+v", len(seen), seen)
			}
			if seen[0].Protocol != "amqp" || seen[0].TLS != (tc.cert != "") {
				t.Fatalf("the Authenticator saw %+v", seen[0])
			}
			if tc.want == opened {
				h.OnClose(nil)
			}
		})
	}
}

// The same with a real client (go-amqp): a PLAIN login that opens a
// session and a link authenticates once.
func TestAMQPAuthenticatesOnceGoAMQP(t *testing.T) {
	_, srv, auth := securedAMQP(t, false)
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
	if _, err := s.NewSender(ctx, "queue://open", nil); err != nil {
		t.Fatal(err)
	}
	if seen := auth.Seen(); len(seen) != 1 || seen[0].Username != "user" {
		t.Fatalf("the Authenticator saw %+v, want one login of user", seen)
	}
}
