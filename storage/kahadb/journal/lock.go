package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultLockRetry is ActiveMQ's lockAcquireSleepInterval: 10 s.
const DefaultLockRetry = 10 * time.Second

// SlaveModeMessage is what Lock logs once when another broker holds the
// lock: ActiveMQ's SharedFileLocker's words, without the file name (a
// field of the line).
const SlaveModeMessage = "Database lock file is locked by another server. This broker is now in slave mode waiting a lock to be acquired"

// LockFileName is the lock file in a KahaDB directory.
const LockFileName = "lock"

// FileLock is a held directory lock. Its methods are safe from any
// goroutine.
//
// Nothing else in the process may open the lock file: POSIX record locks
// belong to the process, and closing any descriptor of the file (even one
// opened only to read it) silently releases the lock.
type FileLock struct {
	mu   sync.Mutex
	f    *os.File // nil once unlocked
	path string   // absolute path of the lock file: the key in held
	// mtime is the lock file's modification time once Lock wrote it:
	// Check reports the lock lost when it changes, as ActiveMQ's
	// LockFile.keepAlive does (hasBeenModified).
	mtime time.Time
}

// held lists the lock files this process has locked. POSIX record locks
// belong to the process, not the file descriptor: a second F_SETLK from the
// same process succeeds, and closing ANY descriptor of the file drops every
// lock the process has on it. So a second Lock in this process must be
// refused without even opening the file (ActiveMQ's LockFile keeps the same
// per-JVM registry in a system property). The mutex is held across
// open+lock+register so that a concurrent attempt cannot close a descriptor
// while another goroutine's lock is being taken. It is package state because
// the lock it guards is process state.
var held struct {
	sync.Mutex
	paths map[string]bool
}

// Lock takes the KahaDB directory lock as ActiveMQ's SharedFileLocker does:
// an exclusive POSIX record lock (fcntl F_SETLK, F_WRLCK) on <dir>/lock,
// created if missing; on success it writes the time (int64 ms, big-endian)
// at offset 0, as LockFile.lock does, followed by a line naming this
// process (see holderLine). Such locks exclude a running ActiveMQ
// 5.17 (Java's FileChannel.tryLock is an fcntl lock), another Wharf, and a
// second Lock in this process. flock(2) is deliberately not used: on Linux
// it does not conflict with fcntl locks.
//
// While the lock is held elsewhere Lock retries every retry (0 means
// DefaultLockRetry), logging each attempt at Info with who holds the lock
// (as ActiveMQ's SharedFileLocker logs each one), until it gets the lock or
// ctx is done; it then returns an error wrapping both ErrLocked
// and ctx.Err(). Other errors (permissions, a missing directory that cannot
// be created) are returned at once. Lock is safe from any goroutine.
func Lock(ctx context.Context, dir string, retry time.Duration, log *slog.Logger) (*FileLock, error) {
	if retry <= 0 {
		retry = DefaultLockRetry
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: lock: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("journal: lock: %w", err)
	}
	path := filepath.Join(abs, LockFileName)
	var timer *time.Timer
	for attempt := 0; ; attempt++ {
		l, busy, err := tryLock(path)
		if err != nil {
			return nil, err
		}
		if l != nil {
			if attempt > 0 {
				log.Info("journal directory lock acquired", "file", path, "attempts", attempt+1)
			}
			return l, nil
		}
		if attempt == 0 {
			// ActiveMQ's SharedFileLocker says this once, in these words
			// ("Database <dir>/lock is locked by another server. This
			// broker is now in slave mode waiting a lock to be acquired"):
			// operators grep for them.
			log.Info(SlaveModeMessage, "file", path, "holder", busy, "retry", retry)
		}
		log.Info("journal directory locked by another broker, waiting", "file", path, "holder", busy, "attempt", attempt+1, "retry", retry)
		if timer == nil {
			timer = time.NewTimer(retry)
			defer timer.Stop()
		} else {
			timer.Reset(retry)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock %s: %w: %w", path, ErrLocked, ctx.Err())
		case <-timer.C:
		}
	}
}

// tryLock makes one attempt. It returns the lock, or nil and who holds it
// (describeHolder).
func tryLock(path string) (*FileLock, string, error) {
	held.Lock()
	defer held.Unlock()
	if held.paths[path] {
		return nil, "this process", nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, "", fmt.Errorf("journal: lock: %w", err)
	}
	// Closing f drops no lock of ours: held says we have none on path.
	if err := fcntlLock(f); err != nil {
		defer f.Close()
		if errors.Is(err, errLockBusy) {
			return nil, describeHolder(f), nil
		}
		return nil, "", fmt.Errorf("journal: lock %s: %w", path, err)
	}
	content := binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixMilli()))
	content = append(content, holderLine()...)
	_, err = f.WriteAt(content, 0)
	if err == nil {
		err = f.Truncate(int64(len(content)))
	}
	if err == nil {
		err = f.Sync()
	}
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if err != nil {
		fcntlUnlock(f)
		f.Close()
		return nil, "", fmt.Errorf("journal: lock %s: %w", path, err)
	}
	if held.paths == nil {
		held.paths = map[string]bool{}
	}
	held.paths[path] = true
	return &FileLock{f: f, path: path, mtime: fi.ModTime()}, "", nil
}

// holderPrefix starts the line Lock writes after the time stamp.
const holderPrefix = "\nwharf pid="

// holderLine is what Lock writes after the time stamp: "\nwharf pid=<pid>
// host=<hostname>\n", so that a broker waiting for the lock (possibly on
// another host sharing the directory) can say who holds it. ActiveMQ reads
// nothing of the file and writes only the 8-byte stamp at offset 0 when it
// locks it, leaving this line behind: describeHolder trusts the line only
// when its pid is the one the kernel reports as the holder.
func holderLine() string {
	host, _ := os.Hostname()
	if host == "" {
		host = "unknown"
	}
	return holderPrefix + strconv.Itoa(os.Getpid()) + " host=" + host + "\n"
}

// describeHolder says who holds the lock on f, which this process could
// not take: the pid the kernel reports (0 where it does not, e.g. on some
// network file systems), "wharf on <host>" when the line holderLine wrote
// belongs to that pid, and the time stamp at offset 0 (written by Wharf and
// by ActiveMQ 5.17 when it took the lock).
func describeHolder(f *os.File) string {
	pid := fcntlHolder(f)
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	var parts []string
	if pid > 0 {
		parts = append(parts, "pid "+strconv.Itoa(pid))
	}
	if len(buf) > 8 {
		if p, host, ok := parseHolderLine(string(buf[8:])); ok && (pid == 0 || p == pid) {
			if pid == 0 {
				parts = append(parts, "pid "+strconv.Itoa(p))
			}
			parts = append(parts, "wharf on "+host)
		}
	}
	if len(buf) >= 8 {
		ms := int64(binary.BigEndian.Uint64(buf[:8]))
		// Only a plausible time: an empty or foreign file says nothing.
		if t := time.UnixMilli(ms); t.Year() >= 2000 && t.Before(time.Now().Add(24*time.Hour)) {
			parts = append(parts, "locked at "+t.UTC().Format(time.RFC3339))
		}
	}
	if len(parts) == 0 {
		return "another process"
	}
	return strings.Join(parts, ", ")
}

// parseHolderLine reads the line holderLine writes.
func parseHolderLine(s string) (pid int, host string, ok bool) {
	rest, found := strings.CutPrefix(s, holderPrefix)
	if !found {
		return 0, "", false
	}
	rest, _, _ = strings.Cut(rest, "\n")
	p, h, found := strings.Cut(rest, " host=")
	pid, err := strconv.Atoi(p)
	if !found || err != nil || pid <= 0 || h == "" {
		return 0, "", false
	}
	return pid, h, true
}

// Check is the keep-alive of a held lock (lockKeepAlivePeriod): it returns
// an error wrapping ErrLockLost when the lock can no longer be trusted, as
// ActiveMQ's LockFile.keepAlive reports false: the lock was released, the
// file at the lock's path is gone or is another file (deleted, then made
// again by another broker, which could then lock it), or it was modified
// since Lock wrote it (another broker wrote its time stamp: it believes
// it holds the lock). Check reads only metadata: it never opens the file
// (which would drop the lock, see FileLock). Safe from any goroutine.
func (l *FileLock) Check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("%w: %s was unlocked", ErrLockLost, l.path)
	}
	ours, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLockLost, l.path, err)
	}
	now, err := os.Stat(l.path)
	switch {
	case err != nil:
		return fmt.Errorf("%w: lock file %s does not exist: %w", ErrLockLost, l.path, err)
	case !os.SameFile(ours, now):
		return fmt.Errorf("%w: lock file %s was replaced by another file", ErrLockLost, l.path)
	case !now.ModTime().Equal(l.mtime):
		return fmt.Errorf("%w: lock file %s, locked at %s, has been modified at %s", ErrLockLost, l.path,
			l.mtime.UTC().Format(time.RFC3339Nano), now.ModTime().UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// Path returns the lock file's absolute path.
func (l *FileLock) Path() string { return l.path }

// Unlock releases the lock and closes the lock file, which stays in place
// (as ActiveMQ leaves it). A second Unlock returns ErrUnlocked.
func (l *FileLock) Unlock() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrUnlocked
	}
	held.Lock()
	defer held.Unlock()
	err := fcntlUnlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	delete(held.paths, l.path)
	if err != nil {
		return fmt.Errorf("journal: unlock %s: %w", l.path, err)
	}
	return nil
}
