package openwire

import (
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// DuplexFunc runs the reverse bridge of a duplex network connection that
// a remote broker opened to this one (its BrokerInfo says
// networkConnection and duplexConnection), as ActiveMQ's
// TransportConnection.processBrokerInfo starts a DemandForwardingBridge
// whose remote is the accepted connection. peer is that BrokerInfo (its
// networkProperties carry the initiator's connector settings); rc is the
// client side of the same connection (client.Attach): what the bridge
// sends through it goes out on this connection, and the frames that
// answer it are routed to it. The function runs on a goroutine of its
// own and returns when rc is done (the connection closed) or the bridge
// fails, in which case the server closes the connection, as ActiveMQ
// does when a duplex bridge fails. cmd/wharf/wiring sets it to the
// cluster package's ServeDuplex.
type DuplexFunc func(peer *wire.BrokerInfo, rc *client.Conn) error

// startDuplex attaches the client side of a duplex connection and runs
// the reverse bridge over it (transport goroutine).
func (s *session) startDuplex(peer *wire.BrokerInfo) {
	if s.duplex != nil {
		s.log.Warn("duplex network bridge: a second BrokerInfo on the connection ignored", "remote_broker", peer.BrokerName)
		return
	}
	run := s.srv.opts.Duplex
	if run == nil {
		// A server built without the network package (in-process tests).
		s.log.Warn("duplex network bridge: this server runs no reverse bridge; messages flow only from the remote broker",
			"remote_broker", peer.BrokerName)
		return
	}
	o := client.DefaultOptions()
	o.Logger = s.log
	rc, err := client.Attach(o, peer, s.sendErr)
	if err != nil {
		s.log.Warn("duplex network bridge: attach failed", "remote_broker", peer.BrokerName, "err", err)
		return
	}
	s.duplex = rc
	s.log.Info("duplex network bridge connected: running the reverse bridge", "remote_broker", peer.BrokerName)
	go func() {
		err := run(peer, rc)
		rc.Close()
		if !s.closed.Load() {
			// The bridge ended while the connection is up: close it, so
			// that the initiator reconnects and both directions restart.
			s.log.Warn("duplex network bridge failed; closing the connection", "remote_broker", peer.BrokerName, "err", err)
			s.tc.Close()
		}
	}()
}
