package conformance

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/conform"
	"wharf/engine/brokertest"
	"wharf/engine/config"
)

// envOpenWireAddr points the JMS cases at an external broker's OpenWire
// connector ("host:port"); run.sh sets it to ActiveMQ 5.17's. The cases
// with a documented difference then assert ActiveMQ's behaviour, as the
// STOMP cases do when external.
const envOpenWireAddr = "WHARF_CONFORMANCE_OPENWIRE_ADDR"

// envMQTTAddr is the same external broker's MQTT connector ("host:port")
// for the mixed MQTT cases; run.sh sets it to ActiveMQ 5.17's.
const envMQTTAddr = "WHARF_CONFORMANCE_MQTT_ADDR"

// envJMSClasspath replaces the client jars found under jmsJarDir
// (a list separated by os.PathListSeparator).
const envJMSClasspath = "WHARF_CONFORMANCE_JMS_CLASSPATH"

// jmsSuiteTimeout bounds the whole Java run; each case has its own
// timeout inside the runner (jmsCaseTimeout).
const (
	jmsSuiteTimeout = 10 * time.Minute
	jmsCaseTimeout  = "60" // seconds
)

// TestConformanceJMS runs the Java programs of conformance/jms, ActiveMQ's
// own JMS client, against Wharf's OpenWire connector (or the external
// broker of WHARF_CONFORMANCE_OPENWIRE_ADDR), one subtest per case. With
// -run TestConformanceJMS/<pattern> only the matching cases run.
func TestConformanceJMS(t *testing.T) {
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)

	// Every connection goes through a proxy, whose address stays the same
	// when the in-process broker restarts on new ports (Failover case).
	owProxy, stompProxy, mqttProxy := newRestartProxy(t), newRestartProxy(t), newRestartProxy(t)
	var (
		restart  func() string
		activemq bool
		hasMQTT  bool
	)
	if addr := os.Getenv(envOpenWireAddr); addr != "" {
		activemq = true
		owProxy.setTarget(addr)
		stompProxy.setTarget(os.Getenv(envSTOMPAddr))
		mqttProxy.setTarget(os.Getenv(envMQTTAddr))
		hasMQTT = os.Getenv(envMQTTAddr) != ""
		// An external broker cannot be restarted from here: the proxy cuts
		// every OpenWire connection instead, which the failover transport
		// sees as the same network failure.
		restart = func() string {
			owProxy.drop()
			return "DROPPED"
		}
	} else {
		b := startJMSBroker(t)
		if b.Addr("openwire") == nil {
			t.Skip("the OpenWire connector is not in this build: cmd/wharf/wiring registers no listener for scheme \"tcp\"")
		}
		hasMQTT = b.MQTTAddr() != ""
		retarget := func() {
			owProxy.setTarget(b.Addr("openwire").String())
			stompProxy.setTarget(b.STOMPAddr())
			mqttProxy.setTarget(b.MQTTAddr())
		}
		retarget()
		restart = func() string {
			for _, p := range []*restartProxy{owProxy, stompProxy, mqttProxy} {
				p.setTarget("")
				p.drop()
			}
			b.Restart()
			retarget()
			return "RESTARTED"
		}
	}
	url := "tcp://" + owProxy.addr()
	failover := "failover:(" + url + ")?initialReconnectDelay=20&maxReconnectDelay=200&useExponentialBackOff=false&timeout=20000"

	args := []string{"-cp", classes + string(os.PathListSeparator) + cp, "wharf.conformance.Conformance",
		"--url", url, "--failover-url", failover, "--timeout", jmsCaseTimeout}
	if activemq && os.Getenv(envSTOMPAddr) == "" {
		t.Logf("%s not set: the mixed STOMP cases skip", envSTOMPAddr)
	} else {
		args = append(args, "--stomp", stompProxy.addr())
	}
	switch {
	case hasMQTT:
		args = append(args, "--mqtt", mqttProxy.addr())
	case activemq:
		t.Logf("%s not set: the mixed MQTT cases skip", envMQTTAddr)
	default:
		t.Logf("activemq/activemq.xml has no MQTT connector this build serves: the mixed MQTT cases skip")
	}
	if activemq {
		args = append(args, "--activemq")
	}
	if pat := jmsCaseFilter(); pat != "" {
		args = append(args, "--run", pat)
	}
	runJMS(t, args, restart)
}

// startJMSBroker starts an in-process Wharf with activemq/activemq.xml, as
// startBroker does, but regardless of the STOMP suite's external setting,
// and on the KahaDB store that file configures (in a temporary directory),
// as ActiveMQ runs the same suite: the Failover case's restart then closes
// the store and recovers what it sent from disk.
func startJMSBroker(t *testing.T) *brokertest.Broker {
	t.Helper()
	loaded := loadActiveMQConfig(t)
	return brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		*c = *loaded
	}), brokertest.WithKahaDB())
}

// jmsCaseFilter returns the part of -test.run after "TestConformanceJMS/",
// so that only the selected cases start (the runner matches case names as
// go test matches subtest names).
func jmsCaseFilter() string {
	f := flag.Lookup("test.run")
	if f == nil {
		return ""
	}
	parts := strings.SplitN(f.Value.String(), "/", 2)
	if len(parts) < 2 {
		return ""
	}
	return parts[1]
}

// runJMS runs the Java runner and turns each of its result lines into a
// subtest; a RESTART line is answered with restart's result on stdin.
func runJMS(t *testing.T, args []string, restart func() string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jmsSuiteTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
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
	failed, results := 0, 0
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		verdict, rest, _ := strings.Cut(line, " ")
		name, reason, _ := strings.Cut(rest, " ")
		switch verdict {
		case "RESTART":
			how := restart()
			t.Logf("%s: broker %s", name, strings.ToLower(how))
			if _, err := io.WriteString(stdin, how+"\n"); err != nil {
				t.Errorf("answer RESTART: %v", err)
			}
		case "PASS", "FAIL", "SKIP":
			results++
			if verdict == "FAIL" {
				failed++
			}
			t.Run(name, func(t *testing.T) {
				switch verdict {
				case "FAIL":
					t.Error(reason)
				case "SKIP":
					t.Skip(reason)
				}
			})
		default:
			t.Logf("java: %s", line)
		}
	}
	stdin.Close()
	err = cmd.Wait()
	if ctx.Err() != nil {
		t.Errorf("java runner killed after %v", jmsSuiteTimeout)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1 && failed > 0:
		// The runner's status for "some case failed", already reported.
	default:
		t.Errorf("java runner: %v (after %d results, %d failed); stderr:\n%s", err, results, failed, tail(stderr.String(), 4000))
	}
	if results == 0 && err == nil {
		t.Errorf("java runner reported no case (filter %q)", jmsCaseFilter())
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// jmsClasspath returns the client jars (conform.JMSClasspath, or
// WHARF_CONFORMANCE_JMS_CLASSPATH), skipping the test with an install
// hint when java, javac or a jar is missing.
func jmsClasspath(t *testing.T) string {
	t.Helper()
	if cp := os.Getenv(envJMSClasspath); cp != "" {
		for _, tool := range []string{"java", "javac"} {
			if _, err := exec.LookPath(tool); err != nil {
				t.Skipf("%s not found (%s)", tool, conform.JMSInstallHint)
			}
		}
		return cp
	}
	cp, err := conform.JMSClasspath()
	if err != nil {
		t.Skipf("%v (or set %s)", err, envJMSClasspath)
	}
	return cp
}

// jmsPrograms is where the standalone Java programs of the tests live
// (AckClient, XaClient, SecurityMatrix, ...); the JMS suite they are
// compiled with is conform/jms, embedded in the conform package.
const jmsPrograms = "jms/src"

// compileJMS compiles the JMS suite of the conform package together with
// the programs under jmsPrograms (conform.CompileJMS caches the classes
// by a hash of the sources) and returns the class directory.
func compileJMS(t *testing.T, cp string) string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(jmsPrograms, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".java") {
			files = append(files, p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("java sources under %s: %v (%d files)", jmsPrograms, err, len(files))
	}
	dir, err := conform.CompileJMS(cp, files...)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// restartProxy forwards TCP connections to a target it can change, and
// cuts them all on demand. The failover case connects through it, so its
// URL stays valid when the broker restarts on another port.
type restartProxy struct {
	ln net.Listener

	mu     sync.Mutex
	target string // "" refuses new connections
	conns  map[net.Conn]struct{}
}

func newRestartProxy(t *testing.T) *restartProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &restartProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		p.drop()
	})
	return p
}

func (p *restartProxy) addr() string { return p.ln.Addr().String() }

func (p *restartProxy) setTarget(addr string) {
	p.mu.Lock()
	p.target = addr
	p.mu.Unlock()
}

// drop closes every forwarded connection.
func (p *restartProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *restartProxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.target == "" {
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *restartProxy) forward(client net.Conn) {
	p.mu.Lock()
	target := p.target
	p.mu.Unlock()
	if target == "" {
		client.Close()
		return
	}
	server, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client, server) {
		client.Close()
		server.Close()
		return
	}
	go func() {
		io.Copy(server, client)
		p.untrack(client, server)
	}()
	io.Copy(client, server)
	p.untrack(client, server)
}

func (p *restartProxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}
