// Package wharfproc builds the wharf binary and runs it as a child process
// that a test can wait for, SIGKILL and restart: what the crash tests need
// from a real process (a SIGKILL leaves the store exactly as the kernel
// has it; an in-process broker keeps its files open and its goroutines
// running). It is used by the kill torture (torture/); it takes no
// testing.T, so every failure is an error for the caller to report.
package wharfproc

import (
	"bufio"
	"context"
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
	"time"
)

// Build runs `go build ./cmd/wharf` in the module root moduleRoot and
// writes the binary into dir.
func Build(ctx context.Context, moduleRoot, dir string) (string, error) {
	p := filepath.Join(dir, "wharf")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", p, "./cmd/wharf")
	cmd.Dir = moduleRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/wharf: %v\n%s", err, out)
	}
	return p, nil
}

// Proc is a running `wharf run`, its output kept line by line.
type Proc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	lines  []string
	grew   chan struct{} // closed and replaced on every new line
	exited chan struct{} // closed once the process has been waited for
	err    error         // Wait's result, set before exited is closed
}

// Started is the log line wharf prints once every connector listens.
var Started = regexp.MustCompile(`"msg":"broker started"`)

// Start runs bin with args (typically "run", "--log-format", "json",
// "--config", path) and waits until it logs a line matching Started or
// timeout passes; on failure the process is killed and the error carries
// the end of its log.
func Start(bin string, timeout time.Duration, args ...string) (*Proc, error) {
	cmd := exec.Command(bin, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	p := &Proc{cmd: cmd, grew: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.grew)
			p.grew = make(chan struct{})
			p.mu.Unlock()
		}
		io.Copy(io.Discard, pr)
	}()
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.exited)
	}()
	if err := p.WaitLine(Started, timeout); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

// WaitLine waits until a line matching re has been logged.
func (p *Proc) WaitLine(re *regexp.Regexp, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	seen := 0
	for {
		p.mu.Lock()
		lines, grew := p.lines, p.grew
		p.mu.Unlock()
		for ; seen < len(lines); seen++ {
			if re.MatchString(lines[seen]) {
				return nil
			}
		}
		select {
		case <-grew:
		case <-p.exited:
			p.mu.Lock()
			n := len(p.lines)
			p.mu.Unlock()
			if n > seen {
				continue // lines still coming from the pipe
			}
			return fmt.Errorf("wharf exited (%v) before logging %q; log:\n%s", p.err, re, p.Tail(40))
		case <-deadline.C:
			return fmt.Errorf("wharf did not log %q within %v; log:\n%s", re, timeout, p.Tail(40))
		}
	}
}

// Tail is the last n lines of the log.
func (p *Proc) Tail(n int) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := p.lines
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Lines is every line logged so far.
func (p *Proc) Lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.lines...)
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *Proc) Kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// Stop sends SIGTERM and waits up to timeout for a clean exit (status 0);
// past it the process is killed and an error returned.
func (p *Proc) Stop(timeout time.Duration) error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.Kill()
		return fmt.Errorf("wharf did not stop within %v of SIGTERM; log:\n%s", timeout, p.Tail(40))
	}
	if p.err != nil {
		return fmt.Errorf("wharf exited with %v after SIGTERM; log:\n%s", p.err, p.Tail(40))
	}
	return nil
}

// Exited is closed once the process has ended.
func (p *Proc) Exited() <-chan struct{} { return p.exited }
