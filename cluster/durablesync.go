package cluster

import (
	"context"
	"strconv"
	"strings"

	"wharf/engine/config"
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// syncDurableSubs and <durableDestinations>, as ActiveMQ 5.17 has them:
//
//   - The bridge's BrokerInfo carries its connector's settings in
//     networkProperties (syncDurableSubs, conduitSubscriptions,
//     dynamicallyIncludedDestinations...), as DemandForwardingBridgeSupport
//     writes them. A peer that reads syncDurableSubs=true (ActiveMQ's
//     TransportConnection, Wharf's OpenWire server) answers with a
//     BrokerSubscriptionInfo: its durable subscriptions on the bridge's
//     dynamically included topics, online or not.
//   - With syncDurableSubs, conduitSubscriptions and not dynamicOnly, the
//     bridge serves each of those (not the peer's own NC-DS_ subscriptions
//     for this connector) as the demand of a durable subscriber, so what
//     is published here reaches the peer's offline durable subscriptions
//     without waiting for their subscribers; then it destroys each of its
//     NC-DS_ subscriptions on a dynamically included topic for which the
//     peer has no durable subscription left (DemandForwardingBridgeSupport
//     cleanupDurableSub).
//   - <durableDestinations>: at bridge start, before any demand, the
//     NC-DS_ subscription of each listed topic that exists here from an
//     earlier run (of this connector's local client id) is re-attached,
//     so its backlog is forwarded at once
//     (DurableConduitBridge.setupStaticDestinations); with syncDurableSubs
//     one on a topic the connector no longer permits is destroyed instead.

// networkProperties are the connector's settings for the BrokerInfo.
func networkProperties(nc config.NetworkConnector, brokerName string) string {
	b := strconv.FormatBool
	props := map[string]string{
		"name":                                nc.Name,
		"brokerName":                          brokerName,
		"conduitSubscriptions":                b(nc.ConduitSubscriptions),
		"syncDurableSubs":                     b(nc.SyncDurableSubs),
		"dynamicOnly":                         b(nc.DynamicOnly),
		"decreaseNetworkConsumerPriority":     b(nc.DecreaseNetworkConsumerPriority),
		"duplex":                              b(nc.Duplex),
		"bridgeTempDestinations":              b(nc.BridgeTempDestinations),
		"prefetchSize":                        strconv.Itoa(nc.PrefetchSize),
		"messageTTL":                          strconv.Itoa(nc.MessageTTL),
		"consumerTTL":                         strconv.Itoa(nc.ConsumerTTL),
		"alwaysSyncSend":                      b(nc.AlwaysSyncSend),
		"staticBridge":                        b(nc.StaticBridge),
		"suppressDuplicateQueueSubscriptions": b(nc.SuppressDuplicateQueueSubscriptions),
		"suppressDuplicateTopicSubscriptions": b(nc.SuppressDuplicateTopicSubscriptions),
	}
	if len(nc.DynamicallyIncluded) > 0 {
		props["dynamicallyIncludedDestinations"] = marshal.DestinationList(nc.DynamicallyIncluded)
	}
	if len(nc.StaticallyIncluded) > 0 {
		props["staticallyIncludedDestinations"] = marshal.DestinationList(nc.StaticallyIncluded)
	}
	return marshal.NetworkProperties(props)
}

// localClientID is the bridge's local connection's client id, the owner
// of its NC-DS_ subscriptions.
func (bc *bridgeConn) localClientID() string {
	return bc.b.nc.Name + "_" + bc.remoteName + "_inbound_" + bc.b.e.BrokerName()
}

// restoreDurables re-attaches the NC-DS_ subscriptions of the durable
// destinations (before the advisories are read).
func (bc *bridgeConn) restoreDurables() {
	nc := bc.b.nc
	if nc.DynamicOnly || len(nc.DurableDestinations) == 0 {
		return
	}
	existing := map[string]bool{}
	for _, s := range bc.b.e.DurableSubs(bc.localClientID()) {
		existing[s.Key.Name] = true
	}
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	for _, d := range nc.DurableDestinations {
		name := bc.durableName(d)
		if !existing[name] {
			continue
		}
		if !permitted(nc, d) {
			if nc.SyncDurableSubs {
				if err := bc.lc.Unsubscribe(name); err != nil {
					bc.log.Warn("network bridge: removing a durable subscription no longer permitted failed", "subscription", name, "err", err)
				} else {
					bc.log.Info("network durable demand removed", "dest", d.String(), "subscription", name, "why", "not a permitted destination")
				}
			}
			continue
		}
		key := durableKey(nc, d)
		if bc.demands[key] != nil {
			continue
		}
		path := []string{bc.remoteID}
		sub, err := bc.subscribe(d, "", 0, path, name, nil)
		if err != nil {
			bc.log.Warn("network bridge cannot restore a durable subscription", "subscription", name, "err", err)
			continue
		}
		bc.demands[key] = &demand{sub: sub, consumers: map[string]struct{}{}, path: path, durableName: name, durables: map[durableRef]struct{}{}}
		bc.log.Info("network durable demand restored", "dest", d.String(), "subscription", name)
	}
}

// syncLoop waits for the peer's BrokerSubscriptionInfo and applies it.
func (bc *bridgeConn) syncLoop(ctx context.Context, in <-chan *wire.BrokerSubscriptionInfo) error {
	select {
	case <-ctx.Done():
		return nil
	case bsi := <-in:
		bc.syncDurables(bsi)
	}
	<-ctx.Done()
	return nil
}

// syncDurables serves the peer's durable subscriptions and drops the
// NC-DS_ subscriptions it no longer has.
func (bc *bridgeConn) syncDurables(bsi *wire.BrokerSubscriptionInfo) {
	nc := bc.b.nc
	if !nc.SyncDurableSubs || !nc.ConduitSubscriptions || nc.DynamicOnly {
		bc.log.Debug("network bridge ignores the peer's durable subscriptions", "sync_durable_subs", nc.SyncDurableSubs)
		return
	}
	n := 0
	for i, ci := range bsi.SubscriptionInfos {
		if ci == nil || ci.Destination == nil {
			continue
		}
		d := marshal.DestToEngine(ci.Destination)
		if (ci.SubscriptionName != "" && bc.isDirectBridgeConsumer(ci)) || !marshal.MatchesIncluded(nc.DynamicallyIncluded, d) {
			continue
		}
		c := *ci
		if c.ConsumerId == nil {
			c.ConsumerId = &wire.ConsumerId{ConnectionId: "durable-sync:" + bsi.BrokerName, SessionId: 1, Value: int64(i + 1)}
		}
		id := c.ConsumerId.String()
		bc.lmu.Lock()
		_, before := bc.byConsumer[id]
		bc.lmu.Unlock()
		if err := bc.addDemand(&c); err != nil {
			bc.log.Warn("network bridge cannot serve a durable subscription of the peer", "subscription", c.SubscriptionName, "err", err)
			continue
		}
		if !before {
			// The entry stands for the subscription, not a consumer: no
			// RemoveInfo will come for it.
			bc.lmu.Lock()
			if key, ok := bc.byConsumer[id]; ok {
				delete(bc.byConsumer, id)
				if dm := bc.demands[key]; dm != nil {
					delete(dm.consumers, id)
				}
			}
			bc.lmu.Unlock()
		}
		n++
	}
	bc.log.Info("network bridge synchronised durable subscriptions", "remote_broker", bsi.BrokerName, "subscriptions", n)
	// cleanupDurableSub: NC-DS_ subscriptions on included topics that
	// serve no remote durable subscription any more.
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	for key, dm := range bc.demands {
		if dm.durableName == "" || dm.static || len(dm.durables) > 0 || len(dm.consumers) > 0 {
			continue
		}
		d := dm.sub.Spec().Destination
		if !marshal.MatchesIncluded(nc.DynamicallyIncluded, d) {
			continue
		}
		delete(bc.demands, key)
		dm.closed = true
		if err := bc.lc.CloseSubscription(dm.sub); err != nil {
			bc.log.Warn("network demand: closing the local subscription failed", "err", err)
		}
		if err := bc.lc.Unsubscribe(dm.durableName); err != nil {
			bc.log.Warn("network demand: removing the local durable subscription failed", "subscription", dm.durableName, "err", err)
		}
		bc.log.Info("network durable demand removed", "dest", d.String(), "subscription", dm.durableName, "why", "the peer has no durable subscription for it (syncDurableSubs)")
	}
}

// isDirectBridgeConsumer: one of the peer's NC-DS_ subscriptions made by
// a connector of this name (the peer's own bridge back here).
func (bc *bridgeConn) isDirectBridgeConsumer(ci *wire.ConsumerInfo) bool {
	return strings.HasPrefix(ci.SubscriptionName, durableSubPrefix) &&
		(ci.ClientId == "" || strings.HasPrefix(ci.ClientId, bc.b.nc.Name))
}

// localSubscriptionInfo is this broker's BrokerSubscriptionInfo for the
// connector: its durable subscriptions on the dynamically included
// topics (NetworkBridgeUtils.getBrokerSubscriptionInfo).
func (b *bridge) localSubscriptionInfo() *wire.BrokerSubscriptionInfo {
	var subs []marshal.DurableSub
	for _, d := range b.e.AllDurableSubs() {
		subs = append(subs, marshal.DurableSub{ClientID: d.Key.ClientID, Name: d.Key.Name, Selector: d.Selector, Destination: d.Destination, NoLocal: d.NoLocal})
	}
	return marshal.BrokerSubscriptionInfo(b.e.BrokerID(), b.e.BrokerName(), subs, b.nc.DynamicallyIncluded)
}
