package conformance

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"wharf/internal/pgtest"
)

// Prepared XA transactions on the JDBC store (storage/jdbc xa.go): the
// scenario of kahadb_xa_test.go (two branches of ActiveMQ's XA client,
// each sending two persistent messages and acknowledging one; one
// committed, one rolled back after the hand-over) on a private
// PostgreSQL, between Wharf and Wharf, and between Wharf and ActiveMQ
// 5.17 on its JDBC store in both directions.

// TestConformanceJDBCXAToActiveMQ: branches prepared in a two-shard
// wharf (then stopped, or killed) are recovered by ActiveMQ 5.17 started
// on the same database from the rows Wharf flagged as ActiveMQ flags
// them, and finished by ActiveMQ's XA client; wharf, started again on
// the database, finds them finished (its own records of them forgotten).
func TestConformanceJDBCXAToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	skipWithoutJAXB(t)
	j := startXAJava(t)
	pg := pgtest.Shared(t)
	for _, how := range []string{"SIGTERM", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			db := pg.NewDatabase(t)
			yml := fmt.Sprintf(jdbcWharfConfig, pg.Port, db, pgtest.Superuser)
			sc := newXAScenario("jdbc.xa.to." + how)
			w := startWharfYAML(t, yml)
			sc.prepare(t, j, w.openwire)
			w.signal(map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[how])
			amq := startActiveMQJDBC(t, pg, db)
			// (A WARN line of ActiveMQ quotes PostgreSQL's "ERROR: relation ...
			// already exists" for the tables Wharf made: only ERROR lines count.)
			// ActiveMQ redelivers the message of a recovered branch it
			// rolls back with redelivery counter 0 (as on its own store:
			// TestConformanceKahaDBXAActiveMQReference).
			sc.finish(t, j, amq.openwire, false)
			if bad := grepLine(amq.log.String(), " ERROR "); bad != "" {
				t.Errorf("ActiveMQ logged an error: %s", bad)
			}
			amq.stop()
			w = startWharfYAML(t, yml)
			sc.checkFinished(t, j, w.openwire)
			w.stop()
		})
	}
}

// TestConformanceJDBCXAFromActiveMQ: branches prepared by ActiveMQ 5.17
// on its JDBC store (then stopped) are adopted by a two-shard wharf
// started on the same database from ActiveMQ's flagged rows, listed in
// recover() and finished through Wharf; ActiveMQ, started again on the
// database, finds them finished.
func TestConformanceJDBCXAFromActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	skipWithoutJAXB(t)
	j := startXAJava(t)
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	yml := fmt.Sprintf(jdbcWharfConfig, pg.Port, db, pgtest.Superuser)
	sc := newXAScenario("jdbc.xa.from")
	amq := startActiveMQJDBC(t, pg, db)
	sc.prepare(t, j, amq.openwire)
	amq.stop()
	w := startWharfYAML(t, yml)
	sc.finish(t, j, w.openwire, true)
	w.stop()
	amq = startActiveMQJDBC(t, pg, db)
	sc.checkFinished(t, j, amq.openwire)
	if bad := grepLine(amq.log.String(), " ERROR "); bad != "" {
		t.Errorf("ActiveMQ logged an error: %s", bad)
	}
	amq.stop()
}

// skipWithoutJAXB skips a test of ActiveMQ's JDBC XA recovery where
// JAXB's API is missing (ActiveMQ cannot recover prepared transactions
// from its JDBC store without it on a JDK after 8).
func skipWithoutJAXB(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(jaxbJar); err != nil {
		t.Skipf("%s missing (apt-get install -y libjaxb-api-java): ActiveMQ's JDBC store cannot encode XA Xids without it", jaxbJar)
	}
}
