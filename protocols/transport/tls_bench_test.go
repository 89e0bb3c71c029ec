package transport

import (
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"
)

// benchSizes are the payloads of the echo benchmarks: a small protocol
// frame (an ack, a small message) and a typical message.
var benchSizes = []struct {
	name string
	size int
}{{"size=100B", 100}, {"size=4KiB", 4 << 10}}

// benchRoundTrips sends size bytes and reads the echo back, b.N times, one
// at a time, over nc: throughput (b.SetBytes, one direction) and the 99th
// percentile round trip (p99-ns).
func benchRoundTrips(b *testing.B, nc net.Conn, size int) {
	msg := make([]byte, size)
	buf := make([]byte, size)
	lat := make([]time.Duration, 0, b.N)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := nc.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(nc, buf); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkTransportTCPEcho is the plain gnet transport's request/response
// round trip, the baseline of BenchmarkTransportTLSEcho.
func BenchmarkTransportTCPEcho(b *testing.B) {
	for _, bs := range benchSizes {
		b.Run(bs.name, func(b *testing.B) {
			l, err := Listen("127.0.0.1:0", echoFactory, Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			nc, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			benchRoundTrips(b, nc, bs.size)
		})
	}
}

// BenchmarkTransportTLSEcho is BenchmarkTransportTCPEcho over ListenTLS
// (TLS 1.3, ECDSA P-256, AES-GCM or ChaCha20 as crypto/tls picks).
func BenchmarkTransportTLSEcho(b *testing.B) {
	p := newTestPKI(b)
	for _, bs := range benchSizes {
		b.Run(bs.name, func(b *testing.B) {
			l, err := ListenTLS("127.0.0.1:0", echoFactory, Options{Logger: slog.New(slog.DiscardHandler)}, p.serverConfig(tls.NoClientCert))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			nc, err := tls.Dial("tcp", l.Addr().String(), p.clientConfig(nil))
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			benchRoundTrips(b, nc, bs.size)
		})
	}
}

// BenchmarkTransportTLSHandshake measures full handshakes (no session
// resumption) one after the other: dial, handshake, one byte echoed so
// the server's side is complete too, close. Reported as handshakes/s;
// "client cert" adds a client certificate the server verifies.
func BenchmarkTransportTLSHandshake(b *testing.B) {
	p := newTestPKI(b)
	for _, tc := range []struct {
		name string
		auth tls.ClientAuthType
		cert *tls.Certificate
	}{
		{"server cert", tls.NoClientCert, nil},
		{"client cert", tls.RequireAndVerifyClientCert, &p.client},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l, err := ListenTLS("127.0.0.1:0", echoFactory, Options{Logger: slog.New(slog.DiscardHandler)}, p.serverConfig(tc.auth))
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			cfg := p.clientConfig(tc.cert)
			one := make([]byte, 1)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				nc, err := tls.Dial("tcp", l.Addr().String(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := nc.Write(one); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(nc, one); err != nil {
					b.Fatal(err)
				}
				_ = nc.Close()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
		})
	}
}
