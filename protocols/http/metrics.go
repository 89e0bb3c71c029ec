package http

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"wharf/engine"
	"wharf/engine/message"
)

// metricsHandler serves /metrics: the broker's collector, the journal's
// histograms when the store has them, and the Go runtime's and process's
// standard metrics, in a registry of the server's own (no global state).
func (s *Server) metricsHandler() (http.Handler, error) {
	reg := prometheus.NewRegistry()
	cs := []prometheus.Collector{
		newBrokerCollector(s),
		newNetworkCollector(s), // metrics_network.go
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	if s.o.Journal != nil {
		cs = append(cs, s.o.Journal)
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: promErrorLog{s.log}}), nil
}

// promErrorLog hands promhttp's error reports (a collector that failed, a
// scrape that could not be written) to the server's logger.
type promErrorLog struct{ log *slog.Logger }

func (l promErrorLog) Println(v ...any) { l.log.Warn("metrics scrape failed", "err", fmt.Sprint(v...)) }

// protocols are the values of engine.Credentials.Protocol.
var protocols = []string{"openwire", "stomp", "mqtt", "amqp"}

// destLabels are the labels of the per-destination series.
var destLabels = []string{"destination", "type"}

// brokerCollector reads the broker at scrape time (prometheus.Collector):
// the engine's counters are what it keeps anyway, copied in one visit to
// each shard (engine.Engine.AllStats), so a scrape costs the message path
// nothing but that visit.
type brokerCollector struct {
	s      *Server
	capped atomic.Bool // the cap was hit at the last scrape (logged once when it starts)

	ready, destinations, omitted, connections        *prometheus.Desc
	handshakeTimeouts                                *prometheus.Desc
	memUsed, memLimit, memRatio                      *prometheus.Desc
	storeUsed, storeLimit, storeRatio                *prometheus.Desc
	tempUsed, tempLimit, tempRatio                   *prometheus.Desc
	messages, inflight, consumers, producers         *prometheus.Desc
	enqueued, dequeued, dispatched, expired          *prometheus.Desc
	discarded, blockedSends, blockedNow, destMemUsed *prometheus.Desc
}

func newBrokerCollector(s *Server) *brokerCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("wharf_"+name, help, labels, nil)
	}
	return &brokerCollector{
		s:            s,
		ready:        d("ready", "1 once the broker has recovered its store and its connectors listen, 0 while it starts or stops."),
		destinations: d("destinations", "Destinations that exist, by type.", "type"),
		omitted:      d("metrics_destinations_omitted", "Destinations left out of the per-destination series by the cap (http max_destination_series)."),
		connections:  d("connections", "Client connections open, by protocol.", "protocol"),
		handshakeTimeouts: d("connections_handshake_timeouts_total",
			"Connections closed because they did not finish their handshake (CONNECT, Open, WireFormatInfo) within the connector's connect timeout, by protocol.", "protocol"),
		memUsed:      d("memory_usage_bytes", "Memory held by messages (ActiveMQ MemoryUsage)."),
		memLimit:     d("memory_limit_bytes", "The memory limit (systemUsage memoryUsage)."),
		memRatio:     d("memory_usage_ratio", "Memory usage over its limit, 0 to 1 (ActiveMQ MemoryPercentUsage / 100); 0 when unlimited."),
		storeUsed:    d("store_usage_bytes", "Bytes the persistent store holds (ActiveMQ StoreUsage)."),
		storeLimit:   d("store_limit_bytes", "The store limit (systemUsage storeUsage)."),
		storeRatio:   d("store_usage_ratio", "Store usage over its limit, 0 to 1 (ActiveMQ StorePercentUsage / 100); 0 when unlimited."),
		tempUsed:     d("temp_usage_bytes", "Bytes of non-persistent messages spilled to the temp store (ActiveMQ TempUsage)."),
		tempLimit:    d("temp_limit_bytes", "The temp store limit (systemUsage tempUsage)."),
		tempRatio:    d("temp_usage_ratio", "Temp usage over its limit, 0 to 1 (ActiveMQ TempPercentUsage / 100); 0 when unlimited."),
		messages:     d("queue_messages", "Messages on the destination, pending and in flight (ActiveMQ QueueSize).", destLabels...),
		inflight:     d("destination_inflight_messages", "Messages dispatched and not yet acknowledged (ActiveMQ InFlightCount).", destLabels...),
		consumers:    d("destination_consumers", "Consumers of the destination (ActiveMQ ConsumerCount).", destLabels...),
		producers:    d("destination_producers", "Producers registered on the destination: OpenWire's; STOMP, MQTT and AMQP producers are anonymous (ActiveMQ ProducerCount).", destLabels...),
		enqueued:     d("destination_enqueued_total", "Messages sent to the destination (ActiveMQ EnqueueCount).", destLabels...),
		dequeued:     d("destination_dequeued_total", "Messages acknowledged or removed (ActiveMQ DequeueCount).", destLabels...),
		dispatched:   d("destination_dispatched_total", "Messages dispatched to consumers (ActiveMQ DispatchCount).", destLabels...),
		expired:      d("destination_expired_total", "Messages that expired (ActiveMQ ExpiredCount).", destLabels...),
		discarded:    d("destination_discarded_total", "Messages dropped for slow topic subscribers.", destLabels...),
		blockedSends: d("destination_blocked_sends_total", "Sends producer flow control held back (ActiveMQ BlockedSends).", destLabels...),
		blockedNow:   d("destination_blocked_producers", "Sends flow control holds back now.", destLabels...),
		destMemUsed:  d("destination_memory_usage_bytes", "Memory held by the destination's messages (ActiveMQ MemoryUsageByteCount).", destLabels...),
	}
}

// Describe sends every descriptor the collector may use.
func (c *brokerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.ready, c.destinations, c.omitted, c.connections, c.handshakeTimeouts,
		c.memUsed, c.memLimit, c.memRatio, c.storeUsed, c.storeLimit, c.storeRatio,
		c.tempUsed, c.tempLimit, c.tempRatio,
		c.messages, c.inflight, c.consumers, c.producers,
		c.enqueued, c.dequeued, c.dispatched, c.expired,
		c.discarded, c.blockedSends, c.blockedNow, c.destMemUsed,
	} {
		ch <- d
	}
}

// typeLabel is the type label of a destination kind.
func typeLabel(t message.DestType) string {
	switch t {
	case message.Topic:
		return "topic"
	case message.TempQueue:
		return "temp_queue"
	case message.TempTopic:
		return "temp_topic"
	}
	return "queue"
}

// Collect reads the broker now.
func (c *brokerCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	e := c.s.engine.Load()
	if e == nil {
		gauge(c.ready, 0)
		return
	}
	gauge(c.ready, 1)
	u := e.Usage()
	ratio := func(used, limit int64) float64 {
		if limit <= 0 {
			return 0
		}
		return float64(used) / float64(limit)
	}
	gauge(c.memUsed, float64(u.MemoryUsed))
	gauge(c.memLimit, float64(u.MemoryLimit))
	gauge(c.memRatio, ratio(u.MemoryUsed, u.MemoryLimit))
	gauge(c.storeUsed, float64(u.StoreUsed))
	gauge(c.storeLimit, float64(u.StoreLimit))
	gauge(c.storeRatio, ratio(u.StoreUsed, u.StoreLimit))
	gauge(c.tempUsed, float64(u.TempUsed))
	gauge(c.tempLimit, float64(u.TempLimit))
	gauge(c.tempRatio, ratio(u.TempUsed, u.TempLimit))
	conns := e.ConnectionsByProtocol()
	for _, p := range protocols {
		conns[p] += 0 // a series for every protocol, 0 when none is connected
	}
	for proto, n := range conns {
		if proto == "" {
			proto = "unknown"
		}
		gauge(c.connections, float64(n), proto)
	}
	timeouts := e.HandshakeTimeouts()
	for _, p := range protocols {
		ch <- prometheus.MustNewConstMetric(c.handshakeTimeouts, prometheus.CounterValue, float64(timeouts[p]), p)
	}

	all := e.AllStats()
	byType := map[message.DestType]int{}
	for _, d := range all {
		byType[d.Destination.Type]++
	}
	for _, t := range []message.DestType{message.Queue, message.Topic, message.TempQueue, message.TempTopic} {
		gauge(c.destinations, float64(byType[t]), typeLabel(t))
	}
	c.collectDestinations(ch, all)
}

// collectDestinations reports the per-destination series of the first
// MaxDestinationSeries destinations in (type, name) order, advisory topics
// last, so that the same ones are reported from one scrape to the next and
// the broker's own topics are the first left out; it logs once when the
// cap starts leaving some out.
func (c *brokerCollector) collectDestinations(ch chan<- prometheus.Metric, all []engine.DestinationSnapshot) {
	limit := c.s.o.MaxDestinationSeries
	omitted := max(len(all)-limit, 0)
	ch <- prometheus.MustNewConstMetric(c.omitted, prometheus.GaugeValue, float64(omitted))
	if omitted > 0 {
		if !c.capped.Swap(true) {
			c.s.log.Warn("per-destination metrics capped: raise http max_destination_series to see every destination",
				"limit", limit, "destinations", len(all), "omitted", omitted)
		}
	} else {
		c.capped.Store(false)
	}
	slices.SortFunc(all, func(a, b engine.DestinationSnapshot) int {
		if c := compareBool(engine.IsAdvisory(a.Destination), engine.IsAdvisory(b.Destination)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Destination.Type, b.Destination.Type); c != 0 {
			return c
		}
		return cmp.Compare(a.Destination.Name, b.Destination.Name)
	})
	for _, d := range all[:len(all)-omitted] {
		st, name, typ := d.Stats, d.Destination.Name, typeLabel(d.Destination.Type)
		m := func(desc *prometheus.Desc, vt prometheus.ValueType, v int64) {
			ch <- prometheus.MustNewConstMetric(desc, vt, float64(v), name, typ)
		}
		m(c.messages, prometheus.GaugeValue, st.QueueSize)
		m(c.inflight, prometheus.GaugeValue, st.InFlightCount)
		m(c.consumers, prometheus.GaugeValue, st.ConsumerCount)
		m(c.producers, prometheus.GaugeValue, int64(d.Producers))
		m(c.enqueued, prometheus.CounterValue, st.EnqueueCount)
		m(c.dequeued, prometheus.CounterValue, st.DequeueCount)
		m(c.dispatched, prometheus.CounterValue, st.DispatchCount)
		m(c.expired, prometheus.CounterValue, st.ExpiredCount)
		m(c.discarded, prometheus.CounterValue, st.DiscardedCount)
		m(c.blockedSends, prometheus.CounterValue, st.BlockedSends)
		m(c.blockedNow, prometheus.GaugeValue, int64(st.BlockedNow))
		m(c.destMemUsed, prometheus.GaugeValue, st.MemoryUsage)
	}
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
