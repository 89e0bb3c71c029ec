package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// Duplicate sends: the same persistent message (same MessageId) sent
// twice to a queue over OpenWire, as a network bridge forwards it again
// after its broker died before acknowledging its own copy, or as a
// failover client resends its in-flight messages after a reconnect. The
// probe runs against Wharf and against Debian's ActiveMQ 5.17, each on
// KahaDB with two OpenWire connectors, a plain one and one with
// auditNetworkProducers="true", and counts the copies a consumer gets of
// a message sent twice while the first copy is still queued, sent again
// after it was consumed, and sent again after a restart of the broker.

// dupKind is one kind of sending connection.
type dupKind struct {
	name     string
	audited  bool // on the connector with auditNetworkProducers
	network  bool // introduces itself with a network BrokerInfo
	failover bool // ConnectionInfo.failoverReconnect
}

var dupKinds = []dupKind{
	{name: "network-audited", audited: true, network: true},
	{name: "failover-reconnect", failover: true},
	{name: "network-unaudited", network: true},
	{name: "plain"},
}

// dupBroker is a broker under test: its two OpenWire addresses and a
// restart on the same store.
type dupBroker struct {
	plain, audited string
	restart        func()
}

// dupCounts are the copies of the re-sent message a consumer received
// while queued, after it was consumed, and after a restart.
type dupCounts struct{ queued, consumed, restarted int }

func runDupProbe(t *testing.T, b *dupBroker) map[string]dupCounts {
	t.Helper()
	got := map[string]dupCounts{}
	type state struct {
		q   *wire.Destination
		pid *wire.ProducerId
		seq int64
	}
	st := map[string]*state{}
	for i, k := range dupKinds {
		st[k.name] = &state{
			q:   wire.NewQueue(uniq(t) + "." + k.name),
			pid: &wire.ProducerId{ConnectionId: "ID:dup-probe-" + runID + "-" + strconv.Itoa(i) + "-1:1", SessionId: 1, Value: 1},
		}
	}
	id := func(s *state, seq int64) *wire.MessageId {
		return &wire.MessageId{ProducerId: s.pid, ProducerSequenceId: seq}
	}
	phase := func(k dupKind, s *state, sends ...int64) int {
		s.seq++
		marker := 100 + s.seq
		dupForward(t, b, k, s.q, append(sends, marker), func(seq int64) *wire.MessageId { return id(s, seq) })
		return dupDrain(t, b.plain, s.q, id(s, 1).String(), id(s, marker).String())
	}
	for _, k := range dupKinds {
		s := st[k.name]
		c := got[k.name]
		c.queued = phase(k, s, 1, 1)
		c.consumed = phase(k, s, 1)
		got[k.name] = c
	}
	b.restart()
	for _, k := range dupKinds {
		s := st[k.name]
		c := got[k.name]
		c.restarted = phase(k, s, 1)
		got[k.name] = c
	}
	return got
}

// dupForward connects as kind k and forwards persistent messages with
// the sequence ids seqs, keeping their MessageIds, each sent
// synchronously.
func dupForward(t *testing.T, b *dupBroker, k dupKind, q *wire.Destination, seqs []int64, id func(int64) *wire.MessageId) {
	t.Helper()
	addr := b.plain
	if k.audited {
		addr = b.audited
	}
	o := client.DefaultOptions()
	o.ClientID = "dup-" + k.name + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	o.FailoverReconnect = k.failover
	if k.failover {
		// The same connection id as every connection before it: a
		// failover client's producer keeps its id, which is the one
		// ActiveMQ looks its last stored sequence id up by.
		o.ConnectionID = id(1).ProducerId.ConnectionId
	}
	if k.network {
		o.BrokerInfo = &wire.BrokerInfo{BrokerId: &wire.BrokerId{Value: "ID:dup-peer-" + runID}, BrokerName: "dup-peer", NetworkConnection: true}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr, o)
	if err != nil {
		t.Fatalf("%s: dial %s: %v", k.name, addr, err)
	}
	defer c.Close()
	s, err := c.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Producer(q)
	if err != nil {
		t.Fatal(err)
	}
	if k.failover && p.ID().String() != id(1).ProducerId.String() {
		t.Fatalf("failover producer id %s, want %s (the messages' producer)", p.ID(), id(1).ProducerId)
	}
	for _, seq := range seqs {
		m := client.NewBytesMessage([]byte("dup " + strconv.FormatInt(seq, 10)))
		m.Persistent = true
		m.MessageId = id(seq)
		m.Timestamp = time.Now().UnixMilli()
		if err := p.Forward(ctx, m, true); err != nil {
			t.Fatalf("%s: forward %s: %v", k.name, m.MessageId, err)
		}
	}
}

// dupDrain consumes q until the message marker and returns how many
// copies of message dup came before it; any other message fails the test.
func dupDrain(t *testing.T, addr string, q *wire.Destination, dup, marker string) int {
	t.Helper()
	c := dialOW(t, addr, "")
	defer c.Close()
	s, err := c.Session(false)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Consumer(q, client.ConsumerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		m, err := k.Receive(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: receive before %s: %v (%d copies of %s so far)", q.PhysicalName, marker, err, n, dup)
		}
		switch m.MessageId.String() {
		case marker:
			return n
		case dup:
			n++
		default:
			t.Fatalf("%s: unexpected message %s", q.PhysicalName, m.MessageId)
		}
	}
}

// dupWharfConfig: one shard on KahaDB, the plain OpenWire connector
// (openwire), STOMP (the harness expects it) and an audited one.
const dupWharfConfig = `shards: 1
persistence:
  kahadb:
    directory: %q
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:%d"}
  - {name: stomp, uri: "stomp://127.0.0.1:%d"}
  - {name: audited, uri: "tcp://127.0.0.1:%d", audit_network_producers: true}
`

// TestConformanceDuplicateSendWharf: on Wharf (KahaDB), a message re-sent
// over a network connection on a connector with auditNetworkProducers,
// or over a failover client's reconnection, is stored once — while the
// first copy is queued, after it was consumed, and after a restart (the
// producer audit is kept in the store). Over a plain connection, or a
// network connection on a connector without auditNetworkProducers, only
// the queue's cursor audit drops it, until a restart: the same figures
// as ActiveMQ's (TestConformanceDuplicateSendActiveMQ).
func TestConformanceDuplicateSendWharf(t *testing.T) {
	dir := t.TempDir()
	ports := freePorts(t)
	cfg := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(dupWharfConfig, dir, ports[0], ports[1], ports[2])), 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWharfArgs(t, "--config", cfg)
	b := &dupBroker{plain: ports.openwire(), audited: "127.0.0.1:" + strconv.Itoa(ports[2])}
	b.restart = func() {
		w.stop()
		w = startWharfArgs(t, "--config", cfg)
	}
	got := runDupProbe(t, b)
	t.Logf("copies (queued, consumed, restarted): %+v", got)
	checkDupCounts(t, got)
	if n := len(w.logged("suppressing duplicate message send")); n != 2 {
		// After the restart: one each for the audited kinds.
		t.Errorf("restarted wharf logged %d \"suppressing duplicate message send\", want 2", n)
	}
	if n := len(w.logged("cursor got duplicate send")); n != 0 {
		t.Errorf("restarted wharf logged %d \"cursor got duplicate send\", want 0: the cursor audit starts empty", n)
	}
}

// checkDupCounts: ActiveMQ 5.17's figures. The audited kinds get one copy
// in every phase (the producer audit, kept in the store). The others get
// one while the broker runs, the re-sent copy dropped by the queue's
// cursor audit (policy enableAudit, default true), and a second copy
// after a restart, which the cursor audit does not survive.
func checkDupCounts(t *testing.T, got map[string]dupCounts) {
	t.Helper()
	for _, k := range dupKinds {
		want := dupCounts{1, 0, 1}
		if k.audited || k.failover {
			want = dupCounts{1, 0, 0}
		}
		if c := got[k.name]; c != want {
			t.Errorf("%s: copies of the re-sent message (queued, consumed, restarted) %+v, want %+v", k.name, c, want)
		}
	}
}

// dupActiveMQXML is conformance/kahadb/activemq.xml with two OpenWire
// connectors on the ports the test picks, the second with
// auditNetworkProducers="true".
const dupActiveMQXML = `<beans
  xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer"/>
  <broker xmlns="http://activemq.apache.org/schema/core" brokerName="dedup" useJmx="false" persistent="true"
          advisorySupport="false" schedulerSupport="false" dataDirectory="${activemq.data}">
    <persistenceAdapter><kahaDB directory="${wharf.kahadb.dir}"/></persistenceAdapter>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://127.0.0.1:${wharf.plain.port}"/>
      <transportConnector name="audited" uri="tcp://127.0.0.1:${wharf.audited.port}" auditNetworkProducers="true"/>
    </transportConnectors>
  </broker>
</beans>
`

// TestConformanceDuplicateSendActiveMQ is the same probe against Debian's
// ActiveMQ 5.17: what Wharf's producer audit reproduces.
func TestConformanceDuplicateSendActiveMQ(t *testing.T) {
	skipWithoutActiveMQ(t)
	dir := t.TempDir()
	ports := freePorts(t)
	props := []string{"wharf.kahadb.dir=" + dir, "wharf.plain.port=" + strconv.Itoa(ports[0]), "wharf.audited.port=" + strconv.Itoa(ports[2])}
	a := startActiveMQXML(t, []byte(dupActiveMQXML), props...)
	b := &dupBroker{plain: ports.openwire(), audited: "127.0.0.1:" + strconv.Itoa(ports[2])}
	b.restart = func() {
		a.stop()
		a = startActiveMQXML(t, []byte(dupActiveMQXML), props...)
	}
	got := runDupProbe(t, b)
	t.Logf("copies (queued, consumed, restarted): %+v", got)
	checkDupCounts(t, got)
}
