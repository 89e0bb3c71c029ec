package conformance

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"wharf/engine/brokertest"
	"wharf/internal/pgtest"
)

// TestConformanceRestartJDBC is TestConformanceRestartLSM on
// <jdbcPersistenceAdapter> (storage/jdbc) on a private PostgreSQL: a
// queue's pending messages and a STOMP durable subscription with a
// selector survive a restart that closes the store and opens it on the
// same database; the queue message acknowledged before it stays gone.
// The pending messages are rows of ActiveMQ's ACTIVEMQ_MSGS, the
// subscription one of its ACTIVEMQ_ACKS.
func TestConformanceRestartJDBC(t *testing.T) {
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	b := startBroker(t, brokertest.WithJDBC(pg.Host, pg.Port, db, pgtest.Superuser))
	checkRestartSTOMP(t, b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.URL(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var queued, subs int
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM ACTIVEMQ_MSGS WHERE CONTAINER LIKE 'queue://%'").Scan(&queued); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT COUNT(*) FROM ACTIVEMQ_ACKS WHERE SELECTOR = 'n > 1'").Scan(&subs); err != nil {
		t.Fatal(err)
	}
	// q2, q3 and qmarker were delivered without acknowledgement (auto
	// ack is the STOMP default, acks go with the frames: the consumer
	// may still be acking as the check runs); the subscription is stored.
	if subs != 1 {
		t.Errorf("ACTIVEMQ_ACKS rows of the durable subscription: got %d, want 1", subs)
	}
	t.Logf("%d queue messages in ACTIVEMQ_MSGS at the end", queued)
}

// jdbcWharfConfig is the YAML of a wharf process on the JDBC store on
// database %s of the PostgreSQL at 127.0.0.1:%d, two shards, loopback
// port 0 for every connector.
const jdbcWharfConfig = `shards: 2
persistence:
  jdbc:
    url: jdbc:postgresql://127.0.0.1:%d/%s
    user: %s
    use_lock: false
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
  - {name: mqtt, uri: "mqtt://127.0.0.1:0"}
`

func jdbcWharf(t *testing.T) func() *wharfProc {
	pg := pgtest.Shared(t)
	yml := fmt.Sprintf(jdbcWharfConfig, pg.Port, pg.NewDatabase(t), pgtest.Superuser)
	return func() *wharfProc { return startWharfYAML(t, yml) }
}

// TestConformanceJDBCCrash is TestConformanceKahaDBCrash on
// <jdbcPersistenceAdapter>: producers send persistent messages with
// synchronous acknowledgement while wharf is killed with SIGKILL at
// random moments, again and again, the database staying up; every
// acknowledged message is then there exactly once, a message in flight
// at a kill at most once, nothing else.
func TestConformanceJDBCCrash(t *testing.T) {
	runCrash(t, "WHARF_JDBC_CRASH_SEED", jdbcWharf(t))
}

// TestConformanceJDBCCrashMQTTPersistentSession is
// TestConformanceKahaDBCrashMQTTPersistentSession on the JDBC store:
// every PUBACKed publish is delivered to the persistent-session
// subscriber, a message comes again only if it was in flight at a kill,
// and then with DUP (the store's delivery marks, WHARF_MARKS).
func TestConformanceJDBCCrashMQTTPersistentSession(t *testing.T) {
	runMQTTCrash(t, "WHARF_JDBC_CRASH_SEED", jdbcWharf(t))
}
