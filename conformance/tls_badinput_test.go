package conformance

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestTLSBadInput sends bad input to the TLS connectors of
// tlsclients/activemq.xml while a STOMP client over TLS keeps working:
// after each case that client still sends and receives. The cases: an
// expired client certificate and one signed by an unknown CA (Go's TLS
// client on the needClientAuth OpenWire connector, and mosquitto_pub on
// the MQTT connector, which asks for a certificate), plain text on TLS
// ports, and handshakes that never complete (nothing sent, or half a
// ClientHello) held open while other clients connect.
func TestTLSBadInput(t *testing.T) {
	for _, target := range tlsTargets {
		t.Run(target, func(t *testing.T) {
			b := startTLSTarget(t, target, "activemq.xml")
			f := tlsClientFixtures
			working := dialSTOMPTLS(t, b.addr(t, "stomp-ssl"), clientTLS(t))
			stompRoundTrip(t, working, "/queue/"+uniq(t)+"_before")
			after := func(t *testing.T) {
				t.Helper()
				stompRoundTrip(t, working, "/queue/"+uniq(t)+"_after")
			}

			for _, c := range []struct{ name, cert, key string }{
				{"expired-cert", f.expiredCert, f.expiredKey},
				{"untrusted-cert", f.untrustedCert, f.untrustedKey},
			} {
				t.Run("Go/"+c.name, func(t *testing.T) {
					err := tlsExchange(t, b.addr(t, "ssl-need"), clientTLS(t, c.cert, c.key))
					if err == nil {
						t.Fatalf("the needClientAuth connector accepted a client with the %s", c.name)
					}
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Fatalf("the broker neither refused nor served a client with the %s within %v: %v", c.name, tlsTimeout, err)
					}
					t.Logf("refused: %v", err)
					after(t)
				})
				t.Run("mosquitto_pub/"+c.name, func(t *testing.T) {
					pub := mosquittoTool(t, "mosquitto_pub")
					args := append(mosquittoTLSArgs(t, b.addr(t, "mqtt-ssl"), c.cert, c.key), "-q", "1", "-t", "tls/"+uniq(t), "-m", "refused")
					last, err, out := runClient(t, pub, args...)
					if err == nil {
						t.Fatalf("mosquitto_pub with the %s published: %s\n%s", c.name, last, out)
					}
					t.Logf("mosquitto_pub: %v: %s", err, strings.TrimSpace(out))
					after(t)
				})
			}

			for _, conn := range []string{"ssl", "stomp-ssl"} {
				t.Run("plain-text/"+conn, func(t *testing.T) {
					got, err := plainTextOnTLS(t, b.addr(t, conn))
					if strings.Contains(string(got), "CONNECTED") || strings.Contains(string(got), "ActiveMQ") {
						t.Fatalf("the TLS port answered plain text in plain text: %q", got)
					}
					var ne net.Error
					if errors.As(err, &ne) && ne.Timeout() {
						t.Fatalf("the TLS port kept a plain-text connection open for %v (read %x)", tlsTimeout, got)
					}
					t.Logf("closed after %d bytes %x: %v", len(got), got, err)
					after(t)
				})
			}

			t.Run("stalled-handshakes", func(t *testing.T) {
				addr := b.addr(t, "ssl")
				var stalled []net.Conn
				for i := 0; i < 16; i++ {
					c, err := net.DialTimeout("tcp", addr, tlsTimeout)
					if err != nil {
						t.Fatalf("dial %s: %v", addr, err)
					}
					t.Cleanup(func() { c.Close() })
					if i%2 == 1 {
						// Half a ClientHello: a handshake record header
						// announcing 512 bytes, and 4 of them.
						if _, err := c.Write([]byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc}); err != nil {
							t.Fatal(err)
						}
					}
					stalled = append(stalled, c)
				}
				// While they hang, a full TLS client on the same connector
				// is served (OpenWire: the broker speaks first, its
				// WireFormatInfo) and the STOMP client keeps working.
				if err := tlsExchange(t, addr, clientTLS(t)); err != nil {
					t.Fatalf("a TLS client on %s beside %d stalled handshakes: %v", addr, len(stalled), err)
				}
				after(t)
				// What the broker does with them is reported, not asserted:
				// neither broker has to close them within a short bound.
				stalled[0].SetReadDeadline(time.Now().Add(2 * time.Second))
				_, err := stalled[0].Read(make([]byte, 1))
				t.Logf("a handshake with nothing sent, after 2 s: %v", err)
			})
		})
	}
}

// tlsExchange connects to the OpenWire connector addr with cfg and reads
// the broker's first bytes (its WireFormatInfo, sent unasked): nil when
// the broker speaks, else the handshake's or the read's error. With TLS
// 1.3 a client learns that its certificate was refused only at its first
// read, from the server's alert.
func tlsExchange(t *testing.T, addr string, cfg *tls.Config) error {
	t.Helper()
	d := &net.Dialer{Timeout: tlsTimeout}
	c, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(tlsTimeout))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return fmt.Errorf("first read (TLS %x): %w", c.ConnectionState().Version, err)
	}
	if !strings.Contains(string(buf[:n]), "ActiveMQ") {
		return fmt.Errorf("first bytes %q are no OpenWire WireFormatInfo", buf[:n])
	}
	return nil
}

// plainTextOnTLS writes a STOMP CONNECT frame in plain text to a TLS port
// and reads what comes back until the broker closes the connection (or
// tlsTimeout passes).
func plainTextOnTLS(t *testing.T, addr string) ([]byte, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, tlsTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00")); err != nil {
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(tlsTimeout))
	got, err := io.ReadAll(c)
	if err == nil {
		err = io.EOF
	}
	return got, err
}

// splitAddr splits "host:port".
func splitAddr(t *testing.T, addr string) (string, string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return host, port
}
