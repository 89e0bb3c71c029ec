package jolokia

import (
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Connector is a transport connector of the broker, for its
// ConnectorViewMBean (connector=clientConnectors,connectorName=Name).
type Connector struct {
	// Name is the <transportConnector name>.
	Name string
	// Protocol is what its connections report as their protocol
	// (engine.ConnectionInfo.Protocol: "openwire", "stomp", "mqtt",
	// "amqp"), by which they are counted.
	Protocol string
	// The connector's updateClusterClients, rebalanceClusterClients,
	// updateClusterClientsOnRemove and updateClusterFilter ("" is null).
	UpdateClusterClients, RebalanceClusterClients, UpdateClusterClientsOnRemove bool
	UpdateClusterFilter                                                         string
}

// PersistenceAdapter is the broker's KahaDB store, for
// service=PersistenceAdapter (PersistenceAdapterViewMBean).
type PersistenceAdapter struct {
	// Dir is the store's directory, made absolute for the name as
	// KahaDBPersistenceAdapter.toString writes it.
	Dir string
}

// connectorName is a connector's ConnectorViewMBean name.
func (h *Handler) connectorName(c Connector) objectName {
	return h.under("connector", "clientConnectors", "connectorName", encodePart(c.Name))
}

// connectorBean is a transport connector (ConnectorViewMBean). Wharf has
// no link stealing: it reads false, as ActiveMQ's default. (ActiveMQ's isStarted is not an attribute: JMX
// reads of Started fail there, and here.)
func (s *snapshot) connectorBean(c Connector) *mbean {
	e := s.h.e
	v := func(x any) func() any { return func() any { return x } }
	count := func() int {
		n := 0
		for _, cn := range s.connections() {
			if cn.Protocol == c.Protocol {
				n++
			}
		}
		return n
	}
	return &mbean{
		name: s.h.connectorName(c), class: "org.apache.activemq.broker.jmx.ConnectorView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"StatisticsEnabled", "boolean", "Statistics gathering enabled", func() any { return e.StatisticsEnabled() }},
			{"AllowLinkStealingEnabled", "boolean", "Link Stealing enabled", v(false)},
			{"UpdateClusterClients", "boolean", "Update client URL's when brokers leave/join a custer enabled", v(c.UpdateClusterClients)},
			{"RebalanceClusterClients", "boolean", "Rebalance clients across the broker cluster enabled", v(c.RebalanceClusterClients)},
			{"UpdateClusterClientsOnRemove", "boolean", "Update clients when a broker is removed from a network enabled.", v(c.UpdateClusterClientsOnRemove)},
			{"UpdateClusterFilter", "java.lang.String", "Comma separated list of regex patterns to match broker names for cluster client updates.", v(nullable(c.UpdateClusterFilter))},
		},
		ops: func() []operation {
			return []operation{{name: "connectionCount", desc: "Connection count", ret: "int",
				run: func([]any) (any, error) { return count(), nil }}}
		},
	}
}

// adapterName is the store's name as KahaDBPersistenceAdapter.toString
// writes it once the store has started (its index directory is then
// set, to the store's), the instanceName of its bean.
func (p *PersistenceAdapter) adapterName() string {
	return "KahaDBPersistenceAdapter[" + p.Dir + ",Index:" + p.Dir + "]"
}

func (h *Handler) persistenceAdapterName(p *PersistenceAdapter) objectName {
	return h.under("service", "PersistenceAdapter", "instanceName", encodePart(p.adapterName()))
}

// persistenceAdapterBean is the KahaDB store (PersistenceAdapterViewMBean):
// Name, Size (the bytes of its files on disk), Data (the journal file
// numbers in use by any shard, as ActiveMQ lists its journal's file map:
// "[1, 2]"),
// Transactions (the prepared XA transactions, "[]" when none).
func (s *snapshot) persistenceAdapterBean(p *PersistenceAdapter) *mbean {
	e := s.h.e
	return &mbean{
		name: s.h.persistenceAdapterName(p), class: "org.apache.activemq.broker.jmx.PersistenceAdapterView", desc: "Information on the management interface of the MBean",
		attrs: []attribute{
			{"Name", "java.lang.String", "Name of this persistence adapter.", func() any { return p.adapterName() }},
			{"Size", "long", "Current size.", func() any { size, _ := storeFiles(p.Dir); return size }},
			{"Data", "java.lang.String", "Current data.", func() any {
				_, ids := storeFiles(p.Dir)
				return javaList(ids)
			}},
			{"Transactions", "java.lang.String", "Inflight transactions.", func() any {
				var xs []string
				for _, x := range e.Prepared() {
					xs = append(xs, x.String())
				}
				return javaList(xs)
			}},
		},
	}
}

// storeFiles walks the store directory: the bytes of its files and the
// numbers of its journal files (db-N.log), in order.
func storeFiles(dir string) (size int64, journal []string) {
	var ids []int
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			size += info.Size()
		}
		if n, ok := strings.CutPrefix(d.Name(), "db-"); ok {
			if n, ok := strings.CutSuffix(n, ".log"); ok {
				if id, err := strconv.Atoi(n); err == nil {
					ids = append(ids, id)
				}
			}
		}
		return nil
	})
	sort.Ints(ids)
	for i, id := range ids {
		// Each shard has a journal of its own: a number in use by
		// several is listed once.
		if i == 0 || id != ids[i-1] {
			journal = append(journal, strconv.Itoa(id))
		}
	}
	return size, journal
}

// javaList is a Java collection's toString: "[a, b]".
func javaList(xs []string) string { return "[" + strings.Join(xs, ", ") + "]" }
