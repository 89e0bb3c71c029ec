//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package journal

import (
	"errors"
	"io"
	"os"
	"syscall"
)

var errLockBusy = errors.New("lock held")

// fcntlLock takes an exclusive record lock on the whole of f (l_len 0: to
// the end of the file and beyond), without waiting. Java locks [0,
// max(1, size)) of the 8-byte file; the ranges overlap, so the locks
// conflict in both directions.
func fcntlLock(f *os.File) error {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 0}
	err := syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) {
		return errLockBusy
	}
	return err
}

func fcntlUnlock(f *os.File) error {
	lk := syscall.Flock_t{Type: syscall.F_UNLCK, Whence: io.SeekStart, Start: 0, Len: 0}
	return syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &lk)
}

// fcntlHolder returns the pid of a process holding a lock on f that keeps
// an exclusive one out (F_GETLK), or 0 when there is none now or the
// kernel does not say.
func fcntlHolder(f *os.File) int {
	lk := syscall.Flock_t{Type: syscall.F_WRLCK, Whence: io.SeekStart, Start: 0, Len: 0}
	if err := syscall.FcntlFlock(f.Fd(), syscall.F_GETLK, &lk); err != nil || lk.Type == syscall.F_UNLCK {
		return 0
	}
	return int(lk.Pid)
}
