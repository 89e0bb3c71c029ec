package cluster

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
)

// The registry of the network's bridges: what the management API
// (NetworkConnectorViewMBean, NetworkBridgeViewMBean) and the web
// console's Network page show, and the peer brokers the OpenWire
// connectors name to their failover clients. Network implements
// engine.NetworkView and registers itself on the engine (Start); each
// bridge keeps its status here, set by two calls of its own (up when a
// connection starts serving, failed when one fails), and its current
// connection's counters (bridgeCounts), which the bridge's forwarder adds
// to.

// bridgeStatus is a bridge's state for the views. Safe from any
// goroutine.
type bridgeStatus struct {
	mu          sync.Mutex
	up          bool
	since       time.Time
	lastErr     string
	connections int
	cur         *bridgeConn // the connection up now, or the last one
	remoteAddr  string
	remoteURL   string
	// base is the bridge's forwarded count when cur came up: what the
	// connection moved is the difference.
	base int64
}

// bridgeCounts are one connection's counters (ActiveMQ's
// NetworkBridgeStatistics): deliveries the local broker handed the
// bridge, and those forwarded to the peer and acknowledged, also by
// destination (MBeanBridgeDestination's outbound views).
type bridgeCounts struct {
	enqueued, dequeued atomic.Int64

	mu    sync.Mutex
	dests map[message.Destination]*destCount
}

// destCount is one destination's forwarded messages, with the time
// between them for the rate (NetworkDestinationView's TimeStatistic).
type destCount struct {
	count      int64
	totalMs    int64
	last       time.Time
	firstIndex int // order of first use
}

// sent counts a message forwarded to the peer.
func (c *bridgeCounts) sent(d message.Destination) {
	c.dequeued.Add(1)
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dests == nil {
		c.dests = map[message.Destination]*destCount{}
	}
	dc := c.dests[d]
	if dc == nil {
		dc = &destCount{last: now, firstIndex: len(c.dests)}
		c.dests[d] = dc
	}
	if dc.count > 0 {
		dc.totalMs += now.Sub(dc.last).Milliseconds()
	}
	dc.last = now
	dc.count++
}

// reset zeroes the counters; the destinations stay, counted afresh.
func (c *bridgeCounts) reset() {
	c.enqueued.Store(0)
	c.dequeued.Store(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, dc := range c.dests {
		dc.count, dc.totalMs = 0, 0
	}
}

// outbound is the destinations forwarded to, in order of first use.
func (c *bridgeCounts) outbound() []engine.NetworkDestinationCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]engine.NetworkDestinationCount, len(c.dests))
	for d, dc := range c.dests {
		rate := 0.0
		if dc.totalMs > 0 {
			// TimeStatisticImpl.getAveragePerSecond: 1000 over the mean
			// time between messages in milliseconds.
			rate = 1000 / (float64(dc.totalMs) / float64(dc.count))
		}
		out[dc.firstIndex] = engine.NetworkDestinationCount{Destination: d, Count: dc.count, Rate: rate}
	}
	return out
}

// up records that bc serves the peer at addr, which sent bi, and tells
// the engine of the peer broker (RegionBroker.addBroker, which the
// OpenWire connectors' cluster updates follow). The returned func
// records that it stopped.
func (b *bridge) up(bc *bridgeConn, addr string, bi *wire.BrokerInfo) (down func()) {
	st := &b.status
	st.mu.Lock()
	st.up, st.since, st.cur, st.connections = true, time.Now(), bc, st.connections+1
	st.remoteAddr, st.remoteURL = "tcp://"+addr, bi.BrokerURL
	st.base = b.forwarded.Load()
	st.mu.Unlock()
	peer := engine.PeerBroker{Name: bc.remoteName, ID: bc.remoteID, URL: bi.BrokerURL}
	b.e.AddPeerBroker(peer)
	return func() {
		st.mu.Lock()
		st.up, st.since = false, time.Now()
		st.mu.Unlock()
		b.e.RemovePeerBroker(peer)
	}
}

// failed records why the bridge's last connection failed or could not
// be made.
func (b *bridge) failed(err error) {
	if err == nil {
		return
	}
	st := &b.status
	st.mu.Lock()
	st.lastErr = err.Error()
	if !st.up && st.cur == nil {
		st.since = time.Now()
	}
	st.mu.Unlock()
}

// info is the bridge's view.
func (b *bridge) info() engine.NetworkBridgeInfo {
	st := &b.status
	st.mu.Lock()
	bi := engine.NetworkBridgeInfo{
		Peer: strings.Join(b.addrs, ","), Up: st.up, Since: st.since, LastError: st.lastErr,
		Duplex: b.nc.Duplex, Forwarded: b.forwarded.Load(), Connections: st.connections,
		LocalBrokerName: b.e.BrokerName(),
	}
	bc, base := st.cur, st.base
	if bc != nil {
		bi.RemoteAddress, bi.RemoteBrokerURL = st.remoteAddr, st.remoteURL
	}
	up := st.up
	st.mu.Unlock()
	if bc == nil {
		return bi
	}
	// The local end is the engine itself, which ActiveMQ reaches over
	// its vm:// transport.
	bi.LocalAddress = "vm://" + b.e.BrokerName()
	bi.RemoteBrokerName, bi.RemoteBrokerID = bc.remoteName, bc.remoteID
	bi.Enqueued, bi.Dequeued = bc.counts.enqueued.Load(), bc.counts.dequeued.Load()
	bi.Outbound = bc.counts.outbound()
	// b.forwarded counts both ways over every connection: what is not
	// this connection's outbound is what it received (duplex).
	if r := bi.Forwarded - base - bi.Dequeued; r > 0 {
		bi.Received = r
	}
	if up {
		// The demand is the engine's consumers of the bridge's local
		// connection: read from the engine, never under the bridge's
		// locks, which a forward to a slow peer holds.
		id := bc.lc.ID()
		for _, c := range b.e.Consumers() {
			if c.ConnectionID == id {
				bi.Demand = append(bi.Demand, engine.NetworkDemand{
					ConsumerID: c.ID, Destination: c.Destination, Selector: c.Selector,
					DurableName: c.DurableName, SubCounters: c.SubCounters,
				})
			}
		}
	}
	return bi
}

// ResetBridgeStats zeroes the counters of the connector's bridge that is
// up and connected to remoteAddress (engine.NetworkView).
func (n *Network) ResetBridgeStats(connector, remoteAddress string) bool {
	n.mu.Lock()
	bridges := append([]*bridge(nil), n.bridges...)
	n.mu.Unlock()
	for _, b := range bridges {
		if b.nc.Name != connector {
			continue
		}
		st := &b.status
		st.mu.Lock()
		ok := st.up && st.cur != nil && st.remoteAddr == remoteAddress
		if ok {
			st.cur.counts.reset()
			st.base = b.forwarded.Load()
		}
		st.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// NetworkConnectors is every network connector of the broker with its
// bridges (engine.NetworkView). Safe from any goroutine.
func (n *Network) NetworkConnectors() []engine.NetworkConnectorInfo {
	n.mu.Lock()
	bridges := append([]*bridge(nil), n.bridges...)
	n.mu.Unlock()
	out := make([]engine.NetworkConnectorInfo, 0, len(n.connectors))
	for _, nc := range n.connectors {
		ci := engine.NetworkConnectorInfo{
			Name: nc.Name, URI: nc.URI, Duplex: nc.Duplex, ConduitSubscriptions: nc.ConduitSubscriptions,
			DynamicOnly: nc.DynamicOnly, DecreaseNetworkConsumerPriority: nc.DecreaseNetworkConsumerPriority,
			BridgeTempDestinations: nc.BridgeTempDestinations,
			// ActiveMQ's defaults for what Wharf has no setting for.
			DispatchAsync: true, SuppressDuplicateTopicSubscriptions: true,
			MessageTTL: nc.MessageTTL, ConsumerTTL: nc.ConsumerTTL, PrefetchSize: nc.PrefetchSize,
			UserName: nc.UserName,
		}
		for _, b := range bridges {
			if b.nc.Name == nc.Name && b.nc.Line == nc.Line {
				ci.Bridges = append(ci.Bridges, b.info())
			}
		}
		out = append(out, ci)
	}
	return out
}
