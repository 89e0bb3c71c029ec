package connlog

import (
	"bytes"
	"log/slog"
	"net"
	"strings"
	"testing"
)

// The lines a connection logger writes are those of base.With with the
// same attributes, in the same order, including attributes and groups
// added later; a level base does not enable writes nothing.
func TestConnlogWritesWhatWithWould(t *testing.T) {
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40001}
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	lazy := New(slog.New(slog.NewTextHandler(&got, opts)), 42, remote, "mqtt")
	eager := slog.New(slog.NewTextHandler(&want, opts)).With("conn", uint64(42), "remote", remote.String(), "proto", "mqtt")
	for _, l := range []*slog.Logger{lazy, eager} {
		l.Info("connected", "n", 1)
		l.Debug("not written")
		c := l.With("client_id", "dev-1")
		c.Warn("refused", "err", "bad")
		c.WithGroup("g").Info("grouped", "k", "v")
	}
	if got.String() != want.String() {
		t.Fatalf("connlog wrote\n%s\nslog's With writes\n%s", got.String(), want.String())
	}
	if n := strings.Count(got.String(), "\n"); n != 3 {
		t.Fatalf("%d lines, want 3:\n%s", n, got.String())
	}
	if !strings.Contains(got.String(), "conn=42 remote=127.0.0.1:40001 proto=mqtt client_id=dev-1 err=bad") {
		t.Fatalf("attributes out of order:\n%s", got.String())
	}
}

// sink keeps the benchmarks' loggers on the heap, as a session keeps its.
var sink *slog.Logger

// Holding a connection's logger costs two small objects, not slog's
// formatted attributes.
func BenchmarkConnlogNew(b *testing.B) {
	base := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	remote := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40001}
	b.Run("connlog", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sink = New(base, 42, remote, "mqtt")
		}
	})
	b.Run("slog.With", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			sink = base.With("conn", uint64(42), "remote", remote.String(), "proto", "mqtt")
		}
	})
}
