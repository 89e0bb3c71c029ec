package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/internal/pgtest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// checkJDBCRestartRows is the JDBC store's part of
// TestConformanceStoreRestart, after checkRestartSTOMP on database db of
// pg: the durable subscription is a row of ActiveMQ's ACTIVEMQ_ACKS, with
// its selector.
func checkJDBCRestartRows(t *testing.T, pg *pgtest.Cluster, db string) {
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

// jdbcLeaseConfig is jdbcWharfConfig with the lease locker: a 2 s lease
// renewed every 300 ms, holder %s.
const jdbcLeaseConfig = `shards: 2
persistence:
  jdbc:
    url: jdbc:postgresql://127.0.0.1:%d/%s
    user: %s
    lock_keep_alive_period: 300ms
    locker:
      type: lease
      lease_holder_id: %s
      lock_acquire_sleep_interval: 2s
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
`

// TestConformanceJDBCLeaseMasterSlave: two wharf processes on one
// database with the lease locker. The first becomes master; the second
// waits, logging the holder, and starts nothing; the master is killed
// (SIGKILL: its lease is not released, it ends) and the slave becomes
// master once the lease has ended, with every message the master
// acknowledged.
func TestConformanceJDBCLeaseMasterSlave(t *testing.T) {
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	cfg := func(holder string) string {
		p := filepath.Join(t.TempDir(), "wharf.yaml")
		if err := os.WriteFile(p, fmt.Appendf(nil, jdbcLeaseConfig, pg.Port, db, pgtest.Superuser, holder), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	master := startWharfArgs(t, "--config", cfg("wharf-a"))
	slaveProc := startProc(t, "slave wharf", exec.Command(wharfBinary(t), "run", "--config", cfg("wharf-b"), "--log-format", "json", "--http=false"))
	// Barrier: the slave logged that the lease is held by wharf-a.
	m := slaveProc.waitLine(regexp.MustCompile(`"msg":"lease held by another broker, waiting".*"owner":"(wharf-a)"`), procStartTimeout)
	if m[1] != "wharf-a" {
		t.Fatalf("slave's wait: got owner %q, want wharf-a", m[1])
	}
	q := queue(t, "")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("master's log:\n%s", master.log.tail(30))
		}
	})
	p, _ := conform.ConnectRaw(t, master.stomp, "1.2")
	const n = 20
	for i := range n {
		p.SendMsg(q, "m"+strconv.Itoa(i), "persistent:true")
	}
	if lines, _ := slaveProc.log.snapshot(); slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `"msg":"broker started"`) }) {
		t.Fatalf("the slave started while the master holds the lease")
	}
	master.kill()
	slave := wharfStarted(t, slaveProc)
	c, _ := conform.ConnectRaw(t, slave.stomp, "1.2")
	c.Subscribe("s", q)
	for i := range n {
		c.ExpectMessage("m" + strconv.Itoa(i))
	}
	c.MustSync()
	if rec := slave.logged("became the master"); len(rec) != 1 || rec[0]["holder"] != "wharf-b" {
		t.Fatalf("slave's log: got %v, want one \"became the master\" with holder wharf-b", rec)
	}
}

// trySend sends body to q on a connection of its own with a receipt and
// reports whether the broker answered with the RECEIPT (true) or an
// ERROR (false, the connection then closes).
func trySend(t *testing.T, addr, q, body string) bool {
	t.Helper()
	c, _ := conform.ConnectRaw(t, addr, "1.2")
	defer c.Close()
	f := c.Request("SEND", []string{"destination:" + q, "receipt:r", "persistent:true"}, []byte(body))
	switch f.Command {
	case "RECEIPT":
		return true
	case "ERROR":
		return false
	}
	t.Fatalf("SEND: got %s, want RECEIPT or ERROR", f)
	return false
}

// TestConformanceJDBCDatabaseRestart: PostgreSQL stopped under a
// producer. While it is down a persistent send is answered with an
// ERROR (never a RECEIPT); once it is back the broker stores again
// without a restart of its own (the pool reconnects); every send that
// got its RECEIPT, before, during or after, is then consumed exactly
// once.
func TestConformanceJDBCDatabaseRestart(t *testing.T) {
	pg := pgtest.Own(t)
	db := pg.NewDatabase(t)
	b := startBroker(t, brokertest.WithJDBC(pg.Host, pg.Port, db, pgtest.Superuser))
	q := queue(t, "")
	var acked []string
	send := func(body string) bool {
		ok := trySend(t, b.STOMPAddr(), q, body)
		if ok {
			acked = append(acked, body)
		}
		return ok
	}
	for i := range 5 {
		if !send("before" + strconv.Itoa(i)) {
			t.Fatalf("send before the database stopped: got ERROR, want RECEIPT")
		}
	}
	if err := pg.StopServer(); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if send("down" + strconv.Itoa(i)) {
			t.Fatalf("send %d while PostgreSQL is stopped: got RECEIPT, want ERROR", i)
		}
	}
	if err := pg.StartServer(); err != nil {
		t.Fatal(err)
	}
	// The pool may hand out a connection the restart killed: a send or
	// two can still fail; the broker must store again within a few.
	recovered := false
	for i := range 10 {
		if send("after" + strconv.Itoa(i)) {
			recovered = true
			break
		}
	}
	if !recovered {
		t.Fatalf("10 sends after PostgreSQL restarted: all failed, want the broker storing again")
	}
	for i := range 5 {
		if !send("later" + strconv.Itoa(i)) {
			t.Fatalf("send %d once the broker stores again: got ERROR, want RECEIPT", i)
		}
	}
	if !trySend(t, b.STOMPAddr(), q, "end") {
		t.Fatalf("end marker: got ERROR, want RECEIPT")
	}
	c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	c.Subscribe("s", q)
	want := map[string]bool{}
	for _, a := range acked {
		want[a] = true
	}
	got := map[string]int{}
	for {
		f := c.Expect("MESSAGE")
		if string(f.Body) == "end" {
			break
		}
		got[string(f.Body)]++
	}
	for a := range want {
		if got[a] != 1 {
			t.Errorf("acknowledged message %s: consumed %d times, want once", a, got[a])
		}
	}
	for body, n := range got {
		if !want[body] {
			// The engine keeps in memory a message whose store write
			// failed (its sender got the ERROR): it is delivered while
			// the broker runs, and lost at a restart.
			t.Logf("%s consumed %d times though its send failed", body, n)
		}
	}
	t.Logf("%d sends acknowledged, %d messages consumed", len(acked), len(got))
}

// pgJDBCJar is Debian's libpostgresql-jdbc-java driver.
const pgJDBCJar = "/usr/share/java/postgresql.jar"

// jaxbJar is Debian's libjaxb-api-java: ActiveMQ 5.17's JDBC adapter
// encodes XA Xids with javax.xml.bind.DatatypeConverter, which the JDK
// no longer has (its recovery of prepared transactions fails without it).
const jaxbJar = "/usr/share/java/jaxb-api.jar"

// amqJDBCClasspath is ActiveMQ's extra classpath on the JDBC store: the
// PostgreSQL driver, and JAXB's API when installed.
func amqJDBCClasspath() string {
	if _, err := os.Stat(jaxbJar); err == nil {
		return pgJDBCJar + string(os.PathListSeparator) + jaxbJar
	}
	return pgJDBCJar
}

// startActiveMQJDBC starts ActiveMQ 5.17 on its JDBC store on database
// db of pg, with Debian's PostgreSQL driver on its classpath.
func startActiveMQJDBC(t *testing.T, pg *pgtest.Cluster, db string) *amqProc {
	t.Helper()
	skipWithoutActiveMQ(t)
	if _, err := os.Stat(pgJDBCJar); err != nil {
		t.Skipf("PostgreSQL JDBC driver %s missing (apt-get install -y libpostgresql-jdbc-java)", pgJDBCJar)
	}
	b, err := os.ReadFile(filepath.FromSlash("jdbc/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return startActiveMQXML(t, b, "wharf.pg.url="+pg.JDBCURL(db), "wharf.pg.user="+pgtest.Superuser,
		"activemq.classpath="+amqJDBCClasspath())
}

// TestConformanceJDBCToActiveMQ: queue messages a wharf process stored
// in the JDBC store (two shards, rows of both in ACTIVEMQ_MSGS), and the
// backlogs of a durable subscription that acknowledged the first two of
// five topic messages and of one that received none, are recovered by ActiveMQ 5.17 started on the
// same database after wharf stopped: every one, field by field, in the
// order they were sent, and nothing else.
func TestConformanceJDBCToActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	w := startWharfYAML(t, fmt.Sprintf(jdbcWharfConfig, pg.Port, db, pgtest.Superuser))
	const qa, qb, tp, clientID = "jdbc.interop.a", "jdbc.interop.b", "jdbc.interop.news", "jdbc-toamq"
	c := dialOW(t, w.openwire, "")
	s := must(c.Session(false))(t)
	want := map[string][]*wire.Message{}
	for _, q := range []string{qa, qb} {
		p := must(s.Producer(wire.NewQueue(q)))(t)
		for i := range 6 {
			m := richMessage(q+"-"+strconv.Itoa(i), i)
			m.Priority = 4 // ActiveMQ without prioritizedMessages: ID order
			owSend(t, p, m)
			want[q] = append(want[q], m)
		}
	}
	// A durable subscription that received and acknowledged the first
	// two of five topic messages: its backlog is the other three.
	o := client.DefaultOptions()
	o.ClientID, o.SyncAcks = clientID, true // Ack returns once the broker has it
	ctx, cancel := context.WithTimeout(context.Background(), kdbWait)
	dc, err := client.Dial(ctx, w.openwire, o)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	ds := must(dc.Session(false))(t)
	dk := must(ds.Consumer(wire.NewTopic(tp), client.ConsumerOptions{DurableName: "sub", Prefetch: client.PrefetchPull, AckMode: client.AckIndividual}))(t)
	// A second subscription that receives nothing keeps every topic
	// message stored: ActiveMQ must still know which ones "sub" had.
	must(ds.Consumer(wire.NewTopic(tp), client.ConsumerOptions{DurableName: "other", Prefetch: client.PrefetchPull}))(t).Close()
	tprod := must(s.Producer(wire.NewTopic(tp)))(t)
	var sent []*wire.Message
	for i := range 5 {
		m := richMessage(tp+"-"+strconv.Itoa(i), i)
		m.Priority = 4
		owSend(t, tprod, m)
		sent = append(sent, m)
	}
	for _, m := range receiveN(t, dk, "durable before the handover", 2) {
		if err := dk.Ack(m); err != nil {
			t.Fatal(err)
		}
	}
	dc.Close()
	want[tp], want["other"] = sent[2:], sent
	c.Close()
	w.stop()

	amq := startActiveMQJDBC(t, pg, db)
	ac := dialOW(t, amq.openwire, "")
	as := must(ac.Session(false))(t)
	for _, q := range []string{qa, qb} {
		k := must(as.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
		checkMessages(t, "ActiveMQ recovering "+q, receiveN(t, k, q, len(want[q])), want[q])
		expectMarkerNext(t, must(as.Producer(wire.NewQueue(q)))(t), k, q)
	}
	adc := dialOW(t, amq.openwire, clientID)
	ads := must(adc.Session(false))(t)
	ak := must(ads.Consumer(wire.NewTopic(tp), client.ConsumerOptions{DurableName: "sub"}))(t)
	ao := must(ads.Consumer(wire.NewTopic(tp), client.ConsumerOptions{DurableName: "other"}))(t)
	checkMessages(t, "ActiveMQ recovering durable subscription sub", receiveN(t, ak, tp, len(want[tp])), want[tp])
	checkMessages(t, "ActiveMQ recovering durable subscription other", receiveN(t, ao, tp, len(want["other"])), want["other"])
	expectMarkerNext(t, must(as.Producer(wire.NewTopic(tp)))(t), ak, tp)
}

// TestConformanceJDBCFromActiveMQ: what ActiveMQ 5.17 stored in its JDBC
// store — queue messages and a durable topic subscription with a
// backlog — is recovered by a two-shard wharf process started on the
// same database after ActiveMQ stopped: the queue messages field by
// field in send order, the subscription with its backlog, and nothing
// else (a marker comes next on each).
func TestConformanceJDBCFromActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	amq := startActiveMQJDBC(t, pg, db)
	const qa, qb, tp, clientID = "jdbc.fromamq.a", "jdbc.fromamq.b", "jdbc.fromamq.news", "jdbc-fromamq"
	want := map[string][]*wire.Message{}
	{
		c := dialOW(t, amq.openwire, "")
		s := must(c.Session(false))(t)
		for _, q := range []string{qa, qb} {
			p := must(s.Producer(wire.NewQueue(q)))(t)
			for i := range 6 {
				m := richMessage(q+"-"+strconv.Itoa(i), i)
				m.Priority = 4
				owSend(t, p, m)
				want[q] = append(want[q], m)
			}
		}
		dc := dialOW(t, amq.openwire, clientID)
		ds := must(dc.Session(false))(t)
		k := must(ds.Consumer(wire.NewTopic(tp), client.ConsumerOptions{DurableName: "sub"}))(t)
		k.Close()
		dc.Close()
		p := must(s.Producer(wire.NewTopic(tp)))(t)
		for i := range 4 {
			m := richMessage(tp+"-"+strconv.Itoa(i), i)
			m.Priority = 4
			owSend(t, p, m)
			want[tp] = append(want[tp], m)
		}
		c.Close()
	}
	amq.stop()

	w := startWharfYAML(t, fmt.Sprintf(jdbcWharfConfig, pg.Port, db, pgtest.Superuser))
	c := dialOW(t, w.openwire, "")
	s := must(c.Session(false))(t)
	for _, q := range []string{qa, qb} {
		k := must(s.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
		checkMessages(t, "Wharf recovering "+q, receiveN(t, k, q, len(want[q])), want[q])
		expectMarkerNext(t, must(s.Producer(wire.NewQueue(q)))(t), k, q)
	}
	dc := dialOW(t, w.openwire, clientID)
	ds := must(dc.Session(false))(t)
	k := must(ds.Consumer(wire.NewTopic(tp), client.ConsumerOptions{DurableName: "sub"}))(t)
	checkMessages(t, "Wharf recovering the durable subscription", receiveN(t, k, tp, len(want[tp])), want[tp])
	expectMarkerNext(t, must(s.Producer(wire.NewTopic(tp)))(t), k, tp)
}

// TestConformanceJDBCLeaseActiveMQMaster: a master/slave pair of one
// ActiveMQ 5.17 and one wharf on the same database, both with the lease
// locker. ActiveMQ is master; wharf waits, logging ActiveMQ's lease;
// ActiveMQ is killed (SIGKILL: its lease runs out) and wharf becomes
// master with every message ActiveMQ acknowledged.
func TestConformanceJDBCLeaseActiveMQMaster(t *testing.T) {
	skipWithoutActiveMQ(t)
	if _, err := os.Stat(pgJDBCJar); err != nil {
		t.Skipf("PostgreSQL JDBC driver %s missing (apt-get install -y libpostgresql-jdbc-java)", pgJDBCJar)
	}
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	x, err := os.ReadFile(filepath.FromSlash("jdbc/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	lease := strings.Replace(string(x), `<jdbcPersistenceAdapter dataSource="#postgres" createTablesOnStartup="true"/>`,
		`<jdbcPersistenceAdapter dataSource="#postgres" createTablesOnStartup="true" lockKeepAlivePeriod="500">
        <locker><lease-database-locker lockAcquireSleepInterval="2000"/></locker>
      </jdbcPersistenceAdapter>`, 1)
	if lease == string(x) {
		t.Fatal("jdbc/activemq.xml has no jdbcPersistenceAdapter to give a locker")
	}
	amq := startActiveMQXML(t, []byte(lease), "wharf.pg.url="+pg.JDBCURL(db), "wharf.pg.user="+pgtest.Superuser, "activemq.classpath="+amqJDBCClasspath())
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jdbcLeaseConfig, pg.Port, db, pgtest.Superuser, "wharf-b"), 0o644); err != nil {
		t.Fatal(err)
	}
	slaveProc := startProc(t, "slave wharf", exec.Command(wharfBinary(t), "run", "--config", cfg, "--log-format", "json", "--http=false"))
	// ActiveMQ's lease holder is its broker name.
	slaveProc.waitLine(regexp.MustCompile(`"msg":"lease held by another broker, waiting".*"owner":"jdbc-interop"`), procStartTimeout)

	const q = "jdbc.lease.pair"
	c := dialOW(t, amq.openwire, "")
	s := must(c.Session(false))(t)
	p := must(s.Producer(wire.NewQueue(q)))(t)
	var want []*wire.Message
	for i := range 8 {
		m := richMessage(q+"-"+strconv.Itoa(i), i)
		m.Priority = 4
		owSend(t, p, m)
		want = append(want, m)
	}
	if lines, _ := slaveProc.log.snapshot(); slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, `"msg":"broker started"`) }) {
		t.Fatalf("wharf started while ActiveMQ holds the lease")
	}
	amq.kill()
	w := wharfStarted(t, slaveProc)
	wc := dialOW(t, w.openwire, "")
	ws := must(wc.Session(false))(t)
	k := must(ws.Consumer(wire.NewQueue(q), client.ConsumerOptions{}))(t)
	checkMessages(t, "wharf taking over from ActiveMQ", receiveN(t, k, q, len(want)), want)
	expectMarkerNext(t, must(ws.Producer(wire.NewQueue(q)))(t), k, q)
}

// TestConformanceJDBCLeaseLostStopsBroker: a wharf master whose lease
// another broker takes (written into ACTIVEMQ_LOCK as that broker's
// takeover would write it) stops at its next renewal, as ActiveMQ stops
// a broker whose lock keep-alive fails: it logs why and exits with
// status 1 (for a supervisor to start it again, as a slave).
func TestConformanceJDBCLeaseLostStopsBroker(t *testing.T) {
	pg := pgtest.Shared(t)
	db := pg.NewDatabase(t)
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jdbcLeaseConfig, pg.Port, db, pgtest.Superuser, "wharf-a"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWharfArgs(t, "--config", cfg)
	if err := pg.Exec(db, fmt.Sprintf("UPDATE ACTIVEMQ_LOCK SET BROKER_NAME='intruder', TIME=%d WHERE ID = 1", time.Now().Add(time.Hour).UnixMilli())); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.exited:
	case <-time.After(procStartTimeout):
		t.Fatalf("wharf still runs %v after its lease was taken; log:\n%s", procStartTimeout, w.log.tail(20))
	}
	var exit *exec.ExitError
	if !errors.As(w.err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("wharf's exit: got %v, want status 1", w.err)
	}
	if rec := w.logged("stopping"); len(rec) != 1 || !strings.Contains(fmt.Sprint(rec[0]["reason"]), "lost the database lock") {
		t.Fatalf("wharf's log: got %v, want one \"stopping\" naming the lost lock; log:\n%s", rec, w.log.tail(20))
	}
}
