package transport

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
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

// listenTLS starts a TLS listener and closes it at the end of the test.
func listenTLS(t *testing.T, f HandlerFactory, o Options, cfg *tls.Config) Listener {
	t.Helper()
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := ListenTLS("127.0.0.1:0", f, o, cfg)
	if err != nil {
		t.Fatalf("ListenTLS: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// dialTLS connects and completes the client handshake.
func dialTLS(t *testing.T, l Listener, cfg *tls.Config) *tls.Conn {
	t.Helper()
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: ioTimeout}, "tcp", l.Addr().String(), cfg)
	if err != nil {
		t.Fatalf("tls dial %s: %v", l.Addr(), err)
	}
	_ = nc.SetDeadline(time.Now().Add(ioTimeout))
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// logTo returns a logger writing text lines to buf, from Info up.
func logTo(buf *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// echoOnce writes msg on nc and checks it comes back.
func echoOnce(t *testing.T, nc net.Conn, msg string) {
	t.Helper()
	if _, err := nc.Write([]byte(msg)); err != nil {
		t.Fatalf("echo write: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(nc, got); err != nil || string(got) != msg {
		t.Fatalf("echo: got %q, %v; want %q", got, err, msg)
	}
}

// countingEcho is an echo factory that counts the Handlers it made.
func countingEcho(n *atomic.Int32) HandlerFactory {
	return func(c Conn) Handler {
		n.Add(1)
		return &funcHandler{onData: c.Write}
	}
}

// waitLog waits until the log holds every one of parts on one line, and
// returns that line.
func waitLog(t *testing.T, logs *syncBuffer, parts ...string) string {
	t.Helper()
	var found string
	eventually(t, ioTimeout, func() error {
		for _, line := range strings.Split(logs.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				found = line
				return nil
			}
		}
		return fmt.Errorf("no log line with %q in:\n%s", parts, logs.String())
	})
	return found
}

func TestTransportTLSListenRefusesBadArguments(t *testing.T) {
	p := newTestPKI(t)
	for _, tc := range []struct {
		name string
		addr string
		cfg  *tls.Config
		o    Options
	}{
		{"nil config", "127.0.0.1:0", nil, Options{}},
		{"no server certificate", "127.0.0.1:0", &tls.Config{}, Options{}},
		{"scheme in address", "ssl://127.0.0.1:0", p.serverConfig(tls.NoClientCert), Options{}},
		{"negative handshake timeout", "127.0.0.1:0", p.serverConfig(tls.NoClientCert), Options{TLSHandshakeTimeout: -1}},
		{"negative pending handshakes", "127.0.0.1:0", p.serverConfig(tls.NoClientCert), Options{MaxPendingHandshakes: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ListenTLS(tc.addr, echoFactory, tc.o, tc.cfg)
			if err == nil {
				_ = l.Close()
				t.Fatal("ListenTLS succeeded, want ErrInvalidOptions")
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("got %v, want ErrInvalidOptions", err)
			}
		})
	}
}

// TestTransportTLSEchoSizesAndSplits echoes messages of many sizes, each
// written in random splits, over one connection: what OnData gets and what
// comes back is the stream sent, byte for byte.
func TestTransportTLSEchoSizesAndSplits(t *testing.T) {
	p := newTestPKI(t)
	l := listenTLS(t, echoFactory, Options{}, p.serverConfig(tls.NoClientCert))
	nc := dialTLS(t, l, p.clientConfig(nil))
	rng := rand.New(rand.NewPCG(1, 2))
	off := 0
	for _, size := range []int{1, 2, 100, 4095, 16 << 10, 16<<10 + 1, 100_000, 1 << 20} {
		msg := pattern(off, size)
		off += size
		werr := make(chan error, 1)
		go func() {
			for rest := msg; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(40_000))
				if _, err := nc.Write(rest[:n]); err != nil {
					werr <- err
					return
				}
				rest = rest[n:]
			}
			werr <- nil
		}()
		got := make([]byte, size)
		if _, err := io.ReadFull(nc, got); err != nil {
			t.Fatalf("size %d: read echo: %v", size, err)
		}
		if err := <-werr; err != nil {
			t.Fatalf("size %d: write: %v", size, err)
		}
		if !bytes.Equal(got, msg) {
			t.Fatalf("size %d: echo differs from what was sent", size)
		}
	}
}

// TestTransportTLSConnectionStateInFactory checks that the factory runs
// after the handshake: the Conn is a TLSConn whose state is complete and
// whose verified chain PeerCertificates returns.
func TestTransportTLSConnectionStateInFactory(t *testing.T) {
	p := newTestPKI(t)
	type seen struct {
		complete bool
		isTLS    bool
		cn       string
		chainLen int
	}
	got := make(chan seen, 4)
	f := func(c Conn) Handler {
		var s seen
		if tc, ok := c.(TLSConn); ok {
			s.complete = tc.ConnectionState().HandshakeComplete
		}
		certs, isTLS := PeerCertificates(c)
		s.isTLS, s.chainLen = isTLS, len(certs)
		if len(certs) > 0 {
			s.cn = certs[0].Subject.CommonName
		}
		got <- s
		return &funcHandler{onData: c.Write}
	}
	l := listenTLS(t, f, Options{}, p.serverConfig(tls.VerifyClientCertIfGiven))

	nc := dialTLS(t, l, p.clientConfig(&p.client))
	echoOnce(t, nc, "hello")
	if s := <-got; !s.complete || !s.isTLS || s.cn != "client" || s.chainLen != 2 {
		t.Fatalf("with a client certificate the factory saw %+v, want complete, tls, cn client, chain of 2 (leaf, CA)", s)
	}
	anon := dialTLS(t, l, p.clientConfig(nil))
	echoOnce(t, anon, "hello")
	if s := <-got; !s.complete || !s.isTLS || s.chainLen != 0 {
		t.Fatalf("without a client certificate the factory saw %+v, want complete, tls, no chain", s)
	}

	// A plain TCP connection is no TLSConn.
	plain := listen(t, func(c Conn) Handler {
		_, isTLS := PeerCertificates(c)
		got <- seen{isTLS: isTLS}
		return &funcHandler{}
	}, quietOptions())
	dial(t, plain)
	if s := <-got; s.isTLS {
		t.Fatal("PeerCertificates reports a plain TCP connection as TLS")
	}
}

// TestTransportTLSClientCertificates runs clients with and without
// certificates against a server requiring them and one taking them if
// given: a refused handshake is logged once with the client's address and
// the reason, makes no Handler, and a good connection carries on.
func TestTransportTLSClientCertificates(t *testing.T) {
	p := newTestPKI(t)
	for _, tc := range []struct {
		name    string
		auth    tls.ClientAuthType
		cert    *tls.Certificate
		wantErr string // in the log's reason; "" means the client gets through
	}{
		{"required, valid certificate", tls.RequireAndVerifyClientCert, &p.client, ""},
		{"required, no certificate", tls.RequireAndVerifyClientCert, nil, "client sent no certificate, one is required"},
		{"required, expired certificate", tls.RequireAndVerifyClientCert, &p.expired, "client certificate rejected: x509: certificate has expired"},
		{"required, untrusted certificate", tls.RequireAndVerifyClientCert, &p.untrusted, "client certificate rejected: x509: certificate signed by unknown authority"},
		{"optional, no certificate", tls.VerifyClientCertIfGiven, nil, ""},
		{"optional, valid certificate", tls.VerifyClientCertIfGiven, &p.client, ""},
		{"optional, untrusted certificate", tls.VerifyClientCertIfGiven, &p.untrusted, "client certificate rejected: x509: certificate signed by unknown authority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			var made atomic.Int32
			l := listenTLS(t, countingEcho(&made), Options{Logger: logTo(&logs)}, p.serverConfig(tc.auth))
			good := dialTLS(t, l, p.clientConfig(&p.client))
			echoOnce(t, good, "before")

			// TLS 1.3 ends the client's handshake before the server has
			// checked its certificate: the refusal shows on the first read.
			nc, err := tls.DialWithDialer(&net.Dialer{Timeout: ioTimeout}, "tcp", l.Addr().String(), p.clientConfig(tc.cert))
			if err == nil {
				t.Cleanup(func() { _ = nc.Close() })
				_ = nc.SetDeadline(time.Now().Add(ioTimeout))
				if _, err = nc.Write([]byte("ping")); err == nil {
					got := make([]byte, 4)
					if _, err = io.ReadFull(nc, got); err == nil && string(got) != "ping" {
						t.Fatalf("echo: got %q, want ping", got)
					}
				}
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("client refused: %v", err)
				}
				if n := made.Load(); n != 2 {
					t.Fatalf("Handlers made: got %d, want 2", n)
				}
				return
			}
			if err == nil {
				t.Fatal("client got through, want its handshake refused")
			}
			line := waitLog(t, &logs, "tls handshake failed", tc.wantErr)
			remote := "remote=" + nc.LocalAddr().String()
			if !strings.Contains(line, remote) || !strings.Contains(line, "level=WARN") {
				t.Fatalf("handshake failure log %q lacks %s at WARN", line, remote)
			}
			if n := strings.Count(logs.String(), "tls handshake failed"); n != 1 {
				t.Fatalf("handshake failure logged %d times, want once:\n%s", n, logs.String())
			}
			echoOnce(t, good, "after")
			if n := made.Load(); n != 1 {
				t.Fatalf("Handlers made: got %d, want 1 (none for the refused handshake)", n)
			}
			eventually(t, ioTimeout, func() error {
				if n := l.Conns(); n != 1 {
					return fmt.Errorf("Conns: got %d, want 1", n)
				}
				return nil
			})
		})
	}
}

// TestTransportTLSPlainTextOnTLSPort sends a STOMP CONNECT in clear to a
// TLS port: the connection is closed, the failure is logged with the
// client's address and a reason naming plain text, no Handler is made and
// a TLS client exchanging data meanwhile is not disturbed.
func TestTransportTLSPlainTextOnTLSPort(t *testing.T) {
	p := newTestPKI(t)
	var logs syncBuffer
	var made atomic.Int32
	l := listenTLS(t, countingEcho(&made), Options{Logger: logTo(&logs)}, p.serverConfig(tls.NoClientCert))
	good := dialTLS(t, l, p.clientConfig(nil))
	echoOnce(t, good, "before")

	bad := dial(t, l)
	if _, err := bad.Write([]byte("CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00")); err != nil {
		t.Fatal(err)
	}
	// The server answers nothing a STOMP client could read, and closes.
	b, err := io.ReadAll(bad)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server kept a plain-text connection open")
	}
	if bytes.Contains(b, []byte("CONNECTED")) {
		t.Fatalf("the server answered plain text with %q", b)
	}
	line := waitLog(t, &logs, "tls handshake failed", "client does not speak TLS", "remote="+bad.LocalAddr().String())
	if !strings.Contains(line, `CONNE`) {
		t.Fatalf("log line %q does not show the first bytes", line)
	}
	echoOnce(t, good, "after")
	if n := made.Load(); n != 1 {
		t.Fatalf("Handlers made: got %d, want 1", n)
	}
}

// TestTransportTLSHandshakeTimeout connects clients that never finish a
// handshake (one sends nothing, one half a ClientHello): each is closed
// once Options.TLSHandshakeTimeout has passed, and logged.
func TestTransportTLSHandshakeTimeout(t *testing.T) {
	p := newTestPKI(t)
	const timeout = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		send []byte
	}{
		{"client sends nothing", nil},
		// A handshake record header announcing 512 bytes, then 6 of them.
		{"client sends half a ClientHello", []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs syncBuffer
			var made atomic.Int32
			l := listenTLS(t, countingEcho(&made), Options{Logger: logTo(&logs), TLSHandshakeTimeout: timeout}, p.serverConfig(tls.NoClientCert))
			start := time.Now()
			nc := dial(t, l)
			if len(tc.send) > 0 {
				if _, err := nc.Write(tc.send); err != nil {
					t.Fatal(err)
				}
			}
			_, err := io.ReadAll(nc)
			elapsed := time.Since(start)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the server kept a stalled handshake open for %v", ioTimeout)
			}
			if elapsed < timeout {
				t.Fatalf("closed after %v, before the %v handshake timeout", elapsed, timeout)
			}
			waitLog(t, &logs, "tls handshake failed", "handshake not completed within 300ms", "remote="+nc.LocalAddr().String())
			if n := made.Load(); n != 0 {
				t.Fatalf("Handlers made: got %d, want 0", n)
			}
			eventually(t, ioTimeout, func() error {
				if n := l.Conns(); n != 0 {
					return fmt.Errorf("Conns: got %d, want 0", n)
				}
				return nil
			})
		})
	}
}

// TestTransportTLSMaxConnectionsBeforeHandshake fills MaxConnections with
// a socket that never handshakes: the next one is closed at once (long
// before the 10 s handshake timeout), without a handshake; once the first
// is gone a TLS client gets in.
func TestTransportTLSMaxConnectionsBeforeHandshake(t *testing.T) {
	p := newTestPKI(t)
	var logs syncBuffer
	var made atomic.Int32
	l := listenTLS(t, countingEcho(&made), Options{Logger: logTo(&logs), MaxConnections: 1}, p.serverConfig(tls.NoClientCert))
	silent := dial(t, l)
	eventually(t, ioTimeout, func() error {
		if n := l.Conns(); n != 1 {
			return fmt.Errorf("Conns: got %d, want 1", n)
		}
		return nil
	})
	refused := dial(t, l)
	_ = refused.SetDeadline(time.Now().Add(DefaultTLSHandshakeTimeout / 2))
	b, err := io.ReadAll(refused)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || len(b) > 0 {
		t.Fatalf("refused socket: read %q, %v; want it closed at once with nothing sent", b, err)
	}
	waitLog(t, &logs, "connection limit reached", "remote="+refused.LocalAddr().String(), "limit=1")

	_ = silent.Close()
	eventually(t, ioTimeout, func() error {
		if n := l.Conns(); n != 0 {
			return fmt.Errorf("Conns: got %d, want 0", n)
		}
		return nil
	})
	echoOnce(t, dialTLS(t, l, p.clientConfig(nil)), "in")
	if n := made.Load(); n != 1 {
		t.Fatalf("Handlers made: got %d, want 1", n)
	}
}

// TestTransportTLSPendingHandshakesBounded fills the pending-handshake
// bound with silent sockets: the next socket is closed at once, and an
// established connection does not hold a slot.
func TestTransportTLSPendingHandshakesBounded(t *testing.T) {
	p := newTestPKI(t)
	var logs syncBuffer
	l := listenTLS(t, echoFactory, Options{Logger: logTo(&logs), MaxPendingHandshakes: 2}, p.serverConfig(tls.NoClientCert))
	established := dialTLS(t, l, p.clientConfig(nil))
	echoOnce(t, established, "up")
	dial(t, l)
	dial(t, l)
	eventually(t, ioTimeout, func() error {
		if n := l.Conns(); n != 3 {
			return fmt.Errorf("Conns: got %d, want 3", n)
		}
		return nil
	})
	refused := dial(t, l)
	_ = refused.SetDeadline(time.Now().Add(DefaultTLSHandshakeTimeout / 2))
	if b, err := io.ReadAll(refused); err != nil || len(b) > 0 {
		t.Fatalf("socket beyond the pending-handshake bound: read %q, %v; want EOF at once", b, err)
	}
	waitLog(t, &logs, "too many pending tls handshakes", "limit=2")
	echoOnce(t, established, "still up")
}

// TestTransportTLSWriteNotifyOrder queues many writes with WriteNotify:
// the callbacks run once each, in write order, with nil, and the bytes
// arrive in the same order.
func TestTransportTLSWriteNotifyOrder(t *testing.T) {
	p := newTestPKI(t)
	const n = 2000
	var (
		mu    sync.Mutex
		order []int
	)
	all := make(chan struct{})
	l := listenTLS(t, func(c Conn) Handler {
		return &funcHandler{onData: func([]byte) error {
			for i := range n {
				err := c.WriteNotify([]byte(fmt.Sprintf("%06d", i)), func(err error) {
					if err != nil {
						t.Errorf("WriteNotify %d: %v", i, err)
					}
					mu.Lock()
					order = append(order, i)
					if len(order) == n {
						close(all)
					}
					mu.Unlock()
				})
				if err != nil {
					return err
				}
			}
			return nil
		}}
	}, Options{}, p.serverConfig(tls.NoClientCert))
	nc := dialTLS(t, l, p.clientConfig(nil))
	if _, err := nc.Write([]byte("go")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 6*n)
	if _, err := io.ReadFull(nc, got); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if s := string(got[6*i : 6*i+6]); s != fmt.Sprintf("%06d", i) {
			t.Fatalf("message %d: got %q", i, s)
		}
	}
	select {
	case <-all:
	case <-time.After(ioTimeout):
		t.Fatal("not every WriteNotify callback ran")
	}
	mu.Lock()
	defer mu.Unlock()
	for i, v := range order {
		if v != i {
			t.Fatalf("callback %d ran in position %d", v, i)
		}
	}
}

// TestTransportTLSOutboundCap writes to a client that does not read until
// the cap is crossed: Write returns ErrOutboundFull, OnClose gets it, and
// a single write larger than the cap is refused the same way.
func TestTransportTLSOutboundCap(t *testing.T) {
	p := newTestPKI(t)
	const limit = 256 << 10
	closed := newCloseRecorder()
	writeErr := make(chan error, 2)
	l := listenTLS(t, func(c Conn) Handler {
		return &funcHandler{
			onData: func(b []byte) error {
				switch string(b) {
				case "flood":
					go func() {
						chunk := make([]byte, 16<<10)
						for {
							if err := c.Write(chunk); err != nil {
								writeErr <- err
								return
							}
						}
					}()
				case "huge":
					writeErr <- c.Write(make([]byte, limit+1))
				}
				return nil
			},
			onClose: closed.record,
		}
	}, Options{MaxOutboundBytes: limit}, p.serverConfig(tls.NoClientCert))

	for _, cmd := range []string{"flood", "huge"} {
		nc := dialTLS(t, l, p.clientConfig(nil))
		if _, err := nc.Write([]byte(cmd)); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, writeErr); !errors.Is(err, ErrOutboundFull) {
			t.Fatalf("%s: Write: got %v, want ErrOutboundFull", cmd, err)
		}
		if err := closed.wait(t); !errors.Is(err, ErrOutboundFull) {
			t.Fatalf("%s: OnClose: got %v, want ErrOutboundFull", cmd, err)
		}
	}
}

// recv takes one value from ch within ioTimeout.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(ioTimeout):
		t.Fatal("timed out")
		var zero T
		return zero
	}
}

// tlsPauseBound is the most a client can write to a paused TLS connection
// before its writes block: the server's receive buffer (tcp_rmem's
// maximum, doubled for the kernel's bookkeeping), the client's send
// buffer (asked small, doubled), one record held by the reader and what
// crypto/tls may have read ahead, and 1 MiB of slack.
func tlsPauseBound(t *testing.T) int {
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
	return 2*rmemMax + 2*pauseBufBytes + 2*tlsReadBufBytes + 1<<20
}

// TestTransportTLSPauseBackPressure pauses a connection from OnData (the
// barrier: no OnData may follow) while its client keeps writing a stream
// larger than every buffer on the way: OnData gets nothing more, the
// client's writes stall below the kernel's bound, and another connection
// keeps echoing. After ResumeReading every byte arrives, in order.
func TestTransportTLSPauseBackPressure(t *testing.T) {
	p := newTestPKI(t)
	rec := newRecorder()
	var pausedAt atomic.Int64 // bytes OnData had got when it paused; -1 before
	pausedAt.Store(-1)
	conns := make(chan Conn, 4)
	var first atomic.Bool
	l := listenTLS(t, func(c Conn) Handler {
		conns <- c
		if !first.CompareAndSwap(false, true) {
			return &funcHandler{onData: c.Write}
		}
		return &funcHandler{onData: func(b []byte) error {
			_ = rec.OnData(b)
			if n := rec.len(); n >= 64<<10 && pausedAt.Load() < 0 {
				c.PauseReading()
				pausedAt.Store(int64(n))
			}
			return nil
		}, onClose: rec.OnClose}
	}, Options{}, p.serverConfig(tls.NoClientCert))

	raw, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = raw.Close() })
	_ = raw.(*net.TCPConn).SetWriteBuffer(pauseBufBytes)
	nc := tls.Client(raw, p.clientConfig(nil))
	_ = nc.SetDeadline(time.Now().Add(ioTimeout))
	if err := nc.Handshake(); err != nil {
		t.Fatal(err)
	}
	// No deadline on the 16 MiB stream itself: under -race on a loaded
	// machine it may take longer than ioTimeout. The waits below fail
	// only when it stops moving.
	_ = nc.SetDeadline(time.Time{})
	sc := accept(t, conns)
	// A small receive buffer on the server's socket too, so the stall comes
	// early; the bound below does not rely on it.
	_ = sc.(*tlsConn).nc.(*net.TCPConn).SetReadBuffer(pauseBufBytes)

	bound := tlsPauseBound(t)
	const total = 16 << 20
	var written atomic.Int64
	wdone := make(chan error, 1)
	go func() {
		const chunk = 32 << 10
		for off := 0; off < total; off += chunk {
			if _, err := nc.Write(pattern(off, min(chunk, total-off))); err != nil {
				wdone <- err
				return
			}
			written.Add(int64(min(chunk, total-off)))
		}
		wdone <- nil
	}()

	eventually(t, ioTimeout, func() error {
		if pausedAt.Load() < 0 {
			return errors.New("OnData has not paused yet")
		}
		return nil
	})
	// The client stalls: its written count stops moving below the bound.
	var last int64 = -1
	eventually(t, ioTimeout, func() error {
		w := written.Load()
		if w != last {
			last = w
			<-time.After(100 * time.Millisecond) // sampling interval of the stall check
			return fmt.Errorf("the client is still writing (%d bytes so far)", w)
		}
		return nil
	})
	if last > int64(min(bound, total)) {
		t.Fatalf("the client wrote %d bytes to a paused connection, more than the kernel's bound %d", last, bound)
	}
	select {
	case err := <-wdone:
		t.Fatalf("the client finished writing %d bytes to a paused connection (err %v)", total, err)
	default:
	}
	if got, at := rec.len(), int(pausedAt.Load()); got != at {
		t.Fatalf("OnData got %d bytes after PauseReading", got-at)
	}

	other := dialTLS(t, l, p.clientConfig(nil))
	accept(t, conns)
	echoOnce(t, other, "still serving")

	go sc.ResumeReading()
	if err := awaitWhileMoving(t, wdone, &written); err != nil {
		t.Fatalf("client write after ResumeReading: %v", err)
	}
	rec.waitLen(t, total)
	rec.check(t, total)
}

// awaitWhileMoving waits for done as long as the count n keeps moving:
// it fails only when n has not changed for ioTimeout.
func awaitWhileMoving[T any](t *testing.T, done <-chan T, n *atomic.Int64) T {
	t.Helper()
	last := n.Load()
	for {
		select {
		case v := <-done:
			return v
		case <-time.After(ioTimeout):
			if now := n.Load(); now != last {
				last = now
				continue
			}
			t.Fatalf("stuck at %d for %v", last, ioTimeout)
			var zero T
			return zero
		}
	}
}

// TestTransportTLSCloseDrains has the handler queue a large reply and
// Close at once: the client reads every byte, then an orderly end
// (close_notify), and OnClose gets nil, once; later writes are refused.
func TestTransportTLSCloseDrains(t *testing.T) {
	p := newTestPKI(t)
	const size = 4 << 20
	closed := newCloseRecorder()
	after := make(chan error, 1)
	l := listenTLS(t, func(c Conn) Handler {
		return &funcHandler{
			onData: func([]byte) error {
				if err := c.Write(pattern(0, size)); err != nil {
					return err
				}
				_ = c.Close()
				_ = c.Close() // later calls do nothing
				after <- c.Write([]byte("late"))
				return nil
			},
			onClose: closed.record,
		}
	}, Options{}, p.serverConfig(tls.NoClientCert))
	nc := dialTLS(t, l, p.clientConfig(nil))
	if _, err := nc.Write([]byte("bye")); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(nc)
	if err != nil {
		t.Fatalf("read to the end: %v after %d bytes, want close_notify", err, len(b))
	}
	if !bytes.Equal(b, pattern(0, size)) {
		t.Fatalf("got %d bytes, want the %d queued before Close", len(b), size)
	}
	if err := recv(t, after); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write after Close: got %v, want ErrClosed", err)
	}
	_ = nc.Close()
	if err := closed.wait(t); err != nil {
		t.Fatalf("OnClose: got %v, want nil", err)
	}
	eventually(t, ioTimeout, func() error {
		if n := l.Conns(); n != 0 {
			return fmt.Errorf("Conns: got %d, want 0", n)
		}
		return nil
	})
	if n := closed.count(); n != 1 {
		t.Fatalf("OnClose calls: got %d, want 1", n)
	}
}

// TestTransportTLSOnDataErrorFlushesThenCloses checks that the error frame
// a handler queues before failing OnData reaches the client.
func TestTransportTLSOnDataErrorFlushesThenCloses(t *testing.T) {
	p := newTestPKI(t)
	bad := errors.New("protocol error")
	closed := newCloseRecorder()
	l := listenTLS(t, func(c Conn) Handler {
		return &funcHandler{
			onData: func([]byte) error {
				_ = c.Write([]byte("ERROR\n\n\x00"))
				return bad
			},
			onClose: closed.record,
		}
	}, Options{}, p.serverConfig(tls.NoClientCert))
	nc := dialTLS(t, l, p.clientConfig(nil))
	if _, err := nc.Write([]byte("junk")); err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(nc); err != nil || string(b) != "ERROR\n\n\x00" {
		t.Fatalf("got %q, %v; want the error frame then an orderly end", b, err)
	}
	_ = nc.Close() // the server waits (up to 5 s) for the client's side to close
	if err := closed.wait(t); !errors.Is(err, bad) {
		t.Fatalf("OnClose: got %v, want the handler's error", err)
	}
}

// TestTransportTLSOnCloseOnce closes many connections from both ends at
// once (client close, server Close, listener Close racing): every Handler
// gets OnClose exactly once. Run with -race.
func TestTransportTLSOnCloseOnce(t *testing.T) {
	p := newTestPKI(t)
	const n = 24
	var mu sync.Mutex
	counts := map[uint64]*atomic.Int32{}
	conns := make(chan Conn, n)
	l, err := ListenTLS("127.0.0.1:0", func(c Conn) Handler {
		cnt := new(atomic.Int32)
		mu.Lock()
		counts[c.ID()] = cnt
		mu.Unlock()
		conns <- c
		return &funcHandler{onData: c.Write, onClose: func(error) { cnt.Add(1) }}
	}, Options{Logger: slog.New(slog.DiscardHandler)}, p.serverConfig(tls.NoClientCert))
	if err != nil {
		t.Fatal(err)
	}
	clients := make([]*tls.Conn, n)
	for i := range clients {
		clients[i] = dialTLS(t, l, p.clientConfig(nil))
		echoOnce(t, clients[i], "x")
	}
	var wg sync.WaitGroup
	for i := range n {
		sc := recv(t, conns)
		wg.Add(2)
		go func() { defer wg.Done(); _ = sc.Write([]byte("bye")); _ = sc.Close() }()
		go func() { defer wg.Done(); _ = clients[i].Close() }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = l.Close() }()
	wg.Wait()
	_ = l.Close() // returns once every OnClose has run
	mu.Lock()
	defer mu.Unlock()
	if len(counts) != n {
		t.Fatalf("Handlers made: got %d, want %d", len(counts), n)
	}
	for id, c := range counts {
		if got := c.Load(); got != 1 {
			t.Fatalf("conn %d: OnClose called %d times, want 1", id, got)
		}
	}
	if got := l.Conns(); got != 0 {
		t.Fatalf("Conns after Close: got %d, want 0", got)
	}
}

// TestTransportTLSHandlerPanicClosesOnlyItsConn: a panic in OnData is
// logged once with the connection's ID and remote address and closes that
// connection only.
func TestTransportTLSHandlerPanicClosesOnlyItsConn(t *testing.T) {
	p := newTestPKI(t)
	var logs syncBuffer
	closed := newCloseRecorder()
	ids := make(chan uint64, 2)
	l := listenTLS(t, func(c Conn) Handler {
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
	}, Options{Logger: logTo(&logs)}, p.serverConfig(tls.NoClientCert))
	good := dialTLS(t, l, p.clientConfig(nil))
	echoOnce(t, good, "hi")
	<-ids
	bad := dialTLS(t, l, p.clientConfig(nil))
	echoOnce(t, bad, "hi")
	badID := <-ids
	if _, err := bad.Write([]byte("boom")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(bad); err == nil {
		// A cut sends no close_notify: the client sees an unexpected EOF.
		t.Log("client saw an orderly end after the panic")
	}
	if err := closed.wait(t); !errors.Is(err, ErrHandlerPanic) {
		t.Fatalf("OnClose: got %v, want ErrHandlerPanic", err)
	}
	echoOnce(t, good, "still here")
	waitLog(t, &logs, "handler panic", "conn="+strconv.FormatUint(badID, 10), "remote="+bad.LocalAddr().String())
	if n := closed.count(); n != 1 {
		t.Fatalf("OnClose calls: got %d, want 1", n)
	}
}

// TestTransportTLSListenerCloseAndIDs closes a listener with open
// connections: each Handler gets OnClose(ErrListenerClosed), and IDs are
// unique across the TLS and plain TCP transports.
func TestTransportTLSListenerCloseAndIDs(t *testing.T) {
	p := newTestPKI(t)
	closed := newCloseRecorder()
	ids := make(chan uint64, 8)
	f := func(c Conn) Handler {
		ids <- c.ID()
		return &funcHandler{onData: c.Write, onClose: closed.record}
	}
	l, err := ListenTLS("127.0.0.1:0", f, Options{Logger: slog.New(slog.DiscardHandler)}, p.serverConfig(tls.NoClientCert))
	if err != nil {
		t.Fatal(err)
	}
	plain := listen(t, f, quietOptions())
	for range 3 {
		echoOnce(t, dialTLS(t, l, p.clientConfig(nil)), "x")
		echoOnce(t, dial(t, plain), "x")
	}
	seen := map[uint64]bool{}
	for range 6 {
		id := recv(t, ids)
		if seen[id] {
			t.Fatalf("conn ID %d handed out twice", id)
		}
		seen[id] = true
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for range 3 {
		if err := closed.wait(t); !errors.Is(err, ErrListenerClosed) {
			t.Fatalf("OnClose: got %v, want ErrListenerClosed", err)
		}
	}
	if _, err := net.Dial("tcp", l.Addr().String()); err == nil {
		t.Fatal("the closed listener's port still accepts")
	}
}
