package conformance

// Hostile connections at scale (issue #17 item 3): slowloris clients that
// never finish a handshake, and connection churn. Both run on a broker of
// brokertest's default connectors (openwire, stomp, mqtt, amqp) on
// loopback, with real sockets.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/broker"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	amqpwire "wharf/protocols/amqp/wire"
	mqttwire "wharf/protocols/mqtt/wire"
	"wharf/protocols/openwire/client"
	owwire "wharf/protocols/openwire/wire"
)

// hostileConnectTimeout is the transport.connectAttemptTimeout of every
// connector of the slowloris test.
const hostileConnectTimeout = 500 * time.Millisecond

// hostileBroker starts a broker with brokertest's default connectors and
// opts added to each one's URI options.
func hostileBroker(t *testing.T, opts map[string]string) *brokertest.Broker {
	t.Helper()
	return brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) {
		for i := range c.Transports {
			for k, v := range opts {
				c.Transports[i].Options[k] = v
			}
		}
	}))
}

// waitNoConnections waits until no connector of b holds a connection
// open and the engine has no client connection left: the barrier after
// which the churn and slowloris tests measure.
func waitNoConnections(t *testing.T, b *brokertest.Broker, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		open := b.OpenConnections()
		engineConns := b.Engine().ConnectionsByProtocol()
		n := 0
		for _, c := range open {
			n += c
		}
		for _, c := range engineConns {
			n += c
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("connections still open %v after %v: sockets by connector %v, engine connections %v", n, d, open, engineConns)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not synchronisation
	}
}

// slowloris is one way of never finishing a handshake.
type slowloris struct {
	name string
	// first is written at once; trickle, one byte per trickleEvery, after.
	first, trickle []byte
}

const trickleEvery = 100 * time.Millisecond

// TestConformanceHostileSlowloris: on every protocol, connections that
// open TCP and send nothing, half a handshake, or a handshake one byte per
// 100 ms are each closed by the connector's connect timeout
// (transport.connectAttemptTimeout=500 ms) — not before it, and within 5 s
// — and counted in the engine's handshake timeouts
// (wharf_connections_handshake_timeouts_total); meanwhile a STOMP client
// keeps sending and receiving, and afterwards every protocol serves a
// client.
func TestConformanceHostileSlowloris(t *testing.T) {
	b := hostileBroker(t, map[string]string{"transport.connectAttemptTimeout": strconv.Itoa(int(hostileConnectTimeout / time.Millisecond))})
	wfi, err := owwire.NewWireFormatInfo(owwire.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	wfiFrame, err := owwire.Marshal(wfi, owwire.InitialFormat(owwire.MaxVersion))
	if err != nil {
		t.Fatal(err)
	}
	mqttConnect := mqttwire.AppendPacket(nil, &mqttwire.Packet{Type: mqttwire.CONNECT, Connect: &mqttwire.Connect{
		ProtocolName: mqttwire.ProtocolName, ProtocolLevel: mqttwire.Version311, CleanSession: true, ClientID: "slow"}}, mqttwire.Version311)
	stompConnect := []byte("CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00")
	amqpOpen := append([]byte(amqpwire.HeaderSASL), amqpwire.AppendSASLFrame(nil, &amqpwire.SASLInit{Mechanism: "ANONYMOUS"})...)
	amqpOpen = append(amqpOpen, amqpwire.HeaderAMQP...)
	amqpOpen = amqpwire.AppendFrame(amqpOpen, 0, amqpwire.NewOpen("slow"), nil)
	protos := []struct {
		connector, proto string
		handshake        []byte
	}{
		{"stomp", "stomp", stompConnect},
		{"mqtt", "mqtt", mqttConnect},
		{"amqp", "amqp", amqpOpen},
		{"openwire", "openwire", wfiFrame},
	}
	const perKind = 5
	before := b.Engine().HandshakeTimeouts()

	good := newSTOMPExchanger(t, b.STOMPAddr())
	stop := make(chan struct{})
	goodDone := good.run(stop)

	type result struct {
		what   string
		after  time.Duration
		closed bool
	}
	var mu sync.Mutex
	var results []result
	var wg sync.WaitGroup
	for _, p := range protos {
		h := p.handshake
		kinds := []slowloris{
			{name: "nothing"},
			{name: "half a handshake", first: h[:len(h)/2]},
			{name: "a byte at a time", trickle: h[:len(h)-1]},
		}
		for _, k := range kinds {
			for i := 0; i < perKind; i++ {
				nc, err := net.Dial("tcp", b.Addr(p.connector).String())
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer nc.Close()
					done := make(chan struct{})
					defer close(done)
					if len(k.first) > 0 {
						nc.Write(k.first)
					}
					if len(k.trickle) > 0 {
						go func() {
							tick := time.NewTicker(trickleEvery)
							defer tick.Stop()
							for _, c := range k.trickle {
								select {
								case <-done:
									return
								case <-tick.C:
								}
								if _, err := nc.Write([]byte{c}); err != nil {
									return
								}
							}
						}()
					}
					nc.SetReadDeadline(time.Now().Add(5 * time.Second))
					_, err := io.Copy(io.Discard, nc)
					var ne net.Error
					r := result{what: p.proto + ": " + k.name, after: time.Since(start), closed: !(errors.As(err, &ne) && ne.Timeout())}
					mu.Lock()
					results = append(results, r)
					mu.Unlock()
				}()
			}
		}
	}
	wg.Wait()
	close(stop)
	if err := <-goodDone; err != nil {
		t.Errorf("the STOMP client during the slowloris connections: %v", err)
	}
	slowest := time.Duration(0)
	for _, r := range results {
		switch {
		case !r.closed:
			t.Errorf("%s: still open after 5 s", r.what)
		case r.after < hostileConnectTimeout-50*time.Millisecond:
			t.Errorf("%s: closed after %v, before the %v connect timeout", r.what, r.after, hostileConnectTimeout)
		}
		slowest = max(slowest, r.after)
	}
	good.c.Disconnect()
	waitNoConnections(t, b, 5*time.Second)
	after := b.Engine().HandshakeTimeouts()
	for _, p := range protos {
		if got, want := after[p.proto]-before[p.proto], int64(3*perKind); got != want {
			t.Errorf("%s: %d handshake timeouts counted, want %d", p.proto, got, want)
		}
	}
	t.Logf("%d slowloris connections closed, the slowest after %v; handshake timeouts %v; good client %d round trips",
		len(results), slowest, after, good.sent.Load())
	// Every protocol still serves.
	hostileCycle(t, b, "stomp", 0)
	hostileCycle(t, b, "mqtt", 0)
	hostileCycle(t, b, "amqp", 0)
	hostileCycle(t, b, "openwire", 0)
}

// stompExchanger sends to and receives from a queue of its own in a loop.
type stompExchanger struct {
	t    *testing.T
	c    *stomp.Conn
	sub  *stomp.Subscription
	q    string
	sent atomic.Int64
}

func newSTOMPExchanger(t *testing.T, addr string) *stompExchanger {
	t.Helper()
	c, err := stomp.Dial("tcp", addr, stomp.ConnOpt.HeartBeat(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect() })
	q := "/queue/" + uniq(t)
	sub, err := c.Subscribe(q, stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	return &stompExchanger{t: t, c: c, sub: sub, q: q}
}

// run exchanges messages until stop is closed, then reports the first
// failure, if any.
func (g *stompExchanger) run(stop chan struct{}) chan error {
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			body := "m" + strconv.FormatInt(g.sent.Add(1), 10)
			if err := g.c.Send(g.q, "text/plain", []byte(body), stomp.SendOpt.Receipt); err != nil {
				done <- fmt.Errorf("send: %w", err)
				return
			}
			select {
			case m := <-g.sub.C:
				if m.Err != nil || string(m.Body) != body {
					done <- fmt.Errorf("received %+v, want %q", m, body)
					return
				}
			case <-time.After(5 * time.Second):
				done <- fmt.Errorf("%s not received within 5 s", body)
				return
			}
		}
	}()
	return done
}

// hostileCycle opens a connection of proto with its real client (go-stomp,
// paho, go-amqp, Wharf's OpenWire client), proves it is served (a
// connection the broker acknowledged; with n%8 == 0, a send), and closes it.
func hostileCycle(t testing.TB, b *brokertest.Broker, proto string, n int) {
	t.Helper()
	if err := hostileCycleErr(b, proto, n); err != nil {
		t.Fatalf("%s cycle %d: %v", proto, n, err)
	}
}

func hostileCycleErr(b *brokertest.Broker, proto string, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addr := b.Addr(proto).String()
	send := n%8 == 0
	switch proto {
	case "stomp":
		c, err := stomp.Dial("tcp", addr, stomp.ConnOpt.HeartBeat(0, 0))
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		if send {
			if err := c.Send("/queue/churn", "text/plain", []byte("x"), stomp.SendOpt.Receipt); err != nil {
				return fmt.Errorf("send: %w", err)
			}
		}
		if err := c.Disconnect(); err != nil {
			return fmt.Errorf("disconnect: %w", err)
		}
		return nil
	case "mqtt":
		o := paho.NewClientOptions().AddBroker("tcp://" + addr).SetClientID("churn-" + strconv.Itoa(n)).
			SetAutoReconnect(false).SetConnectRetry(false).SetProtocolVersion(4).SetConnectTimeout(10 * time.Second)
		c := paho.NewClient(o)
		if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			return fmt.Errorf("connect: %v", tok.Error())
		}
		if send {
			if tok := c.Publish("churn", 1, false, "x"); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
				c.Disconnect(0)
				return fmt.Errorf("publish: %v", tok.Error())
			}
		}
		c.Disconnect(0)
		return nil
	case "amqp":
		c, err := amqp.Dial(ctx, "amqp://"+addr, &amqp.ConnOptions{SASLType: amqp.SASLTypeAnonymous()})
		if err != nil {
			return fmt.Errorf("dial: %w", err)
		}
		defer c.Close()
		s, err := c.NewSession(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		if send {
			snd, err := s.NewSender(ctx, "queue://churn", nil)
			if err != nil {
				return fmt.Errorf("attach: %w", err)
			}
			if err := snd.Send(ctx, amqp.NewMessage([]byte("x")), nil); err != nil {
				return fmt.Errorf("send: %w", err)
			}
		}
		if err := c.Close(); err != nil {
			return fmt.Errorf("close: %w", err)
		}
		return nil
	case "openwire":
		c, err := client.Dial(ctx, addr, client.DefaultOptions())
		if err != nil {
			return fmt.Errorf("dial: %w", err)
		}
		if err := c.Close(); err != nil {
			return fmt.Errorf("close: %w", err)
		}
		return nil
	}
	return fmt.Errorf("unknown protocol %q", proto)
}

// processFigures are what the churn test compares before and after.
type processFigures struct {
	fds, goroutines int
	rss, heapInuse  uint64 // bytes
}

func (f processFigures) String() string {
	return fmt.Sprintf("%d fds, %d goroutines, RSS %.1f MiB, heap in use %.1f MiB",
		f.fds, f.goroutines, float64(f.rss)/(1<<20), float64(f.heapInuse)/(1<<20))
}

// measureProcess counts this process's open files (/proc/self/fd), its
// goroutines, RSS (/proc/self/status VmRSS) and heap in use, after a
// collection that returns freed memory to the system.
func measureProcess(t *testing.T) processFigures {
	t.Helper()
	debug.FreeOSMemory()
	var f processFigures
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	f.fds = len(ents)
	f.goroutines = runtime.NumGoroutine()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			f.rss = kb << 10
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.heapInuse = ms.HeapInuse
	return f
}

// Tolerances of the churn test: what may stay above the baseline once the
// broker has closed every connection. Goroutines: a client library's
// timers winding down. Fds: none may stay (the poller's own are in the
// baseline). RSS: the Go runtime keeps some of what it grew (scavenging
// is lazy even after FreeOSMemory), 48 MiB; heap in use: 16 MiB.
const (
	churnGoroutineSlack = 10
	churnFDSlack        = 0
	churnRSSSlack       = 48 << 20
	churnHeapSlack      = 16 << 20
)

// TestConformanceHostileConnectionChurn opens and closes connections of
// every protocol with real clients in a loop, 4 at a time per protocol:
// 2,000 connections in all by default, or for WHARF_CHURN_DURATION (a Go
// duration: `make churn` runs 10 minutes). Once the broker reports every
// connection closed (its connectors' open sockets and the engine's
// connections both 0), this process's open files, goroutines, RSS and heap
// must be back to the baseline taken after a warm-up, within the
// tolerances above.
func TestConformanceHostileConnectionChurn(t *testing.T) {
	var duration time.Duration
	if s := os.Getenv("WHARF_CHURN_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("WHARF_CHURN_DURATION=%q: %v", s, err)
		}
		duration = d
	}
	total := 2000
	if testing.Short() && duration == 0 {
		total = 200
	}
	// The broker's log is left out, even under -v: a debug line per
	// connection is noise here, and writing it would be what is measured.
	b := brokertest.Start(t, wiring.Factories(), func(_ *config.Config, o *broker.Options) {
		o.Logger = slog.New(slog.DiscardHandler)
	})
	protos := []string{"stomp", "mqtt", "amqp", "openwire"}
	// Warm up: every client library and connector has run once.
	for i := 0; i < 4; i++ {
		for _, p := range protos {
			hostileCycle(t, b, p, i)
		}
	}
	waitNoConnections(t, b, 10*time.Second)
	churnQueue := message.QueueDest("churn")
	b.Engine().Purge(churnQueue)
	base := measureProcess(t)

	const workers = 4
	start := time.Now()
	var cycles atomic.Int64
	var failed atomic.Bool
	errs := make(chan error, len(protos)*workers)
	var wg sync.WaitGroup
	for _, p := range protos {
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !failed.Load() {
					n := cycles.Add(1)
					if duration == 0 && n > int64(total) || duration > 0 && time.Since(start) > duration {
						cycles.Add(-1)
						return
					}
					if err := hostileCycleErr(b, p, int(n)); err != nil {
						failed.Store(true)
						errs <- fmt.Errorf("%s cycle %d after %v: %w (broker: sockets %v, engine connections %v)",
							p, n, time.Since(start).Round(time.Millisecond), err, b.OpenConnections(), b.Engine().ConnectionsByProtocol())
						return
					}
				}
			}()
		}
	}
	// Midway figures for the report: how high the process went.
	var peak processFigures
	peakDone := make(chan struct{})
	go func() {
		defer close(peakDone)
		var ms runtime.MemStats
		for !failed.Load() && cycles.Load() < int64(total) && (duration == 0 || time.Since(start) < duration) {
			runtime.ReadMemStats(&ms)
			peak.heapInuse = max(peak.heapInuse, ms.HeapInuse)
			peak.goroutines = max(peak.goroutines, runtime.NumGoroutine())
			time.Sleep(100 * time.Millisecond) // sampling interval
		}
	}()
	wg.Wait()
	failed.Store(true)
	<-peakDone
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	elapsed := time.Since(start)
	waitNoConnections(t, b, 10*time.Second)
	// What the clients sent is not the connections' to keep.
	if _, err := b.Engine().Purge(churnQueue); err != nil {
		t.Error(err)
	}
	// The broker has closed every socket; the clients' goroutines and the
	// connections' timers wind down: poll the figures back to baseline.
	var now processFigures
	deadline := time.Now().Add(10 * time.Second)
	for {
		now = measureProcess(t)
		if now.goroutines <= base.goroutines+churnGoroutineSlack && now.fds <= base.fds+churnFDSlack || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
	t.Logf("%d connections (%d protocols × %d workers) in %v, %.0f/s; baseline: %v; peak: %d goroutines, heap %.1f MiB; after: %v",
		cycles.Load(), len(protos), workers, elapsed.Round(time.Millisecond), float64(cycles.Load())/elapsed.Seconds(),
		base, peak.goroutines, float64(peak.heapInuse)/(1<<20), now)
	if now.fds > base.fds+churnFDSlack {
		t.Errorf("open files: %d after the churn, %d before", now.fds, base.fds)
	}
	if now.goroutines > base.goroutines+churnGoroutineSlack {
		buf := make([]byte, 1<<20)
		t.Errorf("goroutines: %d after the churn, %d before (slack %d)\n%s", now.goroutines, base.goroutines, churnGoroutineSlack, buf[:runtime.Stack(buf, true)])
	}
	if !raceEnabled && now.rss > base.rss+churnRSSSlack {
		t.Errorf("RSS: %d MiB after the churn, %d MiB before (slack %d MiB)", now.rss>>20, base.rss>>20, churnRSSSlack>>20)
	}
	if now.heapInuse > base.heapInuse+churnHeapSlack {
		t.Errorf("heap in use: %d MiB after the churn, %d MiB before (slack %d MiB)", now.heapInuse>>20, base.heapInuse>>20, churnHeapSlack>>20)
	}
}
