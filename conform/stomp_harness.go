package conform

import (
	"time"

	"github.com/go-stomp/stomp/v3"
	"github.com/go-stomp/stomp/v3/frame"
)

// wait bounds every receive: long enough for a loaded CI machine, short
// enough that a lost message fails the case quickly.
const wait = 5 * time.Second

// smallFrameSize is the wireFormat.maxFrameSize of the small-frame
// connector (ConfigXML's stomp-small).
const smallFrameSize = SmallFrameSize

// queue and topic name this test's destinations; suffix tells several apart.
func queue(t *T, suffix string) string { return "/queue/" + t.Uniq() + suffix }
func topic(t *T, suffix string) string { return "/topic/" + t.Uniq() + suffix }

// dial connects a go-stomp client (STOMP 1.2 unless opts say otherwise).
func dial(t *T, addr string, opts ...func(*stomp.Conn) error) *stomp.Conn {
	t.Helper()
	opts = append([]func(*stomp.Conn) error{
		stomp.ConnOpt.Host(t.STOMPHost()),
		stomp.ConnOpt.HeartBeat(0, 0),
		stomp.ConnOpt.Logger(stompLogger{t}),
		stomp.ConnOpt.UnsubscribeReceiptTimeout(stompUnsubscribeWait),
	}, opts...)
	if t.User() != "" {
		opts = append([]func(*stomp.Conn) error{stomp.ConnOpt.Login(t.User(), t.Password())}, opts...)
	}
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
func sub(t *T, c *stomp.Conn, dest string, ack stomp.AckMode, opts ...func(*frame.Frame) error) *stomp.Subscription {
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
func roundTrip(t *T, c *stomp.Conn) {
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
func send(t *T, c *stomp.Conn, dest, body string, opts ...func(*frame.Frame) error) {
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
func recv(t *T, s *stomp.Subscription) *stomp.Message {
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
func recvBody(t *T, s *stomp.Subscription, want string) *stomp.Message {
	t.Helper()
	m := recv(t, s)
	if string(m.Body) != want {
		t.Fatalf("%s: got body %q, want %q", s.Destination(), m.Body, want)
	}
	return m
}

// recvBodies receives len(want) messages and checks their bodies in order.
func recvBodies(t *T, s *stomp.Subscription, want ...string) []*stomp.Message {
	t.Helper()
	out := make([]*stomp.Message, 0, len(want))
	for _, w := range want {
		out = append(out, recvBody(t, s, w))
	}
	return out
}

// ack acknowledges a message and waits until the broker has handled it.
func ack(t *T, c *stomp.Conn, m *stomp.Message) {
	t.Helper()
	if err := c.Ack(m); err != nil {
		t.Fatalf("ACK: %v", err)
	}
	roundTrip(t, c)
}

// timeoutC is a channel that fires after wait.
func timeoutC() <-chan time.Time { return time.After(wait) }

// stompLogger turns go-stomp's log lines into the case's observations
// instead of the process's standard error.
type stompLogger struct{ t *T }

func (l stompLogger) Debugf(string, ...interface{})       {}
func (l stompLogger) Debug(string)                        {}
func (l stompLogger) Infof(f string, v ...interface{})    { l.t.Observe("go-stomp", f, v...) }
func (l stompLogger) Info(m string)                       { l.t.Observe("go-stomp", "%s", m) }
func (l stompLogger) Warningf(f string, v ...interface{}) { l.t.Observe("go-stomp", f, v...) }
func (l stompLogger) Warning(m string)                    { l.t.Observe("go-stomp", "%s", m) }
func (l stompLogger) Errorf(f string, v ...interface{})   { l.t.Observe("go-stomp", f, v...) }
func (l stompLogger) Error(m string)                      { l.t.Observe("go-stomp", "%s", m) }
