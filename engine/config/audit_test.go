package config

import (
	"strings"
	"testing"
)

// TestConfigAuditNetworkProducers: a <transportConnector>'s
// auditNetworkProducers (YAML audit_network_producers) is read, false
// when absent as in ActiveMQ, and a value that is not a boolean is an
// error naming it.
func TestConfigAuditNetworkProducers(t *testing.T) {
	c := parseTwins(t, "", `<transportConnectors>
<transportConnector name="plain" uri="tcp://127.0.0.1:0"/>
<transportConnector name="audited" uri="tcp://127.0.0.1:0" auditNetworkProducers="true"/>
</transportConnectors>`, `transport_connectors:
  - {name: plain, uri: "tcp://127.0.0.1:0"}
  - {name: audited, uri: "tcp://127.0.0.1:0", audit_network_producers: true}
`)
	if len(c.Transports) != 2 {
		t.Fatalf("%d connectors, want 2", len(c.Transports))
	}
	if c.Transports[0].AuditNetworkProducers {
		t.Error("auditNetworkProducers is on without the attribute; ActiveMQ's default is false")
	}
	if !c.Transports[1].AuditNetworkProducers {
		t.Error(`auditNetworkProducers="true" not read`)
	}
	_, err := ParseXML(strings.NewReader(xmlBroker(`<transportConnectors>
<transportConnector uri="tcp://127.0.0.1:0" auditNetworkProducers="sometimes"/>
</transportConnectors>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 0, "sometimes")
}
