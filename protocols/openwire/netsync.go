package openwire

import (
	"wharf/protocols/openwire/marshal"
	"wharf/protocols/openwire/wire"
)

// syncDurableSubs answers a network bridge's BrokerInfo as ActiveMQ's
// TransportConnection.processBrokerInfo does: when the bridge's
// networkProperties say syncDurableSubs=true (and the connection speaks
// OpenWire 12 or later), this broker's durable subscriptions on the
// bridge's dynamically included destinations go back in a
// BrokerSubscriptionInfo, so the bridge serves them while their
// subscribers are offline.
func (s *session) syncDurableSubs(bi *wire.BrokerInfo) {
	props := marshal.ParseNetworkProperties(bi.NetworkProperties)
	if props["syncDurableSubs"] != "true" || s.format.Version < 12 {
		return
	}
	included := marshal.ParseDestinationList(props["dynamicallyIncludedDestinations"])
	var subs []marshal.DurableSub
	for _, d := range s.srv.e.AllDurableSubs() {
		subs = append(subs, marshal.DurableSub{ClientID: d.Key.ClientID, Name: d.Key.Name, Selector: d.Selector, Destination: d.Destination, NoLocal: d.NoLocal})
	}
	bsi := marshal.BrokerSubscriptionInfo(s.srv.e.BrokerID(), s.srv.e.BrokerName(), subs, included)
	s.log.Info("network bridge: sending durable subscriptions (syncDurableSubs)", "remote_broker", bi.BrokerName, "subscriptions", len(bsi.SubscriptionInfos))
	s.send(bsi)
}
