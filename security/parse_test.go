package security

import (
	"encoding/asn1"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
)

func TestSecurityPropertiesParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want map[string]string
		keys []string
	}{
		{"equals, colon and blank separators", "a=1\nb:2\nc 3\nd = 4\ne\t:\t5\n", map[string]string{"a": "1", "b": "2", "c": "3", "d": "4", "e": "5"}, nil},
		{"comments and blank lines", "# c\n! c\n\n   \n  # indented\nk=v\n", map[string]string{"k": "v"}, nil},
		{"continuation drops leading blanks", "k=a\\\n    b\\\n  c\n", map[string]string{"k": "abc"}, nil},
		{"escaped backslash is not a continuation", "k=a\\\\\nj=b\n", map[string]string{"k": `a\`, "j": "b"}, nil},
		{"escapes", `k\ ey\=x=\t\n\u0041\z`, map[string]string{"k ey=x": "\t\nAz"}, nil},
		{"only the first separator splits", "k==v:w", map[string]string{"k": "=v:w"}, nil},
		{"key without value", "lonely\n", map[string]string{"lonely": ""}, nil},
		{"last duplicate wins, first position kept", "a=1\nb=2\na=3\n", map[string]string{"a": "3", "b": "2"}, []string{"a", "b"}},
		{"CR and CRLF line ends", "a=1\rb=2\r\nc=3", map[string]string{"a": "1", "b": "2", "c": "3"}, nil},
		{"bytes are ISO-8859-1", "k=\xc3\xa9", map[string]string{"k": "Ã©"}, nil},
		{"surrogate pair escape", `k=\ud83d\ude00`, map[string]string{"k": "😀"}, nil},
		{"comment char inside a continuation is data", "k=a\\\n#b\n", map[string]string{"k": "a#b"}, nil},
		{"trailing backslash at end of input", `k=v\`, map[string]string{"k": "v"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parseProperties([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(p.values, tc.want) {
				t.Errorf("got %q, want %q", p.values, tc.want)
			}
			if tc.keys != nil && strings.Join(p.keys, ",") != strings.Join(tc.keys, ",") {
				t.Errorf("keys %q, want %q", p.keys, tc.keys)
			}
		})
	}
	for _, bad := range []string{`k=\u12`, `k=\u12G4`} {
		if _, err := parseProperties([]byte(bad)); !errors.Is(err, ErrPropertiesUnicode) {
			t.Errorf("%q: err %v, want ErrPropertiesUnicode", bad, err)
		}
	}
}

func TestSecurityGroupsNotTrimmed(t *testing.T) {
	// ActiveMQ splits "g=a, b" on "," without trimming: " b" is the
	// member, not "b".
	p, err := parseProperties([]byte("g=a, b\nh=a\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := newSnapshot(p, discard)
	if got := strings.Join(s.groupsOf["a"], ","); got != "g,h" {
		t.Errorf("groups of a = %q", got)
	}
	if _, ok := s.groupsOf["b"]; ok {
		t.Error(`"b" has a group; ActiveMQ gives it to " b"`)
	}
	if got := strings.Join(s.groupsOf[" b"], ","); got != "g" {
		t.Errorf(`groups of " b" = %q`, got)
	}
}

func TestSecurityLoginConfigParse(t *testing.T) {
	src := `/* block
comment */ activemq {
    // line comment
    org.apache.activemq.jaas.PropertiesLoginModule Required
        debug=true
        org.apache.activemq.jaas.properties.user="${activemq.conf}${/}users.properties"
        quoted="a\tb\101\"c" ;
    org.apache.activemq.jaas.GuestLoginModule OPTIONAL;
};
"quoted name" { };
`
	cfg, err := parseLoginConfig("login.config", []byte(src), func(k string) (string, bool) {
		if k == "activemq.conf" {
			return "/etc/wharf", true
		}
		return "", false
	})
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.entries["activemq"]
	if e == nil || len(e.modules) != 2 || e.line != 2 {
		t.Fatalf("entry = %+v", e)
	}
	m := e.modules[0]
	if m.class != classProperties || m.flag != flagRequired || m.line != 4 {
		t.Errorf("module = %+v", m)
	}
	want := map[string]string{"debug": "true", propUserFile: "/etc/wharf/users.properties", "quoted": "a\tbA\"c"}
	if !maps.Equal(m.options, want) {
		t.Errorf("options = %q, want %q", m.options, want)
	}
	if e.modules[1].flag != flagOptional {
		t.Errorf("flag = %v", e.modules[1].flag)
	}
	if q := cfg.entries["quoted name"]; q == nil || len(q.modules) != 0 {
		t.Errorf("quoted entry = %+v", q)
	}

	for _, tc := range []struct{ in, want string }{
		{"e { m required x=5; };", "expected [option value], found [5]"},
		{"e { m required x='v'; };", "expected [option value], found [v]"},
		{"e { m required", "expected [option key], read [end of file]"},
		{"e { m", "expected [controlFlag], read [end of file]"},
		{"e { m required x=\"${a}\"; };", "unable to expand property a"},
		{"e { m required x=\"\"; }; e { };", "multiple entries for e"},
		{"{ };", "expected [application name], found [{]"},
		{"e { m required x=/path; };", "expected [option value], read [end of file]"},
	} {
		_, err := parseLoginConfig("f", []byte(tc.in), func(string) (string, bool) { return "", false })
		if !errors.Is(err, ErrLoginConfigSyntax) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err %v, want %q", tc.in, err, tc.want)
		}
	}
}

// FuzzSecurityProperties checks the users/groups parser: no panic, bounded
// output, and store -> parse round trip of whatever parsed.
func FuzzSecurityProperties(f *testing.F) {
	for _, s := range []string{
		"orders-svc=orders-pw\nfulfilment = fulfil-pw\nops:ops-pw\n",
		"producers=orders-svc\nconsumers=fulfilment,client\n",
		"client=CN=client, OU=Wharf, O=Example\nmailer=/.*CN=mail/\n",
		"# c\n! c\nk=a\\\n  b\n", `k\ ey\=x=\t\n\u0041\z`, "a=1\rb=2\r\nc=3", `k=\ud83d\ude00`,
		"k=\xc3\xa9\xff", `k=\u12`, "k=v\\",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := parseProperties(b)
		if err != nil {
			return
		}
		if len(p.keys) != len(p.values) || len(p.keys) > len(b)+1 {
			t.Fatalf("%d keys, %d values from %d bytes", len(p.keys), len(p.values), len(b))
		}
		out := storeProperties(p)
		q, err := parseProperties(out)
		if err != nil {
			t.Fatalf("stored form does not parse: %v\n%q", err, out)
		}
		if !maps.Equal(p.values, q.values) {
			t.Fatalf("round trip:\n%q\n%q\nvia %q", p.values, q.values, out)
		}
		_ = newSnapshot(p, discard)
	})
}

// FuzzSecurityLoginConfig checks the login.config parser: no panic, and a
// parsed file's entries name modules with valid flags.
func FuzzSecurityLoginConfig(f *testing.F) {
	for _, s := range []string{
		"activemq {\n org.apache.activemq.jaas.PropertiesLoginModule required\n org.apache.activemq.jaas.properties.user=\"users.properties\"\n org.apache.activemq.jaas.properties.group=\"groups.properties\";\n};\n",
		"/* c */ a { m sufficient k=\"${x}\"; n optional; }; // x\n\"b\" { };",
		"e { m required x='v'; };", "e { m required x=\"a\\tb\\101\"; };", "e { m required x=\"${{y}}${/}\"; };",
		"e {", "/*", "\"unterminated\n{", "-1 { };", "é { m required; };",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := parseLoginConfig("f", b, func(k string) (string, bool) { return "v", k != "" })
		if err != nil {
			if !errors.Is(err, ErrLoginConfigSyntax) && !errors.Is(err, ErrLoginConfigTooLarge) {
				t.Fatalf("error %v wraps no parser sentinel", err)
			}
			return
		}
		n := 0
		for _, e := range cfg.entries {
			for _, m := range e.modules {
				n++
				if m.flag > flagOptional {
					t.Fatalf("flag %d", m.flag)
				}
			}
		}
		if n > len(b) {
			t.Fatalf("%d modules from %d bytes", n, len(b))
		}
	})
}

func FuzzSecurityJavaDN(f *testing.F) {
	f.Add([]byte{0x30, 0x00})
	f.Add([]byte{0x30, 0x0d, 0x31, 0x0b, 0x30, 0x09, 0x06, 0x03, 0x55, 0x04, 0x03, 0x0c, 0x02, 'h', 'i'})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := javaDNFromRaw(b)
		if err == nil && len(s) > 16*len(b)+16 {
			t.Fatalf("%d bytes of DN from %d bytes", len(s), len(b))
		}
	})
}

var discard = slog.New(slog.DiscardHandler)

func TestSecurityJavaDNNonString(t *testing.T) {
	// Go's x509 parser refuses a certificate whose subject holds a
	// non-string value, so this is the subject alone. Java 17 prints
	// "OID.1.2.3.5=#02012a, CN=oid" for it (an INTEGER 42 under an
	// unknown OID).
	type atv struct {
		Type  asn1.ObjectIdentifier
		Value any
	}
	raw, err := asn1.Marshal([][]atv{
		{{Type: asn1.ObjectIdentifier{2, 5, 4, 3}, Value: "oid"}},
		{{Type: asn1.ObjectIdentifier{1, 2, 3, 5}, Value: 42}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := javaDNFromRaw(toSets(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	if want := "OID.1.2.3.5=#02012a, CN=oid"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// toSets rewrites the RDN SEQUENCE tags of a marshalled [][]atv into SET
// tags, as a Name is encoded.
func toSets(t *testing.T, raw []byte) []byte {
	t.Helper()
	var rdns []asn1.RawValue
	if _, err := asn1.Unmarshal(raw, &rdns); err != nil {
		t.Fatal(err)
	}
	var body []byte
	for _, r := range rdns {
		b := slices.Clone(r.FullBytes)
		b[0] = 0x31
		body = append(body, b...)
	}
	out, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSequence, IsCompound: true, Bytes: body})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
