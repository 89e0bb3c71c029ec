package engine_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"wharf/engine"
	"wharf/storage/memory"
)

// countingAuth accepts user "u" (password "p") and records every call; with
// nilSubject it accepts with a nil subject, as a careless Authenticator
// might.
type countingAuth struct {
	nilSubject bool

	mu    sync.Mutex
	calls []engine.Credentials
}

func (a *countingAuth) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	a.mu.Lock()
	a.calls = append(a.calls, c)
	a.mu.Unlock()
	if c.Username != "u" || c.Password != "p" {
		return nil, engine.ErrBadCredentials
	}
	if a.nilSubject {
		return nil, nil
	}
	return &engine.Subject{User: "u", Groups: []string{"g"}}, nil
}

func (a *countingAuth) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.calls)
}

func newCountingEngine(t *testing.T, auth *countingAuth) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{Shards: 1, Store: memory.New(), TickInterval: time.Hour, Authenticator: auth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// Connect runs the Authenticator once; ConnectAuthenticated runs it not at
// all and connects the subject it is given; a nil subject is refused and
// registers nothing (its client id stays free).
func TestEngineConnectAuthenticated(t *testing.T) {
	auth := &countingAuth{}
	e := newCountingEngine(t, auth)
	cr := engine.Credentials{Username: "u", Password: "p", ClientID: "c1", Protocol: "test"}

	c, err := e.Connect(cr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if n := auth.count(); n != 1 {
		t.Fatalf("Connect authenticated %d times, want 1", n)
	}
	c.Close()

	if _, err := e.Connect(engine.Credentials{Username: "u", Password: "wrong"}); !errors.Is(err, engine.ErrBadCredentials) {
		t.Fatalf("Connect with a bad password: %v, want ErrBadCredentials", err)
	}
	if n := auth.count(); n != 2 {
		t.Fatalf("a refused Connect authenticated %d times in all, want 2", n)
	}

	subj, err := e.Authenticate(cr)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	c, err = e.ConnectAuthenticated(subj, cr)
	if err != nil {
		t.Fatalf("ConnectAuthenticated: %v", err)
	}
	defer c.Close()
	if n := auth.count(); n != 3 {
		t.Fatalf("Authenticate + ConnectAuthenticated authenticated %d times in all, want 3", n)
	}
	if c.Subject() != subj || c.ClientID() != "c1" {
		t.Fatalf("connected as %+v with client id %q, want the subject given and c1", c.Subject(), c.ClientID())
	}

	if _, err := e.ConnectAuthenticated(nil, engine.Credentials{ClientID: "c2"}); !errors.Is(err, engine.ErrNoSubject) {
		t.Fatalf("ConnectAuthenticated(nil): %v, want ErrNoSubject", err)
	}
	c2, err := e.ConnectAuthenticated(subj, engine.Credentials{Username: "u", Password: "p", ClientID: "c2"})
	if err != nil {
		t.Fatalf("client id c2 after a refused nil subject: %v", err)
	}
	c2.Close()
	if _, err := e.ConnectAuthenticated(subj, cr); !errors.Is(err, engine.ErrClientIDInUse) {
		t.Fatalf("ConnectAuthenticated with a client id in use: %v, want ErrClientIDInUse", err)
	}
	if n := auth.count(); n != 3 {
		t.Fatalf("ConnectAuthenticated called the Authenticator: %d calls, want 3", n)
	}
}

// An Authenticator that accepts with a nil subject still never gives a
// client the broker's nil subject: Authenticate (and so Connect) turns it
// into a subject of the user name.
func TestEngineAuthenticateNeverNil(t *testing.T) {
	auth := &countingAuth{nilSubject: true}
	e := newCountingEngine(t, auth)
	cr := engine.Credentials{Username: "u", Password: "p"}
	subj, err := e.Authenticate(cr)
	if err != nil || subj == nil || subj.User != "u" {
		t.Fatalf("Authenticate: %+v, %v; want a subject of user u", subj, err)
	}
	c, err := e.Connect(cr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	if s := c.Subject(); s == nil || s.User != "u" {
		t.Fatalf("Connect gave subject %+v, want user u", s)
	}
	if n := auth.count(); n != 2 {
		t.Fatalf("%d Authenticator calls, want 2 (one each)", n)
	}
}
