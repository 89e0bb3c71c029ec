package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"wharf/bench"
)

const benchUsage = `Usage:
  wharf bench [flags]

Load-test a broker (Wharf, ActiveMQ Classic, Mosquitto, ...) over STOMP,
OpenWire, MQTT 3.1.1 or AMQP 1.0 and check that every message arrived
exactly once. Each message carries its producer, a sequence number and its
send time; consumers record latency in an HdrHistogram. Every run ends by
itself: at --count messages or after --duration, then receivers wait at
most --drain for stragglers.

Examples:
  wharf bench --url tcp://127.0.0.1:61616 --count 100000
  wharf bench --url stomp://127.0.0.1:61613 --producers 4 --consumers 4 \
      --size 1024 --persistent --duration 30s
  wharf bench --scenario topic --subscribers 10 --rate 5000 --duration 1m
  wharf bench --scenario reqreply --producers 8 --consumers 2 --count 20000
  wharf bench --scenario connections --connections 10000 --hold 30s \
      --broker-pid $(pgrep -f 'wharf run')
  wharf bench --count 50000 --json --broker-pid 1234 >> results.jsonl
  wharf bench --url mqtt://127.0.0.1:1883 --scenario topic --subscribers 10 \
      --qos 1 --count 20000 --plot topic.svg
  wharf bench --url amqp://127.0.0.1:5672 --settle presettled --count 50000
  wharf bench --url stomp+ssl://127.0.0.1:61614 --ca ca.pem \
      --user orders-svc --password secret --count 50000
  wharf bench --url ssl://localhost:61617 --ca ca.pem \
      --cert client1.pem --key client1-key.pem --scenario connections

Broker and scenario:
  --url URL             broker: stomp://host:port, tcp://host:port
                        (OpenWire; also nio://), mqtt://host:port (MQTT
                        3.1.1) or amqp://host:port (AMQP 1.0); over TLS
                        stomp+ssl://, ssl:// (OpenWire; also nio+ssl://),
                        mqtt+ssl:// or amqp+ssl:// (also amqps://);
                        user:pass@host logs in (over AMQP with SASL PLAIN,
                        ANONYMOUS without), e.g.
                        --url stomp://admin:secret@127.0.0.1:61613
                        (default tcp://127.0.0.1:61616)
  --user NAME           log in as NAME, instead of user:pass@ in --url,
                        e.g. --user orders-svc --password secret
                        (default: the URL's user, else none)
  --password PASS       the password of --user (visible to ps: prefer a
                        throw-away account), e.g. --password secret
  --scenario NAME       queue: --producers send to one queue, --consumers
                        share it; topic: --producers publish, each of
                        --subscribers gets every message; reqreply:
                        --producers requesters send to a queue with a
                        reply-to, --consumers responders echo the body back,
                        latency is the round trip; connections: open
                        --connections connections, hold them --hold, close
                        them, report failures and time to open. Over MQTT
                        every destination is a topic: queue is refused (MQTT
                        has no queues), reqreply replies on a topic per
                        requester and takes one responder. Over AMQP the
                        addresses are queue://NAME and topic://NAME, and
                        replies go to a queue per requester. E.g.
                        --scenario topic (default queue)
  --destination NAME    queue or topic name, e.g. --destination orders
                        (default: a fresh wharf.bench.<scenario>.<pid>.<time>
                        per run)
  --producers N         producers / publishers / requesters, one connection
                        each, e.g. --producers 4 (default 1)
  --consumers N         queue consumers / responders, one connection each,
                        e.g. --consumers 4 (default 1)
  --subscribers N       topic subscribers, the fan-out, e.g.
                        --subscribers 10 (default 4)

Load:
  --size BYTES          body size, at least 24, e.g. --size 100
                        (default 1024)
  --count N             messages to send in total, shared by the producers,
                        e.g. --count 50000 (default 10000 when --duration is
                        not given)
  --duration D          stop sending after D, e.g. --duration 30s; with
                        --count alone the run is still capped at 10m
  --rate R              open loop: R messages/s in total, latency counted
                        from when each message was due, so a stalled broker
                        shows as latency (coordinated omission); without it,
                        closed loop: each producer sends as fast as the
                        broker takes it. In the connections scenario: R
                        connections/s. E.g. --rate 5000
  --drain D             after the last send, wait until everything arrived
                        or nothing arrived for D; the rest is lost, e.g.
                        --drain 10s (default 5s)

Delivery:
  --persistent          send persistent messages (STOMP, OpenWire; over
                        AMQP header.durable), e.g. --persistent --producers 4
  --sync                wait for the broker's confirmation of each send
                        (OpenWire response, STOMP receipt, MQTT PUBACK or
                        PUBCOMP, AMQP Accepted outcome); --sync=false turns
                        it off, e.g. --persistent --sync=false (default: on
                        for persistent sends outside transactions, as the
                        JMS client does; off over MQTT; never with AMQP
                        --settle presettled, which has nothing to wait for)
  --ack MODE            auto, client or individual (ActiveMQ's
                        INDIVIDUAL_ACKNOWLEDGE, STOMP client-individual);
                        client and individual acknowledge every message; over
                        MQTT they send the PUBACK, over AMQP the Accepted
                        disposition, once the message is recorded instead
                        of on arrival. E.g. --ack client (default auto)
  --tx N                transacted producers and consumers, committing
                        every N messages, e.g. --tx 100 (default 0: no
                        transactions; refused over MQTT and AMQP)
  --prefetch N          consumer prefetch, e.g. --prefetch 1 (default 0: the
                        client's default, 1000 for OpenWire queues, the
                        broker's for STOMP, a link credit of 1000 over AMQP;
                        refused over MQTT)

MQTT (mqtt:// URLs):
  --qos N               quality of service of publications and subscriptions:
                        0 at most once, 1 at least once, 2 exactly once,
                        e.g. --qos 0 (default 1). Sends are asynchronous,
                        at most 1000 unconfirmed per connection, unless
                        --sync. Messages are never retained; --persistent,
                        --tx and --prefetch have no MQTT meaning and are
                        refused
  --clean-session       the clean-session flag of every connection;
                        --clean-session=false keeps each client's session
                        (and its QoS 1 and 2 subscriptions) on the broker
                        after the run, e.g. --qos 1 --clean-session=false
                        (default true)

AMQP (amqp:// URLs):
  --settle MODE         unsettled: producers send unsettled and the broker
                        answers each message with an outcome; with --sync
                        each send waits for Accepted, without it at most
                        1000 outcomes are outstanding per connection;
                        consumers accept each message (on arrival with
                        --ack auto). presettled: producers send settled
                        (fire and forget, nothing comes back) and consumers
                        ask for settled deliveries (at most once; --ack
                        client/individual and --sync are refused). Other
                        protocols take only unsettled. E.g.
                        --settle presettled (default unsettled)
  --amqp-addresses STYLE
                        how addresses name destinations: activemq
                        (queue://name, topic://name; ActiveMQ and Wharf) or
                        rabbitmq (/queue/name, /topic/name; RabbitMQ's AMQP
                        1.0 plugin), e.g. --amqp-addresses rabbitmq
                        (default activemq)

TLS (stomp+ssl://, ssl://, mqtt+ssl://, amqp+ssl:// URLs):
  --ca FILE             PEM certificates that sign the broker's; the
                        broker's certificate must name the URL's host
                        (DNS or IP subject alternative name), e.g.
                        --ca ca.pem (default: the system's roots)
  --cert FILE           PEM client certificate (chain) for a broker that
                        asks for one (needClientAuth, wantClientAuth),
                        with --key, e.g. --cert client1.pem
  --key FILE            PEM unencrypted private key of --cert, e.g.
                        --key client1-key.pem

  Over TLS every connection makes a full handshake (TLS 1.2 or 1.3, no
  session resumption); the connections scenario counts it in the time to
  open a connection.

Connections scenario:
  --connections N       connections to open, e.g. --connections 10000
                        (default 1000)
  --hold D              how long to keep them open, e.g. --hold 30s
                        (default 10s)
  --connect-timeout D   bound on each connection's setup, e.g.
                        --connect-timeout 2s (default 5s)

Output:
  --json                print one JSON object for the run instead of the
                        table (sent/received rates, latency_us p50 p90 p99
                        p99_9 max, errors, lost, duplicates, broker,
                        timeline), e.g. --json >> results.jsonl
  --broker-pid PID      sample the broker's RSS and CPU from /proc/PID
                        during the run (Linux), e.g.
                        --broker-pid $(pgrep -f 'wharf run')
  --plot FILE.svg       also draw the run as an SVG: messages sent and
                        received per second over time (connections opened,
                        in the connections scenario) and the latency by
                        percentile on a log scale of nines (0%, 90%, 99%,
                        99.9%, ...), e.g. --plot run.svg

A live progress line is shown while stdout is a terminal. The exit status
is 1 when a message was lost, duplicated or reordered, or an error occurred.
`

// optionalBool is a boolean flag that knows whether it was given.
type optionalBool struct{ v *bool }

func (o *optionalBool) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *optionalBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	o.v = &b
	return nil
}

func (o *optionalBool) IsBoolFlag() bool { return true }

// benchFlags are the flags of wharf bench and the values they set.
type benchFlags struct {
	fs                  *flag.FlagSet
	cfg                 bench.Config
	scenario, ack, plot *string
	settle              *string
	amqpAddresses       *string
	sync                optionalBool
	asJSON              *bool
}

func newBenchFlags() *benchFlags {
	f := &benchFlags{cfg: bench.DefaultConfig()}
	cfg := &f.cfg
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	// A bad flag comes back as the error; the help goes to stdout, and
	// only when asked for.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&cfg.URL, "url", cfg.URL, "")
	fs.StringVar(&cfg.User, "user", "", "")
	fs.StringVar(&cfg.Password, "password", "", "")
	fs.StringVar(&cfg.CAFile, "ca", "", "")
	fs.StringVar(&cfg.CertFile, "cert", "", "")
	fs.StringVar(&cfg.KeyFile, "key", "", "")
	f.scenario = fs.String("scenario", string(cfg.Scenario), "")
	fs.StringVar(&cfg.Destination, "destination", "", "")
	fs.IntVar(&cfg.Producers, "producers", cfg.Producers, "")
	fs.IntVar(&cfg.Consumers, "consumers", cfg.Consumers, "")
	fs.IntVar(&cfg.Subscribers, "subscribers", cfg.Subscribers, "")
	fs.IntVar(&cfg.Size, "size", cfg.Size, "")
	fs.Int64Var(&cfg.Count, "count", 0, "")
	fs.DurationVar(&cfg.Duration, "duration", 0, "")
	fs.Float64Var(&cfg.Rate, "rate", 0, "")
	fs.DurationVar(&cfg.Drain, "drain", cfg.Drain, "")
	fs.BoolVar(&cfg.Persistent, "persistent", false, "")
	fs.Var(&f.sync, "sync", "")
	f.ack = fs.String("ack", string(cfg.Ack), "")
	fs.IntVar(&cfg.TxSize, "tx", 0, "")
	fs.IntVar(&cfg.Prefetch, "prefetch", 0, "")
	fs.IntVar(&cfg.QoS, "qos", cfg.QoS, "")
	fs.BoolVar(&cfg.CleanSession, "clean-session", cfg.CleanSession, "")
	f.settle = fs.String("settle", string(cfg.Settle), "")
	f.amqpAddresses = fs.String("amqp-addresses", string(bench.AMQPActiveMQ), "")
	fs.IntVar(&cfg.Connections, "connections", cfg.Connections, "")
	fs.DurationVar(&cfg.Hold, "hold", cfg.Hold, "")
	fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", cfg.ConnectTimeout, "")
	f.asJSON = fs.Bool("json", false, "")
	fs.IntVar(&cfg.BrokerPID, "broker-pid", 0, "")
	f.plot = fs.String("plot", "", "")
	f.fs = fs
	return f
}

func runBench(args []string, stdout, stderr io.Writer) error {
	f := newBenchFlags()
	fs, plot, asJSON := f.fs, f.plot, f.asJSON
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, benchUsage)
			return nil
		}
		return fmt.Errorf("%w (wharf bench --help lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench takes no arguments, got %q", fs.Args())
	}
	cfg := f.cfg
	cfg.Scenario, cfg.Ack, cfg.Sync = bench.Scenario(*f.scenario), bench.AckMode(*f.ack), f.sync.v
	cfg.Settle = bench.Settlement(*f.settle)
	cfg.AMQPAddresses = bench.AMQPAddressing(*f.amqpAddresses)
	if cfg.Scenario != bench.ScenarioConnections && cfg.Count == 0 && cfg.Duration == 0 {
		cfg.Count = 10000
	}
	if err := cfg.Validate(); err != nil {
		return err
	}

	// The plot file is created before the run, so that a path that
	// cannot be written fails at once and not after a long run.
	var plotFile *os.File
	if *plot != "" {
		if ext := strings.ToLower(filepath.Ext(*plot)); ext != ".svg" {
			return fmt.Errorf("--plot %s: the chart is written as SVG; name the file .svg (%q is not supported)", *plot, ext)
		}
		pf, err := os.Create(*plot)
		if err != nil {
			return fmt.Errorf("--plot: %w", err)
		}
		defer pf.Close()
		plotFile = pf
	}

	var o bench.RunOptions
	if tty, ok := stdout.(*os.File); ok && isTerminal(tty) {
		o.Progress = stdout
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := bench.Run(ctx, cfg, o)
	if err != nil {
		if plotFile != nil {
			plotFile.Close()
			os.Remove(*plot)
		}
		return err
	}
	if plotFile != nil {
		if err := res.WritePlot(plotFile); err != nil {
			return fmt.Errorf("--plot %s: %w", *plot, err)
		}
		if err := plotFile.Close(); err != nil {
			return fmt.Errorf("--plot %s: %w", *plot, err)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else if err := res.WriteText(stdout); err != nil {
		return err
	}
	if !res.OK() {
		return errors.New("bench: the run had errors, lost, duplicated or reordered messages")
	}
	return nil
}

// isTerminal reports whether f is a character device (a terminal, not a
// pipe or file), which is all the progress line needs to know.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
