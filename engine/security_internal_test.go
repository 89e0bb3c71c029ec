package engine

import (
	"errors"
	"strconv"
	"testing"

	"wharf/engine/message"
)

type groupsAuthz struct{ write map[string][]string }

func (z groupsAuthz) Authorize(s *Subject, a Action, d message.Destination) error {
	for _, g := range z.write[d.Name] {
		for _, sg := range s.Groups {
			if g == sg {
				return nil
			}
		}
	}
	return ErrNotAuthorized
}

// BenchmarkEngineAuthorizeCheck is the send path's check alone: the
// Authorizer asked every time (what ActiveMQ's cache saves) against the
// connection's cached grant.
func BenchmarkEngineAuthorizeCheck(b *testing.B) {
	z := groupsAuthz{write: map[string][]string{"orders.in": {"users", "admins"}}}
	subj := &Subject{User: "u", Groups: []string{"guests", "admins"}}
	d := message.QueueDest("orders.in")
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := z.Authorize(subj, ActionWrite, d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := &Conn{e: &Engine{opts: Options{Authorizer: z}}, subject: subj}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := c.authorize(ActionWrite, d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestEngineAuthorizeCacheBounded: the cache starts again beyond maxGrants
// and never keeps a refusal.
func TestEngineAuthorizeCacheBounded(t *testing.T) {
	z := groupsAuthz{write: map[string][]string{}}
	for i := range maxGrants + 10 {
		z.write[strconv.Itoa(i)] = []string{"g"}
	}
	c := &Conn{e: &Engine{opts: Options{Authorizer: z}}, subject: &Subject{Groups: []string{"g"}}}
	for i := range maxGrants + 10 {
		if err := c.authorize(ActionWrite, message.QueueDest(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		if len(c.grants) > maxGrants {
			t.Fatalf("cache holds %d > %d", len(c.grants), maxGrants)
		}
	}
	if err := c.authorize(ActionWrite, message.QueueDest("nope")); !errors.Is(err, ErrNotAuthorized) {
		t.Fatalf("got %v", err)
	}
	if _, ok := c.grants[message.QueueDest("nope")]; ok {
		t.Fatal("a refusal was cached")
	}
}
