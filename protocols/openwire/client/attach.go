package client

import (
	"fmt"
	"strings"
	"sync"

	"wharf/protocols/openwire/wire"
)

// An attached connection is the client side of a duplex network
// connection that a broker accepted: the remote broker dialled, said
// duplexConnection in its BrokerInfo, and expects the accepting broker to
// run the reverse bridge over the same socket
// (TransportConnection.processBrokerInfo in ActiveMQ 5.17). The socket,
// its decoder and its encoder belong to the accepting server's session;
// the attached Conn writes its frames through that session and is handed
// the inbound frames that are its own.
//
// Over a duplex connection the initiating ActiveMQ broker routes what it
// receives through DemandForwardingBridgeSupport.serviceRemoteCommand,
// which is not a broker's TransportConnection, so an attached Conn
// speaks as ActiveMQ's responder bridge does:
//
//   - ConnectionInfo, SessionInfo, ProducerInfo, ConsumerInfo, RemoveInfo
//     and every other command but a message go one-way: ActiveMQ passes
//     them to its local broker (ConnectionInfo, SessionInfo), turns a
//     ConsumerInfo into a demand subscription of its own (addConsumerInfo)
//     or ignores them, and never answers. The methods that wait for a
//     Response in a dialled Conn return once the frame is written.
//   - A message sent with ResponseRequired is answered (the initiator
//     stores it through its local broker and returns the Response with the
//     message's CommandId), so Producer.Send and Forward with sync wait as
//     usual.
//   - What the initiator's broker has for a consumer of this Conn arrives
//     as forwarded messages, not MessageDispatch: the consumer advisories
//     (ActiveMQ.Advisory.Consumer., ...VirtualDestination.Consumer.,
//     ...TempQueue, ...TempTopic, which NetworkBridgeFilter.
//     isAdvisoryInterpretedByNetworkBridge names) go to the consumer this
//     Conn opened on an advisory topic; its acknowledgements go back with
//     its ConsumerId, which the initiator maps to its own subscription.
//   - Close writes nothing: a ShutdownInfo would stop the initiator's whole
//     bridge. The server closes the socket when it wants the bridge gone.
//
// Inbound routing (Conn.Inbound): every Response (the accepting server
// sends no request of its own, so a Response on such a connection answers
// the attached Conn), the advisory messages above, and a ConsumerControl
// or MessageDispatch naming one of this Conn's consumers. Everything else
// is the server's.

// Attach makes the client side of a duplex connection accepted by a
// broker's server: peer is the BrokerInfo the initiator sent, write sends
// one frame on the accepted connection (the server's encoder, in order,
// safe from any goroutine). It sends ConnectionInfo (one-way) with o's
// client id and credentials. o's wire format, TLS, timeouts of the dial
// and inactivity settings are the server's business and are ignored.
func Attach(o Options, peer *wire.BrokerInfo, write func(wire.DataStructure) error) (*Conn, error) {
	o = o.withDefaults()
	c := &Conn{
		opts:          o,
		id:            &wire.ConnectionId{Value: newID(connectionIDs)},
		clientID:      o.ClientID,
		pending:       make(map[int32]chan wire.DataStructure),
		consumers:     make(map[consumerKey]*Consumer),
		sessions:      make(map[*Session]struct{}),
		gotBrokerInfo: make(chan struct{}),
		done:          make(chan struct{}),
		readerDone:    make(chan struct{}),
		kick:          make(chan struct{}, 1),
		flushDone:     make(chan struct{}),
		attachWrite:   write,
		brokerInfo:    peer,
	}
	c.wcond = sync.NewCond(&c.wmu)
	close(c.readerDone)
	close(c.flushDone)
	close(c.gotBrokerInfo)
	if c.clientID == "" {
		c.clientID = newID(clientIDs)
	}
	name := ""
	if peer != nil {
		name = peer.BrokerName
	}
	c.log = o.Logger.With("proto", "openwire", "attached_to", name, "client_id", c.clientID)
	info := &wire.ConnectionInfo{
		ConnectionId: c.id,
		ClientId:     c.clientID,
		UserName:     o.Username,
		Password:     o.Password,
	}
	if err := c.oneway(info); err != nil {
		c.fail(err)
		return nil, fmt.Errorf("openwire client: attach: %w", err)
	}
	return c, nil
}

// Attached reports whether c runs over a connection a server accepted
// (Attach).
func (c *Conn) Attached() bool { return c.attachWrite != nil }

// Inbound offers an attached Conn a frame its server read; it reports
// whether the frame was the Conn's (see Attach for which are). Called
// from the server's reader; it never blocks. False for a Conn that is not
// attached.
func (c *Conn) Inbound(ds wire.DataStructure) bool {
	if c.attachWrite == nil {
		return false
	}
	switch x := ds.(type) {
	case *wire.Response, *wire.ExceptionResponse, *wire.DataResponse, *wire.DataArrayResponse, *wire.IntegerResponse:
		c.handle(ds)
		return true
	case *wire.MessageDispatch, *wire.ConsumerControl:
		var id *wire.ConsumerId
		if md, ok := x.(*wire.MessageDispatch); ok {
			id = md.ConsumerId
		} else {
			id = x.(*wire.ConsumerControl).ConsumerId
		}
		if id == nil || id.ConnectionId != c.id.Value {
			return false
		}
		c.handle(ds)
		return true
	case *wire.Message:
		if !BridgeAdvisory(x.Destination) {
			return false
		}
		k := c.advisoryConsumer()
		if k == nil {
			// No advisory consumer (closed, or not opened yet): the
			// advisory is not for this broker's destinations either.
			c.log.Debug("advisory without an advisory consumer", "dest", x.Destination.String())
			return true
		}
		md := &wire.MessageDispatch{ConsumerId: k.id, Destination: x.Destination, Message: x}
		if c.opts.Trace != nil {
			c.opts.Trace(false, md)
		}
		k.dispatch(md)
		return true
	}
	return false
}

// advisoryConsumer is the open consumer on an advisory topic.
func (c *Conn) advisoryConsumer() *Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.consumers {
		if k.dest != nil && k.dest.Kind == wire.TypeActiveMQTopic && strings.HasPrefix(k.dest.PhysicalName, advisoryPrefix) {
			return k
		}
	}
	return nil
}

// Detach ends an attached Conn when its server connection closes: every
// waiter sees ErrConnectionLost (wrapping err when not nil).
func (c *Conn) Detach(err error) {
	if err == nil {
		c.fail(ErrConnectionLost)
		return
	}
	c.fail(fmt.Errorf("%w: %v", ErrConnectionLost, err))
}

const advisoryPrefix = "ActiveMQ.Advisory."

// BridgeAdvisory reports whether a message to d is one a network bridge
// interprets rather than forwards (ActiveMQ's NetworkBridgeFilter.
// isAdvisoryInterpretedByNetworkBridge): a consumer advisory, a virtual
// destination consumer advisory or a temporary destination advisory, or a
// composite destination that has a consumer advisory among its parts.
func BridgeAdvisory(d *wire.Destination) bool {
	if d == nil || (d.Kind != wire.TypeActiveMQTopic) {
		return false
	}
	parts := strings.Split(d.PhysicalName, ",")
	temp := true
	for _, p := range parts {
		p = strings.TrimPrefix(strings.TrimSpace(p), "topic://")
		if strings.HasPrefix(p, advisoryPrefix+"Consumer.") || strings.HasPrefix(p, advisoryPrefix+"VirtualDestination.Consumer.") {
			return true
		}
		if p != advisoryPrefix+"TempQueue" && p != advisoryPrefix+"TempTopic" {
			temp = false
		}
	}
	return temp
}
