package conntest

import (
	"testing"
	"time"

	"wharf/engine"
	"wharf/storage/memory"
)

// Engine starts a real engine on the memory store for the sessions of a
// test or fuzz target, closed when it ends. Its tick is an hour, so no
// expiry or redelivery sweep runs unless the test calls Tick.
func Engine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := engine.New(engine.Options{Shards: 2, Store: memory.New(), TickInterval: time.Hour})
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}
