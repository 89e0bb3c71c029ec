package client

import (
	"os/exec"
	"syscall"
)

// setDeathSignal kills the broker if the test binary dies first, so no JVM
// is left orphaned.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
