package bench

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmarks of issue #14: a TLS connector against a plain one of the
// same broker, and a broker with seed 000's authentication and
// authorization plugins against one without, end to end over STOMP on
// loopback. The client is in the benchmark's process, so ns/op, B/op and
// allocs/op count both sides; what differs between two cases of a pair
// is the broker's TLS or security work (and the client's TLS work).
//
//	go test ./bench -run '^$' -bench 'STOMPSecure' -count 5
//
// Sub-benchmarks are named conn=plain|tls and auth=off|on, so that
// benchstat -col /conn (or /auth) prints the ratios.

// secureBodyBytes is the body size of the throughput benchmarks.
const secureBodyBytes = 1024

// benchSecureSeq makes each run's queue name unique.
var benchSecureSeq atomic.Int64

// benchClientTLS trusts the fixtures' CA; resume keeps TLS sessions
// (tickets) across connections, as the Java client does by default.
func benchClientTLS(tb testing.TB, resume bool) *tls.Config {
	tb.Helper()
	pem, err := os.ReadFile(filepath.Join(tlsFixtures(tb), "ca.pem"))
	if err != nil {
		tb.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		tb.Fatal("ca.pem: no certificate")
	}
	tc := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	if resume {
		tc.ClientSessionCache = tls.NewLRUClientSessionCache(16)
	}
	return tc
}

// secureEndpoint is the broker a case runs against.
type secureEndpoint struct {
	addr  string
	tls   *tls.Config // nil: plain
	login bool        // send seed 000's users' credentials
}

// stompConnect dials e (handshake included), sends CONNECT as user and
// reads CONNECTED; bufBytes sizes the reader.
func stompConnect(e secureEndpoint, user, password string, bufBytes int) (net.Conn, *bufio.Reader, error) {
	var c net.Conn
	var err error
	d := net.Dialer{Timeout: 5 * time.Second}
	if e.tls != nil {
		c, err = tls.DialWithDialer(&d, "tcp", e.addr, e.tls)
	} else {
		c, err = d.Dial("tcp", e.addr)
	}
	if err != nil {
		return nil, nil, err
	}
	connect := "CONNECT\naccept-version:1.2\nhost:localhost\n"
	if e.login {
		connect += "login:" + user + "\npasscode:" + password + "\n"
	}
	if _, err := c.Write([]byte(connect + "\n\x00")); err != nil {
		c.Close()
		return nil, nil, err
	}
	r := bufio.NewReaderSize(c, bufBytes)
	f, err := readSecureFrame(r)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if !bytes.HasPrefix(f, []byte("CONNECTED")) {
		c.Close()
		return nil, nil, fmt.Errorf("connect: %q", f)
	}
	return c, r, nil
}

// readSecureFrame reads up to the NUL that ends a frame, skipping
// heart-beat EOLs (the bodies here have no NUL). The slice is r's.
func readSecureFrame(r *bufio.Reader) ([]byte, error) {
	for {
		f, err := r.ReadSlice(0)
		if err != nil {
			return nil, err
		}
		if f = bytes.TrimLeft(f, "\r\n"); len(f) > 1 {
			return f, nil
		}
	}
}

// secureCases starts a broker without security and one with seed 000's
// plugins, each with a plain and a TLS STOMP connector, and returns the
// four cases by name.
func secureCases(b *testing.B, resume bool) []struct {
	name string
	e    secureEndpoint
} {
	open := startTLSBroker(b, tlsBrokerOptions{})
	guarded := startTLSBroker(b, tlsBrokerOptions{auth: true})
	tc := benchClientTLS(b, resume)
	return []struct {
		name string
		e    secureEndpoint
	}{
		{"conn=plain/auth=off", secureEndpoint{addr: open.STOMPAddr()}},
		{"conn=tls/auth=off", secureEndpoint{addr: open.Addr("stomp+ssl").String(), tls: tc}},
		{"conn=plain/auth=on", secureEndpoint{addr: guarded.STOMPAddr(), login: true}},
		{"conn=tls/auth=on", secureEndpoint{addr: guarded.Addr("stomp+ssl").String(), tls: tc, login: true}},
	}
}

// BenchmarkSTOMPSecureQueue is send -> dispatch -> receive of 1 KiB
// non-persistent messages on a queue, one producer connection (as
// orders-svc, which may write orders.>) and one consumer (as fulfilment,
// which may read it), ack:auto, over a plain and a TLS connector, with and
// without authentication and authorization. window=1000 lets the producer
// run up to 1000 messages ahead of the consumer (throughput; p99 is
// mostly the time a message waits behind the others), window=1 sends the
// next message when the last one arrived (ns/op is the round trip, p99 its
// tail). Metrics: MB/s (body bytes), msgs/s, p50-ns and p99-ns (send to
// receive, measured on one clock), allocs/op of client and broker.
func BenchmarkSTOMPSecureQueue(b *testing.B) {
	cases := secureCases(b, false)
	for _, window := range []int{1000, 1} {
		for _, tc := range cases {
			b.Run(fmt.Sprintf("window=%d/%s", window, tc.name), func(b *testing.B) {
				benchSecureQueue(b, tc.e, window)
			})
		}
	}
}

func benchSecureQueue(b *testing.B, e secureEndpoint, window int) {
	queue := fmt.Sprintf("/queue/orders.bench.%d.%d", os.Getpid(), benchSecureSeq.Add(1))
	prod, pr, err := stompConnect(e, benchProducerUser, benchProducerPassword, 1<<16)
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	cons, cr, err := stompConnect(e, benchConsumerUser, benchConsumerPassword, 1<<16)
	if err != nil {
		b.Fatal(err)
	}
	defer cons.Close()
	fmt.Fprintf(cons, "SUBSCRIBE\nid:1\ndestination:%s\nack:auto\nreceipt:r\n\n\x00", queue)
	if f, err := readSecureFrame(cr); err != nil || !bytes.HasPrefix(f, []byte("RECEIPT")) {
		b.Fatalf("subscribe: %q, %v", f, err)
	}

	// The body starts with the send time: 16 hex digits of nanoseconds
	// since t0.
	head := "SEND\ndestination:" + queue + "\ncontent-type:application/octet-stream\ncontent-length:" +
		strconv.Itoa(secureBodyBytes) + "\n\n"
	frame := append([]byte(head), bytes.Repeat([]byte("x"), secureBodyBytes)...)
	frame = append(frame, 0)
	stamp := frame[len(head) : len(head)+16]

	lat := make([]int64, b.N)
	credits := make(chan struct{}, window)
	done := make(chan error, 2)
	t0 := time.Now()
	// Anything the broker says to the producer (an ERROR frame: refused
	// write) ends the run instead of leaving the consumer waiting.
	go func() {
		f, err := readSecureFrame(pr)
		if err == nil {
			err = fmt.Errorf("producer got %q", f)
		}
		done <- fmt.Errorf("producer connection: %w", err)
	}()
	b.ReportAllocs()
	b.SetBytes(secureBodyBytes)
	b.ResetTimer()
	go func() {
		for i := range lat {
			f, err := readSecureFrame(cr)
			if err != nil {
				done <- err
				return
			}
			k := bytes.Index(f, []byte("\n\n"))
			if !bytes.HasPrefix(f, []byte("MESSAGE")) || k < 0 || len(f) < k+2+16 {
				done <- fmt.Errorf("consumer got %q", f)
				return
			}
			sent, err := strconv.ParseInt(string(f[k+2:k+2+16]), 16, 64)
			if err != nil {
				done <- err
				return
			}
			lat[i] = int64(time.Since(t0)) - sent
			<-credits
		}
		done <- nil
	}()
	pw := bufio.NewWriterSize(prod, 1<<16)
	for range b.N {
		select {
		case credits <- struct{}{}:
		default:
			// The window is full: what is buffered must go out before
			// the consumer can free a place.
			if err := pw.Flush(); err != nil {
				b.Fatal(err)
			}
			credits <- struct{}{}
		}
		putHex16(stamp, uint64(time.Since(t0)))
		if _, err := pw.Write(frame); err != nil {
			b.Fatal(err)
		}
	}
	if err := pw.Flush(); err != nil {
		b.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			b.Fatal(err)
		}
	case <-time.After(5 * time.Minute):
		b.Fatal("consumer did not finish")
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[(len(lat)-1)*99/100]), "p99-ns")
}

// putHex16 writes v as 16 lower-case hex digits.
func putHex16(dst []byte, v uint64) {
	const digits = "0123456789abcdef"
	for i := 15; i >= 0; i-- {
		dst[i] = digits[v&15]
		v >>= 4
	}
}

// BenchmarkSTOMPSecureConnect is the handshake rate: TCP connect, TLS
// handshake (conn=tls: a full one each time, ECDHE with the broker's RSA
// 2048 key; conn=tls-resumed: resumed from a session ticket, as the Java
// client's session cache does), CONNECT (with login and password when
// auth=on, checked by the simple authentication plugin) and CONNECTED,
// then close; one connection at a time. Metric: handshakes/s.
func BenchmarkSTOMPSecureConnect(b *testing.B) {
	cases := secureCases(b, false)
	resumed := benchClientTLS(b, true)
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) { benchSecureConnect(b, tc.e) })
		if tc.e.tls != nil {
			e := tc.e
			e.tls = resumed
			b.Run("conn=tls-resumed/"+tc.name[len("conn=tls/"):], func(b *testing.B) { benchSecureConnect(b, e) })
		}
	}
}

func benchSecureConnect(b *testing.B, e secureEndpoint) {
	b.ReportAllocs()
	var resumed int
	for range b.N {
		c, _, err := stompConnect(e, benchProducerUser, benchProducerPassword, 4096)
		if err != nil {
			b.Fatal(err)
		}
		if tc, ok := c.(*tls.Conn); ok && tc.ConnectionState().DidResume {
			resumed++
		}
		c.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handshakes/s")
	if e.tls != nil && e.tls.ClientSessionCache != nil && resumed < b.N-1 {
		// Only the first connection may make a full handshake.
		b.Fatalf("%d of %d connections resumed a TLS session; want all but the first", resumed, b.N)
	}
}
