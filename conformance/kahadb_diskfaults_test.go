package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"wharf/conform"
)

// Issue 17 item 2: disk faults, on a real wharf process and a real client.

// mountTmpfs mounts a tmpfs of size bytes (mount's size= syntax) on a new
// directory and unmounts it at the end of the test, after the processes
// the test started later are gone (Cleanup runs last-in first-out). It
// needs root, which CI has; elsewhere the test is skipped.
func mountTmpfs(t *testing.T, size string, opts ...string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs the tests as root)")
	}
	dir := t.TempDir()
	o := strings.Join(append([]string{"size=" + size}, opts...), ",")
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", o, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs -o %s: %v: %s (no mount privilege here)", o, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the file system is full and returns
// its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			t.Fatalf("filling %s: %v", dir, err)
		}
	}
	// Whatever a short write left: fill to the last byte.
	for _, n := range []int{4096, 512, 1} {
		for {
			if _, err := f.Write(chunk[:n]); err != nil {
				break
			}
		}
	}
	return p
}

// TestConformanceKahaDBDiskFull runs wharf on a KahaDB store in an 8 MiB
// tmpfs and fills the file system under it. A persistent send then fails
// (ENOSPC on the journal append): the producer gets an ERROR instead of its
// RECEIPT, never a RECEIPT for a message that is not on disk; consumers go
// on receiving and acknowledging the messages already stored; once the
// filler file is deleted, sends get their RECEIPTs again without a
// restart. After a crash (SIGKILL) and a restart on the same store every
// message whose send got a RECEIPT is there, except those whose ack got a
// RECEIPT, and no message whose send failed comes back.
func TestConformanceKahaDBDiskFull(t *testing.T) {
	mnt := mountTmpfs(t, "8m")
	dir := filepath.Join(mnt, "kahadb")
	w := startWharf(t, dir)
	q := "/queue/diskfull"
	body := func(name string, n int) string {
		return name + ":" + strings.Repeat("x", n)
	}

	p, _ := conform.ConnectRaw(t, w.stomp, "1.2")
	sent := map[string]bool{} // name → its send got a RECEIPT
	var order []string
	send := func(name string, n int) (ok bool, errMsg string) {
		t.Helper()
		rid := "send-" + name
		p.Send("SEND", []string{"destination:" + q, "persistent:true", "receipt:" + rid}, []byte(body(name, n)))
		f := p.Read()
		switch f.Command {
		case "RECEIPT":
			if got := f.Must(t, "receipt-id"); got != rid {
				t.Fatalf("RECEIPT %q for send %s", got, name)
			}
			sent[name] = true
			order = append(order, name)
			return true, ""
		case "ERROR":
			if got, _ := f.Get("receipt-id"); got != rid {
				t.Fatalf("ERROR with receipt-id %q for send %s", got, name)
			}
			m, _ := f.Get("message")
			return false, m
		}
		t.Fatalf("send %s: got %s, want RECEIPT or ERROR", name, f)
		return false, ""
	}
	for i := range 5 {
		if ok, msg := send(fmt.Sprintf("before-%d", i), 1000); !ok {
			t.Fatalf("send before the disk filled: ERROR %q", msg)
		}
	}

	filler := fillDisk(t, mnt)
	var failed []string
	var failMsg string
	for i := range 5 {
		name := fmt.Sprintf("full-%d", i)
		if ok, msg := send(name, 64<<10); !ok {
			failed = append(failed, name)
			failMsg = msg
		}
	}
	if len(failed) == 0 {
		t.Fatalf("every send of 64 KiB got a RECEIPT on a full disk; log:\n%s", w.log.tail(30))
	}
	if !strings.Contains(failMsg, "no space left on device") {
		t.Errorf("the producer's ERROR does not say the disk is full: %q", failMsg)
	}
	if len(w.logged("store write failed")) == 0 {
		t.Errorf("no \"store write failed\" line; log:\n%s", w.log.tail(30))
	}

	// Consumers are served while the disk is full: the messages stored
	// before arrive and are acknowledged (an ack that cannot be written
	// gets an ERROR, not a RECEIPT, and may come back after the crash).
	c, _ := conform.ConnectRaw(t, w.stomp, "1.2")
	c.Subscribe("s", q, "ack:client-individual")
	ackedOK := map[string]bool{}
	for i := range 5 {
		want := fmt.Sprintf("before-%d", i)
		f := c.Expect("MESSAGE")
		name, _, _ := strings.Cut(string(f.Body), ":")
		if name != want {
			t.Fatalf("while the disk is full: got message %q, want %q", name, want)
		}
		if i >= 3 {
			continue // left for after the restart
		}
		rid := "ack-" + name
		c.Send("ACK", []string{"id:" + f.Must(t, "ack"), "receipt:" + rid}, nil)
		var early []*conform.RawFrame
		for {
			g := c.Read()
			if g.Command == "MESSAGE" {
				early = append(early, g)
				continue
			}
			c.Pending = append(c.Pending, early...)
			if g.Command == "RECEIPT" {
				ackedOK[name] = true
			} else if g.Command != "ERROR" {
				t.Fatalf("ACK %s: got %s", name, g)
			}
			break
		}
	}
	// The messages whose sends failed may follow (the engine dispatched
	// them as the batch went to the disk, as ActiveMQ's
	// concurrentStoreAndDispatchQueues does): the consumer leaves
	// without acknowledging them.
	c.Close()

	// Space comes back: sends succeed again, no restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if ok, msg := send(fmt.Sprintf("after-%d", i), 64<<10); !ok {
			t.Fatalf("send after space was freed: ERROR %q; log:\n%s", msg, w.log.tail(30))
		}
	}
	p.Close()

	w.kill()
	w = startWharf(t, dir)
	defer w.stop()
	c, _ = conform.ConnectRaw(t, w.stomp, "1.2")
	c.Subscribe("s", q, "ack:client-individual")
	// Barrier: a last message; everything stored before it arrives first.
	p, _ = conform.ConnectRaw(t, w.stomp, "1.2")
	if ok, msg := send("marker", 10); !ok {
		t.Fatalf("send after the restart: ERROR %q", msg)
	}
	got := map[string]bool{}
	for {
		f := c.Expect("MESSAGE")
		name, rest, _ := strings.Cut(string(f.Body), ":")
		if name == "marker" {
			break
		}
		if got[name] {
			t.Errorf("message %s delivered twice after the restart", name)
		}
		got[name] = true
		if want := body(name, len(rest)); !bytes.Equal(f.Body, []byte(want)) {
			t.Errorf("message %s: body of %d bytes differs", name, len(f.Body))
		}
	}
	for _, name := range order {
		if name == "marker" {
			continue
		}
		switch {
		case ackedOK[name] && got[name]:
			t.Errorf("message %s came back although its ack got a RECEIPT", name)
		case !ackedOK[name] && !got[name]:
			t.Errorf("message %s lost: its send got a RECEIPT; log:\n%s", name, w.log.tail(30))
		}
	}
	for _, name := range failed {
		if got[name] {
			t.Errorf("message %s, whose send failed on the full disk, came back after the restart", name)
		}
	}
	t.Logf("sends acknowledged %d, failed on the full disk %d, acks confirmed while full %d", len(order)-1, len(failed), len(ackedOK))
}

// TestConformanceKahaDBReadOnlyDir: wharf started on a KahaDB directory
// whose file system is read-only (a tmpfs remounted ro: as root, permission
// bits would not stop the writes) exits non-zero at once with an error that
// names the directory and says why, and never reports itself started.
func TestConformanceKahaDBReadOnlyDir(t *testing.T) {
	mnt := mountTmpfs(t, "8m")
	dir := filepath.Join(mnt, "kahadb")
	w := startWharf(t, dir)
	p, _ := conform.ConnectRaw(t, w.stomp, "1.2")
	p.Send("SEND", []string{"destination:/queue/ro", "persistent:true", "receipt:r"}, []byte("kept"))
	p.ExpectReceipt("r")
	p.Close()
	w.stop()
	if out, err := exec.Command("mount", "-o", "remount,ro", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount ro: %v: %s", err, out)
	}
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(wharfConfig, dir, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), procStartTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, wharfBinary(t), "run", "--http=false", "--config", cfg).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || ctx.Err() != nil {
		t.Fatalf("wharf on a read-only store: %v (want a non-zero exit at once); output:\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, dir) || !strings.Contains(s, "read-only file system") {
		t.Errorf("the error does not name %s and say it is read-only:\n%s", dir, s)
	}
	if strings.Contains(s, "broker started") {
		t.Errorf("wharf reported itself started on a read-only store:\n%s", s)
	}
	// Writable again, the same directory starts with its message.
	if out, err := exec.Command("mount", "-o", "remount,rw", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount rw: %v: %s", err, out)
	}
	w = startWharf(t, dir)
	defer w.stop()
	c, _ := conform.ConnectRaw(t, w.stomp, "1.2")
	c.Subscribe("s", "/queue/ro")
	if f := c.Expect("MESSAGE"); string(f.Body) != "kept" {
		t.Fatalf("after the read-only start: got %q, want the stored message", f.Body)
	}
}

// TestConformanceKahaDBStoreLimitPolicy: with a storeUsage limit below the
// space of the disk (an 8 MiB tmpfs), persistent producers meet flow
// control before the disk fills, as the policy says: sendFailIfNoSpace
// fails the send at once, sendFailIfNoSpaceAfterTimeout after the wait,
// and without either the send is held (no RECEIPT) until a consumer's acks
// make room, then goes through. The journal never meets ENOSPC.
func TestConformanceKahaDBStoreLimitPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, usage, errPrefix string
	}{
		{"sendFailIfNoSpace", "send_fail_if_no_space: true", "Usage Manager Store Limit reached"},
		{"sendFailIfNoSpaceAfterTimeout", "send_fail_if_no_space_after_timeout: 300ms", "Usage Manager Memory Limit Wait Timeout"},
		{"block", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mnt := mountTmpfs(t, "8m")
			dir := filepath.Join(mnt, "kahadb")
			yml := fmt.Sprintf(wharfConfig, dir, "") + "system_usage:\n  store_limit: 256 kb\n"
			if tc.usage != "" {
				yml += "  " + tc.usage + "\n"
			}
			w := startWharfYAML(t, yml)
			defer w.stop()
			q := "/queue/limit"
			p, _ := conform.ConnectRaw(t, w.stomp, "1.2")
			payload := []byte(strings.Repeat("y", 16<<10))
			// 16 sends of 16 KiB reach the 256 KiB limit.
			for i := range 16 {
				rid := fmt.Sprintf("s%d", i)
				p.Send("SEND", []string{"destination:" + q, "persistent:true", "receipt:" + rid}, payload)
				p.ExpectReceipt(rid)
			}
			p.Send("SEND", []string{"destination:" + q, "persistent:true", "receipt:over"}, payload)
			if tc.errPrefix != "" {
				f := p.Expect("ERROR")
				if m, _ := f.Get("message"); !strings.Contains(m, tc.errPrefix) {
					t.Fatalf("send over the store limit: ERROR %q, want %q", m, tc.errPrefix)
				}
			} else {
				// Held: once the broker says it parked the send (the
				// flow-control warning), no RECEIPT has come.
				w.waitLine(regexp.MustCompile(`Persistent store is Full`), procStartTimeout)
				if f, err := p.ReadWithin(50 * time.Millisecond); err == nil {
					t.Fatalf("send over the store limit answered while blocked: %s", f)
				}
			}
			// A consumer makes room.
			c, _ := conform.ConnectRaw(t, w.stomp, "1.2")
			c.Subscribe("c", q, "ack:client-individual")
			for i := range 4 {
				f := c.Expect("MESSAGE")
				rid := fmt.Sprintf("a%d", i)
				c.Send("ACK", []string{"id:" + f.Must(t, "ack"), "receipt:" + rid}, nil)
				c.ExpectReceipt(rid)
			}
			if tc.errPrefix == "" {
				p.ExpectReceipt("over") // the held send went through
			} else {
				p.Send("SEND", []string{"destination:" + q, "persistent:true", "receipt:again"}, payload)
				p.ExpectReceipt("again")
			}
			if len(w.logged("store write failed")) != 0 {
				t.Errorf("the journal met a write error under the store limit; log:\n%s", w.log.tail(20))
			}
		})
	}
}
