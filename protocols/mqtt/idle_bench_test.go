package mqtt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
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
	profile := os.Getenv("MQTT_IDLE_HEAPPROFILE")
	if profile != "" {
		profile = fmt.Sprintf("%s.ka%d", profile, keepAlive)
	}
	srv := NewServer(conntest.Engine(tb), DefaultOptions())
	return conntest.IdleHeap(tb, n, srv.Handler, func(port, i int) (int, error) {
		return dialIdle(port, fmt.Sprintf("idle-%d-%d", i, keepAlive), keepAlive)
	}, profile)
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
