package security

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSecurityLoginConfigMatchesJava compares parseLoginConfig with Java
// 17's ConfigFile on testdata/java/loginconfig/*.config (the .golden files
// are LoginConfigDiff.java's output, run with -Dactivemq.conf=/etc/wharf
// and the names below).
func TestSecurityLoginConfigMatchesJava(t *testing.T) {
	names := []string{"activemq", "guest-fallback", "cert-domain", "a", "b c", "d"}
	files, _ := filepath.Glob("testdata/java/loginconfig/*.config")
	if len(files) < 5 {
		t.Fatalf("only %d files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(f + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			cfg, err := parseLoginConfig(f, in, func(k string) (string, bool) {
				if k == "activemq.conf" {
					return "/etc/wharf", true
				}
				return "", false
			})
			if err != nil {
				got.WriteString("ERROR\n")
			} else {
				for _, n := range names {
					e := cfg.entries[n]
					if e == nil || len(e.modules) == 0 {
						got.WriteString(n + ": none\n")
						continue
					}
					for _, m := range e.modules {
						var opts []string
						for k, v := range m.options {
							opts = append(opts, k+"="+v)
						}
						slices.Sort(opts)
						got.WriteString(n + ": " + m.class + " " + strings.ToUpper(m.flag.String()) + " {" + strings.Join(opts, ", ") + "}\n")
					}
				}
			}
			if got.String() != string(want) {
				t.Errorf("Wharf:\n%s\nJava:\n%s", got.String(), want)
			}
		})
	}
}
