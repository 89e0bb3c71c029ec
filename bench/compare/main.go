// Command compare is `make bench-compare`: it runs the same `wharf bench`
// scenarios against Wharf and against reference brokers on this machine,
// alternating between them round after round, and reports per scenario
// the medians and the ratio Wharf/reference with its spread.
//
// It installs what is missing (as root, with apt-get: Debian's ActiveMQ
// 5.17 with the MQTT codec it needs, a JRE and a JDK for the JMS-client
// rows, Mosquitto), builds Wharf from
// this tree, and starts every broker itself on loopback ports with its data
// in a temporary directory: Wharf and ActiveMQ with the same activemq.xml
// (this directory's, KahaDB with a disk sync per persistent send),
// Mosquitto with unbounded per-client queues, and, when Debian's
// rabbitmq-server is installed (it is not installed for you), a private
// RabbitMQ node with its STOMP, MQTT and AMQP 1.0 plugins (rabbitmq.go);
// each broker in a session of its own. Three OpenWire scenarios run with
// ActiveMQ's own JMS client as well as with wharf bench's Go driver
// (bench/jms/JmsBench.java, compiled at the start). Latency rows send open
// loop at a fixed rate; the near-the-limit rows compare Wharf with the
// disk's write+fsync rate measured in the same round. Every run is
// bounded in count and time (a JMS run by its count and a 3-minute
// timeout), a time budget bounds the whole (28 minutes), and every broker
// it started is stopped when it ends, on Ctrl-C too (Linux also kills them
// should this program die first).
//
// Results: the table on stdout, bench/compare/results/<date>.json with
// every run, and <date>.svg, a bar chart of the ratios.
//
//	go run ./bench/compare [-rounds N] [-scale F] [-only REGEXP] [-dir DIR] [-keep]
//	go run ./bench/compare -render bench/compare/results/<date>.json
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wharf/bench"
)

type options struct {
	rounds int
	out    string
	dir    string
	scale  float64
	only   string
	budget time.Duration
	keep   bool
	render string
}

func main() {
	var o options
	rounds := 3
	if v := os.Getenv("ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench-compare: ROUNDS=%q is not a number\n", v)
			os.Exit(2)
		}
		rounds = n
	}
	flag.IntVar(&o.rounds, "rounds", rounds, "rounds of A B A B; at least 3 for a spread worth reading (env ROUNDS)")
	flag.StringVar(&o.out, "out", "", "directory for <date>.json and <date>.svg (default bench/compare/results)")
	flag.StringVar(&o.dir, "dir", "", "parent of the temporary directory with the brokers' data; its file system is the one the disk sync test measures (default $TMPDIR or /tmp)")
	flag.Float64Var(&o.scale, "scale", 1, "multiply every count, duration and connection count, e.g. 0.1 for a quick try")
	flag.StringVar(&o.only, "only", "", "run only the scenarios whose id matches this regular expression, e.g. 'mqtt|idle'")
	flag.DurationVar(&o.budget, "budget", 28*time.Minute, "start no round that would end later than this after the start")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (broker logs and data)")
	flag.StringVar(&o.render, "render", "", "run nothing: print the table of a saved results/<date>.json and redraw its .svg")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "bench-compare: no arguments expected, got %q\n", flag.Args())
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C the brokers are being stopped; a second
		// one ends this program at once, and Linux kills them.
		<-ctx.Done()
		stop()
	}()
	var err error
	if o.render != "" {
		err = render(o.render, os.Stdout)
	} else {
		err = run(ctx, o, os.Stdout, os.Stderr)
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-compare:", err)
		os.Exit(1)
	}
}

// buildTimeout bounds `go build` of Wharf.
const buildTimeout = 5 * time.Minute

func run(ctx context.Context, o options, stdout, log io.Writer) (err error) {
	start := time.Now()
	if o.rounds < 1 {
		return fmt.Errorf("-rounds %d: want at least 1", o.rounds)
	}
	if o.scale <= 0 {
		return fmt.Errorf("-scale %g: want a positive factor", o.scale)
	}
	scs := scenarios()
	if o.only != "" {
		re, err := regexp.Compile(o.only)
		if err != nil {
			return fmt.Errorf("-only: %w", err)
		}
		var keep []scenario
		for _, sc := range scs {
			if re.MatchString(sc.ID) {
				keep = append(keep, sc)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("-only %q matches no scenario", o.only)
		}
		scs = keep
	}
	repo, err := repoRoot(ctx)
	if err != nil {
		return err
	}
	if o.out == "" {
		o.out = filepath.Join(repo, "bench", "compare", "results")
	}
	nofile, err := raiseNoFile()
	if err != nil {
		return fmt.Errorf("RLIMIT_NOFILE: %w", err)
	}
	if err := ensureInstalled(ctx, log); err != nil {
		return err
	}
	confXML, err := os.ReadFile(filepath.Join(repo, "bench", "compare", "activemq.xml"))
	if err != nil {
		return err
	}
	log4j, err := os.ReadFile(filepath.Join(repo, "bench", "compare", "log4j.properties"))
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(o.dir, "wharf-compare-")
	if err != nil {
		return err
	}
	defer func() {
		// A failure keeps the brokers' logs for a look; an interrupted
		// run does not need them.
		if o.keep || (err != nil && ctx.Err() == nil) {
			fmt.Fprintf(log, "kept %s (broker logs and data)\n", tmp)
			return
		}
		os.RemoveAll(tmp)
	}()

	fmt.Fprintln(log, "building wharf")
	bin := filepath.Join(tmp, "wharf-bin")
	bctx, cancel := context.WithTimeout(ctx, buildTimeout)
	build := exec.CommandContext(bctx, "go", "build", "-o", bin, "./cmd/wharf")
	build.Dir = repo
	out, berr := build.CombinedOutput()
	cancel()
	if berr != nil {
		return fmt.Errorf("go build ./cmd/wharf: %w\n%s", berr, out)
	}

	fmt.Fprintln(log, "measuring the machine (1 s of write+fsync)")
	m, err := describe(ctx, repo, bin, tmp, time.Second)
	if err != nil {
		return err
	}
	m.NoFile = nofile
	var notes []string
	if m.DataFS == "tmpfs" {
		notes = append(notes, "the data directory is on tmpfs: disk syncs reach no disk, persistent figures are not a disk's (use -dir)")
	}
	if nofile < idleConnections+1000 {
		notes = append(notes, fmt.Sprintf("RLIMIT_NOFILE %d is below the %d idle connections: raise the hard limit (ulimit -Hn)", nofile, idleConnections))
	}
	if lo, hi, ok := strings.Cut(m.PortRange, "-"); ok {
		a, _ := strconv.Atoi(lo)
		b, _ := strconv.Atoi(hi)
		if b-a+1 < idleConnections+1000 {
			notes = append(notes, fmt.Sprintf("ephemeral port range %s is smaller than the %d idle connections (sysctl net.ipv4.ip_local_port_range)", m.PortRange, idleConnections))
		}
	}

	// The brokers, stopped on the way out whatever happens.
	brokers := map[string]*broker{}
	defer func() {
		for _, name := range allBrokers {
			if b := brokers[name]; b != nil {
				if serr := b.stop(); serr != nil {
					fmt.Fprintf(log, "stopping %s: %v\n", name, serr)
				}
			}
		}
	}()
	fmt.Fprintln(log, "starting wharf, activemq, mosquitto and rabbitmq on loopback")
	w, err := startWharf(ctx, bin, string(confXML), filepath.Join(tmp, "wharf"), true)
	if errors.Is(err, errNoMQTT) {
		fmt.Fprintln(log, errNoMQTT.Error()+": the MQTT scenarios compare ActiveMQ with Mosquitto")
		w, err = startWharf(ctx, bin, string(confXML), filepath.Join(tmp, "wharf-nomqtt"), false)
	}
	if err != nil {
		return err
	}
	brokers[nameWharf] = w
	wharfMQTT := w.urls[connMQTT] != "" // the fresh ones are started alike
	freshRuns := 0
	if brokers[nameActiveMQ], err = startActiveMQ(ctx, string(confXML), string(log4j), filepath.Join(tmp, "activemq")); err != nil {
		return err
	}
	if brokers[nameMosquitto], err = startMosquitto(ctx, filepath.Join(tmp, "mosquitto")); err != nil {
		return err
	}
	// RabbitMQ is optional: without it (or when it does not start) its
	// rows compare the others, with a note.
	missing := map[string]string{}
	switch {
	case !rabbitMQInstalled():
		missing[nameRabbitMQ] = "not installed (apt-get install rabbitmq-server)"
	case !uses(scs, nameRabbitMQ):
	default:
		if brokers[nameRabbitMQ], err = startRabbitMQ(ctx, filepath.Join(tmp, "rabbitmq")); err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			missing[nameRabbitMQ] = "did not start: " + first
			fmt.Fprintln(log, err)
			delete(brokers, nameRabbitMQ)
		}
	}
	for _, name := range allBrokers {
		if b := brokers[name]; b != nil {
			fmt.Fprintf(log, "  %-9s pid %-7d %s\n", name, b.pid, strings.Join(sortedURLs(b.urls), " "))
		}
	}

	warmUp(ctx, brokers, o.scale, log)

	var jmsCP, jmsErr string
	for _, sc := range scs {
		if sc.jms == nil {
			continue
		}
		fmt.Fprintln(log, "compiling the JMS client benchmark (bench/jms)")
		if cp, err := buildJMS(ctx, repo, filepath.Join(tmp, "jms")); err != nil {
			jmsErr = err.Error()
			fmt.Fprintln(log, jmsErr)
		} else {
			jmsCP = cp
		}
		break
	}

	r := &runner{
		brokers: brokers, rounds: o.rounds, scale: o.scale, log: log, jmsCP: jmsCP, jmsErr: jmsErr,
		deadline: start.Add(o.budget), diskDir: tmp, fsyncPerSec: m.FsyncPerSec, missing: missing,
		fresh: func(ctx context.Context, name string, round int, storeEvery bool) (*broker, error) {
			// A directory per start: several fresh scenarios run in one
			// round.
			freshRuns++
			dir := filepath.Join(tmp, fmt.Sprintf("%s-fresh-%d-%d", name, round, freshRuns))
			switch name {
			case nameWharf:
				return startWharfStoring(ctx, bin, string(confXML), dir, wharfMQTT, storeEvery)
			case nameActiveMQ:
				return startActiveMQ(ctx, string(confXML), string(log4j), dir)
			case nameMosquitto:
				return startMosquitto(ctx, dir)
			case nameRabbitMQ:
				return startRabbitMQ(ctx, dir)
			}
			return nil, fmt.Errorf("no broker called %q", name)
		},
	}
	samples, done := r.run(ctx, scs)

	rep := &Report{Date: start, Machine: m, Rounds: done, RoundsPlanned: o.rounds, Scale: o.scale, Notes: notes}
	if done < 3 {
		rep.Notes = append(rep.Notes, "fewer than 3 rounds: the min–max spread says little")
	}
	if done < o.rounds {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d of %d rounds completed", done, o.rounds))
	}
	if o.scale != 1 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("counts, durations and connections scaled by %g", o.scale))
	}
	for _, sc := range scs {
		order, pairs, note := r.lineup(sc)
		rep.Scenarios = append(rep.Scenarios, summarize(sc, order, pairs, note, samples[sc.ID]))
	}
	rep.Seconds = time.Since(start).Seconds()
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Partial results stay out of the results directory.
		return errors.New("interrupted; the results above are partial and were not saved")
	}
	jsonPath, svgPath, err := writeResults(rep, o.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nresults: %s, %s (%s in all)\n", jsonPath, svgPath, time.Since(start).Round(time.Second))
	return nil
}

// allBrokers are the long-lived brokers, in the order they are listed
// and stopped.
var allBrokers = []string{nameWharf, nameActiveMQ, nameMosquitto, nameRabbitMQ}

// uses reports whether one of scs compares with the broker called name.
func uses(scs []scenario, name string) bool {
	for _, sc := range scs {
		if slices.Contains(sc.refs, name) {
			return true
		}
	}
	return false
}

// warmUp sends a short non-persistent load through each broker first, so
// that the first round does not measure a JVM's JIT compiler at work.
func warmUp(ctx context.Context, brokers map[string]*broker, scale float64, log io.Writer) {
	fmt.Fprintln(log, "warming up")
	for _, name := range allBrokers {
		b := brokers[name]
		if b == nil {
			continue
		}
		for _, conn := range []string{connOpenWire, connSTOMP, connMQTT, connAMQP} {
			url := b.urls[conn]
			if url == "" {
				continue
			}
			c := bench.DefaultConfig()
			c.URL, c.Count, c.Duration, c.Drain = url, int64(10000*scale)+1, 5*time.Second, 2*time.Second
			if conn == connMQTT {
				c.Scenario, c.Subscribers = bench.ScenarioTopic, 2
			}
			brokerSettings(name, &c)
			if _, err := bench.Run(ctx, c, bench.RunOptions{}); err != nil {
				fmt.Fprintf(log, "  warm-up of %s over %s: %v\n", name, conn, err)
			}
		}
	}
}

func sortedURLs(u map[string]string) []string {
	var out []string
	for _, k := range []string{connOpenWire, connNIO, connSTOMP, connMQTT, connAMQP} {
		if v := u[k]; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// repoRoot is the directory of the wharf module.
func repoRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from the wharf module (make bench-compare)")
	}
	return filepath.Dir(mod), nil
}

// render prints the table of a saved report and redraws its chart next
// to it.
func render(jsonPath string, stdout io.Writer) error {
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		return err
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return fmt.Errorf("%s: %w", jsonPath, err)
	}
	if err := rep.WriteTable(stdout); err != nil {
		return err
	}
	svgPath := strings.TrimSuffix(jsonPath, ".json") + ".svg"
	f, err := os.Create(svgPath)
	if err != nil {
		return err
	}
	if err := rep.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeResults writes <date>.json and <date>.svg in dir, numbering a
// second run of the day rather than overwriting the first.
func writeResults(rep *Report, dir string) (jsonPath, svgPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	base := rep.Date.Format("2006-01-02")
	for i := 2; ; i++ {
		if _, err := os.Stat(filepath.Join(dir, base+".json")); errors.Is(err, os.ErrNotExist) {
			break
		}
		base = fmt.Sprintf("%s-%d", rep.Date.Format("2006-01-02"), i)
	}
	jsonPath, svgPath = filepath.Join(dir, base+".json"), filepath.Join(dir, base+".svg")
	write := func(path string, f func(io.Writer) error) error {
		file, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := f(file); err != nil {
			file.Close()
			return err
		}
		return file.Close()
	}
	if err := write(jsonPath, rep.WriteJSON); err != nil {
		return "", "", err
	}
	if err := write(svgPath, rep.WriteSVG); err != nil {
		return "", "", err
	}
	return jsonPath, svgPath, nil
}
