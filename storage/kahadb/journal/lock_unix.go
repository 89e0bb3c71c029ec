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
