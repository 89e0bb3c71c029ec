package security

import (
	"crypto/tls"
	"io"
	"net"
	"testing"
)

// BenchmarkSecurityTLSHandshake: full TLS 1.3 handshakes (no session
// resumption) on loopback with the broker's JKS key (RSA 2048), each on a
// new TCP connection to one listener, with and without a client
// certificate (needClientAuth, client1). ns/op is one handshake, both
// sides on this machine's CPUs; the client reads one byte the server
// writes after its handshake, so each op is a handshake both sides
// finished.
func BenchmarkSecurityTLSHandshake(b *testing.B) {
	for _, bc := range []struct {
		name, client string
		opts         map[string]string
	}{
		{"client-cert=none", "", nil},
		{"client-cert=needed", "client1", map[string]string{"transport.needClientAuth": "true"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sc := serverTLS(b, brokerSSL(), bc.opts)
			sc.SessionTicketsDisabled = true
			cc := clientTLS(b, bc.client)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			errs := make(chan error, 1)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						close(errs)
						return
					}
					s := tls.Server(c, sc)
					if err := s.Handshake(); err != nil {
						errs <- err
					} else {
						s.Write([]byte{'k'})
					}
					s.Close()
				}
			}()
			b.ReportAllocs()
			for b.Loop() {
				c, err := tls.Dial("tcp", ln.Addr().String(), cc)
				if err != nil {
					b.Fatal(err)
				}
				var one [1]byte
				if _, err := io.ReadFull(c, one[:]); err != nil {
					b.Fatalf("%v (server: %v)", err, <-errs)
				}
				c.Close()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
			ln.Close()
			for err := range errs {
				b.Error(err)
			}
		})
	}
}
