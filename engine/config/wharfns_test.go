package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// wharfNSDoc is an activemq.xml with Wharf's namespaced attributes on
// <broker>; %s is the attribute list.
const wharfNSDoc = `<beans xmlns="http://www.springframework.org/schema/beans">
  <broker xmlns="http://activemq.apache.org/schema/core" xmlns:wharf="urn:wharf:config" %s>
    <transportConnectors>
      <transportConnector name="openwire" uri="tcp://0.0.0.0:61616"/>
    </transportConnectors>
  </broker>
</beans>`

func TestConfigWharfNamespace(t *testing.T) {
	c, err := ParseXML(strings.NewReader(strings.Replace(wharfNSDoc, "%s", `wharf:shards="1" wharf:trustedNetwork="true"`, 1)), "activemq.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Shards != 1 || !c.TrustedNetwork {
		t.Errorf("Shards=%d TrustedNetwork=%v, want 1 true", c.Shards, c.TrustedNetwork)
	}

	yml := "shards: 1\ntrusted_network: true\ntransport_connectors:\n  - {name: openwire, uri: \"tcp://0.0.0.0:61616\"}\n"
	c, err = ParseYAML(strings.NewReader(yml), "wharf.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Shards != 1 || !c.TrustedNetwork {
		t.Errorf("YAML: Shards=%d TrustedNetwork=%v, want 1 true", c.Shards, c.TrustedNetwork)
	}

	cases := []struct {
		name  string
		doc   string
		line  int
		want  string
		wantN int // problems
	}{
		{"shards out of range", strings.Replace(wharfNSDoc, "%s", `wharf:shards="5000" wharf:trustedNetwork="true"`, 1), 2, "5000 is not in 0..4096", 1},
		{"shards not a number", strings.Replace(wharfNSDoc, "%s", `wharf:shards="two" wharf:trustedNetwork="true"`, 1), 2, `wharf:shards="two"`, 1},
		{"undeclared prefix", strings.Replace(strings.Replace(wharfNSDoc, ` xmlns:wharf="urn:wharf:config"`, "", 1), "%s", `wharf:shards="1" wharf:trustedNetwork="true"`, 1), 2,
			`the prefix wharf is not declared; add xmlns:wharf="urn:wharf:config"`, 3}, // and 0.0.0.0 refused
		{"unknown wharf attribute", strings.Replace(wharfNSDoc, "%s", `wharf:trustedNetwork="true" wharf:turbo="true"`, 1), 2, "attribute wharf:turbo is not supported", 1},
		{"wharf attribute on kahaDB", strings.Replace(strings.Replace(wharfNSDoc, "%s", `wharf:trustedNetwork="true"`, 1),
			"<transportConnectors>", `<persistenceAdapter><kahaDB wharf:shards="1"/></persistenceAdapter><transportConnectors>`, 1), 3,
			`<kahaDB wharf:shards="1">: Wharf's attributes (wharf:shards, wharf:trustedNetwork, wharf:httpWebSocket) go on <broker>`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseXML(strings.NewReader(tc.doc), "activemq.xml", nil)
			ps := problems(t, err)
			wantProblem(t, err, tc.line, 0, tc.want)
			if len(ps) != tc.wantN {
				t.Errorf("got %d problems, want %d:\n%v", len(ps), tc.wantN, err)
			}
		})
	}
}

// TestConfigNonLoopbackRefusal: a connector on 0.0.0.0 without the
// trusted-network opt-in is refused, and the error names the ways out:
// an authentication plugin (what to add) and each form of the
// opt-in; the opt-in given to the load (wharf run --trusted-network) lets
// the stock activemq.xml through.
func TestConfigNonLoopbackRefusal(t *testing.T) {
	stock := filepath.Join("testdata", "activemq-stock-shape.xml")
	_, err := LoadFile(stock, stockVars(t))
	ps := problems(t, err)
	if len(ps) != 5 {
		t.Fatalf("got %d problems, want 5 (one per connector):\n%v", len(ps), err)
	}
	for _, want := range []string{
		`listening on "0.0.0.0" needs authentication`,
		"add an authentication plugin to <plugins> in <broker>",
		"<simpleAuthenticationPlugin> with <users>",
		`<jaasAuthenticationPlugin configuration="activemq"/>`,
		"Otherwise listen on 127.0.0.1",
		"wharf run --trusted-network",
		`<broker xmlns:wharf="urn:wharf:config" wharf:trustedNetwork="true">`,
		"trusted_network: true",
	} {
		if !strings.Contains(ps[0].Msg, want) {
			t.Errorf("problem %q does not contain %q", ps[0].Msg, want)
		}
	}
	c, err := LoadFileWith(stock, stockVars(t), LoadOptions{TrustedNetwork: true})
	if err != nil {
		t.Fatalf("with TrustedNetwork: %v", err)
	}
	if !c.TrustedNetwork || len(c.Transports) != 5 || c.Transports[0].Host != "0.0.0.0" || c.Transports[0].Loopback() {
		t.Errorf("TrustedNetwork=%v transports=%+v", c.TrustedNetwork, c.Transports)
	}
	// The file's own opt-in, set to false, does not undo the flag.
	yml := "trusted_network: false\ntransport_connectors:\n  - {name: openwire, uri: \"tcp://0.0.0.0:61616\"}\n"
	if _, err := parseYAML(strings.NewReader(yml), "wharf.yaml", nil, LoadOptions{TrustedNetwork: true}); err != nil {
		t.Errorf("flag with trusted_network: false: %v", err)
	}
	if _, err := ParseYAML(strings.NewReader(yml), "wharf.yaml", nil); err == nil {
		t.Error("trusted_network: false, no flag: 0.0.0.0 accepted")
	}
}
