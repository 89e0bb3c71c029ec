package config

import (
	"strings"
	"testing"
)

// TestConfigClusterClients: updateClusterClients, rebalanceClusterClients,
// updateClusterClientsOnRemove and updateClusterFilter on a
// <transportConnector> (and their YAML keys) are read; the URI the
// clients are told is, on every connector with updateClusterClients or
// rebalanceClusterClients, the scheme, host and port as written of the
// first such connector (ActiveMQ's getDefaultSocketURIString: a port 0
// stays 0); a connector with neither is told nothing; the filter matches
// broker names whole, any of its comma-separated expressions.
func TestConfigClusterClients(t *testing.T) {
	c := parseTwins(t, "", `<transportConnectors>
<transportConnector name="plain" uri="tcp://127.0.0.1:61616"/>
<transportConnector name="stomp" uri="stomp://127.0.0.1:0" rebalanceClusterClients="true"/>
<transportConnector name="ow" uri="nio://127.0.0.1:61617?wireFormat.maxFrameSize=1048576" updateClusterClients="true"
  rebalanceClusterClients="true" updateClusterClientsOnRemove="true" updateClusterFilter="east-.*, west-1"/>
</transportConnectors>`, `transport_connectors:
  - {name: plain, uri: "tcp://127.0.0.1:61616"}
  - {name: stomp, uri: "stomp://127.0.0.1:0", rebalance_cluster_clients: true}
  - name: ow
    uri: "nio://127.0.0.1:61617?wireFormat.maxFrameSize=1048576"
    update_cluster_clients: true
    rebalance_cluster_clients: true
    update_cluster_clients_on_remove: true
    update_cluster_filter: "east-.*, west-1"
`)
	ts := c.Transports
	if len(ts) != 3 {
		t.Fatalf("%d connectors, want 3", len(ts))
	}
	if cc := ts[0].ClusterClients; cc.Enabled() || cc.URI != "" {
		t.Fatalf("plain connector: %+v, want nothing told", cc)
	}
	if cc := ts[1].ClusterClients; cc.Update || !cc.Rebalance || cc.URI != "stomp://127.0.0.1:0" {
		t.Fatalf("stomp connector: %+v, want rebalance only and the first such connector's URI as written", cc)
	}
	cc := ts[2].ClusterClients
	if !cc.Update || !cc.Rebalance || !cc.UpdateOnRemove || cc.Filter != "east-.*, west-1" || cc.URI != "stomp://127.0.0.1:0" {
		t.Fatalf("ow connector: %+v", cc)
	}
	for name, want := range map[string]bool{"east-1": true, "east-": true, "west-1": true, "west-12": false, "xeast-1": false, "": false} {
		if got := cc.Matches(name); got != want {
			t.Errorf("filter %q matches %q: %v, want %v", cc.Filter, name, got, want)
		}
	}
	if !ts[0].ClusterClients.Matches("anything") {
		t.Error("no filter: every broker name matches")
	}

	_, err := ParseXML(strings.NewReader(xmlBroker(`<transportConnectors>
<transportConnector uri="tcp://127.0.0.1:0" updateClusterFilter="ok,(?=lookahead)"/>
</transportConnectors>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 0, `"(?=lookahead)" is not a regular expression Wharf can read`)
	_, err = ParseXML(strings.NewReader(xmlBroker(`<transportConnectors>
<transportConnector uri="tcp://127.0.0.1:0" updateClusterClients="maybe"/>
</transportConnectors>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 0, "maybe")
}
