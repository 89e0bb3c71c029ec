package main

import (
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
}

// Counts and bounds of the runs. Each run stops at its count or its
// duration, whichever comes first, so a slow broker costs at most the
// duration (plus the drain), and `make bench-compare` stays within 15
// minutes on a 2-core machine.
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
		{ID: "mqtt-qos0-fanout-10", Title: "MQTT QoS 0 fan-out 1→10, 1 KiB", conn: connMQTT, refs: mqttRefs, metric: throughput, set: fanOut(0)},
		{ID: "mqtt-qos1-fanout-10", Title: "MQTT QoS 1 fan-out 1→10, 1 KiB", conn: connMQTT, refs: mqttRefs, metric: throughput, set: fanOut(1)},
		{ID: "idle-connections-10k-openwire", Title: "idle connections, 10,000 OpenWire", conn: connNIO, refs: amq, metric: memoryPerConnection, fresh: true, set: idle},
		{ID: "idle-connections-10k-stomp", Title: "idle connections, 10,000 STOMP", conn: connSTOMPNIO, refs: amq, metric: memoryPerConnection, fresh: true, set: idle},
		{ID: "idle-connections-10k-mqtt", Title: "idle connections, 10,000 MQTT", conn: connMQTTNIO, refs: mqttRefs, metric: memoryPerConnection, fresh: true, set: idle},
	}
}

// idle is the idle connections scenario: connections opened and held.
func idle(c *bench.Config) {
	c.Scenario, c.Connections, c.Hold, c.ConnectTimeout = bench.ScenarioConnections, idleConnections, idleHold, idleConnTimeout
}

// config is the wharf bench configuration of sc against url, with every
// run bounded in count and time.
func (sc scenario) config(url string, pid int, scale float64) bench.Config {
	c := bench.DefaultConfig()
	c.URL, c.BrokerPID = url, pid
	c.Duration, c.Drain = sendDuration, drainTime
	sc.set(&c)
	if scale > 0 && scale != 1 {
		c.Count = max(int64(float64(c.Count)*scale), int64(c.Producers))
		c.Connections = max(int(float64(c.Connections)*scale), 1)
		c.Duration = time.Duration(float64(c.Duration) * scale)
		c.Hold = time.Duration(float64(c.Hold) * scale)
	}
	return c
}
