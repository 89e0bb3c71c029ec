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
// networkProperties carry the initiator's connector settings); attach
// makes the client side of the same connection (client.Attach with the
// options given: client id, credentials, logger): what the bridge sends
// through it goes out on this connection, and the frames that answer it
// are routed to it. The function runs on a goroutine of its own and
// returns when that client is done (the connection closed) or the bridge
// fails, in which case the server closes the connection, as ActiveMQ
// does when a duplex bridge fails. cmd/wharf/wiring sets it to the
// cluster package's ServeDuplex.
type DuplexFunc func(peer *wire.BrokerInfo, attach func(client.Options) (*client.Conn, error)) error

// startDuplex runs the reverse bridge of a duplex connection on a
// goroutine of its own (called on the transport goroutine).
func (s *session) startDuplex(peer *wire.BrokerInfo) {
	if s.duplexStarted {
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
	s.duplexStarted = true
	s.log.Info("duplex network bridge connected: running the reverse bridge", "remote_broker", peer.BrokerName)
	attach := func(o client.Options) (*client.Conn, error) {
		if o.Logger == nil {
			o.Logger = s.log
		}
		rc, err := client.Attach(o, peer, s.sendErr)
		if err != nil {
			return nil, err
		}
		s.duplex.Store(rc)
		if s.closed.Load() {
			// OnClose may have looked before the Store.
			rc.Detach(nil)
		}
		return rc, nil
	}
	go func() {
		err := run(peer, attach)
		if rc := s.duplex.Load(); rc != nil {
			rc.Close()
		}
		if !s.closed.Load() {
			// The bridge ended while the connection is up: close it, so
			// that the initiator reconnects and both directions restart.
			s.log.Warn("duplex network bridge failed; closing the connection", "remote_broker", peer.BrokerName, "err", err)
			s.tc.Close()
		}
	}()
}
