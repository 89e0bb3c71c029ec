package mqtt

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
	"wharf/protocols/transport"
)

// An idle connection keeps its state small (issue 18): no sessionExt, no
// decoder, no clientExt. These tests check that a connection which was idle
// still does everything once it wakes up, through Eclipse Paho over real
// sockets, and that the keep-alive runs on the shared wheel.

// idleServer serves MQTT on a loopback port through the transport.
func idleServer(t *testing.T, o Options) (*Server, string) {
	t.Helper()
	e := conntest.Engine(t)
	srv := NewServer(e, o)
	l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{NumEventLoop: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return srv, l.Addr().String()
}

// pahoConnect connects an MQTT 3.1.1 Paho client, clean session unless
// opts say otherwise.
func pahoConnect(t *testing.T, addr, clientID string, opts ...func(*paho.ClientOptions)) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(clientID).
		SetProtocolVersion(4).SetAutoReconnect(false).SetConnectRetry(false).
		SetConnectTimeout(wait).SetKeepAlive(60 * time.Second).SetCleanSession(true)
	for _, f := range opts {
		f(o)
	}
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("paho connect %s: %v", clientID, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c
}

// idleState reports what the session holding clientID keeps beyond its
// struct: its sessionExt, decoder and clientExt.
func idleState(t *testing.T, srv *Server, clientID string) (ext, dec, clientExt bool) {
	t.Helper()
	srv.mu.Lock()
	cs := srv.clients[clientID]
	srv.mu.Unlock()
	if cs == nil || cs.active == nil {
		t.Fatalf("no active session for %s", clientID)
	}
	s := cs.active
	s.mu.Lock() // dec is the transport goroutine's, under mu
	defer s.mu.Unlock()
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return s.extIfMade() != nil, s.dec != nil, cs.ext != nil
}

func await(t *testing.T, ch <-chan paho.Message, what string) paho.Message {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(wait):
		t.Fatalf("no %s within %v", what, wait)
		return nil
	}
}

// A connection that stayed idle (holding none of the lazily made state)
// then subscribes at QoS 2, receives at QoS 2 exactly once, publishes at
// QoS 2, and its persistent session resumes after a reconnect.
func TestMQTTSessionIdleThenActive(t *testing.T) {
	srv, addr := idleServer(t, DefaultOptions())
	got := make(chan paho.Message, 16)
	idle := pahoConnect(t, addr, "sleeper", func(o *paho.ClientOptions) {
		o.SetCleanSession(false).SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) { got <- m })
	})
	if ext, dec, cx := idleState(t, srv, "sleeper"); ext || dec || cx {
		t.Fatalf("idle session holds sessionExt %v, decoder %v, clientExt %v; want none", ext, dec, cx)
	}

	if tok := idle.Subscribe("wake/#", 2, nil); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("subscribe after idle: %v", tok.Error())
	}
	if ext, _, _ := idleState(t, srv, "sleeper"); !ext {
		t.Fatal("subscribed session has no sessionExt")
	}
	pub := pahoConnect(t, addr, "waker")
	if tok := pub.Publish("wake/up", 2, false, "first"); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
	m := await(t, got, "QoS 2 delivery to the woken session")
	if m.Topic() != "wake/up" || string(m.Payload()) != "first" || m.Qos() != 2 {
		t.Fatalf("got %s %q QoS %d, want wake/up \"first\" QoS 2", m.Topic(), m.Payload(), m.Qos())
	}

	// The woken session publishes at QoS 2 to a subscriber.
	echo := make(chan paho.Message, 4)
	watcher := pahoConnect(t, addr, "watcher")
	if tok := watcher.Subscribe("echo", 2, func(_ paho.Client, m paho.Message) { echo <- m }); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("watcher subscribe: %v", tok.Error())
	}
	if tok := idle.Publish("echo", 2, false, "from the sleeper"); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("publish from the woken session: %v", tok.Error())
	}
	if m := await(t, echo, "QoS 2 publish of the woken session"); string(m.Payload()) != "from the sleeper" {
		t.Fatalf("watcher got %q, want \"from the sleeper\"", m.Payload())
	}

	// The persistent session keeps its subscription across a reconnect:
	// a message sent while away arrives on resumption.
	idle.Disconnect(0)
	if tok := pub.Publish("wake/again", 2, false, "while away"); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("publish while away: %v", tok.Error())
	}
	pahoConnect(t, addr, "sleeper", func(o *paho.ClientOptions) {
		o.SetCleanSession(false).SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) { got <- m })
	})
	if m := await(t, got, "message kept while away"); m.Topic() != "wake/again" || string(m.Payload()) != "while away" {
		t.Fatalf("on resumption got %s %q, want wake/again \"while away\"", m.Topic(), m.Payload())
	}
	select {
	case m := <-got:
		t.Fatalf("duplicate or stray delivery %s %q", m.Topic(), m.Payload())
	default:
	}
}

// The will of a connection that sat idle is published when its socket is
// lost, and not when it disconnects normally after being idle.
func TestMQTTSessionIdleWill(t *testing.T) {
	srv, addr := idleServer(t, DefaultOptions())
	wills := make(chan paho.Message, 4)
	watcher := pahoConnect(t, addr, "will-watcher")
	if tok := watcher.Subscribe("wills/#", 1, func(_ paho.Client, m paho.Message) { wills <- m }); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}

	// Paho with a connection the test can cut without DISCONNECT.
	var sock net.Conn
	pahoConnect(t, addr, "lost", func(o *paho.ClientOptions) {
		o.SetWill("wills/lost", "lost is gone", 1, false)
		o.SetCustomOpenConnectionFn(func(uri *url.URL, _ paho.ClientOptions) (net.Conn, error) {
			c, err := net.Dial("tcp", uri.Host)
			sock = c
			return c, err
		})
	})
	if _, dec, _ := idleState(t, srv, "lost"); dec {
		t.Fatal("idle connection holds a decoder")
	}
	sock.Close() // lost without DISCONNECT
	if m := await(t, wills, "will of the lost connection"); m.Topic() != "wills/lost" || string(m.Payload()) != "lost is gone" {
		t.Fatalf("will %s %q, want wills/lost \"lost is gone\"", m.Topic(), m.Payload())
	}

	polite := pahoConnect(t, addr, "polite", func(o *paho.ClientOptions) { o.SetWill("wills/polite", "never", 1, false) })
	polite.Disconnect(1000) // waits for DISCONNECT to be sent (0 may drop it)
	// Barrier: once the session is released (its will, if any, sent
	// before it goes offline), a message published reaches the watcher
	// after any will would have.
	deadline := time.Now().Add(wait)
	for {
		srv.mu.Lock()
		gone := srv.clients["polite"] == nil
		srv.mu.Unlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("polite session not released after DISCONNECT")
		}
		time.Sleep(time.Millisecond) // polling the server's state with a deadline
	}
	if tok := watcher.Publish("wills/barrier", 1, false, "barrier"); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("barrier publish: %v", tok.Error())
	}
	if m := await(t, wills, "barrier"); m.Topic() != "wills/barrier" {
		t.Fatalf("got %s %q before the barrier: the will of a normal DISCONNECT was published", m.Topic(), m.Payload())
	}
}

// A keep-alive of k closes a silent connection no sooner than 1.5 k after
// its last packet, and a client that keeps pinging stays connected past it
// [MQTT-3.1.2-24]; on the shared wheel, through a real socket.
func TestMQTTKeepAliveOnWheel(t *testing.T) {
	const k = 1 // s, the smallest CONNECT keep-alive
	srv, addr := idleServer(t, DefaultOptions())
	port := mustPort(t, addr)
	fd, err := dialIdle(port, "pinger", k)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	ping := wire.AppendPacket(nil, &wire.Packet{Type: wire.PINGREQ}, wire.Version311)
	var last time.Time
	// Ping every half keep-alive for three keep-alives: each PINGRESP is
	// proof the connection was still open when it came.
	for range 6 {
		time.Sleep(k * time.Second / 2) // the client's pace, not synchronisation
		if _, err := syscall.Write(fd, ping); err != nil {
			t.Fatalf("PINGREQ: %v", err)
		}
		var resp [2]byte
		if n, err := readFull(fd, resp[:]); err != nil || n != 2 || resp != [2]byte{0xd0, 0} {
			t.Fatalf("PINGRESP % x (%d bytes, %v), want d0 00: a pinging client was cut", resp[:n], n, err)
		}
		last = time.Now()
	}
	if srv.wheel.Armed() != 1 {
		t.Fatalf("%d wheel timers armed for one connection, want 1", srv.wheel.Armed())
	}
	// Silent now: the broker closes the socket (read returns EOF).
	var b [1]byte
	n, err := readFull(fd, b[:])
	closedAfter := time.Since(last)
	if n != 0 || err != nil {
		t.Fatalf("read %d bytes, err %v; want EOF from the keep-alive close", n, err)
	}
	if closedAfter < k*time.Second*3/2 {
		t.Fatalf("closed %v after the last packet, before 1.5 times the keep-alive (%v)", closedAfter, k*time.Second*3/2)
	}
	eventuallyArmed(t, srv, 0)
}

// eventuallyArmed waits until the server's wheel holds n timers.
func eventuallyArmed(t *testing.T, srv *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for srv.wheel.Armed() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d wheel timers armed, want %d", srv.wheel.Armed(), n)
		}
		time.Sleep(time.Millisecond) // polling a counter with a deadline
	}
}

func mustPort(t *testing.T, addr string) int {
	t.Helper()
	a, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return a.Port
}

// readFull reads len(b) bytes from fd, or up to EOF (n < len(b), nil).
func readFull(fd int, b []byte) (int, error) {
	got := 0
	for got < len(b) {
		k, err := syscall.Read(fd, b[got:])
		if err != nil {
			return got, err
		}
		if k == 0 {
			return got, nil
		}
		got += k
	}
	return got, nil
}

// Closing connections leaves no timer in the wheel.
func TestMQTTWheelNoTimersAfterClose(t *testing.T) {
	srv, addr := idleServer(t, DefaultOptions())
	port := mustPort(t, addr)
	var fds []int
	for i := range 50 {
		fd, err := dialIdle(port, fmt.Sprintf("c%d", i), uint16(30+i))
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	if got := srv.wheel.Armed(); got != len(fds) {
		t.Fatalf("%d wheel timers armed for %d keep-alive connections, want one each", got, len(fds))
	}
	for _, fd := range fds {
		syscall.Close(fd)
	}
	eventuallyArmed(t, srv, 0)
}
