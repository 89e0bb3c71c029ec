package console

import (
	"net/http"
	"time"

	"wharf/engine"
)

// netData is network.jsp: the network connectors and their bridges, as
// ActiveMQ's console lists its network bridges (Network tab), with each
// bridge's demand.
type netData struct {
	Connectors []netConnector
}

type netConnector struct {
	engine.NetworkConnectorInfo
	Rows []netBridge
}

type netBridge struct {
	engine.NetworkBridgeInfo
	Since string
}

func (h *Handler) network(_ http.ResponseWriter, _ *http.Request, e *engine.Engine) (*view, error) {
	var d netData
	if v := e.Network(); v != nil {
		for _, nc := range v.NetworkConnectors() {
			c := netConnector{NetworkConnectorInfo: nc}
			for _, b := range nc.Bridges {
				since := ""
				if !b.Since.IsZero() {
					since = b.Since.Format(time.DateTime)
				}
				c.Rows = append(c.Rows, netBridge{b, since})
			}
			d.Connectors = append(d.Connectors, c)
		}
	}
	return &view{Page: "network", Title: "Network", Nav: "network", Data: d}, nil
}
