package mosquitto

import "syscall"

// childAttr puts the broker in its own process group, so that a Ctrl-C
// meant for the parent reaches the broker only through Stop, and has
// Linux kill it if the thread that started it dies without stopping it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
