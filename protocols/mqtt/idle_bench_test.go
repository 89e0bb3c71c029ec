package mqtt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
	"wharf/protocols/transport"
)

// What an idle MQTT connection costs the broker's heap (issue 18): N real
// loopback connections, each CONNECT then CONNACK then silence, opened
// through the transport against a real engine. The clients are raw
// sockets (syscall, not net.Conn) so that the process's heap holds the
// broker's side only.

// idleConns opens n idle MQTT connections to srv through the transport and
// returns the heap (bytes, after a full GC) each one holds, and a function
// that closes them and the listener. With MQTT_IDLE_HEAPPROFILE=<file> it
// also writes a heap profile of the open connections to <file>.ka<keepAlive>
// (read it with go tool pprof -sample_index=inuse_space; run with
// -memprofilerate 1 for every allocation). keepAlive is the CONNECT's keep-alive (s).
func idleConns(tb testing.TB, n int, keepAlive uint16) (perConn float64, closeAll func()) {
	tb.Helper()
	// Both ends of every connection are in this process; Go raises the
	// soft descriptor limit to the hard one at start.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(2*(n+200)+100) {
		tb.Skipf("descriptor limit %d is below the %d this needs (ulimit -n)", lim.Cur, 2*(n+200)+100)
	}
	e := conntest.Engine(tb)
	srv := NewServer(e, DefaultOptions())
	l, err := transport.Listen("127.0.0.1:0", srv.Handler, transport.Options{NumEventLoop: 2, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	var fds []int
	closeAll = func() {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		fds = nil
		l.Close() // each benchmark iteration frees its descriptors
	}
	tb.Cleanup(closeAll)
	open := func(k int) {
		for i := 0; i < k; i++ {
			fd, err := dialIdle(port, fmt.Sprintf("idle-%d-%d", len(fds), keepAlive), keepAlive)
			if err != nil {
				tb.Fatalf("connection %d: %v", len(fds), err)
			}
			fds = append(fds, fd)
		}
	}
	// Warm up: pools, event-loop buffers and maps reach their steady
	// size before the measured connections.
	open(200)
	before := heapAfterGC()
	open(n)
	after := heapAfterGC()
	if f := os.Getenv("MQTT_IDLE_HEAPPROFILE"); f != "" {
		w, err := os.Create(fmt.Sprintf("%s.ka%d", f, keepAlive))
		if err != nil {
			tb.Fatal(err)
		}
		err = pprof.Lookup("heap").WriteTo(w, 0)
		w.Close()
		if err != nil {
			tb.Fatal(err)
		}
	}
	if got := l.Conns(); got != len(fds) {
		tb.Fatalf("listener holds %d connections, want %d", got, len(fds))
	}
	return float64(int64(after)-int64(before)) / float64(n), closeAll
}

func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// dialIdle connects a raw socket to 127.0.0.1:port, sends an MQTT 3.1.1
// CONNECT and reads its CONNACK, which must accept the connection.
func dialIdle(port int, clientID string, keepAlive uint16) (int, error) {
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
	p := wire.Packet{Type: wire.CONNECT, Connect: &wire.Connect{
		ProtocolName: wire.ProtocolName, ProtocolLevel: wire.Version311,
		ClientID: clientID, CleanSession: true, KeepAlive: keepAlive,
	}}
	b := wire.AppendPacket(nil, &p, wire.Version311)
	if _, err := syscall.Write(fd, b); err != nil {
		return fail(err)
	}
	var ack [4]byte
	for got := 0; got < len(ack); {
		k, err := syscall.Read(fd, ack[got:])
		if err != nil {
			return fail(err)
		}
		if k == 0 {
			return fail(io.ErrUnexpectedEOF)
		}
		got += k
	}
	if ack != [4]byte{0x20, 2, 0, 0} {
		return fail(errors.New("CONNACK " + fmt.Sprintf("% x", ack[:]) + ", want 20 02 00 00"))
	}
	return fd, nil
}

// BenchmarkIdleSession reports the heap an idle MQTT connection holds
// (B/idle-conn), without and with a keep-alive. It opens 2,000 connections
// once, whatever b.N.
func BenchmarkIdleSession(b *testing.B) {
	for _, ka := range []uint16{0, 60} {
		b.Run(fmt.Sprintf("keepalive=%d", ka), func(b *testing.B) {
			b.ReportAllocs()
			var per float64
			for range b.N {
				var closeAll func()
				per, closeAll = idleConns(b, 2000, ka)
				closeAll()
			}
			b.ReportMetric(per, "B/idle-conn")
		})
	}
}
