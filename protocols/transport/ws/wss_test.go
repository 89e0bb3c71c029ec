package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"wharf/protocols/transport"
)

// record is one slog record a countingHandler kept.
type record struct {
	level slog.Level
	msg   string
	attrs map[string]any
}

// countingHandler keeps every record, for tests that count log lines.
type countingHandler struct {
	mu   sync.Mutex
	recs []record
}

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	rec := record{level: r.Level, msg: r.Message, attrs: map[string]any{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.Any()
		return true
	})
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

// with returns the records whose message is msg.
func (h *countingHandler) with(msg string) []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []record
	for _, r := range h.recs {
		if r.msg == msg {
			out = append(out, r)
		}
	}
	return out
}

func (h *countingHandler) all() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]record(nil), h.recs...)
}

// fakeClock is a clock tests move by hand; safe from any goroutine.
type fakeClock struct {
	base time.Time
	off  atomic.Int64 // nanoseconds
}

func newFakeClock() *fakeClock { return &fakeClock{base: time.Now()} }

func (c *fakeClock) now() time.Time { return c.base.Add(time.Duration(c.off.Load())) }

func (c *fakeClock) advance(d time.Duration) { c.off.Add(int64(d)) }

// rawDial opens a TCP connection that sends nothing (no ClientHello).
func rawDial(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc
}

// expectClosedAtOnce checks that the server closes nc without waiting for
// a timeout: the read must end with EOF or a reset well within the 10 s
// handshake and header bounds.
func expectClosedAtOnce(t *testing.T, nc net.Conn) {
	t.Helper()
	const bound = 5 * time.Second // half the handshake timeout
	start := time.Now()
	_ = nc.SetReadDeadline(start.Add(bound))
	var b [64]byte
	n, err := nc.Read(b[:])
	if n > 0 || !(errors.Is(err, io.EOF) || isReset(err)) {
		t.Fatalf("read on a socket beyond the limit after %v: %d bytes, %v; want EOF or reset at once", time.Since(start), n, err)
	}
}

// waitConns polls until l.Conns() is want.
func waitConns(t *testing.T, l transport.Listener, want int) {
	t.Helper()
	eventually(t, func() error {
		if n := l.Conns(); n != want {
			return fmt.Errorf("Conns() = %d, want %d", n, want)
		}
		return nil
	})
}

// expectLine waits for the one refusal line msg (the socket is closed
// just before it is logged) and checks its limit.
func expectLine(t *testing.T, logs *countingHandler, msg string) {
	t.Helper()
	eventually(t, func() error {
		if got := logs.with(msg); len(got) != 1 || got[0].attrs["limit"] != int64(2) || got[0].attrs["remote"] == nil {
			return fmt.Errorf("%q lines %+v, want one with limit 2 and remote", msg, got)
		}
		return nil
	})
}

// TestWSSMaxConnectionsAtAccept: on a wss port maximumConnections counts
// sockets from accept on, handshaking ones included: with two sockets that
// never send a ClientHello, a third is closed at once (not after the
// handshake or header timeout); a slot comes back when a socket closes and
// when a WebSocket connection ends.
func TestWSSMaxConnectionsAtAccept(t *testing.T) {
	p := newWSSPKI(t)
	logs := &countingHandler{}
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, MQTTSubprotocols...), Options{
		TLS:            &tls.Config{Certificates: []tls.Certificate{p.server}},
		MaxConnections: 2,
		Logger:         slog.New(logs),
	})
	addr := l.Addr().String()
	a := rawDial(t, addr)
	rawDial(t, addr)
	waitConns(t, l, 2)
	expectClosedAtOnce(t, rawDial(t, addr))
	expectLine(t, logs, "connection limit reached, connection refused")

	// A socket that goes away gives its slot back; a WebSocket connection
	// takes it.
	_ = a.Close()
	waitConns(t, l, 1)
	wc, err := wssDial(t, l, p, nil, "mqtt")
	if err != nil {
		t.Fatalf("wss dial into a free slot: %v", err)
	}
	s := f.next(t)
	if n := l.Conns(); n != 2 {
		t.Fatalf("Conns() = %d with one idle socket and one WebSocket connection, want 2", n)
	}
	expectClosedAtOnce(t, rawDial(t, addr))

	// The WebSocket connection ends: its slot comes back after OnClose.
	_ = wc.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	if err := s.waitClosed(t); err != nil {
		t.Fatalf("OnClose(%v), want nil", err)
	}
	waitConns(t, l, 1)
	if _, err := wssDial(t, l, p, nil, "mqtt"); err != nil {
		t.Fatalf("wss dial after a WebSocket connection closed: %v", err)
	}
	f.next(t)
	if n := l.Conns(); n != 2 {
		t.Fatalf("Conns() = %d, want 2", n)
	}
}

// TestWSSPendingHandshakesBound: at most MaxPendingHandshakes sockets
// handshake at once; one beyond is closed at once, and established
// connections do not count against the bound.
func TestWSSPendingHandshakesBound(t *testing.T) {
	p := newWSSPKI(t)
	logs := &countingHandler{}
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, MQTTSubprotocols...), Options{
		TLS:                  &tls.Config{Certificates: []tls.Certificate{p.server}},
		MaxPendingHandshakes: 2,
		Logger:               slog.New(logs),
	})
	addr := l.Addr().String()
	a := rawDial(t, addr)
	rawDial(t, addr)
	waitConns(t, l, 2)
	expectClosedAtOnce(t, rawDial(t, addr))
	expectLine(t, logs, "too many pending tls handshakes, connection refused")

	// One handshake slot free: two WebSocket clients complete theirs one
	// after the other, then two idle sockets fill the bound again while
	// both connections are open.
	_ = a.Close()
	waitConns(t, l, 1)
	for range 2 {
		if _, err := wssDial(t, l, p, nil, "mqtt"); err != nil {
			t.Fatalf("wss dial with a handshake slot free: %v", err)
		}
		f.next(t)
	}
	rawDial(t, addr)
	waitConns(t, l, 4) // 2 idle handshakes + 2 WebSocket connections
	expectClosedAtOnce(t, rawDial(t, addr))
}

// TestWSSHandshakeFailureFloodLogsThrottled sends 200 plain-text clients
// to a wss port: at most 20 "tls handshake failed" lines come in the
// throttle's 10 s interval, each with the constant message, remote,
// reason and err, and nothing of net/http's "http: TLS handshake error";
// once the interval is over, the next failure's line counts the 180 held
// back.
func TestWSSHandshakeFailureFloodLogsThrottled(t *testing.T) {
	p := newWSSPKI(t)
	logs := &countingHandler{}
	clock := newFakeClock()
	f := newStubs("mqtt", echo)
	l, err := listenClock("127.0.0.1:0", Subprotocols(f.factory, MQTTSubprotocols...), Options{
		TLS:    &tls.Config{Certificates: []tls.Certificate{p.server}},
		Logger: slog.New(logs),
	}, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	addr := l.Addr().String()

	// fail sends plain text and waits for the server to close: by then the
	// failure has been logged or counted.
	fail := func() error {
		nc, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			return err
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(testTimeout))
		if _, err := nc.Write([]byte("not a ClientHello\r\n")); err != nil {
			return err
		}
		if _, err := io.ReadAll(nc); err != nil && !isReset(err) {
			return fmt.Errorf("waiting for the server to close: %v", err)
		}
		return nil
	}
	const flood, workers = 200, 10
	errs := make(chan error, flood)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range flood / workers {
				errs <- fail()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	const msg = "tls handshake failed, connection closed"
	got := logs.with(msg)
	if len(got) != 20 {
		t.Fatalf("%d %q lines for %d failed handshakes in one interval, want 20", len(got), msg, flood)
	}
	for _, r := range got {
		if r.level != slog.LevelWarn || r.attrs["remote"] == nil || r.attrs["reason"] == nil || r.attrs["err"] == nil {
			t.Fatalf("log line %+v: want Warn with remote, reason and err", r)
		}
	}
	for _, r := range logs.all() {
		if r.level > slog.LevelInfo && r.msg != msg {
			t.Fatalf("unexpected log line %+v during the flood", r)
		}
	}

	clock.advance(10 * time.Second)
	if err := fail(); err != nil {
		t.Fatal(err)
	}
	got = logs.with(msg)
	if len(got) != 21 || got[20].attrs["suppressed"] != int64(flood-20) {
		t.Fatalf("after the interval: %d lines, last %+v; want 21, the last with suppressed=%d", len(got), got[len(got)-1], flood-20)
	}
	waitConns(t, l, 0)
}

// TestWSSCloseCutsHandshakes: Listener.Close closes sockets still
// handshaking and returns with nothing counted.
func TestWSSCloseCutsHandshakes(t *testing.T) {
	p := newWSSPKI(t)
	logs := &countingHandler{}
	f := newStubs("mqtt", echo)
	l, err := Listen("127.0.0.1:0", Subprotocols(f.factory, MQTTSubprotocols...), Options{
		TLS:    &tls.Config{Certificates: []tls.Certificate{p.server}},
		Logger: slog.New(logs),
	})
	if err != nil {
		t.Fatal(err)
	}
	idle := rawDial(t, l.Addr().String())
	if _, err := wssDial(t, l, p, nil, "mqtt"); err != nil {
		t.Fatal(err)
	}
	s := f.next(t)
	waitConns(t, l, 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.waitClosed(t); !errors.Is(err, transport.ErrListenerClosed) {
		t.Fatalf("OnClose(%v), want ErrListenerClosed", err)
	}
	expectClosedAtOnce(t, idle)
	if n := l.Conns(); n != 0 {
		t.Fatalf("Conns() = %d after Close, want 0", n)
	}
	if got := logs.with("tls handshake failed, connection closed"); len(got) != 0 {
		t.Fatalf("a handshake the listener cut was logged as failed: %+v", got)
	}
}

// TestWSHTTPErrorLogThrottled: net/http's error lines become one
// constant message, at most 20 per 10 s, the next counting those held
// back.
func TestWSHTTPErrorLogThrottled(t *testing.T) {
	logs := &countingHandler{}
	clock := newFakeClock()
	el := newHTTPErrorLog(slog.New(logs), clock.now)
	for i := range 30 {
		el.Printf("http: request error from 127.0.0.1:%d: bad thing", 1000+i)
	}
	clock.advance(10 * time.Second)
	el.Printf("http: panic serving 127.0.0.1:1: boom")
	got := logs.all()
	if len(got) != 21 {
		t.Fatalf("%d lines for 31 errors, want 21", len(got))
	}
	for _, r := range got {
		if r.msg != "http server error" {
			t.Fatalf("message %q, want the constant %q", r.msg, "http server error")
		}
	}
	if last := got[20]; last.level != slog.LevelError || last.attrs["suppressed"] != int64(10) || last.attrs["err"] != "http: panic serving 127.0.0.1:1: boom" {
		t.Fatalf("last line %+v: want Error, suppressed=10, the panic text in err", last)
	}
}
