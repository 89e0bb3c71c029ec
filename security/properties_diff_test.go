package security

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestSecurityPropertiesMatchJava compares parseProperties with
// java.util.Properties.load on the files in testdata/java/props (the
// .golden files are PropsDiff.java's output with Java 17).
func TestSecurityPropertiesMatchJava(t *testing.T) {
	files, _ := filepath.Glob("testdata/java/props/*.properties")
	if len(files) < 5 {
		t.Fatalf("only %d files", len(files))
	}
	esc := func(s string) string {
		var b strings.Builder
		for _, u := range utf16.Encode([]rune(s)) {
			if u < 0x20 || u > 0x7e || u == '\\' || u == '=' {
				fmt.Fprintf(&b, `\u%04x`, u)
			} else {
				b.WriteByte(byte(u))
			}
		}
		return b.String()
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if filepath.Base(f) == "unpaired.properties" {
				// DEVIATION: Java keeps a lone surrogate (\ud83d) in
				// the string; Go strings are UTF-8 and hold U+FFFD.
				// Passwords compare as the client's UTF-8, which can
				// never hold a lone surrogate either.
				t.Skip("lone surrogate: known, documented difference")
			}
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(f + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			var got strings.Builder
			p, err := parseProperties(in)
			if err != nil {
				got.WriteString("ERROR\n")
			} else {
				keys := slices.Clone(p.keys)
				slices.SortFunc(keys, func(a, b string) int {
					return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
				})
				for _, k := range keys {
					got.WriteString(esc(k) + "=" + esc(p.values[k]) + "\n")
				}
			}
			if got.String() != string(want) {
				t.Errorf("Wharf:\n%s\nJava:\n%s", got.String(), want)
			}
		})
	}
}
