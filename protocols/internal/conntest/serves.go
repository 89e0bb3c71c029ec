package conntest

import (
	"bytes"
	"flag"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

// probeMu serialises Serves: every probe uses the same client id and
// queue, so that two probes do not run the same code differently (a
// counter in the names made the coverage the fuzz coordinator sees differ
// from one run of an input to the next).
var probeMu sync.Mutex

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
	probeMu.Lock()
	defer probeMu.Unlock()
	c, err := e.Connect(engine.Credentials{Protocol: "probe", ClientID: "wharf-probe"})
	if err != nil {
		return fmt.Errorf("probe connect: %w", err)
	}
	defer c.Close()
	q := message.QueueDest("wharf.probe")
	defer e.RemoveDestination(q)
	got := make(chanSink, 1)
	sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: 10, AckMode: engine.AckAuto}, got)
	if err != nil {
		return fmt.Errorf("probe subscribe: %w", err)
	}
	defer c.CloseSubscription(sub)
	body := []byte("probe")
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

// ServeCheckEvery is how often ServesAfter checks while fuzzing: after
// one input in 32. A check costs a connection, a subscription, a send and
// a receive, several times what a fuzz input costs.
const ServeCheckEvery = 32

// ServesAfter is Serves after the input data, for fuzz targets that check
// after each input. When the test binary is not fuzzing (plain go test
// running the seed corpus) it checks after every input; when fuzzing,
// after the inputs whose FNV-1a hash is 0 modulo ServeCheckEvery, so that
// whether an input is followed by a check depends on the input alone (a
// count of calls, as before, made the same input's coverage differ between
// runs, and the coordinator took every such difference for new coverage
// to minimise). Safe from any goroutine.
func ServesAfter(e *engine.Engine, d time.Duration, data []byte) error {
	if Fuzzing() && InputHash(data)%ServeCheckEvery != 0 {
		return nil
	}
	return Serves(e, d)
}

// InputHash is the FNV-1a hash of a fuzz input: a value the input decides
// but is most unlikely to contain.
func InputHash(data []byte) uint64 {
	h := fnv.New64a()
	h.Write(data)
	return h.Sum64()
}

// Fuzzing reports whether the test binary runs with -test.fuzz (the fuzz
// coordinator and its workers), not a plain go test, or a corpus-replay
// benchmark called SampleAsFuzzing.
func Fuzzing() bool {
	if asFuzzing.Load() {
		return true
	}
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

var asFuzzing atomic.Bool

// SampleAsFuzzing makes ServesAfter check one input in ServeCheckEvery,
// as when fuzzing, for a benchmark that measures what a fuzz execution
// costs.
func SampleAsFuzzing() { asFuzzing.Store(true) }
