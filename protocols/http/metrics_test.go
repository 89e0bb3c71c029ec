package http_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"wharf/engine"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
)

// scrape reads /metrics and parses it.
func scrape(t testing.TB, s *httpserver.Server) (string, map[string]*dto.MetricFamily) {
	t.Helper()
	code, _, body := request(t, http.DefaultClient, "GET", url(s, "/metrics"), "", "")
	if code != 200 {
		t.Fatalf("GET /metrics: %d %q", code, body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return body, fams
}

// value is the value of the series of family name with the labels (name,
// value pairs); ok is false when there is no such series.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (v float64, ok bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		}
	}
	return 0, false
}

// sinkCh hands deliveries to a channel.
type sinkCh chan engine.Delivery

func (s sinkCh) Deliver(d engine.Delivery) { s <- d }

func TestHTTPMetricsAfterTraffic(t *testing.T) {
	e := startBroker(t)
	s := startServer(t, httpserver.Options{MaxDestinationSeries: 100})
	_, fams := scrape(t, s)
	if v, ok := value(fams, "wharf_ready"); !ok || v != 0 {
		t.Errorf("wharf_ready before Ready = %v %v, want 0", v, ok)
	}
	s.Ready(e)

	p, err := e.Connect(engine.Credentials{Protocol: "stomp"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c, err := e.Connect(engine.Credentials{Protocol: "mqtt"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	orders, news := message.QueueDest("orders"), message.TopicDest("news")
	sendTo(t, p, orders, 5)
	prod := p.AddProducer(orders)
	defer p.RemoveProducer(prod)
	deliveries := make(sinkCh, 10)
	if _, err := c.Subscribe(engine.SubSpec{Destination: orders, Prefetch: 2, AckMode: engine.AckClient}, deliveries); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		<-deliveries // the prefetch is full: 2 dispatched, 3 pending
	}
	if _, err := c.Subscribe(engine.SubSpec{Destination: news, Prefetch: 10}, make(sinkCh, 10)); err != nil {
		t.Fatal(err)
	}
	sendTo(t, p, news, 1)

	body, fams := scrape(t, s)
	q := []string{"destination", "orders", "type", "queue"}
	tp := []string{"destination", "news", "type", "topic"}
	for _, want := range []struct {
		name   string
		labels []string
		v      float64
	}{
		{"wharf_ready", nil, 1},
		{"wharf_queue_messages", q, 5},
		{"wharf_destination_enqueued_total", q, 5},
		{"wharf_destination_dispatched_total", q, 2},
		{"wharf_destination_inflight_messages", q, 2},
		{"wharf_destination_dequeued_total", q, 0},
		{"wharf_destination_consumers", q, 1},
		{"wharf_destination_producers", q, 1},
		{"wharf_destination_blocked_sends_total", q, 0},
		{"wharf_destination_enqueued_total", tp, 1},
		{"wharf_destination_consumers", tp, 1},
		{"wharf_destinations", []string{"type", "queue"}, 1},
		{"wharf_connections", []string{"protocol", "stomp"}, 1},
		{"wharf_connections", []string{"protocol", "mqtt"}, 1},
		{"wharf_connections", []string{"protocol", "amqp"}, 0},
		{"wharf_connections_handshake_timeouts_total", []string{"protocol", "openwire"}, 0},
		{"wharf_metrics_destinations_omitted", nil, 0},
	} {
		if v, ok := value(fams, want.name, want.labels...); !ok || v != want.v {
			t.Errorf("%s%v = %v (present %v), want %v", want.name, want.labels, v, ok, want.v)
		}
	}
	if v, ok := value(fams, "wharf_memory_usage_bytes"); !ok || v <= 0 {
		t.Errorf("wharf_memory_usage_bytes = %v %v, want the 5 queued messages' bytes", v, ok)
	}
	if f := fams["wharf_destination_enqueued_total"]; f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("wharf_destination_enqueued_total is a %v, want a counter", f.GetType())
	}
	promtool(t, body)
}

// promtool checks an exposition with Prometheus's own linter.
func promtool(t *testing.T, body string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not found: apt-get install prometheus (make test-deps installs it)")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestHTTPMetricsSeriesCap(t *testing.T) {
	e := startBroker(t)
	logs := &logBuffer{}
	s := startServer(t, httpserver.Options{MaxDestinationSeries: 5, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s.Ready(e)
	p, err := e.Connect(engine.Credentials{Protocol: "stomp"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i := range 8 {
		sendTo(t, p, message.QueueDest(fmt.Sprintf("q.%d", i)), 1)
	}
	// A user topic is reported before the advisory topics, which
	// sort before it by name.
	small := startServer(t, httpserver.Options{MaxDestinationSeries: 9})
	small.Ready(e)
	sendTo(t, p, message.TopicDest("news"), 1)
	_, fams := scrape(t, small)
	if _, ok := value(fams, "wharf_queue_messages", "destination", "news", "type", "topic"); !ok {
		t.Errorf("topic news left out by a cap of 9 (8 queues, 1 topic), advisory topics reported instead")
	}
	for _, m := range fams["wharf_queue_messages"].GetMetric() {
		for _, l := range m.Label {
			if l.GetName() == "destination" && strings.HasPrefix(l.GetValue(), "ActiveMQ.Advisory.") {
				t.Errorf("advisory topic %s reported under a cap of 9", l.GetValue())
			}
		}
	}
	for range 2 {
		_, fams := scrape(t, s)
		var names []string
		for _, m := range fams["wharf_queue_messages"].GetMetric() {
			for _, l := range m.Label {
				if l.GetName() == "destination" {
					names = append(names, l.GetValue())
				}
			}
		}
		if want := "q.0 q.1 q.2 q.3 q.4"; strings.Join(names, " ") != want {
			t.Errorf("destinations reported %v, want the first 5 by name: %s", names, want)
		}
		if v, _ := value(fams, "wharf_destinations", "type", "queue"); v != 8 {
			t.Errorf("wharf_destinations{type=queue} = %v, want all 8", v)
		}
		// The advisory topics count too.
		total := 0.0
		for _, m := range fams["wharf_destinations"].GetMetric() {
			total += m.GetGauge().GetValue()
		}
		if v, _ := value(fams, "wharf_metrics_destinations_omitted"); v != total-5 || v < 3 {
			t.Errorf("wharf_metrics_destinations_omitted = %v, want %v (every destination but 5)", v, total-5)
		}
	}
	if n := strings.Count(logs.String(), "per-destination metrics capped"); n != 1 {
		t.Errorf("cap logged %d times over two scrapes, want once:\n%s", n, logs)
	}
	if !strings.Contains(logs.String(), "limit=5") || !strings.Contains(logs.String(), "omitted=") {
		t.Errorf("cap log does not name the limit and what it left out:\n%s", logs)
	}
}

// BenchmarkHTTPMetricsScrape10kDestinations: one GET /metrics over
// loopback with 10,000 queues, every one reported (cap=10000) or the
// default cap's 1,000 (cap=1000).
func BenchmarkHTTPMetricsScrape10kDestinations(b *testing.B) {
	const n = 10000
	e := startBroker(b)
	p, err := e.Connect(engine.Credentials{Protocol: "stomp"})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for i := range n {
		sendTo(b, p, message.QueueDest(fmt.Sprintf("bench.%05d", i)), 1)
	}
	for _, limit := range []int{n, 1000} {
		b.Run(fmt.Sprintf("cap=%d", limit), func(b *testing.B) {
			s := startServer(b, httpserver.Options{MaxDestinationSeries: limit})
			s.Ready(e)
			b.ReportAllocs()
			var size int
			for b.Loop() {
				code, _, body := request(b, http.DefaultClient, "GET", url(s, "/metrics"), "", "")
				if code != 200 {
					b.Fatalf("GET /metrics: %d", code)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "bytes/scrape")
		})
	}
}
