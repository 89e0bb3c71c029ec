package marshal

import (
	"reflect"
	"testing"

	"wharf/engine/message"
	"wharf/protocols/openwire/wire"
)

// The bridge's networkProperties: what NetworkProperties writes,
// ParseNetworkProperties reads back, escapes included; and ActiveMQ's own
// text (Properties.store: a date comment, "\:" and "\=" escapes).
func TestNetworkPropertiesRoundTrip(t *testing.T) {
	props := map[string]string{
		"syncDurableSubs":                 "true",
		"dynamicallyIncludedDestinations": DestinationList([]message.Destination{message.TopicDest("T.>"), message.QueueDest("Q=1")}),
		"name":                            " lead#space",
	}
	got := ParseNetworkProperties(NetworkProperties(props))
	if !reflect.DeepEqual(got, props) {
		t.Fatalf("round trip: %q, want %q", got, props)
	}
	amq := "#\n#Thu Dec 03 09:00:00 UTC 2026\nsyncDurableSubs=true\ndynamicallyIncludedDestinations=[topic\\://NET.SYNC, topic\\://VirtualTopic.>?forceDurable\\=true]\nname=NC\n"
	p := ParseNetworkProperties(amq)
	if p["syncDurableSubs"] != "true" || p["name"] != "NC" {
		t.Fatalf("ActiveMQ's text: %q", p)
	}
	if ds := ParseDestinationList(p["dynamicallyIncludedDestinations"]); !reflect.DeepEqual(ds, []message.Destination{message.TopicDest("NET.SYNC"), message.TopicDest("VirtualTopic.>")}) {
		t.Fatalf("destinations %v", ds)
	}
}

// A BrokerSubscriptionInfo (OpenWire type 92, v12) built from durable
// subscriptions keeps those on the included destinations only, and
// survives the wire.
func TestBrokerSubscriptionInfoRoundTrip(t *testing.T) {
	subs := []DurableSub{
		{ClientID: "c1", Name: "D1", Destination: message.TopicDest("NET.SYNC"), Selector: "a = 1"},
		{ClientID: "c2", Name: "D2", Destination: message.TopicDest("OTHER")},
	}
	bsi := BrokerSubscriptionInfo("ID:b-1", "B", subs, []message.Destination{message.TopicDest("NET.>")})
	if len(bsi.SubscriptionInfos) != 1 || bsi.SubscriptionInfos[0].SubscriptionName != "D1" {
		t.Fatalf("subscriptions %+v", bsi.SubscriptionInfos)
	}
	f := wire.Format{Version: 12, TightEncodingEnabled: true}
	for _, tight := range []bool{true, false} {
		f.TightEncodingEnabled = tight
		b, err := wire.Marshal(bsi, f)
		if err != nil {
			t.Fatal(err)
		}
		ds, err := wire.Unmarshal(b, f, wire.DefaultLimits())
		if err != nil {
			t.Fatal(err)
		}
		got, ok := ds.(*wire.BrokerSubscriptionInfo)
		if !ok || got.BrokerName != "B" || got.BrokerId.Value != "ID:b-1" || len(got.SubscriptionInfos) != 1 {
			t.Fatalf("tight=%v: %+v", tight, ds)
		}
		ci := got.SubscriptionInfos[0]
		if ci.ClientId != "c1" || ci.SubscriptionName != "D1" || ci.Selector != "a = 1" || DestToEngine(ci.Destination) != message.TopicDest("NET.SYNC") {
			t.Fatalf("tight=%v: %+v", tight, ci)
		}
	}
	// Before v12 there is no such command.
	if _, err := wire.Marshal(bsi, wire.Format{Version: 11}); err == nil {
		t.Fatal("marshalled a BrokerSubscriptionInfo at v11")
	}
}

// A network consumer's networkConsumerPath survives the trip through the
// engine's advisory description both ways (duplicate suppression on the
// next broker needs it).
func TestConsumerAdvisoryNetworkConsumerPath(t *testing.T) {
	ci := &wire.ConsumerInfo{
		ConsumerId:          &wire.ConsumerId{ConnectionId: "ID:b-1:2", SessionId: 1, Value: 3},
		Destination:         DestFromEngine(message.TopicDest("T")),
		NetworkSubscription: true,
		BrokerPath:          BrokerPathFromEngine([]string{"ID:c-1"}),
		NetworkConsumerPath: []*wire.ConsumerId{{ConnectionId: "ID:c-1:5", SessionId: 1, Value: 1}},
	}
	a, err := convAdvisoryToEngine(ci, 0)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := convAdvisoryFromEngine(&message.Message{Advisory: a}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := ds.(*wire.ConsumerInfo)
	if len(got.NetworkConsumerPath) != 1 || got.NetworkConsumerPath[0].String() != "ID:c-1:5:1:1" {
		t.Fatalf("networkConsumerPath %v", got.NetworkConsumerPath)
	}
}
