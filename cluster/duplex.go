package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/openwire/client"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// The duplex direction: this broker's consumers' demand served from the
// peer over the bridge's own connection.
//
// DEVIATION: in ActiveMQ the broker that accepts a duplex connection runs
// the reverse bridge (TransportConnection.processBrokerInfo starts a
// DemandForwardingBridge whose "remote" is the accepted connection). Here
// the initiating broker runs both directions: it watches its own consumer
// advisories and, for each demand, opens on the peer a consumer marked as
// a network one (networkSubscription, brokerPath, a NetworkBridgeFilter as
// additionalPredicate, which ActiveMQ's and Wharf's subscriptions apply),
// then moves what it receives into the local engine. The result is the
// same two-way bridge over one connection, with the same loop rules; its
// BrokerInfo does not say duplexConnection, so an ActiveMQ peer does not
// start a reverse bridge of its own as well. Announcing duplexConnection
// instead would make this end the initiator of ActiveMQ's protocol, which
// must take the acceptor's ConnectionInfo, ConsumerInfo and forwarded
// messages into its own broker (DemandForwardingBridgeSupport's
// duplexInboundLocalBroker and addConsumerInfo): a server role the client
// does not have. When this broker is the one accepting a duplex
// connection it does run the reverse bridge, as ActiveMQ does
// (duplex_accept.go).

// reverse is one connection's duplex direction.
type reverse struct {
	bc  *bridgeConn
	rs  *client.Session
	sub *engine.Subscription // the local consumer advisories

	qmu   sync.Mutex
	queue []engine.Delivery
	wake  chan struct{}

	// demands and byConsumer belong to the reverse loop's goroutine.
	demands    map[string]*rdemand
	byConsumer map[string]string
}

type rdemand struct {
	k         *client.Consumer
	cancel    context.CancelFunc
	consumers map[string]struct{}
	path      []string
}

// Deliver queues a local advisory (engine.Sink).
func (r *reverse) Deliver(d engine.Delivery) {
	r.qmu.Lock()
	r.queue = append(r.queue, d)
	r.qmu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// startReverse subscribes to this broker's consumer advisories.
func (bc *bridgeConn) startReverse() (*reverse, error) {
	rs, err := bc.rc.Session(false)
	if err != nil {
		return nil, fmt.Errorf("duplex session on %s: %w", bc.remoteName, err)
	}
	r := &reverse{bc: bc, rs: rs, wake: make(chan struct{}, 1), demands: map[string]*rdemand{}, byConsumer: map[string]string{}}
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	r.sub, err = bc.lc.Subscribe(engine.SubSpec{
		Destination: message.TopicDest(advisoryFilter(bc.b.nc)),
		Prefetch:    1000,
		AckMode:     engine.AckIndividual,
	}, r)
	if err != nil {
		return nil, fmt.Errorf("local consumer advisories: %w", err)
	}
	return r, nil
}

// loop handles the local advisories until ctx is done.
func (r *reverse) loop(ctx context.Context) error {
	defer func() {
		for _, dm := range r.demands {
			dm.cancel()
		}
	}()
	for {
		r.qmu.Lock()
		batch := r.queue
		r.queue = nil
		r.qmu.Unlock()
		for _, d := range batch {
			if d.Msg != nil && d.Msg.Advisory != nil {
				if err := r.advisory(ctx, d.Msg.Advisory); err != nil {
					return err
				}
			}
			r.bc.lmu.Lock()
			err := r.bc.lc.Ack(d.Sub, d.ID, "")
			r.bc.lmu.Unlock()
			if err != nil {
				return err
			}
		}
		select {
		case <-r.wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func field(fs message.Properties, name string) message.Value {
	v, _ := fs.Get(name)
	return v
}

// advisory adds or removes demand for one local consumer.
func (r *reverse) advisory(ctx context.Context, a *message.Advisory) error {
	bc := r.bc
	nc := bc.b.nc
	switch a.Command {
	case "RemoveInfo":
		r.remove(field(a.Fields, "ObjectId").Str())
		return nil
	case "ConsumerInfo":
	default:
		return nil
	}
	id := field(a.Fields, "ConsumerId").Str()
	d := message.ParseQualified(field(a.Fields, "Destination").Str(), message.Queue)
	var path []string
	if p := field(a.Fields, "BrokerPath").Str(); p != "" {
		path = strings.Split(p, ",")
	}
	skip := ""
	switch {
	case d.Name == "" || d.Type.IsTemp():
		skip = "temporary destinations are not bridged"
	case engine.IsAdvisory(d):
		skip = "advisory topic"
	case field(a.Fields, "Browser").Bool():
		skip = "browser"
	case len(path) >= nc.ConsumerTTL:
		skip = fmt.Sprintf("restricted to %d network hops (consumerTTL)", nc.ConsumerTTL)
	case contains(path, bc.remoteID):
		skip = "already routed through the peer"
	case !permitted(nc, d):
		skip = "not a permitted destination"
	}
	if skip != "" {
		bc.log.Debug("duplex bridge ignores local consumer", "dest", d.String(), "consumer", id, "why", skip)
		return nil
	}
	if _, dup := r.byConsumer[id]; dup {
		return nil
	}
	localID := bc.b.e.BrokerID()
	path = append(path, localID)
	key, selector := id, field(a.Fields, "Selector").Str()
	if nc.ConduitSubscriptions {
		key, selector = d.String(), ""
	}
	dm := r.demands[key]
	if dm != nil && len(path) < len(dm.path) {
		// As a forward conduit: advertise the shortest path.
		dm.cancel()
		dm.k.Close()
		delete(r.demands, key)
		old := dm
		dm = nil
		defer func() {
			if nd := r.demands[key]; nd != nil {
				for c := range old.consumers {
					nd.consumers[c] = struct{}{}
				}
			}
		}()
	}
	if dm == nil {
		priority := int8(field(a.Fields, "Priority").Int())
		if nc.DecreaseNetworkConsumerPriority {
			priority = networkConsumerPriority
			if len(path) > 1 {
				priority -= int8(len(path) + 1)
			}
		}
		k, err := r.rs.Consumer(marshal.DestFromEngine(d), client.ConsumerOptions{
			Prefetch: nc.PrefetchSize,
			Selector: selector,
			AckMode:  client.AckIndividual,
			Network: &client.NetworkConsumer{BrokerPath: path, NetworkBrokerID: localID,
				MessageTTL: nc.MessageTTL, ConsumerTTL: nc.ConsumerTTL, Priority: priority},
		})
		if err != nil {
			var be *client.BrokerError
			if errors.As(err, &be) {
				bc.log.Warn("duplex bridge: the peer refused a consumer", "dest", d.String(), "err", err)
				return nil
			}
			return fmt.Errorf("duplex consumer on %s: %w", bc.remoteName, err)
		}
		kctx, cancel := context.WithCancel(ctx)
		dm = &rdemand{k: k, cancel: cancel, consumers: map[string]struct{}{}, path: path}
		r.demands[key] = dm
		go r.receive(kctx, k)
	}
	dm.consumers[id] = struct{}{}
	r.byConsumer[id] = key
	bc.log.Info("duplex demand added", "dest", d.String(), "consumer", id, "broker_path", strings.Join(path, ","),
		"consumers", len(dm.consumers))
	return nil
}

func (r *reverse) remove(id string) {
	key, ok := r.byConsumer[id]
	if !ok {
		return
	}
	delete(r.byConsumer, id)
	dm := r.demands[key]
	if dm == nil {
		return
	}
	delete(dm.consumers, id)
	if len(dm.consumers) > 0 {
		return
	}
	delete(r.demands, key)
	dm.cancel()
	// Unacknowledged messages go back to the peer's queue.
	dm.k.Close()
	r.bc.log.Info("duplex demand removed", "dest", marshal.DestToEngine(dm.k.Destination()).String(), "consumer", id)
}

// receive moves what the peer dispatches to k into the local engine, and
// acknowledges each message to the peer once the engine has it (stored,
// for a persistent one).
func (r *reverse) receive(ctx context.Context, k *client.Consumer) {
	bc := r.bc
	for {
		w, err := k.Receive(ctx)
		if err != nil {
			return
		}
		// configureMessage: the path grows by the peer.
		path := make([]*wire.BrokerId, 0, len(w.BrokerPath)+1)
		path = append(path, w.BrokerPath...)
		w.BrokerPath = append(path, &wire.BrokerId{Value: bc.remoteID})
		w.TransactionId = nil
		m, err := marshal.ToEngine(w)
		if err != nil {
			bc.log.Warn("duplex bridge cannot convert a message", "err", err)
			continue
		}
		done := make(doneCompletion, 1)
		bc.lmu.Lock()
		err = bc.lc.Send(m, "", done, 0)
		bc.lmu.Unlock()
		if err == nil {
			select {
			case err = <-done:
			case <-ctx.Done():
				return
			}
		}
		if err != nil {
			// Not acknowledged: the peer redelivers it after the
			// reconnect.
			bc.log.Warn("duplex bridge: this broker refused a message", "msg_id", m.ID, "err", err)
			return
		}
		if err := k.Ack(w); err != nil {
			return
		}
		bc.b.forwarded.Add(1)
	}
}

// doneCompletion is an engine.Completion that reports on a channel.
type doneCompletion chan error

func (d doneCompletion) Complete(_ uint64, err error) { d <- err }
