package transport

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
)

// notifyChunk is the size of the writes in the WriteNotify back-pressure
// tests.
const notifyChunk = 64 << 10

// kernelBound is the most payload the kernel can hold for a connection whose
// client set its receive buffer to rcvBuf and never reads, plus a stated
// slack: the server's send buffer grows at most to tcp_wmem's maximum
// (Linux; 8 MiB assumed elsewhere), the client's receive buffer holds at
// most twice what SetReadBuffer asked for (Linux doubles it, for its
// bookkeeping), and 1 MiB of slack covers the kernel's accounting, which
// may let a queue exceed its limit by a packet or so.
func kernelBound(t *testing.T, rcvBuf int) int {
	t.Helper()
	wmemMax := 8 << 20
	if runtime.GOOS == "linux" {
		b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_wmem")
		if err != nil {
			t.Fatalf("read tcp_wmem: %v", err)
		}
		f := strings.Fields(string(b))
		n, err := strconv.Atoi(f[len(f)-1])
		if err != nil || len(f) != 3 {
			t.Fatalf("tcp_wmem %q: want min default max", b)
		}
		wmemMax = n
	}
	const slack = 1 << 20
	return wmemMax + 2*rcvBuf + slack
}

// onLoop runs f on c's event loop and waits for it: f then sees the loop's
// own state (gnet's outbound buffer, Wharf's queue) consistently.
func onLoop(t *testing.T, c Conn, f func(c *conn)) {
	t.Helper()
	cc := c.(*conn)
	ran := make(chan struct{})
	cc.mu.Lock() // see post: the loop is alive while mu is held and closed is false
	if cc.closed {
		cc.mu.Unlock()
		t.Fatal("onLoop: connection closed")
	}
	err := cc.gc.EventLoop().Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		f(cc)
		close(ran)
		return nil
	}))
	cc.mu.Unlock()
	if err != nil {
		t.Fatalf("onLoop: %v", err)
	}
	select {
	case <-ran:
	case <-time.After(ioTimeout):
		t.Fatal("onLoop: task did not run")
	}
}

// stalled reports, from the loop, whether everything the server wrote has
// been given to gnet and gnet still holds some of it: the kernel's buffers
// are full.
func stalled(c *conn) bool {
	c.mu.Lock()
	queued := len(c.pending)
	c.mu.Unlock()
	return queued == 0 && c.gc.OutboundBuffered() > 0
}

// firstErr keeps the first failure seen off the test goroutine.
type firstErr struct {
	mu  sync.Mutex
	err error
}

func (f *firstErr) set(format string, args ...any) {
	f.mu.Lock()
	if f.err == nil {
		f.err = fmt.Errorf(format, args...)
	}
	f.mu.Unlock()
}

func (f *firstErr) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// dialNotReading dials l with a small, fixed receive buffer (so the kernel's
// share is known) and sends "go".
func dialNotReading(t *testing.T, l Listener, rcvBuf int) *net.TCPConn {
	t.Helper()
	nc := dial(t, l).(*net.TCPConn)
	if err := nc.SetReadBuffer(rcvBuf); err != nil {
		t.Fatalf("SetReadBuffer: %v", err)
	}
	if _, err := nc.Write([]byte("go")); err != nil {
		t.Fatal(err)
	}
	return nc
}

// TestTransportWriteNotifyBackPressure checks that WriteNotify callbacks wait
// for the bytes to leave gnet's outbound buffer. The server writes 64 KiB
// chunks from another goroutine with a window of 16 un-notified chunks, as
// a protocol's prefetch would; the client reads nothing. Every callback
// that runs before the client reads checks that the chunks notified so far
// fit in the kernel's buffers (kernelBound): the count of callbacks stops
// growing with the kernel full, so the writer stalls with its window out
// and gnet's buffer non-empty, short of the end. Then the client reads
// everything and every callback runs, with nil, in order.
func TestTransportWriteNotifyBackPressure(t *testing.T) {
	const window, rcvBuf = 16, 256 << 10
	bound := kernelBound(t, rcvBuf)
	total := bound/notifyChunk + window + 16 // more than the kernel and the window can hold
	var (
		fail      firstErr
		written   atomic.Int64 // WriteNotify calls that returned nil
		notified  atomic.Int64 // callbacks run
		reading   atomic.Bool  // the client has started to read
		writerErr = make(chan error, 1)
		connCh    = make(chan Conn, 1)
	)
	l := listen(t, func(c Conn) Handler {
		connCh <- c
		return &funcHandler{onData: func([]byte) error {
			go func() {
				credits := make(chan struct{}, window)
				buf := make([]byte, notifyChunk)
				for i := range total {
					credits <- struct{}{}
					for j := range buf {
						buf[j] = byte(i)
					}
					err := c.WriteNotify(buf, func(err error) {
						n := notified.Add(1)
						switch {
						case err != nil:
							fail.set("callback of chunk %d: got %v, want nil", i, err)
						case n != int64(i)+1:
							fail.set("callback of chunk %d ran as number %d", i, n)
						case !reading.Load() && n*notifyChunk > int64(bound):
							fail.set("%d callbacks (%d bytes) ran while the client read nothing; the kernel holds at most %d",
								n, n*notifyChunk, bound)
						}
						<-credits
					})
					if err != nil {
						writerErr <- fmt.Errorf("WriteNotify %d: %w", i, err)
						return
					}
					written.Add(1)
				}
				writerErr <- nil
			}()
			return nil
		}}
	}, quietOptions())
	nc := dialNotReading(t, l, rcvBuf)
	c := <-connCh

	// Wait for the stall: the writer has its whole window out and all of it
	// is with gnet, which still holds bytes the kernel would not take.
	var atStall int64
	eventually(t, ioTimeout, func() error {
		if err := fail.get(); err != nil {
			t.Fatal(err)
		}
		ok := false
		onLoop(t, c, func(c *conn) {
			atStall = notified.Load()
			ok = stalled(c) && written.Load()-atStall == window
		})
		if !ok {
			return fmt.Errorf("no stall: %d written, %d notified of %d", written.Load(), notified.Load(), total)
		}
		return nil
	})
	if atStall+window >= int64(total) {
		t.Fatalf("stalled after %d callbacks: the writer was not held back (%d chunks)", atStall, total)
	}
	t.Logf("client not reading: %d callbacks (%d KiB) of %d, bound %d KiB", atStall, atStall*notifyChunk>>10, total, bound>>10)

	reading.Store(true)
	buf := make([]byte, 256<<10)
	for got := 0; got < total*notifyChunk; {
		n, err := nc.Read(buf)
		for k, b := range buf[:n] {
			if want := byte((got + k) / notifyChunk); b != want {
				t.Fatalf("client: byte %d is %d, want %d", got+k, b, want)
			}
		}
		got += n
		if err != nil {
			t.Fatalf("client read after %d bytes: %v", got, err)
		}
	}
	if err := <-writerErr; err != nil {
		t.Fatal(err)
	}
	eventually(t, ioTimeout, func() error {
		if n := notified.Load(); n != int64(total) {
			return fmt.Errorf("callbacks: got %d, want %d", n, total)
		}
		return nil
	})
	if err := fail.get(); err != nil {
		t.Fatal(err)
	}
}

// TestTransportWriteNotifyWaitingFailOnClose stalls a connection as above,
// with callbacks waiting on gnet's buffer, then has the client reset it:
// every callback runs exactly once, in order, those of the bytes the kernel
// took with nil and the rest with an error, and OnClose runs once after
// them.
func TestTransportWriteNotifyWaitingFailOnClose(t *testing.T) {
	const rcvBuf = 256 << 10
	total := kernelBound(t, rcvBuf)/notifyChunk + 16 // more than the kernel holds
	var (
		fail      firstErr
		mu        sync.Mutex
		results   []error // per chunk, in callback order
		closedN   atomic.Int32
		written   atomic.Int64
		writerErr = make(chan error, 1)
		connCh    = make(chan Conn, 1)
	)
	closed := newCloseRecorder()
	l := listen(t, func(c Conn) Handler {
		connCh <- c
		return &funcHandler{
			onData: func([]byte) error {
				go func() {
					chunk := make([]byte, notifyChunk)
					for i := range total {
						err := c.WriteNotify(chunk, func(err error) {
							mu.Lock()
							if len(results) != i {
								fail.set("callback of chunk %d ran as number %d", i, len(results)+1)
							}
							results = append(results, err)
							mu.Unlock()
							if closedN.Load() != 0 {
								fail.set("callback of chunk %d ran after OnClose", i)
							}
						})
						if err != nil {
							writerErr <- fmt.Errorf("WriteNotify %d: %w", i, err)
							return
						}
						written.Add(1)
					}
					writerErr <- nil
				}()
				return nil
			},
			onClose: func(err error) {
				closedN.Add(1)
				closed.record(err)
			},
		}
	}, quietOptions())
	nc := dialNotReading(t, l, rcvBuf)
	c := <-connCh
	if err := <-writerErr; err != nil {
		t.Fatal(err)
	}
	eventually(t, ioTimeout, func() error {
		ok, waiting := false, 0
		onLoop(t, c, func(c *conn) {
			if c.sl != nil {
				waiting = len(c.sl.waiting) - c.sl.wHead
			}
			ok = stalled(c) && waiting > 0
		})
		if !ok {
			return fmt.Errorf("no stall: %d callbacks waiting", waiting)
		}
		return nil
	})
	if err := nc.SetLinger(0); err != nil { // close with RST: the unread bytes are lost
		t.Fatal(err)
	}
	_ = nc.Close()
	closed.wait(t)
	mu.Lock()
	defer mu.Unlock()
	if len(results) != total {
		t.Fatalf("callbacks when OnClose ran: got %d, want %d", len(results), total)
	}
	firstFailed := total
	for i, err := range results {
		switch {
		case err == nil && i > firstFailed:
			t.Fatalf("callback %d: nil after callback %d failed", i, firstFailed)
		case err != nil && firstFailed == total:
			firstFailed = i
		}
	}
	if firstFailed == total {
		t.Fatal("every callback got nil, but gnet still held bytes when the client reset")
	}
	if err := fail.get(); err != nil {
		t.Fatal(err)
	}
	if n := closed.count(); n != 1 {
		t.Fatalf("OnClose calls: got %d, want 1", n)
	}
	t.Logf("%d callbacks with nil, %d failed (%v)", firstFailed, total-firstFailed, results[firstFailed])
}
