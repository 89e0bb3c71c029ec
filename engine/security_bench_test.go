package engine_test

import (
	"sync"
	"testing"

	"wharf/engine"
	"wharf/engine/message"
)

// mapAuthz is a map-like authorizer as the security package's is: a lock,
// the subject's groups, and a map of destination -> groups per action,
// walked for every question.
type mapAuthz struct {
	mu    sync.RWMutex
	write map[string][]string // destination name -> groups
}

func (z *mapAuthz) Authorize(s *engine.Subject, a engine.Action, d message.Destination) error {
	z.mu.RLock()
	defer z.mu.RUnlock()
	for _, g := range z.write[d.Name] {
		for _, sg := range s.Groups {
			if g == sg {
				return nil
			}
		}
	}
	return refusal(s.User, a, d)
}

type groupAuthn struct{}

func (groupAuthn) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	return &engine.Subject{User: c.Username, Groups: []string{"users", "admins"}}, nil
}

// BenchmarkEngineSendAuthorized is the send path (Conn.Send to a queue
// with no consumer, non-persistent, 1 KiB) with AllowAll against a real
// map-like authorizer: once the connection's write is cached, the
// authorizer is not asked again and the check allocates nothing.
func BenchmarkEngineSendAuthorized(b *testing.B) {
	for _, kind := range []string{"allowall", "map"} {
		b.Run("authz="+kind, func(b *testing.B) {
			v := start(&testing.T{}, func(o *engine.Options) {
				o.Shards = 1
				o.Store = nil
				if kind == "map" {
					o.Authenticator = groupAuthn{}
					o.Authorizer = &mapAuthz{write: map[string][]string{"bench.auth": {"admins"}}}
				}
			})
			defer v.e.Close()
			q := message.QueueDest("bench.auth")
			p, err := v.e.Connect(engine.Credentials{Username: "u"})
			if err != nil {
				b.Fatal(err)
			}
			c, err := v.e.Connect(engine.Credentials{Username: "u"})
			if err != nil {
				b.Fatal(err)
			}
			ch := make(benchSink, 2048)
			s, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 1000, AckMode: engine.AckIndividual}, ch)
			if err != nil {
				b.Fatal(err)
			}
			body := make([]byte, 1024)
			done := make(chan struct{})
			b.ReportAllocs()
			b.ResetTimer()
			go func() {
				for i := 0; i < b.N; i++ {
					c.Ack(s, <-ch, "")
				}
				close(done)
			}()
			for i := 0; i < b.N; i++ {
				m := &message.Message{ID: "x", Destination: q, Body: body, BodyType: message.BytesBody, Priority: 4}
				if err := p.Send(m, "", nil, 0); err != nil {
					b.Fatal(err)
				}
			}
			<-done
		})
	}
}

// TestEngineSecurityCachedCheckAllocatesNothing: a send after the first
// asks nothing more of the authorizer and the check allocates nothing (the
// send as a whole allocates the same with either authorizer).
func TestEngineSecurityCachedCheckAllocatesNothing(t *testing.T) {
	allocs := map[string]float64{}
	for _, kind := range []string{"allowall", "map"} {
		v := start(t, func(o *engine.Options) {
			o.Shards = 1
			if kind == "map" {
				o.Authenticator = groupAuthn{}
				o.Authorizer = &mapAuthz{write: map[string][]string{"alloc.q": {"admins"}}}
			}
		})
		q := message.QueueDest("alloc.q")
		p, err := v.e.Connect(engine.Credentials{Username: "u"})
		if err != nil {
			t.Fatal(err)
		}
		m := &message.Message{ID: "x", Destination: q, Body: []byte("x"), BodyType: message.BytesBody, Priority: 4}
		send(t, p, m)
		// AddProducer-free: a bad destination is refused before any check
		// allocates; here only the cached check and the post run.
		allocs[kind] = testing.AllocsPerRun(200, func() {
			if err := p.Send(&message.Message{ID: "x", Destination: q, BodyType: message.BytesBody, Priority: 4}, "", nil, 0); err != nil {
				t.Fatal(err)
			}
		})
	}
	if allocs["map"] != allocs["allowall"] {
		t.Fatalf("allocs per send: map authorizer %v, AllowAll %v", allocs["map"], allocs["allowall"])
	}
}
