package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// networkConsumerPriority is ActiveMQ's ConsumerInfo.NETWORK_CONSUMER_PRIORITY,
// the base of a bridge consumer's priority with
// decreaseNetworkConsumerPriority.
const networkConsumerPriority = -5

// errSelf is a bridge's peer being its own broker.
var errSelf = errors.New("a bridge to itself is refused")

// dialTimeout bounds one connection attempt (TCP, handshake, BrokerInfo).
const dialTimeout = 10 * time.Second

// bridge is one network connector's bridge to one peer: it connects,
// serves the peer's demand until the connection fails, and reconnects.
// The peer is one address (static:, multicast://), or the brokers of a
// master/slave pair (masterslave:), of which the bridge connects to the
// first that accepts: a slave of a shared store has no listener.
type bridge struct {
	e     *engine.Engine
	nc    config.NetworkConnector
	addrs []string
	log   *slog.Logger
	// forwarded counts the messages sent to the peer, over every
	// connection.
	forwarded atomic.Int64
	status    bridgeStatus // for the views (registry.go)
}

func newBridge(e *engine.Engine, nc config.NetworkConnector, addrs []string, log *slog.Logger) *bridge {
	return &bridge{e: e, nc: nc, addrs: addrs, log: log}
}

// dial connects to the first of b.addrs that accepts, in order (ActiveMQ's
// MasterSlaveDiscoveryAgent bridges over failover:(...)?randomize=false),
// and returns it with the address.
func (b *bridge) dial(ctx context.Context, o client.Options) (*client.Conn, string, error) {
	var errs []error
	for _, a := range b.addrs {
		rc, err := client.Dial(ctx, a, o)
		if err == nil {
			return rc, a, nil
		}
		errs = append(errs, fmt.Errorf("connect to %s: %w", a, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "", errors.Join(errs...)
}

// run connects and reconnects until ctx is done or the reconnect
// attempts are spent (SimpleDiscoveryAgent's back-off).
func (b *bridge) run(ctx context.Context) {
	nc := b.nc
	delay := nc.InitialReconnectDelay
	failures := 0
	for {
		connected, err := b.connect(ctx)
		b.failed(err)
		if ctx.Err() != nil {
			return
		}
		if errors.Is(err, errSelf) {
			// A multicast connector hearing another connector of its
			// own broker: nothing to retry.
			b.log.Info("network bridge not started", "err", err)
			return
		}
		if connected {
			// A connection that was up starts the back-off afresh.
			failures, delay = 0, nc.InitialReconnectDelay
		}
		failures++
		if nc.MaxReconnectAttempts > 0 && failures > nc.MaxReconnectAttempts {
			b.log.Error("network bridge gave up: reconnect attempts exhausted",
				"attempts", nc.MaxReconnectAttempts, "err", err)
			return
		}
		b.log.Warn("network bridge failed, reconnecting", "err", err, "attempt", failures, "retry_in", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if nc.UseExponentialBackOff {
			delay *= time.Duration(nc.BackOffMultiplier)
			if delay > nc.MaxReconnectDelay || delay <= 0 {
				delay = nc.MaxReconnectDelay
			}
		}
	}
}

// connect runs one connection to the peer until it fails or ctx is done;
// connected says whether the bridge got as far as serving demand.
func (b *bridge) connect(ctx context.Context) (connected bool, err error) {
	nc := b.nc
	localName, localID := b.e.BrokerName(), b.e.BrokerID()
	o := client.DefaultOptions()
	o.Username, o.Password = nc.UserName, nc.Password
	// DemandForwardingBridgeSupport's remote client id.
	o.ClientID = nc.Name + "_" + localName + "_outbound"
	o.DialTimeout = dialTimeout
	o.BrokerInfo = &wire.BrokerInfo{
		BrokerId:          &wire.BrokerId{Value: localID},
		BrokerName:        localName,
		NetworkConnection: true,
		NetworkProperties: networkProperties(nc, localName),
	}
	if nc.SyncDurableSubs {
		// This broker's durable subscriptions, after the BrokerInfo, as
		// ActiveMQ's bridge sends them (the peer uses them only when it
		// runs a duplex bridge back, which Wharf's peers do not ask for).
		o.BrokerSubscriptionInfo = b.localSubscriptionInfo()
	}
	// The peer's BrokerSubscriptionInfo may come before Dial returns
	// (durablesync.go).
	bsiCh := make(chan *wire.BrokerSubscriptionInfo, 1)
	o.OnCommand = func(ds wire.DataStructure) {
		if x, ok := ds.(*wire.BrokerSubscriptionInfo); ok {
			select {
			case bsiCh <- x:
			default:
			}
		}
	}
	o.Logger = b.log
	o.OnError = func(err error) { b.log.Warn("network bridge: remote broker reported an error", "err", err) }
	rc, peer, err := b.dial(ctx, o)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	bi := rc.BrokerInfo()
	if bi == nil || bi.BrokerId == nil {
		return false, fmt.Errorf("%s sent no broker id in its BrokerInfo", peer)
	}
	remoteName, remoteID := bi.BrokerName, bi.BrokerId.Value
	if remoteID == localID {
		return false, fmt.Errorf("%s is this broker (%s): %w", peer, localName, errSelf)
	}
	lc, err := b.e.Connect(engine.Credentials{
		Username: nc.UserName, Password: nc.Password, Protocol: "network",
		ClientID: nc.Name + "_" + remoteName + "_inbound_" + localName,
	})
	if err != nil {
		return false, fmt.Errorf("local connection for the bridge to %s: %w", remoteName, err)
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
		return false, fmt.Errorf("session on %s: %w", remoteName, err)
	}
	if bc.prod, err = rs.Producer(nil); err != nil {
		return false, fmt.Errorf("producer on %s: %w", remoteName, err)
	}
	var adv *client.Consumer
	if !nc.StaticBridge {
		if adv, err = rs.Consumer(wire.NewTopic(advisoryFilter(nc)), client.ConsumerOptions{}); err != nil {
			return false, fmt.Errorf("consumer advisories of %s: %w", remoteName, err)
		}
	}
	for _, d := range nc.StaticallyIncluded {
		if err := bc.addStatic(d); err != nil {
			return false, err
		}
	}
	bc.restoreDurables()
	before := b.forwarded.Load()
	bc.log.Info("network bridge started", "remote_id", remoteID, "remote_addr", peer, "local_broker", localName, "duplex", nc.Duplex)
	defer b.up(bc, peer, bi)()
	b.bridgeAdvisory(bi, peer, true)
	defer b.bridgeAdvisory(bi, peer, false)
	var rev *reverse
	if nc.Duplex {
		if rev, err = bc.startReverse(); err != nil {
			return false, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 4)
	go func() { errc <- bc.forwardLoop(ctx) }()
	go func() { errc <- bc.syncLoop(ctx, bsiCh) }()
	if adv != nil {
		go func() { errc <- bc.demandLoop(ctx, adv) }()
	}
	if rev != nil {
		go func() { errc <- rev.loop(ctx) }()
	}
	select {
	case err = <-errc:
	case <-rc.Done():
		err = rc.Err()
	case <-ctx.Done():
		err = ctx.Err()
	}
	cancel()
	bc.log.Info("network bridge stopped", "forwarded", b.forwarded.Load()-before, "err", err)
	return true, err
}

// advisoryFilter is the advisory topic the bridge subscribes to: every
// consumer's, or those of the dynamically included destinations only
// (ActiveMQ 5.6+).
func advisoryFilter(nc config.NetworkConnector) string {
	var names []string
	if f := nc.DestinationFilter; f != "" {
		// Written by the user: NetworkBridgeConfiguration.getDestinationFilter
		// puts the consumer advisory prefix in front of the whole value
		// unless it starts with it, and adds nothing for virtual
		// destinations. Seed 001's "NO_DESTINATION" names an advisory
		// topic nothing is published on: no demand at all.
		if !strings.HasPrefix(f, engine.AdvisoryPrefix+"Consumer.") {
			f = engine.AdvisoryPrefix + "Consumer." + f
		}
		names = append(names, f)
	} else if len(nc.DynamicallyIncluded) == 0 {
		names = append(names, engine.AdvisoryPrefix+"Consumer.>")
		if nc.UseVirtualDestSubs {
			names = append(names, engine.VirtualDestConsumerAdvisoryPrefix+">")
		}
	}
	for _, d := range nc.DynamicallyIncluded {
		if nc.DestinationFilter != "" {
			break
		}
		kind := "Queue."
		if d.Type.IsTopic() {
			kind = "Topic."
		}
		names = append(names, engine.AdvisoryPrefix+"Consumer."+kind+d.Name)
		if nc.UseVirtualDestSubs {
			// NetworkBridgeConfiguration.getDestinationFilter.
			names = append(names, engine.VirtualDestConsumerAdvisoryPrefix+kind+d.Name)
		}
	}
	if nc.BridgeTempDestinations {
		// temp.go. The consumers on them are under Consumer.>; with
		// dynamically included destinations, as in ActiveMQ, only those
		// destinations' consumer advisories are subscribed.
		names = append(names, tempAdvisoryTopics...)
	}
	return strings.Join(names, ",")
}

// bridgeConn is one connection of a bridge: the remote client, the local
// engine connection and the demand they serve.
type bridgeConn struct {
	b                    *bridge
	rc                   *client.Conn
	prod                 *client.Producer
	remoteName, remoteID string
	log                  *slog.Logger

	// lmu guards lc (engine.Conn wants one caller at a time), demands
	// and byConsumer; the forwarder holds it across one forward so that
	// a demand is never closed under a delivery being forwarded.
	lmu     sync.Mutex
	lc      *engine.Conn
	demands map[string]*demand // by key: the destination (conduit) or the remote consumer id
	// byConsumer maps a remote consumer id to its demand's key.
	byConsumer map[string]string
	// temps are the peer's temporary destinations made here (temp.go).
	temps []message.Destination

	// qmu guards queue: deliveries waiting to be forwarded, bounded by
	// the subscriptions' prefetch windows.
	qmu   sync.Mutex
	queue []engine.Delivery
	wake  chan struct{}

	counts bridgeCounts // registry.go
}

// demand is one local network subscription and the remote consumers it
// serves.
type demand struct {
	sub       *engine.Subscription
	consumers map[string]struct{}
	// path is the brokerPath the subscription advertises.
	path   []string
	static bool
	closed bool
	// durableName is the local durable subscription's name ("NC-DS_...")
	// when the demand serves remote durable subscriptions (durable.go);
	// durables are those. The demand stays while one remains, whether
	// its subscriber is online or not.
	durableName string
	durables    map[durableRef]struct{}
}

// Deliver queues a delivery for the forwarder (engine.Sink: never blocks).
func (bc *bridgeConn) Deliver(d engine.Delivery) {
	bc.qmu.Lock()
	bc.queue = append(bc.queue, d)
	bc.qmu.Unlock()
	select {
	case bc.wake <- struct{}{}:
	default:
	}
}

func (bc *bridgeConn) close() {
	registryOf(bc.b.e).forget(bc)
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	for _, d := range bc.demands {
		d.closed = true
	}
	// Unacknowledged queue deliveries return to their queues.
	bc.lc.Close()
}

// addStatic subscribes to a statically included destination.
func (bc *bridgeConn) addStatic(d message.Destination) error {
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	key := "static:" + d.String()
	if bc.demands[key] != nil {
		return nil
	}
	sub, err := bc.subscribe(d, "", 0, []string{bc.remoteID}, "", nil)
	if err != nil {
		return fmt.Errorf("statically included %s: %w", d, err)
	}
	bc.demands[key] = &demand{sub: sub, consumers: map[string]struct{}{}, static: true, durables: map[durableRef]struct{}{}}
	bc.log.Info("network bridge forwards statically", "dest", d.String())
	return nil
}

// subscribe makes a local network subscription (lmu held); consumers are
// the original consumers it serves (its advisory's networkConsumerPath).
func (bc *bridgeConn) subscribe(d message.Destination, selector string, priority int8, path []string, durableName string, consumers []string) (*engine.Subscription, error) {
	nc := bc.b.nc
	return bc.lc.Subscribe(engine.SubSpec{
		Destination: d,
		Selector:    selector,
		Prefetch:    nc.PrefetchSize,
		AckMode:     engine.AckIndividual,
		Priority:    bc.demandPriority(priority, path),
		DurableName: durableName,
		Network:     &engine.NetworkSpec{BrokerPath: path, RemoteBrokerID: bc.remoteID, MessageTTL: nc.MessageTTL, ConsumerPath: consumers},
	}, bc)
}

// demandLoop reads the peer's consumer advisories.
func (bc *bridgeConn) demandLoop(ctx context.Context, adv *client.Consumer) error {
	for {
		m, err := adv.Receive(ctx)
		if err != nil {
			return fmt.Errorf("consumer advisories: %w", err)
		}
		virtual := m.Destination != nil && strings.HasPrefix(m.Destination.PhysicalName, engine.VirtualDestConsumerAdvisoryPrefix)
		switch ds := m.DataStructure.(type) {
		case *wire.ConsumerInfo:
			if virtual {
				ds = virtualDemand(ds)
			}
			if err := bc.addDemand(ds); err != nil {
				return err
			}
		case *wire.RemoveInfo:
			if id, ok := ds.ObjectId.(*wire.ConsumerId); ok {
				if virtual {
					id = virtualConsumerID(id)
				}
				bc.removeDemand(id.String())
			}
		case *wire.DestinationInfo:
			bc.tempAdvisory(ds)
		case *wire.RemoveSubscriptionInfo:
			bc.removeDurableDemand(ds.ClientId, ds.SubscriptionName)
		}
	}
}

// addDemand serves a remote consumer, unless the connector's rules say
// not to (DemandForwardingBridgeSupport.serviceRemoteConsumerAdvisory).
func (bc *bridgeConn) addDemand(ci *wire.ConsumerInfo) error {
	nc := bc.b.nc
	if ci.ConsumerId == nil || ci.Destination == nil {
		return nil
	}
	d := marshal.DestToEngine(ci.Destination)
	id := ci.ConsumerId.String()
	path := make([]string, 0, len(ci.BrokerPath)+1)
	for _, p := range ci.BrokerPath {
		if p != nil {
			path = append(path, p.Value)
		}
	}
	skip := ""
	switch {
	case d.Type.IsTemp() && !nc.BridgeTempDestinations:
		skip = "temporary destinations are not bridged (bridgeTempDestinations)"
	case engine.IsAdvisory(d):
		skip = "advisory topic"
	case ci.Browser:
		skip = "browser"
	case len(path) >= nc.ConsumerTTL:
		skip = fmt.Sprintf("restricted to %d network hops (consumerTTL)", nc.ConsumerTTL)
	case contains(path, bc.b.e.BrokerID()):
		skip = "already routed through this broker"
	case !d.Type.IsTemp() && !permitted(nc, d):
		skip = "not a permitted destination"
	}
	if skip != "" {
		bc.log.Debug("network bridge ignores remote consumer", "dest", d.String(), "consumer", id, "why", skip)
		return nil
	}
	path = append(path, bc.remoteID)
	durable := d.Type.IsTopic() && ci.SubscriptionName != ""
	var cl *claim
	if bc.suppresses(d) && !durable {
		// suppress.go. Durable demand is never suppressed here (ActiveMQ
		// keeps a duplicate of an inactive durable subscription).
		reg := registryOf(bc.b.e)
		reg.mu.Lock()
		defer reg.mu.Unlock()
		cl = &claim{bc: bc, consumer: id, dest: d.String(), origins: origins(ci), priority: bc.demandPriority(ci.Priority, path)}
		if !reg.checkDuplicate(bc, cl) {
			return nil
		}
		defer func() {
			// Runs after lmu's release (defers run last first).
			bc.lmu.Lock()
			_, served := bc.byConsumer[id]
			bc.lmu.Unlock()
			if served {
				reg.claim(cl)
			}
		}()
	}
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	if _, dup := bc.byConsumer[id]; dup {
		return nil // replayed
	}
	key := id
	selector := ci.Selector
	if nc.ConduitSubscriptions {
		// A conduit serves every consumer of the destination, so it
		// cannot apply one's selector (seed 001).
		key, selector = d.String(), ""
	}
	if durable {
		// DurableConduitBridge: one durable subscription per topic,
		// without selector, whatever conduitSubscriptions says.
		key, selector = durableKey(nc, d), ""
	}
	if bc.demands["static:"+d.String()] != nil {
		key, durable = "static:"+d.String(), false // forwarded already
	}
	dm := bc.demands[key]
	if dm != nil && !dm.static && (len(path) < len(dm.path) || (durable && dm.durableName == "")) {
		// A conduit advertises the shortest path of the consumers it
		// serves: were it to keep a longer one (demand that came round a
		// ring through this very broker, say), the brokers on that path
		// would refuse it as a loop and never forward for the nearer
		// consumer. Re-subscribe with the shorter path; queue messages
		// the old subscription held go back to the queue.
		if err := bc.lc.CloseSubscription(dm.sub); err != nil {
			bc.log.Warn("network demand: closing the local subscription failed", "err", err)
		}
		delete(bc.demands, key)
		old := dm
		dm = nil
		defer func() {
			if nd := bc.demands[key]; nd != nil {
				for c := range old.consumers {
					nd.consumers[c] = struct{}{}
				}
				for s := range old.durables {
					nd.durables[s] = struct{}{}
				}
			}
		}()
		if old.durableName != "" {
			durable = true
		}
	}
	if dm == nil {
		durableName := ""
		if durable {
			durableName = bc.durableName(d)
		}
		sub, err := bc.subscribe(d, selector, ci.Priority, path, durableName, origins(ci))
		if err != nil {
			// A destination the local broker refuses is the peer's
			// consumer's problem, not the bridge's.
			bc.log.Warn("network bridge cannot serve remote consumer", "dest", d.String(), "consumer", id, "err", err)
			return nil
		}
		dm = &demand{sub: sub, consumers: map[string]struct{}{}, path: path, durableName: durableName, durables: map[durableRef]struct{}{}}
		bc.demands[key] = dm
	}
	if durable {
		dm.durables[durableRef{ci.ClientId, ci.SubscriptionName}] = struct{}{}
	}
	dm.consumers[id] = struct{}{}
	bc.byConsumer[id] = key
	// One line per remote consumer served; consumers counts those the
	// local subscription serves (more than 1: a conduit).
	bc.log.Info("network demand added", "dest", d.String(), "consumer", id, "broker_path", strings.Join(path, ","),
		"consumers", len(dm.consumers), "durable", dm.durableName)
	return nil
}

func (bc *bridgeConn) removeDemand(id string) {
	reg := registryOf(bc.b.e)
	reg.mu.Lock()
	defer reg.mu.Unlock()
	reg.unclaim(bc, id)
	bc.removeDemandLocked(id)
}

// removeDemandLocked drops remote consumer id's demand (the registry's mu
// held, not lmu).
func (bc *bridgeConn) removeDemandLocked(id string) {
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	key, ok := bc.byConsumer[id]
	if !ok {
		return
	}
	delete(bc.byConsumer, id)
	dm := bc.demands[key]
	if dm == nil {
		return
	}
	delete(dm.consumers, id)
	if len(dm.consumers) > 0 || dm.static || len(dm.durables) > 0 {
		// A durable demand outlives its subscriber's connection: the
		// peer keeps what is forwarded for it (durable.go).
		return
	}
	delete(bc.demands, key)
	dm.closed = true
	if err := bc.lc.CloseSubscription(dm.sub); err != nil {
		bc.log.Warn("network demand: closing the local subscription failed", "err", err)
	}
	if dm.durableName != "" {
		// Its remote durable subscriptions are gone too.
		if err := bc.lc.Unsubscribe(dm.durableName); err != nil {
			bc.log.Warn("network demand: removing the local durable subscription failed", "subscription", dm.durableName, "err", err)
		}
	}
	bc.log.Info("network demand removed", "dest", dm.sub.Spec().Destination.String(), "consumer", id)
}

// forwardLoop sends the queued deliveries to the peer, in order.
func (bc *bridgeConn) forwardLoop(ctx context.Context) error {
	for {
		bc.qmu.Lock()
		batch := bc.queue
		bc.queue = nil
		bc.qmu.Unlock()
		if len(batch) > 0 {
			if err := bc.forwardBatch(ctx, batch); err != nil {
				// What is left of the batch goes back to its queues when
				// the local connection closes.
				return err
			}
		}
		select {
		case <-bc.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// maxInFlight bounds the synchronous forwards written to the peer and not
// yet answered; the subscriptions' prefetch windows bound a batch too.
const maxInFlight = 1000

// forwardTimeout bounds the wait for the peer's answers to a batch.
const forwardTimeout = 30 * time.Second

// inFlight is a delivery forwarded synchronously, its answer awaited.
type inFlight struct {
	d engine.Delivery
	p *client.Pending
}

// forwardBatch forwards a batch of deliveries, pipelined as ActiveMQ's
// DemandForwardingBridgeSupport does with remoteBroker.asyncRequest: every
// synchronous forward (a persistent message, or any with alwaysSyncSend)
// is written without waiting, and each is acknowledged locally when the
// peer's Response comes; an asynchronous one is acknowledged once written.
// lmu is held for the whole batch, so that a demand is never closed under
// a delivery in flight (ActiveMQ's DemandSubscription.waitForCompletion):
// the delivery would go back to its queue after the peer had it.
func (bc *bridgeConn) forwardBatch(ctx context.Context, batch []engine.Delivery) error {
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	flight := make([]inFlight, 0, min(len(batch), maxInFlight))
	var failed error
	for _, d := range batch {
		p, err := bc.forward(d)
		if err != nil {
			failed = err
			break
		}
		if p != nil {
			flight = append(flight, inFlight{d, p})
		}
		if len(flight) == maxInFlight {
			if err := bc.settle(ctx, flight); err != nil {
				return err
			}
			flight = flight[:0]
		}
	}
	// The answers that came are acknowledged even when a later write
	// failed: those messages are on the peer.
	if err := bc.settle(ctx, flight); err != nil {
		return err
	}
	return failed
}

// forward writes one delivery to the peer (lmu held). An asynchronous one
// is acknowledged locally at once; a synchronous one is returned pending.
func (bc *bridgeConn) forward(d engine.Delivery) (*client.Pending, error) {
	if d.Msg == nil {
		return nil, nil
	}
	bc.counts.enqueued.Add(1)
	if bc.closedSub(d.Sub) {
		return nil, nil // the demand went; the engine has taken the delivery back
	}
	w, err := marshal.FromEngine(d.Msg, d.Redeliveries)
	if err != nil {
		bc.log.Warn("network bridge cannot convert a message; dropping it from the bridge", "msg_id", d.Msg.ID, "err", err)
		return nil, bc.lc.Ack(d.Sub, d.ID, "")
	}
	// configureMessage: the path grows by this broker; the id stays.
	path := make([]*wire.BrokerId, 0, len(w.BrokerPath)+1)
	path = append(path, w.BrokerPath...)
	w.BrokerPath = append(path, &wire.BrokerId{Value: bc.b.e.BrokerID()})
	if w.OriginalTransactionId == nil {
		w.OriginalTransactionId = w.TransactionId
	}
	if d.Msg.Persistent || bc.b.nc.AlwaysSyncSend {
		p, err := bc.prod.ForwardAsync(w)
		if err != nil {
			return nil, fmt.Errorf("forward %s to %s: %w", d.Msg.ID, bc.remoteName, err)
		}
		return p, nil
	}
	if err := bc.prod.Forward(ctx0, w, false); err != nil {
		return nil, fmt.Errorf("forward %s to %s: %w", d.Msg.ID, bc.remoteName, err)
	}
	bc.b.forwarded.Add(1)
	bc.counts.sent(d.Msg.Destination) // registry.go
	return nil, bc.lc.Ack(d.Sub, d.ID, "")
}

// ctx0 is the context of an asynchronous forward, which waits for nothing.
var ctx0 = context.Background()

// settle waits for the answers to the forwards in flight, in the order
// they were written, and acknowledges (or dead-letters) each locally
// (lmu held). It returns the first failure other than a refusal, after
// settling every answer that came.
func (bc *bridgeConn) settle(ctx context.Context, flight []inFlight) error {
	if len(flight) == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, forwardTimeout)
	defer cancel()
	var first error
	for _, f := range flight {
		d := f.d
		err := f.p.Wait(wctx)
		if err == nil {
			bc.b.forwarded.Add(1)
			bc.counts.sent(d.Msg.Destination) // registry.go
			if err := bc.lc.Ack(d.Sub, d.ID, ""); err != nil && first == nil {
				first = err
			}
			continue
		}
		var be *client.BrokerError
		if errors.As(err, &be) && strings.Contains(be.ClassName(), "SecurityException") {
			// The peer may not take this message (not authorized):
			// DemandForwardingBridgeSupport.serviceLocalException
			// poison-acks it, so it goes to the local dead letter queue
			// rather than block its queue or go round for ever.
			bc.log.Warn("network bridge: remote broker refused a message; it goes to the dead letter queue",
				"msg_id", d.Msg.ID, "dest", d.Msg.Destination.String(), "err", err)
			if err := bc.lc.Nack(d.Sub, d.ID, engine.NackPoison, "network bridge to "+bc.remoteName+": "+be.Message()); err != nil && first == nil {
				first = err
			}
			continue
		}
		// Any other failure ends this connection: the message returns
		// to its queue and is forwarded again after the reconnect.
		if first == nil {
			first = fmt.Errorf("forward %s to %s: %w", d.Msg.ID, bc.remoteName, err)
		}
	}
	return first
}

// closedSub reports whether sub's demand was dropped (lmu held).
func (bc *bridgeConn) closedSub(sub *engine.Subscription) bool {
	for _, dm := range bc.demands {
		if dm.sub == sub {
			return dm.closed
		}
	}
	return true
}

func contains(path []string, id string) bool {
	for _, p := range path {
		if p == id {
			return true
		}
	}
	return false
}

// permitted is isPermissableDestination: not excluded, and dynamically
// included when that list is not empty.
func permitted(nc config.NetworkConnector, d message.Destination) bool {
	for _, x := range nc.Excluded {
		if x.Type.IsTopic() == d.Type.IsTopic() && x.Matches(d) {
			return false
		}
	}
	if len(nc.DynamicallyIncluded) == 0 {
		return true
	}
	for _, x := range nc.DynamicallyIncluded {
		if x.Type.IsTopic() == d.Type.IsTopic() && x.Matches(d) {
			return true
		}
	}
	return false
}

// bridgeAdvisory publishes ActiveMQ.Advisory.NetworkBridge as
// AdvisoryBroker.networkBridgeStarted and networkBridgeStopped do: the
// remote broker's BrokerInfo, started true or false, createdByDuplex and
// the remote address.
func (b *bridge) bridgeAdvisory(bi *wire.BrokerInfo, peer string, started bool) {
	a := &message.Advisory{Command: "BrokerInfo", Fields: message.Properties{
		{Name: "BrokerId", Value: message.StringValue(bi.BrokerId.Value)},
		{Name: "BrokerName", Value: message.StringValue(bi.BrokerName)},
		{Name: "BrokerURL", Value: message.StringValue(bi.BrokerURL)},
		{Name: "NetworkConnection", Value: message.BoolValue(true)},
	}}
	b.e.PublishAdvisory(engine.NetworkBridgeAdvisoryTopic, a,
		message.Property{Name: "started", Value: message.BoolValue(started)},
		message.Property{Name: "createdByDuplex", Value: message.BoolValue(false)},
		message.Property{Name: "remoteIp", Value: message.StringValue("tcp://" + peer)})
}
