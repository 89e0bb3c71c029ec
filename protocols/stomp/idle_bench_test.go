package stomp

import (
	"bytes"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"wharf/protocols/internal/conntest"
)

// What an idle STOMP connection costs the broker's heap (issue 18): N real
// loopback connections, each CONNECT then CONNECTED then silence, opened
// through the transport against a real engine. The clients are raw
// sockets (syscall, not net.Conn) so that the process's heap holds the
// broker's side only (as protocols/mqtt's idleConns).

// stompIdleConns opens n idle STOMP connections (STOMP 1.2, heart-beat
// hb, e.g. "0,0") and returns the heap (bytes, after a full GC) each one
// holds, and a function that closes them and the listener.
func stompIdleConns(tb testing.TB, n int, hb string) (perConn float64, closeAll func()) {
	tb.Helper()
	srv := NewServer(conntest.Engine(tb), DefaultOptions())
	return conntest.IdleHeap(tb, n, srv.Handler, func(port, _ int) (int, error) {
		return dialSTOMPIdle(port, hb)
	}, "")
}

// dialSTOMPIdle connects a raw socket, sends CONNECT and reads the reply
// up to its NUL, which must be CONNECTED.
func dialSTOMPIdle(port int, hb string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	fail := func(err error) (int, error) { syscall.Close(fd); return -1, err }
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail(err)
	}
	tv := syscall.NsecToTimeval(int64(5 * time.Second))
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		return fail(err)
	}
	if _, err := syscall.Write(fd, []byte("CONNECT\naccept-version:1.2\nhost:localhost\nheart-beat:"+hb+"\n\n\x00")); err != nil {
		return fail(err)
	}
	var got []byte
	buf := make([]byte, 512)
	for bytes.IndexByte(got, 0) < 0 {
		k, err := syscall.Read(fd, buf)
		if err != nil {
			return fail(err)
		}
		if k == 0 {
			return fail(io.ErrUnexpectedEOF)
		}
		got = append(got, buf[:k]...)
	}
	if !bytes.HasPrefix(got, []byte("CONNECTED\n")) {
		return fail(fmt.Errorf("reply %q, want CONNECTED", got))
	}
	return fd, nil
}

// BenchmarkSTOMPIdleSession reports the heap an idle STOMP connection
// holds (B/idle-conn), without and with heart-beats. It opens 2,000
// connections once, whatever b.N.
func BenchmarkSTOMPIdleSession(b *testing.B) {
	for _, hb := range []string{"0,0", "10000,10000"} {
		b.Run("heart-beat="+hb, func(b *testing.B) {
			b.ReportAllocs()
			var per float64
			for range b.N {
				var closeAll func()
				per, closeAll = stompIdleConns(b, 2000, hb)
				closeAll()
			}
			b.ReportMetric(per, "B/idle-conn")
		})
	}
}

// BenchmarkSTOMPSessionSend is what a SEND costs a session from the bytes
// read to the engine, 16 frames to a read (a producer that keeps sending):
// the decoder taken from its pool and given back once a read, the frames
// decoded and mapped, the messages sent to a topic nobody subscribes to
// (nothing piles up, and no receipt is written).
func BenchmarkSTOMPSessionSend(b *testing.B) {
	e := conntest.Engine(b)
	srv := NewServer(e, DefaultOptions())
	tc := &conntest.Conn{}
	s := srv.Handler(tc).(*session)
	b.Cleanup(func() { s.OnClose(nil) })
	s.OnData([]byte("CONNECT\naccept-version:1.2\nhost:x\n\n\x00"))
	if !tc.Await(wait, func(out []byte, _ bool) bool { return bytes.HasPrefix(out, []byte("CONNECTED\n")) }) {
		b.Fatalf("no CONNECTED: %q", tc.Written())
	}
	body := bytes.Repeat([]byte{'x'}, 1024)
	const perRead = 16
	var in []byte
	for range perRead {
		in = append(in, "SEND\ndestination:/topic/bench.drop\ncontent-length:1024\n\n"...)
		in = append(append(in, body...), 0)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(in) / perRead))
	n := 0
	for b.Loop() {
		if n%perRead == 0 {
			s.OnData(in)
		}
		n++
	}
	if tc.Closed() {
		b.Fatalf("the session closed: %q", tc.Written())
	}
}
