package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ioTimeout bounds every client read and write so a bug fails the test
// instead of hanging it.
const ioTimeout = 20 * time.Second

// eventually polls f until it returns nil or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		runtime.Gosched()
		<-time.After(time.Millisecond) // poll interval, not synchronisation
	}
}

// funcHandler is a Handler built from functions; nil ones do nothing.
type funcHandler struct {
	onData  func(b []byte) error
	onClose func(err error)
}

func (h *funcHandler) OnData(b []byte) error {
	if h.onData == nil {
		return nil
	}
	return h.onData(b)
}

func (h *funcHandler) OnClose(err error) {
	if h.onClose != nil {
		h.onClose(err)
	}
}

func echoFactory(c Conn) Handler {
	return &funcHandler{onData: c.Write}
}

func quietOptions() Options {
	return Options{NumEventLoop: 2, Logger: slog.New(slog.DiscardHandler)}
}

func listen(t *testing.T, f HandlerFactory, o Options) Listener {
	t.Helper()
	l, err := Listen("127.0.0.1:0", f, o)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func dial(t *testing.T, l Listener) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial %s: %v", l.Addr(), err)
	}
	_ = nc.SetDeadline(time.Now().Add(ioTimeout))
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// expectEOF reads until EOF, failing on any other error; it returns what
// was read before EOF.
func expectEOF(t *testing.T, nc net.Conn) []byte {
	t.Helper()
	b, err := io.ReadAll(nc)
	if err != nil {
		t.Fatalf("read until EOF: got %v after %d bytes, want EOF", err, len(b))
	}
	return b
}

// closeRecorder counts OnClose calls and keeps the errors.
type closeRecorder struct {
	mu   sync.Mutex
	errs []error
	ch   chan error // every OnClose error, buffered
}

func newCloseRecorder() *closeRecorder { return &closeRecorder{ch: make(chan error, 1024)} }

func (r *closeRecorder) record(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.ch <- err
}

func (r *closeRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.errs)
}

func (r *closeRecorder) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.ch:
		return err
	case <-time.After(ioTimeout):
		t.Fatal("OnClose not called")
		return nil
	}
}

func TestTransportEchoRoundTrip(t *testing.T) {
	l := listen(t, echoFactory, quietOptions())
	if p := l.Addr().(*net.TCPAddr).Port; p == 0 {
		t.Fatalf("Addr() port: got 0, want the bound port")
	}
	nc := dial(t, l)
	msg := []byte("hello, wharf")
	if _, err := nc.Write(msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(nc, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo: got %q, want %q", got, msg)
	}
}

func TestTransportConnAddresses(t *testing.T) {
	type addrs struct{ local, remote net.Addr }
	got := make(chan addrs, 1)
	l := listen(t, func(c Conn) Handler {
		got <- addrs{c.LocalAddr(), c.RemoteAddr()}
		return &funcHandler{}
	}, quietOptions())
	nc := dial(t, l)
	a := <-got
	if a.local.String() != l.Addr().String() {
		t.Errorf("LocalAddr: got %v, want %v", a.local, l.Addr())
	}
	if a.remote.String() != nc.LocalAddr().String() {
		t.Errorf("RemoteAddr: got %v, want %v", a.remote, nc.LocalAddr())
	}
}

func TestTransportConcurrentEcho(t *testing.T) {
	const conns, size = 50, 64 << 10
	l := listen(t, echoFactory, quietOptions())
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for i := range conns {
		nc := dial(t, l)
		wg.Go(func() {
			want := bytes.Repeat([]byte{byte('A' + i%26), byte(i)}, size/2)
			go func() { _, _ = nc.Write(want) }()
			got := make([]byte, len(want))
			if _, err := io.ReadFull(nc, got); err != nil {
				errs <- fmt.Errorf("conn %d: %w", i, err)
				return
			}
			if !bytes.Equal(got, want) {
				errs <- fmt.Errorf("conn %d: echoed bytes differ", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	eventually(t, 5*time.Second, func() error {
		if n := l.Conns(); n != conns {
			return fmt.Errorf("Conns: got %d, want %d", n, conns)
		}
		return nil
	})
}

// TestTransportWriteOrder checks that writes made from other goroutines
// arrive in the order each goroutine made them, with two writers
// interleaving on one connection.
func TestTransportWriteOrder(t *testing.T) {
	const writers, n = 2, 10000
	writeErr := make(chan error, writers)
	l := listen(t, func(c Conn) Handler {
		return &funcHandler{onData: func([]byte) error {
			for w := range writers {
				go func() {
					var err error
					for i := range n {
						if err = c.Write(fmt.Appendf(nil, "%d:%08d\n", w, i)); err != nil {
							break
						}
					}
					writeErr <- err
				}()
			}
			return nil
		}}
	}, quietOptions())
	nc := dial(t, l)
	if _, err := nc.Write([]byte("go")); err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	sc := bufio.NewScanner(nc)
	for total := 0; total < writers*n; total++ {
		if !sc.Scan() {
			t.Fatalf("after %d lines: %v", total, sc.Err())
		}
		w, i, ok := strings.Cut(sc.Text(), ":")
		wi, err1 := strconv.Atoi(w)
		ii, err2 := strconv.Atoi(i)
		if !ok || err1 != nil || err2 != nil || wi < 0 || wi >= writers {
			t.Fatalf("line %d: malformed %q", total, sc.Text())
		}
		if ii != next[wi] {
			t.Fatalf("writer %d: got message %d, want %d", wi, ii, next[wi])
		}
		next[wi]++
	}
	for range writers {
		if err := <-writeErr; err != nil {
			t.Fatalf("Write: %v", err)
		}
	}
}

func TestTransportWriteNotify(t *testing.T) {
	const n = 100
	dones := make(chan error, n)
	connCh := make(chan Conn, 1)
	closed := newCloseRecorder()
	l := listen(t, func(c Conn) Handler {
		connCh <- c
		return &funcHandler{onClose: closed.record}
	}, quietOptions())
	nc := dial(t, l)
	c := <-connCh
	var order []int
	var mu sync.Mutex
	for i := range n {
		err := c.WriteNotify([]byte("x"), func(err error) {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			dones <- err
		})
		if err != nil {
			t.Fatalf("WriteNotify %d: %v", i, err)
		}
	}
	for range n {
		select {
		case err := <-dones:
			if err != nil {
				t.Fatalf("done: got %v, want nil", err)
			}
		case <-time.After(ioTimeout):
			t.Fatal("done not called")
		}
	}
	mu.Lock()
	for i, v := range order {
		if v != i {
			t.Fatalf("done order: call %d was for write %d", i, v)
		}
	}
	mu.Unlock()
	got := make([]byte, n)
	if _, err := io.ReadFull(nc, got); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := closed.wait(t); err != nil {
		t.Fatalf("OnClose after Close: got %v, want nil", err)
	}
	called := false
	if err := c.WriteNotify([]byte("late"), func(error) { called = true }); !errors.Is(err, ErrClosed) {
		t.Fatalf("WriteNotify after close: got %v, want ErrClosed", err)
	}
	if called {
		t.Fatal("done called although WriteNotify returned an error")
	}
}

// TestTransportCloseFlushes queues more than the kernel buffers hold while
// the client is not reading, closes, and checks the client gets every byte
// before EOF.
func TestTransportCloseFlushes(t *testing.T) {
	// 8 MiB: on loopback the kernel takes about 4 MiB from a peer that is
	// not reading (send buffer autotuned up to tcp_wmem max, plus the
	// receive window); the rest waits in gnet's outbound buffer when Close
	// is called, which is the case under test.
	const size = 8 << 20
	// A pattern whose period (251, prime) does not divide the chunk size, so
	// a lost or repeated chunk shows.
	pattern := make([]byte, 251)
	for i := range pattern {
		pattern[i] = byte(i)
	}
	want := bytes.Repeat(pattern, size/len(pattern)+1)[:size]
	closedByServer := make(chan error, 1)
	closed := newCloseRecorder()
	l := listen(t, func(c Conn) Handler {
		return &funcHandler{
			onData: func([]byte) error {
				go func() {
					for off := 0; off < size; off += 32 << 10 {
						if err := c.Write(want[off : off+32<<10]); err != nil {
							closedByServer <- err
							return
						}
					}
					closedByServer <- c.Close()
				}()
				return nil
			},
			onClose: closed.record,
		}
	}, quietOptions())
	nc := dial(t, l)
	if _, err := nc.Write([]byte("go")); err != nil {
		t.Fatal(err)
	}
	if err := <-closedByServer; err != nil {
		t.Fatalf("server Write/Close: %v", err)
	}
	buf := make([]byte, 256<<10)
	got := 0
	for {
		n, err := nc.Read(buf)
		if n > 0 {
			if got+n > size || !bytes.Equal(buf[:n], want[got:got+n]) {
				t.Fatalf("client: bytes %d..%d differ from what was written", got, got+n)
			}
			got += n
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("client read after %d bytes: got %v, want EOF after %d", got, err, size)
		}
	}
	if got != size {
		t.Fatalf("client got %d bytes before EOF, want %d", got, size)
	}
	if err := closed.wait(t); err != nil {
		t.Fatalf("OnClose: got %v, want nil", err)
	}
}

// TestTransportOnDataErrorFlushesThenCloses checks the error frame a
// handler queues before failing reaches the client before EOF.
func TestTransportOnDataErrorFlushesThenCloses(t *testing.T) {
	errProto := errors.New("bad frame")
	closed := newCloseRecorder()
	l := listen(t, func(c Conn) Handler {
		return &funcHandler{
			onData: func([]byte) error {
				if err := c.Write([]byte("ERROR\n")); err != nil {
					return err
				}
				return errProto
			},
			onClose: closed.record,
		}
	}, quietOptions())
	nc := dial(t, l)
	if _, err := nc.Write([]byte("garbage")); err != nil {
		t.Fatal(err)
	}
	if got := expectEOF(t, nc); string(got) != "ERROR\n" {
		t.Fatalf("client got %q, want %q", got, "ERROR\n")
	}
	if err := closed.wait(t); !errors.Is(err, errProto) {
		t.Fatalf("OnClose: got %v, want %v", err, errProto)
	}
}

func TestTransportClientDisconnectClosesOnce(t *testing.T) {
	closed := newCloseRecorder()
	l := listen(t, func(c Conn) Handler {
		return &funcHandler{onData: c.Write, onClose: closed.record}
	}, quietOptions())
	nc := dial(t, l)
	if _, err := nc.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(nc, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	_ = nc.Close()
	if err := closed.wait(t); err != nil {
		t.Fatalf("OnClose after client FIN: got %v, want nil", err)
	}
	eventually(t, 5*time.Second, func() error {
		if n := l.Conns(); n != 0 {
			return fmt.Errorf("Conns: got %d, want 0", n)
		}
		return nil
	})
	if err := l.Close(); err != nil {
		t.Fatalf("Listener.Close: %v", err)
	}
	if n := closed.count(); n != 1 {
		t.Fatalf("OnClose calls: got %d, want 1", n)
	}
}

func TestTransportListenerCloseClosesAll(t *testing.T) {
	const conns = 5
	// Leftovers of earlier tests (timers firing, closing sockets) settle
	// first, so the baseline is this test's own.
	before := runtime.NumGoroutine()
	for round := range 2 {
		closed := newCloseRecorder()
		l, err := Listen("127.0.0.1:0", func(c Conn) Handler {
			return &funcHandler{onData: c.Write, onClose: closed.record}
		}, quietOptions())
		if err != nil {
			t.Fatalf("round %d: Listen: %v", round, err)
		}
		var ncs []net.Conn
		for range conns {
			nc := dial(t, l)
			if _, err := nc.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(nc, make([]byte, 1)); err != nil {
				t.Fatal(err)
			}
			ncs = append(ncs, nc)
		}
		if n := l.Conns(); n != conns {
			t.Fatalf("round %d: Conns: got %d, want %d", round, n, conns)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		// Close returned: every OnClose has run.
		if n := closed.count(); n != conns {
			t.Fatalf("round %d: OnClose calls when Close returned: got %d, want %d", round, n, conns)
		}
		for range conns {
			if err := <-closed.ch; !errors.Is(err, ErrListenerClosed) {
				t.Fatalf("round %d: OnClose: got %v, want ErrListenerClosed", round, err)
			}
		}
		if n := l.Conns(); n != 0 {
			t.Fatalf("round %d: Conns after Close: got %d, want 0", round, n)
		}
		for _, nc := range ncs {
			expectEOF(t, nc)
			_ = nc.Close()
		}
		if _, err := net.DialTimeout("tcp", l.Addr().String(), time.Second); err == nil {
			t.Fatalf("round %d: dial after Close succeeded", round)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("round %d: second Close: %v", round, err)
		}
	}
	eventually(t, 10*time.Second, func() error {
		if n := runtime.NumGoroutine(); n > before {
			return fmt.Errorf("goroutines: got %d, want <= %d (before the listeners)", n, before)
		}
		return nil
	})
}

func TestTransportListenBindError(t *testing.T) {
	l := listen(t, echoFactory, quietOptions())
	_, err := Listen(l.Addr().String(), echoFactory, quietOptions())
	if err == nil {
		t.Fatal("second Listen on a bound port: got nil error")
	}
	if _, err := Listen("127.0.0.1:0", nil, quietOptions()); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("nil factory: got %v, want ErrInvalidOptions", err)
	}
}

func TestTransportMaxConnections(t *testing.T) {
	var built atomic.Int32
	o := quietOptions()
	o.MaxConnections = 2
	l := listen(t, func(c Conn) Handler {
		built.Add(1)
		return &funcHandler{onData: c.Write}
	}, o)
	var kept []net.Conn
	for range 2 {
		nc := dial(t, l)
		if _, err := nc.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(nc, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, nc)
	}
	over := dial(t, l)
	if got := expectEOF(t, over); len(got) != 0 {
		t.Fatalf("refused connection got %q", got)
	}
	if n := built.Load(); n != 2 {
		t.Fatalf("handlers built: got %d, want 2", n)
	}
	if n := l.Conns(); n != 2 {
		t.Fatalf("Conns: got %d, want 2", n)
	}
	// A slot frees when a connection leaves.
	_ = kept[0].Close()
	eventually(t, 5*time.Second, func() error {
		if n := l.Conns(); n != 1 {
			return fmt.Errorf("Conns: got %d, want 1", n)
		}
		return nil
	})
	nc := dial(t, l)
	if _, err := nc.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(nc, make([]byte, 1)); err != nil {
		t.Fatalf("connection after a slot freed: %v", err)
	}
}

func TestTransportMaxOutboundBytes(t *testing.T) {
	const limit = 1 << 20
	o := quietOptions()
	o.MaxOutboundBytes = limit
	type result struct {
		written int
		err     error
	}
	res := make(chan result, 1)
	closed := newCloseRecorder()
	l := listen(t, func(c Conn) Handler {
		return &funcHandler{
			onData: func([]byte) error {
				go func() {
					chunk := make([]byte, 64<<10)
					written := 0
					for written < 1<<30 {
						if err := c.Write(chunk); err != nil {
							res <- result{written, err}
							return
						}
						written += len(chunk)
					}
					res <- result{written, nil}
				}()
				return nil
			},
			onClose: closed.record,
		}
	}, o)
	nc := dial(t, l)
	if _, err := nc.Write([]byte("go")); err != nil { // and never read
		t.Fatal(err)
	}
	var r result
	select {
	case r = <-res:
	case <-time.After(ioTimeout):
		t.Fatal("writer never stopped")
	}
	if !errors.Is(r.err, ErrOutboundFull) {
		t.Fatalf("Write after %d bytes: got %v, want ErrOutboundFull", r.written, r.err)
	}
	if err := closed.wait(t); !errors.Is(err, ErrOutboundFull) {
		t.Fatalf("OnClose: got %v, want ErrOutboundFull", err)
	}
	eventually(t, 5*time.Second, func() error {
		if n := l.Conns(); n != 0 {
			return fmt.Errorf("Conns: got %d, want 0", n)
		}
		return nil
	})
}

// syncBuffer is a bytes.Buffer safe for a slog handler on several loops.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTransportHandlerPanicClosesOnlyItsConn(t *testing.T) {
	var logs syncBuffer
	o := quietOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	closed := newCloseRecorder()
	ids := make(chan uint64, 2)
	l := listen(t, func(c Conn) Handler {
		ids <- c.ID()
		return &funcHandler{
			onData: func(b []byte) error {
				if string(b) == "boom" {
					panic("session bug")
				}
				return c.Write(b)
			},
			onClose: closed.record,
		}
	}, o)
	good := dial(t, l)
	goodID := <-ids
	bad := dial(t, l)
	badID := <-ids
	if _, err := bad.Write([]byte("boom")); err != nil {
		t.Fatal(err)
	}
	expectEOF(t, bad)
	if err := closed.wait(t); !errors.Is(err, ErrHandlerPanic) {
		t.Fatalf("OnClose of the panicking conn: got %v, want ErrHandlerPanic", err)
	}
	// The other connection and the listener carry on.
	if _, err := good.Write([]byte("still here")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("still here"))
	if _, err := io.ReadFull(good, got); err != nil || string(got) != "still here" {
		t.Fatalf("good conn after panic: got %q, %v", got, err)
	}
	third := dial(t, l)
	<-ids
	if _, err := third.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(third, make([]byte, 3)); err != nil {
		t.Fatalf("new conn after panic: %v", err)
	}
	out := logs.String()
	if n := strings.Count(out, `msg="handler panic`); n != 1 {
		t.Fatalf("panic log lines: got %d, want 1; logs:\n%s", n, out)
	}
	if !strings.Contains(out, "conn="+strconv.FormatUint(badID, 10)) || !strings.Contains(out, "remote="+bad.LocalAddr().String()) {
		t.Fatalf("panic log lacks conn=%d remote=%s:\n%s", badID, bad.LocalAddr(), out)
	}
	if closed.count() != 1 {
		t.Fatalf("OnClose calls: got %d, want 1 (conn %d must stay open)", closed.count(), goodID)
	}
}

// TestWriteChunkedOrder: writes of every size, from a few bytes to several
// outbound chunks, from a goroutine other than the loop, reach the peer
// whole and in order.
func TestWriteChunkedOrder(t *testing.T) {
	conns := make(chan Conn, 1)
	l := listen(t, func(c Conn) Handler {
		conns <- c
		return &funcHandler{onData: func([]byte) error { return nil }}
	}, quietOptions())
	nc := dial(t, l)
	c := <-conns
	rng := rand.New(rand.NewPCG(1, 2))
	var want []byte
	for i := range 2000 {
		n := 1 + rng.IntN(3000)
		if i%100 == 0 {
			n = chunkBytes + 1 + rng.IntN(2*chunkBytes) // larger than a chunk
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = byte(i + j)
		}
		want = append(want, b...)
		if err := c.Write(b); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	got := make([]byte, len(want))
	nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.ReadFull(nc, got); err != nil {
		t.Fatalf("read %d bytes: %v", len(want), err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && got[i] == want[i] {
			i++
		}
		t.Fatalf("stream differs from byte %d of %d", i, len(want))
	}
}
