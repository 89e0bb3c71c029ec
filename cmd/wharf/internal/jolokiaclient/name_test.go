package jolokiaclient

import (
	"reflect"
	"testing"
)

// TestParseName: properties in the server's order, quoted values with
// commas, equals signs and escapes, and the errors of a broken name.
func TestParseName(t *testing.T) {
	n, err := ParseName(`org.apache.activemq:brokerName=localhost,connectionName="a,b=\"c\"",type=Broker`)
	if err != nil {
		t.Fatal(err)
	}
	want := Name{Domain: "org.apache.activemq", Props: map[string]string{"brokerName": "localhost", "connectionName": `a,b="c"`, "type": "Broker"}}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("ParseName: %+v, want %+v", n, want)
	}
	for _, bad := range []string{"no-domain", "d:key", `d:k="open`} {
		if _, err := ParseName(bad); err == nil {
			t.Errorf("ParseName(%q): no error", bad)
		}
	}
}

// TestEncodePart: ActiveMQ's JMXSupport.encodeObjectNamePart, with the
// wildcards kept in a pattern.
func TestEncodePart(t *testing.T) {
	for _, tc := range []struct {
		in      string
		pattern bool
		want    string
	}{
		{"orders.eu", false, "orders.eu"},
		{`a:b,c'd"e`, false, "a_b_c_d_e"},
		{"x=y?*", false, "x&amp;y&qe;&ast;"},
		{"orders.*", true, "orders.*"},
		{"q=?", true, "q&amp;?"},
	} {
		if got := EncodePart(tc.in, tc.pattern); got != tc.want {
			t.Errorf("EncodePart(%q, %v) = %q, want %q", tc.in, tc.pattern, got, tc.want)
		}
	}
}

// TestCanonical: key properties sorted, as the server keys its answers.
func TestCanonical(t *testing.T) {
	if got, want := canonical("org.apache.activemq:type=Broker,brokerName=b,destinationType=Queue"), "org.apache.activemq:brokerName=b,destinationType=Queue,type=Broker"; got != want {
		t.Errorf("canonical: %q, want %q", got, want)
	}
}
