package conformance

import (
	"strconv"
	"testing"

	"wharf/conform"
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
	durable := func() *conform.RawConn {
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2", "client-id:"+clientID)
		c.Subscribe("d", tp, "activemq.subscriptionName:sub1", "selector:n > 1")
		return c
	}
	c := durable()
	c.Disconnect()
	p, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	for i := 1; i <= 3; i++ {
		p.SendMsg(tp, "t"+strconv.Itoa(i), "persistent:true", "n:"+strconv.Itoa(i))
		p.SendMsg(q, "q"+strconv.Itoa(i), "persistent:true")
	}
	p.Disconnect()
	// q1 is consumed and acknowledged (with a receipt) before the restart.
	cq, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	cq.Subscribe("q", q, "ack:client-individual", "activemq.prefetchSize:1")
	f := cq.ExpectMessage("q1")
	ackID, _ := f.Get("ack")
	cq.Send("ACK", []string{"id:" + ackID, "receipt:acked"}, nil)
	cq.ExpectReceipt("acked")
	cq.ExpectMessage("q2") // prefetch 1: after the ack; not acknowledged
	cq.Disconnect()

	b.Restart()
	c = durable()
	for _, want := range []string{"t2", "t3"} {
		f := c.ExpectMessage(want)
		conform.ExpectHeader(t, f, "destination", tp)
	}
	cq, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	cq.Subscribe("q", q)
	cq.ExpectMessage("q2")
	cq.ExpectMessage("q3")
	p, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
	p.SendMsg(tp, "excluded", "persistent:true", "n:0")
	p.SendMsg(tp, "marker", "persistent:true", "n:9")
	p.SendMsg(q, "qmarker", "persistent:true")
	c.ExpectMessage("marker")
	c.MustSync()
	cq.ExpectMessage("qmarker")
	cq.MustSync()
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
