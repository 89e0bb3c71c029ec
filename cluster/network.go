package cluster

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"wharf/engine"
	"wharf/engine/config"
)

// Network is a broker's running network connectors.
type Network struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex // guards bridges, which multicast discovery adds to
	// bridges are every bridge started, stopped ones included (their
	// forwarded counts stay in Forwarded).
	bridges []*bridge

	e          *engine.Engine
	connectors []config.NetworkConnector // for the views (registry.go)
}

func (n *Network) add(b *bridge) {
	n.mu.Lock()
	n.bridges = append(n.bridges, b)
	n.mu.Unlock()
}

// Start runs every network connector of cfg on e: one bridge per peer of
// a static: connector, one bridge to the live master of a masterslave:
// pair.
// pair, one per broker heard on the group of a multicast:// one; and it
// advertises adverts on their groups (discovery.go).
// Bridges connect in the background: Start does not wait for any peer,
// so the broker's networkConnectorStartAsync changes nothing.
func Start(e *engine.Engine, cfg *config.Config, log *slog.Logger, adverts ...Advert) (*Network, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Network{e: e, connectors: cfg.NetworkConnectors, cancel: cancel}
	e.SetNetworkView(n)
	for _, a := range adverts {
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			advertise(ctx, a, log)
		}()
	}
	self := selfServices(adverts)
	for _, nc := range cfg.NetworkConnectors {
		if nc.Discovery == config.DiscoveryMulticast {
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.discover(ctx, e, nc, self, log)
			}()
			continue
		}
		groups := [][]string{}
		if nc.Discovery == config.DiscoveryMasterSlave {
			groups = append(groups, nc.Peers)
		} else {
			for _, peer := range nc.Peers {
				groups = append(groups, []string{peer})
			}
		}
		for _, addrs := range groups {
			b := newBridge(e, nc, addrs, log.With("network_connector", nc.Name, "remote", strings.Join(addrs, ",")))
			n.add(b)
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				b.run(ctx)
			}()
		}
	}
	return n, nil
}

// Close stops every bridge: its connections close, and queue messages it
// had received but not forwarded go back to their queues.
func (n *Network) Close() error {
	n.cancel()
	n.wg.Wait()
	n.e.SetNetworkView(nil)
	return nil
}

// Forwarded is the number of messages every bridge has forwarded so far.
// Safe from any goroutine.
func (n *Network) Forwarded() int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	var t int64
	for _, b := range n.bridges {
		t += b.forwarded.Load()
	}
	return t
}
