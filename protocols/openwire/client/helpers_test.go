package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/protocols/openwire/wire"
)

// wait bounds every receive and handshake: long enough for a loaded CI
// machine, short enough that a lost message fails quickly.
const wait = 30 * time.Second

// runID keeps names unique across runs against one external broker.
var runID = func() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

var nameSeq atomic.Int64

// uniqueName returns a destination or client id name unique to this run
// and test.
func uniqueName(t *testing.T, what string) string {
	n := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	return fmt.Sprintf("owc.%s.%s.%s%d", runID, n, what, nameSeq.Add(1))
}

func queue(t *testing.T) *wire.Destination { return wire.NewQueue(uniqueName(t, "q")) }
func topic(t *testing.T) *wire.Destination { return wire.NewTopic(uniqueName(t, "t")) }

// addr returns the broker address, or skips the test.
func addr(t *testing.T) string {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	return brokerAddr
}

// testOptions are DefaultOptions with warnings to stderr.
func testOptions() Options {
	o := DefaultOptions()
	o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return o
}

// dial connects with o (testOptions when nil) and closes at cleanup.
func dial(t *testing.T, o *Options) *Conn {
	t.Helper()
	opts := testOptions()
	if o != nil {
		opts = *o
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := Dial(ctx, addr(t), opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func session(t *testing.T, c *Conn, transacted bool) *Session {
	t.Helper()
	s, err := c.Session(transacted)
	if err != nil {
		t.Fatalf("Session(%v): %v", transacted, err)
	}
	return s
}

func producer(t *testing.T, s *Session, d *wire.Destination) *Producer {
	t.Helper()
	p, err := s.Producer(d)
	if err != nil {
		t.Fatalf("Producer(%v): %v", d, err)
	}
	return p
}

func consumer(t *testing.T, s *Session, d *wire.Destination, o ConsumerOptions) *Consumer {
	t.Helper()
	k, err := s.Consumer(d, o)
	if err != nil {
		t.Fatalf("Consumer(%v, %+v): %v", d, o, err)
	}
	return k
}

// send sends m synchronously.
func send(t *testing.T, p *Producer, m *wire.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := p.Send(ctx, m, true); err != nil {
		t.Fatalf("Send: %v", err)
	}
}

// sendTexts sends each text synchronously.
func sendTexts(t *testing.T, p *Producer, texts ...string) {
	t.Helper()
	for _, s := range texts {
		send(t, p, NewTextMessage(s))
	}
}

// receive returns the next message or fails.
func receive(t *testing.T, k *Consumer) *wire.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	m, err := k.Receive(ctx)
	if err != nil {
		t.Fatalf("Receive on %v: %v", k.Destination(), err)
	}
	return m
}

// receiveText returns the text of the next message.
func receiveText(t *testing.T, k *Consumer) string {
	t.Helper()
	return textOf(t, receive(t, k))
}

func textOf(t *testing.T, m *wire.Message) string {
	t.Helper()
	s, ok, err := m.Text(wire.Limits{})
	if err != nil || !ok {
		t.Fatalf("Text: %q %v %v", s, ok, err)
	}
	return s
}

// receiveTexts receives n messages and returns their texts.
func receiveTexts(t *testing.T, k *Consumer, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = receiveText(t, k)
	}
	return out
}

// expectEmpty asserts the broker has nothing more for a prefetch-0
// consumer: a MessagePull with Timeout -1 is answered by an empty dispatch.
func expectEmpty(t *testing.T, k *Consumer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	m, err := k.ReceiveNoWait(ctx)
	if err != nil {
		t.Fatalf("ReceiveNoWait: %v", err)
	}
	if m != nil {
		t.Fatalf("ReceiveNoWait got %s (%q), want nothing", m.MessageId, bodyString(m))
	}
}

// drainEmpty checks that a queue holds nothing, with a fresh pull consumer.
func drainEmpty(t *testing.T, c *Conn, d *wire.Destination) {
	t.Helper()
	s := session(t, c, false)
	defer s.Close()
	expectEmpty(t, consumer(t, s, d, ConsumerOptions{Prefetch: PrefetchPull}))
}

func bodyString(m *wire.Message) string {
	if s, ok, err := m.Text(wire.Limits{}); err == nil && ok {
		return s
	}
	b, _ := m.Body(wire.Limits{})
	return fmt.Sprintf("%x", b)
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

// frameLog records frame types seen by Options.Trace.
type frameLog struct {
	mu     sync.Mutex
	frames []tracedFrame
}

type tracedFrame struct {
	out bool
	ds  wire.DataStructure
}

func (l *frameLog) trace(out bool, ds wire.DataStructure) {
	l.mu.Lock()
	l.frames = append(l.frames, tracedFrame{out, ds})
	l.mu.Unlock()
}

func (l *frameLog) snapshot() []tracedFrame {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]tracedFrame(nil), l.frames...)
}

// String renders "> ConnectionInfo#1 rr < Response(1) ...".
func (l *frameLog) String() string {
	var b strings.Builder
	for _, f := range l.snapshot() {
		dir := "<"
		if f.out {
			dir = ">"
		}
		fmt.Fprintf(&b, "%s %s", dir, wire.TypeName(f.ds.DataStructureType()))
		if c, ok := f.ds.(wire.Command); ok {
			fmt.Fprintf(&b, "#%d", c.Base().CommandId)
			if c.Base().ResponseRequired {
				b.WriteString(" rr")
			}
		}
		switch x := f.ds.(type) {
		case *wire.Response:
			fmt.Fprintf(&b, " corr=%d", x.CorrelationId)
		case *wire.ExceptionResponse:
			fmt.Fprintf(&b, " corr=%d %s", x.CorrelationId, x.Exception.ClassName)
		case *wire.MessageDispatch:
			if x.Message == nil {
				b.WriteString(" (no message)")
			}
		case *wire.MessageAck:
			fmt.Fprintf(&b, " type=%d count=%d", x.AckType, x.MessageCount)
		case *wire.ConnectionControl:
			fmt.Fprintf(&b, " %+v", *x)
		case *wire.ConsumerControl:
			fmt.Fprintf(&b, " close=%v prefetch=%d start=%v stop=%v", x.Close, x.Prefetch, x.Start, x.Stop)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// eventually polls f until it returns nil or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met after %v: %v", timeout, err)
		}
		<-time.After(5 * time.Millisecond) // poll interval, not synchronisation
	}
}
