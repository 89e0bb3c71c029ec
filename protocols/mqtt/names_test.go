package mqtt

import (
	"testing"

	"wharf/engine/message"
	"wharf/protocols/internal/conntest"
	"wharf/protocols/mqtt/wire"
)

// ActiveMQ 5.17 published this map (sent by a JMS producer that put name
// before count) as {name=x, count=42, big=..., ok=true, tiny=1.0E-5,
// ratio=1.5}: java.util.HashMap bucket order. name and count share a
// bucket; without the wire order Wharf puts them in key order.
func TestMQTTJavaMapString(t *testing.T) {
	m := message.Properties{
		{Name: "big", Value: message.LongValue(10000000000)},
		{Name: "count", Value: message.IntValue(42)},
		{Name: "name", Value: message.StringValue("x")},
		{Name: "ok", Value: message.BoolValue(true)},
		{Name: "ratio", Value: message.DoubleValue(1.5)},
		{Name: "tiny", Value: message.DoubleValue(1e-5)},
	}
	got := string(javaMapString(m))
	want := "{count=42, name=x, big=10000000000, ok=true, tiny=1.0E-5, ratio=1.5}"
	if got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	if got := javaStringHash("name"); got != 3373707 {
		t.Fatalf("hash(name) = %d, want 3373707", got)
	}
}

func TestMQTTConvertNameIsItsOwnInverse(t *testing.T) {
	for _, s := range []string{"a/b/+", "a/#", "x.y*z>", ""} {
		if got := convertName(convertName(s)); got != s {
			t.Fatalf("convertName twice of %q = %q", s, got)
		}
	}
	if got := convertName("sensors/+/temp"); got != "sensors.*.temp" {
		t.Fatalf("got %q", got)
	}
}

// The topic caches give what topicFor and mqttTopic give, for topics that
// repeat and topics that change, with and without the virtual-topic
// strategy, and a repeated topic costs no allocation.
func TestMQTTTopicCaches(t *testing.T) {
	topics := []string{"a/b", "a/b", "a.b", "plain", "plain", "a/b", "x/+/y", "VirtualTopic.v/w", "v/w", "$SYS/x", "a/b", "a//b", "#", "a/b"}
	for _, virtual := range []bool{false, true} {
		o := DefaultOptions()
		o.VirtualTopics = virtual
		_, srv := newMQTTServer(t, o)
		s := dialMQTT(t, srv, wire.Version311).s
		for i, topic := range topics {
			if got, want := s.publishDest(topic), s.topicFor(topic); got != want {
				t.Fatalf("virtual %v, publish %d %q: %v, want %v", virtual, i, topic, got, want)
			}
			d := s.topicFor(topic)
			if got, want := s.deliveryTopic(d, message.Destination{}), s.mqttTopic(d, message.Destination{}); got != want {
				t.Fatalf("virtual %v, delivery %d from %q: %q, want %q", virtual, i, d.Name, got, want)
			}
			q := message.QueueDest("Consumer.c:AT_LEAST_ONCE." + d.Name)
			if got, want := s.deliveryTopic(q, d), s.mqttTopic(q, d); got != want {
				t.Fatalf("virtual %v, delivery %d from a queue fed by %q: %q, want %q", virtual, i, d.Name, got, want)
			}
		}
		d := s.topicFor("sensors/1/temp")
		if n := testing.AllocsPerRun(100, func() {
			s.publishDest("sensors/1/temp")
			s.deliveryTopic(d, message.Destination{})
		}); n != 0 {
			t.Errorf("virtual %v: %v allocations for a repeated topic, want 0", virtual, n)
		}
	}
}

// BenchmarkTopicCache is a repeated topic's conversion both ways (a
// publisher's PUBLISH to the engine's name, a delivery back): no
// allocation once cached; convertName alone allocates for each.
func BenchmarkTopicCache(b *testing.B) {
	srv := NewServer(conntest.Engine(b), DefaultOptions())
	s := srv.Handler(&conntest.Conn{}).(*session)
	d := s.topicFor("sensors/1/temp")
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			s.publishDest("sensors/1/temp")
			s.deliveryTopic(d, message.Destination{})
		}
	})
	b.Run("convertName", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = convertName("sensors/1/temp")
			_ = convertName(d.Name)
		}
	})
}
