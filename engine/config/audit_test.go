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

// TestConfigCursorAudit: <policyEntry enableAudit maxAuditDepth
// maxProducersToAudit> (YAML enable_audit, max_audit_depth,
// max_producers_to_audit) are read; without them a destination gets
// ActiveMQ's defaults (true, 2048, 1024); a depth or producer count that
// is not positive is an error naming it.
func TestConfigCursorAudit(t *testing.T) {
	d := DefaultPolicyEntry()
	if !d.EnableAudit || d.MaxAuditDepth != 2048 || d.MaxProducersToAudit != 1024 {
		t.Fatalf("defaults: enableAudit %v, maxAuditDepth %d, maxProducersToAudit %d; want true, 2048, 1024", d.EnableAudit, d.MaxAuditDepth, d.MaxProducersToAudit)
	}
	c := parseTwins(t, "", `<destinationPolicy><policyMap><policyEntries>
<policyEntry queue="a.>" enableAudit="false"/>
<policyEntry queue="b.>" maxAuditDepth="64" maxProducersToAudit="3"/>
</policyEntries></policyMap></destinationPolicy>`, `destination_policy:
  - {queue: "a.>", enable_audit: false}
  - {queue: "b.>", max_audit_depth: 64, max_producers_to_audit: 3}
`)
	if p := c.Policies[0]; p.EnableAudit || p.MaxAuditDepth != 2048 {
		t.Errorf("a.>: %+v, want enableAudit false, the default depth", p)
	}
	if p := c.Policies[1]; !p.EnableAudit || p.MaxAuditDepth != 64 || p.MaxProducersToAudit != 3 {
		t.Errorf("b.>: %+v, want enableAudit true, depth 64, 3 producers", p)
	}
	_, err := ParseYAML(strings.NewReader("destination_policy:\n  - {queue: \">\", max_producers_to_audit: -1}\n"), "wharf.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "max_producers_to_audit") || !strings.Contains(err.Error(), "-1 must be positive") {
		t.Errorf("max_producers_to_audit -1: got %v, want an error naming it", err)
	}
}
