// Command wharf is the Wharf message broker.
//
//	wharf run [--config FILE] [-Dname=value ...] [--log-level LEVEL] [--trusted-network] [--http=false]
//	wharf kahadb dump|check|pins|activemq DIR
//	wharf bench [--url URL] [--scenario NAME] [flags]
//	wharf conform --url URL [--url URL ...] [flags]
//	wharf encrypt|decrypt --password PASSWORD --input TEXT
//	wharf dstat|query|browse|purge|dlq|connections|stop [flags]
//	wharf producer|consumer [flags]
//	wharf version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/internal/version"
	httpserver "wharf/protocols/http"
)

const usage = `wharf: an ActiveMQ Classic compatible message broker

Usage:
  wharf run [flags]     start a broker (Ctrl-C or SIGTERM stops it)
  wharf kahadb dump|check|pins DIR
                        inspect a KahaDB directory (ActiveMQ's or Wharf's)
  wharf kahadb activemq DIR
                        print the <persistenceAdapter> with which ActiveMQ
                        5.17 opens a Wharf store of several shards
  wharf bench [flags]   load-test a broker over STOMP, OpenWire, MQTT or AMQP and check
                        exactly-once delivery (wharf bench --help)
  wharf conform --url URL [--url URL ...] [flags]
                        check how far a broker behaves like ActiveMQ 5.17:
                        the conformance cases over STOMP (OpenWire, MQTT
                        and AMQP: see wharf conform --list), a table, JSON or
                        JUnit XML, and --against URL to compare two brokers
                        (wharf conform --help)
  wharf encrypt --password P --input TEXT
  wharf decrypt --password P --input VALUE
                        make or read an ENC() value, as "activemq encrypt" and
                        "activemq decrypt" do (wharf encrypt --help)
  wharf version         print the version
  wharf help            print this help

Admin commands, for a running broker over its Jolokia API (--url, default
http://127.0.0.1:8161, or --config FILE, the broker's activemq.xml or YAML,
for its web server's address; --user and --password or WHARF_USER and
WHARF_PASSWORD; --json; "wharf COMMAND --help" for each):
  wharf dstat [queues|topics]
                        a table of the destinations' figures, as
                        "activemq dstat"
  wharf query -QQueue=NAME [--view ATTR,...]
                        the attributes of MBeans, as "activemq query"
  wharf browse QUEUE [--selector S] [--max N]
                        the messages on a queue, as "activemq browse"
  wharf purge QUEUE... [--selector S]
                        remove the messages of queues, as "activemq purge"
  wharf dlq list|replay|purge [QUEUE]
                        the dead-letter queues; send their messages back
                        to where they came from, or remove them
  wharf connections     the client connections
  wharf stop            stop the broker cleanly (as SIGTERM does), as
                        "activemq stop"; waits until it is gone
  Exit status: 0 done; 1 an operation failed or what was named does not
  exist; 2 a bad flag or argument; 3 the broker cannot be reached, or
  refused the login or the operation.

Clients, over STOMP (--broker-url, default stomp://127.0.0.1:61613):
  wharf producer [--destination queue://X|topic://X] [--messageCount N]
  wharf consumer [--destination queue://X|topic://X] [--messageCount N]
                        send or receive messages, as "activemq producer"
                        and "activemq consumer"

Flags of run:
  --config FILE         activemq.xml or native YAML (.yaml/.yml) configuration;
                        without it: OpenWire on 127.0.0.1:61616, STOMP on
                        127.0.0.1:61613, MQTT on 127.0.0.1:1883, AMQP on
                        127.0.0.1:5672, web server on 127.0.0.1:8161, store
                        under ./data
  -Dname=value          set a ${name} placeholder of the config (repeatable);
                        the environment is consulted after these.
                        -Dorg.apache.activemq.store.kahadb.LOG_SLOW_ACCESS_TIME=MS
                        logs "Slow KahaDB access" for journal writes slower
                        than MS milliseconds (default 500; 0 turns it off)
  --log-level LEVEL     debug, info (default), warn or error
  --log-format FORMAT   text (default) or json
  --http=false          do not start the web server (health checks, Prometheus
                        metrics, Jolokia, the web console at /admin/), which
                        otherwise listens on 127.0.0.1:8161 or
                        where the configuration's jetty.xml import (or YAML
                        http) says; see docs/http.md
  --trusted-network     let connectors listen on non-loopback addresses (such as
                        the 0.0.0.0 of ActiveMQ's stock activemq.xml) although
                        no authentication plugin is configured: anyone who can
                        reach the ports can use the broker. Logged at Warn at
                        every start, with those listeners. With an
                        authentication plugin in <plugins> it is not needed

Exit status of run: 0 once stopped by SIGINT or SIGTERM, in any phase (a
signal while the broker waits for its store's lock or recovers its journal
abandons the start-up), or by wharf stop once it runs; 1 on an error. A second signal during a slow stop
exits at once, without a clean shutdown, with status 1.

Protocols in this build: OpenWire 1-12 (tcp://, nio://: ActiveMQ's JMS client,
failover: URLs included), STOMP 1.0/1.1/1.2 (stomp://, stomp+nio://), MQTT
3.1/3.1.1/5 (mqtt://, mqtt+nio://), AMQP 1.0 (amqp://, amqp+nio://), and STOMP,
MQTT and AMQP over WebSocket (ws://, stomp+ws://, mqtt+ws://, amqp+ws://; STOMP
and MQTT also at the web server's /stomp and /mqtt with YAML http.websocket, see
docs/http.md). Each also over TLS with the broker's <sslContext> (ssl://,
nio+ssl://, stomp+ssl://, mqtt+ssl://, amqp+ssl://, amqps://, wss://, ...).
`

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "wharf:", err)
	os.Exit(exitCode(err))
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	if cmd, ok := adminCommands[args[0]]; ok {
		if err := cmd(args[1:], stdout, stderr); !errors.Is(err, errHelpShown) {
			return err
		}
		return nil
	}
	switch args[0] {
	case "run":
		return runBroker(args[1:], stdout, stderr)
	case "kahadb":
		return runKahaDB(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "conform":
		return runConform(args[1:], stdout, stderr)
	case "encrypt", "decrypt":
		return runEncrypt(args[0], args[1:], stdout)
	case "version", "--version":
		fmt.Fprintln(stdout, "wharf", version.Broker)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q (wharf help lists the commands)", args[0])
}

type defines map[string]string

func (d defines) String() string { return "" }
func (d defines) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want -Dname=value, got -D%s", v)
	}
	d[name] = val
	return nil
}

func runBroker(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	// A bad flag comes back as the error, printed once by main with a
	// hint; --help goes to stdout.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	cfgPath := fs.String("config", "", "configuration file")
	level := fs.String("log-level", "info", "log level")
	format := fs.String("log-format", "text", "log format")
	trusted := fs.Bool("trusted-network", false, "allow non-loopback listeners without authentication")
	web := fs.Bool("http", true, "start the web server")
	// -Dname=value is Java's form, which the flag package would read as a
	// flag called "Dname": take those out first.
	vars := defines{}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-D" && i+1 < len(args):
			i++
			if err := vars.Set(args[i]); err != nil {
				return err
			}
		case strings.HasPrefix(a, "-D"):
			if err := vars.Set(a[2:]); err != nil {
				return err
			}
		default:
			rest = append(rest, a)
		}
	}
	if err := fs.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		return fmt.Errorf("run: %w (wharf run --help lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run takes no arguments, got %q", fs.Args())
	}
	slow, err := slowAccessTime(vars)
	if err != nil {
		return err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *level)
	}
	var h slog.Handler
	switch *format {
	case "text":
		h = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv})
	case "json":
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: lv})
	default:
		return fmt.Errorf("--log-format %q: want text or json", *format)
	}
	log := slog.New(h)

	var cfg *config.Config
	if *cfgPath != "" {
		c, err := config.LoadFileWith(*cfgPath, vars, config.LoadOptions{TrustedNetwork: *trusted, NoHTTP: !*web, Decrypt: wiring.Decrypt})
		if err != nil {
			return err
		}
		cfg = c
	} else {
		c := config.Default()
		c.TrustedNetwork = *trusted
		c.HTTP.Enabled = *web
		c.Persistence.KahaDB.Directory = filepath.Join(c.DataDirectory, "kahadb")
		f := wiring.Factories()
		for _, t := range config.DefaultTransports() {
			if f.Listeners[t.Scheme] != nil {
				c.Transports = append(c.Transports, t)
			}
		}
		cfg = &c
	}
	source := *cfgPath
	if source == "" {
		source = "built-in defaults"
	}
	log.Info("starting", "version", version.Broker, "config", source, "data_dir", cfg.DataDirectory, "pid", os.Getpid())
	// The handler is in place before the store is opened: a signal
	// while the broker waits for the store's lock, recovers its journal
	// or starts its connectors abandons the start-up, and one that comes
	// as soon as a client could connect stops the broker cleanly.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	ctx, stop := context.WithCancelCause(context.Background())
	done := make(chan struct{})
	defer close(done)
	go watchSignals(sig, done, stop, log, os.Exit)
	// The web server first: /healthz answers and /readyz says "not
	// ready" while the store recovers.
	var srv *httpserver.Server
	factories := wiring.Factories()
	if cfg.HTTP.Enabled {
		jm := httpserver.NewJournalMetrics()
		s, err := wiring.StartHTTP(cfg, false, jm, log)
		if err != nil {
			return err
		}
		srv, factories = s, wiring.FactoriesObserved(jm)
	}
	bo := broker.Options{Factories: factories, Logger: log, Version: version.Broker}
	if slow != 0 {
		bo.Engine = func(o *engine.Options) { o.SlowStoreThreshold = slow }
	}
	if srv != nil {
		// Ready before "broker started" is logged: scripts and tests that
		// wait for the line then find /readyz saying so.
		bo.Started = srv.Ready
	}
	b, err := broker.StartContext(ctx, cfg, bo)
	if err != nil {
		if srv != nil {
			srv.Close()
		}
		if ctx.Err() != nil {
			log.Info("start-up abandoned", "reason", context.Cause(ctx).Error(), "err", err)
			return nil
		}
		return err
	}
	// A store that can lose its lock to another broker (the JDBC
	// store's ACTIVEMQ_LOCK) stops this one when it does, as ActiveMQ
	// stops a broker whose lock keep-alive fails; the exit status is 1,
	// so that a supervisor starts it again, as a slave.
	lockLost := errors.New("lost the database lock: another broker is master")
	if ll, ok := b.Store().(interface{ LockLost() <-chan struct{} }); ok && ll.LockLost() != nil {
		go func() {
			select {
			case <-ll.LockLost():
				log.Error("stopping", "reason", lockLost.Error())
				stop(lockLost)
			case <-done:
			}
		}()
	}
	if srv == nil {
		<-ctx.Done()
		err := b.Close()
		if context.Cause(ctx) == lockLost {
			return errors.Join(lockLost, err)
		}
		return err
	}
	select {
	case <-ctx.Done():
	case <-srv.StopRequested():
		// The stop operation of the API (wharf stop): the same stop as a
		// signal's.
		log.Info("stopping", "reason", "stop operation over the management API")
		stop(errors.New("stop operation over the management API"))
	}
	// Not ready before the connectors close, so that load balancers
	// stop sending clients; the web server last, so that /healthz
	// answers during the stop.
	srv.NotReady()
	err = errors.Join(b.Close(), srv.Close())
	if context.Cause(ctx) == lockLost {
		err = errors.Join(lockLost, err)
	}
	return err
}

// slowAccessDefine is the system property with which ActiveMQ turns on its
// "Slow KahaDB access" lines (AbstractKahaDBStore.LOG_SLOW_ACCESS_TIME).
const slowAccessDefine = "org.apache.activemq.store.kahadb.LOG_SLOW_ACCESS_TIME"

// slowAccessTime reads -Dorg.apache.activemq.store.kahadb.LOG_SLOW_ACCESS_TIME
// (milliseconds) as the engine's SlowStoreThreshold: 0 when it is not
// given (the engine's default, 500 ms), negative when it is 0 (off, as in
// ActiveMQ).
func slowAccessTime(vars defines) (time.Duration, error) {
	v, ok := vars[slowAccessDefine]
	if !ok {
		return 0, nil
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("-D%s=%s: want a number of milliseconds (0 turns the warning off)", slowAccessDefine, v)
	}
	if ms == 0 {
		return -1, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// watchSignals stops the broker at the first signal on sig, by calling
// stop with an error naming it (which cancels the start-up, or ends the
// wait of a running broker); a second signal, for a stop that hangs, logs
// and calls exit(1) at once. It returns when done is closed.
func watchSignals(sig <-chan os.Signal, done <-chan struct{}, stop context.CancelCauseFunc, log *slog.Logger, exit func(int)) {
	select {
	case s := <-sig:
		log.Info("stopping", "signal", s.String())
		stop(fmt.Errorf("signal %s", s))
	case <-done:
		return
	}
	select {
	case s := <-sig:
		log.Error("second signal: exiting without a clean shutdown", "signal", s.String())
		exit(1)
	case <-done:
	}
}
