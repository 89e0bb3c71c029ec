package engine

import (
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine/message"
)

// The broker's network of brokers as the engine knows it: what its
// network connectors (package cluster) show of themselves to the
// management API and the web console (NetworkView), and the brokers its
// bridges are connected to (PeerBroker), which the OpenWire connectors
// tell their failover clients (updateClusterClients). The engine keeps
// them as ActiveMQ's RegionBroker keeps its brokerInfos: it imports
// nothing of the network, which registers itself here.

// NetworkView is the running network connectors, for the management
// views. Its methods are safe from any goroutine.
type NetworkView interface {
	NetworkConnectors() []NetworkConnectorInfo
	// ResetBridgeStats zeroes the counters of the connector's bridge
	// that is up and connected to remoteAddress
	// (NetworkBridgeInfo.RemoteAddress), as NetworkBridgeView.resetStats
	// does; false when there is none.
	ResetBridgeStats(connector, remoteAddress string) bool
}

// NetworkConnectorInfo is one <networkConnector> and its bridges.
type NetworkConnectorInfo struct {
	Name string
	// URI is the connector's uri as configured ("static:(tcp://b:61616)").
	URI                                 string
	Duplex                              bool
	ConduitSubscriptions                bool
	DynamicOnly                         bool
	DecreaseNetworkConsumerPriority     bool
	BridgeTempDestinations              bool
	DispatchAsync                       bool
	SuppressDuplicateQueueSubscriptions bool
	SuppressDuplicateTopicSubscriptions bool
	MessageTTL                          int
	ConsumerTTL                         int
	PrefetchSize                        int
	AdvisoryPrefetchSize                int
	UserName                            string
	// Bridges are the connector's bridges, up and down, in the order
	// they were made: one per peer of a static: connector, one for a
	// masterslave: pair, one per broker a multicast:// one heard.
	Bridges []NetworkBridgeInfo
}

// NetworkBridgeInfo is one bridge of a network connector.
type NetworkBridgeInfo struct {
	// Peer is what the bridge dials: an address, or the addresses of a
	// master/slave pair joined by commas.
	Peer string
	// Up: connected to the peer and serving its demand. Since is when
	// it came up or went down; LastError why it last went down or
	// failed to connect ("" when it never did).
	Up        bool
	Since     time.Time
	LastError string
	// What the current (or last) connection reported; empty before the
	// first one.
	RemoteAddress    string // "tcp://127.0.0.1:61617": the address connected to, as configured (a host name is not resolved)
	LocalAddress     string
	RemoteBrokerName string
	RemoteBrokerID   string
	RemoteBrokerURL  string // the peer's BrokerInfo.brokerURL
	LocalBrokerName  string
	// Duplex: the connection carries this broker's demand from the
	// peer too. CreatedByDuplex: the bridge is the accepting end of a
	// peer's duplex connector (never, in Wharf: see cluster/duplex.go).
	Duplex          bool
	CreatedByDuplex bool
	// The current connection's counters (ActiveMQ's
	// NetworkBridgeStatistics): messages the local broker gave the
	// bridge to forward (Enqueued), those forwarded and acknowledged
	// locally (Dequeued), those received from the peer over a duplex
	// connection (Received). Forwarded is every message the bridge has
	// moved over all its connections, both ways.
	Enqueued, Dequeued, Received int64
	Forwarded                    int64
	Connections                  int // how many times it has come up
	// Outbound is the current connection's messages forwarded to the
	// peer by destination, in the order the destinations were first
	// forwarded to.
	Outbound []NetworkDestinationCount
	// Demand is the local network subscriptions serving the peer's
	// consumers, while up.
	Demand []NetworkDemand
}

// NetworkDestinationCount is what a bridge forwarded to one destination:
// the count, and the rate (messages per second, from the mean time
// between them; 0 until two have gone).
type NetworkDestinationCount struct {
	Destination message.Destination
	Count       int64
	Rate        float64
}

// NetworkDemand is one local subscription of a bridge.
type NetworkDemand struct {
	ConsumerID  string
	Destination message.Destination
	Selector    string
	DurableName string
	SubCounters
}

// PeerBroker is a broker a network bridge is connected to, from its
// BrokerInfo (ActiveMQ's RegionBroker.addBroker).
type PeerBroker struct {
	Name, ID string
	// URL is its BrokerInfo.brokerURL: the URI its failover clients
	// should use.
	URL string
}

// PeerBrokerWatcher is told each time a bridge connects to a broker
// (added) or stops (removed). It is called on the bridge's goroutine
// and must not block.
type PeerBrokerWatcher func(p PeerBroker, added bool)

type networkState struct {
	view     atomic.Pointer[NetworkView]
	mu       sync.Mutex
	watchers map[int]PeerBrokerWatcher
	nextID   int
	peers    map[string]*peerRef // by broker id
}

type peerRef struct {
	p    PeerBroker
	refs int
}

// SetNetworkView registers the broker's network connectors; nil
// unregisters them.
func (e *Engine) SetNetworkView(v NetworkView) {
	if v == nil {
		e.network.view.Store(nil)
		return
	}
	e.network.view.Store(&v)
}

// Network is the registered network connectors, nil when the broker has
// none.
func (e *Engine) Network() NetworkView {
	if v := e.network.view.Load(); v != nil {
		return *v
	}
	return nil
}

// AddPeerBroker records that a bridge has connected to p and tells the
// watchers. Each call is matched by one RemovePeerBroker.
func (e *Engine) AddPeerBroker(p PeerBroker) {
	n := &e.network
	n.mu.Lock()
	if n.peers == nil {
		n.peers = map[string]*peerRef{}
	}
	r := n.peers[p.ID]
	if r == nil {
		r = &peerRef{p: p}
		n.peers[p.ID] = r
	}
	r.refs++
	ws := n.watcherList()
	n.mu.Unlock()
	for _, w := range ws {
		w(p, true)
	}
}

// RemovePeerBroker records that a bridge to p has stopped and tells the
// watchers.
func (e *Engine) RemovePeerBroker(p PeerBroker) {
	n := &e.network
	n.mu.Lock()
	if r := n.peers[p.ID]; r != nil {
		if r.refs--; r.refs <= 0 {
			delete(n.peers, p.ID)
		}
	}
	ws := n.watcherList()
	n.mu.Unlock()
	for _, w := range ws {
		w(p, false)
	}
}

// PeerBrokers are the brokers some bridge is connected to now, in no
// particular order.
func (e *Engine) PeerBrokers() []PeerBroker {
	n := &e.network
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]PeerBroker, 0, len(n.peers))
	for _, r := range n.peers {
		out = append(out, r.p)
	}
	return out
}

// WatchPeerBrokers calls w for every later AddPeerBroker and
// RemovePeerBroker until stop is called.
func (e *Engine) WatchPeerBrokers(w PeerBrokerWatcher) (stop func()) {
	n := &e.network
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.watchers == nil {
		n.watchers = map[int]PeerBrokerWatcher{}
	}
	id := n.nextID
	n.nextID++
	n.watchers[id] = w
	return func() {
		n.mu.Lock()
		delete(n.watchers, id)
		n.mu.Unlock()
	}
}

// watcherList is the watchers in registration order (mu held).
func (n *networkState) watcherList() []PeerBrokerWatcher {
	out := make([]PeerBrokerWatcher, 0, len(n.watchers))
	for id := 0; id < n.nextID; id++ {
		if w, ok := n.watchers[id]; ok {
			out = append(out, w)
		}
	}
	return out
}
