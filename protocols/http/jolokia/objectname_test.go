package jolokia

import (
	"errors"
	"testing"
)

func TestJolokiaObjectNameParse(t *testing.T) {
	for _, tc := range []struct {
		in, canonical string
		pattern       bool
	}{
		{"org.apache.activemq:type=Broker,brokerName=localhost", "org.apache.activemq:brokerName=localhost,type=Broker", false},
		{"d:b=2,a=1,*", "d:a=1,b=2,*", true},
		{"d:*", "d:*", true},
		{"d:*,a=1", "d:a=1,*", true},
		{`d:name="a,b=c",type=x`, `d:name="a,b=c",type=x`, false},
		{`d:name="a\"b"`, `d:name="a\"b"`, false},
		{"d*:type=x", "d*:type=x", true},
		{"d:type=x*", "d:type=x*", true},
		{"d:type=Durable(a_b)", "d:type=Durable(a_b)", false},
	} {
		on, err := parseObjectName(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := on.canonical(); got != tc.canonical {
			t.Errorf("%q: canonical %q, want %q", tc.in, got, tc.canonical)
		}
		if on.isPattern() != tc.pattern {
			t.Errorf("%q: pattern %v, want %v", tc.in, on.isPattern(), tc.pattern)
		}
	}
	for _, bad := range []string{
		"", "no-colon", "d:", "d:a", "d:=1", "d:a=", "d:a=1,", "d:a=1,,b=2", "d:a=1,a=2", `d:a="open`,
		"d:a=x:y", "d:*,*", `d:a="q"b`, "d:a=1,*x",
	} {
		_, err := parseObjectName(bad)
		var je *jmxError
		if !errors.As(err, &je) || je.typ != "javax.management.MalformedObjectNameException" || je.status != 400 {
			t.Errorf("%q: err %v, want a MalformedObjectNameException", bad, err)
		}
	}
}

func TestJolokiaObjectNameMatch(t *testing.T) {
	name := func(s string) objectName {
		t.Helper()
		on, err := parseObjectName(s)
		if err != nil {
			t.Fatal(err)
		}
		return on
	}
	queue := name("org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,destinationName=orders.eu")
	check := func(pattern string, want bool) {
		t.Helper()
		if got := name(pattern).matches(queue); got != want {
			t.Errorf("%q matches queue: %v, want %v", pattern, got, want)
		}
	}
	check("org.apache.activemq:type=Broker,brokerName=*,destinationType=Queue,destinationName=*", true)
	check("org.apache.activemq:destinationName=orders.eu,destinationType=Queue,brokerName=localhost,type=Broker", true)
	check("org.apache.activemq:type=Broker,*", true)
	check("org.apache.activemq:type=Broker", false) // no ",*": the key sets must be equal
	check("org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Topic,*", false)
	check("org.apache.activemq:type=Broker,destinationName=orders.??,*", true)
	check("org.apache.activemq:type=Broker,destinationName=orders.?,*", false)
	check("org.apache.activemq:type=Broker,destinationName=*eu,*", true)
	check("org.apache.activemq:type=Broker,destinationName=*.*.*,*", false)
	check("org.apache.*:type=Broker,*", true)
	check("org.apache.activemq:type=Broker,endpoint=*,*", false)                  // a key it lacks
	check(`org.apache.activemq:type=Broker,destinationName="orders.eu",*`, false) // quoted is another value
}

func TestJolokiaEncodePart(t *testing.T) {
	for in, want := range map[string]string{
		"orders":        "orders",
		"a:b,c'd\"e":    "a_b_c_d_e",
		"what?":         "what&qe;",
		"k=v":           "k&amp;v",
		"all*":          "all&ast;",
		"ID:host-1-2:1": "ID_host-1-2_1",
	} {
		if got := encodePart(in); got != want {
			t.Errorf("encodePart(%q) = %q, want %q", in, got, want)
		}
		if _, err := parseObjectName("d:k=" + encodePart(in)); err != nil {
			t.Errorf("encoded %q is no valid value: %v", in, err)
		}
	}
}

func TestJolokiaGETPath(t *testing.T) {
	for _, tc := range []struct {
		path  string
		typ   string
		mbean string
		attrs []string
		parts []string
		args  []any
	}{
		{"/read/d:type=x/A", "read", "d:type=x", []string{"A"}, nil, nil},
		{"/read/d:type=x/A,B", "read", "d:type=x", []string{"A", "B"}, nil, nil},
		{"/read/d:type=x/A/inner/0", "read", "d:type=x", []string{"A"}, []string{"inner", "0"}, nil},
		{"/read/d:name=a!/b/A", "read", "d:name=a/b", []string{"A"}, nil, nil},
		{"/read/d:name=a%2Cb", "read", "d:name=a,b", nil, nil, nil},
		{"/exec/d:type=x/op/1/[null]/%22%22/a!!b", "exec", "d:type=x", nil, nil, []any{"1", nil, "", "a!b"}},
		{"/list/d/type=x/op", "list", "", nil, []string{"d", "type=x", "op"}, nil},
		{"/search/d:*", "search", "d:*", nil, nil, nil},
		{"", "version", "", nil, nil, nil},
	} {
		q, err := parseGET(tc.path, nil)
		if err != nil {
			t.Errorf("%q: %v", tc.path, err)
			continue
		}
		if q.typ != tc.typ || q.mbean != tc.mbean || !equal(q.attrs, tc.attrs) || !equal(q.parts, tc.parts) || len(q.args) != len(tc.args) {
			t.Errorf("%q: got %s %q %q %q %v", tc.path, q.typ, q.mbean, q.attrs, q.parts, q.args)
			continue
		}
		for i := range q.args {
			if q.args[i] != tc.args[i] {
				t.Errorf("%q: arg %d = %#v, want %#v", tc.path, i, q.args[i], tc.args[i])
			}
		}
	}
	for _, bad := range []string{"/read", "/exec/d:type=x", "/write/d:type=x/A", "/frobnicate/x", "/read/d:type=%zz"} {
		if _, err := parseGET(bad, nil); err == nil {
			t.Errorf("%q: parsed, want an error", bad)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
