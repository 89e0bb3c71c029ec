package conntest

import (
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"testing"

	"wharf/protocols/transport"
)

// IdleHeap measures what an idle connection costs the broker's heap
// (issue 18): it listens with f on loopback through the transport, opens
// 200 connections with dial to warm pools, event-loop buffers and maps up,
// then n more, and returns the heap (bytes, after a full GC) each of the n
// holds, and a function that closes them and the listener. dial(port, i)
// opens connection i as a raw socket (syscall, not net.Conn, so that the
// process's heap holds the broker's side only), completes the protocol's
// handshake and returns its descriptor. With profile set, a heap profile
// of the open connections is written there.
func IdleHeap(tb testing.TB, n int, f transport.HandlerFactory, dial func(port, i int) (int, error), profile string) (perConn float64, closeAll func()) {
	tb.Helper()
	// Both ends of every connection are in this process; Go raises the
	// soft descriptor limit to the hard one at start.
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil && lim.Cur < uint64(2*(n+200)+100) {
		tb.Skipf("descriptor limit %d is below the %d this needs (ulimit -n)", lim.Cur, 2*(n+200)+100)
	}
	l, err := transport.Listen("127.0.0.1:0", f, transport.Options{NumEventLoop: 2, Logger: slog.New(slog.DiscardHandler)})
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
		for range k {
			fd, err := dial(port, len(fds))
			if err != nil {
				tb.Fatalf("connection %d: %v", len(fds), err)
			}
			fds = append(fds, fd)
		}
	}
	open(200)
	before := heapAfterGC()
	open(n)
	after := heapAfterGC()
	if profile != "" {
		w, err := os.Create(profile)
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
