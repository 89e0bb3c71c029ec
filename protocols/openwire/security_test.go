package openwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
	"wharf/protocols/transport"
	"wharf/storage/memory"
)

// securedListener serves OpenWire on 127.0.0.1:0 with conntest.Auth.
func securedListener(t *testing.T) (*engine.Engine, string) {
	t.Helper()
	auth := &conntest.Auth{}
	e, err := engine.New(engine.Options{Shards: 2, Store: memory.New(), TickInterval: time.Hour,
		Authenticator: auth, Authorizer: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return e, l.Addr().String()
}

func dial(t *testing.T, addr, clientID, user, pass string, onErr func(error)) (*client.Conn, error) {
	t.Helper()
	o := client.DefaultOptions()
	o.ClientID, o.Username, o.Password, o.OnError = clientID, user, pass, onErr
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return client.Dial(ctx, addr, o)
}

// securityError checks err is a java.lang.SecurityException with text, as
// ActiveMQ's ExceptionResponse carries it (the Java client turns it into
// a JMSSecurityException with that message; observed on 5.17.2).
func securityError(t *testing.T, what string, err error, text string) {
	t.Helper()
	var be *client.BrokerError
	if !errors.As(err, &be) || be.ClassName() != "java.lang.SecurityException" || be.Message() != text {
		t.Fatalf("%s: got %v, want java.lang.SecurityException %q", what, err, text)
	}
}

// A refused ConnectionInfo gets ExceptionResponse(SecurityException "User
// name [x] or password is invalid.") and the broker closes the connection
// (TransportConnection.processAddConnection's delayedStop); the client id
// stays free.
func TestOpenWireLoginRefused(t *testing.T) {
	_, addr := securedListener(t)
	for _, c := range []struct{ user, pass string }{{"user", "wrong"}, {"nobody", "secret"}, {"", ""}} {
		_, err := dial(t, addr, "c1", c.user, c.pass, nil)
		securityError(t, "login "+c.user, err, "User name ["+c.user+"] or password is invalid.")
	}
	conn, err := dial(t, addr, "c1", "user", "secret", nil)
	if err != nil {
		t.Fatalf("good login after refused ones with the same client id: %v", err)
	}
	conn.Close()
}

// The session closes the transport after a refused ConnectionInfo.
func TestOpenWireLoginRefusedCloses(t *testing.T) {
	auth := &conntest.Auth{}
	e, err := engine.New(engine.Options{Shards: 1, Store: memory.New(), TickInterval: time.Hour, Authenticator: auth, Authorizer: auth})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv, err := NewServer(e, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	tc := &conntest.TLSConn{Certs: nil}
	h := srv.Handler(tc)
	o := wire.DefaultOptions()
	o.MaxInactivityDuration = 0
	enc := wire.NewEncoder(wire.InitialFormat(o.Version))
	wfi, err := wire.NewWireFormatInfo(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := enc.Append(nil, wfi)
	if err != nil {
		t.Fatal(err)
	}
	f, err := wire.Negotiate(srv.opts.Local, o)
	if err != nil {
		t.Fatal(err)
	}
	enc.SetFormat(f)
	b, err = enc.Append(b, &wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: 1, ResponseRequired: true},
		ConnectionId: &wire.ConnectionId{Value: "c"}, ClientId: "c", UserName: "user", Password: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	h.OnData(b)
	if !tc.Closed() {
		t.Fatal("connection left open after a refused ConnectionInfo")
	}
	seen := auth.Seen()
	if len(seen) != 1 || !seen[0].TLS || seen[0].Protocol != "openwire" || seen[0].Username != "user" {
		t.Fatalf("authenticator saw %+v", seen)
	}
}

// Refused producers, sends, consumers and browsers get ExceptionResponse
// (SecurityException) with ActiveMQ's text; an async send gets a
// ConnectionError; the connection stays usable; nothing is stored.
func TestOpenWireNotAuthorized(t *testing.T) {
	e, addr := securedListener(t)
	asyncErr := make(chan error, 1)
	conn, err := dial(t, addr, "c2", "user", "secret", func(err error) {
		select {
		case asyncErr <- err:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s, err := conn.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	secret := wire.NewQueue("secret.x")
	_, err = s.Producer(secret)
	securityError(t, "producer", err, "User user is not authorized to write to: queue://secret.x")

	anon, err := s.Producer(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := client.NewTextMessage("x")
	m.Destination = secret
	securityError(t, "sync send", anon.Send(ctx, m, true), "User user is not authorized to write to: queue://secret.x")

	m = client.NewTextMessage("x")
	m.Destination = secret
	if err := anon.Send(ctx, m, false); err != nil {
		t.Fatalf("async send: %v", err)
	}
	select {
	case err := <-asyncErr:
		securityError(t, "async send", err, "User user is not authorized to write to: queue://secret.x")
	case <-time.After(10 * time.Second):
		t.Fatal("no ConnectionError for a refused async send")
	}

	_, err = s.Consumer(secret, client.ConsumerOptions{})
	securityError(t, "consumer", err, "User user is not authorized to read from: queue://secret.x")
	_, err = s.Consumer(secret, client.ConsumerOptions{Browser: true})
	securityError(t, "browser", err, "User user is not authorized to read from: queue://secret.x")

	open := wire.NewQueue("open")
	m = client.NewTextMessage("fine")
	m.Destination = open
	if err := anon.Send(ctx, m, true); err != nil {
		t.Fatalf("allowed send after refusals: %v", err)
	}
	if n := e.Stats(message.QueueDest("secret.x")).EnqueueCount; n != 0 {
		t.Fatalf("%d refused messages stored", n)
	}
	if n := e.Stats(message.QueueDest("open")).EnqueueCount; n != 1 {
		t.Fatalf("open queue has %d messages, want 1", n)
	}
}
