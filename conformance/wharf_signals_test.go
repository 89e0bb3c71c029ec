package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalStopTimeout bounds how long wharf may take to exit after a
// SIGTERM that comes while it waits for the store's lock: nothing is
// running yet, so anything beyond a moment is the bug of issue 13
// (the signal was ignored until the lock came).
const signalStopTimeout = 10 * time.Second

// TestConformanceWharfSIGTERMWhileWaitingForLock: a second `wharf run` on
// the data directory of a running one waits for the KahaDB lock, logs each
// attempt with the holder (the first one's pid and host), and a SIGTERM
// stops it at once with status 0 and a log line saying the start-up was
// abandoned; the first broker is untouched and stops cleanly after.
func TestConformanceWharfSIGTERMWhileWaitingForLock(t *testing.T) {
	dir := t.TempDir()
	first := startWharf(t, dir)

	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	extra := "    lock_acquire_sleep_interval: 50ms\n"
	if err := os.WriteFile(cfg, fmt.Appendf(nil, wharfConfig, dir, extra), 0o644); err != nil {
		t.Fatal(err)
	}
	second := startProc(t, "second wharf", exec.Command(wharfBinary(t), "run", "--config", cfg, "--log-format", "json", "--http=false"))

	// Three attempts logged: the barrier is the log, not a time.
	const waiting = "journal directory locked by another broker, waiting"
	var attempts []map[string]any
	deadline := time.After(procStartTimeout)
	for len(attempts) < 3 {
		lines, grew := second.log.snapshot()
		attempts = attempts[:0]
		for _, line := range lines {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == waiting {
				attempts = append(attempts, rec)
			}
		}
		if len(attempts) >= 3 {
			break
		}
		select {
		case <-grew:
		case <-second.exited:
			t.Fatalf("second wharf exited (%v) while the first holds the lock; log:\n%s", second.err, second.log.tail(40))
		case <-deadline:
			t.Fatalf("second wharf logged %d lock attempts in %v, want 3; log:\n%s", len(attempts), procStartTimeout, second.log.tail(40))
		}
	}
	host, _ := os.Hostname()
	wantHolder := fmt.Sprintf("pid %d, wharf on %s, locked at ", first.cmd.Process.Pid, host)
	for i, rec := range attempts[:3] {
		holder, _ := rec["holder"].(string)
		if !strings.HasPrefix(holder, wantHolder) || rec["level"] != "INFO" || rec["attempt"] != float64(i+1) {
			t.Fatalf("attempt %d logged as %v; want level INFO, attempt %d and a holder starting %q", i+1, rec, i+1, wantHolder)
		}
	}

	sent := time.Now()
	if err := second.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-second.exited:
	case <-time.After(signalStopTimeout):
		t.Fatalf("second wharf still runs %v after SIGTERM while waiting for the lock; log:\n%s", signalStopTimeout, second.log.tail(40))
	}
	var exit *exec.ExitError
	if second.err != nil && !(errors.As(second.err, &exit) && exit.ExitCode() == 0) {
		t.Fatalf("second wharf exited with %v after SIGTERM, want status 0; log:\n%s", second.err, second.log.tail(40))
	}
	t.Logf("second wharf exited %v after SIGTERM", time.Since(sent))
	var abandoned map[string]any
	lines, _ := second.log.snapshot()
	for _, line := range lines {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "start-up abandoned" {
			abandoned = rec
		}
	}
	if abandoned == nil || abandoned["reason"] != "signal terminated" || !strings.Contains(fmt.Sprint(abandoned["err"]), "locked by another broker") {
		t.Fatalf("no \"start-up abandoned\" line naming the signal and the lock wait; log:\n%s", second.log.tail(40))
	}
	for _, line := range lines {
		if strings.Contains(line, `"msg":"broker started"`) {
			t.Fatalf("second wharf started a broker: %s", line)
		}
	}

	// The first broker kept its lock and its connectors all along.
	dialOW(t, first.openwire, "")
	first.stop()
}
