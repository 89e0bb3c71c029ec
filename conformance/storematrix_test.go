package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"wharf/engine/brokertest"
	"wharf/internal/pgtest"
)

// The store matrix: the persistent conformance tests — restart, SIGKILL
// crash under load, MQTT persistent session under SIGKILL, prepared XA
// transactions across a stop and a kill — run once per store Wharf
// offers, each store a subtest (TestConformanceStore<Test>/<store>), so
// that a store is held to the same checks as the others. The bodies
// are the shared functions (checkRestartSTOMP, runCrash, runMQTTCrash,
// xaScenario); a store is a way to start a broker on a fresh store.

// storeCase is one store of the matrix.
type storeCase struct {
	name string
	// seedEnv names the variable that replays a crash test's kill
	// schedule on this store.
	seedEnv string
	// inProcess is the brokertest option of an in-process broker on a
	// fresh store of this kind, and a check of the store itself after
	// TestConformanceStoreRestart (nil: none).
	inProcess func(t *testing.T) (brokertest.Option, func(*testing.T, *brokertest.Broker))
	// procs returns a function that starts a wharf process on one fresh
	// store of this kind, the same store at every call.
	procs func(t *testing.T) func() *wharfProc
}

// storeCases are KahaDB (the default: one shard, a plain KahaDB
// directory), LSM (badger, two shards) and JDBC (a database of the
// shared private PostgreSQL cluster, two shards).
func storeCases() []storeCase {
	return []storeCase{
		{
			name: "kahadb", seedEnv: "WHARF_KAHADB_CRASH_SEED",
			inProcess: func(*testing.T) (brokertest.Option, func(*testing.T, *brokertest.Broker)) {
				return brokertest.WithKahaDB(), nil
			},
			procs: func(t *testing.T) func() *wharfProc {
				dir := filepath.Join(t.TempDir(), "kahadb")
				return func() *wharfProc { return startWharf(t, dir) }
			},
		},
		{
			name: "lsm", seedEnv: "WHARF_LSM_CRASH_SEED",
			inProcess: func(*testing.T) (brokertest.Option, func(*testing.T, *brokertest.Broker)) {
				return brokertest.WithLSM(), func(t *testing.T, b *brokertest.Broker) {
					if _, err := os.Stat(filepath.Join(b.Config().DataDirectory, "lsm")); err != nil {
						t.Errorf("LSM store directory: %v, want it under the data directory", err)
					}
				}
			},
			procs: func(t *testing.T) func() *wharfProc {
				yml := fmt.Sprintf(lsmWharfConfig, filepath.Join(t.TempDir(), "lsm"))
				return func() *wharfProc { return startWharfYAML(t, yml) }
			},
		},
		{
			name: "jdbc", seedEnv: "WHARF_JDBC_CRASH_SEED",
			inProcess: func(t *testing.T) (brokertest.Option, func(*testing.T, *brokertest.Broker)) {
				pg := pgtest.Shared(t)
				db := pg.NewDatabase(t)
				return brokertest.WithJDBC(pg.Host, pg.Port, db, pgtest.Superuser), func(t *testing.T, _ *brokertest.Broker) {
					checkJDBCRestartRows(t, pg, db)
				}
			},
			procs: jdbcWharf,
		},
	}
}

// forEachStore runs fn as a subtest per store.
func forEachStore(t *testing.T, fn func(t *testing.T, s storeCase)) {
	for _, s := range storeCases() {
		t.Run(s.name, func(t *testing.T) { fn(t, s) })
	}
}

// TestConformanceStoreRestart: a queue's pending persistent messages and
// a STOMP durable subscription with a selector (and what it matched while
// offline) survive a restart of an in-process broker that closes the
// store and opens it again; the queue message acknowledged before it
// stays gone; a live marker after the expected messages shows nothing
// else came back (checkRestartSTOMP). Then the store's own check: the
// LSM directory under the data directory; the subscription a row of
// ActiveMQ's ACTIVEMQ_ACKS with its selector.
func TestConformanceStoreRestart(t *testing.T) {
	forEachStore(t, func(t *testing.T, s storeCase) {
		opt, check := s.inProcess(t)
		b := startBroker(t, opt)
		checkRestartSTOMP(t, b)
		if check != nil {
			check(t, b)
		}
	})
}

// TestConformanceStoreCrash: producers send persistent messages with
// synchronous acknowledgement while wharf is killed with SIGKILL at
// random moments, again and again; every acknowledged message is then
// there exactly once, a message in flight at a kill at most once,
// nothing else (runCrash).
func TestConformanceStoreCrash(t *testing.T) {
	forEachStore(t, func(t *testing.T, s storeCase) {
		runCrash(t, s.seedEnv, s.procs(t))
	})
}

// TestConformanceStoreCrashMQTTPersistentSession: a QoS 1 publisher and
// a persistent-session QoS 1 subscriber while wharf is SIGKILLed again
// and again; every PUBACKed publish is delivered, a message comes again
// only if it was in flight at a kill, and then with DUP (runMQTTCrash).
func TestConformanceStoreCrashMQTTPersistentSession(t *testing.T) {
	forEachStore(t, func(t *testing.T, s storeCase) {
		runMQTTCrash(t, s.seedEnv, s.procs(t))
	})
}

// TestConformanceStoreXARestart: two branches prepared by ActiveMQ's XA
// client (each sending two persistent messages and acknowledging one)
// survive a stop (SIGTERM) or a SIGKILL of wharf: the wharf started
// again on the store lists both in recover(), hides their work, commits
// one and rolls back the other as the first would have; one more restart
// finds nothing in doubt and nothing back.
func TestConformanceStoreXARestart(t *testing.T) {
	j := startXAJava(t)
	forEachStore(t, func(t *testing.T, s storeCase) {
		for _, how := range []string{"SIGTERM", "SIGKILL"} {
			t.Run(how, func(t *testing.T) {
				start := s.procs(t)
				sc := newXAScenario("xa.restart." + s.name + "." + how)
				w := start()
				sc.prepare(t, j, w.openwire)
				w.signal(map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[how])
				w = start()
				sc.finish(t, j, w.openwire, true)
				w.stop()
				w = start()
				sc.checkFinished(t, j, w.openwire)
				w.stop()
			})
		}
	})
}

// forEachStoreInProcess runs fn as a subtest per store with the option
// that starts an in-process broker on a fresh store of that kind.
func forEachStoreInProcess(t *testing.T, fn func(t *testing.T, store brokertest.Option)) {
	forEachStore(t, func(t *testing.T, s storeCase) {
		opt, _ := s.inProcess(t)
		fn(t, opt)
	})
}
