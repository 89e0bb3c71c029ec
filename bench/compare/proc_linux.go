package main

import "syscall"

// childAttr puts a broker in its own process group, so that a Ctrl-C on
// the terminal reaches it only through proc.stop once the runs have
// ended, and has Linux kill it if this program dies without stopping it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
