//go:build !linux || poll_opt

package transport

import (
	"fmt"

	"github.com/panjf2000/gnet/v2"
)

// readStopBuilt is false: this build holds a paused connection's input.
const readStopBuilt = false

// pollerFD is not implemented here: PauseReading holds input in gnet's
// inbound buffer instead of stopping the socket's reads (see pause.go).
func pollerFD(gnet.EventLoop) (int, error) {
	return -1, fmt.Errorf("read interest control needs Linux with gnet's default poller: %w", errReadCtlUnsupported)
}

// setInterest is never called when pollerFD fails.
func setInterest(int, int, bool, bool) error { return errReadCtlUnsupported }

// unreadBytes is not asked here: reading is never stopped, so the kernel
// holds no input for long.
func unreadBytes(int) int { return 0 }
