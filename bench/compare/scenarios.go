package main

import (
	"math"
	"strings"
	"time"

	"wharf/bench"
)

// metric is what a scenario measures of each run.
type metric struct {
	name string // "throughput", "memory per connection"
	unit string
	// higherIsBetter orients the ratio: Wharf/reference above 1 is better
	// for throughput, below 1 for memory.
	higherIsBetter bool
	// latency marks a latency metric, whose rows show p50 and p99 of
	// both brokers.
	latency bool
	// of reads the figure from a run; ok false when the run did not
	// produce one.
	of func(*bench.Result) (v float64, ok bool)
}

// throughput is deliveries per second, from the first send to the last
// delivery: with a fan-out of 10, ten deliveries per message sent.
var throughput = metric{
	name: "throughput", unit: "msg/s", higherIsBetter: true,
	of: func(r *bench.Result) (float64, bool) { return r.ReceiveRate, r.Received > 0 },
}

// memoryPerConnection is the broker's RSS growth from the start of the
// run to its highest sample, divided by the connections opened.
var memoryPerConnection = metric{
	name: "memory per connection", unit: "B/conn", higherIsBetter: false,
	of: func(r *bench.Result) (float64, bool) {
		if r.Broker == nil || r.Connections == nil || r.Connections.Opened == 0 {
			return 0, false
		}
		return float64(r.Broker.RSSMaxBytes-r.Broker.RSSStartBytes) / float64(r.Connections.Opened), true
	},
}

// latencyP99 is the 99th percentile of the latency of an open-loop run
// (wharf bench --rate): from each message's scheduled send time to its
// receipt, so that a broker that holds the sender back is charged for
// the wait (no coordinated omission).
var latencyP99 = metric{
	name: "latency p99", unit: "µs", higherIsBetter: false, latency: true,
	of: func(r *bench.Result) (float64, bool) { return r.Latency.P99, r.Received > 0 },
}

// scenario is one line of the comparison: the same wharf bench run
// against each broker that has the connector it needs.
type scenario struct {
	ID    string // stable key in the JSON
	Title string
	conn  string // which connector: connOpenWire, connSTOMP, ...
	// refs are the reference brokers, compared with Wharf each. When
	// Wharf lacks the connector, the first reference is compared with the
	// others instead.
	refs   []string
	metric metric
	// fresh runs each round against broker processes started for that
	// run alone: memory that an earlier run left allocated (a grown JVM
	// heap, Go's retained spans) would hide the connections' cost.
	fresh bool
	set   func(*bench.Config)
	// jms, when set, runs the scenario with ActiveMQ's JMS client
	// (bench/jms) instead of wharf bench; set is then unused.
	jms *jmsRun
	// rateOfDisk, when > 0, sends open loop at this fraction of the
	// disk's write+fsync rate measured at the start (runner.fsyncPerSec),
	// for rateFor: a rate the disk sustains.
	rateOfDisk float64
	rateFor    time.Duration
	// target is what the ratio should reach, printed with the row.
	target string
	// storeEvery runs against a fresh Wharf with
	// concurrentStoreAndDispatchQueues off, so that every persistent
	// message is written and synced before its producer hears back (with
	// it on, one its consumer acknowledged first is never written, and the
	// near-the-limit rows would measure no disk). Needs fresh.
	storeEvery bool
	// presettledAMQP runs the AMQP side with --settle presettled (the
	// other protocols have no settlement mode): a row that compares AMQP
	// with a protocol run that takes no acknowledgements.
	presettledAMQP bool
}

// Counts and bounds of the runs. Each run stops at its count or its
// duration, whichever comes first, so a slow broker costs at most the
// duration (plus the drain), and `make bench-compare` takes about 25
// minutes on a 2-core machine (one round about 8).
const (
	persistentCount  = 20000
	messageCount     = 50000
	fanOutCount      = 20000
	sendDuration     = 5 * time.Second
	drainTime        = 5 * time.Second
	idleConnections  = 10000
	idleHold         = 2 * time.Second
	idleConnTimeout  = 15 * time.Second
	fanOutSubscribed = 10
	// The JMS client's runs have no duration bound (JmsBench stops at its
	// count), so their counts are smaller: a JVM's client costs several
	// times the Go driver's CPU per message, and a persistent send waits
	// for a disk sync.
	jmsCount           = 25000
	jmsPersistentCount = 2000
	jmsFanOutCount     = 10000
	// MQTT fan-out 1→1000: 200,000 deliveries at most (a million took
	// Mosquitto over a minute on 2 busy cores).
	bigFanOutSubscribed = 1000
	bigFanOutCount      = 200
	// The latency rows send open loop at a fixed rate for latencyFor.
	queueLatencyRate  = 10000
	fanOutLatencyRate = 1000
	latencyFor        = 5 * time.Second
	// diskLatencyShare is the persistent latency row's rate as a share of
	// the disk's fsync rate: below it, so that the disk keeps up.
	diskLatencyShare = 0.5
	// Producers of the near-the-limit rows: one, and many sharing the
	// disk's syncs.
	manySyncProducers = 64
)

// scenarios are the comparison's lines, in the order they run each round.
func scenarios() []scenario {
	amq := []string{nameActiveMQ}
	mqttRefs := []string{nameMosquitto, nameActiveMQ}
	persistentQueue := func(pairs int) func(*bench.Config) {
		return func(c *bench.Config) {
			c.Persistent, c.Size, c.Count = true, 1024, persistentCount
			c.Producers, c.Consumers = pairs, pairs
		}
	}
	queue := func(size int) func(*bench.Config) {
		return func(c *bench.Config) { c.Size, c.Count = size, messageCount }
	}
	fanOut := func(qos int) func(*bench.Config) {
		return func(c *bench.Config) {
			c.Scenario, c.Subscribers, c.Size, c.Count = bench.ScenarioTopic, fanOutSubscribed, 1024, fanOutCount
			c.QoS = qos
		}
	}
	stompRefs := []string{nameActiveMQ, nameRabbitMQ}
	rabbit := []string{nameRabbitMQ}
	mqttRefs3 := []string{nameMosquitto, nameActiveMQ, nameRabbitMQ}
	bigFanOut := func(c *bench.Config) {
		c.Scenario, c.Subscribers, c.Size, c.Count, c.QoS = bench.ScenarioTopic, bigFanOutSubscribed, 1024, bigFanOutCount, 0
		c.ConnectTimeout = idleConnTimeout
	}
	atRate := func(rate float64, set func(*bench.Config)) func(*bench.Config) {
		return func(c *bench.Config) {
			set(c)
			c.Rate, c.Duration = rate, latencyFor
			c.Count = int64(rate * latencyFor.Seconds())
		}
	}
	syncPersistent := func(producers int) func(*bench.Config) {
		return func(c *bench.Config) {
			sync := true
			c.Persistent, c.Sync, c.Size = true, &sync, 1024
			c.Producers, c.Consumers = producers, min(producers, 8)
			c.Count = 1 << 30 // the duration ends it
		}
	}
	return []scenario{
		{ID: "persistent-queue-1k-1x1-stomp", Title: "persistent queue 1 KiB, 1 pair, STOMP", conn: connSTOMP, refs: amq, metric: throughput, set: persistentQueue(1)},
		{ID: "persistent-queue-1k-4x4-stomp", Title: "persistent queue 1 KiB, 4 pairs, STOMP", conn: connSTOMP, refs: amq, metric: throughput, set: persistentQueue(4)},
		{ID: "persistent-queue-1k-1x1-openwire", Title: "persistent queue 1 KiB, 1 pair, OpenWire", conn: connOpenWire, refs: amq, metric: throughput, set: persistentQueue(1)},
		{ID: "persistent-queue-1k-4x4-openwire", Title: "persistent queue 1 KiB, 4 pairs, OpenWire", conn: connOpenWire, refs: amq, metric: throughput, set: persistentQueue(4)},
		{ID: "queue-100b-openwire", Title: "non-persistent queue 100 B, OpenWire", conn: connOpenWire, refs: amq, metric: throughput, set: queue(100)},
		{ID: "queue-1k-openwire", Title: "non-persistent queue 1 KiB, OpenWire", conn: connOpenWire, refs: amq, metric: throughput, set: queue(1024)},
		{ID: "topic-fanout-10-openwire", Title: "topic fan-out 1→10, 1 KiB, OpenWire", conn: connOpenWire, refs: amq, metric: throughput, set: fanOut(0)},
		{ID: "jms-queue-1k", Title: "non-persistent queue 1 KiB, JMS client", conn: connOpenWire, refs: amq, metric: throughput,
			jms: &jmsRun{size: 1024, count: jmsCount}},
		{ID: "jms-persistent-queue-1k", Title: "persistent queue 1 KiB, 1 pair, JMS client", conn: connOpenWire, refs: amq, metric: throughput,
			jms: &jmsRun{persistent: true, size: 1024, count: jmsPersistentCount}},
		{ID: "jms-topic-fanout-10", Title: "topic fan-out 1→10, 1 KiB, JMS client", conn: connOpenWire, refs: amq, metric: throughput,
			jms: &jmsRun{topic: true, size: 1024, count: jmsFanOutCount, subs: fanOutSubscribed}},
		{ID: "jms-persistent-queue-1k-4x4", Title: "persistent queue 1 KiB, 4 pairs, JMS client", conn: connOpenWire, refs: amq, metric: throughput,
			jms: &jmsRun{persistent: true, size: 1024, count: jmsPersistentCount * 2, pairs: 4}},
		{ID: "topic-fanout-10-stomp", Title: "topic fan-out 1→10, 1 KiB, STOMP", conn: connSTOMP, refs: stompRefs, metric: throughput, set: fanOut(0)},
		{ID: "queue-1k-amqp", Title: "non-persistent queue 1 KiB, AMQP 1.0", conn: connAMQP, refs: rabbit, metric: throughput, set: queue(1024)},
		{ID: "persistent-queue-1k-4x4-amqp", Title: "persistent queue 1 KiB, 4 pairs, AMQP 1.0", conn: connAMQP, refs: rabbit, metric: throughput, set: persistentQueue(4)},
		{ID: "topic-fanout-10-amqp", Title: "topic fan-out 1→10, 1 KiB, AMQP 1.0", conn: connAMQP, refs: rabbit, metric: throughput, set: fanOut(0)},
		// The same delivery guarantee on both sides: STOMP's run sends
		// without receipts and subscribes ack:auto (the broker settles at
		// dispatch, no ACK frames), so AMQP's sends and receives
		// presettled (no outcome to the producer, no disposition from the
		// consumer). Unsettled AMQP, with an outcome per message both ways,
		// is the RabbitMQ row's.
		{ID: "queue-1k-amqp-vs-stomp", Title: "non-persistent queue 1 KiB, Wharf AMQP 1.0 presettled vs its STOMP ack:auto (both at-most-once)", conn: connAMQP, refs: []string{nameWharfSTOMP}, metric: throughput, set: queue(1024), presettledAMQP: true},
		{ID: "mqtt-qos0-fanout-10", Title: "MQTT QoS 0 fan-out 1→10, 1 KiB", conn: connMQTT, refs: mqttRefs3, metric: throughput, set: fanOut(0)},
		{ID: "mqtt-qos1-fanout-10", Title: "MQTT QoS 1 fan-out 1→10, 1 KiB", conn: connMQTT, refs: mqttRefs3, metric: throughput, set: fanOut(1)},
		{ID: "mqtt-qos0-fanout-1000", Title: "MQTT QoS 0 fan-out 1→1000, 1 KiB", conn: connMQTT, refs: []string{nameMosquitto}, metric: throughput, set: bigFanOut},
		{ID: "latency-queue-10k-openwire", Title: "latency, queue 1 KiB at 10k msg/s, OpenWire", conn: connOpenWire, refs: amq, metric: latencyP99,
			set: atRate(queueLatencyRate, queue(1024))},
		{ID: "latency-queue-10k-stomp", Title: "latency, queue 1 KiB at 10k msg/s, STOMP", conn: connSTOMP, refs: amq, metric: latencyP99,
			set: atRate(queueLatencyRate, queue(1024))},
		{ID: "latency-topic-fanout-10-1k-openwire", Title: "latency, topic fan-out 1→10 at 1k msg/s, OpenWire", conn: connOpenWire, refs: amq, metric: latencyP99,
			set: atRate(fanOutLatencyRate, fanOut(0))},
		{ID: "latency-persistent-queue-openwire", Title: "latency, persistent queue 1 KiB, 4 pairs, at ½ the disk's fsync/s, OpenWire",
			conn: connOpenWire, refs: []string{nameActiveMQ, nameDisk}, metric: latencyP99, set: persistentQueue(4), rateOfDisk: diskLatencyShare, rateFor: latencyFor},
		{ID: "limit-sync-persistent-1-stomp", Title: "near the limit: 1 sync persistent producer (STOMP receipts), msg/s vs the disk's fsync/s",
			conn: connSTOMP, refs: []string{nameDisk}, metric: throughput, set: syncPersistent(1), target: "Wharf/disk ≥ 0.95",
			fresh: true, storeEvery: true},
		{ID: "limit-sync-persistent-64-stomp", Title: "near the limit: 64 sync persistent producers (STOMP receipts), msg/s vs the disk's fsync/s",
			conn: connSTOMP, refs: []string{nameDisk}, metric: throughput, set: syncPersistent(manySyncProducers), target: "Wharf/disk ≥ 20",
			fresh: true, storeEvery: true},
		{ID: "idle-connections-10k-openwire", Title: "idle connections, 10,000 OpenWire", conn: connNIO, refs: amq, metric: memoryPerConnection, fresh: true, set: idle},
		{ID: "idle-connections-10k-stomp", Title: "idle connections, 10,000 STOMP", conn: connSTOMPNIO, refs: amq, metric: memoryPerConnection, fresh: true, set: idle},
		{ID: "idle-connections-10k-mqtt", Title: "idle connections, 10,000 MQTT", conn: connMQTTNIO, refs: mqttRefs, metric: memoryPerConnection, fresh: true, set: idle},
		{ID: "idle-connections-10k-amqp", Title: "idle connections, 10,000 AMQP 1.0", conn: connAMQP, refs: rabbit, metric: memoryPerConnection, fresh: true, set: idle},
	}
}

// idle is the idle connections scenario: connections opened and held.
func idle(c *bench.Config) {
	c.Scenario, c.Connections, c.Hold, c.ConnectTimeout = bench.ScenarioConnections, idleConnections, idleHold, idleConnTimeout
}

// config is the wharf bench configuration of sc against url, with every
// run bounded in count and time; fsyncPerSec is the disk's rate, for a
// scenario that sends at a share of it.
func (sc scenario) config(url string, pid int, scale, fsyncPerSec float64) bench.Config {
	c := bench.DefaultConfig()
	c.URL, c.BrokerPID = url, pid
	c.Duration, c.Drain = sendDuration, drainTime
	sc.set(&c)
	if sc.presettledAMQP && (strings.HasPrefix(url, "amqp://") || strings.HasPrefix(url, "amqps://") || strings.HasPrefix(url, "amqp+ssl://")) {
		c.Settle = bench.SettlePresettled
	}
	if sc.rateOfDisk > 0 {
		// At least one message a second, whatever the disk.
		c.Rate = max(math.Round(sc.rateOfDisk*fsyncPerSec), 1)
		c.Duration = sc.rateFor
		c.Count = max(int64(c.Rate*sc.rateFor.Seconds()), int64(c.Producers))
	}
	if scale > 0 && scale != 1 {
		c.Count = max(int64(float64(c.Count)*scale), int64(c.Producers))
		c.Connections = max(int(float64(c.Connections)*scale), 1)
		c.Duration = time.Duration(float64(c.Duration) * scale)
		c.Hold = time.Duration(float64(c.Hold) * scale)
	}
	return c
}
