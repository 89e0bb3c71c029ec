package config

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
)

// ClusterClients is what a transport connector tells the failover clients
// (JMS clients with a failover: URL) connected to it, as ActiveMQ's
// TransportConnector does in the ConnectionControl it sends each OpenWire
// connection.
type ClusterClients struct {
	// Update is updateClusterClients: the ConnectionControl names the
	// brokers a failover client may connect to (connectedBrokers), which
	// the client adds to its own list.
	Update bool
	// Rebalance is rebalanceClusterClients: the ConnectionControl asks a
	// client to reconnect to the first broker of the list when it is not
	// connected to it (not on a connection the client made to fail over).
	Rebalance bool
	// UpdateOnRemove is updateClusterClientsOnRemove: clients are told
	// again when a network peer goes away.
	UpdateOnRemove bool
	// Filter is updateClusterFilter: comma-separated regular expressions;
	// a network peer is named only when its broker name matches one of
	// them whole (Pattern.matches). Empty names every peer.
	Filter string
	// URI is the broker URI the list names first, derived by the loader
	// as ActiveMQ's BrokerService.getDefaultSocketURIString derives it:
	// the scheme, host and port as written (a port 0 stays 0, as in
	// ActiveMQ; give such a connector a port) of the first connector
	// that has Update or Rebalance. Set on every connector that has
	// either; "" on the others.
	URI string

	filters []*regexp.Regexp
}

// Enabled reports whether the connector sends clients anything: Update or
// Rebalance.
func (c ClusterClients) Enabled() bool { return c.Update || c.Rebalance }

// Matches reports whether a network peer named brokerName may be named to
// this connector's clients (updateClusterFilter).
func (c ClusterClients) Matches(brokerName string) bool {
	if len(c.filters) == 0 {
		return true
	}
	for _, re := range c.filters {
		if re.MatchString(brokerName) {
			return true
		}
	}
	return false
}

// validateClusterClients compiles each connector's updateClusterFilter
// and sets the URI the cluster clients are told.
func (l *loader) validateClusterClients() {
	first := ""
	for i := range l.cfg.Transports {
		t := &l.cfg.Transports[i]
		cc := &t.ClusterClients
		path := fmt.Sprintf("transport_connectors[%d]", i)
		// java.util.StringTokenizer on ",": empty tokens are skipped.
		for _, tok := range strings.Split(cc.Filter, ",") {
			if tok = strings.TrimSpace(tok); tok == "" {
				continue
			}
			re, err := regexp.Compile(`^(?:` + tok + `)$`)
			if err != nil {
				l.fail(path+".update_cluster_filter", "%q is not a regular expression Wharf can read: %v", tok, err)
				continue
			}
			cc.filters = append(cc.filters, re)
		}
		if cc.Enabled() && first == "" && t.Scheme != "" {
			first = t.Scheme + "://" + net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
		}
	}
	for i := range l.cfg.Transports {
		if cc := &l.cfg.Transports[i].ClusterClients; cc.Enabled() {
			cc.URI = first
		}
	}
}
