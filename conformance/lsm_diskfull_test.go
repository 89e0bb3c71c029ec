package conformance

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"wharf/conform"
)

// lsmSmallConfig is a one-shard wharf on the LSM store in %q with small
// badger tables, so that a 64 MiB file system fills in seconds.
const lsmSmallConfig = `shards: 1
persistence:
  lsm:
    directory: %q
    mem_table_size: 2mb
    value_log_file_size: 2mb
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
`

// TestConformanceLSMDiskFull: wharf on the LSM store on a 64 MiB tmpfs
// (mounted by the test; skipped without root). A producer sends
// persistent 8 KiB messages with receipts until the broker refuses one:
// the refusal is an ERROR naming the full disk (the store's minFreeDisk
// guard, before badger would write to a full disk), not a dead broker.
// Then wharf is killed (SIGKILL) and started again on the full disk:
// every message that got its RECEIPT is consumed exactly once, nothing
// else (no corruption, nothing acknowledged lost).
func TestConformanceLSMDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a small tmpfs (needs root or CAP_SYS_ADMIN): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	yml := fmt.Sprintf(lsmSmallConfig, filepath.Join(mnt, "lsm"))
	w := startWharfYAML(t, yml)
	t.Cleanup(func() { w.signal(syscall.SIGKILL) }) // before the umount
	q := "/queue/lsm.diskfull"
	body := strings.Repeat("x", 8<<10)
	var acked []string
	var refusal string
	for i := 0; i < 20000 && refusal == ""; i++ {
		c, _ := conform.ConnectRaw(t, w.stomp, "1.2")
		for j := 0; j < 50; j++ {
			key := strconv.Itoa(i*50 + j)
			f := c.Request("SEND", []string{"destination:" + q, "receipt:r", "persistent:true", "key:" + key}, []byte(body))
			if f.Command == "RECEIPT" {
				acked = append(acked, key)
				continue
			}
			if f.Command != "ERROR" {
				t.Fatalf("SEND: got %s, want RECEIPT or ERROR", f)
			}
			refusal, _ = f.Get("message")
			refusal += " " + string(f.Body)
			break
		}
		c.Close()
	}
	if !strings.Contains(refusal, "disk full") {
		t.Fatalf("after %d stored sends: refusal %q, want an ERROR naming the full disk", len(acked), refusal)
	}
	if len(acked) < 1000 {
		t.Fatalf("%d messages of 8 KiB stored before the disk was full, want at least 1000 on 64 MiB", len(acked))
	}
	t.Logf("%d messages stored, then: %s", len(acked), refusal)

	w.signal(syscall.SIGKILL)
	w = startWharfYAML(t, yml)
	c, _ := conform.ConnectRaw(t, w.stomp, "1.2")
	c.Subscribe("s", q)
	got := map[string]int{}
	for range acked {
		f := c.Expect("MESSAGE")
		k, _ := f.Get("key")
		got[k]++
	}
	c.MustSync()
	for _, k := range acked {
		if got[k] != 1 {
			t.Errorf("acknowledged message %s: consumed %d times after the restart on the full disk, want once", k, got[k])
		}
	}
	if len(got) != len(acked) {
		t.Errorf("consumed %d distinct messages, want the %d acknowledged", len(got), len(acked))
	}
}
