package cluster

import (
	"reflect"
	"strings"
	"testing"

	"wharf/engine/config"
	"wharf/engine/message"
)

// What ActiveMQ 5.17's duplex initiator sends in BrokerInfo.
// networkProperties (NetworkBridgeConfiguration's bean properties through
// java.util.Properties.store, the destination lists as
// StringToListOfActiveMQDestinationConverter writes them) becomes the
// reverse bridge's connector; the rest keeps ActiveMQ's defaults.
func TestDuplexConnectorFromNetworkProperties(t *testing.T) {
	props := `#
#Thu Dec 03 09:30:00 UTC 2026
suppressDuplicateQueueSubscriptions=false
conduitSubscriptions=false
decreaseNetworkConsumerPriority=true
userName=bridge
password=s\=cret
name=dup
brokerName=A
duplex=true
prefetchSize=500
consumerTTL=2
messageTTL=3
alwaysSyncSend=true
bridgeTempDestinations=false
dynamicallyIncludedDestinations=[queue\://ORDERS.>, topic\://PRICES]
excludedDestinations=[queue\://ORDERS.SECRET?consumer.prefetchSize\=1]
destinationFilter=ActiveMQ.Advisory.Consumer.Queue.ORDERS.>,ActiveMQ.Advisory.Consumer.Topic.PRICES
brokerURL=tcp\://a\:61616
`
	nc, err := duplexConnector(props)
	if err != nil {
		t.Fatal(err)
	}
	want := config.DefaultNetworkConnector()
	want.Name = "dup"
	want.ConduitSubscriptions = false
	want.DecreaseNetworkConsumerPriority = true
	want.UserName, want.Password = "bridge", "s=cret"
	want.PrefetchSize, want.ConsumerTTL, want.MessageTTL = 500, 2, 3
	want.AlwaysSyncSend = true
	want.BridgeTempDestinations = false
	want.DynamicallyIncluded = []message.Destination{{Type: message.Queue, Name: "ORDERS.>"}, {Type: message.Topic, Name: "PRICES"}}
	want.Excluded = []message.Destination{{Type: message.Queue, Name: "ORDERS.SECRET"}}
	if !reflect.DeepEqual(nc, want) {
		t.Fatalf("connector\n%+v\nwant\n%+v", nc, want)
	}
	if got := advisoryFilter(nc); got != "ActiveMQ.Advisory.Consumer.Queue.ORDERS.>,ActiveMQ.Advisory.Consumer.Topic.PRICES" {
		t.Fatalf("advisory filter %q", got)
	}

	// Nothing sent: ActiveMQ's defaults, and no reverse of the reverse.
	nc, err = duplexConnector("")
	if err != nil {
		t.Fatal(err)
	}
	if def := config.DefaultNetworkConnector(); !reflect.DeepEqual(nc, def) {
		t.Fatalf("connector %+v, want the defaults %+v", nc, def)
	}

	// Bad values are named.
	_, err = duplexConnector("conduitSubscriptions=maybe\nprefetchSize=x\nexcludedDestinations=queue://A\nmessageTTL=-1\n")
	for _, want := range []string{"conduitSubscriptions", "prefetchSize", "excludedDestinations", "messageTTL=-1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}
