//go:build linux || darwin || freebsd

package lsm

import "syscall"

// freeBytes is the space left to unprivileged users on the file system
// holding dir; -1 when it cannot be told.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
