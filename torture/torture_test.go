package torture

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/go-stomp/stomp/v3"

	"wharf/internal/wharfproc"
	"wharf/protocols/openwire/client"
)

// Environment of TestTorture (the Makefile's `torture` target sets them).
const (
	envKills = "WHARF_TORTURE_KILLS" // SIGKILLs; 10 when unset (the short form in `make test`)
	envSeed  = "WHARF_TORTURE_SEED"  // replays a run's schedule; random when unset
	// envXA=0 leaves out the JMS client's XA branches (on by default).
	envXA = "WHARF_TORTURE_XA"
)

const (
	startTimeout = 60 * time.Second
	// progressTimeout bounds a cycle's wait for the confirmations it kills
	// after: a broker that stops confirming fails the run.
	progressTimeout = 60 * time.Second
	drainTimeout    = time.Minute
)

func envInt(t *testing.T, name string, def uint64) uint64 {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: not a non-negative integer: %v", name, s, err)
	}
	return v
}

// freePort reserves a loopback port for the broker's connector: the same
// ports across every restart, so that the clients reconnect to them.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

const configYAML = `shards: 1
persistence:
  kahadb:
    directory: %q
transport_connectors:
  - {name: openwire, uri: "tcp://%s"}
  - {name: stomp, uri: "stomp://%s"}
  - {name: mqtt, uri: "mqtt://%s"}
  - {name: amqp, uri: "amqp://%s"}
`

// broker starts and restarts wharf on one configuration.
type broker struct {
	t    *testing.T
	bin  string
	cfg  string
	proc *wharfproc.Proc
}

func (b *broker) start() {
	b.t.Helper()
	p, err := wharfproc.Start(b.bin, startTimeout, "run", "--log-format", "json", "--http=false", "--config", b.cfg)
	if err != nil {
		b.t.Fatal(err)
	}
	b.proc = p
}

// TestTorture: see doc.go and ledger_test.go.
func TestTorture(t *testing.T) {
	kills := int(envInt(t, envKills, 10))
	seed := envInt(t, envSeed, uint64(time.Now().UnixNano()))
	t.Logf("seed %d, %d kills (%s=%d %s=%d to replay)", seed, kills, envSeed, seed, envKills, kills)
	rng := rand.New(rand.NewPCG(seed, 0x746f7274))

	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	bin, err := wharfproc.Build(ctx, "..", tmp)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	a := addrs{openwire: freePort(t), stomp: freePort(t), mqtt: freePort(t), amqp: freePort(t)}
	cfg := filepath.Join(tmp, "wharf.yaml")
	yml := fmt.Sprintf(configYAML, filepath.Join(tmp, "kahadb"), a.openwire, a.stomp, a.mqtt, a.amqp)
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	b := &broker{t: t, bin: bin, cfg: cfg}
	b.start()
	t.Cleanup(func() {
		if b.proc != nil {
			b.proc.Kill()
		}
	})

	l := newLedger()
	l.xaOut = qXAOut
	setUpDurables(t, a)
	for _, s := range []struct {
		name, proto, dest string
		confirms          bool
	}{
		{"q.stomp/openwire", "openwire", qStomp, true},
		{"q.ow/stomp-tx", "stomp", qOW, true},
		{"q.amqp/amqp", "amqp", qAMQP, true},
		{"q.tx/openwire-tx", "openwire", qTx, true},
		{"t/openwire-durable", "openwire", tDurable, true},
		{"t/stomp-durable", "stomp", tDurable, true},
		{"t/mqtt-qos1", "mqtt-qos1", tDurable, false},
		{"mqtt/mqtt-qos1", "mqtt-qos1", tMQTT, false},
		{"mqtt/mqtt-qos2", "mqtt-qos2", tMQTT, false},
		{"mqtt/openwire-durable", "openwire", tMQTT, true},
	} {
		l.addStream(s.name, s.proto, s.dest, s.confirms)
	}
	// ActiveMQ's JMS client, when installed (make test-deps does).
	cp, noJava := javaClasspath(t)
	if noJava != "" {
		t.Logf("without ActiveMQ's JMS client (its producer, consumer and XA branches): %s", noJava)
	} else {
		l.addStream(streamJMS, "jms", qJMS, true)
	}
	xa := noJava == "" && os.Getenv(envXA) != "0"
	if xa {
		l.addStream(streamXAIn, "jms-xa", qXAIn, true)
		l.addStream(streamXAOut, "openwire", qXAOut, true)
	} else {
		t.Logf("without XA branches")
	}

	var prodWG, consWG sync.WaitGroup
	prodCtx, stopProducers := context.WithCancel(context.Background())
	consCtx, stopConsumers := context.WithCancel(context.Background())
	defer stopProducers()
	defer stopConsumers()
	r := &rig{l: l, a: a, seed: seed, logf: t.Logf}

	r.ctx, r.wg = consCtx, &consWG
	r.owConsumer("q.stomp/openwire", qStomp, false, "", "", false)
	r.stompConsumer("q.ow/stomp-tx", qOW, false, "", "")
	r.amqpConsumer("q.amqp/amqp", qAMQP)
	r.owConsumer("q.tx/openwire-tx", qTx, false, "", "", true)
	r.owConsumer("t/openwire-durable", tDurable, true, durOWClient, durName, false)
	r.stompConsumer("t/stomp-durable", tDurable, true, durSTOMPClient, durName)
	r.mqttSubscriber("t/mqtt-qos1", "torture/t", 1)
	r.mqttSubscriber("mqtt/mqtt-qos1", "torture/mqtt", 1)
	r.mqttSubscriber("mqtt/mqtt-qos2", "torture/mqtt", 2)
	r.owConsumer("mqtt/openwire-durable", tMQTT, true, durOWMQTTClient, durName, false)
	if xa {
		r.owConsumer(streamXAOut, qXAOut, false, "", "", false)
	}

	r.ctx, r.wg = prodCtx, &prodWG
	r.stompProducer("stomp-send", qStomp, tDurable)
	r.owProducer("ow-send", qOW, tDurable)
	r.owTxProducer("ow-txsend", qTx)
	r.amqpProducer("amqp-send", qAMQP)
	r.mqttPublisher("mqtt-pub-q1", "torture/mqtt", tMQTT, 1)
	r.mqttPublisher("mqtt-pub-q2", "torture/mqtt", tMQTT, 2)
	var java *javaClient
	if xa {
		r.owProducer("ow-xain", qXAIn)
	}
	if noJava == "" {
		java = r.startJava(t, cp, xa, prodCtx)
	}

	start := time.Now()
	for cycle := range kills {
		target := 20 + rng.IntN(300)
		ch, base := l.wait()
		deadline := time.After(progressTimeout)
		for n := base; n-base < target; {
			select {
			case <-ch:
				ch, n = l.wait()
			case <-deadline:
				t.Fatalf("cycle %d: %d of %d confirmations within %v; failures per worker: %s; wharf:\n%s",
					cycle, n-base, target, progressTimeout, r.failures(), b.proc.Tail(30))
			}
		}
		b.proc.Kill()
		_, n := l.wait()
		t.Logf("cycle %d: killed after %d confirmations (target %d)", cycle, n-base, target)
		b.start()
	}

	// Drain: the producers stop; the consumers go on until every
	// confirmed send is confirmed (delivered, for MQTT) on every stream.
	// The Java client stops once its streams are drained (its XA
	// branches may still commit outputs: the Go consumer of those drains
	// after it).
	stopProducers()
	prodWG.Wait()
	deadline := time.After(drainTimeout)
	if drain(t, l, deadline) && java != nil {
		java.stop()
		drain(t, l, deadline)
	}
	stopConsumers()
	consWG.Wait()
	if java != nil {
		java.stop()
	}
	if err := b.proc.Stop(30 * time.Second); err != nil {
		t.Error(err)
	}
	b.proc = nil

	v := l.verdict()
	total := 0
	for _, n := range v.sendsAcked {
		total += n
	}
	dups := 0
	for _, n := range v.dups {
		dups += n
	}
	t.Logf("TORTURE seed=%d kills=%d in %v: sends acknowledged %d %s; deliveries %d; lost %d; duplicates %d %s (with redelivered flag %s); second stored copies delivered (a publisher's resend) %s; first deliveries flagged redelivered %d; XA branches %d (committed %d, rolled back at recovery %d); connection failures %s",
		seed, kills, time.Since(start).Round(time.Second), total, fmtCounts(v.sendsAcked), v.deliveries, v.lost, dups, fmtCounts(v.dups), fmtCounts(v.dupsFlagged), fmtCounts(v.copies), v.redeliveredFirst, v.xaBranches, v.xaCommited, v.xaRolledBack, r.failures())
	if len(v.copyKeys) > 0 {
		t.Logf("second stored copies of: %v", v.copyKeys)
	}
	if v.lost > 0 {
		t.Errorf("%d acknowledged sends lost (stream:key): %v", v.lost, v.lostKeys)
	}
	for _, s := range v.bad {
		t.Error(s)
	}
}

// drain waits until every stream has settled every confirmed send of its
// destination, or deadline.
func drain(t *testing.T, l *ledger, deadline <-chan time.Time) bool {
	t.Helper()
	for {
		ch, _ := l.wait()
		missing := l.missing()
		left := 0
		for _, n := range missing {
			left += n
		}
		if left == 0 {
			return true
		}
		select {
		case <-ch:
		case <-deadline:
			t.Errorf("drain: after %v, confirmed sends not yet confirmed (or delivered) per stream: %v", drainTimeout, missing)
			return false
		}
	}
}

func fmtCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("(")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, m[k])
	}
	b.WriteString(")")
	return b.String()
}

func (r *rig) failures() string {
	m := map[string]int{}
	r.errs.Range(func(k, v any) bool {
		m[k.(string)] = int(v.(interface{ Load() int64 }).Load())
		return true
	})
	var last []string
	r.lastErr.Range(func(k, v any) bool {
		last = append(last, fmt.Sprintf("%s: %s", k, v))
		return true
	})
	sort.Strings(last)
	return fmtCounts(m) + "; last failures: " + strings.Join(last, "; ")
}

// Durable subscriptions exist before anything is sent.
const (
	durName         = "torture"
	durOWClient     = "torture-ow-dur"
	durOWMQTTClient = "torture-ow-mqtt"
	durSTOMPClient  = "torture-stomp-dur"
)

func setUpDurables(t *testing.T, a addrs) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, d := range []struct{ client, topic string }{{durOWClient, tDurable}, {durOWMQTTClient, tMQTT}} {
		o := client.DefaultOptions()
		o.ClientID = d.client
		c, err := client.Dial(ctx, a.openwire, o)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Session(false)
		if err != nil {
			t.Fatal(err)
		}
		k, err := s.Consumer(owDest(d.topic, true), client.ConsumerOptions{DurableName: durName, AckMode: client.AckIndividual})
		if err != nil {
			t.Fatalf("durable subscription %s of %s: %v", durName, d.client, err)
		}
		k.Close()
		c.Close()
	}
	sc, err := stomp.Dial("tcp", a.stomp, stomp.ConnOpt.Header("client-id", durSTOMPClient), stomp.ConnOpt.Host("localhost"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Subscribe(stompDest(tDurable, true), stomp.AckClientIndividual, stomp.SubscribeOpt.Header("activemq.subscriptionName", durName)); err != nil {
		t.Fatal(err)
	}
	if err := sc.Disconnect(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		id, topic string
		qos       byte
	}{{"t/mqtt-qos1", "torture/t", 1}, {"mqtt/mqtt-qos1", "torture/mqtt", 1}, {"mqtt/mqtt-qos2", "torture/mqtt", 2}} {
		c := paho.NewClient(paho.NewClientOptions().AddBroker("tcp://" + a.mqtt).SetClientID(mqttClientID(s.id)).SetCleanSession(false))
		if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("mqtt connect %s: %v", s.id, tok.Error())
		}
		if tok := c.Subscribe(s.topic, s.qos, nil); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("mqtt subscribe %s: %v", s.id, tok.Error())
		}
		c.Disconnect(250)
	}
}
