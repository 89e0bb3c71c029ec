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
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	bridges []*bridge
}

// Start runs every network connector of cfg on e: one bridge per peer of
// a static: connector, one bridge to the live master of a masterslave:
// pair.
// Bridges connect in the background: Start does not wait for any peer.
func Start(e *engine.Engine, cfg *config.Config, log *slog.Logger) (*Network, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Network{cancel: cancel}
	for _, nc := range cfg.NetworkConnectors {
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
			n.bridges = append(n.bridges, b)
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
	return nil
}

// Forwarded is the number of messages every bridge has forwarded so far.
// Safe from any goroutine.
func (n *Network) Forwarded() int64 {
	var t int64
	for _, b := range n.bridges {
		t += b.forwarded.Load()
	}
	return t
}
