package wire

import (
	"errors"
	"strings"
	"testing"
)

func TestMQTTWireValidTopicName(t *testing.T) {
	check := func(s, wantTag string) {
		t.Helper()
		err := ValidTopicName(s)
		switch {
		case wantTag == "" && err != nil:
			t.Errorf("ValidTopicName(%.40q) = %v, want nil", s, err)
		case wantTag != "" && (!errors.Is(err, ErrTopicNameInvalid) || !strings.Contains(err.Error(), wantTag)):
			t.Errorf("ValidTopicName(%.40q) = %v, want ErrTopicNameInvalid with %s", s, err, wantTag)
		}
	}
	check("a", "")
	check("a/b/c", "")
	check("/", "")
	check("//", "")
	check("$SYS/broker", "")
	check("a b/ü/🥬", "")
	check(strings.Repeat("x", 65535), "")
	check("", "[MQTT-4.7.3-1]")
	check(strings.Repeat("x", 65536), "[MQTT-4.7.3-3]")
	check("a/+", "[MQTT-3.3.2-2]")
	check("a#", "[MQTT-3.3.2-2]")
	check("a\x00", "[MQTT-4.7.3-2]")
	check("a\xff", "[MQTT-1.5.4-1]")
	if ReasonFor(ValidTopicName("")) != ReasonTopicNameInvalid {
		t.Error("ValidTopicName error does not carry reason 0x90")
	}
}

func TestMQTTWireValidTopicFilter(t *testing.T) {
	check := func(s, wantTag string) {
		t.Helper()
		err := ValidTopicFilter(s)
		switch {
		case wantTag == "" && err != nil:
			t.Errorf("ValidTopicFilter(%.40q) = %v, want nil", s, err)
		case wantTag != "" && (!errors.Is(err, ErrTopicFilterInvalid) || !strings.Contains(err.Error(), wantTag)):
			t.Errorf("ValidTopicFilter(%.40q) = %v, want ErrTopicFilterInvalid with %s", s, err, wantTag)
		}
	}
	for _, ok := range []string{"a", "a/b", "#", "+", "+/+", "/+", "+/", "a/#", "/#", "a/+/c", "+/tennis/#", "sport/+/player1",
		"$SYS/#", "$share/g/a/#", "//", "/", "a//b"} {
		check(ok, "")
	}
	for _, bad := range []string{"a#", "#/a", "a/#/b", "a/b#", "##", "a/#/"} {
		check(bad, "[MQTT-4.7.1-2]")
	}
	for _, bad := range []string{"a+", "+a", "a/b+/c", "++", "sport+"} {
		check(bad, "[MQTT-4.7.1-3]")
	}
	check("", "[MQTT-4.7.3-1]")
	check(strings.Repeat("x", 65536), "[MQTT-4.7.3-3]")
	check("a/\x00", "[MQTT-4.7.3-2]")
	check("\xed\xa0\x80", "[MQTT-1.5.4-1]")
	if ReasonFor(ValidTopicFilter("a+")) != ReasonTopicFilterInvalid {
		t.Error("ValidTopicFilter error does not carry reason 0x8F")
	}
}

func TestMQTTWireParseShared(t *testing.T) {
	check := func(s, group, filter string, ok bool, wantTag string) {
		t.Helper()
		g, f, k, err := ParseShared(s)
		if wantTag != "" {
			if !k || !errors.Is(err, ErrTopicFilterInvalid) || !strings.Contains(err.Error(), wantTag) {
				t.Errorf("ParseShared(%q) = %q, %q, %v, %v; want a shared filter error with %s", s, g, f, k, err, wantTag)
			}
			return
		}
		if g != group || f != filter || k != ok || err != nil {
			t.Errorf("ParseShared(%q) = %q, %q, %v, %v; want %q, %q, %v, nil", s, g, f, k, err, group, filter, ok)
		}
	}
	check("a/b", "", "a/b", false, "")
	check("$share", "", "$share", false, "")
	check("$sharex/g/a", "", "$sharex/g/a", false, "")
	check("$SHARE/g/a", "", "$SHARE/g/a", false, "")
	check("$share/g/a/#", "g", "a/#", true, "")
	check("$share/consumer-1/+", "consumer-1", "+", true, "")
	check("$share/g//", "g", "/", true, "")
	check("$share//a", "", "", true, "[MQTT-4.8.2-1]")
	check("$share/g", "", "", true, "[MQTT-4.8.2-2]")
	check("$share/g/", "", "", true, "[MQTT-4.7.3-1]")
	check("$share/g+/a", "", "", true, "[MQTT-4.8.2-2]")
	check("$share/#/a", "", "", true, "[MQTT-4.8.2-2]")
	check("$share/g/a#", "", "", true, "[MQTT-4.7.1-2]")
}
