package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wharf/conform"
	"wharf/internal/activemq"
)

// TestWharfConformHelpAndUsage: --help documents every flag and exits 0;
// no --url, a bad --only, an unknown scheme exit 2 naming the fault; a
// broker that is not there exits 3.
func TestWharfConformHelpAndUsage(t *testing.T) {
	code, out, errOut := runWharf(t, "conform", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, errOut)
	}
	for _, f := range []string{"--url", "--user", "--password", "--only", "--skip", "--json", "--junit", "--restart-cmd", "--stomp-host", "--print-config", "--against", "--list"} {
		if !strings.Contains(out, "  "+f+" ") {
			t.Errorf("--help does not explain %s", f)
		}
	}
	// Every connector with an option is explained as the URL it takes.
	for _, ep := range conform.Endpoints() {
		if u := conform.EndpointURL(ep, "host:port"); strings.Contains(u, "?") && !strings.Contains(out, u) {
			t.Errorf("--help does not show %s for the %s connector", u, ep)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"conform"}, 2, "no broker URL given"},
		{[]string{"conform", "--url", "stomp://127.0.0.1:1", "--only", "("}, 2, `--only "("`},
		{[]string{"conform", "--url", "http://127.0.0.1:1"}, 2, `scheme "http"`},
		{[]string{"conform", "--url", "stomp://127.0.0.1"}, 2, "want scheme://host:port"},
		{[]string{"conform", "--url", "mqtt://127.0.0.1:1?wireFormat.maxFrameSize=4096"}, 2, "a mqtt URL takes one of wireFormat.maxFrameSize=1024, transport.publishDollarTopics=true"},
		{[]string{"conform", "--url", "tcp://127.0.0.1:1?x=1"}, 2, "a tcp URL takes no query"},
		{[]string{"conform", "--url", "stomp://127.0.0.1:1", "--only", "^nothing$"}, 2, "no case matches"},
		{[]string{"conform", "--url", "stomp://" + closedAddr(t)}, 3, "identify"},
	} {
		code, _, errOut := runWharf(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("wharf %q: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	code, out, _ = runWharf(t, "conform", "--print-config")
	if code != 0 || out != conform.ConfigXML {
		t.Errorf("--print-config: exit %d, %d bytes; want 0 and conform.ConfigXML", code, len(out))
	}
	code, out, _ = runWharf(t, "conform", "--list", "--only", "^stomp/tx/")
	if code != 0 || !strings.Contains(out, "stomp/tx/ack-abort\n") || !strings.Contains(out, "wharf deviation:") || strings.Contains(out, "stomp/ack/") {
		t.Errorf("--list --only ^stomp/tx/: exit %d:\n%s", code, out)
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := l.Addr().String()
	l.Close()
	return a
}

// wharfRun starts `wharf run` as a process with the suite's activemq.xml
// (wharf conform --print-config), every connector on port 0, and returns
// conform URLs for its connectors once it has started.
func wharfRun(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "activemq.xml")
	// The suite's activemq.xml with its AMQP connectors, which Debian's
	// ActiveMQ lacks (no activemq-amqp) and Wharf has.
	xml := conform.ConfigXMLWithAMQP()
	if xml == conform.ConfigXML || !strings.Contains(xml, `name="amqp-idle"`) {
		t.Fatal("conform.ConfigXMLWithAMQP does not differ from conform.ConfigXML by the AMQP connectors")
	}
	if err := os.WriteFile(cfg, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	args := []string{"run", "--config", cfg, "--log-format", "json", "--http=false", "-Dactivemq.data=" + filepath.Join(dir, "data")}
	for _, ep := range conform.Endpoints() {
		args = append(args, "-D"+portProperty(ep)+"=0")
	}
	cmd := wharfCommand(ctx, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	addrs := map[string]string{}
	var lines []string
	sc := bufio.NewScanner(stderr)
	started := false
	for !started && sc.Scan() {
		lines = append(lines, sc.Text())
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec["msg"] {
		case "Listening for connections at":
			addrs[fmt.Sprint(rec["connector"])] = fmt.Sprint(rec["addr"])
		case "broker started":
			started = true
		}
	}
	if !started {
		t.Fatalf("wharf run did not start; log:\n%s", strings.Join(lines, "\n"))
	}
	go func() {
		for sc.Scan() {
		}
	}()
	// Each endpoint is the connector of its name.
	var urls []string
	for _, ep := range conform.Endpoints() {
		if addrs[ep] == "" {
			t.Fatalf("no address for connector %s in the log: %v", ep, addrs)
		}
		urls = append(urls, conform.EndpointURL(ep, addrs[ep]))
	}
	return urls
}

// portProperty is the activemq.xml placeholder of an endpoint's port:
// wharf.stomp.small.port for stomp-small.
func portProperty(ep string) string {
	return "wharf." + strings.ReplaceAll(ep, "-", ".") + ".port"
}

func urlArgs(flag string, urls []string) []string {
	var out []string
	for _, u := range urls {
		out = append(out, flag, u)
	}
	return out
}

// runnable is the names of the registry's cases that a target with these
// endpoints runs (and that match only, when not nil).
func runnable(eps []string, only *regexp.Regexp) []string {
	var out []string
	for _, c := range conform.Cases() {
		if only != nil && !only.MatchString(c.Name) || c.Restart {
			continue
		}
		if !slices.ContainsFunc(c.Needs, func(n string) bool { return !slices.Contains(eps, n) }) {
			out = append(out, c.Name)
		}
	}
	return out
}

// documentedDeviations is the names of the cases with a Deviation among
// names (and with extensions, those with an Extension too).
func documentedDeviations(names []string, extensions bool) []string {
	var out []string
	for _, c := range conform.Cases() {
		if (c.Deviation != "" || extensions && c.Extension != "") && slices.Contains(names, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// TestWharfConformAgainstWharfRun runs wharf conform, as a process,
// against wharf run, as a process: every case the URLs allow passes, the
// documented deviations are recorded, --json round-trips, --junit parses
// back to the same results, --only and --skip select, and a case that
// fails makes the exit status 1.
func TestWharfConformAgainstWharfRun(t *testing.T) {
	urls := wharfRun(t)
	eps := conform.Endpoints()
	junit := filepath.Join(t.TempDir(), "conform.xml")
	code, out, errOut := runConformCmd(t, append(append([]string{"conform"}, urlArgs("--url", urls)...), "--json", "--junit", junit)...)
	var rep conform.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, --json output does not parse: %v\n%s\n%s", code, err, errOut, clip(out))
	}
	if code != 0 {
		for _, r := range rep.Results {
			if r.Status == conform.Fail {
				t.Errorf("%s: %s; observations %v", r.Case, r.Reason, r.Observations)
			}
		}
		t.Fatalf("exit %d; stderr %s", code, errOut)
	}
	// Every case is reported; those the URLs allow pass, the others (the
	// restart case, without --restart-cmd) are skipped saying why.
	var got, all, devs []string
	for _, r := range rep.Results {
		all = append(all, r.Case)
		switch {
		case r.Status == conform.Pass:
			got = append(got, r.Case)
		case r.Status == conform.Skip && strings.HasPrefix(r.Reason, "needs "):
		default:
			t.Errorf("%s: %s %s", r.Case, r.Status, r.Reason)
		}
		if r.Deviation != "" {
			devs = append(devs, r.Case)
		}
	}
	if want := caseNames(conform.Cases()); !slices.Equal(all, want) {
		t.Errorf("reported %q, want every case %q", all, want)
	}
	if want := runnable(eps, nil); !slices.Equal(got, want) {
		t.Errorf("ran %d cases, want the %d the URLs allow:\ngot  %q\nwant %q", len(got), len(want), got, want)
	}
	if want := documentedDeviations(got, false); !slices.Equal(devs, want) || len(want) == 0 {
		t.Errorf("deviations recorded for %q, want %q (every documented one)", devs, want)
	}
	if !strings.HasPrefix(rep.Broker.Server, "Wharf/") || rep.Summary != conform.Summarize(rep.Results) {
		t.Errorf("broker %q, summary %+v", rep.Broker.Server, rep.Summary)
	}
	t.Logf("against wharf run: %s", rep.Summary)
	checkJMSSuite(t, rep, "against wharf run")

	// --json round-trips: what it decodes to encodes to the same JSON.
	var again strings.Builder
	if err := conform.WriteJSON(&again, &rep); err != nil {
		t.Fatal(err)
	}
	if again.String() != out {
		t.Errorf("--json does not round-trip:\n%s\nvs\n%s", clip(out), clip(again.String()))
	}
	var rep2 conform.Report
	if err := json.Unmarshal([]byte(again.String()), &rep2); err != nil || !reflect.DeepEqual(rep, rep2) {
		t.Errorf("decoded again: %v, equal %v", err, reflect.DeepEqual(rep, rep2))
	}

	// --junit: parsed back, one testcase per result, same names and
	// outcomes, suites per protocol.
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc conform.JUnitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("--junit does not parse: %v\n%s", err, b)
	}
	var jnames, jpassed []string
	for _, s := range doc.Suites {
		if !strings.HasPrefix(s.Name, "conform/") || s.Tests != len(s.Cases) {
			t.Errorf("suite %s: tests=%d with %d testcases", s.Name, s.Tests, len(s.Cases))
		}
		for _, c := range s.Cases {
			if c.Failure != nil {
				t.Errorf("junit %s: failure %v", c.Name, c.Failure)
			}
			if c.Skipped == nil {
				jpassed = append(jpassed, c.Name)
			} else if !strings.HasPrefix(c.Skipped.Message, "needs ") {
				t.Errorf("junit %s: skipped %q", c.Name, c.Skipped.Message)
			}
			if _, err := strconv.ParseFloat(c.Time, 64); err != nil {
				t.Errorf("junit %s: time %q", c.Name, c.Time)
			}
			jnames = append(jnames, c.Name)
		}
	}
	if doc.Tests != len(rep.Results) || doc.Failures != 0 || doc.Skipped != len(all)-len(got) || !slices.Equal(jnames, all) || !slices.Equal(jpassed, got) {
		t.Errorf("junit: tests=%d failures=%d skipped=%d names %q passed %q; want %d, 0, %d, %q, %q",
			doc.Tests, doc.Failures, doc.Skipped, jnames, jpassed, len(rep.Results), len(all)-len(got), all, got)
	}

	// --only and --skip select by name.
	only, skip := regexp.MustCompile(`^stomp/(ack|tx)/`), regexp.MustCompile(`forms|receipts`)
	code, out, errOut = runConformCmd(t, append(append([]string{"conform"}, urlArgs("--url", urls)...), "--json", "--only", only.String(), "--skip", skip.String())...)
	if code != 0 {
		t.Fatalf("--only/--skip: exit %d; %s", code, errOut)
	}
	rep = conform.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, r := range rep.Results {
		got = append(got, r.Case)
		if r.Status != conform.Pass {
			t.Errorf("--only/--skip %s: %s %s", r.Case, r.Status, r.Reason)
		}
	}
	var want []string
	for _, n := range runnable(eps, only) {
		if !skip.MatchString(n) {
			want = append(want, n)
		}
	}
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("--only %s --skip %s ran %q, want %q", only, skip, got, want)
	}

	// A case that fails: the small-frame case pointed at the connector
	// without a frame limit. Exit 1, the table names it, the JUnit XML
	// carries a <failure>.
	bad := []string{"--url", urls[0], "--url", strings.Replace(urls[0], "?", "", 1) + "?wireFormat.maxFrameSize=4096", "--only", "frame-too-large|^stomp/tx/commit$", "--junit", junit}
	code, out, errOut = runConformCmd(t, append([]string{"conform"}, bad...)...)
	if code != 1 || !regexp.MustCompile(`stomp/errors/frame-too-large\s+fail`).MatchString(out) || !strings.Contains(errOut, "1 case(s) failed") {
		t.Errorf("failing case: exit %d, stdout:\n%s\nstderr %s", code, out, errOut)
	}
	b, _ = os.ReadFile(junit)
	doc = conform.JUnitSuites{}
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Failures != 1 || doc.Tests != 2 {
		t.Errorf("junit of a failing run: %v, %d failures of %d", err, doc.Failures, doc.Tests)
	}
}

// TestWharfConformActiveMQ runs wharf conform against Debian's ActiveMQ
// 5.17, started with the suite's activemq.xml as make conformance-ref
// starts it, and then in differential mode against wharf run: ActiveMQ
// passes every case and shows no Wharf deviation; the differential lists
// exactly the documented deviations, each as expected, and exits 0.
func TestWharfConformActiveMQ(t *testing.T) {
	amqURLs := startActiveMQ(t)
	code, out, errOut := runConformCmd(t, append(append([]string{"conform"}, urlArgs("--url", amqURLs)...), "--json")...)
	if code != 0 {
		t.Fatalf("against ActiveMQ: exit %d; stderr %s\n%s", code, errOut, failedCases(out))
	}
	var rep conform.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Broker.Server, "ActiveMQ/5.17") {
		t.Errorf("server %q, want ActiveMQ/5.17.x", rep.Broker.Server)
	}
	// Every case the URLs allow passes, but the MQTT 5 ones, which skip
	// (ActiveMQ 5.17 refuses protocol level 5); the others skip for want
	// of an AMQP URL or a restart command.
	eps := activeMQEndpoints()
	allowed := runnable(eps, nil)
	var names []string
	for _, r := range rep.Results {
		want := conform.Skip
		if slices.Contains(allowed, r.Case) {
			names = append(names, r.Case)
			if c := caseNamed(r.Case); c == nil || c.Extension == "" {
				want = conform.Pass
			}
		}
		if r.Status != want || r.Deviation != "" {
			t.Errorf("ActiveMQ %s: %s %q deviation %q, want %s", r.Case, r.Status, r.Reason, r.Deviation, want)
		}
	}
	if len(names) == 0 {
		t.Fatal("no case ran against ActiveMQ")
	}
	t.Logf("against ActiveMQ 5.17: %s", rep.Summary)
	checkJMSSuite(t, rep, "against ActiveMQ")

	wharfURLs := wharfRun(t)
	code, out, errOut = runConformCmd(t, append(append(append([]string{"conform"}, urlArgs("--url", wharfURLs)...), urlArgs("--against", amqURLs)...), "--json")...)
	if code != 0 {
		t.Fatalf("differential: exit %d; stderr %s\n%s", code, errOut, failedCases(out))
	}
	rep = conform.Report{}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var diffs []string
	for _, d := range rep.Differences {
		diffs = append(diffs, d.Case)
		if c := caseNamed(d.Case); c != nil && c.Extension != "" {
			if !d.Expected || d.A.Status != conform.Pass || d.B.Status != conform.Skip {
				t.Errorf("difference %s: expected %v, A %s, B %s", d.Case, d.Expected, d.A.Status, d.B.Status)
			}
			continue
		}
		if !d.Expected || d.A.Deviation == "" || d.B.Deviation != "" {
			t.Errorf("difference %s: expected %v, A deviation %q, B deviation %q", d.Case, d.Expected, d.A.Deviation, d.B.Deviation)
		}
	}
	if want := documentedDeviations(names, true); !slices.Equal(diffs, want) || len(want) == 0 {
		t.Errorf("differences %q, want exactly the documented deviations %q", diffs, want)
	}
	// The text form shows both sides.
	code, out, _ = runConformCmd(t, append(append(append([]string{"conform"}, urlArgs("--url", wharfURLs)...), urlArgs("--against", amqURLs)...), "--only", "^stomp/errors/header-line-without-colon$")...)
	if code != 0 || !strings.Contains(out, "1 difference(s)") || !strings.Contains(out, "documented Wharf deviation") || !strings.Contains(out, "ActiveMQ/5.17") {
		t.Errorf("differential table: exit %d\n%s", code, out)
	}
	t.Logf("differential wharf run vs ActiveMQ: %q", diffs)
}

// startActiveMQ starts Debian's ActiveMQ 5.17 on the suite's activemq.xml
// as conformance/activemq/run.sh does (the same extension jars, the same
// JVM flags through internal/activemq), and returns conform URLs for its
// connectors. Its ports are picked by listening on :0 (all at once, so
// that they are distinct) and closing, which races only with other
// processes (acceptable for an external broker).
func startActiveMQ(t *testing.T) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(activemq.Home, "bin", "activemq.jar")); err != nil {
		t.Skip("Debian's ActiveMQ is not installed (apt-get install activemq; make test-deps)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("java not found (apt-get install default-jre-headless)")
	}
	base := t.TempDir()
	for _, d := range []string{"conf", "data", "tmp", "lib"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, jar := range []string{"xstream", "jettison", "xpp3", "mqtt-client", "hawtdispatch", "hawtdispatch-transport"} {
		src := "/usr/share/java/" + jar + ".jar"
		if _, err := os.Stat(src); err != nil {
			t.Skipf("%s missing (apt-get install libxstream-java libjettison-java libxpp3-java libmqtt-client-java)", src)
		}
		if err := os.Symlink(src, filepath.Join(base, "lib", jar+".jar")); err != nil {
			t.Fatal(err)
		}
	}
	log4j, err := os.ReadFile(filepath.Join("..", "..", "conformance", "activemq", "log4j.properties"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "conf", "log4j.properties"), log4j, 0o644)
	os.WriteFile(filepath.Join(base, "conf", "activemq.xml"), []byte(conform.ConfigXML), 0o644)
	ports := map[string]int{}
	var props []string
	free := freeTCPPorts(t, len(activeMQEndpoints()))
	for i, ep := range activeMQEndpoints() {
		ports[ep] = free[i]
		props = append(props, portProperty(ep)+"="+strconv.Itoa(ports[ep]))
	}
	logf, err := os.Create(filepath.Join(base, "activemq.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := activemq.Command(base, props...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	addr := func(p string) string { return "127.0.0.1:" + strconv.Itoa(ports[p]) }
	deadline := time.Now().Add(90 * time.Second)
	for _, p := range activeMQEndpoints() {
		for {
			c, err := net.DialTimeout("tcp", addr(p), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				log, _ := os.ReadFile(filepath.Join(base, "activemq.log"))
				t.Fatalf("ActiveMQ exited during start-up; log:\n%s", log)
			case <-time.After(100 * time.Millisecond): // poll interval
			}
			if time.Now().After(deadline) {
				t.Fatalf("ActiveMQ not listening on %s after 90s", addr(p))
			}
		}
	}
	var urls []string
	for _, ep := range activeMQEndpoints() {
		urls = append(urls, conform.EndpointURL(ep, addr(ep)))
	}
	return urls
}

// activeMQEndpoints is the endpoints of the suite's activemq.xml that
// Debian's ActiveMQ serves: all but the AMQP ones.
func activeMQEndpoints() []string {
	return slices.DeleteFunc(conform.Endpoints(), func(ep string) bool { return ep == conform.AMQP || ep == conform.AMQPIdle })
}

func caseNamed(name string) *conform.Case {
	for _, c := range conform.Cases() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestWharfConformRestartCmd: a case that restarts the broker is skipped,
// with the reason, without --restart-cmd, and with it runs the command (a
// script that stops wharf run with SIGTERM and starts it again on the same
// ports and KahaDB directory) and passes: persistent messages survive the
// restart, non-persistent ones do not; an MQTT retained message survives
// it; the JMS suite's Failover case reconnects across it.
func TestWharfConformRestartCmd(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "activemq.xml")
	if err := os.WriteFile(cfg, []byte(conform.ConfigXML), 0o644); err != nil {
		t.Fatal(err)
	}
	free := freeTCPPorts(t, 4)
	stompPort, smallPort, owPort, mqttPort := free[0], free[1], free[2], free[3]
	pidFile := filepath.Join(dir, "wharf.pid")
	// start.sh stops the broker of pidFile, if any, and starts another on
	// the same ports, as the test binary standing in for wharf (TestMain).
	start := filepath.Join(dir, "start.sh")
	script := fmt.Sprintf(`#!/bin/sh
set -e
if [ -f %[1]q ]; then
	pid=$(cat %[1]q)
	kill -TERM "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
fi
%[2]s=1 %[3]q -test.run='^$' -- run --config %[4]q --http=false -Dactivemq.data=%[5]q \
	-Dwharf.stomp.port=%[6]d -Dwharf.stomp.small.port=%[7]d -Dwharf.openwire.port=%[8]d -Dwharf.mqtt.port=%[9]d \
	-Dwharf.mqtt.small.port=0 -Dwharf.mqtt.dollar.port=0 \
	>>%[10]q 2>&1 &
echo $! > %[1]q
`, pidFile, asWharfEnv, os.Args[0], cfg, filepath.Join(dir, "data"), stompPort, smallPort, owPort, mqttPort, filepath.Join(dir, "wharf.log"))
	if err := os.WriteFile(start, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if p, err := os.FindProcess(pid); err == nil && pid > 0 {
			p.Signal(syscall.SIGTERM)
			for i := 0; i < 300 && p.Signal(syscall.Signal(0)) == nil; i++ {
				time.Sleep(100 * time.Millisecond) // polling the exit of a process that is not our child
			}
		}
	})
	if out, err := exec.Command("sh", start).CombinedOutput(); err != nil {
		t.Fatalf("start.sh: %v\n%s", err, out)
	}
	stomp := "stomp://127.0.0.1:" + strconv.Itoa(stompPort)
	waitListening(t, stomp[len("stomp://"):])

	// The restart cases: stomp/persistence/across-restart and
	// mqtt/retained/across-restart.
	mqttURL := "mqtt://127.0.0.1:" + strconv.Itoa(mqttPort)
	code, out, errOut := runWharf(t, "conform", "--url", stomp, "--url", mqttURL, "--only", "across-restart", "--json")
	var rep conform.Report
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Results) != 2 ||
		rep.Results[0].Status != conform.Skip || !strings.Contains(rep.Results[0].Reason, "--restart-cmd") ||
		rep.Results[1].Status != conform.Skip || !strings.Contains(rep.Results[1].Reason, "--restart-cmd") {
		t.Fatalf("without --restart-cmd: exit %d, %s %s", code, out, errOut)
	}
	code, out, errOut = runWharf(t, "conform", "--url", stomp, "--url", mqttURL, "--only", "across-restart", "--json", "--restart-cmd", "sh "+start)
	rep = conform.Report{}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Results) != 2 ||
		rep.Results[0].Status != conform.Pass || rep.Results[1].Status != conform.Pass {
		log, _ := os.ReadFile(filepath.Join(dir, "wharf.log"))
		t.Fatalf("with --restart-cmd: exit %d, %s %s\nwharf log:\n%s", code, out, errOut, log)
	}

	// The JMS suite's Failover case: with --restart-cmd, its RESTART
	// request runs the command and the failover transport carries on
	// against the broker back on the same port.
	if _, err := conform.JMSClasspath(); err != nil {
		t.Logf("the JMS Failover case is not checked: %v", err)
		return
	}
	ow := "tcp://127.0.0.1:" + strconv.Itoa(owPort)
	code, out, errOut = runWharf(t, "conform", "--url", ow, "--only", "^openwire/jms/suite$", "--json", "--restart-cmd", "sh "+start)
	rep = conform.Report{}
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Results) != 1 || rep.Results[0].Status != conform.Pass ||
		!slices.ContainsFunc(rep.Results[0].Observations, func(o conform.Observation) bool { return o.Kind == "jms" && o.Text == "PASS Failover" }) ||
		!slices.ContainsFunc(rep.Results[0].Observations, func(o conform.Observation) bool { return o.Kind == "restart" }) {
		log, _ := os.ReadFile(filepath.Join(dir, "wharf.log"))
		t.Fatalf("JMS suite with --restart-cmd: exit %d, %s %s\nwharf log:\n%s", code, clip(out), errOut, clip(string(log)))
	}
}

// waitListening polls until addr accepts connections, for a broker this
// test does not own as a child process.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listening after 30s: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
}

func caseNames(cs []*conform.Case) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

// runConformCmd is runWharf with a bound fit for whole conform runs (two
// brokers, each case bounded by itself) instead of runWharf's minute.
func runConformCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	cmd := wharfCommand(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("wharf %v: %v", args, err)
	return 0, "", ""
}

// rabbitMQServer is Debian's rabbitmq-server start script (without the
// wrapper that switches to the rabbitmq user).
const rabbitMQServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

// TestWharfConformRabbitMQ runs wharf conform against RabbitMQ 3.10 with
// its STOMP, MQTT and AMQP 1.0 plugins, a private node started by the test
// (its own HOME for the Erlang cookie, mnesia and log directories, node
// name, epmd and distribution ports, listeners on loopback). RabbitMQ is
// not ActiveMQ: many cases fail, and that is the report. What is checked
// is that the run goes to the end: every case has a result, none later
// than its time bound (plus the runner's clean-up grace), none a panic,
// and the reports parse.
func TestWharfConformRabbitMQ(t *testing.T) {
	if _, err := os.Stat(rabbitMQServer); err != nil {
		t.Skip("RabbitMQ is not installed (apt-get install rabbitmq-server)")
	}
	base := t.TempDir()
	var stompPort, mqttPort, amqpPort int
	for attempt := 1; ; attempt++ {
		var err error
		stompPort, mqttPort, amqpPort, err = startRabbitMQ(t, filepath.Join(base, "try"+strconv.Itoa(attempt)))
		if err == nil {
			break
		}
		// Ports are picked free and handed over, so another process
		// (a parallel test package) can take one first: the node then
		// fails its distribution port check. Start again on new ports.
		if attempt == 3 || !errors.Is(err, errRabbitMQPorts) {
			t.Fatal(err)
		}
		t.Logf("RabbitMQ start %d: %v; again on other ports", attempt, err)
	}
	junit := filepath.Join(base, "conform.xml")
	code, out, errOut := runConformCmd(t, "conform", "--url", "stomp://127.0.0.1:"+strconv.Itoa(stompPort),
		"--url", "mqtt://127.0.0.1:"+strconv.Itoa(mqttPort), "--url", "amqp://127.0.0.1:"+strconv.Itoa(amqpPort),
		"--user", "guest", "--password", "guest", "--stomp-host", "/", "--json", "--junit", junit)
	var rep conform.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, --json does not parse: %v\n%s\n%s", code, err, errOut, clip(out))
	}
	if !strings.HasPrefix(rep.Broker.Server, "RabbitMQ/") {
		t.Errorf("server %q, want RabbitMQ/...", rep.Broker.Server)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, r.Case)
		c := caseNamed(r.Case)
		if c == nil {
			t.Fatalf("result for unknown case %s", r.Case)
		}
		bound := c.Timeout
		if bound == 0 {
			bound = conform.DefaultTimeout
		}
		// A case may hang on RabbitMQ (go-stomp waiting for a RECEIPT that
		// an ERROR replaced): the runner ends it at its bound, plus the
		// clean-up grace of a few seconds, as a failure.
		if strings.Contains(r.Reason, "panic") || r.Duration > bound+10*time.Second {
			t.Errorf("%s: %s after %v: %s", r.Case, r.Status, r.Duration, r.Reason)
		}
	}
	if want := caseNames(conform.Cases()); !slices.Equal(names, want) {
		t.Errorf("results for %q, want every case %q", names, want)
	}
	wantCode := 0
	if rep.Summary.Fail > 0 {
		wantCode = 1
	}
	if code != wantCode {
		t.Errorf("exit %d with %d failures, want %d", code, rep.Summary.Fail, wantCode)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc conform.JUnitSuites
	if err := xml.Unmarshal(b, &doc); err != nil || doc.Tests != len(rep.Results) || doc.Failures != rep.Summary.Fail || doc.Skipped != rep.Summary.Skip {
		t.Errorf("junit: %v, tests %d failures %d skipped %d; want %d %d %d", err, doc.Tests, doc.Failures, doc.Skipped, len(rep.Results), rep.Summary.Fail, rep.Summary.Skip)
	}
	t.Logf("against %s: %s", rep.Broker.Server, rep.Summary)
}

// checkJMSSuite checks the openwire/jms/suite result of a report: when
// java and the jars are here, ActiveMQ's JMS client ran every Java case
// of conform/jms/Cases.java (counted from its r.add lines), each passed
// but Failover, which skips for want of --restart-cmd, and the report
// says which client ran; without them the case skips with the install
// hint.
func checkJMSSuite(t *testing.T, rep conform.Report, where string) {
	t.Helper()
	i := slices.IndexFunc(rep.Results, func(r conform.Result) bool { return r.Case == "openwire/jms/suite" })
	if i < 0 {
		t.Fatalf("%s: no openwire/jms/suite result", where)
	}
	r := rep.Results[i]
	if _, err := conform.JMSClasspath(); err != nil {
		if r.Status != conform.Skip || !strings.Contains(r.Reason, conform.JMSInstallHint) {
			t.Errorf("%s: without the JMS client: %s %q, want a skip with the install hint", where, r.Status, r.Reason)
		}
		return
	}
	src, err := os.ReadFile(filepath.Join("..", "..", "conform", "jms", "Cases.java"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Count(string(src), "r.add(\"")
	var client bool
	var ran []string
	for _, o := range r.Observations {
		switch o.Kind {
		case "client":
			client = client || strings.Contains(o.Text, "activemq-client.jar")
		case "jms":
			verdict, rest, _ := strings.Cut(o.Text, " ")
			name, reason, _ := strings.Cut(rest, " ")
			ran = append(ran, name)
			if verdict != "PASS" && !(name == "Failover" && verdict == "SKIP" && strings.Contains(reason, "--restart-cmd")) {
				t.Errorf("%s: JMS case %s: %s %s", where, name, verdict, reason)
			}
		}
	}
	if r.Status != conform.Pass || !client || len(ran) != want || want < 50 {
		t.Errorf("%s: openwire/jms/suite %s %q, client named %v, %d Java cases reported, want %d", where, r.Status, r.Reason, client, len(ran), want)
	}
	t.Logf("%s: ActiveMQ's JMS client ran %d Java cases", where, len(ran))
}

// errRabbitMQPorts: the node found one of its ports taken.
var errRabbitMQPorts = errors.New("a port was taken")

// startRabbitMQ starts a private RabbitMQ node with its files under base
// and returns its STOMP, MQTT and AMQP ports once all three listen; the
// node is stopped by t's clean-up.
func startRabbitMQ(t *testing.T, base string) (stompPort, mqttPort, amqpPort int, err error) {
	t.Helper()
	ports := freeTCPPorts(t, 5)
	amqpPort, stompPort, mqttPort, distPort, epmdPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"mnesia", "log", "home"} {
		os.Mkdir(filepath.Join(base, d), 0o755)
	}
	os.WriteFile(filepath.Join(base, "enabled_plugins"), []byte("[rabbitmq_stomp,rabbitmq_mqtt,rabbitmq_amqp1_0].\n"), 0o644)
	os.WriteFile(filepath.Join(base, "rabbitmq.conf"), fmt.Appendf(nil,
		"listeners.tcp.default = 127.0.0.1:%d\nstomp.listeners.tcp.1 = 127.0.0.1:%d\nmqtt.listeners.tcp.1 = 127.0.0.1:%d\n",
		amqpPort, stompPort, mqttPort), 0o644)
	plugins, _ := filepath.Glob("/usr/lib/rabbitmq/lib/rabbitmq_server-*/plugins")
	logf, err := os.Create(filepath.Join(base, "server.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(rabbitMQServer)
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(base, "home"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(base, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(base, "log"),
		"RABBITMQ_NODENAME=conform"+strconv.Itoa(amqpPort)+"@localhost",
		"RABBITMQ_DIST_PORT="+strconv.Itoa(distPort),
		"ERL_EPMD_PORT="+strconv.Itoa(epmdPort),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(base, "enabled_plugins"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(base, "rabbitmq"),
		"RABBITMQ_PID_FILE="+filepath.Join(base, "pid"),
		"RABBITMQ_PLUGINS_DIR="+strings.Join(append([]string{"/usr/lib/rabbitmq/plugins"}, plugins...), ":"))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		// The node started its own epmd on epmdPort, which outlives it.
		stop := exec.Command("epmd", "-kill")
		stop.Env = append(os.Environ(), "ERL_EPMD_PORT="+strconv.Itoa(epmdPort))
		stop.Run()
	})
	deadline := time.Now().Add(3 * time.Minute)
	for _, port := range []int{stompPort, mqttPort, amqpPort} {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-exited:
				log, _ := os.ReadFile(filepath.Join(base, "server.out"))
				if strings.Contains(string(log), "dist_port") {
					return 0, 0, 0, fmt.Errorf("%w: RabbitMQ exited during start-up:\n%s", errRabbitMQPorts, log)
				}
				return 0, 0, 0, fmt.Errorf("RabbitMQ exited during start-up:\n%s", log)
			case <-time.After(200 * time.Millisecond): // poll interval
			}
			if time.Now().After(deadline) {
				return 0, 0, 0, fmt.Errorf("RabbitMQ not listening on %s after 3 minutes", addr)
			}
		}
	}
	return stompPort, mqttPort, amqpPort, nil
}

// freeTCPPorts returns n distinct free loopback ports: all are held open
// until every one is picked, so none is handed out twice.
func freeTCPPorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// failedCases lists the unexpected differences and failed cases of a
// differential report (JSON), with their reasons, for a failing run's
// message; the report clipped when it does not parse.
func failedCases(out string) string {
	var rep conform.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return clip(out)
	}
	var b strings.Builder
	for _, d := range rep.Differences {
		if !d.Expected {
			fmt.Fprintf(&b, "unexpected difference %s: wharf %s %q, reference %s %q\n", d.Case, d.A.Status, d.A.Reason, d.B.Status, d.B.Reason)
		}
	}
	for _, r := range rep.Results {
		if r.Status == conform.Fail {
			fmt.Fprintf(&b, "wharf failed %s: %s\n", r.Case, r.Reason)
		}
	}
	if rep.Against != nil {
		for _, r := range rep.Against.Results {
			if r.Status == conform.Fail {
				fmt.Fprintf(&b, "reference failed %s: %s\n", r.Case, r.Reason)
			}
		}
	}
	return b.String()
}
