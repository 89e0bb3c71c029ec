package main

import "syscall"

// childAttr starts a broker in a session of its own, hence its own process
// group, so that a Ctrl-C on the terminal reaches it only through
// proc.stop once the runs have ended, and has Linux kill it if this
// program dies without stopping it. The session also gives it an
// autogroup of its own (sched_autogroup_enabled, Linux's default), so that
// on a busy machine the scheduler shares the CPU between the broker and
// the load generator by process rather than by thread: in one group a JVM
// broker with forty threads competes for the cores with more runnable
// threads than a Go broker running two. (A precaution: on the shared
// 2-core machine of bench/results/2026-12-02-openwire-driver.md its
// effect was below the noise of single rounds.)
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
