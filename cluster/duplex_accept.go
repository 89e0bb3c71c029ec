package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/wire"
)

// The responder end of a duplex bridge: a remote broker (ActiveMQ 5.17's
// DemandForwardingBridge with duplex="true", or anything speaking as it
// does) dialled this broker and asked, in its BrokerInfo
// (duplexConnection), for this broker to serve the remote's consumers over
// the same connection. ActiveMQ's TransportConnection.processBrokerInfo
// then runs a DemandForwardingBridge whose remote is the accepted
// connection, configured from the NetworkBridgeConfiguration the
// initiator sent in BrokerInfo.networkProperties; ServeDuplex is that
// bridge. The OpenWire server hands it the client side of the accepted
// connection (client.Attach); from there it is the bridge of bridge.go:
// it subscribes to the peer's consumer advisories (which the initiator
// forwards as messages, interpreted here), keeps one local network
// subscription per conduit or per remote consumer, forwards what they
// receive with the brokerPath extended and the same TTL and loop rules,
// and stops when the connection goes.
//
// What the initiator sends this broker in the other direction needs
// nothing here: its forwarded messages, its advisory consumer and its
// acknowledgements are an ordinary client's, served by the OpenWire
// session.
//
// As ActiveMQ's TransportConnection does with its
// duplexNetworkConnectorId ("<name>@<broker id>"), a new duplex
// connection of the same connector and broker replaces an older one that
// is still up here (its peer reconnected before this broker noticed the
// old socket was dead): the older bridge stops, which frees its local
// client id, and its connection is closed.

// errReplaced ends an accepted bridge that a newer connection replaced.
var errReplaced = errors.New("replaced by a newer duplex connection of the same connector and broker")

type acceptedKey struct {
	e  *engine.Engine
	id string // "<connector name>@<broker id>"
}

type acceptedRun struct {
	stop chan struct{} // closed to ask the bridge to stop
	done chan struct{} // closed when it has
}

var (
	acceptedMu sync.Mutex
	accepted   = map[acceptedKey]*acceptedRun{}
)

// claimAccepted registers the bridge key, stopping the one that held it
// and waiting (at most dialTimeout) until it has let go.
func claimAccepted(k acceptedKey, log *slog.Logger) *acceptedRun {
	r := &acceptedRun{stop: make(chan struct{}), done: make(chan struct{})}
	acceptedMu.Lock()
	old := accepted[k]
	accepted[k] = r
	acceptedMu.Unlock()
	if old != nil {
		log.Warn("duplex bridge: stopping the older connection of the same connector and broker", "duplex_id", k.id)
		close(old.stop)
		select {
		case <-old.done:
		case <-time.After(dialTimeout):
		}
	}
	return r
}

func releaseAccepted(k acceptedKey, r *acceptedRun) {
	acceptedMu.Lock()
	if accepted[k] == r {
		delete(accepted, k)
	}
	acceptedMu.Unlock()
	close(r.done)
}

// ServeDuplex runs the reverse bridge of a duplex connection accepted by
// e's OpenWire server until rc is done; peer is the initiator's BrokerInfo.
func ServeDuplex(e *engine.Engine, log *slog.Logger, peer *wire.BrokerInfo, attach func(client.Options) (*client.Conn, error)) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if peer == nil || peer.BrokerId == nil {
		return errors.New("duplex bridge: the remote BrokerInfo has no broker id")
	}
	nc, err := duplexConnector(peer.NetworkProperties)
	if err != nil {
		return fmt.Errorf("duplex bridge from %s: %w", peer.BrokerName, err)
	}
	b := newBridge(e, nc, nil, log.With("network_connector", nc.Name, "created_by_duplex", true))
	k := acceptedKey{e: e, id: nc.Name + "@" + peer.BrokerId.Value}
	r := claimAccepted(k, b.log)
	defer releaseAccepted(k, r)
	return b.serveAccepted(peer, attach, r.stop)
}

// duplexConnector is the connector a duplex initiator describes in its
// networkProperties (NetworkBridgeConfiguration's bean properties, as
// java.util.Properties.store writes them), over ActiveMQ's defaults.
// networkTTL is not sent (the initiator removes it); consumerTTL and
// messageTTL are. Settings Wharf does not act on are ignored, as
// IntrospectionSupport ignores unknown ones.
func duplexConnector(props string) (config.NetworkConnector, error) {
	nc := config.DefaultNetworkConnector()
	m, err := config.ReadProperties(strings.NewReader(props))
	if err != nil {
		return nc, fmt.Errorf("networkProperties: %w", err)
	}
	var errs []error
	boolean := func(k string, into *bool) {
		if v, ok := m[k]; ok {
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Errorf("networkProperties %s=%q: not a boolean", k, v))
				return
			}
			*into = b
		}
	}
	integer := func(k string, into *int) {
		if v, ok := m[k]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Errorf("networkProperties %s=%q: not an integer", k, v))
				return
			}
			*into = n
		}
	}
	dests := func(k string, into *[]message.Destination) {
		v, ok := m[k]
		if !ok {
			return
		}
		// StringToListOfActiveMQDestinationConverter: "[queue://A, topic://B]".
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "[") || !strings.HasSuffix(v, "]") {
			errs = append(errs, fmt.Errorf("networkProperties %s=%q: not a [destination, ...] list", k, v))
			return
		}
		*into = nil
		for _, s := range strings.Split(v[1:len(v)-1], ",") {
			if s = strings.TrimSpace(s); s != "" {
				if i := strings.IndexByte(s, '?'); i >= 0 {
					s = s[:i] // destination options: none Wharf applies
				}
				*into = append(*into, message.ParseQualified(s, message.Queue))
			}
		}
	}
	if v := m["name"]; v != "" {
		nc.Name = v
	}
	nc.UserName, nc.Password = m["userName"], m["password"]
	boolean("conduitSubscriptions", &nc.ConduitSubscriptions)
	boolean("decreaseNetworkConsumerPriority", &nc.DecreaseNetworkConsumerPriority)
	boolean("dynamicOnly", &nc.DynamicOnly)
	boolean("staticBridge", &nc.StaticBridge)
	boolean("alwaysSyncSend", &nc.AlwaysSyncSend)
	boolean("bridgeTempDestinations", &nc.BridgeTempDestinations)
	integer("prefetchSize", &nc.PrefetchSize)
	integer("messageTTL", &nc.MessageTTL)
	integer("consumerTTL", &nc.ConsumerTTL)
	dests("dynamicallyIncludedDestinations", &nc.DynamicallyIncluded)
	dests("excludedDestinations", &nc.Excluded)
	dests("staticallyIncludedDestinations", &nc.StaticallyIncluded)
	if nc.PrefetchSize <= 0 {
		errs = append(errs, fmt.Errorf("networkProperties prefetchSize=%d: must be positive", nc.PrefetchSize))
	}
	// ActiveMQ reads a negative TTL as no limit; Wharf's bridges have
	// no such value (below 1 would forward nothing): refused, by name.
	if nc.MessageTTL < 1 || nc.ConsumerTTL < 1 {
		errs = append(errs, fmt.Errorf("networkProperties messageTTL=%d, consumerTTL=%d: Wharf takes 1 or more", nc.MessageTTL, nc.ConsumerTTL))
	}
	// This end is the reverse bridge: it runs no reverse of its own.
	nc.Duplex = false
	return nc, errors.Join(errs...)
}

// serveAccepted is bridge.connect over an accepted duplex connection:
// the same bridgeConn, with rc as its remote.
func (b *bridge) serveAccepted(bi *wire.BrokerInfo, attach func(client.Options) (*client.Conn, error), stop <-chan struct{}) error {
	nc := b.nc
	localName, localID := b.e.BrokerName(), b.e.BrokerID()
	remoteName, remoteID := bi.BrokerName, bi.BrokerId.Value
	if remoteID == localID {
		return fmt.Errorf("duplex bridge from %s: %w", remoteName, errSelf)
	}
	o := client.DefaultOptions()
	o.Username, o.Password = nc.UserName, nc.Password
	// The responder's remote client id, as the initiator's own
	// (DemandForwardingBridgeSupport.startRemoteBridge).
	o.ClientID = nc.Name + "_" + localName + "_outbound"
	o.Logger = b.log
	o.OnError = func(err error) { b.log.Warn("duplex bridge: remote broker reported an error", "err", err) }
	rc, err := attach(o)
	if err != nil {
		return fmt.Errorf("duplex bridge from %s: %w", remoteName, err)
	}
	defer rc.Close()
	lc, err := b.e.Connect(engine.Credentials{
		Username: nc.UserName, Password: nc.Password, Protocol: "network",
		ClientID: nc.Name + "_" + remoteName + "_inbound_" + localName,
	})
	if err != nil {
		return fmt.Errorf("local connection for the duplex bridge from %s: %w", remoteName, err)
	}
	bc := &bridgeConn{
		b: b, rc: rc, lc: lc, remoteName: remoteName, remoteID: remoteID,
		demands: map[string]*demand{}, byConsumer: map[string]string{},
		wake: make(chan struct{}, 1),
		log:  b.log.With("remote_broker", remoteName),
	}
	defer bc.close()
	rs, err := rc.Session(false)
	if err != nil {
		return fmt.Errorf("session on %s: %w", remoteName, err)
	}
	if bc.prod, err = rs.Producer(nil); err != nil {
		return fmt.Errorf("producer on %s: %w", remoteName, err)
	}
	var adv *client.Consumer
	if !nc.StaticBridge {
		// The initiator turns this ConsumerInfo into a subscription of
		// its own to its consumer advisories and forwards them here.
		if adv, err = rs.Consumer(wire.NewTopic(advisoryFilter(nc)), client.ConsumerOptions{Prefetch: nc.PrefetchSize}); err != nil {
			return fmt.Errorf("consumer advisories of %s: %w", remoteName, err)
		}
	}
	for _, d := range nc.StaticallyIncluded {
		if err := bc.addStatic(d); err != nil {
			return err
		}
	}
	before := b.forwarded.Load()
	bc.log.Info("network bridge started", "remote_id", remoteID, "local_broker", localName, "created_by_duplex", true,
		"conduit_subscriptions", nc.ConduitSubscriptions)
	b.acceptedAdvisory(bi, true)
	defer b.acceptedAdvisory(bi, false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 2)
	go func() { errc <- bc.forwardLoop(ctx) }()
	if adv != nil {
		go func() { errc <- bc.demandLoop(ctx, adv) }()
	}
	select {
	case err = <-errc:
	case <-rc.Done():
		err = rc.Err()
	case <-stop:
		err = errReplaced
	}
	cancel()
	bc.log.Info("network bridge stopped", "forwarded", b.forwarded.Load()-before, "created_by_duplex", true, "err", err)
	return err
}

// acceptedAdvisory is bridgeAdvisory for a bridge created by duplex
// (MBeanNetworkListener.setCreatedByDuplex): createdByDuplex true, and
// the remote address is not known here.
func (b *bridge) acceptedAdvisory(bi *wire.BrokerInfo, started bool) {
	a := &message.Advisory{Command: "BrokerInfo", Fields: message.Properties{
		{Name: "BrokerId", Value: message.StringValue(bi.BrokerId.Value)},
		{Name: "BrokerName", Value: message.StringValue(bi.BrokerName)},
		{Name: "BrokerURL", Value: message.StringValue(bi.BrokerURL)},
		{Name: "NetworkConnection", Value: message.BoolValue(true)},
	}}
	b.e.PublishAdvisory(engine.NetworkBridgeAdvisoryTopic, a,
		message.Property{Name: "started", Value: message.BoolValue(started)},
		message.Property{Name: "createdByDuplex", Value: message.BoolValue(true)})
}
