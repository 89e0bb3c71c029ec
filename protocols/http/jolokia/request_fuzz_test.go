package jolokia

import (
	"net/url"
	"testing"
)

// FuzzJolokiaRequest feeds the request parsers (POST body, GET path) and
// the ObjectName parser what a client can send: they return errors,
// never panic, keep to the argument and attribute limits, and a name
// that parses writes a canonical form that parses back to itself.
func FuzzJolokiaRequest(f *testing.F) {
	f.Add([]byte(`{"type":"read","mbean":"org.apache.activemq:type=Broker,brokerName=localhost","attribute":"QueueSize"}`), "/read/org.apache.activemq:type=Broker,brokerName=localhost/TotalMessageCount")
	f.Add([]byte(`[{"type":"exec","mbean":"d:type=x","operation":"op(int)","arguments":[1,null,"x"]},{"type":"version"}]`), "/exec/d:type=x/op/1/[null]")
	f.Add([]byte(`{"type":"list","path":"org.apache.activemq/type=Broker,brokerName=a!/b/op"}`), "/list/a/b!/c/%2F")
	f.Add([]byte(`{"type":"search","mbean":"d:name=\"q\\\"*\",*"}`), "/search/d*:a=?,*")
	f.Add([]byte(`{"type":"read","mbean":"d:a=1","attribute":["A","B"],"path":"x/0","config":{"canonicalNaming":false}}`), "/read/d:a=1/A,B\\,C/x")
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		reqs, errs, _, err := parsePOST(body, 100)
		if err == nil {
			if len(reqs) != len(errs) || len(reqs) > 100 {
				t.Fatalf("%d requests, %d errors", len(reqs), len(errs))
			}
			for i, q := range reqs {
				if (q == nil) == (errs[i] == nil) {
					t.Fatalf("element %d: request %v and error %v", i, q, errs[i])
				}
				if q != nil {
					checkRequest(t, q)
				}
			}
		}
		q, err := parseGET(path, url.Values{})
		if err == nil {
			checkRequest(t, q)
		}
		checkName(t, path)
		checkName(t, string(body))
	})
}

func checkRequest(t *testing.T, q *request) {
	t.Helper()
	if len(q.args) > maxArgs || len(q.attrs) > maxAttrs {
		t.Fatalf("%d args, %d attributes: over the limits", len(q.args), len(q.attrs))
	}
	switch q.typ {
	case "read", "write", "exec", "search", "list", "version":
	default:
		t.Fatalf("accepted request type %q", q.typ)
	}
	checkName(t, q.mbean)
}

func checkName(t *testing.T, s string) {
	t.Helper()
	on, err := parseObjectName(s)
	if err != nil {
		return
	}
	c := on.canonical()
	again, err := parseObjectName(c)
	if err != nil {
		t.Fatalf("canonical %q of %q does not parse: %v", c, s, err)
	}
	if again.canonical() != c || !again.matches(on) && !on.isPattern() {
		t.Fatalf("canonical %q of %q is not stable or does not match it", c, s)
	}
}
