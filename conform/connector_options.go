package conform

import (
	"strings"
	"time"

	"wharf/protocols/amqp/wire"
	mqttwire "wharf/protocols/mqtt/wire"
)

// Cases that need a connector with an option set (ConfigXML's mqtt-small,
// mqtt-dollar and amqp-idle): the MQTT frame limit, $-topics published,
// the AMQP idle time-out. Each is given as a broker URL carrying that
// option (AddURL); without it the case skips, naming the URL.

const (
	cfgMQTTSmall  = "the mqtt-small connector: mqtt://...?wireFormat.maxFrameSize=1024"
	cfgMQTTDollar = "the mqtt-dollar connector: mqtt://...?transport.publishDollarTopics=true"
	cfgAMQPIdle   = "the amqp-idle connector: amqp://...?wireFormat.idleTimeout=500"
)

// mqttWildcards: + matches one level, # any number; a # subscriber gets
// every plain topic below it.
func mqttWildcards(t *T) {
	addr := t.Addr(MQTT)
	base := t.Uniq()
	c := MQTTConnect(t, addr, base)
	// One client per filter: Paho hands a message to every local handler
	// whose filter matches, whichever subscription it came through.
	plus := MQTTSub(t, MQTTConnect(t, addr, base+"-plus"), base+"/+/temp", 0)
	hash := MQTTSub(t, MQTTConnect(t, addr, base+"-hash"), base+"/#", 0)
	MQTTPub(t, c, base+"/kitchen/temp", 0, false, "k")
	MQTTPub(t, c, base+"/kitchen/humidity", 0, false, "h")
	MQTTPub(t, c, base+"/kitchen/temp/probe", 0, false, "p")
	if m := plus.Next(t); m.Topic() != base+"/kitchen/temp" {
		t.Fatalf("%s/+/temp got %s", base, m.Topic())
	}
	// Three topics: MQTT orders messages per topic only.
	seen := map[string]bool{}
	for range 3 {
		seen[hash.Next(t).Topic()] = true
	}
	for _, want := range []string{"/kitchen/temp", "/kitchen/humidity", "/kitchen/temp/probe"} {
		if !seen[base+want] {
			t.Fatalf("%s/# got %v, want %s%s among them", base, seen, base, want)
		}
	}
	// A marker on a topic + matches, published after the others: the next
	// thing + gets (per-topic order does not span topics, so the marker
	// bounds the wait rather than proving the absence).
	MQTTPub(t, c, base+"/hall/temp", 0, false, "marker")
	if m := plus.Next(t); m.Topic() != base+"/hall/temp" {
		t.Fatalf("%s/+/temp got %s %q, want the marker (not the deeper or other topics)", base, m.Topic(), m.Payload())
	}
}

// mqttDollarPublished: with publishDollarTopics=true a PUBLISH to a
// $-topic is delivered to a subscriber of that topic; ActiveMQ also
// delivers it to one of a filter that starts with a wildcard, Wharf does
// not [MQTT-4.7.2-1] (the case's deviation).
func mqttDollarPublished(t *T) {
	addr := t.Addr(MQTTDollar)
	base := t.Uniq()
	c := MQTTConnect(t, addr, base)
	dollar := MQTTSub(t, MQTTConnect(t, addr, base+"-dollar"), "$SYS/"+base+"/#", 0)
	// The subscriber of a filter that starts with a wildcard is raw, so
	// that a PINGREQ orders what it got. (Not "#" itself: that gets
	// ActiveMQ's advisory topics, one of them named for the "#"
	// subscription, with a '#' in a topic name that a strict decoder
	// refuses.)
	wild := "+/" + base + "/#"
	all := DialRawMQTT(t, addr)
	all.Connect(base+"-wild", true, 0, nil)
	all.Send(&mqttwire.Packet{Type: mqttwire.SUBSCRIBE, PacketID: 1, Subscriptions: []mqttwire.Subscription{{Filter: wild, QoS: 0}}})
	if p := all.Read(); p.Type != mqttwire.SUBACK || string(p.ReasonCodes) != "\x00" {
		t.Fatalf("SUBACK for %s: %s %q", wild, p.Type, p.ReasonCodes)
	}
	MQTTPub(t, c, "$SYS/"+base+"/uptime", 0, false, "s")
	MQTTPub(t, c, "plain/"+base+"/uptime", 0, false, "p")
	if m := dollar.Next(t); m.Topic() != "$SYS/"+base+"/uptime" || string(m.Payload()) != "s" {
		t.Fatalf("$SYS/%s/# got %s %q", base, m.Topic(), m.Payload())
	}
	// The $ message has been routed (its subscriber has it): up to the
	// answer to a PINGREQ, the wildcard subscriber has the plain one and
	// not the $ one. ActiveMQ 5.17 matches the $ one too (+ is JMS's *,
	// which matches any name); DEVIATION: Wharf keeps [MQTT-4.7.2-1]
	// (protocols/mqtt).
	wantDollar := t.ActiveMQBehaviour()
	gotPlain, gotDollar := false, false
	all.Send(&mqttwire.Packet{Type: mqttwire.PINGREQ})
	for pinged := false; !pinged || !gotPlain || wantDollar && !gotDollar; {
		p := all.Read()
		switch {
		case p.Type == mqttwire.PINGRESP:
			pinged = true
		case p.Type != mqttwire.PUBLISH:
			t.Fatalf("%s subscriber got %s", wild, p.Type)
		case strings.HasPrefix(p.Topic, "$"):
			if !wantDollar {
				t.Fatalf("%s matched %s [MQTT-4.7.2-1]", wild, p.Topic)
			}
			t.Observe("recv", "wildcard subscriber: %s", p.Topic)
			gotDollar = true
		default:
			t.Observe("recv", "wildcard subscriber: %s", p.Topic)
			gotPlain = true
		}
	}
}

// mqttPacketTooLarge: a packet larger than the connector's
// wireFormat.maxFrameSize closes that connection (MQTT 3.1.1 has no
// packet to say why; MQTT 5 says so with DISCONNECT 0x95 after the CONNACK
// announced the limit); a smaller one passes, and other connections are
// untouched.
func mqttPacketTooLarge(t *T) {
	addr := t.Addr(MQTTSmall)
	base := t.Uniq()
	bystander := DialRawMQTT(t, addr)
	bystander.Connect(base+"-b", true, 0, nil)

	t.Run("mqtt-3.1.1", func(t *T) {
		r := DialRawMQTT(t, addr)
		if ack := r.Connect(base+"-3", true, 0, nil); ack.Type != mqttwire.CONNACK || ack.ReasonCode != 0 {
			t.Fatalf("CONNECT answered %s %#x", ack.Type, ack.ReasonCode)
		}
		r.Send(&mqttwire.Packet{Type: mqttwire.PUBLISH, QoS: 1, PacketID: 1, Topic: base, Payload: make([]byte, MQTTSmallFrameSize/2)})
		if p := r.Read(); p.Type != mqttwire.PUBACK || p.PacketID != 1 {
			t.Fatalf("a %d-byte PUBLISH answered %s %d, want PUBACK 1", MQTTSmallFrameSize/2, p.Type, p.PacketID)
		}
		r.Send(&mqttwire.Packet{Type: mqttwire.PUBLISH, QoS: 1, PacketID: 2, Topic: base, Payload: make([]byte, 2*MQTTSmallFrameSize)})
		r.Closed()
		t.Observe("close", "after a %d-byte PUBLISH", 2*MQTTSmallFrameSize)
	})
	t.Run("mqtt-5", func(t *T) {
		needMQTT5At(t, addr)
		r := DialRawMQTT(t, addr)
		r.Version = mqttwire.Version5
		ack := r.Connect(base+"-5", true, 0, nil)
		if ack.Props == nil || !ack.Props.HasMaximumPacketSize || ack.Props.MaximumPacketSize != MQTTSmallFrameSize {
			t.Fatalf("CONNACK does not announce the maximum packet size %d: %+v", MQTTSmallFrameSize, ack.Props)
		}
		r.Send(&mqttwire.Packet{Type: mqttwire.PUBLISH, Topic: base, Payload: make([]byte, 2*MQTTSmallFrameSize)})
		p := r.Read()
		if p.Type != mqttwire.DISCONNECT || p.ReasonCode != mqttwire.ReasonPacketTooLarge {
			t.Fatalf("got %s %#x, want DISCONNECT 0x95 (packet too large)", p.Type, p.ReasonCode)
		}
		r.Closed()
	})
	bystander.Alive()
}

// amqpIdleTimeout: the broker's Open carries its idle-time-out (the
// connector's wireFormat.idleTimeout); it sends empty frames often enough
// for the client's idle-time-out, and closes a silent client with
// resource-limit-exceeded.
func amqpIdleTimeout(t *T) {
	r := DialRawAMQP(t, t.Addr(AMQPIdle))
	r.Handshake()
	open := wire.NewOpen(t.Uniq())
	open.IdleTimeOut = 200 * time.Millisecond // the broker must be heard from every 100 ms
	r.Send(0, open, nil)
	o, ok := r.Next().Body.(*wire.Open)
	if !ok || o.IdleTimeOut != AMQPIdleTimeout {
		t.Fatalf("broker Open %+v, want idle-time-out %v", o, AMQPIdleTimeout)
	}
	// Heart-beats (empty frames), then the close for our silence.
	beats := 0
	for {
		f, err := r.TryRead(wait)
		if err != nil {
			t.Fatalf("read: %v (after %d heart-beats)", err, beats)
		}
		if f.Body == nil {
			beats++
			continue
		}
		c, ok := f.Body.(*wire.Close)
		if !ok {
			t.Fatalf("got %T, want heart-beats and Close", f.Body)
		}
		if c.Error == nil || c.Error.Condition != wire.ErrCondResourceLimitExceeded {
			t.Fatalf("Close %+v, want resource-limit-exceeded (local-idle-timeout expired)", c.Error)
		}
		t.Observe("close", "%s after heart-beats", c.Error.Condition)
		break
	}
	if beats == 0 {
		t.Fatal("no heart-beat before the idle close")
	}
}

func init() {
	register(
		Case{Name: "mqtt/topics/wildcards", Needs: []string{MQTT}, Run: mqttWildcards,
			Pins:   "+ matches exactly one topic level, # any number of them",
			Source: "[MQTT-4.7.1-2], [MQTT-4.7.1-3]; MQTTProtocolConverter.convertMQTTToActiveMQ (+ is *, # is >)"},
		Case{Name: "mqtt/topics/dollar-published", Needs: []string{MQTTDollar}, Run: mqttDollarPublished, Config: cfgMQTTDollar,
			Pins:      "with publishDollarTopics=true a $-topic PUBLISH reaches its subscribers, and those of a filter starting with a wildcard",
			Source:    "MQTTProtocolConverter.onMQTTPublish (publishDollarTopics), MQTTProtocolSupport.convertMQTTToActiveMQ (+ is *)",
			Deviation: "Wharf does not match a $-topic with a filter that starts with + or # ([MQTT-4.7.2-1]); ActiveMQ does (+ is JMS's *, # is >)"},
		Case{Name: "mqtt/connect/packet-too-large", Needs: []string{MQTTSmall}, Run: mqttPacketTooLarge, Config: cfgMQTTSmall,
			Pins:   "a packet over wireFormat.maxFrameSize closes its connection (MQTT 5: CONNACK Maximum Packet Size, DISCONNECT 0x95); others live on",
			Source: "MQTTWireFormat (maxFrameSize); MQTT 5.0 §3.2.2.3.6, [MQTT-3.2.2-15]"},
		Case{Name: "amqp/connection/idle-timeout", Needs: []string{AMQPIdle}, Run: amqpIdleTimeout, Config: cfgAMQPIdle,
			Pins:   "Open carries the connector's idle-time-out; empty frames keep the client's; a silent client is closed with resource-limit-exceeded",
			Source: "AMQP 1.0 §2.4.5; AmqpWireFormat.idleTimeout, Proton's transport tick"},
	)
}
