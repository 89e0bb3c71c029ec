// Package mosquitto starts Eclipse Mosquitto, the reference MQTT broker of
// the bench tests and of bench/compare, as a child process listening on a
// loopback port, with its configuration and log in a directory of the
// caller's.
package mosquitto

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// InstallHint is what makes Start work on Debian.
const InstallHint = "apt-get install -y mosquitto"

// ErrNotInstalled is Start's error when no mosquitto binary is found.
var ErrNotInstalled = errors.New("mosquitto: not installed (" + InstallHint + ")")

// Debian installs the broker in /usr/sbin, which is not on every PATH.
const debianBinary = "/usr/sbin/mosquitto"

// startTimeout bounds the wait for the listener.
const startTimeout = 15 * time.Second

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 5 * time.Second

// Binary returns the path of the mosquitto binary, or ErrNotInstalled.
func Binary() (string, error) {
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p, nil
	}
	if st, err := os.Stat(debianBinary); err == nil && !st.IsDir() {
		return debianBinary, nil
	}
	return "", ErrNotInstalled
}

// Version is the first line of `mosquitto -h` ("mosquitto version
// 2.0.11"), or "" when it cannot be run.
func Version() string {
	bin, err := Binary()
	if err != nil {
		return ""
	}
	// -h exits with status 3; only the text matters.
	out, _ := exec.Command(bin, "-h").Output()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// Broker is a running mosquitto.
type Broker struct {
	// Addr is host:port of its listener on 127.0.0.1.
	Addr string
	// PID is its process id, for sampling RSS and CPU.
	PID int
	// Log is the path of its log file.
	Log string

	cmd    *exec.Cmd
	exited chan struct{}
}

// Start starts mosquitto with its configuration and log in dir, listening
// on a free port of 127.0.0.1, anonymous access allowed and no
// persistence file; extra lines are appended to the configuration. It
// returns once the listener accepts connections. The port is found by
// binding port 0 and closing it, which can race with another process (an
// external broker cannot be handed a listening socket); a start that loses
// the race is retried on another port.
func Start(ctx context.Context, dir string, extra ...string) (*Broker, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := range 3 {
		b, err := start(ctx, bin, dir, attempt, extra)
		if err == nil {
			return b, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	return nil, lastErr
}

var errPortTaken = errors.New("mosquitto: port taken")

func start(ctx context.Context, bin, dir string, attempt int, extra []string) (*Broker, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	conf := filepath.Join(dir, fmt.Sprintf("mosquitto-%d.conf", attempt))
	logPath := filepath.Join(dir, fmt.Sprintf("mosquitto-%d.log", attempt))
	lines := append([]string{
		"# Written by wharf's bench/internal/mosquitto.",
		"listener " + strconv.Itoa(port) + " 127.0.0.1",
		"allow_anonymous true",
		"persistence false",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
	}, extra...)
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(bin, "-c", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("mosquitto: start %s: %w", bin, err)
	}
	b := &Broker{Addr: addr, PID: cmd.Process.Pid, Log: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(b.exited)
	}()
	deadline := time.Now().Add(startTimeout)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return b, nil
		}
		select {
		case <-b.exited:
			log, _ := os.ReadFile(logPath)
			if strings.Contains(string(log), "Address already in use") {
				return nil, fmt.Errorf("%w: %s", errPortTaken, addr)
			}
			return nil, fmt.Errorf("mosquitto exited during startup (%v); log %s:\n%s", cmd.ProcessState, logPath, log)
		case <-ctx.Done():
			b.Stop()
			return nil, ctx.Err()
		case <-poll.C:
		}
		if time.Now().After(deadline) {
			b.Stop()
			return nil, fmt.Errorf("mosquitto not listening on %s after %s; log %s", addr, startTimeout, logPath)
		}
	}
}

// Stop terminates the broker (SIGTERM, SIGKILL after stopTimeout) and
// waits for it. Safe to call more than once.
func (b *Broker) Stop() error {
	select {
	case <-b.exited:
		return nil
	default:
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopTimeout)
	defer t.Stop()
	select {
	case <-b.exited:
		return nil
	case <-t.C:
		b.cmd.Process.Kill()
		<-b.exited
		return fmt.Errorf("mosquitto pid %d did not stop on SIGTERM within %s; killed", b.PID, stopTimeout)
	}
}

// Exited is closed when the process has ended.
func (b *Broker) Exited() <-chan struct{} { return b.exited }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
