package conformance

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/go-amqp"
	paho5 "github.com/eclipse/paho.golang/paho"
	paho "github.com/eclipse/paho.mqtt.golang"

	"wharf/conform"
	"wharf/engine"
	"wharf/engine/brokertest"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// What a broker keeps in its store comes back after a restart, on every
// store of the matrix (storematrix_test.go: KahaDB, the default, then LSM
// and JDBC), each a subtest: each test runs an in-process broker whose
// Restart closes the store and opens it again (from disk, or from the
// database), so nothing survives in memory. After the
// expected messages each test sends a live marker and expects it next: a
// barrier that shows nothing else (an acknowledged message, one a
// selector excludes) came back.

// TestConformanceRestartSTOMPDurableSubscription: a STOMP durable topic
// subscription (client-id and activemq.subscriptionName) with a selector
// keeps, across a restart, the persistent messages it matched while
// offline, and its selector.
func TestConformanceRestartSTOMPDurableSubscription(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := startBroker(t, store)
		tp := topic(t, "")
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
			p.SendMsg(tp, "m"+strconv.Itoa(i), "persistent:true", "n:"+strconv.Itoa(i))
		}
		p.Disconnect()

		b.Restart()
		c = durable()
		for _, want := range []string{"m2", "m3"} {
			f := c.ExpectMessage(want)
			conform.ExpectHeader(t, f, "destination", tp)
		}
		p, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		p.SendMsg(tp, "excluded", "persistent:true", "n:0")
		p.SendMsg(tp, "marker", "persistent:true", "n:9")
		c.ExpectMessage("marker")
		c.MustSync()
	})
}

// TestConformanceRestartOpenWireDurableSubscription: a JMS durable
// subscription (Go OpenWire client) with a selector and noLocal keeps,
// across a restart, the messages it has not acknowledged, intact, its
// selector and its noLocal flag (a subscription re-made with other ones
// would start empty, as in ActiveMQ); the one it acknowledged before the
// restart stays gone, and a message its own connection sends after the
// restart does not reach it.
func TestConformanceRestartOpenWireDurableSubscription(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := startBroker(t, store)
		if b.Addr("openwire") == nil {
			t.Skip("no OpenWire connector in this build")
		}
		addr := b.Addr("openwire").String()
		clientID := uniq(t)
		top := wire.NewTopic(uniq(t))
		const sel = "i >= 1"
		c := dialOW(t, addr, clientID)
		s := must(c.Session(false))(t)
		d := must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", Selector: sel, NoLocal: true, AckMode: client.AckClient}))(t)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		pub := dialOW(t, addr, "")
		ps := must(pub.Session(false))(t)
		pp := must(ps.Producer(top))(t)
		var sent []*wire.Message
		for i := range 4 {
			m := richMessage("d"+strconv.Itoa(i), i)
			owSend(t, pp, m)
			sent = append(sent, m)
		}
		// d0 (i = 0) is excluded; d1 is taken and acknowledged.
		d = must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", Selector: sel, NoLocal: true, AckMode: client.AckClient, Prefetch: 1}))(t)
		got := receiveN(t, d, "sub1 before the restart", 1)
		checkMessages(t, "sub1 before the restart", got, sent[1:2])
		if err := d.Ack(got[0]); err != nil {
			t.Fatal(err)
		}
		// An ack is not answered; a synchronous send after it on the same
		// connection is handled after it.
		owSend(t, must(s.Producer(wire.NewQueue(uniq(t)+".barrier")))(t), markerMessage("barrier"))
		c.Close()
		pub.Close()

		b.Restart()
		addr = b.Addr("openwire").String()
		c = dialOW(t, addr, clientID)
		s = must(c.Session(false))(t)
		d = must(s.Consumer(top, client.ConsumerOptions{DurableName: "sub1", Selector: sel, NoLocal: true}))(t)
		checkMessages(t, "sub1 after the restart", receiveN(t, d, "sub1 after the restart", 2), sent[2:])
		own := richMessage("own", 1)
		owSend(t, must(s.Producer(top))(t), own) // noLocal: not for sub1
		pub = dialOW(t, addr, "")
		expectMarkerNext(t, must(must(pub.Session(false))(t).Producer(top))(t), d, "sub1")
	})
}

// TestConformanceRestartAMQPDurableSubscription: an AMQP durable
// subscription (container-id, link name, durable source that never
// expires, a selector filter) keeps across a restart the durable messages
// it matched while it was detached, and its selector (re-attached with
// the same filter, it is not re-made empty).
func TestConformanceRestartAMQPDurableSubscription(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := amqpBroker(t, nil, store)
		base := uniq(t)
		topic := "topic://" + base
		durable := &amqp.ReceiverOptions{Name: "sub1", SourceDurability: amqp.DurabilityUnsettledState, SourceExpiryPolicy: amqp.ExpiryPolicyNever,
			Filters: []amqp.LinkFilter{amqp.NewSelectorFilter("color = 'red'")}}
		colored := func(body, color string) *amqp.Message {
			m := amqp.NewMessage([]byte(body))
			m.Header = &amqp.MessageHeader{Durable: true} // offline subscriptions keep persistent messages only
			m.ApplicationProperties = map[string]any{"color": color}
			return m
		}
		clientConn := func() *amqp.Conn {
			return amqpDial(t, b.AMQPAddr(), &amqp.ConnOptions{ContainerID: base + "-client", SASLType: amqp.SASLTypeAnonymous()})
		}
		c := clientConn()
		amqpReceiver(t, amqpSession(t, c), topic, durable)
		c.Close() // detaches the link: the subscription stays
		eventually(t, func() bool { return len(b.Engine().DurableSubs(base+"-client")) == 1 })
		snd := amqpSender(t, amqpSession(t, amqpDial(t, b.AMQPAddr(), nil)), topic, nil)
		amqpSend(t, snd, colored("away-1", "red"))
		amqpSend(t, snd, colored("blue", "blue"))
		amqpSend(t, snd, colored("away-2", "red"))

		b.Restart()
		if subs := b.Engine().DurableSubs(base + "-client"); len(subs) != 1 || subs[0].Key.Name != "sub1" {
			t.Fatalf("durable subscriptions after the restart: %+v, want sub1", subs)
		}
		r := amqpReceiver(t, amqpSession(t, clientConn()), topic, durable)
		snd = amqpSender(t, amqpSession(t, amqpDial(t, b.AMQPAddr(), nil)), topic, nil)
		for _, want := range []string{"away-1", "away-2"} {
			m := amqpRecv(t, r)
			if string(m.GetData()) != want {
				t.Fatalf("after the restart got %q, want %q", m.GetData(), want)
			}
			if err := r.AcceptMessage(amqpCtx(t), m); err != nil {
				t.Fatal(err)
			}
		}
		amqpSend(t, snd, colored("blue-after", "blue"))
		amqpSend(t, snd, colored("marker", "red"))
		if m := amqpRecv(t, r); string(m.GetData()) != "marker" {
			t.Fatalf("after the kept messages got %q, want the marker", m.GetData())
		}
	})
}

// TestConformanceRestartMQTTExactlyOnceSession: a persistent MQTT session's
// QoS 2 subscription is a durable subscription named EXACTLY_ONCE:<filter>;
// after a restart it is still there, and what was published to it while
// the client was away is delivered at QoS 2.
func TestConformanceRestartMQTTExactlyOnceSession(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := mqttBroker(t, nil, store)
		base := uniq(t)
		id := base + "-dev"
		persistent := func(o *paho.ClientOptions) { o.SetCleanSession(false) }
		c := conform.MQTTConnect(t, b.MQTTAddr(), id, persistent)
		conform.MQTTSub(t, c, base+"/x", 2)
		c.Disconnect(50)
		pub := conform.MQTTConnect(t, b.MQTTAddr(), base+"-pub")
		conform.MQTTPub(t, pub, base+"/x", 2, false, "away-2")
		conform.MQTTPub(t, pub, base+"/x", 1, false, "away-1")

		b.Restart()
		subs := b.Engine().DurableSubs(id)
		if len(subs) != 1 || subs[0].Key.Name != "EXACTLY_ONCE:"+base+"/x" {
			t.Fatalf("durable subscriptions of %s after the restart: %+v", id, subs)
		}
		ch := make(conform.MQTTMessages, 10)
		c = conform.MQTTConnect(t, b.MQTTAddr(), id, persistent, func(o *paho.ClientOptions) {
			o.SetDefaultPublishHandler(ch.Handler)
		})
		// A QoS 2 subscription gets each message at the QoS it was published
		// with [MQTT-3.8.4-6].
		for _, want := range []struct {
			body string
			qos  byte
		}{{"away-2", 2}, {"away-1", 1}} {
			m := ch.Next(t)
			if string(m.Payload()) != want.body || m.Qos() != want.qos {
				t.Fatalf("resumed session got %q at QoS %d, want %q at QoS %d", m.Payload(), m.Qos(), want.body, want.qos)
			}
		}
		pub = conform.MQTTConnect(t, b.MQTTAddr(), base+"-pub2")
		conform.MQTTPub(t, pub, base+"/x", 2, false, "marker")
		if m := ch.Next(t); string(m.Payload()) != "marker" {
			t.Fatalf("after the kept messages got %q, want the marker", m.Payload())
		}
	})
}

// TestConformanceRestartScheduledJobs: scheduled messages (schedulerSupport
// in activemq.xml) are kept across a restart and fire when due on the
// engine's clock; a repeated job fires its remaining times after it, and
// a delivered one-shot job does not fire again.
func TestConformanceRestartScheduledJobs(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		clock := &fakeClock{}
		b := startBroker(t, store, brokertest.WithEngine(func(o *engine.Options) {
			o.Now = clock.now
			o.TickInterval = time.Hour // only the test's Tick fires jobs
		}))
		q := queue(t, "")
		p, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		p.SendMsg(q, "soon", "persistent:true", "AMQ_SCHEDULED_DELAY:1000")
		p.SendMsg(q, "delayed", "persistent:true", "AMQ_SCHEDULED_DELAY:60000")
		p.SendMsg(q, "repeated", "persistent:true", "AMQ_SCHEDULED_DELAY:120000", "AMQ_SCHEDULED_PERIOD:60000", "AMQ_SCHEDULED_REPEAT:1")
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("s", q)
		clock.add(2 * time.Second)
		b.Engine().Tick()
		c.ExpectMessage("soon")
		c.MustSync()
		c.Disconnect()

		b.Restart()
		c, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("s", q)
		c.MustSync() // nothing is due yet: "soon" fired before the restart
		clock.add(time.Minute)
		b.Engine().Tick()
		f := c.ExpectMessage("delayed")
		if v, _ := f.Get("scheduledJobId"); v == "" {
			t.Fatalf("recovered job delivered without scheduledJobId: %s", f)
		}
		c.MustSync()
		for range 2 {
			clock.add(time.Minute)
			b.Engine().Tick()
			c.ExpectMessage("repeated")
		}
		clock.add(time.Hour)
		b.Engine().Tick()
		p, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		p.SendMsg(q, "marker")
		c.ExpectMessage("marker")
		c.MustSync()
	})
}

// TestConformanceRestartDLQOriginalDestination: persistent messages sent
// over STOMP and over OpenWire that expire on a queue are swept to
// ActiveMQ.DLQ; after a restart they are still there and still name the
// queue they came from (original-destination), as ActiveMQ's
// OriginalDestination.
func TestConformanceRestartDLQOriginalDestination(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		clock := &fakeClock{}
		b := startBroker(t, store, brokertest.WithEngine(func(o *engine.Options) {
			o.Now = clock.now
			o.TickInterval = time.Hour // only the test's Tick sweeps
		}))
		if b.Addr("openwire") == nil {
			t.Skip("no OpenWire connector in this build")
		}
		q := queue(t, "")
		dlq := "/queue/ActiveMQ.DLQ"
		exp := clock.now().Add(time.Minute).UnixMilli()
		p, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		p.SendMsg(q, "from stomp", "persistent:true", "expires:"+strconv.FormatInt(exp, 10))
		ow := dialOW(t, b.Addr("openwire").String(), "")
		op := must(must(ow.Session(false))(t).Producer(wire.NewQueue(strings.TrimPrefix(q, "/queue/"))))(t)
		m := client.NewTextMessage("from openwire")
		m.Expiration = exp
		owSend(t, op, m)
		clock.add(2 * time.Minute) // past the expiry and the sweep period
		b.Engine().Tick()

		b.Restart()
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("dlq", dlq)
		for _, want := range []string{"from stomp", "from openwire"} {
			f := c.ExpectMessage(want)
			conform.ExpectHeader(t, f, "original-destination", q)
			conform.ExpectHeader(t, f, "destination", dlq)
		}
		c.MustSync()
	})
}

// TestConformanceRestartVirtualTopicCopy: the copy a virtual topic makes
// on its consumer queue (Consumer.<name>.VirtualTopic.<topic>) of a
// message sent over OpenWire reaches its consumer after a restart as it
// reaches a consumer before one: the same destination headers, the topic
// as original-destination.
func TestConformanceRestartVirtualTopicCopy(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := startBroker(t, store)
		if b.Addr("openwire") == nil {
			t.Skip("no OpenWire connector in this build")
		}
		vt := "VirtualTopic." + uniq(t)
		qa, qb := "/queue/Consumer.A."+vt, "/queue/Consumer.B."+vt
		// The consumer queues exist once something consumes from them.
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("a", qa)
		c.Subscribe("b", qb)
		c.Send("UNSUBSCRIBE", []string{"id:b", "receipt:u"}, nil)
		c.ExpectReceipt("u")
		ow := dialOW(t, b.Addr("openwire").String(), "")
		op := must(must(ow.Session(false))(t).Producer(wire.NewTopic(vt)))(t)
		owSend(t, op, client.NewTextMessage("copied"))
		before := c.ExpectMessage("copied")
		c.MustSync()
		c.Disconnect()

		b.Restart()
		c, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("b", qb)
		after := c.ExpectMessage("copied")
		c.MustSync()
		conform.ExpectHeader(t, before, "original-destination", "/topic/"+vt)
		conform.ExpectHeader(t, after, "original-destination", "/topic/"+vt)
		// The same destination as before, on the other consumer queue.
		conform.ExpectHeader(t, after, "destination", strings.Replace(conform.Header(before, "destination"), "Consumer.A.", "Consumer.B.", 1))
	})
}

// TestConformanceRestartMQTT5Session: an MQTT 5 session that outlives its
// connection (Session Expiry Interval) is resumed with session present, its
// ordinary and its shared subscription ($share/<group>/<filter>) both
// delivering what was published while it was away: after a reconnect, and
// after a restart (before and after it).
func TestConformanceRestartMQTT5Session(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		for _, restart := range []bool{false, true} {
			name := "reconnect"
			if restart {
				name = "restart"
			}
			t.Run(name, func(t *testing.T) { testMQTT5SessionResumed(t, restart, store) })
		}
	})
}

func testMQTT5SessionResumed(t *testing.T, restart bool, store brokertest.Option) {
	b := mqttBroker(t, nil, store)
	base := uniq(t)
	expiry := uint32(3600)
	connect := func() *conform.MQTT5Client {
		return conform.MQTT5Connect(t, b.MQTTAddr(), &paho5.Connect{ClientID: base, CleanStart: false,
			Properties: &paho5.ConnectProperties{SessionExpiryInterval: &expiry}})
	}
	c := connect()
	c.Sub(t, &paho5.Subscribe{Subscriptions: []paho5.SubscribeOptions{
		{Topic: base + "/plain", QoS: 1},
		{Topic: "$share/g/" + base + "/shared", QoS: 1},
	}})
	c.Disconnect(&paho5.Disconnect{})
	publish := func(body string) {
		p := conform.MQTT5Connect(t, b.MQTTAddr(), &paho5.Connect{ClientID: base + "-pub", CleanStart: true})
		for _, topic := range []string{base + "/plain", base + "/shared"} {
			p.Pub(t, &paho5.Publish{Topic: topic, QoS: 1, Payload: []byte(body)})
		}
		p.Disconnect(&paho5.Disconnect{})
	}
	publish("before")
	if restart {
		b.Restart()
	}
	publish("after")
	c = connect()
	if !c.Connack.SessionPresent {
		t.Fatal("session present not set for the resumed session")
	}
	got := map[string][]string{}
	for range 4 {
		m := c.Next(t)
		got[m.Topic] = append(got[m.Topic], string(m.Payload))
	}
	for _, topic := range []string{base + "/plain", base + "/shared"} {
		if w := []string{"before", "after"}; strings.Join(got[topic], ",") != strings.Join(w, ",") {
			t.Errorf("%s: got %q, want %q", topic, got[topic], w)
		}
	}
	publish("marker")
	for range 2 {
		if m := c.Next(t); string(m.Payload) != "marker" {
			t.Fatalf("after the kept messages got %q on %s, want the marker", m.Payload, m.Topic)
		}
	}
}

// TestConformanceRestartVirtualTopicEmptyConsumerQueue: a virtual topic's
// consumer queue (Consumer.A.VirtualTopic.<topic>) that its consumer left
// empty survives a clean restart, so it collects the copy of a message
// sent to the topic while the consumer is away, as ActiveMQ's KahaDB keeps
// the queue's StoredDestination in db.data and re-creates it at start.
func TestConformanceRestartVirtualTopicEmptyConsumerQueue(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := startBroker(t, store)
		vt := "VirtualTopic.Orders" + uniq(t)
		qa := "/queue/Consumer.A." + vt
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("a", qa)
		c.Send("UNSUBSCRIBE", []string{"id:a", "receipt:u"}, nil)
		c.ExpectReceipt("u")
		c.Disconnect()

		b.Restart()
		p, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		p.SendMsg("/topic/"+vt, "while away", "persistent:true")
		p.Disconnect()
		c, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("a", qa)
		f := c.ExpectMessage("while away")
		conform.ExpectHeader(t, f, "original-destination", "/topic/"+vt)
		c.MustSync()
	})
}

// TestConformanceRestartEmptyQueue: a queue emptied by its consumer (a
// persistent send, then a consume) still exists after a clean restart: a
// subscriber of ActiveMQ.Advisory.Queue is sent its DestinationInfo among
// the existing destinations (AdvisoryBroker's replay), as ActiveMQ's
// KahaDB lists it in db.data until it is removed; and it is empty.
func TestConformanceRestartEmptyQueue(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := startBroker(t, store)
		q := uniq(t) + ".emptied"
		c, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.SendMsg("/queue/"+q, "consumed", "persistent:true")
		c.Subscribe("q", "/queue/"+q)
		c.ExpectMessage("consumed")
		c.Disconnect()

		b.Restart()
		adv, _ := conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		adv.Subscribe("adv", conform.AdvisoryTopic("Queue", ""))
		conform.ExpectAdvisory(t, adv, `"DestinationInfo"`, q)
		c, _ = conform.ConnectRaw(t, b.STOMPAddr(), "1.2")
		c.Subscribe("q", "/queue/"+q)
		c.SendMsg("/queue/"+q, "marker", "persistent:true")
		c.ExpectMessage("marker") // nothing came back before it
		c.MustSync()
	})
}

// TestConformanceRestartMQTT5EmptySharedSubscription: an MQTT 5 session's
// shared subscription ($share/<group>/<filter>) whose queue is empty at
// a clean restart still collects what is published before the session
// resumes, as in ActiveMQ. (It passed before the store kept empty
// destinations: the MQTT server re-creates a shared subscription's queue
// from its members' durable subscriptions. It guards that case.)
func TestConformanceRestartMQTT5EmptySharedSubscription(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := mqttBroker(t, nil, store)
		base := uniq(t)
		expiry := uint32(3600)
		connect := func() *conform.MQTT5Client {
			return conform.MQTT5Connect(t, b.MQTTAddr(), &paho5.Connect{ClientID: base, CleanStart: false,
				Properties: &paho5.ConnectProperties{SessionExpiryInterval: &expiry}})
		}
		c := connect()
		c.Sub(t, &paho5.Subscribe{Subscriptions: []paho5.SubscribeOptions{{Topic: "$share/g/" + base + "/shared", QoS: 1}}})
		c.Disconnect(&paho5.Disconnect{})
		b.Restart()
		publish := func(body string) {
			p := conform.MQTT5Connect(t, b.MQTTAddr(), &paho5.Connect{ClientID: base + "-pub", CleanStart: true})
			p.Pub(t, &paho5.Publish{Topic: base + "/shared", QoS: 1, Payload: []byte(body)})
			p.Disconnect(&paho5.Disconnect{})
		}
		publish("while away")
		c = connect()
		if m := c.Next(t); string(m.Payload) != "while away" {
			t.Fatalf("resumed shared subscription got %q, want the message published while away", m.Payload)
		}
		publish("marker")
		if m := c.Next(t); string(m.Payload) != "marker" {
			t.Fatalf("after the kept message got %q, want the marker", m.Payload)
		}
	})
}

// TestConformanceRestartMQTTVirtualTopicSession: with the virtual-topic
// subscription strategy, a persistent MQTT session's queue
// (Consumer.<clientId>:AT_LEAST_ONCE.VirtualTopic.<topic>) that is empty at
// a clean restart still collects what is published before the session
// resumes.
func TestConformanceRestartMQTTVirtualTopicSession(t *testing.T) {
	forEachStoreInProcess(t, func(t *testing.T, store brokertest.Option) {
		b := mqttBroker(t, map[string]string{"transport.subscriptionStrategy": "mqtt-virtual-topic-subscriptions"}, store)
		base := uniq(t)
		id := base + "-dev"
		persistent := func(o *paho.ClientOptions) { o.SetCleanSession(false) }
		c := conform.MQTTConnect(t, b.MQTTAddr(), id, persistent)
		conform.MQTTSub(t, c, base+"/t", 1)
		c.Disconnect(50)
		b.Restart()
		conform.MQTTPub(t, conform.MQTTConnect(t, b.MQTTAddr(), base+"-p"), base+"/t", 1, false, "while away")
		ch := make(conform.MQTTMessages, 10)
		conform.MQTTConnect(t, b.MQTTAddr(), id, persistent, func(o *paho.ClientOptions) { o.SetDefaultPublishHandler(ch.Handler) })
		if m := ch.Next(t); string(m.Payload()) != "while away" {
			t.Fatalf("resumed virtual-topic session got %q, want the message published while away", m.Payload())
		}
	})
}
