package openwire

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"wharf/protocols/internal/conntest"
	"wharf/protocols/openwire/wire"
)

// What an idle OpenWire connection costs the broker's heap (issue 18: the
// idle-connections row of bench-compare, 8.3 KiB of resident memory per
// connection): n real loopback connections through the transport against
// a real engine, each doing what `wharf bench --scenario connections`
// does (WireFormatInfo, ConnectionInfo, SessionInfo, each answered) and
// then nothing. The clients are raw sockets (syscall, not net.Conn) so
// that the process's heap holds the broker's side only.

// owIdleConns opens n idle OpenWire connections and returns the heap
// (bytes, after a full GC) each one holds, and a function closing them.
// With OPENWIRE_IDLE_HEAPPROFILE=<file> it also writes a heap profile of
// the open connections to <file>.
func owIdleConns(tb testing.TB, n int) (perConn float64, closeAll func()) {
	tb.Helper()
	srv, err := NewServer(conntest.Engine(tb), DefaultOptions())
	if err != nil {
		tb.Fatal(err)
	}
	return conntest.IdleHeap(tb, n, srv.Handler, owDialIdle, os.Getenv("OPENWIRE_IDLE_HEAPPROFILE"))
}

// owIdleHello returns what the Go client sends to open a connection
// and one session: WireFormatInfo in the initial format, then
// ConnectionInfo and SessionInfo (ids from n) in the format both sides
// agree on (the client's defaults: tight, cached); and that format.
func owIdleHello(n int) (wfi, rest []byte, f wire.Format, err error) {
	return owHello(n, wire.DefaultOptions())
}

// owHello is owIdleHello with the client's wire format options local.
func owHello(n int, local wire.Options) (wfi, rest []byte, f wire.Format, err error) {
	info, err := wire.NewWireFormatInfo(local)
	if err != nil {
		return nil, nil, f, err
	}
	if wfi, err = wire.NewEncoder(wire.InitialFormat(local.Version)).Append(nil, info); err != nil {
		return nil, nil, f, err
	}
	// The broker advertises the same defaults but for its names.
	if f, err = wire.Negotiate(local, local); err != nil {
		return nil, nil, f, err
	}
	enc := wire.NewEncoder(f)
	conn := &wire.ConnectionId{Value: fmt.Sprintf("ID:idle-%d", n)}
	rest, err = enc.Append(nil, &wire.ConnectionInfo{BaseCommand: wire.BaseCommand{CommandId: 1, ResponseRequired: true}, ConnectionId: conn, ClientId: conn.Value})
	if err != nil {
		return nil, nil, f, err
	}
	rest, err = enc.Append(rest, &wire.SessionInfo{BaseCommand: wire.BaseCommand{CommandId: 2, ResponseRequired: true}, SessionId: &wire.SessionId{ConnectionId: conn.Value, Value: 1}})
	return wfi, rest, f, err
}

// owDialIdle connects a raw socket to 127.0.0.1:port, opens a connection
// and a session (owIdleHello) and reads until both are answered with a
// Response, which must not be an ExceptionResponse.
func owDialIdle(port, n int) (int, error) {
	wfi, rest, f, err := owIdleHello(n)
	if err != nil {
		return -1, err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return -1, err
	}
	fail := func(err error) (int, error) { syscall.Close(fd); return -1, err }
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail(err)
	}
	for _, b := range [][]byte{wfi, rest} {
		if _, err := syscall.Write(fd, b); err != nil {
			return fail(err)
		}
	}
	dec := wire.NewDecoder(wire.InitialFormat(wire.MaxVersion), wire.Limits{})
	buf := make([]byte, 4096)
	negotiated, answered := false, 0
	for answered < 2 {
		k, err := syscall.Read(fd, buf)
		if err != nil {
			return fail(err)
		}
		if k == 0 {
			return fail(errors.New("closed by the broker"))
		}
		dec.Feed(buf[:k])
		for {
			ds, err := dec.Next()
			if err != nil {
				return fail(err)
			}
			if ds == nil {
				break
			}
			switch r := ds.(type) {
			case *wire.WireFormatInfo:
				if !negotiated {
					negotiated = true
					dec.SetFormat(f)
				}
			case *wire.ExceptionResponse:
				return fail(fmt.Errorf("command %d refused: %v", r.CorrelationId, r.Exception))
			case *wire.Response:
				answered++
			}
		}
	}
	return fd, nil
}

// BenchmarkOpenWireIdleConn reports the heap an idle OpenWire connection
// holds (B/idle-conn). It opens 2,000 connections once, whatever b.N.
func BenchmarkOpenWireIdleConn(b *testing.B) {
	b.ReportAllocs()
	var per float64
	for range b.N {
		var closeAll func()
		per, closeAll = owIdleConns(b, 2000)
		closeAll()
	}
	b.ReportMetric(per, "B/idle-conn")
}
