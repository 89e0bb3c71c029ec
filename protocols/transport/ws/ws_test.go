package ws

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/protocols/mqtt"
	"wharf/protocols/stomp"
	"wharf/protocols/transport"
	"wharf/protocols/transport/ws/wire"
)

// stub is a protocol session for tests: it records what it is given and
// runs an optional hook on each chunk.
type stub struct {
	c        transport.Conn
	proto    string
	hook     func(s *stub, b []byte) error
	data     chan []byte
	closed   chan error
	closes   atomic.Int32
	overflow atomic.Bool // OnData found data full
}

func (s *stub) OnData(b []byte) error {
	// Never block the reader, whatever the test does: a full channel is a
	// test failure, reported by the next recv.
	select {
	case s.data <- bytes.Clone(b):
	default:
		s.overflow.Store(true)
	}
	if s.hook != nil {
		return s.hook(s, b)
	}
	return nil
}

func (s *stub) OnClose(err error) {
	s.closes.Add(1)
	s.closed <- err
}

// stubs builds stub sessions for a subprotocol and hands each to the test.
type stubs struct {
	proto string
	hook  func(s *stub, b []byte) error
	made  chan *stub
}

func newStubs(proto string, hook func(s *stub, b []byte) error) *stubs {
	return &stubs{proto: proto, hook: hook, made: make(chan *stub, 16)}
}

func (f *stubs) factory(c transport.Conn) transport.Handler {
	s := &stub{c: c, proto: f.proto, hook: f.hook, data: make(chan []byte, 1<<14), closed: make(chan error, 2)}
	f.made <- s
	return s
}

func (f *stubs) next(t testing.TB) *stub {
	t.Helper()
	select {
	case s := <-f.made:
		return s
	case <-time.After(testTimeout):
		t.Fatalf("no %s session was made", f.proto)
		return nil
	}
}

// echo writes every chunk back.
func echo(s *stub, b []byte) error { return s.c.Write(b) }

// eventually polls f until it returns nil or testTimeout passes.
func eventually(t testing.TB, f func() error) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", testTimeout, err)
		}
		<-time.After(time.Millisecond) // poll interval, not synchronisation
	}
}

func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// waitClosed returns the cause OnClose got.
func (s *stub) waitClosed(t testing.TB) error {
	t.Helper()
	return recv(t, s.closed, "OnClose")
}

// chunk returns the next OnData chunk.
func (s *stub) chunk(t testing.TB) []byte {
	t.Helper()
	if s.overflow.Load() {
		t.Fatal("the stub session dropped OnData chunks")
	}
	return recv(t, s.data, "OnData")
}

// gather reads OnData chunks until n bytes have come.
func (s *stub) gather(t testing.TB, n int) []byte {
	t.Helper()
	var got []byte
	for len(got) < n {
		got = append(got, s.chunk(t)...)
	}
	return got
}

func testLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// listen starts a listener serving protos and closes it at the end.
func listen(t testing.TB, protos map[string]transport.HandlerFactory, o Options) transport.Listener {
	t.Helper()
	if o.Logger == nil {
		o.Logger = testLogger()
	}
	l, err := Listen("127.0.0.1:0", protos, o)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// stompListener serves STOMP with the real STOMP server on an in-process
// engine, as the ws connector does.
func stompListener(t testing.TB) transport.Listener {
	t.Helper()
	e, err := engine.New(engine.Options{Shards: 1})
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	so := stomp.DefaultOptions()
	so.Logger = testLogger()
	srv := stomp.NewServer(e, so)
	return listen(t, Subprotocols(srv.Handler, STOMPSubprotocols...), Options{})
}

// stompReply reads one STOMP frame from text messages (a message may hold
// several frames, and heart-beat newlines are skipped).
type stompReader struct {
	c   *client
	buf []byte
}

func (r *stompReader) frame() string {
	r.c.t.Helper()
	for {
		r.buf = bytes.TrimLeft(r.buf, "\r\n")
		if i := bytes.IndexByte(r.buf, 0); i >= 0 {
			f := string(r.buf[:i])
			r.buf = r.buf[i+1:]
			return f
		}
		op, p := r.c.next()
		if op != wire.OpText {
			r.c.t.Fatalf("STOMP over WebSocket: got a %s frame %q, want text", op, p)
		}
		r.buf = append(r.buf, p...)
	}
}

func (r *stompReader) expect(command string) string {
	r.c.t.Helper()
	f := r.frame()
	if !strings.HasPrefix(f, command+"\n") {
		r.c.t.Fatalf("got STOMP frame %q, want %s", f, command)
	}
	return f
}

// mqttPackets splits an MQTT byte stream into packets (fixed header,
// variable byte integer remaining length [MQTT-2.2.3]); rest is an
// incomplete tail.
func mqttPackets(b []byte) (packets [][]byte, rest []byte) {
	for {
		n, mul, i := 0, 1, 1
		for ; i < len(b) && i <= 4; i++ {
			n += int(b[i]&0x7f) * mul
			mul *= 128
			if b[i]&0x80 == 0 {
				break
			}
		}
		if i >= len(b) || i+1+n > len(b) {
			return packets, b
		}
		packets = append(packets, b[:i+1+n])
		b = b[i+1+n:]
	}
}

// TestWSConnectorSTOMPAndMQTT serves the real STOMP and MQTT servers on one
// port, as ActiveMQ's ws connector does, and sends from MQTT to both.
func TestWSConnectorSTOMPAndMQTT(t *testing.T) {
	e, err := engine.New(engine.Options{Shards: 1})
	if err != nil {
		t.Fatalf("engine: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	so, mo := stomp.DefaultOptions(), mqtt.DefaultOptions()
	so.Logger, mo.Logger = testLogger(), testLogger()
	protos := Subprotocols(stomp.NewServer(e, so).Handler, STOMPSubprotocols...)
	maps.Copy(protos, Subprotocols(mqtt.NewServer(e, mo).Handler, MQTTSubprotocols...))
	l := listen(t, protos, Options{})

	sc := dial(t, l.Addr().String(), "v12.stomp", "v11.stomp")
	r := &stompReader{c: sc}
	sc.sendMessage(wire.OpText, stompFrame("CONNECT", "", "accept-version", "1.2", "host", "localhost"))
	r.expect("CONNECTED")
	sc.sendMessage(wire.OpText, stompFrame("SUBSCRIBE", "", "destination", "/topic/a.b", "id", "0", "receipt", "r"))
	r.expect("RECEIPT")

	mc := dial(t, l.Addr().String(), "mqttv3.1", "mqtt")
	if got := mc.resp.Header.Get("Sec-WebSocket-Protocol"); got != "mqttv3.1" {
		t.Fatalf("Sec-WebSocket-Protocol = %q, want mqttv3.1", got)
	}
	// MQTT 3.1.1 CONNECT (clean session, client "ws1"), cut across two
	// messages; then SUBSCRIBE a/b QoS 0 and PUBLISH to it in one message.
	connect := []byte{0x10, 0x0F, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 3, 'w', 's', '1'}
	mc.send(mc.frame(true, wire.OpBinary, connect[:7]), mc.frame(true, wire.OpBinary, connect[7:]))
	subscribe := []byte{0x82, 0x08, 0, 1, 0, 3, 'a', '/', 'b', 0}
	publish := []byte{0x30, 0x07, 0, 3, 'a', '/', 'b', 'h', 'i'}
	var stream []byte
	var got [][]byte
	read := func(n int) {
		for len(got) < n {
			op, p := mc.next()
			if op != wire.OpBinary {
				t.Fatalf("MQTT over WebSocket: got a %s frame, want binary", op)
			}
			var pk [][]byte
			pk, stream = mqttPackets(append(stream, p...))
			got = append(got, pk...)
		}
	}
	read(1)
	if !bytes.Equal(got[0], []byte{0x20, 0x02, 0, 0}) {
		t.Fatalf("CONNACK = % x, want 20 02 00 00", got[0])
	}
	mc.send(mc.frame(true, wire.OpBinary, append(append([]byte(nil), subscribe...), publish...)))
	read(3)
	if !bytes.Equal(got[1], []byte{0x90, 0x03, 0, 1, 0}) {
		t.Fatalf("SUBACK = % x, want 90 03 00 01 00", got[1])
	}
	if !bytes.Equal(got[2], publish) {
		t.Fatalf("PUBLISH = % x, want % x", got[2], publish)
	}
	if m := r.expect("MESSAGE"); !strings.HasSuffix(m, "\n\nhi") || !strings.Contains(m, "destination:/topic/a.b") {
		t.Fatalf("STOMP MESSAGE = %q", m)
	}
	mc.send(mc.frame(true, wire.OpBinary, []byte{0xE0, 0x00})) // DISCONNECT
	if code := mc.expectClose(); code != wire.CloseNormal {
		t.Fatalf("close after DISCONNECT: %d, want 1000", code)
	}
}

func TestWSSTOMPRoundTrip(t *testing.T) {
	l := stompListener(t)
	c := dial(t, l.Addr().String(), "v12.stomp")
	if got := c.resp.Header.Get("Sec-WebSocket-Protocol"); got != "v12.stomp" {
		t.Fatalf("Sec-WebSocket-Protocol = %q, want v12.stomp", got)
	}
	r := &stompReader{c: c}
	c.sendMessage(wire.OpText, stompFrame("CONNECT", "", "accept-version", "1.2", "host", "localhost"))
	if f := r.expect("CONNECTED"); !strings.Contains(f, "version:1.2") {
		t.Fatalf("CONNECTED without version 1.2: %q", f)
	}
	c.sendMessage(wire.OpText, stompFrame("SUBSCRIBE", "", "destination", "/queue/ws", "id", "0", "receipt", "r1"))
	r.expect("RECEIPT")
	c.sendMessage(wire.OpText, stompFrame("SEND", "hello over websocket", "destination", "/queue/ws"))
	m := r.expect("MESSAGE")
	if !strings.HasSuffix(m, "\n\nhello over websocket") || !strings.Contains(m, "destination:/queue/ws") {
		t.Fatalf("MESSAGE = %q", m)
	}
	c.sendMessage(wire.OpText, stompFrame("DISCONNECT", "", "receipt", "bye"))
	r.expect("RECEIPT")
	// The session closes the connection after DISCONNECT: a close frame.
	if code := c.expectClose(); code != wire.CloseNormal {
		t.Fatalf("close code %d, want 1000", code)
	}
	c.send(c.frame(true, wire.OpClose, closePayload(wire.CloseNormal)))
	c.expectEOF()
}

func TestWSSTOMPFragmentedFrames(t *testing.T) {
	l := stompListener(t)
	c := dial(t, l.Addr().String(), "v11.stomp", "stomp")
	if got := c.resp.Header.Get("Sec-WebSocket-Protocol"); got != "v11.stomp" {
		t.Fatalf("Sec-WebSocket-Protocol = %q, want v11.stomp", got)
	}
	r := &stompReader{c: c}
	// CONNECT in three fragments, a ping between two of them, each
	// fragment in its own TCP write; then SUBSCRIBE and SEND cut in the
	// middle of a header and of the body, mixing text and continuation.
	connect := stompFrame("CONNECT", "", "accept-version", "1.1", "host", "localhost")
	c.send(c.frame(false, wire.OpText, []byte(connect[:5])))
	c.send(c.frame(false, wire.OpContinuation, []byte(connect[5:17])), c.frame(true, wire.OpPing, []byte("p")))
	c.send(c.frame(true, wire.OpContinuation, []byte(connect[17:])))
	if h, p, err := c.readFrame(); err != nil || h.Opcode != wire.OpPong || string(p) != "p" {
		t.Fatalf("answer to ping: %v %q %v, want pong \"p\"", h.Opcode, p, err)
	}
	r.expect("CONNECTED")
	sub := stompFrame("SUBSCRIBE", "", "destination", "/queue/frag", "id", "s", "receipt", "r")
	send := stompFrame("SEND", strings.Repeat("body-", 2000), "destination", "/queue/frag")
	c.send(c.frame(false, wire.OpText, []byte(sub[:20])), c.frame(true, wire.OpContinuation, []byte(sub[20:])))
	r.expect("RECEIPT")
	whole := c.frame(false, wire.OpText, []byte(send[:7000]))
	whole = append(whole, c.frame(false, wire.OpContinuation, []byte(send[7000:9000]))...)
	whole = append(whole, c.frame(true, wire.OpContinuation, []byte(send[9000:]))...)
	// The frames themselves cut across TCP writes too.
	for len(whole) > 0 {
		n := min(len(whole), 1000)
		c.send(whole[:n])
		whole = whole[n:]
	}
	m := r.expect("MESSAGE")
	if !strings.HasSuffix(m, "\n\n"+strings.Repeat("body-", 2000)) {
		t.Fatalf("MESSAGE body differs (%d bytes)", len(m))
	}
}

func TestWSSTOMPSeveralFramesInOneMessage(t *testing.T) {
	l := stompListener(t)
	c := dial(t, l.Addr().String()) // no subprotocol: STOMP, as ActiveMQ does
	if got := c.resp.Header.Get("Sec-WebSocket-Protocol"); got != "" {
		t.Fatalf("Sec-WebSocket-Protocol = %q, want none: the client offered none", got)
	}
	r := &stompReader{c: c}
	// One WebSocket message with four STOMP frames and heart-beat EOLs.
	c.sendMessage(wire.OpText,
		stompFrame("CONNECT", "", "accept-version", "1.2", "host", "localhost")+"\n"+
			stompFrame("SUBSCRIBE", "", "destination", "/queue/many", "id", "0")+
			stompFrame("SEND", "one", "destination", "/queue/many")+"\r\n"+
			stompFrame("SEND", "two", "destination", "/queue/many"))
	r.expect("CONNECTED")
	for _, want := range []string{"one", "two"} {
		if m := r.expect("MESSAGE"); !strings.HasSuffix(m, "\n\n"+want) {
			t.Fatalf("MESSAGE = %q, want body %q", m, want)
		}
	}
	// A binary message is STOMP input too.
	c.sendMessage(wire.OpBinary, stompFrame("SEND", "three", "destination", "/queue/many"))
	if m := r.expect("MESSAGE"); !strings.HasSuffix(m, "\n\nthree") {
		t.Fatalf("MESSAGE = %q, want body three", m)
	}
}

func TestWSSubprotocolNegotiation(t *testing.T) {
	stompF, mqttF := newStubs("stomp", nil), newStubs("mqtt", nil)
	protos := Subprotocols(stompF.factory, STOMPSubprotocols...)
	maps.Copy(protos, Subprotocols(mqttF.factory, MQTTSubprotocols...))
	both := listen(t, protos, Options{})
	mqttOnly := listen(t, Subprotocols(mqttF.factory, MQTTSubprotocols...), Options{})
	mqttDefault := listen(t, Subprotocols(mqttF.factory, MQTTSubprotocols...), Options{DefaultSubprotocol: "mqtt"})

	cases := []struct {
		name    string
		l       transport.Listener
		offered []string
		status  int
		echo    string // Sec-WebSocket-Protocol answered
		served  *stubs // whose session serves it
	}{
		{"mqtt", both, []string{"mqtt"}, 101, "mqtt", mqttF},
		{"mqttv3.1 preferred over mqtt", both, []string{"mqtt", "mqttv3.1"}, 101, "mqttv3.1", mqttF},
		{"v12.stomp", both, []string{"v12.stomp"}, 101, "v12.stomp", stompF},
		{"v12.stomp preferred over older", both, []string{"v10.stomp", "stomp", "v12.stomp"}, 101, "v12.stomp", stompF},
		{"first offered protocol wins", both, []string{"mqtt", "v12.stomp"}, 101, "mqtt", mqttF},
		{"unknown names are skipped", both, []string{"amqp", "stomp"}, 101, "stomp", stompF},
		{"none offered is STOMP", both, nil, 101, "", stompF},
		{"only unknown names", both, []string{"amqp", "xmpp"}, 400, "", nil},
		{"STOMP on an MQTT-only server", mqttOnly, []string{"v12.stomp"}, 400, "", nil},
		{"none offered, no STOMP served", mqttOnly, nil, 400, "", nil},
		{"none offered, default set", mqttDefault, nil, 101, "", mqttF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, resp := handshake(t, tc.l.Addr().String(), "/", tc.offered...)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != tc.echo {
				t.Fatalf("Sec-WebSocket-Protocol = %q, want %q", got, tc.echo)
			}
			if tc.status != 101 {
				body, _ := io.ReadAll(resp.Body)
				if !strings.Contains(string(body), "mqtt") {
					t.Fatalf("400 body %q does not name the supported subprotocols", body)
				}
				return
			}
			s := tc.served.next(t)
			c.sendMessage(wire.OpBinary, "x")
			if got := s.chunk(t); string(got) != "x" {
				t.Fatalf("session got %q, want x", got)
			}
			c.send(c.frame(true, wire.OpClose, closePayload(wire.CloseGoingAway)))
			if code := c.expectClose(); code != wire.CloseGoingAway {
				t.Fatalf("close echo %d, want 1001", code)
			}
			if err := s.waitClosed(t); err != nil {
				t.Fatalf("OnClose(%v), want nil for 1001", err)
			}
		})
	}
}

func TestWSHandshakeRefusals(t *testing.T) {
	f := newStubs("stomp", nil)
	l := listen(t, Subprotocols(f.factory, STOMPSubprotocols...), Options{})
	url := "http://" + l.Addr().String() + "/"

	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired || resp.Header.Get("Upgrade") != "websocket" {
		t.Fatalf("plain GET: status %d Upgrade %q, want 426 websocket", resp.StatusCode, resp.Header.Get("Upgrade"))
	}

	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Sec-WebSocket-Version", "8")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired || resp.Header.Get("Sec-WebSocket-Version") != "13" {
		t.Fatalf("version 8: status %d, Sec-WebSocket-Version %q, want 426 and 13", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Version"))
	}

	req.Header.Set("Sec-WebSocket-Version", "13")
	req.Header.Set("Sec-WebSocket-Key", "short")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad key: status %d, want 400", resp.StatusCode)
	}
	if n := l.Conns(); n != 0 {
		t.Fatalf("Conns() = %d after refusals, want 0", n)
	}
}

func TestWSMountedOnPath(t *testing.T) {
	stompF, mqttF := newStubs("stomp", nil), newStubs("mqtt", nil)
	ss, err := NewServer(Subprotocols(stompF.factory, STOMPSubprotocols...), Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := NewServer(Subprotocols(mqttF.factory, MQTTSubprotocols...), Options{DefaultSubprotocol: "mqtt", Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/stomp", ss)
	mux.Handle("/mqtt", ms)
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		hs.Close()
		_ = ss.Close()
		_ = ms.Close()
	})
	addr := strings.TrimPrefix(hs.URL, "http://")

	c, resp := handshake(t, addr, "/mqtt")
	if resp.StatusCode != 101 {
		t.Fatalf("/mqtt: status %d, want 101", resp.StatusCode)
	}
	s := mqttF.next(t)
	c.sendMessage(wire.OpBinary, "m")
	if got := s.chunk(t); string(got) != "m" {
		t.Fatalf("/mqtt session got %q", got)
	}
	c2, resp := handshake(t, addr, "/stomp", "v10.stomp")
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Protocol") != "v10.stomp" {
		t.Fatalf("/stomp: status %d protocol %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	s2 := stompF.next(t)
	// Closing the mounted servers cuts their upgraded connections, which
	// http.Server knows nothing of.
	_ = ss.Close()
	if err := s2.waitClosed(t); !errors.Is(err, transport.ErrListenerClosed) {
		t.Fatalf("/stomp OnClose(%v), want ErrListenerClosed", err)
	}
	c2.expectEOF()
	_ = ms.Close()
	if err := s.waitClosed(t); !errors.Is(err, transport.ErrListenerClosed) {
		t.Fatalf("/mqtt OnClose(%v), want ErrListenerClosed", err)
	}
	c.expectEOF()
}

func TestWSMQTTBinaryEcho(t *testing.T) {
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, MQTTSubprotocols...), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	// MQTT-like packets: two in one message, one across three fragments
	// with a pong and a ping between, and bytes that are not UTF-8.
	p1, p2, p3 := []byte{0x10, 0x02, 0xff, 0xfe}, []byte{0xc0, 0x00}, bytes.Repeat([]byte{0x30, 0x80, 0xff}, 100)
	c.send(c.frame(true, wire.OpBinary, append(append([]byte(nil), p1...), p2...)))
	c.send(c.frame(false, wire.OpBinary, p3[:1]), c.frame(true, wire.OpPong, nil),
		c.frame(false, wire.OpContinuation, p3[1:150]), c.frame(true, wire.OpPing, []byte("still there?")))
	c.send(c.frame(true, wire.OpContinuation, p3[150:]))
	want := bytes.Join([][]byte{p1, p2, p3}, nil)
	if got := s.gather(t, len(want)); !bytes.Equal(got, want) {
		t.Fatalf("session got % x, want % x", got, want)
	}
	var got []byte
	sawPong := false
	for len(got) < len(want) {
		h, p, err := c.readFrame()
		if err != nil {
			t.Fatal(err)
		}
		switch h.Opcode {
		case wire.OpPong:
			if string(p) != "still there?" {
				t.Fatalf("pong %q", p)
			}
			sawPong = true
		case wire.OpBinary:
			got = append(got, p...)
		default:
			t.Fatalf("got a %s frame, want binary (MQTT over WebSocket)", h.Opcode)
		}
	}
	if !bytes.Equal(got, want) || !sawPong {
		t.Fatalf("echo % x (pong seen %v), want % x", got, sawPong, want)
	}
}

func TestWSMessageTypeOption(t *testing.T) {
	f := newStubs("stomp", echo)
	l := listen(t, Subprotocols(f.factory, "stomp", "custom"), Options{MessageTypes: map[string]MessageType{"stomp": Binary, "custom": Text}})
	for proto, want := range map[string]wire.Opcode{"stomp": wire.OpBinary, "custom": wire.OpText} {
		c := dial(t, l.Addr().String(), proto)
		f.next(t)
		c.sendMessage(wire.OpText, "ping")
		if op, p := c.next(); op != want || string(p) != "ping" {
			t.Fatalf("%s: got %s %q, want %s", proto, op, p, want)
		}
		// Bytes that are not UTF-8 cannot go in a text frame.
		c.sendMessage(wire.OpBinary, "\xff\x00")
		if op, p := c.next(); op != wire.OpBinary || string(p) != "\xff\x00" {
			t.Fatalf("%s: got %s %q, want binary", proto, op, p)
		}
	}
}

func TestWSOversizeMessageCloses1009(t *testing.T) {
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{MaxBinaryMessageBytes: 1024, MaxTextMessageBytes: 10})
	good := dial(t, l.Addr().String(), "mqtt")
	gs := f.next(t)

	cases := []struct {
		name string
		msg  func(c *client) []byte
	}{
		{"one frame", func(c *client) []byte { return c.frame(true, wire.OpBinary, make([]byte, 1025)) }},
		{"fragments adding up", func(c *client) []byte {
			return append(c.frame(false, wire.OpBinary, make([]byte, 600)), c.frame(true, wire.OpContinuation, make([]byte, 600))...)
		}},
		{"text limit", func(c *client) []byte { return c.frame(true, wire.OpText, []byte("eleven char")) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, l.Addr().String(), "mqtt")
			s := f.next(t)
			c.send(tc.msg(c))
			if code := c.expectClose(); code != wire.CloseMessageTooBig {
				t.Fatalf("close code %d, want 1009", code)
			}
			c.expectEOF()
			if err := s.waitClosed(t); !errors.Is(err, wire.ErrMessageTooBig) {
				t.Fatalf("OnClose(%v), want ErrMessageTooBig", err)
			}
			// The other connection is not affected.
			good.sendMessage(wire.OpBinary, "still fine")
			if op, p := good.next(); op != wire.OpBinary || string(p) != "still fine" {
				t.Fatalf("other connection: %s %q", op, p)
			}
			gs.chunk(t)
		})
	}
}

func TestWSAbruptCloseCallsOnCloseOnce(t *testing.T) {
	f := newStubs("mqtt", echo)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	// Half a frame, then the TCP connection goes.
	c.send(c.frame(true, wire.OpBinary, []byte("abcdef"))[:5])
	_ = c.nc.Close()
	err := s.waitClosed(t)
	if !errors.Is(err, ErrAbnormalClosure) {
		t.Fatalf("OnClose(%v), want ErrAbnormalClosure", err)
	}
	if err := s.c.Write([]byte("late")); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Write after OnClose = %v, want ErrClosed", err)
	}
	_ = s.c.Close()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.closes.Load(); n != 1 {
		t.Fatalf("OnClose ran %d times, want 1", n)
	}
	if n := l.Conns(); n != 0 {
		t.Fatalf("Conns() = %d, want 0", n)
	}
}

func TestWSPauseReadingHoldsInput(t *testing.T) {
	var resumed atomic.Bool
	var early atomic.Int64 // bytes delivered while paused
	f := newStubs("mqtt", func(s *stub, b []byte) error {
		switch {
		case bytes.Equal(b, []byte("pause")):
			s.c.PauseReading()
		case !resumed.Load():
			early.Add(int64(len(b)))
		}
		return nil
	})
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{MaxBinaryMessageBytes: -1})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)

	// "pause" and the first data message arrive in one write, so the data
	// is held already read; then the client writes until TCP stops it.
	chunk := bytes.Repeat(c.frame(true, wire.OpBinary, bytes.Repeat([]byte{'d'}, 16<<10)), 64)
	c.send(c.frame(true, wire.OpBinary, []byte("pause")), c.frame(true, wire.OpBinary, []byte("held")))
	if got := s.chunk(t); string(got) != "pause" {
		t.Fatalf("first chunk %q", got)
	}
	sent := 0
	var rest []byte
	for {
		if sent > 256<<20 {
			t.Fatalf("the client wrote %d bytes to a paused connection without blocking", sent)
		}
		// A write that cannot finish in time means nobody reads the socket:
		// this deadline detects the stall, it does not wait for an effect.
		_ = c.nc.SetWriteDeadline(time.Now().Add(time.Second))
		n, err := c.nc.Write(chunk)
		sent += n
		if err != nil {
			rest = chunk[n:]
			break
		}
	}
	_ = c.nc.SetWriteDeadline(time.Time{})
	if n := early.Load(); n != 0 {
		t.Fatalf("%d bytes delivered while paused", n)
	}
	if len(s.data) != 0 {
		t.Fatalf("OnData ran while paused")
	}
	// Writes still go out while reading is paused.
	if err := s.c.Write([]byte("out")); err != nil {
		t.Fatal(err)
	}
	if op, p := c.next(); op != wire.OpBinary || string(p) != "out" {
		t.Fatalf("write while paused: %s %q", op, p)
	}

	resumed.Store(true)
	s.c.ResumeReading()
	done := make(chan error, 1)
	go func() {
		_, err := c.nc.Write(append(rest, c.frame(true, wire.OpBinary, []byte("end"))...))
		done <- err
	}()
	if got := s.chunk(t); string(got) != "held" {
		t.Fatalf("after ResumeReading the first chunk is %q, want the held one", got)
	}
	total := 0
	for {
		b := s.chunk(t)
		if string(b) == "end" {
			break
		}
		total += len(b)
	}
	if err := recv(t, done, "client write"); err != nil {
		t.Fatal(err)
	}
	if want := (sent + len(rest)) / len(chunk) * 64 * (16 << 10); total != want {
		t.Fatalf("delivered %d data bytes after resume, want %d", total, want)
	}
}

func TestWSServerCloseHandshake(t *testing.T) {
	f := newStubs("mqtt", func(s *stub, b []byte) error {
		if string(b) == "bye" {
			_ = s.c.Write([]byte("last words"))
			return s.c.Close()
		}
		return nil
	})
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	c.sendMessage(wire.OpBinary, "bye")
	if op, p := c.next(); op != wire.OpBinary || string(p) != "last words" {
		t.Fatalf("got %s %q before the close", op, p)
	}
	if code := c.expectClose(); code != wire.CloseNormal {
		t.Fatalf("close code %d, want 1000", code)
	}
	// Data sent after the server's close frame is dropped; the answer ends
	// the handshake and the server closes the TCP connection.
	c.send(c.frame(true, wire.OpBinary, []byte("ignored")), c.frame(true, wire.OpClose, closePayload(wire.CloseNormal)))
	c.expectEOF()
	if err := s.waitClosed(t); err != nil {
		t.Fatalf("OnClose(%v), want nil", err)
	}
	if got := len(s.data); got != 1 { // "bye" only
		t.Fatalf("%d OnData calls queued, want only the one before Close", got)
	}
}

func TestWSPeerCloseCodes(t *testing.T) {
	f := newStubs("mqtt", nil)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	for _, tc := range []struct {
		name    string
		payload []byte
		echo    uint16
		check   func(error) bool
	}{
		{"normal", closePayload(wire.CloseNormal), wire.CloseNormal, func(err error) bool { return err == nil }},
		{"no status", nil, wire.CloseNoStatus, func(err error) bool { return err == nil }},
		{"application code", append(closePayload(4001), "gone"...), 4001, func(err error) bool {
			var ce *CloseError
			return errors.As(err, &ce) && ce.Code == 4001 && ce.Reason == "gone"
		}},
		{"invalid code", closePayload(1005), wire.CloseProtocolError, func(err error) bool { return errors.Is(err, wire.ErrClosePayload) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dial(t, l.Addr().String(), "mqtt")
			s := f.next(t)
			c.send(c.frame(true, wire.OpClose, tc.payload))
			h, p, err := c.readFrame()
			if err != nil || h.Opcode != wire.OpClose {
				t.Fatalf("answer: %v %v", h.Opcode, err)
			}
			if code, _, _ := wire.ParseClose(p); code != tc.echo {
				t.Fatalf("answered close %d, want %d", code, tc.echo)
			}
			c.expectEOF()
			if err := s.waitClosed(t); !tc.check(err) {
				t.Fatalf("OnClose(%v)", err)
			}
		})
	}
}

func TestWSPeerCloseThenTCPCloseIsOrderly(t *testing.T) {
	f := newStubs("mqtt", nil)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	// The close frame and the FIN at once: the answer may find the socket
	// gone, the close still counts.
	c.send(c.frame(true, wire.OpClose, closePayload(wire.CloseGoingAway)))
	_ = c.nc.Close()
	if err := s.waitClosed(t); err != nil {
		t.Fatalf("OnClose(%v), want nil", err)
	}
}

func TestWSProtocolErrorCloses1002(t *testing.T) {
	f := newStubs("mqtt", nil)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	c.send([]byte{0x82, 0x03, 'a', 'b', 'c'}) // unmasked
	if code := c.expectClose(); code != wire.CloseProtocolError {
		t.Fatalf("close code %d, want 1002", code)
	}
	c.expectEOF()
	if err := s.waitClosed(t); !errors.Is(err, wire.ErrUnmasked) {
		t.Fatalf("OnClose(%v), want ErrUnmasked", err)
	}
}

func TestWSHandlerErrorClosesAfterItsFrame(t *testing.T) {
	bad := errors.New("protocol says no")
	f := newStubs("mqtt", func(s *stub, b []byte) error {
		_ = s.c.Write([]byte("error frame"))
		return bad
	})
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	c.sendMessage(wire.OpBinary, "junk")
	if op, p := c.next(); op != wire.OpBinary || string(p) != "error frame" {
		t.Fatalf("got %s %q, want the error frame", op, p)
	}
	if code := c.expectClose(); code != wire.ClosePolicyViolation {
		t.Fatalf("close code %d, want 1008", code)
	}
	c.send(c.frame(true, wire.OpClose, closePayload(wire.ClosePolicyViolation)))
	c.expectEOF()
	if err := s.waitClosed(t); !errors.Is(err, bad) {
		t.Fatalf("OnClose(%v), want the handler's error", err)
	}
}

func TestWSOutboundCap(t *testing.T) {
	f := newStubs("mqtt", nil)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{MaxOutboundBytes: 4096})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	if err := s.c.Write(make([]byte, 5000)); !errors.Is(err, transport.ErrOutboundFull) {
		t.Fatalf("Write over the cap = %v, want ErrOutboundFull", err)
	}
	if err := s.c.Write([]byte("x")); !errors.Is(err, transport.ErrOutboundFull) {
		t.Fatalf("next Write = %v, want ErrOutboundFull", err)
	}
	if err := s.waitClosed(t); !errors.Is(err, transport.ErrOutboundFull) {
		t.Fatalf("OnClose(%v), want ErrOutboundFull", err)
	}
	c.expectEOF()
}

func TestWSWriteNotify(t *testing.T) {
	f := newStubs("mqtt", nil)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	var mu sync.Mutex
	var order []int
	done := make(chan error, 3)
	for i := range 3 {
		if err := s.c.WriteNotify([]byte{byte('a' + i)}, func(err error) {
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			done <- err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if err := recv(t, done, "WriteNotify callback"); err != nil {
			t.Fatalf("callback error %v", err)
		}
	}
	mu.Lock()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Fatalf("callback order %v", order)
	}
	mu.Unlock()
	for _, want := range []string{"a", "b", "c"} {
		if _, p := c.next(); string(p) != want {
			t.Fatalf("got %q, want %q", p, want)
		}
	}
	_ = s.c.Close()
	if err := s.c.WriteNotify([]byte("late"), func(error) { t.Error("callback of a refused write ran") }); !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("WriteNotify after Close = %v, want ErrClosed", err)
	}
}

func TestWSListenerCloseAndIDs(t *testing.T) {
	f := newStubs("mqtt", nil)
	l, err := Listen("127.0.0.1:0", Subprotocols(f.factory, "mqtt"), Options{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	c1 := dial(t, l.Addr().String(), "mqtt")
	s1 := f.next(t)
	dial(t, l.Addr().String(), "mqtt")
	s2 := f.next(t)
	if s1.c.ID() == s2.c.ID() {
		t.Fatalf("two connections share ID %d", s1.c.ID())
	}
	if next := transport.NextConnID(); next <= s1.c.ID() || next <= s2.c.ID() {
		t.Fatalf("IDs %d, %d not from the transport counter (next %d)", s1.c.ID(), s2.c.ID(), next)
	}
	if got := s1.c.LocalAddr().String(); got != l.Addr().String() {
		t.Fatalf("LocalAddr %s, want %s", got, l.Addr())
	}
	if got, want := s1.c.RemoteAddr().String(), c1.nc.LocalAddr().String(); got != want {
		t.Fatalf("RemoteAddr %s, want %s", got, want)
	}
	if n := l.Conns(); n != 2 {
		t.Fatalf("Conns() = %d, want 2", n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*stub{s1, s2} {
		if err := s.waitClosed(t); !errors.Is(err, transport.ErrListenerClosed) {
			t.Fatalf("OnClose(%v), want ErrListenerClosed", err)
		}
	}
	if n := l.Conns(); n != 0 {
		t.Fatalf("Conns() = %d after Close, want 0", n)
	}
	c1.expectEOF()
}

func TestWSMaxConnections(t *testing.T) {
	f := newStubs("mqtt", nil)
	l := listen(t, Subprotocols(f.factory, "mqtt"), Options{MaxConnections: 1})
	c := dial(t, l.Addr().String(), "mqtt")
	s := f.next(t)
	if _, resp := handshake(t, l.Addr().String(), "/", "mqtt"); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second connection: status %d, want 503", resp.StatusCode)
	}
	_ = c.nc.Close()
	s.waitClosed(t)
	// The slot is given back just after OnClose, as for TCP connections.
	eventually(t, func() error {
		if n := l.Conns(); n != 0 {
			return fmt.Errorf("Conns() = %d", n)
		}
		return nil
	})
	dial(t, l.Addr().String(), "mqtt")
	f.next(t)
}

func TestWSParseOptions(t *testing.T) {
	o, rest, err := ParseOptions(map[string]string{
		"maximumConnections": "7", "websocket.maxTextMessageSize": "1000",
		"websocket.maxBinaryMessageSize": "2000", "wireFormat.maxFrameSize": "99",
	})
	if err != nil || o.MaxConnections != 7 || o.MaxTextMessageBytes != 1000 || o.MaxBinaryMessageBytes != 2000 ||
		len(rest) != 1 || rest["wireFormat.maxFrameSize"] != "99" {
		t.Fatalf("ParseOptions = %+v, %v, %v", o, rest, err)
	}
	for _, q := range []map[string]string{
		{"websocket.maxIdleTime": "1"},
		{"websocket.maxTextMessageSize": "0"},
		{"maximumConnections": "-1"},
	} {
		if _, _, err := ParseOptions(q); !errors.Is(err, transport.ErrInvalidOptions) {
			t.Errorf("ParseOptions(%v) = %v, want ErrInvalidOptions", q, err)
		}
	}
	if _, err := NewServer(nil, Options{}); !errors.Is(err, transport.ErrInvalidOptions) {
		t.Errorf("NewServer(nil) = %v", err)
	}
	if _, err := NewServer(Subprotocols(newStubs("m", nil).factory, "mqtt"), Options{DefaultSubprotocol: "stomp"}); !errors.Is(err, transport.ErrInvalidOptions) {
		t.Errorf("NewServer with an unserved default = %v", err)
	}
}
