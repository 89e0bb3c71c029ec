package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// clusterControl runs ClusterControl (ActiveMQ's JMS client) against url
// and returns the line it printed about the broker's ConnectionControl.
func clusterControl(t *testing.T, url string) string {
	t.Helper()
	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	out, err := exec.Command("java", "-cp", classes+string(os.PathListSeparator)+cp, "wharf.conformance.ClusterControl", url).CombinedOutput()
	if err != nil {
		t.Fatalf("ClusterControl %s: %v\n%s", url, err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestConformanceFailoverClusterClients: the ConnectionControl ActiveMQ's
// JMS client gets from a connector with updateClusterClients and
// rebalanceClusterClients names the broker's URI (as written in the
// config) and asks for a rebalance, and from a plain connector names
// nothing; the same lines, port for port, as ActiveMQ 5.17 with the same
// two connectors gives, over tcp:// and over failover:(), but for an
// empty string that ActiveMQ sends as "" and Wharf as null.
func TestConformanceFailoverClusterClients(t *testing.T) {
	skipWithoutActiveMQ(t)
	wp, ap := freePorts(t), freePorts(t)
	startWharfYAML(t, fmt.Sprintf(`shards: 1
persistence: {memory: {}}
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:%d"}
  - {name: cluster, uri: "tcp://127.0.0.1:%d", update_cluster_clients: true, rebalance_cluster_clients: true}
  - {name: stomp, uri: "stomp://127.0.0.1:%d"}
`, wp[0], wp[1], wp[2]))
	b, err := os.ReadFile(filepath.FromSlash("kahadb/activemq.xml"))
	if err != nil {
		t.Fatal(err)
	}
	x := strings.Replace(string(b), `<transportConnector name="openwire" uri="tcp://127.0.0.1:0"/>`,
		fmt.Sprintf(`<transportConnector name="openwire" uri="tcp://127.0.0.1:%d"/>
      <transportConnector name="cluster" uri="tcp://127.0.0.1:%d" updateClusterClients="true" rebalanceClusterClients="true"/>`, ap[0], ap[1]), 1)
	if !strings.Contains(x, `name="cluster"`) {
		t.Fatal("kahadb/activemq.xml: no connector to replace")
	}
	amq := spawnActiveMQXML(t, []byte(x), "wharf.kahadb.dir="+t.TempDir())
	amq.waitLine(regexp.MustCompile(`Apache ActiveMQ \S+ \(.*\) started`), procStartTimeout)

	for _, c := range []struct {
		name, url string
		wharf     int // port of the Wharf connector
		amq       int // port of ActiveMQ's
		want      string
	}{
		{"plain", "tcp://127.0.0.1:%d", wp[0], ap[0], "CONTROL connectedBrokers= rebalance=false faultTolerant=false reconnectTo="},
		{"cluster", "tcp://127.0.0.1:%d", wp[1], ap[1], "CONTROL connectedBrokers=tcp://127.0.0.1:PORT rebalance=true faultTolerant=false reconnectTo="},
		{"cluster over failover", "failover:(tcp://127.0.0.1:%d)", wp[1], ap[1], "CONTROL connectedBrokers=tcp://127.0.0.1:PORT rebalance=true faultTolerant=false reconnectTo="},
	} {
		got := map[string]string{}
		for who, port := range map[string]int{"ActiveMQ": c.amq, "Wharf": c.wharf} {
			line := clusterControl(t, fmt.Sprintf(c.url, port))
			line = strings.ReplaceAll(line, strconv.Itoa(port), "PORT")
			// ActiveMQ sends its empty strings ("", ConnectionControl's
			// defaults), Wharf's codec writes an empty string as null:
			// the same to the client (FailoverTransport trims and skips
			// both), not the same bytes.
			line = strings.ReplaceAll(line, "=null", "=")
			got[who] = line
		}
		if got["Wharf"] != got["ActiveMQ"] || got["Wharf"] != c.want {
			t.Errorf("%s: Wharf %q, ActiveMQ %q, want both %q", c.name, got["Wharf"], got["ActiveMQ"], c.want)
		}
	}
}
