package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"

	"wharf/cmd/wharf/internal/jolokiaclient"
)

// openPTY opens a pseudo-terminal: the command writes to slave, which it
// sees as a terminal; the test reads what it wrote from master.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// fillDLQ puts n small persistent messages on ActiveMQ.DLQ whose
// OriginalDestination is queue: sent to queue over STOMP (the last with
// a receipt), then moved to the DLQ with moveMatchingMessagesTo, which
// makes queue their origin as a dead-lettering does.
func (b *adminBroker) fillDLQ(t *testing.T, queue string, n int) {
	t.Helper()
	conn := b.stomp(t)
	for i := range n {
		send := []func(*frame.Frame) error{stomp.SendOpt.Header("persistent", "true"), stomp.SendOpt.Header("n", strconv.Itoa(i))}
		if i == n-1 {
			send = append(send, stomp.SendOpt.Receipt)
		}
		if err := conn.Send("/queue/"+queue, "text/plain", []byte(strconv.Itoa(i)), send...); err != nil {
			t.Fatal(err)
		}
	}
	b.awaitQueueSize(t, queue, int64(n))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := &jolokiaclient.Client{Base: b.url, User: "admin", Password: "secret"}
	v, err := c.Exec(ctx, "org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,destinationName="+queue,
		"moveMatchingMessagesTo(java.lang.String,java.lang.String)", "", "ActiveMQ.DLQ")
	if err != nil || string(v) != strconv.Itoa(n) {
		t.Fatalf("moveMatchingMessagesTo ActiveMQ.DLQ: %s, %v; want %d", v, err, n)
	}
	b.awaitQueueSize(t, "ActiveMQ.DLQ", int64(n))
}

// drainOnce receives every message of queue over STOMP and checks that
// each of 0..n-1 came exactly once, then that the queue is empty.
func (b *adminBroker) drainOnce(t *testing.T, queue string, n int) {
	t.Helper()
	conn := b.stomp(t)
	sub, err := conn.Subscribe("/queue/"+queue, stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]int, n)
	for range n {
		select {
		case m := <-sub.C:
			if m.Err != nil {
				t.Fatal(m.Err)
			}
			i, err := strconv.Atoi(string(m.Body))
			if err != nil || i < 0 || i >= n {
				t.Fatalf("unexpected message %q on %s", m.Body, queue)
			}
			seen[i]++
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no message for 20s", queue)
		}
	}
	for i, k := range seen {
		if k != 1 {
			t.Fatalf("message %d came %d times, want once", i, k)
		}
	}
	sub.Unsubscribe()
	b.awaitQueueSize(t, queue, 0)
}

// progressCounts are the moved counts of the progress bars in a
// terminal's output, in order, checking that each bar has its parts.
func progressCounts(t *testing.T, out, queue string, total int) []int {
	t.Helper()
	bar := regexp.MustCompile(`^replaying ` + regexp.QuoteMeta(queue) + ` \[[#-]{20}\] (\d+)/` + strconv.Itoa(total) + ` +\d+% \d+ msg/s ETA \S+$`)
	var counts []int
	for _, part := range strings.Split(out, "\r\033[K") {
		part = strings.TrimRight(part, "\r\n")
		if part == "" {
			continue
		}
		m := bar.FindStringSubmatch(part)
		if m == nil {
			t.Fatalf("progress line %q is not a bar of %s", part, queue)
		}
		n, _ := strconv.Atoi(m[1])
		counts = append(counts, n)
	}
	return counts
}

// TestWharfDLQReplayChunked: 50,000 dead-lettered messages on KahaDB go
// back with `wharf dlq replay` in calls of --chunk 5000, with a progress
// bar on a terminal that advances to 50000/50000; every message is back
// on its queue exactly once and none is left on the DLQ. A login without
// the admin role is refused first and moves nothing.
func TestWharfDLQReplayChunked(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 messages")
	}
	const total, chunk = 50000, 5000
	b := startAdminBroker(t)
	if got := b.logged("Using Persistence Adapter"); len(got) != 1 || !strings.HasPrefix(fmt.Sprint(got[0]["adapter"]), "KahaDBPersistenceAdapter[") {
		t.Fatalf("Using Persistence Adapter: %v, want KahaDB", got)
	}
	b.fillDLQ(t, "replay.orders", total)

	code, _, errOut := runWharf(t, "dlq", "replay", "ActiveMQ.DLQ", "--url", b.url, "--user", "viewer", "--password", "pw")
	if code != exitUnreachable || !strings.Contains(errOut, `"viewer" may not do this (operations need the admin role)`) {
		t.Errorf("dlq replay as viewer: exit %d, stderr %q; want 3 saying it needs the admin role", code, errOut)
	}
	b.awaitQueueSize(t, "ActiveMQ.DLQ", total)

	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := wharfCommand(ctx, "dlq", "replay", "ActiveMQ.DLQ", "--chunk", strconv.Itoa(chunk), "--timeout", "20s",
		"--url", b.url, "--user", "admin", "--password", "secret")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := make(chan []byte)
	go func() {
		got, _ := io.ReadAll(master) // ends with EIO once the command is gone
		term <- got
	}()
	err := cmd.Wait()
	shown := string(<-term)
	if err != nil {
		t.Fatalf("dlq replay: %v; stdout %q, terminal %q", err, out.String(), shown)
	}
	if got := row(t, out.String(), "ActiveMQ.DLQ"); got[1] != strconv.Itoa(total) {
		t.Errorf("dlq replay: %q, want %d replayed", got, total)
	}
	if !strings.HasSuffix(shown, "\r\033[K") {
		t.Errorf("terminal output %q does not end by clearing the bar", clip(shown))
	}
	counts := progressCounts(t, shown, "ActiveMQ.DLQ", total)
	if len(counts) != total/chunk || counts[len(counts)-1] != total {
		t.Errorf("progress showed %v, want %d bars ending at %d", counts, total/chunk, total)
	}
	for i := 1; i < len(counts); i++ {
		if counts[i] != counts[i-1]+chunk {
			t.Errorf("progress went %d then %d, want steps of %d", counts[i-1], counts[i], chunk)
		}
	}
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 0)
	b.drainOnce(t, "replay.orders", total)
}

// TestWharfDLQReplayFallback: against a broker whose Jolokia has no
// retryMessages(int) — ActiveMQ's answer, given by a proxy in front of a
// real `wharf run` — dlq replay says so on stderr and replays the queue
// with one retryMessages(), which moves every message back once.
func TestWharfDLQReplayFallback(t *testing.T) {
	const total = 300
	b := startAdminBroker(t)
	b.fillDLQ(t, "replay.fallback", total)
	target, err := url.Parse(b.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var refused, whole atomic.Int32
	activemq := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		json.Unmarshal(body, &req)
		switch req["operation"] {
		case "retryMessages(int)":
			refused.Add(1)
			mbean, _ := req["mbean"].(string)
			json.NewEncoder(w).Encode(map[string]any{"request": req, "status": 400, "error_type": "java.lang.IllegalArgumentException",
				"error": "java.lang.IllegalArgumentException : No operation retryMessages(int) on MBean " + mbean + " exists. Known signatures: ()"})
			return
		case "retryMessages()":
			whole.Add(1)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		proxy.ServeHTTP(w, r)
	}))
	defer activemq.Close()

	code, out, errOut := runWharf(t, "dlq", "replay", "--url", activemq.URL, "--user", "admin", "--password", "secret", "--json")
	if code != 0 {
		t.Fatalf("dlq replay through the proxy: exit %d, stderr %q", code, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || fmt.Sprint(rows) != fmt.Sprintf("[map[name:ActiveMQ.DLQ replayed:%d]]", total) {
		t.Errorf("dlq replay --json: %q (%v), want ActiveMQ.DLQ with %d replayed", out, err, total)
	}
	if !strings.Contains(errOut, "has no retryMessages(int)") || !strings.Contains(errOut, "one retryMessages()") {
		t.Errorf("stderr %q does not say it fell back to retryMessages()", errOut)
	}
	if refused.Load() != 1 || whole.Load() != 1 {
		t.Errorf("retryMessages(int) asked %d times, retryMessages() %d; want once each", refused.Load(), whole.Load())
	}
	b.awaitQueueSize(t, "ActiveMQ.DLQ", 0)
	b.drainOnce(t, "replay.fallback", total)
}

// TestWharfDLQReplayBadChunk: --chunk must be a positive count.
func TestWharfDLQReplayBadChunk(t *testing.T) {
	code, _, errOut := runWharf(t, "dlq", "replay", "--chunk", "0")
	if code != exitUsage || !strings.Contains(errOut, "--chunk 0") {
		t.Errorf("dlq replay --chunk 0: exit %d, stderr %q; want 2 naming --chunk", code, errOut)
	}
}
