package conformance

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/internal/pgtest"
)

// TestConformanceJDBCConnectionCut: the broker's database connections
// are cut (pg_terminate_backend of every backend of its database, as a
// DBA or a failover would) again and again while a producer sends
// persistent messages with receipts. A send whose batch met a cut
// connection is answered with an ERROR, never a RECEIPT for what was not
// stored; the pool reconnects and the broker stores again without a
// restart; every send that got its RECEIPT is then consumed exactly once.
func TestConformanceJDBCConnectionCut(t *testing.T) {
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	b := startBroker(t, brokertest.WithJDBC(pg.Host, pg.Port, db, pgtest.Superuser))
	q := queue(t, "")
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, pg.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)

	// The cutter: every 150 ms, 12 times, terminate every backend of
	// the broker's database; it reports how many it ended.
	const cuts = 12
	cut := make(chan int, 1)
	go func() {
		total := 0
		for range cuts {
			time.Sleep(150 * time.Millisecond) // pacing of the fault, not synchronisation
			var n int
			if err := admin.QueryRow(ctx, "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", db).Scan(&n); err != nil {
				t.Errorf("pg_terminate_backend: %v", err)
			}
			total += n
		}
		cut <- total
	}()
	var acked []string
	failed := 0
	send := func(body string) bool {
		if trySend(t, b.STOMPAddr(), q, body) {
			acked = append(acked, body)
			return true
		}
		failed++
		return false
	}
	terminated := -1
	for i := 0; terminated < 0; i++ {
		send("m" + strconv.Itoa(i))
		select {
		case terminated = <-cut:
		default:
		}
	}
	if terminated == 0 {
		t.Fatalf("the cutter terminated no backend of %s in %d rounds: the test cut nothing", db, cuts)
	}
	// Cuts over: the broker must store again within a few sends (the
	// pool may still hand out a connection that was cut).
	recovered := false
	for i := range 10 {
		if send("after" + strconv.Itoa(i)) {
			recovered = true
			break
		}
	}
	if !recovered {
		t.Fatalf("10 sends after the cuts: all failed, want the broker storing again")
	}
	for i := range 5 {
		if !send("later" + strconv.Itoa(i)) {
			t.Fatalf("send %d once the broker stores again: got ERROR, want RECEIPT", i)
		}
	}
	if !trySend(t, b.STOMPAddr(), q, "end") {
		t.Fatalf("end marker: got ERROR, want RECEIPT")
	}
	// Restart the broker: what it consumes then comes from the database
	// alone (a message whose store write failed may live in memory until
	// a restart; it must not be what makes an acknowledged one count).
	b.Restart()
	c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	c.Subscribe("s", q)
	got := map[string]int{}
	for {
		f := c.Expect("MESSAGE")
		if string(f.Body) == "end" {
			break
		}
		got[string(f.Body)]++
	}
	for _, a := range acked {
		if got[a] != 1 {
			t.Errorf("acknowledged message %s: consumed %d times after the restart, want once", a, got[a])
		}
	}
	t.Logf("%d backends terminated in %d cuts; %d sends acknowledged, %d failed; %d messages consumed after a restart",
		terminated, cuts, len(acked), failed, len(got))
}
