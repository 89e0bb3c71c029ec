package amqp

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"wharf/engine/message"
)

func TestAMQPConvertParseAddress(t *testing.T) {
	cases := []struct {
		name, addr string
		want       message.Destination
		wantErr    bool
	}{
		{"bare name is a queue", "orders", message.QueueDest("orders"), false},
		{"queue prefix", "queue://orders", message.QueueDest("orders"), false},
		{"topic prefix", "topic://prices.eu", message.TopicDest("prices.eu"), false},
		{"temp queue prefix", "temp-queue://ID:c-1:1:1", message.Destination{Type: message.TempQueue, Name: "ID:c-1:1:1"}, false},
		{"temp topic prefix", "temp-topic://ID:c-1:1:2", message.Destination{Type: message.TempTopic, Name: "ID:c-1:1:2"}, false},
		{"wildcard kept", "topic://a.*.>", message.TopicDest("a.*.>"), false},
		{"composite kept", "queue://a,topic://b", message.QueueDest("a,topic://b"), false},
		{"options cut off", "queue://orders?consumer.prefetchSize=10", message.QueueDest("orders"), false},
		{"name trimmed as Java trims", "topic:// t1 ", message.TopicDest("t1"), false},
		{"prefix is case sensitive", "Topic://x", message.QueueDest("Topic://x"), false},
		{"STOMP names are not AMQP prefixes", "/topic/x", message.QueueDest("/topic/x"), false},
		{"empty address is refused", "", message.Destination{}, true},
		{"prefix alone is refused", "queue://", message.Destination{}, true},
		{"blank name is refused", "topic://  ", message.Destination{}, true},
		{"options alone are refused", "queue://?consumer.x=1", message.Destination{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseAddress(tc.addr)
			if tc.wantErr {
				if !errors.Is(err, ErrBadAddress) {
					t.Fatalf("ParseAddress(%q) = %v, %v; want ErrBadAddress", tc.addr, got, err)
				}
				if !strings.Contains(err.Error(), `"`+tc.addr+`"`) {
					t.Errorf("error %q does not quote the address %q", err, tc.addr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseAddress(%q) = %v, %v; want %v", tc.addr, got, err, tc.want)
			}
			// The qualified name parses back to the same destination.
			if again, err := ParseAddress(FormatAddress(got)); err != nil || again != got {
				t.Errorf("ParseAddress(FormatAddress(%v)) = %v, %v", got, again, err)
			}
		})
	}
}

func TestAMQPConvertFormatAddress(t *testing.T) {
	check := func(d message.Destination, want string) {
		t.Helper()
		if got := FormatAddress(d); got != want {
			t.Errorf("FormatAddress(%v) = %q, want %q", d, got, want)
		}
	}
	check(message.QueueDest("q"), "queue://q")
	check(message.TopicDest("t"), "topic://t")
	check(message.Destination{Type: message.TempQueue, Name: "tq"}, "temp-queue://tq")
	check(message.Destination{Type: message.TempTopic, Name: "tt"}, "temp-topic://tt")
	check(message.Destination{}, "")
}

func TestAMQPConvertAddressOptions(t *testing.T) {
	cases := []struct {
		name, addr string
		want       map[string]string
		wantErr    bool
	}{
		{"no options", "queue://q", nil, false},
		{"empty query", "queue://q?", nil, false},
		{"consumer options", "queue://q?consumer.prefetchSize=10&consumer.exclusive=true",
			map[string]string{"consumer.prefetchSize": "10", "consumer.exclusive": "true"}, false},
		{"escapes decoded", "topic://t?consumer.selector=a%3D1+AND+b", map[string]string{"consumer.selector": "a=1 AND b"}, false},
		{"pair without value", "q?flag", map[string]string{"flag": ""}, false},
		{"malformed escape", "q?x=%zz", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AddressOptions(tc.addr)
			if tc.wantErr {
				if !errors.Is(err, ErrBadAddress) {
					t.Fatalf("AddressOptions(%q) = %v, %v; want ErrBadAddress", tc.addr, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("AddressOptions(%q) = %v, %v; want %v", tc.addr, got, err, tc.want)
			}
		})
	}
}
