package security

import (
	"os"
	"slices"
	"strings"
	"testing"

	"wharf/engine"
	"wharf/engine/config"
	"wharf/engine/message"
)

// TestSecurityAuthorizeMatchesActiveMQ compares Wharf's map with ActiveMQ
// 5.17's DefaultAuthorizationMap: testdata/java/authz.golden is what
// AuthzDiff.java printed running Debian's activemq-broker.jar over
// authz.spec (union of matching entries, defaultEntry always added,
// wildcard lookups, composites).
func TestSecurityAuthorizeMatchesActiveMQ(t *testing.T) {
	spec, err := os.ReadFile("testdata/java/authz.spec")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/java/authz.golden")
	if err != nil {
		t.Fatal(err)
	}
	m := &config.AuthorizationMap{}
	parseEntry := func(f []string) config.AuthorizationEntry {
		var e config.AuthorizationEntry
		for _, kv := range f {
			k, v, _ := strings.Cut(kv, "=")
			list := strings.Split(v, ",")
			switch k {
			case "read":
				e.Read = list
			case "write":
				e.Write = list
			case "admin":
				e.Admin = list
			}
		}
		return e
	}
	var queries []message.Destination
	for _, line := range strings.Split(string(spec), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		kind := map[string]message.DestType{"queue": message.Queue, "topic": message.Topic, "temp-queue": message.TempQueue}
		switch f[0] {
		case "entry":
			e := parseEntry(f[3:])
			e.Destination = message.Destination{Type: kind[f[1]], Name: f[2]}
			m.Entries = append(m.Entries, e)
		case "default":
			e := parseEntry(f[1:])
			m.Default = &e
		case "temp":
			e := parseEntry(f[1:])
			e.Destination.Type = message.TempQueue
			m.Temp = &e
		case "query":
			queries = append(queries, message.Destination{Type: kind[f[1]], Name: f[2]})
		}
	}
	am, err := newAuthzMap(m)
	if err != nil {
		t.Fatal(err)
	}
	names := func(a *acl) string {
		if a == nil {
			return "null"
		}
		var l []string
		for g := range a.groups {
			l = append(l, g)
		}
		slices.Sort(l)
		return strings.Join(l, ",")
	}
	want := strings.Split(strings.TrimSpace(string(golden)), "\n")
	if len(want) != len(queries) {
		t.Fatalf("%d golden lines for %d queries", len(want), len(queries))
	}
	for i, d := range queries {
		kind := strings.TrimSuffix(d.Type.Prefix(), "://")
		got := kind + " " + d.Name +
			" read=" + names(am.aclFor(engine.ActionRead, d)) +
			" write=" + names(am.aclFor(engine.ActionWrite, d)) +
			" admin=" + names(am.aclFor(engine.ActionAdmin, d))
		if got != want[i] {
			t.Errorf("Wharf:    %s\nActiveMQ: %s", got, want[i])
		}
	}
}
