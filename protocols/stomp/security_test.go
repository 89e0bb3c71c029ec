package stomp

import (
	"bytes"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// secured is an engine with conntest.Auth and a STOMP server on it.
func secured(t *testing.T, anonymous bool) (*engine.Engine, *Server, *conntest.Auth) {
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

// waitFor polls tc's output until it contains want (bounded).
func waitFor(t *testing.T, tc interface{ Written() []byte }, want string) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := string(tc.Written())
		if strings.Contains(out, want) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in output:\n%q", want, out)
		}
		time.Sleep(time.Millisecond) // poll interval, not synchronisation
	}
}

func connectFrame(login, passcode string) string {
	f := "CONNECT\naccept-version:1.2\nhost:x\n"
	if login != "" {
		f += "login:" + login + "\n"
	}
	if passcode != "" {
		f += "passcode:" + passcode + "\n"
	}
	return f + "\n\x00"
}

// A refused login answers as ActiveMQ 5.17 does (observed): an ERROR whose
// message header and body are the authenticator's text, then the close;
// the engine keeps no connection and no client id.
func TestSTOMPLoginRefused(t *testing.T) {
	cases := []struct{ name, login, passcode, text string }{
		{"bad password", "user", "wrong", "User name [user] or password is invalid."},
		{"unknown user", "nobody", "secret", "User name [nobody] or password is invalid."},
		{"no credentials", "", "", "User name [] or password is invalid."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, srv, _ := secured(t, false)
			tc := &conntest.Conn{}
			h := srv.Handler(tc)
			h.OnData([]byte(strings.Replace(connectFrame(c.login, c.passcode), "host:x\n", "host:x\nclient-id:c1\n", 1)))
			want := "ERROR\nmessage:" + c.text + "\ncontent-type:text/plain\n"
			out := string(tc.Written())
			if !strings.HasPrefix(out, "ERROR\n") || !strings.Contains(out, "message:"+c.text+"\n") || !strings.Contains(out, "\n\n"+c.text+"\x00") {
				t.Fatalf("got %q, want %q with the text as body", out, want)
			}
			if !tc.Closed() {
				t.Fatal("connection left open after a refused login")
			}
			h.OnClose(nil)
			// The client id was never registered: another login may take it.
			tc2 := &conntest.Conn{}
			srv.Handler(tc2).OnData([]byte("CONNECT\naccept-version:1.2\nhost:x\nclient-id:c1\nlogin:user\npasscode:secret\n\n\x00"))
			if out := string(tc2.Written()); !strings.HasPrefix(out, "CONNECTED\n") {
				t.Fatalf("second login with the same client id: %q", out)
			}
			_ = e
		})
	}
}

func TestSTOMPLoginAccepted(t *testing.T) {
	_, srv, auth := secured(t, true)
	for _, f := range []string{connectFrame("user", "secret"), connectFrame("", "")} {
		tc := &conntest.Conn{}
		srv.Handler(tc).OnData([]byte(f))
		if out := string(tc.Written()); !strings.HasPrefix(out, "CONNECTED\n") || tc.Closed() {
			t.Fatalf("%q: got %q (closed %v)", f, out, tc.Closed())
		}
	}
	seen := auth.Seen()
	if len(seen) != 2 || seen[0].Username != "user" || seen[0].Password != "secret" || seen[0].Protocol != "stomp" || seen[0].TLS {
		t.Fatalf("authenticator saw %+v", seen)
	}
}

// On a TLS connector the authenticator gets the client certificate and
// TLS=true; without a certificate, TLS=true still.
func TestSTOMPCertificateCredentials(t *testing.T) {
	_, srv, auth := secured(t, false)
	tc := &conntest.TLSConn{Certs: []*x509.Certificate{conntest.Cert("cert-user")}}
	var _ transport.TLSConn = tc
	srv.Handler(tc).OnData([]byte(connectFrame("", "")))
	if out := string(tc.Written()); !strings.HasPrefix(out, "CONNECTED\n") {
		t.Fatalf("certificate login: %q", out)
	}
	plain := &conntest.TLSConn{}
	srv.Handler(plain).OnData([]byte(connectFrame("user", "secret")))
	if out := string(plain.Written()); !strings.HasPrefix(out, "CONNECTED\n") {
		t.Fatalf("password login over TLS: %q", out)
	}
	seen := auth.Seen()
	if len(seen) != 2 || !seen[0].TLS || len(seen[0].Certs) != 1 || seen[0].Certs[0].Subject.CommonName != "cert-user" ||
		!seen[1].TLS || seen[1].Certs != nil {
		t.Fatalf("authenticator saw %+v", seen)
	}
}

// A refused SEND, SUBSCRIBE or browse gets ActiveMQ's ERROR (with the
// receipt-id when the frame asked for a receipt, without one otherwise) and
// the connection stays usable; nothing reaches the destination; another
// connection does not notice.
func TestSTOMPNotAuthorized(t *testing.T) {
	e, srv, _ := secured(t, false)
	other := &conntest.Conn{}
	oh := srv.Handler(other)
	oh.OnData([]byte(connectFrame("user", "secret") + "SUBSCRIBE\nid:1\ndestination:/queue/open\n\n\x00"))

	tc := &conntest.Conn{}
	h := srv.Handler(tc)
	h.OnData([]byte(connectFrame("user", "secret")))
	steps := []struct{ frame, want string }{
		{"SEND\ndestination:/queue/secret.x\nreceipt:r1\n\nhello\x00",
			"ERROR\nmessage:User user is not authorized to write to\\c queue\\c//secret.x\ncontent-type:text/plain\nreceipt-id:r1\n\nUser user is not authorized to write to: queue://secret.x\x00"},
		{"SEND\ndestination:/queue/secret.x\n\nhello\x00",
			"ERROR\nmessage:User user is not authorized to write to\\c queue\\c//secret.x\ncontent-type:text/plain\n\nUser user is not authorized to write to: queue://secret.x\x00"},
		{"SUBSCRIBE\nid:2\ndestination:/queue/secret.x\nreceipt:r2\n\n\x00",
			"receipt-id:r2\n\nUser user is not authorized to read from: queue://secret.x\x00"},
		{"SUBSCRIBE\nid:3\ndestination:/topic/secret.t\n\n\x00",
			"\n\nUser user is not authorized to read from: topic://secret.t\x00"},
		{"SUBSCRIBE\nid:4\ndestination:/queue/secret.x\nbrowser:true\nreceipt:r4\n\n\x00",
			"receipt-id:r4\n\nUser user is not authorized to read from: queue://secret.x\x00"},
		{"SEND\ndestination:/queue/open\nreceipt:r5\n\nfine\x00", "RECEIPT\nreceipt-id:r5\n"},
	}
	for _, st := range steps {
		before := len(tc.Written())
		h.OnData([]byte(st.frame))
		out := waitFor(t, tc, st.want)
		if idx := strings.Index(out[before:], st.want); idx < 0 {
			t.Fatalf("after %q: no %q in %q", st.frame, st.want, out[before:])
		}
		if tc.Closed() {
			t.Fatalf("connection closed after %q; ActiveMQ keeps it open", st.frame)
		}
	}
	if n := e.Stats(message.QueueDest("secret.x")).EnqueueCount; n != 0 {
		t.Fatalf("%d messages enqueued on a refused destination", n)
	}
	waitFor(t, other, "\n\nfine\x00")
	if bytes.Contains(other.Written(), []byte("ERROR")) || other.Closed() {
		t.Fatalf("the other connection noticed: %q", other.Written())
	}
}
