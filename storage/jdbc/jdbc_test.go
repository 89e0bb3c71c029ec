package jdbc_test

import (
	"testing"

	"wharf/engine"
	"wharf/internal/pgtest"
	"wharf/storage/jdbc"
	"wharf/storage/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(t testing.TB, o jdbc.Options) *jdbc.Store {
	t.Helper()
	s, err := jdbc.Open(o)
	if err != nil {
		t.Fatalf("jdbc.Open: got error %v, want nil", err)
	}
	return s
}

// newDB makes an empty database on the shared cluster and the options
// of a store on it.
func newDB(t testing.TB) jdbc.Options {
	c := pgtest.Shared(t)
	return jdbc.Options{URL: c.URL(c.NewDatabase(t)), CreateTables: true, MaxConns: 8}
}

func TestStoreJDBC(t *testing.T) {
	storetest.Run(t, func(t *testing.T) func() engine.Store {
		o := newDB(t)
		return func() engine.Store { return open(t, o) }
	})
}
