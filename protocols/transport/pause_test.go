package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// gnetReadBytes is gnet's read buffer (WithReadBufferCap's default, which
// Listen keeps): the most one read moves from the socket into gnet.
const gnetReadBytes = 64 << 10

// pauseBufBytes is the socket buffer size the pause tests ask for on both
// ends of the paused connection, so the kernel's share is small and known.
const pauseBufBytes = 128 << 10

// pattern is the stream the pause tests send: byte i of the stream is
// i mod 251, so a lost, repeated or reordered byte shows.
func pattern(off, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte((off + i) % 251)
	}
	return b
}

// recorder is a Handler that keeps a copy of every byte OnData gets.
type recorder struct {
	mu     sync.Mutex
	b      []byte
	closes atomic.Int32
	closed chan error // every OnClose error, buffered
}

func newRecorder() *recorder { return &recorder{closed: make(chan error, 16)} }

func (r *recorder) OnData(b []byte) error {
	r.mu.Lock()
	r.b = append(r.b, b...)
	r.mu.Unlock()
	return nil
}

func (r *recorder) OnClose(err error) {
	r.closes.Add(1)
	r.closed <- err
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.b)
}

// check fails unless OnData got exactly pattern(0, n).
func (r *recorder) check(t *testing.T, n int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.b) != n {
		t.Fatalf("OnData got %d bytes, want %d", len(r.b), n)
	}
	if want := pattern(0, n); !bytes.Equal(r.b, want) {
		i := 0
		for i < n && r.b[i] == want[i] {
			i++
		}
		t.Fatalf("OnData bytes differ from what was sent at offset %d of %d", i, n)
	}
}

// waitLen waits until OnData got n bytes.
func (r *recorder) waitLen(t *testing.T, n int) {
	t.Helper()
	eventually(t, ioTimeout, func() error {
		if got := r.len(); got != n {
			return fmt.Errorf("OnData got %d bytes, want %d", got, n)
		}
		return nil
	})
}

// waitClose waits for OnClose and returns its error.
func (r *recorder) waitClose(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.closed:
		return err
	case <-time.After(ioTimeout):
		t.Fatal("OnClose not called")
		return nil
	}
}

// pauseServer listens with one event loop; the first connection gets a
// recorder, the others echo. It returns the listener, the recorder and a
// channel of the server's Conns, in accept order.
func pauseServer(t *testing.T) (Listener, *recorder, <-chan Conn) {
	t.Helper()
	o := quietOptions()
	o.NumEventLoop = 1 // every connection shares the paused one's loop
	rec := newRecorder()
	conns := make(chan Conn, 16)
	var n atomic.Int32
	l := listen(t, func(c Conn) Handler {
		conns <- c
		if n.Add(1) == 1 {
			return rec
		}
		return &funcHandler{onData: c.Write}
	}, o)
	return l, rec, conns
}

// accept returns the next server Conn.
func accept(t *testing.T, conns <-chan Conn) Conn {
	t.Helper()
	select {
	case c := <-conns:
		return c
	case <-time.After(ioTimeout):
		t.Fatal("no connection accepted")
		return nil
	}
}

// dialSmall dials l with a small send buffer and gives the server's socket
// a small receive buffer, so a paused connection fills the kernel quickly.
func dialSmall(t *testing.T, l Listener, conns <-chan Conn) (*net.TCPConn, Conn) {
	t.Helper()
	nc := dial(t, l).(*net.TCPConn)
	if err := nc.SetWriteBuffer(pauseBufBytes); err != nil {
		t.Fatalf("SetWriteBuffer: %v", err)
	}
	sc := accept(t, conns)
	onLoop(t, sc, func(c *conn) {
		if err := c.gc.SetReadBuffer(pauseBufBytes); err != nil {
			t.Errorf("server SetReadBuffer: %v", err)
		}
	})
	return nc, sc
}

// needReadStop skips the test where PauseReading cannot stop the socket's
// reads (off Linux, gnet's poll_opt build) and only holds input, and fails
// it where it should but cannot.
func needReadStop(t *testing.T, sc Conn) {
	t.Helper()
	var err error
	onLoop(t, sc, func(c *conn) { _, err = pollerFD(c.gc.EventLoop()) })
	switch {
	case err != nil && readStopBuilt:
		t.Fatalf("pollerFD: %v: gnet's internals differ from what readctl_linux.go reads, PauseReading only holds input", err)
	case err != nil:
		t.Skipf("reads of a paused socket cannot be stopped here: %v", err)
	}
}

// waitPaused waits until the loop has applied the pause and reports the
// input gnet holds for the connection.
func waitPaused(t *testing.T, sc Conn) (held int) {
	t.Helper()
	eventually(t, ioTimeout, func() error {
		var paused bool
		onLoop(t, sc, func(c *conn) { paused, held = c.rdPaused, c.gc.InboundBuffered() })
		if !paused {
			return errors.New("pause not applied on the loop")
		}
		return nil
	})
	return held
}

// pauseBound is the most a client may write to a paused server connection
// before its writes block: both kernels' buffers (each may hold twice what
// was asked, Linux's bookkeeping; the receive side is also bounded by
// tcp_rmem's maximum should the kernel ignore the request), one read held
// by gnet, and 1 MiB of slack for the kernel's accounting.
func pauseBound(t *testing.T) int {
	t.Helper()
	rmemMax := 8 << 20
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_rmem")
		if err != nil {
			t.Fatalf("read tcp_rmem: %v", err)
		}
		f := strings.Fields(string(b))
		if n, err := strconv.Atoi(f[len(f)-1]); err == nil && len(f) == 3 {
			rmemMax = n
		}
	}
	return 2*pauseBufBytes + min(2*pauseBufBytes, rmemMax) + gnetReadBytes + 1<<20
}

// writeUntilBlocked writes the pattern from off until a write stays blocked
// for 200 ms (its deadline expires), failing if more than limit bytes go
// through first. It returns the new offset.
func writeUntilBlocked(t *testing.T, nc net.Conn, off, limit int) int {
	t.Helper()
	const chunk = 32 << 10
	for start := off; off-start <= limit; {
		_ = nc.SetWriteDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := nc.Write(pattern(off, chunk))
		off += n
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				_ = nc.SetWriteDeadline(time.Now().Add(ioTimeout))
				return off
			}
			t.Fatalf("client write at %d: %v", off, err)
		}
	}
	t.Fatalf("client wrote %d bytes to a paused connection without blocking (bound %d): the server still reads", off, limit)
	return off
}

// echo checks that nc echoes a message.
func echo(t *testing.T, nc net.Conn, msg string) {
	t.Helper()
	if _, err := nc.Write([]byte(msg)); err != nil {
		t.Fatalf("echo write: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != msg {
		t.Fatalf("echo: got %q, %v; want %q", got, err, msg)
	}
}

// TestTransportPauseBlocksSenderAndResumeDelivers pauses a connection whose
// client keeps writing: OnData gets nothing more, gnet holds at most one
// read, the client's writes block (a write deadline expires), and another
// connection on the same event loop keeps echoing. After ResumeReading,
// from another goroutine, the client's blocked write completes and every
// byte reaches OnData, in order.
func TestTransportPauseBlocksSenderAndResumeDelivers(t *testing.T) {
	l, rec, conns := pauseServer(t)
	nc, sc := dialSmall(t, l, conns)
	needReadStop(t, sc)

	off := 4096
	if _, err := nc.Write(pattern(0, off)); err != nil {
		t.Fatal(err)
	}
	rec.waitLen(t, off)

	sc.PauseReading()
	sc.PauseReading() // idempotent
	waitPaused(t, sc)

	off = writeUntilBlocked(t, nc, off, pauseBound(t))
	if got := rec.len(); got != 4096 {
		t.Fatalf("OnData got %d bytes while paused, want none after the first 4096", got-4096)
	}
	if held := waitPaused(t, sc); held > gnetReadBytes {
		t.Fatalf("gnet holds %d bytes for the paused connection, want at most one read (%d)", held, gnetReadBytes)
	}

	// The loop serves the other connections meanwhile.
	other := dial(t, l)
	accept(t, conns)
	echo(t, other, "still serving")

	resumed := make(chan struct{})
	go func() {
		sc.ResumeReading()
		sc.ResumeReading() // idempotent
		close(resumed)
	}()
	<-resumed
	// The blocked client now gets through: a write far larger than every
	// buffer on the way completes within the deadline.
	const more = 4 << 20
	if _, err := nc.Write(pattern(off, more)); err != nil {
		t.Fatalf("client write after ResumeReading: %v", err)
	}
	off += more
	rec.waitLen(t, off)
	rec.check(t, off)
	echo(t, other, "and after")
}

// TestTransportPauseWritesFlow checks that a paused connection still sends:
// the server writes bursts larger than the kernel's buffers, so each spills
// into gnet's outbound buffer and drains (gnet's flush would watch the
// socket for reading again each time); the client reads them all while its
// own writes stay blocked, OnData gets nothing and gnet holds at most one
// read. After ResumeReading every byte arrives.
func TestTransportPauseWritesFlow(t *testing.T) {
	l, rec, conns := pauseServer(t)
	nc, sc := dialSmall(t, l, conns)
	needReadStop(t, sc)
	if err := nc.SetReadBuffer(pauseBufBytes); err != nil {
		t.Fatal(err)
	}
	onLoop(t, sc, func(c *conn) {
		if err := c.gc.SetWriteBuffer(pauseBufBytes); err != nil {
			t.Errorf("server SetWriteBuffer: %v", err)
		}
	})
	sc.PauseReading()
	waitPaused(t, sc)
	off := writeUntilBlocked(t, nc, 0, pauseBound(t))

	const bursts, burst, chunk = 8, 1 << 20, 32 << 10
	for i := range bursts {
		for j := 0; j < burst; j += chunk {
			if err := sc.Write(pattern(i*burst+j, chunk)); err != nil {
				t.Fatalf("server write: %v", err)
			}
		}
		got := make([]byte, burst)
		if _, err := io.ReadFull(nc, got); err != nil {
			t.Fatalf("client read of burst %d: %v", i, err)
		}
		if !bytes.Equal(got, pattern(i*burst, burst)) {
			t.Fatalf("burst %d: client got other bytes than the server wrote", i)
		}
		if held := waitPaused(t, sc); held > gnetReadBytes {
			t.Fatalf("after burst %d gnet holds %d bytes, want at most one read (%d)", i, held, gnetReadBytes)
		}
	}
	if got := rec.len(); got != 0 {
		t.Fatalf("OnData got %d bytes while paused, want 0", got)
	}
	sc.ResumeReading()
	rec.waitLen(t, off)
	rec.check(t, off)
}

// TestTransportPauseHeldInputDeliveredOnResume covers input gnet read
// before the pause took the socket out of the poller (here: every byte,
// the poller being made unreachable, as off Linux): it is held while
// paused and delivered on ResumeReading without any new byte arriving.
func TestTransportPauseHeldInputDeliveredOnResume(t *testing.T) {
	l, rec, conns := pauseServer(t)
	nc := dial(t, l)
	sc := accept(t, conns)
	onLoop(t, sc, func(c *conn) { c.rdLooked, c.epfd = true, -1 }) // as if pollerFD had failed

	sc.PauseReading()
	waitPaused(t, sc)
	const n = 100 << 10
	if _, err := nc.Write(pattern(0, n)); err != nil {
		t.Fatal(err)
	}
	eventually(t, ioTimeout, func() error {
		if held := waitPaused(t, sc); held != n {
			return fmt.Errorf("gnet holds %d bytes, want %d", held, n)
		}
		return nil
	})
	if got := rec.len(); got != 0 {
		t.Fatalf("OnData got %d bytes while paused, want 0", got)
	}
	sc.ResumeReading()
	rec.waitLen(t, n)
	rec.check(t, n)

	// Reading goes on normally afterwards.
	if _, err := nc.Write(pattern(n, 10)); err != nil {
		t.Fatal(err)
	}
	rec.waitLen(t, n+10)
	rec.check(t, n+10)
}

// TestTransportPauseHeldInputBounded checks the fallback's bound: where the
// socket cannot be left unread, a paused connection holding more than
// maxHeldInboundBytes is cut with ErrInboundFull, OnClose once.
func TestTransportPauseHeldInputBounded(t *testing.T) {
	l, rec, conns := pauseServer(t)
	nc := dial(t, l)
	sc := accept(t, conns)
	onLoop(t, sc, func(c *conn) { c.rdLooked, c.epfd = true, -1 })
	sc.PauseReading()
	waitPaused(t, sc)

	go func() {
		// Until the server cuts the connection.
		for off := 0; off < 4*maxHeldInboundBytes; off += 64 << 10 {
			if _, err := nc.Write(pattern(off, 64<<10)); err != nil {
				return
			}
		}
	}()
	if err := rec.waitClose(t); !errors.Is(err, ErrInboundFull) {
		t.Fatalf("OnClose: got %v, want ErrInboundFull", err)
	}
	if got := rec.len(); got != 0 {
		t.Fatalf("OnData got %d bytes while paused, want 0", got)
	}
	if got := rec.closes.Load(); got != 1 {
		t.Fatalf("OnClose calls: got %d, want 1", got)
	}
}

// TestTransportPauseResumeConcurrent toggles PauseReading and ResumeReading
// from several goroutines while the client streams; after a last
// ResumeReading every byte arrives, in order. Run with -race.
func TestTransportPauseResumeConcurrent(t *testing.T) {
	l, rec, conns := pauseServer(t)
	nc, sc := dialSmall(t, l, conns)

	const total = 4 << 20
	wrote := make(chan error, 1)
	go func() {
		var err error
		for off := 0; off < total && err == nil; off += 32 << 10 {
			_, err = nc.Write(pattern(off, 32<<10))
		}
		wrote <- err
	}()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 300 {
				if (i+g)%2 == 0 {
					sc.PauseReading()
				} else {
					sc.ResumeReading()
				}
				if i%16 == 0 {
					time.Sleep(100 * time.Microsecond) // let the loop apply some of them
				}
			}
		})
	}
	wg.Wait()
	sc.ResumeReading()
	if err := <-wrote; err != nil {
		t.Fatalf("client write: %v", err)
	}
	rec.waitLen(t, total)
	rec.check(t, total)
}

// TestTransportPauseClose closes paused connections every way: OnClose runs
// exactly once, with the usual error.
func TestTransportPauseClose(t *testing.T) {
	tests := []struct {
		name    string
		close   func(t *testing.T, l Listener, nc *net.TCPConn, sc Conn)
		wantErr error // nil: OnClose(nil); errAny: whatever error, or nil
	}{
		{
			name: "server Close drops the input and ends with a FIN",
			close: func(t *testing.T, _ Listener, nc *net.TCPConn, sc Conn) {
				if err := sc.Close(); err != nil {
					t.Fatal(err)
				}
				// The input left unread while paused is read and dropped
				// before the socket is closed: the client sees EOF, not a
				// reset.
				expectEOF(t, nc)
			},
		},
		{
			// gnet reports the reset of a socket it is not reading (EPOLLHUP,
			// EPOLLERR) as io.EOF, so OnClose gets nil here, where a read
			// would have given ECONNRESET.
			name: "client reset",
			close: func(t *testing.T, _ Listener, nc *net.TCPConn, _ Conn) {
				_ = nc.SetLinger(0) // close sends RST
				_ = nc.Close()
			},
			wantErr: errAny,
		},
		{
			name: "listener closed",
			close: func(t *testing.T, l Listener, _ *net.TCPConn, _ Conn) {
				_ = l.Close()
			},
			wantErr: ErrListenerClosed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, rec, conns := pauseServer(t)
			nc, sc := dialSmall(t, l, conns)
			needReadStop(t, sc)
			sc.PauseReading()
			waitPaused(t, sc)
			writeUntilBlocked(t, nc, 0, pauseBound(t))

			tc.close(t, l, nc, sc)
			err := rec.waitClose(t)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("OnClose: got %v, want nil", err)
			case tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("OnClose: got %v, want %v", err, tc.wantErr)
			}
			if got := rec.len(); got != 0 {
				t.Fatalf("OnData got %d bytes while paused, want 0", got)
			}
			_ = l.Close() // OnClose runs on the loop: once it has exited, no second call can come
			if got := rec.closes.Load(); got != 1 {
				t.Fatalf("OnClose calls: got %d, want 1", got)
			}
			sc.ResumeReading() // after the close: does nothing
			sc.PauseReading()
		})
	}
}

// errAny in a wantErr accepts any OnClose error, nil included.
var errAny = errors.New("any error")

// TestTransportPauseFromFactoryAndOnData pauses in the factory (the
// connection starts paused) and again inside every OnData call: each
// ResumeReading then delivers one batch (the input held so far, or one
// read) and no more, until the whole stream is in, in order.
func TestTransportPauseFromFactoryAndOnData(t *testing.T) {
	o := quietOptions()
	o.NumEventLoop = 1
	rec := newRecorder()
	var calls atomic.Int32
	conns := make(chan Conn, 1)
	l := listen(t, func(c Conn) Handler {
		c.PauseReading()
		conns <- c
		return &funcHandler{onData: func(b []byte) error {
			calls.Add(1)
			c.PauseReading()
			return rec.OnData(b)
		}}
	}, o)
	nc := dial(t, l)
	sc := accept(t, conns)
	const n = 256 << 10
	if _, err := nc.Write(pattern(0, n)); err != nil {
		t.Fatal(err)
	}
	waitPaused(t, sc)
	if got := rec.len(); got != 0 {
		t.Fatalf("OnData got %d bytes before the first ResumeReading, want 0", got)
	}
	for want := int32(1); rec.len() < n; want++ {
		sc.ResumeReading()
		eventually(t, ioTimeout, func() error {
			if got := calls.Load(); got != want {
				return fmt.Errorf("OnData calls: got %d, want %d", got, want)
			}
			return nil
		})
		waitPaused(t, sc)
		if got := calls.Load(); got != want {
			t.Fatalf("OnData calls after pausing in OnData: got %d, want %d", got, want)
		}
	}
	rec.check(t, n)
}
