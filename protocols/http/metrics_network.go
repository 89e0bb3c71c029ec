package http

import (
	"github.com/prometheus/client_golang/prometheus"
)

// networkCollector is the network bridges' series, read at scrape time
// from the engine's network view (engine.NetworkView): none on a broker
// without network connectors.
type networkCollector struct {
	s                          *Server
	up, forwarded, connections *prometheus.Desc
}

func newNetworkCollector(s *Server) *networkCollector {
	labels := []string{"connector", "peer"}
	return &networkCollector{
		s:  s,
		up: prometheus.NewDesc("wharf_network_bridge_up", "1 while the network bridge is connected to its peer and serving its demand, 0 while it is down.", labels, nil),
		forwarded: prometheus.NewDesc("wharf_network_bridge_forwarded_messages_total",
			"Messages the network bridge has moved to its peer (and, duplex, from it), over all its connections.", labels, nil),
		connections: prometheus.NewDesc("wharf_network_bridge_connections_total", "Times the network bridge has connected to its peer.", labels, nil),
	}
}

func (c *networkCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.forwarded
	ch <- c.connections
}

func (c *networkCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.s.engine.Load()
	if e == nil {
		return
	}
	v := e.Network()
	if v == nil {
		return
	}
	for _, nc := range v.NetworkConnectors() {
		for _, b := range nc.Bridges {
			up := 0.0
			if b.Up {
				up = 1
			}
			ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, nc.Name, b.Peer)
			ch <- prometheus.MustNewConstMetric(c.forwarded, prometheus.CounterValue, float64(b.Forwarded), nc.Name, b.Peer)
			ch <- prometheus.MustNewConstMetric(c.connections, prometheus.CounterValue, float64(b.Connections), nc.Name, b.Peer)
		}
	}
}
