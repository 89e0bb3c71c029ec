package conform

import (
	"bufio"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// jmsSources is the Java JMS suite (package wharf.conformance): the runner
// Conformance, its cases (Cases.java) and what they use. It is the only
// copy; conformance/ compiles it, with its own standalone Java programs,
// through CompileJMS.
//
//go:embed jms/*.java
var jmsSources embed.FS

// JMSJarDir is where Debian's libactivemq-java and its dependencies put
// their jars.
const JMSJarDir = "/usr/share/java"

// JMSJars is ActiveMQ 5.17's JMS client and what it needs at run time, as
// Debian packages them: the client, the JMS 1.1 API (Debian builds 5.17
// against JMS 1.1), hawtbuf (OpenWire buffers), slf4j with its no-op
// binding, and the J2EE management API the client's statistics implement.
var JMSJars = []string{
	"activemq-client.jar",
	"geronimo-jms_1.1_spec.jar",
	"hawtbuf.jar",
	"slf4j-api.jar",
	"slf4j-nop.jar",
	"geronimo-j2ee-management-1.1-spec.jar",
}

// JMSInstallHint is how to get java, javac and the jars on Debian.
const JMSInstallHint = "apt-get install -y default-jdk-headless libactivemq-java"

// ErrNoJMS is returned when java, javac or a client jar is missing.
var ErrNoJMS = errors.New("ActiveMQ's JMS client is not available")

// JMSClasspath returns the client jars of JMSJarDir joined as a class
// path, or an error wrapping ErrNoJMS that names what is missing and how
// to install it.
func JMSClasspath() (string, error) {
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("%w: %s not found (%s)", ErrNoJMS, tool, JMSInstallHint)
		}
	}
	var paths []string
	for _, j := range JMSJars {
		p := filepath.Join(JMSJarDir, j)
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s missing (%s)", ErrNoJMS, p, JMSInstallHint)
		}
		paths = append(paths, p)
	}
	return strings.Join(paths, string(os.PathListSeparator)), nil
}

// CompileJMS compiles the embedded JMS suite, plus the extra .java files
// given (of the same package), with javac against the class path cp into a
// directory under os.TempDir named by a hash of all sources and the class
// path, and returns that directory. It reuses the directory while nothing
// changes; concurrent processes each compile into their own temporary
// directory and the first rename wins.
func CompileJMS(cp string, extra ...string) (string, error) {
	type src struct {
		name string
		body []byte
	}
	var srcs []src
	ents, err := fs.ReadDir(jmsSources, "jms")
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		b, err := jmsSources.ReadFile("jms/" + e.Name())
		if err != nil {
			return "", err
		}
		srcs = append(srcs, src{e.Name(), b})
	}
	extra = slices.Clone(extra)
	slices.Sort(extra)
	for _, f := range extra {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		srcs = append(srcs, src{filepath.Base(f), b})
	}
	h := sha256.New()
	io.WriteString(h, cp+"\x00")
	for _, s := range srcs {
		io.WriteString(h, s.name+"\x00")
		h.Write(s.body)
		h.Write([]byte{0})
	}
	dir := filepath.Join(os.TempDir(), "wharf-jms-"+hex.EncodeToString(h.Sum(nil))[:16])
	main := filepath.Join(dir, "wharf", "conformance", "Conformance.class")
	if _, err := os.Stat(main); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "wharf-jms-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	srcDir := filepath.Join(tmp, "src")
	out := filepath.Join(tmp, "classes")
	if err := os.MkdirAll(srcDir, 0o755); err != nil {
		return "", err
	}
	args := []string{"-encoding", "UTF-8", "-d", out, "-cp", cp}
	for _, s := range srcs {
		p := filepath.Join(srcDir, s.name)
		if err := os.WriteFile(p, s.body, 0o644); err != nil {
			return "", err
		}
		args = append(args, p)
	}
	if b, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("javac: %v\n%s", err, b)
	}
	if err := os.Rename(out, dir); err != nil {
		if _, statErr := os.Stat(main); statErr != nil {
			return "", fmt.Errorf("cache compiled classes in %s: %v", dir, err)
		}
	}
	return dir, nil
}

// jmsCaseTimeout bounds each Java case (the runner's --timeout, seconds).
const jmsCaseTimeout = "60"

func init() {
	register(Case{
		Name:  "openwire/jms/suite",
		Needs: []string{OpenWire},
		Pins: "ActiveMQ 5.17's own JMS client (activemq-client.jar) works against the broker as against ActiveMQ: " +
			"the 58 cases of conform/jms/Cases.java (message types, headers, acks, transactions, XA, durable and temporary " +
			"destinations, selectors, groups, DLQ, prefetch, advisories, failover, STOMP/MQTT interop), one subtest each",
		Source: "JMS 1.1; org.apache.activemq.ActiveMQConnection, ActiveMQSession, ActiveMQMessageConsumer (activemq-client 5.17)",
		Config: "the DLQ and redelivery policy of the suite's activemq.xml (RedeliveryToDLQ)",
		Deviation: "with STOMP or MQTT URLs, MixedJMSToSTOMPNonBMP and MixedSTOMPToJMSNonBMP see Wharf re-encode text outside " +
			"the BMP as UTF-8 (ActiveMQ passes modified UTF-8 through), and MixedJMSToMQTT sees persistent messages at QoS 1 and " +
			"non-persistent at QoS 0 (ActiveMQ: the other way round)",
		// One JVM runs every Java case: a JVM and class loading per case
		// would cost more than most cases take.
		Timeout: 10 * time.Minute,
		Run:     jmsSuite,
	})
}

// jmsSuite runs the Java runner against the target's OpenWire connector
// and turns each of its PASS/FAIL/SKIP lines into a subtest named after
// the Java case. Its Failover case restarts the broker: it runs only with
// a restart command that brings the broker back on the same address.
func jmsSuite(t *T) {
	cp, err := JMSClasspath()
	if err != nil {
		t.Skipf("%v", err)
	}
	classes, err := CompileJMS(cp)
	if err != nil {
		t.Fatalf("compile the JMS suite: %v", err)
	}
	client := filepath.Join(JMSJarDir, JMSJars[0])
	if v, err := os.Readlink(client); err == nil {
		client += " -> " + v
	}
	t.Observe("client", "ActiveMQ JMS client %s", client)
	url := "tcp://" + t.Addr(OpenWire)
	args := []string{"-cp", classes + string(os.PathListSeparator) + cp, "wharf.conformance.Conformance",
		"--url", url, "--timeout", jmsCaseTimeout}
	tg := t.run.target
	// An in-process Restarter may bring the broker back on other ports,
	// which a failover URL cannot follow.
	canRestart := tg.RestartCmd != "" && tg.Restarter == nil
	if canRestart {
		args = append(args, "--failover-url", "failover:("+url+")?initialReconnectDelay=20&maxReconnectDelay=200&useExponentialBackOff=false&timeout=20000")
	}
	if a := t.Addr(STOMP); a != "" {
		args = append(args, "--stomp", a)
	}
	if a := t.Addr(MQTT); a != "" {
		args = append(args, "--mqtt", a)
	}
	// The Java cases with a documented difference (the mixed STOMP and
	// MQTT ones) assert ActiveMQ's behaviour with --activemq, Wharf's
	// without.
	activemq := !t.Wharf()
	if t.Addr(STOMP) != "" || t.Addr(MQTT) != "" {
		activemq = t.ActiveMQBehaviour()
	}
	if activemq {
		args = append(args, "--activemq")
	}
	t.Observe("runner", "java wharf.conformance.Conformance %s", strings.Join(args[3:], " "))
	cmd := exec.CommandContext(t.Context(), "java", args...)
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 64 << 10}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start java: %v", err)
	}
	// Past the case's bound, the runner's clean-up ends the JVM; the
	// case goroutine's Wait then returns.
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
	})
	failed, results := 0, 0
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		verdict, rest, _ := strings.Cut(line, " ")
		name, reason, _ := strings.Cut(rest, " ")
		switch verdict {
		case "RESTART":
			t.Restart()
			if _, err := io.WriteString(stdin, "RESTARTED\n"); err != nil {
				t.Errorf("answer RESTART: %v", err)
			}
		case "PASS", "FAIL", "SKIP":
			results++
			if verdict == "FAIL" {
				failed++
			}
			if name == "Failover" && verdict == "SKIP" && !canRestart {
				reason = "needs --restart-cmd (" + reason + ")"
			}
			t.Observe("jms", "%s", strings.TrimSpace(verdict+" "+name+" "+reason))
			t.Run(name, func(t *T) {
				switch verdict {
				case "FAIL":
					t.Errorf("%s", reason)
				case "SKIP":
					t.Skipf("%s", reason)
				}
			})
		default:
			t.Logf("java: %s", line)
		}
	}
	stdin.Close()
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case t.Context().Err() != nil:
		t.Errorf("java runner stopped at the case's time bound after %d results", results)
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1 && failed > 0:
		// The runner's status for "some case failed", already reported.
	default:
		t.Errorf("java runner: %v (after %d results, %d failed); stderr: %s", err, results, failed, stderr.String())
	}
	if results == 0 {
		t.Errorf("java runner reported no case")
	}
	t.Logf("ActiveMQ JMS client: %d cases, %d failed", results, failed)
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		q := p
		if len(q) > l.n {
			q = q[:l.n]
		}
		l.w.Write(q)
		l.n -= len(q)
	}
	return len(p), nil
}
