//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// lockHelperEnv makes the test binary act as another process taking the
// lock the way ActiveMQ does: POSIX locks belong to a process, so only a
// second process can show that they exclude each other.
const lockHelperEnv = "WHARF_JOURNAL_LOCK_HELPER"

// TestKahaDBJournalLockHelperProcess is the child process of the lock tests,
// not a test. With "hold:<file>" it locks the file as Java's
// FileChannel.tryLock(0, 8, false) does (fcntl F_SETLK, F_WRLCK on [0, 8)),
// prints "locked", and keeps the lock until its stdin closes; with
// "try:<file>" it makes one attempt and prints "acquired" or "busy"; with
// "wharf:<dir>" it takes the lock with Lock, as another Wharf would, prints
// "locked" and keeps it until its stdin closes.
func TestKahaDBJournalLockHelperProcess(t *testing.T) {
	spec := os.Getenv(lockHelperEnv)
	if spec == "" {
		t.Skip("child process of the lock tests")
	}
	mode, path, _ := strings.Cut(spec, ":")
	say := func(s string) { os.Stdout.WriteString(s + "\n") }
	if mode == "wharf" {
		if _, err := Lock(context.Background(), path, 0, nil); err != nil {
			say("error " + err.Error())
			os.Exit(1)
		}
		say("locked")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		say("error " + err.Error())
		os.Exit(1)
	}
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 8}
	err = syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
	switch {
	case err == nil && mode == "hold":
		say("locked")
		io.Copy(io.Discard, os.Stdin)
	case err == nil:
		say("acquired")
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES):
		say("busy")
	default:
		say("error " + err.Error())
	}
	os.Exit(0)
}

// lockHelper starts the helper; it returns the first line it printed and a
// function that closes its stdin and waits for it.
func lockHelper(t *testing.T, mode, path string) (string, func()) {
	t.Helper()
	line, stop, _ := lockHelperPid(t, mode, path)
	return line, stop
}

// lockHelperPid is lockHelper that also returns the helper's pid.
func lockHelperPid(t *testing.T, mode, path string) (string, func(), int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKahaDBJournalLockHelperProcess$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+mode+":"+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := false
	stop := func() {
		if !done {
			done = true
			stdin.Close()
			cmd.Wait()
		}
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("lock helper: %v (output %q)", err, line)
	}
	return strings.TrimSpace(line), stop, cmd.Process.Pid
}

func TestKahaDBJournalLockInProcess(t *testing.T) {
	dir := t.TempDir()
	lb := &logBuffer{}
	l1, err := Lock(context.Background(), dir, 10*time.Millisecond, lb.logger())
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	// Not reading the lock file here: opening and closing it in this
	// process would release the lock (see FileLock).
	// A second Lock in this process waits (POSIX locks alone would let it
	// through) until its context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	l2, err := Lock(ctx, dir, 10*time.Millisecond, lb.logger())
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) || l2 != nil {
		t.Fatalf("second Lock: %v, %v; want ErrLocked and DeadlineExceeded", l2, err)
	}
	if !strings.Contains(lb.String(), `msg="journal directory locked by another broker, waiting"`) {
		t.Fatalf("wait not logged:\n%s", lb)
	}
	// ...and its attempts did not drop the lock (closing any descriptor of
	// the file would have): another process still finds it held.
	if got, _ := lockHelper(t, "try", l1.Path()); got != "busy" {
		t.Fatalf("other process while locked: %q, want busy", got)
	}

	got := make(chan error, 1)
	go func() {
		l, err := Lock(context.Background(), dir, 5*time.Millisecond, nil)
		if err == nil {
			err = l.Unlock()
		}
		got <- err
	}()
	if err := l1.Unlock(); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("Lock after Unlock: %v", err)
	}
	if err := l1.Unlock(); !errors.Is(err, ErrUnlocked) {
		t.Fatalf("second Unlock: %v, want ErrUnlocked", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, LockFileName))
	if err != nil || len(data) < 8 {
		t.Fatalf("lock file after Unlock: %x, %v; want it kept, the time first (LockFile writes it)", data, err)
	}
	if pid, _, ok := parseHolderLine(string(data[8:])); !ok || pid != os.Getpid() {
		t.Fatalf("lock file after the time: %q; want the holder line with pid %d", data[8:], os.Getpid())
	}
	if ms := int64(binary.BigEndian.Uint64(data)); time.Since(time.UnixMilli(ms)).Abs() > time.Minute {
		t.Fatalf("lock file time %d ms is not now", ms)
	}
}

// TestKahaDBJournalLockOtherProcess: a lock held by another process, taken
// as ActiveMQ takes it, keeps us waiting until it is released.
func TestKahaDBJournalLockOtherProcess(t *testing.T) {
	dir := t.TempDir()
	got, release := lockHelper(t, "hold", filepath.Join(dir, LockFileName))
	if got != "locked" {
		t.Fatalf("helper: %q", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if l, err := Lock(ctx, dir, 10*time.Millisecond, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("Lock while another process holds it: %v, %v; want ErrLocked", l, err)
	}

	lb := &logBuffer{}
	res := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, err := Lock(ctx, dir, 10*time.Millisecond, lb.logger())
		if err == nil {
			err = l.Unlock()
		}
		res <- err
	}()
	// Release only once the second Lock is waiting: released earlier, it
	// takes the lock at its first attempt and logs no acquisition after
	// a wait.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(lb.String(), `msg="journal directory locked by another broker, waiting"`); {
		if time.Now().After(deadline) {
			t.Fatalf("second Lock never logged its wait:\n%s", lb)
		}
		time.Sleep(time.Millisecond)
	}
	release()
	if err := <-res; err != nil {
		t.Fatalf("Lock after the other process exited: %v", err)
	}
	if !strings.Contains(lb.String(), `msg="journal directory lock acquired"`) {
		t.Fatalf("acquisition after waiting not logged:\n%s", lb)
	}
}

// TestKahaDBJournalLockWaitNamesHolder: every attempt while another
// process holds the lock is logged at Info with that process: its pid (from
// the kernel) for a lock taken as ActiveMQ takes it, and also "wharf on
// <host>" for one taken by another Wharf.
func TestKahaDBJournalLockWaitNamesHolder(t *testing.T) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name, mode string
		want       func(pid int) string
	}{
		{"ActiveMQ-style lock", "hold", func(pid int) string { return fmt.Sprintf("holder=\"pid %d", pid) }},
		{"another Wharf", "wharf", func(pid int) string { return fmt.Sprintf("holder=\"pid %d, wharf on %s, locked at ", pid, host) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, LockFileName)
			if tc.mode == "wharf" {
				target = dir
			}
			got, _, pid := lockHelperPid(t, tc.mode, target)
			if got != "locked" {
				t.Fatalf("helper: %q", got)
			}
			lb := &logBuffer{}
			// Three attempts, then give up: the barrier is the third
			// attempt's log line, not a time.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res := make(chan error, 1)
			go func() {
				_, err := Lock(ctx, dir, time.Millisecond, lb.logger())
				res <- err
			}()
			deadline := time.Now().Add(10 * time.Second)
			for strings.Count(lb.String(), "journal directory locked by another broker, waiting") < 3 {
				if time.Now().After(deadline) {
					t.Fatalf("fewer than 3 attempts logged in 10 s:\n%s", lb)
				}
				time.Sleep(time.Millisecond) // polling a log with a deadline
			}
			cancel()
			if err := <-res; !errors.Is(err, ErrLocked) || !errors.Is(err, context.Canceled) {
				t.Fatalf("Lock: %v, want ErrLocked and Canceled", err)
			}
			var lines []string
			for _, line := range strings.Split(strings.TrimSpace(lb.String()), "\n") {
				if strings.Contains(line, "journal directory locked by another broker, waiting") {
					lines = append(lines, line)
				}
			}
			// ActiveMQ's slave-mode line, once, before the first attempt.
			first, _, _ := strings.Cut(lb.String(), "\n")
			if n := strings.Count(lb.String(), SlaveModeMessage); n != 1 || !strings.Contains(first, "level=INFO msg=\""+SlaveModeMessage) {
				t.Fatalf("slave-mode line logged %d times, want once, first:\n%s", n, lb)
			}
			for i, line := range lines[:3] {
				if !strings.Contains(line, "level=INFO") || !strings.Contains(line, tc.want(pid)) || !strings.Contains(line, fmt.Sprintf("attempt=%d", i+1)) {
					t.Fatalf("attempt %d logged as %q; want INFO, attempt=%d and %s", i+1, line, i+1, tc.want(pid))
				}
			}
		})
	}
}

// TestKahaDBJournalLockExcludesOtherProcess: while we hold the lock, another
// process (ActiveMQ's tryLock) cannot take it.
func TestKahaDBJournalLockExcludesOtherProcess(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(context.Background(), dir, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := lockHelper(t, "try", l.Path()); got != "busy" {
		t.Fatalf("other process while we hold the lock: %q, want busy", got)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if got, _ := lockHelper(t, "try", l.Path()); got != "acquired" {
		t.Fatalf("other process after Unlock: %q, want acquired", got)
	}
}

// TestKahaDBJournalLockCheck: the keep-alive check of a held lock passes
// while nothing touched the lock file, and reports ErrLockLost, as
// ActiveMQ's LockFile.keepAlive reports false, once the file was modified
// (another broker wrote its time stamp), deleted, replaced by a new file,
// or the lock released.
func TestKahaDBJournalLockCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		do   func(t *testing.T, l *FileLock)
		want string
	}{
		{"untouched", func(*testing.T, *FileLock) {}, ""},
		{"modified", func(t *testing.T, l *FileLock) {
			// A later mtime, as a write by another process leaves; not
			// written from this process (that would drop the lock).
			later := time.Now().Add(2 * time.Second)
			if err := os.Chtimes(l.Path(), later, later); err != nil {
				t.Fatal(err)
			}
		}, "has been modified"},
		{"deleted", func(t *testing.T, l *FileLock) {
			if err := os.Remove(l.Path()); err != nil {
				t.Fatal(err)
			}
		}, "does not exist"},
		{"replaced", func(t *testing.T, l *FileLock) {
			tmp := l.Path() + ".new"
			if err := os.WriteFile(tmp, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, l.Path()); err != nil {
				t.Fatal(err)
			}
		}, "replaced by another file"},
		{"unlocked", func(t *testing.T, l *FileLock) {
			if err := l.Unlock(); err != nil {
				t.Fatal(err)
			}
		}, "was unlocked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := Lock(context.Background(), t.TempDir(), 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Unlock()
			if err := l.Check(); err != nil {
				t.Fatalf("Check of a fresh lock: %v", err)
			}
			tc.do(t, l)
			err = l.Check()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Check: %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrLockLost) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want ErrLockLost saying %q", err, tc.want)
			}
		})
	}
}
