package conformance

import (
	"context"
	"net"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// muteProxy forwards TCP connections to target; while muted it drops
// what the broker sends (the client's bytes still go through), and cut
// closes every connection: a send the broker stored whose answer the
// client never got, then a lost connection.
type muteProxy struct {
	ln     net.Listener
	target string
	muted  atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
}

func newMuteProxy(t *testing.T, target string) *muteProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &muteProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		p.cut()
	})
	return p
}

func (p *muteProxy) addr() string { return p.ln.Addr().String() }

// cut closes every forwarded connection.
func (p *muteProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *muteProxy) forward(c net.Conn) {
	s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = struct{}{}, struct{}{}
	p.mu.Unlock()
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				if _, werr := s.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		s.Close()
		c.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 && !p.muted.Load() {
			if _, werr := c.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	s.Close()
	c.Close()
}

// runFailoverResend drives ActiveMQ's JMS client (FailoverSend) on a
// failover: URL through a muteProxy to the broker at addr. Twice, a
// persistent send reaches the broker, which stores it, while the proxy
// drops the answer; the proxy then cuts the connection and the failover
// transport reconnects (ConnectionInfo.failoverReconnect) and sends the
// unanswered message again. The first time the message had been consumed
// meanwhile, the second time it is still on the queue (delivered, not
// acknowledged). A consumer on the queue must get each message once.
func runFailoverResend(t *testing.T, addr string) {
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	px := newMuteProxy(t, addr)
	q := "dedup.failover." + uniq(t)
	url := "failover:(tcp://" + px.addr() + ")?initialReconnectDelay=50&maxReconnectDelay=200&useExponentialBackOff=false"
	cmd := exec.Command("java", "-cp", classes+string(os.PathListSeparator)+cp, "wharf.conformance.FailoverSend", url, q)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	jp := startProc(t, "JMS failover producer", cmd)
	jp.waitLine(regexp.MustCompile(`^READY$`), procStartTimeout)
	send := func(text string) {
		t.Helper()
		if _, err := stdin.Write([]byte("send " + text + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	sent := func(text string) {
		t.Helper()
		m := jp.waitLine(regexp.MustCompile(`^(SENT|SENDERR) `+regexp.QuoteMeta(text)+`\b(.*)$`), procStartTimeout)
		if m[1] != "SENT" {
			t.Fatalf("send of %s failed: %s", text, m[2])
		}
	}
	consumer := func(mode client.AckMode) (*client.Conn, *client.Consumer) {
		c := dialOW(t, addr, "")
		s, err := c.Session(false)
		if err != nil {
			t.Fatal(err)
		}
		k, err := s.Consumer(wire.NewQueue(q), client.ConsumerOptions{AckMode: mode})
		if err != nil {
			t.Fatal(err)
		}
		return c, k
	}
	recv := func(k *client.Consumer, want string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		m, err := k.Receive(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v", want, err)
		}
		if got, _, _ := m.Text(wire.DefaultLimits()); got != want {
			t.Fatalf("got %q, want %q (a resent copy stored twice?)", got, want)
		}
	}
	resend := func(text string, stored func()) {
		t.Helper()
		px.muted.Store(true)
		send(text)
		stored() // the broker has it: its answer is lost in the proxy
		px.muted.Store(false)
		px.cut()
		sent(text) // answered after the reconnect
	}

	autoConn, auto := consumer(client.AckAuto)
	send("a")
	sent("a")
	recv(auto, "a")
	// Consumed before the resend.
	resend("b", func() { recv(auto, "b") })
	send("c")
	sent("c")
	recv(auto, "c") // not "b" again
	autoConn.Close()

	// Still on the queue: delivered to a consumer that does not
	// acknowledge it, whose connection then closes.
	held, hk := consumer(client.AckClient)
	resend("d", func() { recv(hk, "d") })
	send("e")
	sent("e")
	held.Close() // "d" goes back to the queue, unacknowledged
	_, again := consumer(client.AckAuto)
	recv(again, "d")
	recv(again, "e") // not "d" twice
	lines, _ := jp.log.snapshot()
	resumed := 0
	for _, l := range lines {
		if l == "RESUMED" {
			resumed++
		}
	}
	// The first connection counts as one too.
	if resumed != 3 {
		t.Errorf("the JMS client's transport resumed %d times, want 3 (the first connection, one per cut)", resumed)
	}
}

// TestConformanceFailoverResendWharf: runFailoverResend against a wharf
// process on KahaDB: the failover client's resends are suppressed by the
// producer audit (logged "suppressing duplicate message send" twice).
func TestConformanceFailoverResendWharf(t *testing.T) {
	w := startWharf(t, t.TempDir())
	runFailoverResend(t, w.openwire)
	if n := len(w.logged("suppressing duplicate message send")); n != 2 {
		t.Errorf("wharf logged %d \"suppressing duplicate message send\", want 2", n)
	}
}

// TestConformanceFailoverResendActiveMQ: the same against Debian's
// ActiveMQ 5.17 on KahaDB, which Wharf follows.
func TestConformanceFailoverResendActiveMQ(t *testing.T) {
	a := startActiveMQ(t, t.TempDir())
	runFailoverResend(t, a.openwire)
}
