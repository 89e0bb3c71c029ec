//go:build !linux

package client

import "os/exec"

// setDeathSignal is Linux-only; elsewhere a killed test binary may leave
// the broker running.
func setDeathSignal(*exec.Cmd) {}
