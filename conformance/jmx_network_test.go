package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"wharf/cmd/wharf/wiring"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/protocols/http/jolokia"
)

// jmxNetworkReads are the network beans' reads: the connector's every
// attribute, and its bridge's.
const jmxNetworkReads = `org.apache.activemq:type=Broker,brokerName=localhost,connector=networkConnectors,networkConnectorName=jmxnet Name,MessageTTL,ConsumerTTL,PrefetchSize,AdvisoryPrefetchSize,UserName,BridgeTempDestinations,ConduitSubscriptions,DecreaseNetworkConsumerPriority,DispatchAsync,DynamicOnly,Duplex,SuppressDuplicateQueueSubscriptions,SuppressDuplicateTopicSubscriptions,Password,RemoteUserName,RemotePassword
org.apache.activemq:type=Broker,brokerName=localhost,connector=networkConnectors,networkConnectorName=jmxnet,networkBridge=* LocalAddress,RemoteAddress,RemoteBrokerName,RemoteBrokerId,LocalBrokerName,EnqueueCounter,DequeueCounter,ReceivedCounter,CreatedByDuplex
org.apache.activemq:type=Broker,brokerName=localhost,connector=networkConnectors,networkConnectorName=jmxnet,networkBridge=*,direction=outbound,* Name,Count,Rate
`

// jmxNetworkDifferences are the network beans' known differences.
var jmxNetworkDifferences = map[string]string{
	"LocalAddress": "ActiveMQ's local end is a vm:// transport numbered per connection (vm://localhost#N), Wharf's the engine (vm://localhost)",
	"Rate":         "messages per second from the time between them: timing, not traffic",
}

// TestConformanceJMXNetworkDifferential: ActiveMQ 5.17 (read over JMX
// by JmxRead) and Wharf (read through the Jolokia handler), each named
// localhost with a network connector jmxnet bridged to the same Wharf
// peer, each having forwarded 2 messages to the peer's consumer: the same
// network beans (NetworkConnectorViewMBean, NetworkBridgeViewMBean under
// the same names), attributes and declared types, and the same values
// but for jmxNetworkDifferences.
func TestConformanceJMXNetworkDifferential(t *testing.T) {
	skipWithoutActiveMQ(t)
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not found (apt-get install -y default-jdk-headless)")
	}
	peer := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) { c.BrokerName = "jmx-peer" }))
	peerAddr := peer.Addr("openwire").String()
	k := netConsumer(t, peerAddr, "queue://jmx.net")

	// ActiveMQ.
	ports := freeLoopbackPorts(t, 2)
	amq := startActiveMQXML(t, []byte(fmt.Sprintf(`<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
  http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
<bean class="org.springframework.beans.factory.config.PropertyPlaceholderConfigurer"/>
<broker xmlns="http://activemq.apache.org/schema/core" brokerName="localhost" persistent="false" useJmx="true">
  <managementContext>
    <managementContext createConnector="true" connectorHost="127.0.0.1" connectorPort="%s" rmiServerPort="%s"/>
  </managementContext>
  <networkConnectors>
    <networkConnector name="jmxnet" uri="static:(tcp://%s)"/>
  </networkConnectors>
  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:0"/>
  </transportConnectors>
</broker>
</beans>`, ports[0], ports[1], peerAddr)), "java.rmi.server.hostname=127.0.0.1")
	amq.waitLine(regexp.MustCompile(`Network connection between .* has been established`), procStartTimeout)
	netSendP(t, amq.openwire, "queue://jmx.net", "amq", 2)
	receiveN(t, k, "the peer, from ActiveMQ", 2)
	classes := t.TempDir()
	if out, err := exec.Command("javac", "-d", classes, filepath.FromSlash("activemq/jmx/JmxRead.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac JmxRead: %v\n%s", err, out)
	}
	amqReads := func() map[string]jmxRead {
		cmd := exec.Command("java", "-cp", classes, "JmxRead", "service:jmx:rmi:///jndi/rmi://127.0.0.1:"+ports[0]+"/jmxrmi")
		cmd.Stdin = strings.NewReader(jmxNetworkReads)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("JmxRead: %v", err)
		}
		reads := map[string]jmxRead{}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var r jmxRead
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("JmxRead line %q: %v", sc.Text(), err)
			}
			reads[r.MBean+" "+r.Attribute] = r
		}
		return reads
	}
	// The peer's acknowledgement reaches the bridge after its consumer
	// has the message: read until the count is in, as an operator would.
	dequeued := func(reads map[string]jmxRead) bool {
		for k, r := range reads {
			if strings.HasSuffix(k, " DequeueCounter") && r.Value == float64(2) {
				return true
			}
		}
		return false
	}
	var a map[string]jmxRead
	for deadline := time.Now().Add(30 * time.Second); ; {
		if a = amqReads(); dequeued(a) || time.Now().After(deadline) {
			break
		}
	}

	// Wharf, once ActiveMQ is gone: its bridge has the same client id
	// on the peer (jmxnet_localhost_outbound).
	amq.kill()
	nc := loadNetworkConnector(t, fmt.Sprintf("network_connectors:\n  - {name: jmxnet, uri: \"static:(tcp://%s)\"}\n", peerAddr))
	w := brokertest.Start(t, wiring.Factories(), brokertest.WithConfig(func(c *config.Config) { c.NetworkConnectors = []config.NetworkConnector{nc} }))
	// The peer's consumer is served by the bridge once it is up with
	// the consumer's demand: a message sent before would stay on
	// Wharf's queue.
	for deadline := time.Now().Add(30 * time.Second); ; {
		if v := w.Engine().Network(); v != nil {
			if bs := v.NetworkConnectors()[0].Bridges; len(bs) > 0 && bs[0].Up && len(bs[0].Demand) > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("Wharf's bridge to the peer has no demand after 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	netSendP(t, w.Addr("openwire").String(), "queue://jmx.net", "wharf", 2)
	receiveN(t, k, "the peer, from Wharf", 2)
	connectors, _ := wiring.JolokiaServices(w.Config())
	srv := httptest.NewServer(jolokia.New(w.Engine(), jolokia.Options{Prefix: "/", Connectors: connectors}))
	t.Cleanup(srv.Close)
	var wr map[string]jmxRead
	for deadline := time.Now().Add(30 * time.Second); ; {
		if wr = wharfReadsOf(t, srv.URL, jmxNetworkReads); dequeued(wr) || time.Now().After(deadline) {
			break
		}
	}

	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) < 27 {
		t.Fatalf("JmxRead printed %d reads, want 27 or more:\n%v", len(keys), a)
	}
	for _, k := range keys {
		ar, wv := a[k], wr[k]
		switch {
		case ar.ErrorType != "" || wv.ErrorType != "":
			if ar.ErrorType != wv.ErrorType {
				t.Errorf("%s: ActiveMQ error %q, Wharf error %q", k, ar.ErrorType, wv.ErrorType)
			}
		case wv.MBean == "":
			t.Errorf("%s: Wharf has no such MBean or attribute (ActiveMQ: %v)", k, ar.Value)
		case ar.Type != wv.Type:
			t.Errorf("%s: type %s on ActiveMQ, %s on Wharf", k, ar.Type, wv.Type)
		case jmxNetworkDifferences[ar.Attribute] != "":
			t.Logf("%s: ActiveMQ %v, Wharf %v (known: %s)", k, ar.Value, wv.Value, jmxNetworkDifferences[ar.Attribute])
		case !reflect.DeepEqual(ar.Value, wv.Value):
			t.Errorf("%s: ActiveMQ %v, Wharf %v", k, ar.Value, wv.Value)
		}
	}
	for k := range wr {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: on Wharf, not on ActiveMQ", k)
		}
	}
}

// loadNetworkConnector loads a network connector from YAML, with the
// loader's defaults.
func loadNetworkConnector(t *testing.T, yml string) config.NetworkConnector {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wharf.yaml")
	if err := os.WriteFile(p, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.LoadFile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.NetworkConnectors[0]
}
