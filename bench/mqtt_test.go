package bench

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"wharf/bench/internal/mosquitto"
)

// mosquittoURL starts a Mosquitto on loopback for the test and returns its
// mqtt:// URL and pid; the test skips when Mosquitto is not installed.
func mosquittoURL(t *testing.T) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Unbounded per-client queues: Mosquitto's default drops QoS 1 and 2
	// messages beyond 1000 queued for a subscriber, which a run counts as
	// lost.
	b, err := mosquitto.Start(ctx, t.TempDir(), "max_queued_messages 0")
	if errors.Is(err, mosquitto.ErrNotInstalled) {
		t.Skipf("no Mosquitto to test the MQTT driver against: %s", mosquitto.InstallHint)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Stop(); err != nil {
			t.Error(err)
		}
	})
	return "mqtt://" + b.Addr, b.PID
}

// TestMQTTScenarios runs the scenarios MQTT has against Mosquitto, at each
// QoS, and checks counts, the exactly-once verdict and the JSON report.
// This is the MQTT smoke test of `make test`.
func TestMQTTScenarios(t *testing.T) {
	url, pid := mosquittoURL(t)
	testMQTTScenarios(t, url, pid)
}

// TestMQTTScenariosWharf runs the same against an in-process Wharf, when
// this build serves MQTT.
func TestMQTTScenariosWharf(t *testing.T) {
	url := benchURLs(t)[ProtocolMQTT]
	if url == "" {
		t.Skip("this build of Wharf has no MQTT listener")
	}
	testMQTTScenarios(t, url, os.Getpid())
}

func testMQTTScenarios(t *testing.T, url string, pid int) {
	cases := []struct {
		name string
		set  func(*Config)
	}{
		{"topic fan-out to three subscribers at QoS 0", func(c *Config) {
			c.Scenario, c.Subscribers, c.QoS = ScenarioTopic, 3, 0
		}},
		{"topic fan-out at QoS 1 from two publishers", func(c *Config) {
			c.Scenario, c.Subscribers, c.Producers, c.QoS = ScenarioTopic, 3, 2, 1
		}},
		{"topic fan-out at QoS 2, sync sends, client ack", func(c *Config) {
			yes := true
			c.Scenario, c.Subscribers, c.QoS, c.Sync, c.Ack = ScenarioTopic, 2, 2, &yes, AckClient
		}},
		{"topic at QoS 1, open loop, persistent sessions", func(c *Config) {
			c.Scenario, c.Subscribers, c.QoS, c.Rate, c.CleanSession = ScenarioTopic, 2, 1, 3000, false
		}},
		{"request and reply from two requesters", func(c *Config) {
			c.Scenario, c.Producers, c.Consumers, c.Count = ScenarioReqReply, 2, 1, 100
		}},
		{"request and reply at QoS 0, open loop", func(c *Config) {
			c.Scenario, c.Producers, c.QoS, c.Count, c.Rate = ScenarioReqReply, 2, 0, 100, 2000
		}},
		{"connection storm", func(c *Config) {
			c.Scenario, c.Connections, c.Hold = ScenarioConnections, 50, 10*time.Millisecond
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL = url
			cfg.Count = 300
			cfg.Drain = 2 * time.Second
			cfg.BrokerPID = pid
			tc.set(&cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := Run(ctx, cfg, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Protocol != ProtocolMQTT || res.Config.QoS == nil || *res.Config.QoS != cfg.QoS {
				t.Errorf("protocol %q, QoS %v; want mqtt and QoS %d in the result", res.Protocol, res.Config.QoS, cfg.QoS)
			}
			checkResult(t, &cfg, res)
		})
	}
}

// TestMQTTValidate: what MQTT has no counterpart for is refused with a
// message that says why and what to use instead.
func TestMQTTValidate(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Config)
		want string
	}{
		{"queue scenario", func(c *Config) {}, "MQTT has only topics"},
		{"transactions", func(c *Config) { c.Scenario, c.TxSize = ScenarioTopic, 10 }, "MQTT has no transactions"},
		{"prefetch", func(c *Config) { c.Scenario, c.Prefetch = ScenarioTopic, 10 }, "no prefetch"},
		{"persistent", func(c *Config) { c.Scenario, c.Persistent = ScenarioTopic, true }, "--qos 1 or 2"},
		{"several responders", func(c *Config) { c.Scenario, c.Consumers = ScenarioReqReply, 2 }, "use --consumers 1"},
		{"QoS 3", func(c *Config) { c.Scenario, c.QoS = ScenarioTopic, 3 }, "--qos 3: want 0, 1 or 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL, cfg.Count = "mqtt://127.0.0.1:1883", 10
			tc.set(&cfg)
			err := cfg.Validate()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}
	cfg := DefaultConfig()
	cfg.URL, cfg.Count, cfg.Scenario = "mqtt://127.0.0.1:1883", 10, ScenarioTopic
	if err := cfg.Validate(); err != nil {
		t.Errorf("a topic run over MQTT: %v, want it valid", err)
	}
	if cfg.SyncSends() {
		t.Errorf("SyncSends() over MQTT = true, want asynchronous sends by default")
	}
}
