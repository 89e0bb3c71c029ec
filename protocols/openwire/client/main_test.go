package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"wharf/internal/activemq"
)

// The tests run against a real OpenWire broker: by default Debian's
// ActiveMQ 5.17 (package "activemq"), started once for the package by
// TestMain; with WHARF_OPENWIRE_ADDR=host:port, against that broker
// instead (Wharf's OpenWire listener, or an ActiveMQ started elsewhere).
const envAddr = "WHARF_OPENWIRE_ADDR"

const amqHome = activemq.Home

var (
	// brokerAddr is the broker every test dials.
	brokerAddr string
	// skipReason is set when no broker can be had; tests skip with it.
	skipReason string
	// external is true when WHARF_OPENWIRE_ADDR names the broker.
	external bool
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if a := os.Getenv(envAddr); a != "" {
		brokerAddr, external = a, true
		return m.Run()
	}
	if _, err := os.Stat(filepath.Join(amqHome, "bin", "activemq.jar")); err != nil {
		skipReason = "ActiveMQ 5.17 not installed (apt-get install -y activemq), and " + envAddr + " not set"
		return m.Run()
	}
	if _, err := exec.LookPath("java"); err != nil {
		skipReason = "java not found (apt-get install -y default-jre-headless), and " + envAddr + " not set"
		return m.Run()
	}
	amq, err := startActiveMQ()
	if err != nil {
		fmt.Fprintf(os.Stderr, "start ActiveMQ: %v\n", err)
		if amq != nil {
			amq.stop(true)
		}
		return 1
	}
	brokerAddr = amq.addr
	code := m.Run()
	amq.stop(code != 0)
	return code
}

// activeMQ is a standalone ActiveMQ process with its files in dir.
type activeMQ struct {
	addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startActiveMQ starts ActiveMQ as conformance/activemq/run.sh does: in the
// foreground, with Debian's JVM flags, config and data in a temporary
// directory, one OpenWire connector on loopback. The port is picked by
// listening on :0 and closing, which races only with other processes
// (acceptable for an external broker). It waits, bounded, until the
// connector accepts connections.
func startActiveMQ() (*activeMQ, error) {
	dir, err := os.MkdirTemp("", "wharf-owclient-amq-")
	if err != nil {
		return nil, err
	}
	a := &activeMQ{dir: dir, exited: make(chan struct{})}
	for _, sub := range []string{"conf", "data", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			return a, err
		}
	}
	for _, f := range []string{"activemq.xml", "log4j.properties"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			return a, err
		}
		if err := os.WriteFile(filepath.Join(dir, "conf", f), b, 0o644); err != nil {
			return a, err
		}
	}
	port, err := freePort()
	if err != nil {
		return a, err
	}
	a.addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logf, err := os.Create(filepath.Join(dir, "activemq.log"))
	if err != nil {
		return a, err
	}
	defer logf.Close()
	a.cmd = activemq.Command(dir, "wharf.openwire.port="+strconv.Itoa(port))
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	setDeathSignal(a.cmd)
	if err := a.cmd.Start(); err != nil {
		return a, err
	}
	go func() {
		a.cmd.Wait()
		close(a.exited)
	}()
	deadline := time.Now().Add(90 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", a.addr, time.Second)
		if err == nil {
			c.Close()
			return a, nil
		}
		select {
		case <-a.exited:
			return a, fmt.Errorf("ActiveMQ exited during startup (%v); log: %s", a.cmd.ProcessState, a.logPath())
		case <-time.After(100 * time.Millisecond): // poll interval
		}
		if time.Now().After(deadline) {
			return a, fmt.Errorf("ActiveMQ not listening on %s after 90s; log: %s", a.addr, a.logPath())
		}
	}
}

func (a *activeMQ) logPath() string { return filepath.Join(a.dir, "activemq.log") }

// stop terminates the broker (SIGTERM, then SIGKILL after 20s) and removes
// its directory, unless keep is set (a failed run keeps the log).
func (a *activeMQ) stop(keep bool) {
	if a.cmd != nil && a.cmd.Process != nil {
		a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.exited:
		case <-time.After(20 * time.Second):
			a.cmd.Process.Kill()
			<-a.exited
		}
	}
	if keep {
		fmt.Fprintf(os.Stderr, "ActiveMQ files kept in %s\n", a.dir)
		return
	}
	os.RemoveAll(a.dir)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errIsTimeout reports whether err is a context deadline (a Receive that
// found nothing).
func errIsTimeout(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
