//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package journal

import (
	"errors"
	"os"
)

var errLockBusy = errors.New("lock held")

var errNoLock = errors.New("fcntl record locks not supported on this platform")

func fcntlLock(*os.File) error   { return errNoLock }
func fcntlUnlock(*os.File) error { return errNoLock }
func fcntlHolder(*os.File) int   { return 0 }
