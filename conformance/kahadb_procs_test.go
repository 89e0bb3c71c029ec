package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"wharf/internal/pgtest"

	"wharf/internal/activemq"
	"wharf/protocols/openwire/client"
)

// The KahaDB interop and crash tests (kahadb_*_test.go) run Wharf and
// ActiveMQ 5.17 as real child processes on one KahaDB directory: a store
// handed from one broker to the other must survive a process ending, which
// an in-process broker cannot show (its files stay open, its lock held, its
// goroutines keep running after a simulated crash). Both brokers listen on
// 127.0.0.1 port 0 and the test reads the bound address from their logs.

// Bounds of the process helpers: generous for a loaded CI machine (a JVM
// start takes 2-3 s), short enough that a hung broker fails the test.
const (
	procStartTimeout = 60 * time.Second
	procStopTimeout  = 30 * time.Second
)

// amqHome is where Debian's activemq package installs the broker.
const amqHome = activemq.Home

const amqInstallHint = "apt-get install -y activemq default-jre-headless"

var wharfBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// TestMain removes the wharf binary that wharfBinary built for this run
// and stops the PostgreSQL cluster the JDBC tests started.
func TestMain(m *testing.M) {
	code := m.Run()
	if wharfBin.dir != "" {
		os.RemoveAll(wharfBin.dir)
	}
	if err := pgtest.StopShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// wharfBinary builds cmd/wharf once per test run and returns its path.
func wharfBinary(t testing.TB) string {
	t.Helper()
	wharfBin.once.Do(func() {
		if _, err := exec.LookPath("go"); err != nil {
			wharfBin.err = fmt.Errorf("go tool not found: %w", err)
			return
		}
		dir, err := os.MkdirTemp("", "wharf-conformance-bin-")
		if err != nil {
			wharfBin.err = err
			return
		}
		wharfBin.dir = dir
		p := filepath.Join(dir, "wharf")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", p, "./cmd/wharf")
		cmd.Dir = ".." // the module root: the test runs in conformance/
		if out, err := cmd.CombinedOutput(); err != nil {
			wharfBin.err = fmt.Errorf("go build ./cmd/wharf: %v\n%s", err, out)
			return
		}
		wharfBin.path = p
	})
	if wharfBin.err != nil {
		t.Fatal(wharfBin.err)
	}
	return wharfBin.path
}

// procLog keeps a child's output lines and lets a test wait for one.
type procLog struct {
	mu    sync.Mutex
	lines []string
	grew  chan struct{} // closed and replaced on every new line
}

func newProcLog() *procLog { return &procLog{grew: make(chan struct{})} }

func (l *procLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	close(l.grew)
	l.grew = make(chan struct{})
	l.mu.Unlock()
}

func (l *procLog) snapshot() ([]string, chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...), l.grew
}

func (l *procLog) String() string {
	lines, _ := l.snapshot()
	return strings.Join(lines, "\n")
}

// tail is the last n lines, for failure messages.
func (l *procLog) tail(n int) string {
	lines, _ := l.snapshot()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// proc is a broker running as a child process.
type proc struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	log    *procLog
	exited chan struct{} // closed when the process has been waited for
	err    error         // Wait's result, set before exited is closed
}

// startProc starts cmd with its stdout and stderr read line by line into a
// procLog (the pipes are drained until the process ends, so it never
// blocks on a full pipe). The process is killed at the end of the test if
// it still runs.
func startProc(t testing.TB, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &proc{t: t, name: name, cmd: cmd, log: newProcLog(), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.log.add(sc.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitLine waits until a line matching re appears and returns its
// submatches; it fails the test when the process exits first or after
// timeout.
func (p *proc) waitLine(re *regexp.Regexp, timeout time.Duration) []string {
	p.t.Helper()
	deadline := time.After(timeout)
	seen := 0
	for {
		lines, grew := p.log.snapshot()
		for ; seen < len(lines); seen++ {
			if m := re.FindStringSubmatch(lines[seen]); m != nil {
				return m
			}
		}
		select {
		case <-grew:
		case <-p.exited:
			// The last lines may still be in the pipe.
			lines, _ := p.log.snapshot()
			for ; seen < len(lines); seen++ {
				if m := re.FindStringSubmatch(lines[seen]); m != nil {
					return m
				}
			}
			p.t.Fatalf("%s exited (%v) before logging %q; log:\n%s", p.name, p.err, re, p.log.tail(60))
		case <-deadline:
			p.t.Fatalf("%s did not log %q within %v; log:\n%s", p.name, re, timeout, p.log.tail(60))
		}
	}
}

// signal sends sig and waits until the process has exited; with SIGKILL
// the exit status is not looked at, otherwise it must be a clean exit
// (status 0, or the JVM's 143 for SIGTERM when okStatus says so).
func (p *proc) signal(sig syscall.Signal, okStatus ...int) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		p.t.Fatalf("signal %s: %v", p.name, err)
	}
	select {
	case <-p.exited:
	case <-time.After(procStopTimeout):
		p.cmd.Process.Kill()
		<-p.exited
		p.t.Fatalf("%s did not stop within %v after %v; log:\n%s", p.name, procStopTimeout, sig, p.log.tail(60))
	}
	if sig == syscall.SIGKILL || p.err == nil {
		return
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		for _, s := range okStatus {
			if exit.ExitCode() == s {
				return
			}
		}
	}
	p.t.Fatalf("%s exited with %v after %v; log:\n%s", p.name, p.err, sig, p.log.tail(60))
}

// wharfProc is `wharf run` on a KahaDB directory, with one OpenWire, one
// STOMP and one MQTT connector.
type wharfProc struct {
	*proc
	openwire, stomp, mqtt string
}

// wharfConfig is the YAML of startWharf: one shard (a single KahaDB
// journal, as ActiveMQ reads it), enableJournalDiskSyncs at its default
// (true), loopback port 0 for every connector.
const wharfConfig = `shards: 1
persistence:
  kahadb:
    directory: %q
%s
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
  - {name: mqtt, uri: "mqtt://127.0.0.1:0"}
`

var wharfListening = regexp.MustCompile(`"msg":"Listening for connections at"`)

// startWharf runs the wharf binary on the KahaDB directory dir and returns
// once the broker has started. kahadb are further persistence.kahadb keys
// ("key: value").
func startWharf(t *testing.T, dir string, kahadb ...string) *wharfProc {
	t.Helper()
	var extra strings.Builder
	for _, kv := range kahadb {
		extra.WriteString("    " + kv + "\n")
	}
	return startWharfYAML(t, fmt.Sprintf(wharfConfig, dir, extra.String()))
}

// startWharfYAML runs the wharf binary with the YAML configuration yml,
// which has an OpenWire and a STOMP connector named openwire and stomp,
// and returns once the broker has started.
func startWharfYAML(t testing.TB, yml string) *wharfProc {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	return startWharfArgs(t, "--config", cfg)
}

// startWharfArgs runs `wharf run --log-format json` with args, whose
// configuration has an OpenWire and a STOMP connector named openwire and
// stomp (and may have an MQTT one named mqtt), and returns once the broker
// has started.
func startWharfArgs(t testing.TB, args ...string) *wharfProc {
	t.Helper()
	bin := wharfBinary(t)
	p := startProc(t, "wharf", exec.Command(bin, append([]string{"run", "--log-format", "json", "--http=false"}, args...)...))
	return wharfStarted(t, p)
}

// wharfStarted waits until the wharf process p has started and returns
// it with the addresses of its listeners.
func wharfStarted(t testing.TB, p *proc) *wharfProc {
	t.Helper()
	p.waitLine(regexp.MustCompile(`"msg":"broker started"`), procStartTimeout)
	w := &wharfProc{proc: p}
	lines, _ := p.log.snapshot()
	for _, line := range lines {
		if !wharfListening.MatchString(line) {
			continue
		}
		var rec struct{ Connector, Addr string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("wharf log line %q: %v", line, err)
		}
		switch rec.Connector {
		case "openwire":
			w.openwire = rec.Addr
		case "stomp":
			w.stomp = rec.Addr
		case "mqtt":
			w.mqtt = rec.Addr
		}
	}
	// An MQTT connector is optional (startWharf's configuration has one;
	// the tests that use it check w.mqtt).
	if w.openwire == "" || w.stomp == "" {
		t.Fatalf("wharf started without logging its openwire and stomp listeners; log:\n%s", p.log.tail(60))
	}
	return w
}

// stop stops wharf with SIGTERM (an orderly close of the store).
func (w *wharfProc) stop() { w.t.Helper(); w.signal(syscall.SIGTERM) }

// kill stops wharf with SIGKILL (a crash: nothing is flushed or closed).
func (w *wharfProc) kill() { w.t.Helper(); w.signal(syscall.SIGKILL) }

// logged reports the wharf log records whose msg is msg, decoded.
func (w *wharfProc) logged(msg string) []map[string]any {
	var out []map[string]any
	lines, _ := w.log.snapshot()
	for _, line := range lines {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}

// amqProc is Debian's ActiveMQ 5.17 with its KahaDB in a given directory.
type amqProc struct {
	*proc
	openwire string
}

// skipWithoutActiveMQ skips the test when Java or ActiveMQ is missing.
func skipWithoutActiveMQ(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("java"); err != nil {
		t.Skipf("java not found (%s)", amqInstallHint)
	}
	if _, err := os.Stat(filepath.Join(amqHome, "bin", "activemq.jar")); err != nil {
		t.Skipf("ActiveMQ 5.17 not installed in %s (%s)", amqHome, amqInstallHint)
	}
}

var amqListening = regexp.MustCompile(`Listening for connections at: tcp://[^:/]+:(\d+)`)

// startActiveMQ starts ActiveMQ on the KahaDB directory kahaDir with the
// configuration in kahadb/activemq.xml (one OpenWire connector on loopback
// port 0), as conformance/activemq/run.sh starts it: in the foreground,
// with the JVM flags /usr/bin/activemq passes, its data (tmp_storage,
// scheduler) in a temporary directory of its own.
func startActiveMQ(t *testing.T, kahaDir string) *amqProc {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash("kahadb/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return startActiveMQXML(t, b, "wharf.kahadb.dir="+kahaDir)
}

// startActiveMQXML starts ActiveMQ as startActiveMQ does, with the
// activemq.xml xml (one OpenWire connector on loopback port 0) and the
// -D settings props.
func startActiveMQXML(t testing.TB, xml []byte, props ...string) *amqProc {
	t.Helper()
	p := spawnActiveMQXML(t, xml, props...)
	port := p.waitLine(amqListening, procStartTimeout)[1]
	p.waitLine(regexp.MustCompile(`Apache ActiveMQ \S+ \(.*\) started`), procStartTimeout)
	return &amqProc{proc: p, openwire: "127.0.0.1:" + port}
}

// spawnActiveMQXML starts ActiveMQ as startActiveMQXML does but returns
// at once, without waiting for it to listen (a slave waits for its
// store's lock first).
func spawnActiveMQXML(t testing.TB, xml []byte, props ...string) *proc {
	t.Helper()
	return spawnActiveMQXMLLog(t, xml, "", props...)
}

// spawnActiveMQXMLLog is spawnActiveMQXML with log4jExtra appended to
// activemq/log4j.properties (more loggers, other levels).
func spawnActiveMQXMLLog(t testing.TB, xml []byte, log4jExtra string, props ...string) *proc {
	t.Helper()
	skipWithoutActiveMQ(t)
	base := t.TempDir()
	conf := filepath.Join(base, "conf")
	for _, d := range []string{conf, filepath.Join(base, "data"), filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "activemq.xml"), xml, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.FromSlash("activemq/log4j.properties"))
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, "\n"+log4jExtra+"\n"...)
	if err := os.WriteFile(filepath.Join(conf, "log4j.properties"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return startProc(t, "activemq", activemq.Command(base, props...))
}

// stop stops ActiveMQ with SIGTERM: its shutdown hook stops the broker and
// closes KahaDB (a final checkpoint). The JVM then exits with 143.
func (a *amqProc) stop() { a.t.Helper(); a.signal(syscall.SIGTERM, 143) }

// kill stops ActiveMQ with SIGKILL.
func (a *amqProc) kill() { a.t.Helper(); a.signal(syscall.SIGKILL) }

// dialOW connects the Go OpenWire client; clientID may be empty.
func dialOW(t testing.TB, addr, clientID string) *client.Conn {
	t.Helper()
	o := client.DefaultOptions()
	o.ClientID = clientID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, o)
	if err != nil {
		t.Fatalf("openwire dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
