// Command store is `make bench-store`: the same persistent workloads on
// Wharf's three stores — KahaDB (the journal), LSM (badger) and JDBC
// (PostgreSQL) — and on ActiveMQ 5.17 with its JDBC store on the same
// PostgreSQL, in one run, one broker after the other.
//
// Workloads, each over OpenWire with persistent messages sent
// synchronously (the producer waits for the broker's Response, which
// comes once the message is stored):
//
//   - send only: P producers (1, 4, 64) on one queue for a fixed time,
//     no consumer, bodies of 1 KiB and 64 KiB: the store's write rate;
//   - send and consume: the same with consumers keeping up (wharf bench's
//     queue scenario, which also checks every message arrived once);
//   - backlog restart: N messages of 1 KiB stored without consumers, the
//     broker stopped and started again: time to accept connections, then
//     time to drain the backlog with one consumer.
//
// A private PostgreSQL cluster (internal/pgtest, as the tests start it)
// holds each JDBC broker's own database. Every count and duration is
// bounded, and -budget stops starting workloads once spent. Results: a
// Markdown table on stdout and in -out (bench/results/<date>-bench-store.md)
// and an SVG bar chart beside it.
//
// The backlog is 20,000 messages by default, not the 1 M of issue 19:
// ActiveMQ's JDBC store drains a backlog at a few hundred messages per
// second on a 2-core machine, so 1 M would take an hour of the run alone.
//
//	go run ./bench/store [-send 3s] [-backlog 20000] [-only REGEXP] [-out DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"wharf/bench"
	"wharf/internal/activemq"
	"wharf/internal/pgtest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

type options struct {
	send    time.Duration
	backlog int
	only    string
	out     string
	budget  time.Duration
	keep    bool
}

// row is one measured workload on one broker.
type row struct {
	broker   string
	workload string
	rate     float64 // messages per second
	extra    string  // what else the workload reports
	err      error
}

func main() {
	var o options
	flag.DurationVar(&o.send, "send", 3*time.Second, "sending time of each send-only and send-and-consume workload")
	flag.IntVar(&o.backlog, "backlog", 20000, "messages (1 KiB) of the backlog restart workload")
	flag.StringVar(&o.only, "only", "", "run only the brokers whose name matches this regular expression (kahadb, lsm, jdbc, activemq-jdbc)")
	flag.StringVar(&o.out, "out", "bench/results", "directory for <date>-bench-store.md and .svg")
	flag.DurationVar(&o.budget, "budget", 14*time.Minute, "start no workload after this much time")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (broker logs and data)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-store:", err)
		os.Exit(1)
	}
}

var brokers = []string{"kahadb", "lsm", "jdbc", "activemq-jdbc"}

func run(o options) error {
	only, err := regexp.Compile(o.only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	deadline := time.Now().Add(o.budget)
	tmp, err := os.MkdirTemp("", "wharf-bench-store-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(tmp)
	} else {
		fmt.Println("data and logs in", tmp)
	}
	bin := filepath.Join(tmp, "wharf")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/wharf").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/wharf: %w\n%s", err, out)
	}
	pg, err := pgtest.Start()
	if err != nil {
		return fmt.Errorf("PostgreSQL: %w", err)
	}
	defer pg.Stop()
	started := time.Now()
	var rows []row
	for _, b := range brokers {
		if !only.MatchString(b) {
			continue
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "budget spent: %s not run\n", b)
			continue
		}
		dir := filepath.Join(tmp, b)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		db := strings.ReplaceAll(b, "-", "_")
		if strings.Contains(b, "jdbc") {
			if err := pg.Exec("postgres", "CREATE DATABASE "+db); err != nil {
				return err
			}
		}
		start := func() (*proc, string, error) { return startBroker(b, bin, dir, pg, db) }
		rows = append(rows, workloads(o, b, start, deadline)...)
	}
	md := table(o, rows, time.Since(started))
	fmt.Print(md)
	date := time.Now().UTC().Format("2006-01-02")
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	base := filepath.Join(o.out, date+"-bench-store")
	if err := os.WriteFile(base+".md", []byte(md), 0o644); err != nil {
		return err
	}
	return os.WriteFile(base+".svg", []byte(plot(rows)), 0o644)
}

// workloads runs every workload on broker b, started afresh by start
// (the same data directory or database each time).
func workloads(o options, b string, start func() (*proc, string, error), deadline time.Time) []row {
	var rows []row
	p, addr, err := start()
	if err != nil {
		return []row{{broker: b, workload: "start", err: err}}
	}
	defer func() { p.stop() }()
	// Warm-up, not measured: connections, the JVM's JIT, pools.
	if r, _ := sendOnlyTo(addr, "bench.store.warmup", 4, 1024, 2*time.Second, 0); r.err != nil {
		return []row{{broker: b, workload: "warm-up", err: r.err}}
	}
	sizes := []int{1024, 64 * 1024}
	for _, consume := range []bool{false, true} {
		for _, size := range sizes {
			for _, n := range []int{1, 4, 64} {
				if time.Now().After(deadline) {
					return rows
				}
				name := fmt.Sprintf("%s, %d producer%s, %d KiB", map[bool]string{false: "send only", true: "send+consume"}[consume], n, map[bool]string{true: "s", false: ""}[n > 1], size/1024)
				var r row
				if consume {
					r = sendConsume(addr, n, size, o.send)
				} else {
					r = sendOnly(addr, n, size, o.send)
				}
				r.broker, r.workload = b, name
				fmt.Fprintf(os.Stderr, "%-14s %-38s %10.0f msg/s %s %v\n", b, name, r.rate, r.extra, errOrEmpty(r.err))
				rows = append(rows, r)
			}
		}
	}
	if time.Now().After(deadline) {
		return rows
	}
	// Backlog restart.
	name := fmt.Sprintf("backlog %d x 1 KiB: fill (64 producers)", o.backlog)
	fill, stored := sendOnlyTo(addr, "bench.store.backlog", 64, 1024, 10*time.Minute, o.backlog)
	fill.broker, fill.workload = b, name
	rows = append(rows, fill)
	fmt.Fprintf(os.Stderr, "%-14s %-38s %10.0f msg/s %v\n", b, name, fill.rate, errOrEmpty(fill.err))
	if fill.err != nil {
		return rows
	}
	if err := p.stop(); err != nil {
		rows = append(rows, row{broker: b, workload: "backlog: stop", err: err})
	}
	t0 := time.Now()
	p, addr, err = start()
	if err != nil {
		return append(rows, row{broker: b, workload: "backlog: restart", err: err})
	}
	up := time.Since(t0)
	n, drain, err := drainQueue(addr, "bench.store.backlog", int(stored))
	rows = append(rows, row{broker: b, workload: fmt.Sprintf("backlog %d x 1 KiB: restart, then drain (1 consumer)", o.backlog),
		rate: float64(n) / drain.Seconds(), extra: fmt.Sprintf("listening after %.1f s; %d/%d drained in %.1f s", up.Seconds(), n, stored, drain.Seconds()), err: err})
	r := rows[len(rows)-1]
	fmt.Fprintf(os.Stderr, "%-14s %-38s %10.0f msg/s %s %v\n", b, r.workload, r.rate, r.extra, errOrEmpty(r.err))
	return rows
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return "ERROR " + err.Error()
}

// sendOnly sends persistent messages of size bytes synchronously from n
// producers (a connection each) to a fresh queue for d.
func sendOnly(addr string, n, size int, d time.Duration) row {
	r, _ := sendOnlyTo(addr, fmt.Sprintf("bench.store.send.%d", time.Now().UnixNano()), n, size, d, 0)
	return r
}

// sendOnlyTo is sendOnly to queue, stopping at limit messages when
// limit > 0; it also returns how many were sent (acknowledged).
func sendOnlyTo(addr, queue string, n, size int, d time.Duration, limit int) (out row, sentN int64) {
	var sent atomic.Int64
	body := make([]byte, size)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var errs atomic.Int64
	var firstErr atomic.Value
	t0 := time.Now()
	end := t0.Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Dial(ctx, addr, client.DefaultOptions())
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			defer c.Close()
			s, err := c.Session(false)
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			p, err := s.Producer(wire.NewQueue(queue))
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err)
				return
			}
			for time.Now().Before(end) {
				if limit > 0 && sent.Add(1) > int64(limit) {
					sent.Add(-1)
					return
				}
				m := client.NewBytesMessage(body)
				m.Persistent = true
				if err := p.Send(ctx, m, true); err != nil {
					if limit > 0 {
						sent.Add(-1)
					}
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if limit == 0 {
					sent.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(t0)
	out.rate = float64(sent.Load()) / el.Seconds()
	out.extra = fmt.Sprintf("%d sent in %.1f s", sent.Load(), el.Seconds())
	if e := firstErr.Load(); e != nil {
		out.err = fmt.Errorf("%d producer errors, first: %w", errs.Load(), e.(error))
	}
	return out, sent.Load()
}

// sendConsume is wharf bench's queue scenario: n producers, as many
// consumers (at most 8), persistent synchronous sends for d.
func sendConsume(addr string, n, size int, d time.Duration) row {
	cfg := bench.DefaultConfig()
	cfg.URL = "tcp://" + addr
	cfg.Producers, cfg.Consumers = n, min(n, 8)
	cfg.Size, cfg.Duration, cfg.Persistent = size, d, true
	cfg.Drain = 30 * time.Second
	res, err := bench.Run(context.Background(), cfg, bench.RunOptions{})
	if err != nil {
		return row{err: err}
	}
	r := row{rate: res.ReceiveRate, extra: fmt.Sprintf("%d sent, %d received, p99 %.1f ms", res.Sent, res.Received, float64(res.Latency.P99)/1000)}
	if !res.OK() {
		r.err = fmt.Errorf("run not clean: %d lost, %d duplicates, %d errors", res.Lost, res.Duplicates, res.Errors)
	}
	return r
}

// drainQueue receives want messages from queue with one consumer and
// returns how many came and how long it took.
func drainQueue(addr, queue string, want int) (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := client.Dial(ctx, addr, client.DefaultOptions())
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	s, err := c.Session(false)
	if err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	k, err := s.Consumer(wire.NewQueue(queue), client.ConsumerOptions{})
	if err != nil {
		return 0, 0, err
	}
	n := 0
	for n < want {
		rctx, rcancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := k.Receive(rctx)
		rcancel()
		if err != nil {
			return n, time.Since(t0), fmt.Errorf("after %d of %d: %w", n, want, err)
		}
		n++
	}
	return n, time.Since(t0), nil
}

// proc is a broker process in its own process group.
type proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

func (p *proc) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(60 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.exited
		return errors.New("did not stop within 60 s of SIGTERM; killed")
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

const wharfYAML = `persistence:
%s
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:%d"}
`

// amqXML is ActiveMQ 5.17 on its JDBC store (conformance/jdbc's
// activemq.xml, with a fixed port and store usage for the backlog) with
// a pooled data source: commons-dbcp's BasicDataSource, which Debian's
// ActiveMQ has in its lib/, as ActiveMQ's JDBC documentation configures
// it. (PGSimpleDataSource, which pools nothing, opens a PostgreSQL
// connection per store transaction: a tried run gave 10 to 100 messages
// per second.)
const amqXML = `<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer"/>
  <bean id="postgres" class="org.apache.commons.dbcp.BasicDataSource" destroy-method="close">
    <property name="driverClassName" value="org.postgresql.Driver"/>
    <property name="url" value="${wharf.pg.url}"/>
    <property name="username" value="${wharf.pg.user}"/>
    <property name="maxActive" value="32"/>
    <property name="poolPreparedStatements" value="true"/>
  </bean>
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="bench-store" useJmx="false"
          persistent="true" advisorySupport="false" schedulerSupport="false" dataDirectory="${activemq.data}">
    <persistenceAdapter>
      <jdbcPersistenceAdapter dataSource="#postgres" createTablesOnStartup="true"/>
    </persistenceAdapter>
    <systemUsage>
      <systemUsage>
        <memoryUsage><memoryUsage limit="256 mb"/></memoryUsage>
        <storeUsage><storeUsage limit="20 gb"/></storeUsage>
        <tempUsage><tempUsage limit="2 gb"/></tempUsage>
      </systemUsage>
    </systemUsage>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://127.0.0.1:${wharf.port}"/>
    </transportConnectors>
  </broker>
</beans>
`

const amqLog4j = `log4j.rootLogger=WARN, logfile
log4j.appender.logfile=org.apache.log4j.FileAppender
log4j.appender.logfile.file=${activemq.data}/activemq.log
log4j.appender.logfile.layout=org.apache.log4j.PatternLayout
log4j.appender.logfile.layout.ConversionPattern=%d %-5p [%t] %c - %m%n
`

// startBroker starts broker b with its data in dir (JDBC: database db of
// pg) and returns it with its OpenWire address once it accepts
// connections.
func startBroker(b, bin, dir string, pg *pgtest.Cluster, db string) (*proc, string, error) {
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	var cmd *exec.Cmd
	switch b {
	case "activemq-jdbc":
		for _, sub := range []string{"conf", "data", "tmp"} {
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				return nil, "", err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "conf", "activemq.xml"), []byte(amqXML), 0o644); err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "conf", "log4j.properties"), []byte(amqLog4j), 0o644); err != nil {
			return nil, "", err
		}
		cp := "/usr/share/java/postgresql.jar"
		if _, err := os.Stat("/usr/share/java/jaxb-api.jar"); err == nil {
			cp += ":/usr/share/java/jaxb-api.jar"
		}
		cmd = activemq.Command(dir, "wharf.pg.url="+pg.JDBCURL(db), "wharf.pg.user="+pgtest.Superuser,
			"wharf.port="+strconv.Itoa(port), "activemq.classpath="+cp)
	default:
		var store string
		switch b {
		case "kahadb":
			store = "  kahadb: {directory: " + filepath.Join(dir, "kahadb") + "}"
		case "lsm":
			store = "  lsm: {directory: " + filepath.Join(dir, "lsm") + "}"
		case "jdbc":
			store = fmt.Sprintf("  jdbc: {url: \"jdbc:postgresql://127.0.0.1:%d/%s\", user: %s}", pg.Port, db, pgtest.Superuser)
		}
		conf := filepath.Join(dir, "wharf.yaml")
		if err := os.WriteFile(conf, []byte(fmt.Sprintf(wharfYAML, store, port)), 0o644); err != nil {
			return nil, "", err
		}
		cmd = exec.Command(bin, "run", "--config", conf, "--log-level", "warn", "--http=false")
	}
	logf, err := os.OpenFile(filepath.Join(dir, "broker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, "", err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(p.exited) }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return p, addr, nil
		}
		select {
		case <-p.exited:
			return nil, "", fmt.Errorf("%s exited during startup (%v); log in %s", b, cmd.ProcessState, dir)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, "", fmt.Errorf("%s not listening after 3 minutes", b)
		}
	}
}
