package mqtt

import (
	"testing"

	"wharf/engine/message"
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
