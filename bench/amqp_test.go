package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine"
	"wharf/engine/brokertest"
)

// amqpURL starts an in-process Wharf with the given options and returns
// its amqp:// URL.
func amqpURL(t *testing.T, opts ...brokertest.Option) string {
	t.Helper()
	b := brokertest.Start(t, wiring.Factories(), opts...)
	if b.AMQPAddr() == "" {
		t.Fatal("this build of Wharf has no AMQP listener")
	}
	return "amqp://" + b.AMQPAddr()
}

// TestAMQPScenarios runs every scenario in both settlement modes against
// an in-process Wharf and checks the counts, the exactly-once verdict and
// the JSON report. No timing is asserted.
func TestAMQPScenarios(t *testing.T) {
	url := amqpURL(t)
	yes, no := true, false
	cases := []struct {
		name string
		set  func(*Config)
		// unsettledOnly: presettled runs refuse the setting, having
		// nothing to acknowledge and no outcome to wait for
		// (TestAMQPValidate).
		unsettledOnly bool
	}{
		{"queue with two producers and two consumers", func(c *Config) {
			c.Producers, c.Consumers = 2, 2
		}, false},
		{"queue, more sends than outcomes in flight", func(c *Config) {
			// Past amqpMaxInFlight unsettled sends wait for the oldest
			// outcome; presettled ones never wait.
			c.Count = 3 * amqpMaxInFlight
		}, false},
		{"topic fan-out to three subscribers", func(c *Config) {
			c.Scenario, c.Subscribers = ScenarioTopic, 3
		}, false},
		{"topic from two publishers, open loop", func(c *Config) {
			c.Scenario, c.Subscribers, c.Producers, c.Rate = ScenarioTopic, 2, 2, 4000
		}, false},
		{"request and reply", func(c *Config) {
			c.Scenario, c.Producers, c.Consumers, c.Count = ScenarioReqReply, 2, 2, 100
		}, false},
		{"request and reply, open loop", func(c *Config) {
			c.Scenario, c.Producers, c.Consumers, c.Count, c.Rate = ScenarioReqReply, 2, 1, 100, 2000
		}, false},
		{"persistent queue, prefetch 10", func(c *Config) {
			c.Persistent, c.Prefetch = true, 10
		}, false},
		// With a credit of 1 the run goes on only if each delivery is
		// settled: accepted (unsettled) or sent settled (presettled;
		// go-amqp tops the credit up as settled messages are received).
		{"persistent queue, asynchronous sends, prefetch 1", func(c *Config) {
			c.Persistent, c.Sync, c.Prefetch, c.Consumers = true, &no, 1, 2
		}, false},
		{"connection storm", func(c *Config) {
			c.Scenario, c.Connections, c.Hold = ScenarioConnections, 30, 10*time.Millisecond
		}, false},
		{"client ack, open loop", func(c *Config) {
			c.Ack, c.Rate, c.Producers = AckClient, 4000, 2
		}, true},
		{"individual ack, sync sends, small messages", func(c *Config) {
			c.Ack, c.Sync, c.Size, c.Consumers = AckIndividual, &yes, StampBytes, 3
		}, true},
	}
	for _, settle := range []Settlement{SettleUnsettled, SettlePresettled} {
		for _, tc := range cases {
			if tc.unsettledOnly && settle == SettlePresettled {
				continue
			}
			t.Run(string(settle)+"/"+tc.name, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.URL = url
				cfg.Count = 300
				cfg.Drain = 2 * time.Second
				cfg.BrokerPID = os.Getpid() // the broker is in this process
				cfg.Settle = settle
				tc.set(&cfg)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := Run(ctx, cfg, RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if res.Protocol != ProtocolAMQP {
					t.Errorf("protocol %q, want amqp", res.Protocol)
				}
				if cfg.Scenario != ScenarioConnections {
					if want := cfg.SyncSends(); res.Config.Sync != want {
						t.Errorf("result says sync %v, want %v", res.Config.Sync, want)
					}
					if settle == SettlePresettled && res.Config.Sync {
						t.Errorf("result says sync for a presettled run, which has nothing to wait for")
					}
				}
				checkResult(t, &cfg, res)
			})
		}
	}
}

// TestAMQPSASL: with a user in the URL the run logs in with SASL PLAIN;
// without, it offers ANONYMOUS, which a broker with users refuses, and the
// run fails at once naming the URL.
func TestAMQPSASL(t *testing.T) {
	url := amqpURL(t, brokertest.WithEngine(func(o *engine.Options) {
		o.Authenticator = benchPasswords{"bench": "s3cret"}
	}))
	host := strings.TrimPrefix(url, "amqp://")
	cases := []struct {
		name, url string
		ok        bool
	}{
		{"PLAIN with the right password", "amqp://bench:s3cret@" + host, true},
		{"PLAIN with a wrong password", "amqp://bench:wrong@" + host, false},
		{"ANONYMOUS", url, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL, cfg.Count, cfg.Drain = tc.url, 50, 2*time.Second
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := Run(ctx, cfg, RunOptions{})
			if !tc.ok {
				if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), tc.url) {
					t.Errorf("err = %v, want ErrConnect naming %s", err, tc.url)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() || res.Received != 50 {
				t.Errorf("received %d of 50, OK %v (%q)", res.Received, res.OK(), res.ErrorSamples)
			}
		})
	}
}

type benchPasswords map[string]string

func (p benchPasswords) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	if pw, ok := p[c.Username]; !ok || pw != c.Password {
		return nil, fmt.Errorf("%w: user %q", engine.ErrBadCredentials, c.Username)
	}
	return &engine.Subject{User: c.Username}, nil
}

// TestAMQPNoBroker: a run against a port nobody listens on fails within a
// second with ErrConnect, naming the URL, as the other protocols do
// (TestBenchNoBroker).
func TestAMQPNoBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, url := range []string{"amqp://" + addr, "amqp://user:pass@" + addr} {
		cfg := DefaultConfig()
		cfg.URL, cfg.Count = url, 10
		start := time.Now()
		_, err := Run(context.Background(), cfg, RunOptions{})
		if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), url) {
			t.Errorf("%s: err = %v, want ErrConnect naming the URL", url, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: failed after %v, want within a second", url, d)
		}
	}
}

// TestAMQPValidate: what the AMQP driver has no counterpart for is
// refused with a message that says why and what to use instead.
func TestAMQPValidate(t *testing.T) {
	yes := true
	cases := []struct {
		name string
		url  string
		set  func(*Config)
		want string
	}{
		{"transactions", "", func(c *Config) { c.TxSize = 10 }, "no transactions"},
		{"presettled with client ack", "", func(c *Config) { c.Settle, c.Ack = SettlePresettled, AckClient }, "nothing to acknowledge"},
		{"presettled with sync sends", "", func(c *Config) { c.Settle, c.Sync = SettlePresettled, &yes }, "no outcome to wait for"},
		{"unknown settlement", "", func(c *Config) { c.Settle = "second" }, `--settle "second": want unsettled or presettled`},
		{"credit beyond int32", "", func(c *Config) { c.Prefetch = 1 << 31 }, "link credit is at most"},
		{"presettled over STOMP", "stomp://127.0.0.1:61613", func(c *Config) { c.Settle = SettlePresettled }, "only AMQP has settlement modes"},
		{"unknown addressing", "", func(c *Config) { c.AMQPAddresses = "qpid" }, `--amqp-addresses "qpid": want activemq`},
		{"RabbitMQ addresses over MQTT", "mqtt://127.0.0.1:1883", func(c *Config) { c.AMQPAddresses = AMQPRabbitMQ }, "only AMQP URLs take it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.URL, cfg.Count = "amqp://127.0.0.1:5672", 10
			if tc.url != "" {
				cfg.URL = tc.url
			}
			tc.set(&cfg)
			err := cfg.Validate()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want ErrConfig saying %q", err, tc.want)
			}
		})
	}

	for _, u := range []string{"amqp://127.0.0.1:5672", "amqp+nio://admin:pw@127.0.0.1:5672"} {
		tg, err := ParseURL(u)
		if err != nil || tg.Protocol != ProtocolAMQP || tg.Addr != "127.0.0.1:5672" {
			t.Errorf("ParseURL(%q) = %+v, %v; want amqp at 127.0.0.1:5672", u, tg, err)
		}
	}
	cfg := DefaultConfig()
	cfg.URL, cfg.Count, cfg.Settle, cfg.Persistent = "amqp://127.0.0.1:5672", 10, SettlePresettled, true
	if err := cfg.Validate(); err != nil {
		t.Errorf("a persistent presettled run: %v, want it valid", err)
	}
	cfg.AMQPAddresses = AMQPRabbitMQ
	if err := cfg.Validate(); err != nil {
		t.Errorf("a run with RabbitMQ's addresses: %v, want it valid", err)
	}
	if cfg.SyncSends() {
		t.Errorf("SyncSends() presettled and persistent = true, want false: nothing comes back to wait for")
	}
	cfg.Settle = SettleUnsettled
	if !cfg.SyncSends() {
		t.Errorf("SyncSends() unsettled and persistent = false, want true, as for the other protocols")
	}
}

// TestAMQPAddress: the run's destinations as ActiveMQ AMQP addresses, and
// reply-to addresses back.
func TestAMQPAddress(t *testing.T) {
	check := func(in string, want dest) {
		t.Helper()
		if got := parseAMQPAddress(in); got != want {
			t.Errorf("parseAMQPAddress(%q) = %+v, want %+v", in, got, want)
		}
	}
	check("queue://a.b", dest{name: "a.b"})
	check("topic://a.b", dest{name: "a.b", topic: true})
	check("temp-queue://ID:x-1", dest{name: "ID:x-1"})
	check("temp-topic://ID:x-2", dest{name: "ID:x-2", topic: true})
	check("plain", dest{name: "plain"})
	check("/queue/a.b", dest{name: "a.b"})
	check("/topic/a.b", dest{name: "a.b", topic: true})
	for _, d := range []dest{{name: "q"}, {name: "t", topic: true}} {
		if got := parseAMQPAddress(amqpAddress(d)); got != d {
			t.Errorf("round trip of %+v through %q = %+v", d, amqpAddress(d), got)
		}
		// RabbitMQ's addresses (--amqp-addresses rabbitmq).
		r := amqpOptions{rabbitMQ: true}
		if a := r.address(d); a[0] != '/' || parseAMQPAddress(a) != d {
			t.Errorf("RabbitMQ address of %+v = %q, read back as %+v", d, a, parseAMQPAddress(a))
		}
		if a := (amqpOptions{}).address(d); a != amqpAddress(d) {
			t.Errorf("default address of %+v = %q, want ActiveMQ's %q", d, a, amqpAddress(d))
		}
	}
	if got := (amqpOptions{rabbitMQ: true}).address(dest{name: "x", topic: true}); got != "/topic/x" {
		t.Errorf("RabbitMQ topic address = %q, want /topic/x", got)
	}
}
