package config

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
)

func netBroker(body string) string {
	return `<beans>
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="a">
` + body + `
</broker>
</beans>`
}

// The seed's "example configuration using NetworkConnector properties",
// with the discovery options of the static: section, in both forms.
func TestConfigNetworkSeedExample(t *testing.T) {
	doc := netBroker(`<networkConnectors>
      <networkConnector uri="static:(tcp://127.0.0.1:61617,tcp://h2:61618)?initialReconnectDelay=200&amp;maxReconnectDelay=5000&amp;useExponentialBackOff=false&amp;backOffMultiplier=3&amp;maxReconnectAttempts=4"
         name="bridge" duplex="true"
         conduitSubscriptions="false"
         decreaseNetworkConsumerPriority="true" networkTTL="3" consumerTTL="2" dynamicOnly="true" prefetchSize="10"
         userName="u" password="p" alwaysSyncSend="true" bridgeTempDestinations="false">
      	<dynamicallyIncludedDestinations>
      		<queue physicalName="include.test.foo"/>
      		<topic physicalName="include.test.bar"/>
      	</dynamicallyIncludedDestinations>
      	<excludedDestinations>
      		<queue physicalName="exclude.test.foo"/>
      		<topic physicalName=">"/>
      	</excludedDestinations>
        <staticallyIncludedDestinations>
      		<queue physicalName="always.include.queue"/>
      		<topic physicalName="always.include.topic"/>
      	</staticallyIncludedDestinations>
      </networkConnector>
    </networkConnectors>`)
	want := NetworkConnector{
		Name: "bridge", URI: "static:(tcp://127.0.0.1:61617,tcp://h2:61618)?initialReconnectDelay=200&maxReconnectDelay=5000&useExponentialBackOff=false&backOffMultiplier=3&maxReconnectAttempts=4",
		Discovery:             DiscoveryStatic,
		Peers:                 []string{"127.0.0.1:61617", "h2:61618"},
		InitialReconnectDelay: 200 * time.Millisecond, MaxReconnectDelay: 5 * time.Second,
		UseExponentialBackOff: false, BackOffMultiplier: 3, MaxReconnectAttempts: 4,
		Duplex: true, ConduitSubscriptions: false, MessageTTL: 3, ConsumerTTL: 2,
		DecreaseNetworkConsumerPriority: true, DynamicOnly: true, PrefetchSize: 10, AlwaysSyncSend: true,
		SuppressDuplicateTopicSubscriptions: true,
		UserName:                            "u", Password: "p",
		DynamicallyIncluded: []message.Destination{message.QueueDest("include.test.foo"), message.TopicDest("include.test.bar")},
		Excluded:            []message.Destination{message.QueueDest("exclude.test.foo"), message.TopicDest(">")},
		StaticallyIncluded:  []message.Destination{message.QueueDest("always.include.queue"), message.TopicDest("always.include.topic")},
		Line:                4,
	}
	c, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.NetworkConnectors) != 1 || !reflect.DeepEqual(c.NetworkConnectors[0], want) {
		t.Fatalf("XML: got %+v\nwant %+v", c.NetworkConnectors, want)
	}
	y := `broker_name: a
network_connectors:
  - name: bridge
    duplex: true
    uri: "static:(tcp://127.0.0.1:61617,tcp://h2:61618)?initialReconnectDelay=200&maxReconnectDelay=5000&useExponentialBackOff=false&backOffMultiplier=3&maxReconnectAttempts=4"
    conduit_subscriptions: false
    decrease_network_consumer_priority: true
    network_ttl: 3
    consumer_ttl: 2
    dynamic_only: true
    prefetch_size: 10
    user_name: u
    password: p
    always_sync_send: true
    bridge_temp_destinations: false
    dynamically_included_destinations: [{queue: include.test.foo}, {topic: include.test.bar}]
    excluded_destinations: [{queue: exclude.test.foo}, {topic: ">"}]
    statically_included_destinations: [{queue: always.include.queue}, {topic: always.include.topic}]
`
	c, err = ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want.Line = 3
	if len(c.NetworkConnectors) != 1 || !reflect.DeepEqual(c.NetworkConnectors[0], want) {
		t.Fatalf("YAML: got %+v\nwant %+v", c.NetworkConnectors, want)
	}
}

func TestConfigNetworkDefaults(t *testing.T) {
	c, err := ParseXML(strings.NewReader(netBroker(`<networkConnectors><networkConnector uri="static:tcp://b:61616"/></networkConnectors>`)), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	nc := c.NetworkConnectors[0]
	want := DefaultNetworkConnector()
	want.URI, want.Discovery, want.Peers, want.Line = "static:tcp://b:61616", DiscoveryStatic, []string{"b:61616"}, 3
	if !reflect.DeepEqual(nc, want) {
		t.Fatalf("got %+v, want %+v", nc, want)
	}
	// ActiveMQ's defaults (NetworkBridgeConfiguration, SimpleDiscoveryAgent).
	if nc.Name != "NC" || !nc.ConduitSubscriptions || nc.MessageTTL != 1 || nc.ConsumerTTL != 1 || nc.PrefetchSize != 1000 ||
		nc.InitialReconnectDelay != time.Second || nc.MaxReconnectDelay != 30*time.Second || !nc.UseExponentialBackOff ||
		nc.BackOffMultiplier != 2 || nc.MaxReconnectAttempts != 0 || !nc.BridgeTempDestinations || !nc.AlwaysSyncSend ||
		nc.DestinationFilter != "" {
		t.Errorf("defaults %+v", nc)
	}
}

// masterslave:(...) lists a master/slave pair, with SimpleDiscoveryAgent's
// options (MasterSlaveDiscoveryAgent inherits them).
func TestConfigNetworkMasterSlave(t *testing.T) {
	doc := netBroker(`<networkConnectors><networkConnector uri="masterslave:(tcp://m:61616,tcp://s:61617)?initialReconnectDelay=100"/></networkConnectors>`)
	c, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	nc := c.NetworkConnectors[0]
	if nc.Discovery != DiscoveryMasterSlave || !reflect.DeepEqual(nc.Peers, []string{"m:61616", "s:61617"}) || nc.InitialReconnectDelay != 100*time.Millisecond {
		t.Fatalf("got discovery %q peers %v delay %v", nc.Discovery, nc.Peers, nc.InitialReconnectDelay)
	}
}

// Seed 001's multicast example: a transport connector advertising on
// multicast://default, a network connector discovering there, and the
// broker's networkConnectorStartAsync; ?group= and an explicit address.
func TestConfigNetworkMulticast(t *testing.T) {
	doc := `<broker brokerName="a" networkConnectorStartAsync="true"><transportConnectors>
<transportConnector name="openwire" uri="tcp://127.0.0.1:0" discoveryUri="multicast://default?group=g1"/></transportConnectors>
<networkConnectors><networkConnector uri="multicast://239.1.2.3:7000?group=g1&amp;initialReconnectDelay=50"/><networkConnector name="d" uri="multicast://default"/></networkConnectors></broker>`
	c, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.NetworkConnectorStartAsync {
		t.Error("networkConnectorStartAsync not read")
	}
	if got := c.Transports[0].Discovery; got != (Multicast{Group: "g1", Addr: "239.255.2.3:6155"}) {
		t.Errorf("transport discovery %+v", got)
	}
	nc := c.NetworkConnectors[0]
	if nc.Discovery != DiscoveryMulticast || nc.Multicast != (Multicast{Group: "g1", Addr: "239.1.2.3:7000"}) || nc.InitialReconnectDelay != 50*time.Millisecond || len(nc.Peers) != 0 {
		t.Errorf("network connector %+v", nc)
	}
	if got := c.NetworkConnectors[1].Multicast; got != (Multicast{Group: "default", Addr: "239.255.2.3:6155"}) {
		t.Errorf("multicast://default is %+v", got)
	}
	y := "network_connector_start_async: true\ntransport_connectors:\n  - {name: openwire, uri: \"tcp://127.0.0.1:0\", discovery_uri: \"multicast://default\"}\nnetwork_connectors:\n  - uri: multicast://default\n"
	c, err = ParseYAML(strings.NewReader(y), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !c.NetworkConnectorStartAsync || c.Transports[0].Discovery.Group != "default" || c.NetworkConnectors[0].Discovery != DiscoveryMulticast {
		t.Errorf("YAML: %+v %+v", c.Transports[0], c.NetworkConnectors[0])
	}
}

// Everything seed 001 configures that Wharf has not built is refused,
// named, with its line.
func TestConfigNetworkRefused(t *testing.T) {
	cases := []struct {
		name, body, err string
	}{
		{"multicast with a path", `<networkConnector uri="multicast://default/x"/>`, "is not a multicast discovery URI"},
		{"multicast empty group", `<networkConnector uri="multicast://default?group="/>`, "the group must not be empty"},
		{"masterslave without a list", `<networkConnector uri="masterslave:tcp://h1:61616"/>`, "want masterslave:(tcp://master:port,tcp://slave:port)"},
		{"masterslave option", `<networkConnector uri="masterslave:(tcp://h1:1,tcp://h2:2)?frob=1"/>`, "discovery option frob is not supported by Wharf yet"},
		{"useVirtualDestSubs not a boolean", `<networkConnector uri="static:(tcp://h:1)" useVirtualDestSubs="maybe"/>`, `useVirtualDestSubs="maybe">: not a boolean`},
		{"suppressDuplicateQueueSubscriptions not a boolean", `<networkConnector uri="static:(tcp://h:1)" suppressDuplicateQueueSubscriptions="yes please"/>`, `suppressDuplicateQueueSubscriptions="yes please">: not a boolean`},
		{"durable queue", `<networkConnector uri="static:(tcp://h:1)"><durableDestinations><queue physicalName="Q"/></durableDestinations></networkConnector>`, "durableDestinations lists topics"},
		{"http transport", `<networkConnector uri="static:(http://h:1)"/>`, `transport "http" is not supported for network connectors by Wharf yet`},
		{"unknown option", `<networkConnector uri="static:(tcp://h:1)?frob=1"/>`, "discovery option frob is not supported by Wharf yet"},
		{"bad multiplier", `<networkConnector uri="static:(tcp://h:1)?backOffMultiplier=1.5"/>`, `discovery option backOffMultiplier: "1.5" is not a whole number`},
		{"no uri", `<networkConnector name="x"/>`, "uri is required"},
		{"no port", `<networkConnector uri="static:(tcp://h)"/>`, "want tcp://host:port"},
		{"zero ttl", `<networkConnector uri="static:(tcp://h:1)" networkTTL="0"/>`, "messageTTL (or networkTTL) 0 must be at least 1"},
		{"prefetch 0", `<networkConnector uri="static:(tcp://h:1)" prefetchSize="0"/>`, "prefetchSize 0 must be at least 1"},
		{"static wildcard", `<networkConnector uri="static:(tcp://h:1)"><staticallyIncludedDestinations><queue physicalName="a.>"/></staticallyIncludedDestinations></networkConnector>`, "wildcards are allowed only in excludedDestinations and dynamicallyIncludedDestinations"},
		{"same name", `<networkConnector uri="static:(tcp://h:1)"/><networkConnector uri="static:(tcp://h:2)"/>`, `"NC" is also the name of network connector 0`},
		{"static bridge without destinations", `<networkConnector uri="static:(tcp://h:1)" staticBridge="true"/>`, "a static bridge forwards only its staticallyIncludedDestinations, and there are none"},
		{"unknown child", `<networkConnector uri="static:(tcp://h:1)"><frobDestinations/></networkConnector>`, "<frobDestinations> is not supported by Wharf yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseXML(strings.NewReader(netBroker("<networkConnectors>"+tc.body+"</networkConnectors>")), "activemq.xml", nil)
			wantProblem(t, err, 3, 0, tc.err)
		})
	}
	// A bad discoveryUri on a transport connector.
	_, err := ParseXML(strings.NewReader(`<broker brokerName="a"><transportConnectors>
<transportConnector uri="tcp://127.0.0.1:0" discoveryUri="multicast://10.0.0.1"/></transportConnectors></broker>`), "activemq.xml", nil)
	wantProblem(t, err, 2, 0, "10.0.0.1 is not an IPv4 multicast address")
	_, err = ParseXML(strings.NewReader(`<broker brokerName="a"><transportConnectors>
<transportConnector uri="tcp://127.0.0.1:0" discoveryUri="multicast://default?timeToLive=3"/></transportConnectors></broker>`), "activemq.xml", nil)
	wantProblem(t, err, 2, 0, "option timeToLive is not supported by Wharf yet")
	_, err = ParseYAML(strings.NewReader("network_connectors:\n  - uri: multicast://default?loopBackMode=true\n"), "wharf.yaml", nil)
	wantProblem(t, err, 2, 0, "discovery option loopBackMode is not supported by Wharf yet")
	_, err = ParseYAML(strings.NewReader("network_connectors:\n  - uri: static:(tcp://h:1)\n    destination_filtr: x\n"), "wharf.yaml", nil)
	wantProblem(t, err, 3, 0, `unknown key "destination_filtr"`)
}

// seed 001's conditionalNetworkBridgeFilterFactory, in both forms, and
// what of it is refused.
func TestConfigReplayWhenNoConsumers(t *testing.T) {
	policy := func(entry string) string {
		return netBroker(`<destinationPolicy><policyMap><policyEntries>` + entry + `</policyEntries></policyMap></destinationPolicy>`)
	}
	c, err := ParseXML(strings.NewReader(policy(`<policyEntry queue="TEST.>" enableAudit="false"><networkBridgeFilterFactory>
        <conditionalNetworkBridgeFilterFactory replayWhenNoConsumers="true" replayDelay="2500"/></networkBridgeFilterFactory></policyEntry>`)), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Policies[0]; !p.ReplayWhenNoConsumers || p.ReplayDelay != 2500*time.Millisecond || p.EnableAudit {
		t.Fatalf("XML policy %+v", p)
	}
	c, err = ParseYAML(strings.NewReader("broker_name: a\ndestination_policy:\n  - {queue: \"TEST.>\", replay_when_no_consumers: true, replay_delay: 2500ms, enable_audit: false}\n"), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Policies[0]; !p.ReplayWhenNoConsumers || p.ReplayDelay != 2500*time.Millisecond {
		t.Fatalf("YAML policy %+v", p)
	}
	for _, tc := range []struct{ entry, want string }{
		{`<policyEntry queue=">" maxAuditDepth="0"/>`, "0 must be positive"},
		{`<policyEntry queue=">"><networkBridgeFilterFactory><conditionalNetworkBridgeFilterFactory rateLimit="10"/></networkBridgeFilterFactory></policyEntry>`, "attribute rateLimit is not supported"},
		{`<policyEntry queue=">"><networkBridgeFilterFactory><conditionalNetworkBridgeFilterFactory replayDelay="-1"/></networkBridgeFilterFactory></policyEntry>`, `replayDelay="-1">: -1ms must not be negative`},
		{`<policyEntry queue=">"><networkBridgeFilterFactory><defaultNetworkBridgeFilterFactory/></networkBridgeFilterFactory></policyEntry>`, "defaultNetworkBridgeFilterFactory"},
	} {
		_, err := ParseXML(strings.NewReader(policy(tc.entry)), "activemq.xml", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.entry, err, tc.want)
		}
	}
}

// suppressDuplicate*, syncDurableSubs and <durableDestinations>, in both
// forms, with ActiveMQ's defaults (topics suppressed, queues not).
func TestConfigNetworkDuplicatesAndDurableSync(t *testing.T) {
	d := DefaultNetworkConnector()
	if d.SuppressDuplicateQueueSubscriptions || !d.SuppressDuplicateTopicSubscriptions || d.SyncDurableSubs {
		t.Fatalf("defaults: queue %v topic %v sync %v, want false true false", d.SuppressDuplicateQueueSubscriptions, d.SuppressDuplicateTopicSubscriptions, d.SyncDurableSubs)
	}
	doc := netBroker(`<networkConnectors>
      <networkConnector uri="static:(tcp://h:1)" suppressDuplicateQueueSubscriptions="true" suppressDuplicateTopicSubscriptions="false" syncDurableSubs="true" useVirtualDestSubs="true">
        <durableDestinations><topic physicalName="T.DUR"/></durableDestinations>
        <dynamicallyIncludedDestinations><topic physicalName="T.>"/></dynamicallyIncludedDestinations>
      </networkConnector>
    </networkConnectors>`)
	x, err := ParseXML(strings.NewReader(doc), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := ParseYAML(strings.NewReader(`network_connectors:
  - uri: "static:(tcp://h:1)"
    suppress_duplicate_queue_subscriptions: true
    suppress_duplicate_topic_subscriptions: false
    sync_durable_subs: true
    use_virtual_dest_subs: true
    durable_destinations: [{topic: T.DUR}]
    dynamically_included_destinations: [{topic: T.>}]
`), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	for form, c := range map[string]*Config{"XML": x, "YAML": y} {
		nc := c.NetworkConnectors[0]
		if !nc.SuppressDuplicateQueueSubscriptions || nc.SuppressDuplicateTopicSubscriptions || !nc.SyncDurableSubs || !nc.UseVirtualDestSubs ||
			!reflect.DeepEqual(nc.DurableDestinations, []message.Destination{message.TopicDest("T.DUR")}) {
			t.Errorf("%s: queue %v topic %v sync %v durable %v", form, nc.SuppressDuplicateQueueSubscriptions, nc.SuppressDuplicateTopicSubscriptions, nc.SyncDurableSubs, nc.DurableDestinations)
		}
	}
}

// destinationFilter (seed 001) is read as written, in XML and YAML.
func TestConfigNetworkDestinationFilter(t *testing.T) {
	c, err := ParseXML(strings.NewReader(netBroker(`<networkConnectors><networkConnector uri="static:(tcp://h:1)" destinationFilter="Queue.include.test.foo,ActiveMQ.Advisory.Consumer.Topic.include.test.bar"/></networkConnectors>`)), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.NetworkConnectors[0].DestinationFilter; got != "Queue.include.test.foo,ActiveMQ.Advisory.Consumer.Topic.include.test.bar" {
		t.Fatalf("XML destinationFilter %q", got)
	}
	y, err := ParseYAML(strings.NewReader("network_connectors:\n  - uri: \"static:(tcp://h:1)\"\n    destination_filter: NO_DESTINATION\n"), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := y.NetworkConnectors[0].DestinationFilter; got != "NO_DESTINATION" {
		t.Fatalf("YAML destination_filter %q", got)
	}
}
