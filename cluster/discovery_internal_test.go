package cluster

import "testing"

// The datagram is MulticastDiscoveryAgent's (ActiveMQ 5.17
// doAdvertizeSelf/processData): group, "ActiveMQ-4.", alive. or dead.,
// %localhost%, the service URI.
func TestDiscoveryAdvertisementFormat(t *testing.T) {
	got := string(advertisement("default", "tcp://10.0.0.1:61616", true))
	if want := "default.ActiveMQ-4.alive.%localhost%tcp://10.0.0.1:61616"; got != want {
		t.Fatalf("alive datagram %q, want %q", got, want)
	}
	if got := string(advertisement("g", "tcp://h:1", false)); got != "g.ActiveMQ-4.dead.%localhost%tcp://h:1" {
		t.Fatalf("dead datagram %q", got)
	}
	cases := []struct {
		group, in, service string
		alive, ok          bool
	}{
		{"default", "default.ActiveMQ-4.alive.%localhost%tcp://h:61616", "tcp://h:61616", true, true},
		{"default", "default.ActiveMQ-4.dead.%broker1%tcp://h:61616", "tcp://h:61616", false, true},
		{"default", "other.ActiveMQ-4.alive.%localhost%tcp://h:61616", "", false, false},
		{"def", "default.ActiveMQ-4.alive.%localhost%tcp://h:61616", "", false, false},
		{"default", "default.ActiveMQ-4.alive.localhost%tcp://h:61616", "", false, false},
		{"default", "default.ActiveMQ-4.alive.%localhost%", "", false, false},
		{"default", "default.ActiveMQ-4.sick.%localhost%tcp://h:1", "", false, false},
	}
	for _, c := range cases {
		service, alive, ok := parseAdvertisement(c.group, []byte(c.in))
		if service != c.service || alive != c.alive || ok != c.ok {
			t.Errorf("parse(%q, %q) = %q %v %v, want %q %v %v", c.group, c.in, service, alive, ok, c.service, c.alive, c.ok)
		}
	}
	if _, err := serviceAddr("stomp://h:61613"); err == nil {
		t.Error("a stomp:// service was accepted for a bridge")
	}
	if a, err := serviceAddr("tcp://h:61616"); err != nil || a != "h:61616" {
		t.Errorf("serviceAddr = %q %v", a, err)
	}
}
