package conformance

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/engine/config"
)

// Environment variables that point the STOMP cases at an external broker.
const (
	envSTOMPAddr = "WHARF_CONFORMANCE_STOMP_ADDR"
)

// wait bounds every receive: long enough for a loaded CI machine, short
// enough that a lost message fails the test quickly.
const wait = 5 * time.Second

// external is true when the tests run against an external broker.
var external = os.Getenv(envSTOMPAddr) != ""

// runID keeps destination names unique across runs against one external
// broker, whose queues outlive a run.
var runID = func() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}()

// startBroker starts an in-process broker; the test is skipped when an
// external broker is the target, because it needs the broker's internals.
// The broker runs with activemq/activemq.xml, the configuration run.sh
// gives ActiveMQ (policies, interceptors, usage limits, both STOMP
// connectors), with a memory store and every port 0; opts apply after it.
// A test that restarts the broker passes brokertest.WithKahaDB, so that the
// restart recovers from the KahaDB directory the file configures.
func startBroker(t *testing.T, opts ...brokertest.Option) *brokertest.Broker {
	t.Helper()
	if external {
		t.Skipf("needs broker internals (counters, clock, restart or config) that %s=%s does not expose", envSTOMPAddr, os.Getenv(envSTOMPAddr))
	}
	loaded := loadActiveMQConfig(t)
	opts = append([]brokertest.Option{brokertest.WithConfig(func(c *config.Config) {
		*c = *loaded
		c.Persistence.Kind = config.KindMemory
	})}, opts...)
	return brokertest.Start(t, wiring.Factories(), opts...)
}

// activeMQConfig is the broker configuration both sides run with.
const activeMQConfig = "activemq/activemq.xml"

// loadActiveMQConfig parses activemq/activemq.xml with Wharf's config
// loader, resolving the placeholders run.sh passes to ActiveMQ as system
// properties: the data directory becomes a temporary directory, the ports
// 0 (brokertest binds every connector to a free port anyway).
func loadActiveMQConfig(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.LoadFile(filepath.FromSlash(activeMQConfig), map[string]string{
		"activemq.data":          t.TempDir(),
		"wharf.stomp.port":       "0",
		"wharf.stomp.small.port": "0",
		"wharf.openwire.port":    "0",
		"wharf.mqtt.port":        "0",
		"wharf.mqtt.small.port":  "0",
		"wharf.mqtt.dollar.port": "0",
	})
	if err != nil {
		t.Fatalf("load %s: %v", activeMQConfig, err)
	}
	// Connectors whose protocol this build does not serve yet (OpenWire's
	// "tcp" until its listener is wired) are left out, so that the other
	// protocols' tests still run; the JMS suite skips when its connector
	// is missing.
	served := wiring.Factories().Listeners
	kept := c.Transports[:0]
	for _, tr := range c.Transports {
		if served[tr.Scheme] != nil {
			kept = append(kept, tr)
		}
	}
	c.Transports = kept
	return c
}

// uniq is a destination base name unique to this test and run, without the
// characters that are wildcards or separators in ActiveMQ names.
// With -count=N a test runs N times in one process: each run gets its own
// sequence number, so that a run never sees what an earlier one left behind.
func uniq(t *testing.T) string {
	r := strings.NewReplacer("/", "_", ".", "_", " ", "_", "*", "_", ">", "_", ",", "_", ":", "_")
	seq, _ := testSeq.LoadOrStore(t, nextSeq.Add(1))
	return "conf_" + runID + "_" + strconv.FormatInt(seq.(int64), 10) + "_" + r.Replace(t.Name())
}

var (
	testSeq sync.Map // *testing.T → int64
	nextSeq atomic.Int64
)

// queue and topic name this test's destinations; suffix tells several apart.
func queue(t *testing.T, suffix string) string { return "/queue/" + uniq(t) + suffix }
func topic(t *testing.T, suffix string) string { return "/topic/" + uniq(t) + suffix }

// dial connects a go-stomp client (STOMP 1.2 unless opts say otherwise).
func dial(t *testing.T, addr string, opts ...func(*stomp.Conn) error) *stomp.Conn {
	t.Helper()
	opts = append([]func(*stomp.Conn) error{
		stomp.ConnOpt.Host("localhost"),
		stomp.ConnOpt.HeartBeat(0, 0),
	}, opts...)
	c, err := stomp.Dial("tcp", addr, opts...)
	if err != nil {
		t.Fatalf("stomp connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { c.MustDisconnect() })
	return c
}

// sub subscribes and returns once the broker has the subscription: go-stomp
// does not wait for SUBSCRIBE, so a receipted frame after it on the same
// connection is the barrier.
func sub(t *testing.T, c *stomp.Conn, dest string, ack stomp.AckMode, opts ...func(*frame.Frame) error) *stomp.Subscription {
	t.Helper()
	s, err := c.Subscribe(dest, ack, opts...)
	if err != nil {
		t.Fatalf("subscribe %s: %v", dest, err)
	}
	roundTrip(t, c)
	return s
}

// roundTrip waits for a RECEIPT, which the broker sends after handling every
// frame the connection sent before (an empty transaction, begun and aborted).
func roundTrip(t *testing.T, c *stomp.Conn) {
	t.Helper()
	tx, err := c.BeginWithError()
	if err != nil {
		t.Fatalf("BEGIN: %v", err)
	}
	if err := tx.AbortWithReceipt(); err != nil {
		t.Fatalf("ABORT with receipt: %v", err)
	}
}

// send sends with a receipt, so the message is on the broker when it returns.
func send(t *testing.T, c *stomp.Conn, dest, body string, opts ...func(*frame.Frame) error) {
	t.Helper()
	opts = append(opts, stomp.SendOpt.Receipt)
	if err := c.Send(dest, "text/plain", []byte(body), opts...); err != nil {
		t.Fatalf("send to %s: %v", dest, err)
	}
}

// hdr is a SEND header option.
func hdr(k, v string) func(*frame.Frame) error { return stomp.SendOpt.Header(k, v) }

// subHdr is a SUBSCRIBE header option.
func subHdr(k, v string) func(*frame.Frame) error { return stomp.SubscribeOpt.Header(k, v) }

// recv returns the subscription's next message, failing after wait.
func recv(t *testing.T, s *stomp.Subscription) *stomp.Message {
	t.Helper()
	select {
	case m, ok := <-s.C:
		if !ok {
			t.Fatalf("subscription %s closed while waiting for a message", s.Destination())
		}
		if m.Err != nil {
			t.Fatalf("subscription %s: %v", s.Destination(), m.Err)
		}
		return m
	case <-time.After(wait):
		t.Fatalf("no message on %s within %v", s.Destination(), wait)
	}
	return nil
}

// recvBody receives the next message and checks its body.
func recvBody(t *testing.T, s *stomp.Subscription, want string) *stomp.Message {
	t.Helper()
	m := recv(t, s)
	if string(m.Body) != want {
		t.Fatalf("%s: got body %q, want %q", s.Destination(), m.Body, want)
	}
	return m
}

// recvBodies receives len(want) messages and checks their bodies in order.
func recvBodies(t *testing.T, s *stomp.Subscription, want ...string) []*stomp.Message {
	t.Helper()
	out := make([]*stomp.Message, 0, len(want))
	for _, w := range want {
		out = append(out, recvBody(t, s, w))
	}
	return out
}

// ack acknowledges a message and waits until the broker has handled it.
func ack(t *testing.T, c *stomp.Conn, m *stomp.Message) {
	t.Helper()
	if err := c.Ack(m); err != nil {
		t.Fatalf("ACK: %v", err)
	}
	roundTrip(t, c)
}
