// Command wharf is the Wharf message broker.
//
//	wharf run [--config FILE] [-Dname=value ...] [--log-level LEVEL] [--trusted-network]
//	wharf kahadb dump|check|pins|activemq DIR
//	wharf bench [--url URL] [--scenario NAME] [flags]
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
	"strings"
	"syscall"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/broker"
	"wharf/engine/config"
	"wharf/protocols/stomp"
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
  wharf version         print the version
  wharf help            print this help

Flags of run:
  --config FILE         activemq.xml or native YAML (.yaml/.yml) configuration;
                        without it: OpenWire on 127.0.0.1:61616, STOMP on
                        127.0.0.1:61613, MQTT on 127.0.0.1:1883, AMQP on
                        127.0.0.1:5672, store under ./data
  -Dname=value          set a ${name} placeholder of the config (repeatable);
                        the environment is consulted after these
  --log-level LEVEL     debug, info (default), warn or error
  --log-format FORMAT   text (default) or json
  --trusted-network     let connectors listen on non-loopback addresses (such as
                        the 0.0.0.0 of ActiveMQ's stock activemq.xml) without
                        authentication, which Wharf cannot configure yet: anyone
                        who can reach the ports can use the broker. Logged at
                        Warn at every start, with those listeners

Exit status of run: 0 once stopped by SIGINT or SIGTERM, in any phase (a
signal while the broker waits for its store's lock or recovers its journal
abandons the start-up); 1 on an error. A second signal during a slow stop
exits at once, without a clean shutdown, with status 1.

Protocols in this build: OpenWire 1-12 (tcp://, nio://: ActiveMQ's JMS client,
failover: URLs included), STOMP 1.0/1.1/1.2 (stomp://, stomp+nio://), MQTT
3.1/3.1.1/5 (mqtt://, mqtt+nio://), AMQP 1.0 (amqp://, amqp+nio://), and STOMP,
MQTT and AMQP over WebSocket (ws://, stomp+ws://, mqtt+ws://, amqp+ws://). TLS
connectors are reported as not supported yet.
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "wharf:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "run":
		return runBroker(args[1:], stdout, stderr)
	case "kahadb":
		return runKahaDB(args[1:], stdout, stderr)
	case "bench":
		return runBench(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, "wharf", stomp.Version)
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
		c, err := config.LoadFileWith(*cfgPath, vars, config.LoadOptions{TrustedNetwork: *trusted})
		if err != nil {
			return err
		}
		cfg = c
	} else {
		c := config.Default()
		c.TrustedNetwork = *trusted
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
	log.Info("starting", "version", stomp.Version, "config", source, "data_dir", cfg.DataDirectory, "pid", os.Getpid())
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
	b, err := broker.StartContext(ctx, cfg, broker.Options{Factories: wiring.Factories(), Logger: log, Version: stomp.Version})
	if err != nil {
		if ctx.Err() != nil {
			log.Info("start-up abandoned", "reason", context.Cause(ctx).Error(), "err", err)
			return nil
		}
		return err
	}
	<-ctx.Done()
	return b.Close()
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
