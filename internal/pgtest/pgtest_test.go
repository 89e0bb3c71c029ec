package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"wharf/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// A database of the shared cluster takes a write and reads it back; a
// cluster of a test's own survives a server restart with its data.
func TestClusterRoundTrip(t *testing.T) {
	c := pgtest.Own(t)
	db := c.NewDatabase(t)
	if err := c.Exec(db, "CREATE TABLE x (v INT); INSERT INTO x VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if conn, err := pgx.Connect(ctx, c.URL(db)); err == nil {
		conn.Close(ctx)
		t.Fatalf("connect to a stopped server: got no error, want one")
	}
	if err := c.StartServer(); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.URL(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM x").Scan(&v); err != nil || v != 42 {
		t.Fatalf("SELECT v after restart: got %d, %v; want 42, nil", v, err)
	}
	s := pgtest.Shared(t)
	if s.Port == c.Port {
		t.Fatalf("shared and own clusters on the same port %d", s.Port)
	}
	if err := s.Exec(s.NewDatabase(t), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
}
