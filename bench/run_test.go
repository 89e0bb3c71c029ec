package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
)

// benchURLs starts an in-process Wharf and returns its URL per protocol.
func benchURLs(t *testing.T) map[Protocol]string {
	t.Helper()
	b := brokertest.Start(t, wiring.Factories())
	urls := map[Protocol]string{
		ProtocolSTOMP:    "stomp://" + b.STOMPAddr(),
		ProtocolOpenWire: "tcp://" + b.Addr("openwire").String(),
	}
	if a := b.MQTTAddr(); a != "" {
		urls[ProtocolMQTT] = "mqtt://" + a
	}
	return urls
}

// TestBenchScenarios runs every scenario for a few hundred messages over
// both protocols against an in-process Wharf and checks the counts, the
// exactly-once verdict and the JSON report. No timing is asserted.
func TestBenchScenarios(t *testing.T) {
	urls := benchURLs(t)
	cases := []struct {
		name string
		set  func(*Config)
	}{
		{"queue with two producers and two consumers", func(c *Config) {
			c.Producers, c.Consumers = 2, 2
		}},
		{"topic fan-out to three subscribers", func(c *Config) {
			c.Scenario, c.Subscribers = ScenarioTopic, 3
		}},
		{"request and reply", func(c *Config) {
			c.Scenario, c.Producers, c.Consumers, c.Count = ScenarioReqReply, 2, 2, 100
		}},
		{"request and reply, transacted every 5, open loop", func(c *Config) {
			c.Scenario, c.Producers, c.Consumers, c.Count, c.TxSize, c.Rate = ScenarioReqReply, 2, 2, 100, 5, 2000
		}},
		{"persistent queue, transacted every 7, prefetch 10", func(c *Config) {
			c.Persistent, c.TxSize, c.Prefetch = true, 7, 10
		}},
		{"client ack, open loop", func(c *Config) {
			c.Ack, c.Rate, c.Producers = AckClient, 4000, 2
		}},
		{"individual ack, sync sends, small messages", func(c *Config) {
			yes := true
			c.Ack, c.Sync, c.Size, c.Consumers = AckIndividual, &yes, StampBytes, 3
		}},
		{"connection storm", func(c *Config) {
			c.Scenario, c.Connections, c.Hold = ScenarioConnections, 20, 10*time.Millisecond
		}},
	}
	for _, proto := range []Protocol{ProtocolSTOMP, ProtocolOpenWire} {
		for _, tc := range cases {
			t.Run(string(proto)+"/"+tc.name, func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.URL = urls[proto]
				cfg.Count = 300
				cfg.Drain = 2 * time.Second
				cfg.BrokerPID = os.Getpid() // the broker is in this process
				tc.set(&cfg)
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := Run(ctx, cfg, RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				checkResult(t, &cfg, res)
			})
		}
	}
}

func checkResult(t *testing.T, cfg *Config, res *Result) {
	t.Helper()
	var text bytes.Buffer
	res.WriteText(&text)
	defer func() {
		if t.Failed() {
			t.Logf("summary:\n%s", text.String())
		}
	}()
	if res.Errors != 0 {
		t.Errorf("errors = %d (%q), want 0", res.Errors, res.ErrorSamples)
	}
	if res.Broker == nil || res.Broker.RSSMaxBytes <= 0 || res.Broker.Samples < 2 {
		t.Errorf("broker stats = %+v, want RSS and at least two samples", res.Broker)
	}
	if cfg.Scenario == ScenarioConnections {
		cs := res.Connections
		if cs == nil || cs.Opened != int64(cfg.Connections) || cs.Failed != 0 || cs.Dropped != 0 {
			t.Fatalf("connections = %+v, want %d opened, none failed or dropped", cs, cfg.Connections)
		}
		if res.Latency.Count != int64(cfg.Connections) {
			t.Errorf("connect latency samples = %d, want %d", res.Latency.Count, cfg.Connections)
		}
	} else {
		if res.Sent != cfg.Count {
			t.Errorf("sent = %d, want %d", res.Sent, cfg.Count)
		}
		if want := cfg.Count * cfg.fanOut(); res.Expected != want || res.Received != want {
			t.Errorf("received = %d, expected = %d, want both %d (sent x fan-out %d)", res.Received, res.Expected, want, cfg.fanOut())
		}
		if res.Lost != 0 || res.Duplicates != 0 || res.OutOfOrder != 0 || res.Foreign != 0 {
			t.Errorf("lost %d, duplicates %d, out of order %d, foreign %d; want none",
				res.Lost, res.Duplicates, res.OutOfOrder, res.Foreign)
		}
		if res.Latency.Count != res.Received || res.Latency.P50 <= 0 || res.Latency.Max < res.Latency.P99 {
			t.Errorf("latency = %+v, want one sample per delivery, ordered percentiles", res.Latency)
		}
		if !strings.Contains(text.String(), "every message exactly once") {
			t.Errorf("summary does not state the exactly-once verdict")
		}
	}
	if !res.OK() {
		t.Errorf("OK() = false")
	}

	// The JSON form: one object with the documented fields.
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("JSON does not parse: %v\n%s", err, b)
	}
	for _, k := range []string{"scenario", "protocol", "url", "config", "sent", "received", "expected",
		"send_rate", "receive_rate", "latency_us", "errors", "lost", "duplicates", "out_of_order", "broker"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	lat, _ := m["latency_us"].(map[string]any)
	for _, k := range []string{"p50", "p90", "p99", "p99_9", "max", "count"} {
		if _, ok := lat[k].(float64); !ok {
			t.Errorf("JSON latency_us lacks %q: %v", k, lat)
		}
	}
	broker, _ := m["broker"].(map[string]any)
	for _, k := range []string{"rss_max_bytes", "cpu_s", "cpu_percent"} {
		if _, ok := broker[k].(float64); !ok {
			t.Errorf("JSON broker lacks %q: %v", k, broker)
		}
	}
	if cfg.Scenario == ScenarioConnections {
		if _, ok := m["connections"].(map[string]any); !ok {
			t.Errorf("JSON lacks connections: %s", b)
		}
	}
}

// TestBenchNoBroker: a run against a port nobody listens on fails at once
// with ErrConnect, naming the URL.
func TestBenchNoBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, url := range []string{"stomp://" + addr, "tcp://" + addr, "mqtt://" + addr} {
		cfg := DefaultConfig()
		cfg.URL, cfg.Count = url, 10
		if strings.HasPrefix(url, "mqtt") {
			cfg.Scenario = ScenarioTopic
		}
		start := time.Now()
		_, err := Run(context.Background(), cfg, RunOptions{})
		if !errors.Is(err, ErrConnect) || !strings.Contains(err.Error(), url) {
			t.Errorf("%s: err = %v, want ErrConnect naming the URL", url, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: failed after %v, want within a second", url, d)
		}
	}
}

// TestBenchDurationBound: a run bounded by time alone stops by itself and
// still accounts for every message.
func TestBenchDurationBound(t *testing.T) {
	urls := benchURLs(t)
	cfg := DefaultConfig()
	cfg.URL = urls[ProtocolSTOMP]
	cfg.Duration, cfg.Rate = 200*time.Millisecond, 1000
	var progress bytes.Buffer
	res, err := Run(context.Background(), cfg, RunOptions{Progress: &progress, ProgressInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Sent < 150 || res.Sent > 200 {
		t.Errorf("sent %d in 200ms at 1000/s, want about 200", res.Sent)
	}
	if res.Received != res.Sent || res.Lost != 0 {
		t.Errorf("received %d of %d, lost %d", res.Received, res.Sent, res.Lost)
	}
	if !strings.Contains(progress.String(), "sent ") || !strings.HasSuffix(progress.String(), "\r\x1b[K") {
		t.Errorf("progress output %q: want live lines, cleared at the end", progress.String())
	}
}

// TestBenchReportsLoss: a stranger consuming from the run's queue takes
// messages the run's consumers never see; the run must count them lost
// and fail its verdict, not hang or report success.
func TestBenchReportsLoss(t *testing.T) {
	urls := benchURLs(t)
	tg, _ := ParseURL(urls[ProtocolOpenWire])
	ctx := context.Background()
	thief, err := dialOpenWire(ctx, tg, nil, time.Second, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer thief.close()
	cfg := DefaultConfig()
	cfg.URL, cfg.Count, cfg.Drain = urls[ProtocolOpenWire], 200, 300*time.Millisecond
	cfg.Destination = "bench.loss." + t.Name()
	cfg.Prefetch = 1 // so that the broker shares the queue between both
	if _, err := thief.subscribe(ctx, dest{name: cfg.Destination}, subOptions{ack: AckAuto, prefetch: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := Run(ctx, cfg, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost == 0 || res.Received+res.Lost != res.Sent || res.OK() {
		t.Errorf("sent %d, received %d, lost %d, OK %v; want the stolen ones lost and the run failed",
			res.Sent, res.Received, res.Lost, res.OK())
	}
}
