package conformance

import (
	"fmt"
	"io"
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

// clusterNode is the YAML of a Wharf broker of the cluster tests: its
// OpenWire connector on port (written in the config, as the list of
// updateClusterClients names it), connector options opts, and network.
func clusterNode(t *testing.T, name string, port int, opts, network string) *wharfProc {
	t.Helper()
	return startWharfYAML(t, fmt.Sprintf(`broker_name: %s
shards: 1
persistence:
  kahadb:
    directory: %q
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:%d"%s}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
%s`, name, filepath.Join(t.TempDir(), "kahadb"), port, opts, network))
}

// TestConformanceFailoverClusterNetwork: three wharf processes, A
// bridged to B and C, A's connector with updateClusterClients and an
// updateClusterFilter matching B only. ActiveMQ's JMS client connected
// to failover:(A) is told A's URI alone while B is down, then, pushed
// to it as soon as A's bridge to B comes up, A's and B's (never C's);
// when A is killed it fails over to B, which it knew only from that
// ConnectionControl, and sends and receives there. The ConnectionControl
// a new client of A gets is, port for port, the one ActiveMQ 5.17 sends
// in the same place (an ActiveMQ broker bridged to the same B and C with
// the same connector settings).
func TestConformanceFailoverClusterNetwork(t *testing.T) {
	skipWithoutActiveMQ(t)
	var ports [4]int // A's, B's, C's and the ActiveMQ broker's OpenWire ports
	for i, p := range freeLoopbackPorts(t, len(ports)) {
		ports[i], _ = strconv.Atoi(p)
	}
	pa, pb, pc := ports[0], ports[1], ports[2]
	clusterNode(t, "fc-c", pc, "", "")
	nc := fmt.Sprintf("network_connectors:\n  - {name: tob, uri: \"static:(tcp://127.0.0.1:%d)?initialReconnectDelay=100&useExponentialBackOff=false\"}\n"+
		"  - {name: toc, uri: \"static:(tcp://127.0.0.1:%d)\"}\n", pb, pc)
	a := clusterNode(t, "fc-a", pa, ", update_cluster_clients: true, update_cluster_filter: \"fc-b\"", nc)
	a.waitLine(regexp.MustCompile(`"msg":"network bridge started".*"remote_broker":"fc-c"`), procStartTimeout)

	cp := jmsClasspath(t)
	classes := compileJMS(t, cp)
	cmd := exec.Command("java", "-cp", classes+string(os.PathListSeparator)+cp, "wharf.conformance.ClusterFailover",
		fmt.Sprintf("failover:(tcp://127.0.0.1:%d)?randomize=false&initialReconnectDelay=100&maxReconnectDelay=1000", pa), "fc.failover")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	jc := startProc(t, "ClusterFailover", cmd)
	uri := func(p int) string { return "tcp://127.0.0.1:" + strconv.Itoa(p) }
	jc.waitLine(regexp.MustCompile(`^BROKER fc-a$`), procStartTimeout)
	jc.waitLine(regexp.MustCompile(`^CONTROL connectedBrokers=`+regexp.QuoteMeta(uri(pa))+` rebalance=false$`), procStartTimeout)

	clusterNode(t, "fc-b", pb, "", "")
	jc.waitLine(regexp.MustCompile(`^CONTROL connectedBrokers=`+regexp.QuoteMeta(uri(pa)+","+uri(pb))+` rebalance=false$`), procStartTimeout)
	// Against ActiveMQ in the same place, before A goes.
	wharf := clusterControl(t, uri(pa))
	amq := startActiveMQXML(t, []byte(fmt.Sprintf(`<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
<bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer"/>
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="amq-a" persistent="false" useJmx="false">
  <networkConnectors>
    <networkConnector name="tob" uri="static:(tcp://127.0.0.1:%d)"/>
    <networkConnector name="toc" uri="static:(tcp://127.0.0.1:%d)"/>
  </networkConnectors>
  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:%d" updateClusterClients="true" updateClusterFilter="fc-b"/>
  </transportConnectors>
</broker>
</beans>`, pb, pc, ports[3])))
	for range 2 {
		amq.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	}
	activemq := clusterControl(t, uri(ports[3]))
	norm := strings.NewReplacer(uri(pa), "tcp://SELF", uri(ports[3]), "tcp://SELF", "=null", "=")
	want := "CONTROL connectedBrokers=tcp://SELF," + uri(pb) + " rebalance=false faultTolerant=false reconnectTo="
	if norm.Replace(wharf) != want || norm.Replace(activemq) != want {
		t.Errorf("ConnectionControl of a new client: Wharf %q, ActiveMQ %q, want both %q", wharf, activemq, want)
	}

	a.kill()
	if _, err := io.WriteString(stdin, "send\n"); err != nil {
		t.Fatal(err)
	}
	jc.waitLine(regexp.MustCompile(`^RECEIVED cluster-0 BROKER fc-b$`), procStartTimeout)
	lines, _ := jc.log.snapshot()
	for _, l := range lines {
		if strings.Contains(l, uri(pc)) {
			t.Errorf("the client was told of C, which updateClusterFilter leaves out: %q", l)
		}
	}
}
