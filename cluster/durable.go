package cluster

import (
	"wharf/engine/config"
	"wharf/engine/message"
)

// Durable topic subscriptions across the network, as ActiveMQ 5.17's
// DurableConduitBridge serves them:
//
//   - A remote consumer whose ConsumerInfo names a subscription (a
//     durable subscriber on the peer) is served by a local durable
//     subscription named "NC-DS_<local broker>_<topic>", one per topic
//     and without selector, on the bridge's local connection, whose
//     client id ("<connector>_<peer>_inbound_<local broker>") is the same
//     on every connection.
//   - When the remote subscriber disconnects (RemoveInfo) the demand
//     stays: messages published here go on being forwarded, and the
//     peer's durable subscription keeps them until its subscriber comes
//     back.
//   - While the bridge itself is down (the peer restarting, the network
//     gone) the local durable subscription is offline and keeps what is
//     published here; the peer's consumer advisories, replayed on the next
//     connection, re-attach it when the remote subscriber is online and
//     the backlog is forwarded then.
//   - When the remote subscription is destroyed (a RemoveSubscriptionInfo
//     advisory: the subscriber unsubscribed) and no other remote
//     subscriber or consumer needs the topic, the local durable
//     subscription is closed and destroyed.
//
// As in ActiveMQ without syncDurableSubs, a peer's offline durable
// subscriptions are not learnt on connection: until its subscriber is
// online again, the local durable subscription stays offline and
// collects.

// durableSubPrefix is DemandForwardingBridgeSupport.DURABLE_SUB_PREFIX.
const durableSubPrefix = "NC-DS_"

// durableKey is the demand key of a topic's durable demand: the conduit's
// own key, so that one local subscription serves durable and plain
// remote consumers alike; without conduitSubscriptions a key of its own.
func durableKey(nc config.NetworkConnector, d message.Destination) string {
	if nc.ConduitSubscriptions {
		return d.String()
	}
	return "durable:" + d.String()
}

// durableName is DurableConduitBridge.getSubscriberName.
func (bc *bridgeConn) durableName(d message.Destination) string {
	return durableSubPrefix + bc.b.e.BrokerName() + "_" + d.Name
}

// durableRef names a remote durable subscription. ActiveMQ's consumer
// advisories leave ConsumerInfo's clientId empty (Wharf's fill it in), so
// an empty one matches any.
type durableRef struct{ clientID, name string }

func (r durableRef) is(clientID, name string) bool {
	return r.name == name && (r.clientID == "" || clientID == "" || r.clientID == clientID)
}

// removeDurableDemand handles the peer's RemoveSubscriptionInfo advisory:
// the remote durable subscription clientID:name is gone.
func (bc *bridgeConn) removeDurableDemand(clientID, name string) {
	bc.lmu.Lock()
	defer bc.lmu.Unlock()
	rk := clientID + ":" + name
	for key, dm := range bc.demands {
		found := false
		for r := range dm.durables {
			if r.is(clientID, name) {
				delete(dm.durables, r)
				found = true
				break
			}
		}
		if !found {
			continue
		}
		if len(dm.durables) > 0 || len(dm.consumers) > 0 || dm.static {
			return
		}
		delete(bc.demands, key)
		dm.closed = true
		dest := dm.sub.Spec().Destination.String()
		if err := bc.lc.CloseSubscription(dm.sub); err != nil {
			bc.log.Warn("network demand: closing the local subscription failed", "err", err)
		}
		if err := bc.lc.Unsubscribe(dm.durableName); err != nil {
			bc.log.Warn("network demand: removing the local durable subscription failed", "subscription", dm.durableName, "err", err)
		}
		bc.log.Info("network durable demand removed", "dest", dest, "subscription", dm.durableName, "remote_subscription", rk)
		return
	}
}
