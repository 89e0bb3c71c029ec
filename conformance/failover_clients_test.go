package conformance

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"
)

// failoverLedger is what a reconnecting client pair knows: the messages
// the broker acknowledged to the producer, and how often the consumer got
// each.
type failoverLedger struct {
	name string
	mu   sync.Mutex
	// acked: the producer's sends the broker acknowledged (a RECEIPT, a
	// PUBACK); got: deliveries per message; sent: sends tried.
	acked map[string]bool
	got   map[string]int
	sent  int
	end   chan struct{} // closed when the consumer got the end marker
	grew  chan struct{} // closed and replaced on every delivery
	errs  []string      // connection errors the clients saw
}

func newFailoverLedger(name string) *failoverLedger {
	return &failoverLedger{name: name, acked: map[string]bool{}, got: map[string]int{}, end: make(chan struct{}), grew: make(chan struct{})}
}

func (l *failoverLedger) delivered(body string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if body == "end" {
		select {
		case <-l.end:
		default:
			close(l.end)
		}
		return
	}
	l.got[body]++
	close(l.grew)
	l.grew = make(chan struct{})
}

func (l *failoverLedger) ack(body string) {
	l.mu.Lock()
	l.acked[body] = true
	l.mu.Unlock()
}

func (l *failoverLedger) noteErr(err error) {
	l.mu.Lock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, err.Error())
	}
	l.mu.Unlock()
}

// distinct is how many different messages the consumer got.
func (l *failoverLedger) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// waitDistinct waits until the consumer got at least n different
// messages.
func (l *failoverLedger) waitDistinct(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(procStartTimeout)
	for {
		l.mu.Lock()
		have, grew := len(l.got), l.grew
		l.mu.Unlock()
		if have >= n {
			return
		}
		select {
		case <-grew:
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("%s: the consumer got %d messages in %v, want %d (errors: %q)", l.name, have, procStartTimeout, n, l.errs)
		}
	}
}

// check fails the test when an acknowledged message was never delivered,
// and returns the duplicate deliveries.
func (l *failoverLedger) check(t *testing.T) (acked, dups int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var lost []string
	for k := range l.acked {
		if l.got[k] == 0 {
			lost = append(lost, k)
		}
	}
	for _, n := range l.got {
		dups += n - 1
	}
	if len(lost) > 0 {
		t.Errorf("%s: %d acknowledged messages never delivered: %q", l.name, len(lost), lost)
	}
	return len(l.acked), dups
}

// dialAnySTOMP connects to the first of addrs that accepts, trying them in
// turn every 50 ms until deadline: a reconnecting STOMP client's view of a
// master/slave pair.
func dialAnySTOMP(addrs []string, deadline time.Time) (*stomp.Conn, error) {
	for {
		var err error
		for _, a := range addrs {
			var c *stomp.Conn
			c, err = stomp.Dial("tcp", a, stomp.ConnOpt.Host("localhost"), stomp.ConnOpt.HeartBeat(0, 0))
			if err == nil {
				return c, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no broker of %v accepts a STOMP connection: %w", addrs, err)
		}
		time.Sleep(50 * time.Millisecond) // a retry interval, not a synchronisation
	}
}

// stompFailoverProducer sends persistent messages s0, s1, ... with a
// receipt each to q until stop is closed, reconnecting to whichever broker
// of addrs accepts when a send fails; a send is acknowledged when its
// RECEIPT came. After stop it sends the end marker.
func stompFailoverProducer(addrs []string, q string, l *failoverLedger, stop <-chan struct{}, done chan<- error) {
	var c *stomp.Conn
	var fatal error
	send := func(body string) bool {
		if c == nil {
			if c, fatal = dialAnySTOMP(addrs, time.Now().Add(procStartTimeout)); fatal != nil {
				return false
			}
		}
		if err := c.Send(q, "text/plain", []byte(body), stomp.SendOpt.Receipt, stomp.SendOpt.Header("persistent", "true")); err != nil {
			l.noteErr(err)
			c.MustDisconnect()
			c = nil
			return false
		}
		return true
	}
	for n := 0; ; n++ {
		select {
		case <-stop:
			for !send("end") && fatal == nil {
			}
			if fatal == nil {
				c.Disconnect()
			}
			done <- fatal
			return
		default:
		}
		body := "s" + strconv.Itoa(n)
		l.mu.Lock()
		l.sent++
		l.mu.Unlock()
		if send(body) {
			l.ack(body)
		}
		if fatal != nil {
			done <- fatal
			return
		}
	}
}

// stompFailoverConsumer receives q with client-individual acks (one ACK
// per message, after it was recorded) until the end marker, resubscribing
// on whichever broker of addrs accepts when the connection drops.
func stompFailoverConsumer(addrs []string, q string, l *failoverLedger, done chan<- error) {
	for {
		c, err := dialAnySTOMP(addrs, time.Now().Add(procStartTimeout))
		if err != nil {
			done <- err
			return
		}
		sub, err := c.Subscribe(q, stomp.AckClientIndividual)
		if err != nil {
			l.noteErr(err)
			c.MustDisconnect()
			continue
		}
		for m := range sub.C {
			if m.Err != nil {
				l.noteErr(m.Err)
				break
			}
			body := string(m.Body)
			l.delivered(body)
			if err := c.Ack(m); err != nil {
				l.noteErr(err)
				break
			}
			if body == "end" {
				c.Disconnect()
				done <- nil
				return
			}
		}
		c.MustDisconnect()
	}
}

// mqttFailoverClient is a paho client on every broker of addrs, with a
// persistent session (clean_session=false) and automatic reconnection:
// paho tries the brokers in turn.
func mqttFailoverClient(t *testing.T, addrs []string, id string, onMsg paho.MessageHandler) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().SetClientID(id).SetCleanSession(false).SetProtocolVersion(4).
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(50 * time.Millisecond).
		SetMaxReconnectInterval(200 * time.Millisecond).SetConnectTimeout(2 * time.Second).
		SetKeepAlive(30 * time.Second).SetOrderMatters(true)
	for _, a := range addrs {
		o.AddBroker("tcp://" + a)
	}
	if onMsg != nil {
		o.SetDefaultPublishHandler(onMsg)
	}
	c := paho.NewClient(o)
	if tok := c.Connect(); !tok.WaitTimeout(procStartTimeout) || tok.Error() != nil {
		t.Fatalf("MQTT %s connect: %v", id, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(0) })
	return c
}

// mqttFailoverProducer publishes QoS 1 messages m0, m1, ... to topic until
// stop is closed; a publish is acknowledged when its PUBACK came (paho
// resends one that was in flight at a disconnection on the next broker).
// After stop it publishes the end marker.
func mqttFailoverProducer(c paho.Client, topic string, l *failoverLedger, stop <-chan struct{}, done chan<- error) {
	publish := func(body string) bool {
		tok := c.Publish(topic, 1, false, body)
		if !tok.WaitTimeout(procStartTimeout) {
			l.noteErr(errors.New("PUBACK of " + body + " not received"))
			return false
		}
		if tok.Error() != nil {
			l.noteErr(tok.Error())
			return false
		}
		return true
	}
	for n := 0; ; n++ {
		select {
		case <-stop:
			if !publish("end") {
				done <- errors.New("end marker not acknowledged")
				return
			}
			done <- nil
			return
		default:
		}
		body := "m" + strconv.Itoa(n)
		l.mu.Lock()
		l.sent++
		l.mu.Unlock()
		if publish(body) {
			l.ack(body)
		}
	}
}

// TestConformanceFailoverSTOMPMQTTReconnect: reconnecting STOMP clients
// (go-stomp: a producer with receipts, a client-individual consumer) and
// MQTT clients (paho, persistent sessions, QoS 1, both brokers in their
// server list) run continuously on a master/slave pair of wharf processes
// while the master is SIGKILLed twice (a new slave started each time). On
// each new master both pairs continue (20 more messages delivered each),
// and at the end every message the broker acknowledged (a RECEIPT, a
// PUBACK) was delivered; duplicates are reported.
func TestConformanceFailoverSTOMPMQTTReconnect(t *testing.T) {
	dir := t.TempDir()
	ports := []brokerPorts{freePorts(t), freePorts(t)}
	cfgs := []string{writeFailoverConfig(t, dir, ports[0]), writeFailoverConfig(t, dir, ports[1])}
	master := wharfStarted(t, spawnWharf(t, "wharf 0", cfgs[0]))
	slave := spawnWharf(t, "wharf 1", cfgs[1])
	waitSlave(t, slave, master.cmd.Process.Pid, ports[1])

	stompAddrs := []string{ports[0].stomp(), ports[1].stomp()}
	mqttAddrs := []string{ports[0].mqtt(), ports[1].mqtt()}
	q := queue(t, "")
	topic := "failover/" + uniq(t)
	sl, ml := newFailoverLedger("STOMP"), newFailoverLedger("MQTT")

	sub := mqttFailoverClient(t, mqttAddrs, "failover-sub-"+uniq(t), func(_ paho.Client, m paho.Message) {
		ml.delivered(string(m.Payload()))
	})
	if tok := sub.Subscribe(topic, 1, nil); !tok.WaitTimeout(procStartTimeout) || tok.Error() != nil {
		t.Fatalf("MQTT subscribe: %v", tok.Error())
	}
	pub := mqttFailoverClient(t, mqttAddrs, "failover-pub-"+uniq(t), nil)

	stop := make(chan struct{})
	done := make(chan error, 4)
	go stompFailoverConsumer(stompAddrs, q, sl, done)
	go stompFailoverProducer(stompAddrs, q, sl, stop, done)
	go mqttFailoverProducer(pub, topic, ml, stop, done)
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
		}
	}()

	const progress = 20
	sl.waitDistinct(t, progress)
	ml.waitDistinct(t, progress)
	cur := 0
	for i := range 2 {
		killed := time.Now()
		master.kill()
		next := 1 - cur
		w, took := takeover(t, slave, killed, ports[next])
		t.Logf("kill %d: takeover in %v", i+1, took)
		master = w
		slave = spawnWharf(t, "wharf "+strconv.Itoa(i+2), cfgs[cur])
		waitSlave(t, slave, master.cmd.Process.Pid, ports[cur])
		cur = next
		sl.waitDistinct(t, sl.distinct()+progress)
		ml.waitDistinct(t, ml.distinct()+progress)
	}
	close(stop)
	stopped = true
	for range 3 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(procStartTimeout):
			t.Fatalf("a client did not finish within %v", procStartTimeout)
		}
	}
	for _, l := range []*failoverLedger{sl, ml} {
		select {
		case <-l.end:
		case <-time.After(procStartTimeout):
			t.Fatalf("%s: the end marker was not delivered within %v", l.name, procStartTimeout)
		}
		acked, dups := l.check(t)
		l.mu.Lock()
		t.Logf("%s: %d sends, %d acknowledged, %d distinct delivered, %d duplicates; client errors: %q", l.name, l.sent, acked, len(l.got), dups, l.errs)
		l.mu.Unlock()
	}
}
