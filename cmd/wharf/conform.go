package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"wharf/conform"
)

const conformUsage = `Usage:
  wharf conform --url URL [--url URL ...] [flags]
  wharf conform --print-config
  wharf conform --list

Check how far a broker (Wharf, ActiveMQ Classic, Artemis, RabbitMQ's
plugins, a cloud service) behaves like Apache ActiveMQ Classic 5.17 for
the clients that talk to it. Each case drives the broker over the network
with a real client and pins one observable behaviour of ActiveMQ; it runs
when the broker's URLs include every protocol it needs. Nothing runs
without an explicit --url.

With a tcp:// URL, the case openwire/jms/suite also runs ActiveMQ's own
JMS client (its 58 Java cases, one subtest each) when java, javac and
Debian's libactivemq-java jars are here (compiled once into the temporary
directory); otherwise it is skipped with the install hint. Its Failover
case needs --restart-cmd; the suite does not log in (--user is not passed
to it).

Examples:
  wharf conform --url stomp://127.0.0.1:61613
  wharf conform --url stomp://127.0.0.1:61613 --url tcp://127.0.0.1:61616 \
      --url mqtt://127.0.0.1:1883 --url amqp://127.0.0.1:5672 --junit conform.xml
  wharf conform --url stomp://127.0.0.1:61613 --only '^stomp/ack/' --json
  wharf conform --url stomp://127.0.0.1:61613 --against stomp://127.0.0.1:61623
  wharf conform --print-config > activemq.xml

Broker:
  --url URL             an address of the broker (repeatable, one per
                        connector): stomp://host:port, tcp://host:port
                        (OpenWire; also nio://), mqtt://host:port,
                        amqp://host:port. user:pass@host logs in.
                        A few cases need a connector with an option set;
                        give it with that option as the query, as its uri
                        in --print-config has it (without it they skip):
                          stomp://host:port?wireFormat.maxFrameSize=4096
                            (stomp-small: stomp/errors/frame-too-large)
                          mqtt://host:port?wireFormat.maxFrameSize=1024
                            (mqtt-small: mqtt/connect/packet-too-large)
                          mqtt://host:port?transport.publishDollarTopics=true
                            (mqtt-dollar: mqtt/topics/dollar-published)
                          amqp://host:port?wireFormat.idleTimeout=500
                            (amqp-idle: amqp/connection/idle-timeout)
  --user NAME           log in as NAME on every connection
  --password PASS       the password of --user
  --stomp-host NAME     the host header of STOMP CONNECT frames (default
                        localhost); a virtual host for some brokers, e.g.
                        --stomp-host / for RabbitMQ
  --restart-cmd CMD     a shell command that restarts the broker (run with
                        sh -c; the case then waits for the broker's ports);
                        cases that need a restart (and the JMS suite's
                        Failover case) are skipped without it
  --against URL         differential mode: also run every case against a
                        second broker (repeatable, one per protocol, as
                        --url; same --user and --password) and report the
                        cases whose outcome differs, with both brokers'
                        observations side by side

Selection:
  --only REGEX          run only the cases whose names match, e.g.
                        --only '^stomp/(ack|tx)/'
  --skip REGEX          leave out the cases whose names match
  --list                list the cases (name, needs, the behaviour pinned,
                        source, configuration, documented deviation) and
                        exit

Output:
  --json                print the report as JSON (results with their
                        observations, summary, and in differential mode
                        the second broker's results and the differences)
  --junit FILE          also write the results as JUnit XML, one testcase
                        per case
  --print-config        print the activemq.xml that sets up everything the
                        cases rely on (policies, interceptors, connectors)
                        and exit; its ${...} placeholders are the data
                        directory and the ports, given as -D properties to
                        ActiveMQ's bin/activemq or to wharf run, e.g.
                        wharf run --config activemq.xml -Dactivemq.data=./data \
                          -Dwharf.stomp.port=61613 -Dwharf.stomp.small.port=61614 \
                          -Dwharf.openwire.port=61616 -Dwharf.mqtt.port=1883 \
                          -Dwharf.mqtt.small.port=1884 -Dwharf.mqtt.dollar.port=1885
                        Its AMQP connectors (amqp, amqp-idle; ports
                        wharf.amqp.port, wharf.amqp.idle.port) are in a
                        comment, as Debian's ActiveMQ has no AMQP: take
                        them out of it for a broker that serves AMQP

What it does to the broker: each case opens a few connections and sends at
most a few hundred small messages; destination names start with
conf_<run>_, a prefix unique to the run, except for the fixed targets of the
configured composite queue (conformance.composite.*), ActiveMQ.DLQ and the
advisory topics. Durable subscriptions and temporary destinations a case
creates are removed when it ends. Each case is bounded in time (30s unless
it says otherwise); cases run one at a time.

A live progress line is shown while stdout is a terminal. Exit status: 0
when every case passed or was skipped (and in differential mode every
difference is a documented Wharf deviation); 1 when a case failed or an
unexpected difference was found; 2 on a bad flag or no --url; 3 when the
broker cannot be reached.
`

// urlList is a repeatable flag.
type urlList []string

func (u *urlList) String() string     { return strings.Join(*u, ",") }
func (u *urlList) Set(s string) error { *u = append(*u, s); return nil }

func runConform(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conform", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var urls, against urlList
	fs.Var(&urls, "url", "")
	fs.Var(&against, "against", "")
	user := fs.String("user", "", "")
	password := fs.String("password", "", "")
	only := fs.String("only", "", "")
	skip := fs.String("skip", "", "")
	asJSON := fs.Bool("json", false, "")
	junit := fs.String("junit", "", "")
	restart := fs.String("restart-cmd", "", "")
	stompHost := fs.String("stomp-host", "localhost", "")
	printConfig := fs.Bool("print-config", false, "")
	list := fs.Bool("list", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, conformUsage)
			return nil
		}
		return usageError("%v (wharf conform --help lists the flags)", err)
	}
	if fs.NArg() > 0 {
		return usageError("conform takes no arguments, got %q", fs.Args())
	}
	if *printConfig {
		_, err := io.WriteString(stdout, conform.ConfigXML)
		return err
	}
	onlyRe, err := compileFlag("only", *only)
	if err != nil {
		return err
	}
	skipRe, err := compileFlag("skip", *skip)
	if err != nil {
		return err
	}
	cases := conform.Select(onlyRe, skipRe)
	if *list {
		return listCases(stdout, cases)
	}
	if len(urls) == 0 {
		return usageError("%v: give the broker's addresses with --url (wharf conform --help)", conform.ErrNoURL)
	}
	if len(cases) == 0 {
		return usageError("no case matches --only %q --skip %q (wharf conform --list)", *only, *skip)
	}
	prefix := conform.NewPrefix()
	mk := func(us []string) (*conform.Target, error) {
		tg := &conform.Target{User: *user, Password: *password, RestartCmd: *restart, Prefix: prefix, STOMPHost: *stompHost}
		for _, u := range us {
			if err := tg.AddURL(u); err != nil {
				return nil, usageError("%v", err)
			}
		}
		if err := tg.Identify(30 * time.Second); err != nil {
			return nil, &exitError{code: exitUnreachable, err: err}
		}
		if tg.Refusal != "" {
			fmt.Fprintf(stderr, "wharf conform: the broker at %s refused a STOMP CONNECT: %s\n", tg.Endpoints[conform.STOMP], tg.Refusal)
		}
		return tg, nil
	}
	tg, err := mk(urls)
	if err != nil {
		return err
	}
	var tgB *conform.Target
	if len(against) > 0 {
		if tgB, err = mk(against); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var progress func(label string) func(int, *conform.Case, *conform.Result)
	if tty, ok := stdout.(*os.File); ok && isTerminal(tty) && !*asJSON {
		progress = func(label string) func(int, *conform.Case, *conform.Result) {
			failed := 0
			return func(i int, c *conform.Case, r *conform.Result) {
				if r != nil {
					if r.Status == conform.Fail {
						failed++
					}
					return
				}
				fmt.Fprintf(stdout, "\r\033[K%s[%d/%d, %d failed] %s", label, i+1, len(cases), failed, c.Name)
			}
		}
	}
	runOn := func(t *conform.Target, label string) []conform.Result {
		var p func(int, *conform.Case, *conform.Result)
		if progress != nil {
			p = progress(label)
		}
		rs := conform.Run(ctx, cases, t, p)
		if progress != nil {
			fmt.Fprint(stdout, "\r\033[K")
		}
		return rs
	}
	label := ""
	if tgB != nil {
		label = "A "
	}
	rep := &conform.Report{Broker: tg.Info()}
	rep.Results = runOn(tg, label)
	rep.Summary = conform.Summarize(rep.Results)
	if tgB != nil {
		b := tgB.Info()
		b.Results = runOn(tgB, "B ")
		rep.Against = &b
		rep.Differences = conform.Compare(cases, rep.Results, b.Results)
	}

	if *junit != "" {
		if err := writeJUnitFile(*junit, tg, rep.Results); err != nil {
			return err
		}
	}
	if *asJSON {
		if err := conform.WriteJSON(stdout, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "broker A: %s\n", describeTarget(tg))
		if err := conform.WriteTable(stdout, rep.Results); err != nil {
			return err
		}
		if tgB != nil {
			fmt.Fprintf(stdout, "\nbroker B: %s\n", describeTarget(tgB))
			if err := conform.WriteTable(stdout, rep.Against.Results); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
			if err := conform.WriteDifferences(stdout, describeTarget(tg), describeTarget(tgB), rep.Differences); err != nil {
				return err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return errors.New("conform: interrupted")
	}
	bad := rep.Summary.Fail
	if rep.Against != nil {
		bad += conform.Summarize(rep.Against.Results).Fail
	}
	unexpected := 0
	for _, d := range rep.Differences {
		if !d.Expected {
			unexpected++
		}
	}
	switch {
	case bad > 0 && unexpected > 0:
		return fmt.Errorf("conform: %d case(s) failed, %d unexpected difference(s)", bad, unexpected)
	case bad > 0:
		return fmt.Errorf("conform: %d case(s) failed", bad)
	case unexpected > 0:
		return fmt.Errorf("conform: %d unexpected difference(s) between the brokers", unexpected)
	}
	return nil
}

func compileFlag(name, expr string) (*regexp.Regexp, error) {
	if expr == "" {
		return nil, nil
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, usageError("--%s %q: %v", name, expr, err)
	}
	return re, nil
}

// describe names a target: its server header and endpoints.
func describeTarget(tg *conform.Target) string {
	var eps []string
	for _, ep := range conform.Endpoints() {
		if a := tg.Endpoints[ep]; a != "" {
			eps = append(eps, ep+"="+a)
		}
	}
	s := strings.Join(eps, " ")
	if tg.Server != "" {
		s = tg.Server + " (" + s + ")"
	}
	return s
}

func writeJUnitFile(path string, tg *conform.Target, rs []conform.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	if err := conform.WriteJUnit(f, "wharf conform "+describeTarget(tg), rs); err != nil {
		f.Close()
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--junit %s: %w", path, err)
	}
	return nil
}

func listCases(w io.Writer, cases []*conform.Case) error {
	for _, c := range cases {
		fmt.Fprintf(w, "%s\n  needs:  %s\n  pins:   %s\n  source: %s\n", c.Name, strings.Join(c.Needs, ", "), c.Pins, c.Source)
		if c.Config != "" {
			fmt.Fprintf(w, "  config: %s\n", c.Config)
		}
		if c.Restart {
			fmt.Fprintf(w, "  restart: needs --restart-cmd\n")
		}
		if c.Deviation != "" {
			fmt.Fprintf(w, "  wharf deviation: %s\n", c.Deviation)
		}
		if c.Extension != "" {
			fmt.Fprintf(w, "  beyond ActiveMQ: %s\n", c.Extension)
		}
	}
	_, err := fmt.Fprintf(w, "%d cases\n", len(cases))
	return err
}
