package config

import (
	"strings"
	"testing"
	"time"
)

func TestConfigOneEdit(t *testing.T) {
	check := func(a, b string, want bool) {
		t.Helper()
		if got := oneEdit(a, b); got != want {
			t.Errorf("oneEdit(%q, %q) = %v, want %v", a, b, got, want)
		}
	}
	check("prodcerFlowControl", "producerFlowControl", true) // deletion
	check("producerFlowControll", "producerFlowControl", true)
	check("prodcerFlowKontrol", "producerFlowControl", false) // two edits
	check("produecrFlowControl", "producerFlowControl", true) // swap
	check("memoryLimit", "memoryLimat", true)                 // substitution
	check("queue", "topic", false)
	check("a", "abc", false)
}

func xmlBroker(body string) string {
	return `<broker xmlns="http://activemq.apache.org/schema/core">` + "\n" + body + "\n</broker>\n"
}

// TestConfigDidYouMean: a misspelt attribute, element or key one edit
// from a known one is reported as a misspelling naming it, not as a
// feature Wharf lacks; one further away keeps "not supported by Wharf yet".
func TestConfigDidYouMean(t *testing.T) {
	_, err := ParseXML(strings.NewReader(xmlBroker(`<destinationPolicy><policyMap><policyEntries>
<policyEntry queue=">" prodcerFlowControl="false"/>
</policyEntries></policyMap></destinationPolicy>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 24, `<policyEntry prodcerFlowControl="false">: unknown attribute prodcerFlowControl; did you mean producerFlowControl?`)
	if n := len(problems(t, err)); n != 1 {
		t.Fatalf("%d problems, want 1:\n%v", n, err)
	}

	_, err = ParseXML(strings.NewReader(xmlBroker(`<destinationPolicy><policyMap><policyEntries>
<policyEntry queue=">" frobnicate="true"/>
</policyEntries></policyMap></destinationPolicy>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 24, "attribute frobnicate is not supported by Wharf yet")

	_, err = ParseXML(strings.NewReader(xmlBroker(`<persistenceAdapter><kahaDb/></persistenceAdapter>`)), "activemq.xml", nil)
	wantProblem(t, err, 2, 21, "<kahaDb>: unknown element; did you mean <kahaDB>?")

	_, err = ParseYAML(strings.NewReader("default_policy:\n  prodcer_flow_control: false\n"), "wharf.yaml", nil)
	wantProblem(t, err, 2, 3, `default_policy: unknown key "prodcer_flow_control"; did you mean "producer_flow_control"?`)
	_, err = ParseYAML(strings.NewReader("default_policy:\n  frobnicate: true\n"), "wharf.yaml", nil)
	wantProblem(t, err, 2, 3, `default_policy: unknown key "frobnicate"`)
	if strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("a key two edits from any known one got a suggestion: %v", err)
	}
}

// TestConfigUnresolvedPlaceholderOnce: an unresolved placeholder in a
// required setting is one problem; validation does not add "uri is
// required" for the hole it left.
func TestConfigUnresolvedPlaceholderOnce(t *testing.T) {
	_, err := ParseXML(strings.NewReader(xmlBroker(`<transportConnectors>
<transportConnector name="openwire" uri="tcp://127.0.0.1:${port}"/>
</transportConnectors>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 37, "unresolved placeholder ${port}")
	if ps := problems(t, err); len(ps) != 1 {
		t.Fatalf("%d problems, want 1:\n%v", len(ps), err)
	}
	_, err = ParseYAML(strings.NewReader("transport_connectors:\n  - {name: openwire, uri: \"tcp://127.0.0.1:${port}\"}\n"), "wharf.yaml", nil)
	wantProblem(t, err, 2, 27, "unresolved placeholder ${port}")
	if ps := problems(t, err); len(ps) != 1 {
		t.Fatalf("%d problems, want 1:\n%v", len(ps), err)
	}
	// Other problems of the same file are still reported.
	_, err = ParseYAML(strings.NewReader("shards: -1\ntransport_connectors:\n  - {name: openwire, uri: \"tcp://127.0.0.1:${port}\"}\n"), "wharf.yaml", nil)
	if ps := problems(t, err); len(ps) != 2 {
		t.Fatalf("%d problems, want 2 (shards, placeholder):\n%v", len(ps), err)
	}
}

// TestConfigKahaDBLocker: <locker><shared-file-locker
// lockAcquireSleepInterval> (ms) and lock_acquire_sleep_interval set how
// often a broker waiting for the store's lock tries again; other lockers
// are refused.
func TestConfigKahaDBLocker(t *testing.T) {
	c := parseTwins(t, "", `<persistenceAdapter><kahaDB directory="/d">
<locker><shared-file-locker lockAcquireSleepInterval="500"/></locker>
</kahaDB></persistenceAdapter>`, "persistence:\n  kahadb:\n    directory: /d\n    lock_acquire_sleep_interval: 500ms\n")
	if got := c.Persistence.KahaDB.LockAcquireSleepInterval; got != 500*time.Millisecond {
		t.Fatalf("lock acquire sleep interval %v, want 500ms", got)
	}
	if got := Default().Persistence.KahaDB.LockAcquireSleepInterval; got != 10*time.Second {
		t.Fatalf("default lock acquire sleep interval %v, want ActiveMQ's 10s", got)
	}
	_, err := ParseXML(strings.NewReader(xmlBroker(`<persistenceAdapter><kahaDB>
<locker><lease-database-locker/></locker>
</kahaDB></persistenceAdapter>`)), "activemq.xml", nil)
	wantProblem(t, err, 3, 9, "<lease-database-locker> is not supported by Wharf yet")
	_, err = ParseYAML(strings.NewReader("persistence:\n  kahadb:\n    lock_acquire_sleep_interval: 0s\n"), "wharf.yaml", nil)
	wantProblem(t, err, 3, 34, "must be positive")
	// lockKeepAlivePeriod (ms) / lock_keep_alive_period: the master's
	// check that it still holds the lock; 0 by default, as ActiveMQ's
	// KahaDB has it.
	c = parseTwins(t, "", `<persistenceAdapter><kahaDB directory="/d" lockKeepAlivePeriod="2000"/></persistenceAdapter>`,
		"persistence:\n  kahadb:\n    directory: /d\n    lock_keep_alive_period: 2s\n")
	if got := c.Persistence.KahaDB.LockKeepAlivePeriod; got != 2*time.Second {
		t.Fatalf("lock keep-alive period %v, want 2s", got)
	}
	if got := Default().Persistence.KahaDB.LockKeepAlivePeriod; got != 0 {
		t.Fatalf("default lock keep-alive period %v, want 0 (none)", got)
	}
	_, err = ParseYAML(strings.NewReader("persistence:\n  kahadb:\n    lock_keep_alive_period: -1s\n"), "wharf.yaml", nil)
	wantProblem(t, err, 3, 29, "must not be negative")
}
