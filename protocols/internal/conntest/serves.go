package conntest

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// probeSeq numbers the probes of Serves, so that each one's message is its
// own.
var probeSeq atomic.Uint64

// chanSink hands deliveries to a channel, dropping what does not fit (the
// probe waits for one message).
type chanSink chan engine.Delivery

func (s chanSink) Deliver(d engine.Delivery) {
	select {
	case s <- d:
	default:
	}
}

// Serves checks that e still serves a client: a fresh connection
// subscribes to a queue of its own, sends one message to it and receives
// it back within d. Fuzz targets call it after hostile input to prove the
// input hurt no one else. Safe from any goroutine.
func Serves(e *engine.Engine, d time.Duration) error {
	n := probeSeq.Add(1)
	c, err := e.Connect(engine.Credentials{Protocol: "probe", ClientID: fmt.Sprintf("wharf-probe-%d", n)})
	if err != nil {
		return fmt.Errorf("probe connect: %w", err)
	}
	defer c.Close()
	q := message.QueueDest(fmt.Sprintf("wharf.probe.%d", n))
	defer e.RemoveDestination(q)
	got := make(chanSink, 1)
	sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckAuto}, got)
	if err != nil {
		return fmt.Errorf("probe subscribe: %w", err)
	}
	defer c.CloseSubscription(sub)
	body := []byte(fmt.Sprintf("probe %d", n))
	if err := c.Send(&message.Message{ID: c.NextMessageID(), Destination: q, Body: body, BodyType: message.TextBody}, "", nil, 0); err != nil {
		return fmt.Errorf("probe send: %w", err)
	}
	select {
	case dl := <-got:
		if dl.Msg == nil || !bytes.Equal(dl.Msg.Body, body) {
			return fmt.Errorf("probe received %+v, want body %q", dl.Msg, body)
		}
		return nil
	case <-time.After(d):
		return fmt.Errorf("probe message not received within %v", d)
	}
}

// ProbeWait is how long a fuzz target waits for the answer to a probe:
// the one it sends its session after the input, and Serves' message. Two
// of them stay under the 10 s after which the fuzz worker's watchdog
// kills a call as "deadlocked!" (internal/fuzz), so that an answer that
// never comes fails with the target's own message, naming what was not
// answered, instead of as a hung worker with no message at all.
const ProbeWait = 4 * time.Second

// ServeCheckEvery is how often ServesEvery checks: every 32nd call. A
// check costs a connection, a subscription, a send and a receive, several
// times what a fuzz input costs.
const ServeCheckEvery = 32

var servesCalls atomic.Uint64

// ServesEvery is Serves on every ServeCheckEvery-th call (the first
// included) and nil on the others, for fuzz targets that check after each
// input. Safe from any goroutine.
func ServesEvery(e *engine.Engine, d time.Duration) error {
	if servesCalls.Add(1)%ServeCheckEvery != 1 {
		return nil
	}
	return Serves(e, d)
}
