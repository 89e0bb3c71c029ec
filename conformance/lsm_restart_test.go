package conformance

import (
	"strconv"
	"testing"

	"wharf/engine/brokertest"
)

// checkRestartSTOMP is the restart check of TestConformanceStoreRestart
// on broker b, whatever its store: a queue's pending persistent messages
// and a STOMP durable topic subscription with a selector (and what it
// matched while offline) survive a restart that closes the store and
// opens it again; the queue message consumed and acknowledged before the
// restart stays gone, and a live marker after the expected messages
// shows nothing else came back.
func checkRestartSTOMP(t *testing.T, b *brokertest.Broker) {
	q, tp := queue(t, ""), topic(t, "")
	clientID := uniq(t)
	durable := func() *rawConn {
		c, _ := connectRaw(t, b.STOMPAddr(), "1.2", "client-id:"+clientID)
		c.subscribe("d", tp, "activemq.subscriptionName:sub1", "selector:n > 1")
		return c
	}
	c := durable()
	c.disconnect()
	p, _ := connectRaw(t, b.STOMPAddr(), "1.2")
	for i := 1; i <= 3; i++ {
		p.sendMsg(tp, "t"+strconv.Itoa(i), "persistent:true", "n:"+strconv.Itoa(i))
		p.sendMsg(q, "q"+strconv.Itoa(i), "persistent:true")
	}
	p.disconnect()
	// q1 is consumed and acknowledged (with a receipt) before the restart.
	cq, _ := connectRaw(t, b.STOMPAddr(), "1.2")
	cq.subscribe("q", q, "ack:client-individual", "activemq.prefetchSize:1")
	f := cq.expectMessage("q1")
	ackID, _ := f.Get("ack")
	cq.send("ACK", []string{"id:" + ackID, "receipt:acked"}, nil)
	cq.expectReceipt("acked")
	cq.expectMessage("q2") // prefetch 1: after the ack; not acknowledged
	cq.disconnect()

	b.Restart()
	c = durable()
	for _, want := range []string{"t2", "t3"} {
		f := c.expectMessage(want)
		expectHeader(t, f, "destination", tp)
	}
	cq, _ = connectRaw(t, b.STOMPAddr(), "1.2")
	cq.subscribe("q", q)
	cq.expectMessage("q2")
	cq.expectMessage("q3")
	p, _ = connectRaw(t, b.STOMPAddr(), "1.2")
	p.sendMsg(tp, "excluded", "persistent:true", "n:0")
	p.sendMsg(tp, "marker", "persistent:true", "n:9")
	p.sendMsg(q, "qmarker", "persistent:true")
	c.expectMessage("marker")
	c.mustSync()
	cq.expectMessage("qmarker")
	cq.mustSync()
}

// lsmWharfConfig is the YAML of a wharf process on the LSM store in %q,
// syncWrites at its default (true), two shards (one badger database
// each), loopback port 0 for every connector.
const lsmWharfConfig = `shards: 2
persistence:
  lsm:
    directory: %q
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
  - {name: mqtt, uri: "mqtt://127.0.0.1:0"}
`
