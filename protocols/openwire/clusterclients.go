package openwire

import (
	"slices"
	"strings"
	"sync"

	"wharf/engine"
	"wharf/protocols/openwire/wire"
)

// clusterClients is what a connector with updateClusterClients tells its
// failover clients, as ActiveMQ's TransportConnector keeps it: a list
// of broker URIs (peerBrokers) that starts with this broker's own and
// grows by the brokerURL of each broker a network bridge connects to
// whose name updateClusterFilter matches (RegionBroker.addBroker,
// TransportConnector.addPeerBroker). A bridge that stops takes its
// broker's URI out again only with updateClusterClientsOnRemove; each
// change is sent at once to the connector's fault-tolerant connections
// (updateClientClusterInfo). With rebalanceClusterClients the list turns
// by one after every ConnectionControl it fills, so that each client is
// asked to move to the next broker.
//
// Like ActiveMQ's, the list keeps a URI once per addition: a bridge that
// reconnects adds its peer again unless updateClusterClientsOnRemove took
// it out when the bridge stopped.
type clusterClients struct {
	self      string
	rebalance bool
	onRemove  bool
	match     func(brokerName string) bool

	mu      sync.Mutex
	peers   []string
	clients map[*session]struct{} // fault-tolerant connections (wire version 6+)
}

func newClusterClients(o Options) *clusterClients {
	return &clusterClients{self: o.ConnectedBrokers, rebalance: o.RebalanceClients, onRemove: o.UpdateClusterClientsOnRemove,
		match: o.ClusterFilter, peers: []string{o.ConnectedBrokers}, clients: map[*session]struct{}{}}
}

// list is peerBrokers, never empty (getPeerBrokers; mu held).
func (c *clusterClients) list() []string {
	if len(c.peers) == 0 {
		c.peers = append(c.peers, c.self)
	}
	return c.peers
}

// control fills a ConnectionControl (getConnectionControl).
func (c *clusterClients) control() *wire.ConnectionControl {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.list()
	cc := &wire.ConnectionControl{ConnectedBrokers: strings.Join(l, ","), RebalanceConnection: c.rebalance}
	if c.rebalance {
		c.peers = append(l[1:len(l):len(l)], l[0])
	}
	return cc
}

// peer is told of a bridge to p starting or stopping.
func (c *clusterClients) peer(p engine.PeerBroker, added bool) {
	c.mu.Lock()
	switch {
	case added && p.URL != "" && (c.match == nil || (p.Name != "" && c.match(p.Name))):
		c.peers = append(c.list(), p.URL)
	case !added && c.onRemove:
		l := c.list()
		if i := slices.Index(l, p.URL); i >= 0 {
			c.peers = slices.Delete(l, i, i+1)
		}
	default:
		c.mu.Unlock()
		return
	}
	clients := make([]*session, 0, len(c.clients))
	for s := range c.clients {
		clients = append(clients, s)
	}
	c.mu.Unlock()
	// updateClientClusterInfo: every fault-tolerant connection, each
	// with a control of its own when rebalancing turns the list.
	cc := c.control()
	for _, s := range clients {
		if s.closed.Load() {
			continue
		}
		s.send(cc)
		if c.rebalance {
			cc = c.control()
		}
	}
}

func (c *clusterClients) join(s *session) {
	c.mu.Lock()
	c.clients[s] = struct{}{}
	c.mu.Unlock()
}

func (c *clusterClients) leave(s *session) {
	c.mu.Lock()
	delete(c.clients, s)
	c.mu.Unlock()
}
