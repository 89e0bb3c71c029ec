package journal

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// DefaultLockRetry is ActiveMQ's lockAcquireSleepInterval: 10 s.
const DefaultLockRetry = 10 * time.Second

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
// at offset 0, as LockFile.lock does. Such locks exclude a running ActiveMQ
// 5.17 (Java's FileChannel.tryLock is an fcntl lock), another Wharf, and a
// second Lock in this process. flock(2) is deliberately not used: on Linux
// it does not conflict with fcntl locks.
//
// While the lock is held elsewhere Lock retries every retry (0 means
// DefaultLockRetry), logging once at Info and then at Debug, until it gets
// the lock or ctx is done; it then returns an error wrapping both ErrLocked
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
			log.Info("journal directory locked by another broker, waiting", "file", path, "retry", retry, "holder", busy)
		} else {
			log.Debug("journal directory still locked", "file", path, "holder", busy)
		}
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

// tryLock makes one attempt. It returns the lock, or nil and who holds it.
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
		f.Close()
		if errors.Is(err, errLockBusy) {
			return nil, "another process", nil
		}
		return nil, "", fmt.Errorf("journal: lock %s: %w", path, err)
	}
	var stamp [8]byte
	binary.BigEndian.PutUint64(stamp[:], uint64(time.Now().UnixMilli()))
	if _, err := f.WriteAt(stamp[:], 0); err == nil {
		err = f.Sync()
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
	return &FileLock{f: f, path: path}, "", nil
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
