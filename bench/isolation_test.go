package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Isolation under load (issue 17 item 4), against a wharf process on
// KahaDB with real clients: a consumer whose socket is never read, a
// slow topic subscriber and a producer flooding a queue to its memory
// limit must not hold up clients of other destinations.
//
// The tests in `make test` are functional: the innocent pair completes
// its messages while the interference is in place (shown to be in place
// by the broker's own figures: a backlog that cannot fit in the socket
// buffers, a producer held by flow control), and nothing is lost once it
// ends. Throughput is compared only by `make isolation`
// (WHARF_ISOLATION_MEASURE=1): equal windows of the innocent pair alone
// and with the interference, interleaved, medians compared; on a shared
// 2-core machine a timed assertion in `make test` would fail on noise.

// isolationPolicies: the topic's slow subscribers keep at most 10
// pending messages (constantPendingMessageLimitStrategy); queue C holds
// 1 MiB in memory and, with the VM cursor, blocks its producers there.
const isolationPolicies = `destination_policy:
  - topic: ISO.T
    pending_message_limit: 10
  - queue: ISO.C
    memory_limit: 1mb
    pending_queue_policy: vm
`

const (
	isoBodyBytes = 8 << 10 // the stalled destinations' messages
	isoPairCount = 500     // the innocent pair's messages in the functional tests
	isoTimeout   = 2 * time.Minute
)

// socketBufferBytes is the most a loopback TCP connection can hold in
// its kernel buffers: the largest send buffer (the broker's side) plus
// the stalled client's receive buffer, which stallSTOMP fixes.
func socketBufferBytes(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
	if err != nil {
		t.Skipf("no /proc/sys/net/ipv4/tcp_wmem: %v", err)
	}
	var lo, def, hi int
	if _, err := fmt.Sscan(string(b), &lo, &def, &hi); err != nil {
		t.Fatalf("tcp_wmem %q: %v", b, err)
	}
	return hi + stalledRcvBuf*2 // the kernel doubles SO_RCVBUF
}

const stalledRcvBuf = 4096

// stalledSTOMP is a STOMP consumer whose socket is not read after its
// subscription is confirmed, until drain: its TCP window closes.
type stalledSTOMP struct {
	nc   net.Conn
	br   *bufio.Reader
	seen map[uint64]bool // sequence numbers received
	n    int             // MESSAGE frames received
}

// stallSTOMP subscribes to destination with the extra SUBSCRIBE headers
// and stops reading once the RECEIPT is in.
func stallSTOMP(t *testing.T, addr, destination string, headers ...string) *stalledSTOMP {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, stalledRcvBuf)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	s := &stalledSTOMP{nc: nc, br: bufio.NewReader(nc), seen: map[uint64]bool{}}
	sub := "SUBSCRIBE\nid:stalled\ndestination:" + destination + "\nreceipt:sub\n"
	for _, h := range headers {
		sub += h + "\n"
	}
	if _, err := nc.Write([]byte("CONNECT\naccept-version:1.2\nhost:localhost\nheart-beat:0,0\n\n\x00" + sub + "\n\x00")); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		f, err := readSTOMPFrame(s.br)
		if err != nil {
			t.Fatalf("stalled consumer of %s: %v", destination, err)
		}
		switch f.command {
		case "CONNECTED":
		case "MESSAGE":
			s.take(t, f)
		case "RECEIPT":
			nc.SetReadDeadline(time.Time{})
			return s
		default:
			t.Fatalf("stalled consumer of %s: %s %s", destination, f.command, stompErrorText(f))
		}
	}
}

func (s *stalledSTOMP) take(t *testing.T, f stompFrame) {
	t.Helper()
	st, err := readStamp(f.body)
	if err != nil {
		t.Fatalf("stalled consumer: unstamped body: %v", err)
	}
	if s.seen[st.seq] {
		t.Errorf("stalled consumer: message %d delivered twice", st.seq)
	}
	s.seen[st.seq] = true
	s.n++
}

// drainUntil reads the socket again, acknowledging each message when ack
// is set, until n messages have arrived in all, or the timeout passes.
func (s *stalledSTOMP) drainUntil(t *testing.T, n int, ack bool) {
	t.Helper()
	s.drainWhile(t, func() bool { return s.n < n }, ack)
}

// drainWhile reads (and acknowledges, with ack) while more() holds.
func (s *stalledSTOMP) drainWhile(t *testing.T, more func() bool, ack bool) {
	t.Helper()
	s.nc.SetReadDeadline(time.Now().Add(isoTimeout))
	defer s.nc.SetReadDeadline(time.Time{})
	for more() {
		f, err := readSTOMPFrame(s.br)
		if err != nil {
			t.Fatalf("stalled consumer, draining: %v after %d messages", err, s.n)
		}
		if f.command != "MESSAGE" {
			t.Fatalf("stalled consumer, draining: %s %s", f.command, stompErrorText(f))
		}
		s.take(t, f)
		if ack {
			if _, err := s.nc.Write([]byte("ACK\nid:" + f.headers["ack"] + "\n\n\x00")); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// sendStampedFrom sends n messages numbered from first, not waiting for
// confirmations.
func sendStampedFrom(ctx context.Context, s session, to dest, first, n, size int) error {
	body := newBody(size)
	for i := first; i < first+n; i++ {
		putStamp(body, stamp{seq: uint64(i)})
		if err := s.send(ctx, to, body, nil, false); err != nil {
			return fmt.Errorf("send %d to %s: %w", i, to.name, err)
		}
	}
	return nil
}

// sendStamped sends n messages of size bytes with sequence numbers from
// 1 over s, persistent or not as s was opened; each waits for the
// broker's confirmation when sync is set. sent counts them as they go.
func sendStamped(ctx context.Context, s session, to dest, n, size int, sync bool, sent *atomic.Int64) error {
	body := newBody(size)
	for i := 1; i <= n; i++ {
		putStamp(body, stamp{seq: uint64(i)})
		if err := s.send(ctx, to, body, nil, sync); err != nil {
			return fmt.Errorf("send %d to %s: %w", i, to.name, err)
		}
		if sent != nil {
			sent.Add(1)
		}
	}
	return nil
}

// runPair sends n persistent messages (asynchronously: the broker's
// confirmations are not waited for one by one) to queue q over OpenWire and
// receives them over STOMP, checking order and completeness; it is the
// innocent producer/consumer pair of the functional tests.
func runPair(ctx context.Context, w *wharfChild, q string, n int) error {
	ctx, cancel := context.WithTimeout(ctx, isoTimeout)
	defer cancel()
	cs, err := dialSTOMP(ctx, w.target("stomp"), nil, 10*time.Second, false, false)
	if err != nil {
		return err
	}
	defer cs.close()
	sub, err := cs.subscribe(ctx, dest{name: q}, subOptions{ack: AckAuto})
	if err != nil {
		return err
	}
	ps, err := dialOpenWire(ctx, w.target("openwire"), nil, 10*time.Second, true, false)
	if err != nil {
		return err
	}
	defer ps.close()
	errc := make(chan error, 1)
	go func() { errc <- sendStamped(ctx, ps, dest{name: q}, n, 512, false, nil) }()
	for i := 1; i <= n; i++ {
		d, err := sub.receive(ctx)
		if err != nil {
			return fmt.Errorf("%s: received %d of %d: %w", q, i-1, n, err)
		}
		st, err := readStamp(d.body)
		if err != nil || st.seq != uint64(i) {
			return fmt.Errorf("%s: message %d has sequence %d (%v)", q, i, st.seq, err)
		}
	}
	return <-errc
}

// metric scrapes one sample of /metrics, failing the test if it cannot.
func (w *wharfChild) metric(t *testing.T, name string) float64 {
	t.Helper()
	m, err := w.metrics()
	if err != nil {
		t.Fatal(err)
	}
	return m[name]
}

// waitMetric polls /metrics until ok holds for the sample name or the
// timeout passes: the broker's own figures are the barrier.
func (w *wharfChild) waitMetric(t *testing.T, name string, ok func(float64) bool, what string) float64 {
	t.Helper()
	deadline := time.Now().Add(isoTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		v := w.metric(t, name)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s = %v after %v", what, name, v, isoTimeout)
		}
		<-tick.C
	}
}

// TestIsolationStalledQueueConsumer: a STOMP consumer of queue ISO.A
// whose socket is never read (client-individual acks, prefetch 10000,
// receive buffer 4 KiB) is dispatched a backlog twice what the socket
// buffers hold; an OpenWire producer
// and STOMP consumer on ISO.B complete their messages meanwhile; once
// the stalled consumer reads again it gets every message of ISO.A once.
func TestIsolationStalledQueueConsumer(t *testing.T) {
	w := startWharfChild(t, isolationPolicies)
	ctx := context.Background()
	bufs := socketBufferBytes(t)
	nA := 2*bufs/isoBodyBytes + 100
	if nA > 20000 {
		t.Skipf("socket buffers of %d bytes (net.ipv4.tcp_wmem): a backlog twice that is too large for this test", bufs)
	}
	stalled := stallSTOMP(t, w.addrs["stomp"], "/queue/ISO.A", "ack:client-individual", "activemq.prefetchSize:10000")
	ps, err := dialOpenWire(ctx, w.target("openwire"), nil, 10*time.Second, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.close()
	if err := sendStamped(ctx, ps, dest{name: "ISO.A"}, nA, isoBodyBytes, false, nil); err != nil {
		t.Fatal(err)
	}
	// Once ISO.A holds all nA (none acknowledged), every one is dispatched
	// to the stalled consumer (its prefetch covers them) and more than
	// half of them cannot fit in the socket buffers: they are held in
	// the broker behind the closed window.
	queued := destMetric("wharf_queue_messages", "ISO.A", "queue")
	w.waitMetric(t, queued, func(v float64) bool { return v == float64(nA) }, "ISO.A's backlog stored")
	if err := runPair(ctx, w, "ISO.B", isoPairCount); err != nil {
		t.Fatalf("ISO.B beside a stalled consumer of ISO.A: %v", err)
	}
	if left := w.metric(t, queued); left != float64(nA) {
		t.Fatalf("ISO.A went from %d to %v messages while its consumer neither read nor acknowledged", nA, left)
	}
	stalled.drainUntil(t, nA, true)
	for i := 1; i <= nA; i++ {
		if !stalled.seen[uint64(i)] {
			t.Fatalf("ISO.A message %d never delivered", i)
		}
	}
	w.waitMetric(t, destMetric("wharf_queue_messages", "ISO.A", "queue"), func(v float64) bool { return v == 0 }, "ISO.A after draining")
	t.Logf("ISO.A: %d messages of %d B held behind a closed window (socket buffers %d B); ISO.B: %d messages through meanwhile", nA, isoBodyBytes, bufs, isoPairCount)
}

// TestIsolationSlowTopicSubscriber: on topic ISO.T (pending_message_limit
// 10), a subscriber that neither reads its socket nor acknowledges
// (prefetch 100) keeps its prefetch and the 10 newest pending messages;
// the others are discarded for it and counted on /metrics, while a fast
// subscriber of the same topic gets every message in order.
func TestIsolationSlowTopicSubscriber(t *testing.T) {
	w := startWharfChild(t, isolationPolicies)
	ctx, cancel := context.WithTimeout(context.Background(), isoTimeout)
	defer cancel()
	const n, prefetch, limit = 3000, 100, 10
	slow := stallSTOMP(t, w.addrs["stomp"], "/topic/ISO.T", "ack:client-individual", "activemq.prefetchSize:"+strconv.Itoa(prefetch))
	fs, err := dialSTOMP(ctx, w.target("stomp"), nil, 10*time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.close()
	fast, err := fs.subscribe(ctx, dest{name: "ISO.T", topic: true}, subOptions{ack: AckAuto})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := dialOpenWire(ctx, w.target("openwire"), nil, 10*time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.close()
	errc := make(chan error, 1)
	go func() { errc <- sendStamped(ctx, ps, dest{name: "ISO.T", topic: true}, n, 1024, false, nil) }()
	for i := 1; i <= n; i++ {
		d, err := fast.receive(ctx)
		if err != nil {
			t.Fatalf("fast subscriber: %d of %d messages: %v", i-1, n, err)
		}
		if st, err := readStamp(d.body); err != nil || st.seq != uint64(i) {
			t.Fatalf("fast subscriber: message %d has sequence %d (%v)", i, st.seq, err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// The slow subscriber now reads and acknowledges: it gets its
	// prefetch, then what was kept for it; a last message, n+1, sent
	// once it keeps up, marks the end of what it can still get.
	slow.drainUntil(t, prefetch+limit, true)
	if err := sendStampedFrom(ctx, ps, dest{name: "ISO.T", topic: true}, n+1, 1, 1024); err != nil {
		t.Fatal(err)
	}
	slow.drainWhile(t, func() bool { return !slow.seen[n+1] }, true)
	discarded := w.metric(t, destMetric("wharf_destination_discarded_total", "ISO.T", "topic"))
	if got := float64(slow.n-1) + discarded; got != n {
		t.Errorf("slow subscriber: %d received + %v discarded = %v, want %d", slow.n-1, discarded, got, n)
	}
	if slow.n-1 > prefetch+limit {
		t.Errorf("slow subscriber received %d of the %d messages, more than prefetch %d + limit %d", slow.n-1, n, prefetch, limit)
	}
	if !slow.seen[n] {
		t.Errorf("slow subscriber did not get the newest message %d", n)
	}
	t.Logf("topic ISO.T: fast subscriber %d/%d in order; slow subscriber %d received, %v discarded", n, n, slow.n-1, discarded)
}

// TestIsolationFloodedQueue: a STOMP producer floods queue ISO.C (memory
// limit 1 MiB, VM cursor) until flow control holds it (its send's
// receipt withheld, wharf_destination_blocked_producers 1); an OpenWire
// producer and STOMP consumer on ISO.D complete their messages
// meanwhile; the flood resumes once ISO.C is consumed and nothing is lost.
func TestIsolationFloodedQueue(t *testing.T) {
	w := startWharfChild(t, isolationPolicies)
	ctx, cancel := context.WithTimeout(context.Background(), isoTimeout)
	defer cancel()
	const nC = 1000 // 8 MiB: eight times the limit
	fl, err := dialSTOMP(ctx, w.target("stomp"), nil, 10*time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fl.close()
	var sent atomic.Int64
	errc := make(chan error, 1)
	go func() { errc <- sendStamped(ctx, fl, dest{name: "ISO.C"}, nC, isoBodyBytes, true, &sent) }()
	blocked := destMetric("wharf_destination_blocked_producers", "ISO.C", "queue")
	w.waitMetric(t, blocked, func(v float64) bool { return v >= 1 }, "flooding producer of ISO.C held by flow control")
	held := sent.Load()
	if err := runPair(ctx, w, "ISO.D", isoPairCount); err != nil {
		t.Fatalf("ISO.D beside a flow-controlled flood of ISO.C: %v", err)
	}
	if v := w.metric(t, blocked); v < 1 || sent.Load() >= nC {
		t.Fatalf("after ISO.D: ISO.C blocked producers %v, %d of %d sent: the flood was not held", v, sent.Load(), nC)
	}
	cs, err := dialSTOMP(ctx, w.target("stomp"), nil, 10*time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.close()
	sub, err := cs.subscribe(ctx, dest{name: "ISO.C"}, subOptions{ack: AckAuto})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= nC; i++ {
		d, err := sub.receive(ctx)
		if err != nil {
			t.Fatalf("ISO.C: %d of %d messages: %v", i-1, nC, err)
		}
		if st, err := readStamp(d.body); err != nil || st.seq != uint64(i) {
			t.Fatalf("ISO.C: message %d has sequence %d (%v)", i, st.seq, err)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	t.Logf("ISO.C: flood held at %d of %d sends while ISO.D moved %d messages; all %d delivered after", held, nC, isoPairCount, nC)
}

// TestIsolationMeasured is `make isolation`: the innocent pair's
// throughput alone and beside each interference, in interleaved windows
// of WHARF_ISOLATION_WINDOW (default 3s), WHARF_ISOLATION_REPEATS times
// (default 5); it prints the ratios of the medians and fails below 0.9.
func TestIsolationMeasured(t *testing.T) {
	if os.Getenv("WHARF_ISOLATION_MEASURE") == "" {
		t.Skip("timed comparison: run by `make isolation` (WHARF_ISOLATION_MEASURE=1)")
	}
	window := 3 * time.Second
	if v := os.Getenv("WHARF_ISOLATION_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("WHARF_ISOLATION_WINDOW=%q: %v", v, err)
		}
		window = d
	}
	repeats := 5
	if v := os.Getenv("WHARF_ISOLATION_REPEATS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("WHARF_ISOLATION_REPEATS=%q: want a positive count", v)
		}
		repeats = n
	}
	w := startWharfChild(t, isolationPolicies)
	ctx := context.Background()
	bufs := socketBufferBytes(t)

	// ISO.A's backlog: a new stalled consumer takes what fits in its
	// socket and closes its window; closing it gives the messages back.
	ps, err := dialOpenWire(ctx, w.target("openwire"), nil, 10*time.Second, true, false)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.close()
	if err := sendStamped(ctx, ps, dest{name: "ISO.A"}, 2*bufs/isoBodyBytes+100, isoBodyBytes, false, nil); err != nil {
		t.Fatal(err)
	}
	interference := []struct {
		name  string
		start func() (stop func())
	}{
		{"stalled consumer of ISO.A", func() func() {
			s := stallSTOMP(t, w.addrs["stomp"], "/queue/ISO.A", "ack:client-individual", "activemq.prefetchSize:10000")
			return func() { s.nc.Close() }
		}},
		{"producer flooding ISO.C", func() func() {
			fctx, cancel := context.WithCancel(ctx)
			fl, err := dialSTOMP(fctx, w.target("stomp"), nil, 10*time.Second, false, false)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { defer close(done); sendStamped(fctx, fl, dest{name: "ISO.C"}, 1<<30, isoBodyBytes, false, nil) }()
			w.waitMetric(t, destMetric("wharf_destination_blocked_producers", "ISO.C", "queue"), func(v float64) bool { return v >= 1 }, "flood held")
			// The flooder's write may be blocked on the socket (flow
			// control stops reading it): closing the socket ends it.
			return func() { cancel(); fl.(*stompSession).nc.Close(); <-done; fl.close() }
		}},
	}
	pair := startMeasuredPair(t, w, "ISO.B")
	defer pair.stop()
	for _, in := range interference {
		var alone, beside []float64
		for range repeats {
			alone = append(alone, pair.window(window))
			stop := in.start()
			beside = append(beside, pair.window(window))
			stop()
		}
		ma, mb := median(alone), median(beside)
		ratio := mb / ma
		fmt.Printf("isolation: ISO.B beside %s: %.0f msg/s alone, %.0f msg/s beside (medians of %d windows of %v): ratio %.2f\n",
			in.name, ma, mb, repeats, window, ratio)
		if ratio < 0.9 {
			t.Errorf("ISO.B beside %s: ratio %.2f < 0.9 (alone %v, beside %v)", in.name, ratio, alone, beside)
		}
	}
}

// measuredPair is a non-persistent OpenWire producer in closed loop
// (each send confirmed: a slower broker shows as fewer sends, not as a
// backlog) and a STOMP consumer on one queue, counting deliveries.
type measuredPair struct {
	received atomic.Int64
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	t        *testing.T
}

func startMeasuredPair(t *testing.T, w *wharfChild, q string) *measuredPair {
	ctx, cancel := context.WithCancel(context.Background())
	m := &measuredPair{cancel: cancel, t: t}
	cs, err := dialSTOMP(ctx, w.target("stomp"), nil, 10*time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cs.subscribe(ctx, dest{name: q}, subOptions{ack: AckAuto})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := dialOpenWire(ctx, w.target("openwire"), nil, 10*time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		defer ps.close()
		sendStamped(ctx, ps, dest{name: q}, 1<<40, 512, true, nil)
	}()
	go func() {
		defer m.wg.Done()
		defer cs.close()
		for {
			if _, err := sub.receive(ctx); err != nil {
				return
			}
			m.received.Add(1)
		}
	}()
	return m
}

// window is the pair's receive rate over d, in messages per second.
func (m *measuredPair) window(d time.Duration) float64 {
	n0, t0 := m.received.Load(), time.Now()
	time.Sleep(d) // a measuring window, not synchronisation
	return float64(m.received.Load()-n0) / time.Since(t0).Seconds()
}

func (m *measuredPair) stop() { m.cancel(); m.wg.Wait() }

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
