// Command wharf is the Wharf message broker.
//
//	wharf run [--config FILE] [-Dname=value ...] [--log-level LEVEL] [--trusted-network]
//	wharf kahadb dump|check|pins|activemq DIR
//	wharf bench [--url URL] [--scenario NAME] [flags]
//	wharf version
package main

import (
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
		return runBroker(args[1:], stderr)
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
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
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

func runBroker(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
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
		return err
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
		log.Info("configuration loaded", "file", *cfgPath)
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
	// The handler is in place before the listeners accept: a SIGTERM that
	// comes as soon as a client could connect stops the broker cleanly.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	b, err := broker.Start(cfg, broker.Options{Factories: wiring.Factories(), Logger: log})
	if err != nil {
		signal.Stop(sig)
		return err
	}
	s := <-sig
	log.Info("stopping", "signal", s.String())
	signal.Stop(sig)
	return b.Close()
}
