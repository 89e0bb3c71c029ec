package fuzzprog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusReadsFuzzFiles checks that Corpus reads what the fuzz
// coordinator writes ([]byte, byte as a rune literal or an escape, uint8)
// from testdata and the cache directory, and refuses what it cannot read
// rather than skipping it.
func TestCorpusReadsFuzzFiles(t *testing.T) {
	cache := t.TempDir()
	file := "go test fuzz v1\n[]byte(\"a\\x00b\")\nbyte('¢')\nbyte('\\x05')\nuint8(200)\n"
	if err := os.WriteFile(filepath.Join(cache, "0001"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Corpus("NoSuchTarget", cache)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].Values) != 4 {
		t.Fatalf("Corpus = %+v, want one entry of 4 values", got)
	}
	v := got[0].Values
	if b, ok := v[0].([]byte); !ok || !bytes.Equal(b, []byte("a\x00b")) {
		t.Errorf("value 0 = %#v, want []byte(\"a\\x00b\")", v[0])
	}
	for i, want := range []byte{0xa2, 5, 200} {
		if b, ok := v[i+1].(byte); !ok || b != want {
			t.Errorf("value %d = %#v, want byte %d", i+1, v[i+1], want)
		}
	}
	bad := "go test fuzz v1\nstring(\"x\")\n"
	if err := os.WriteFile(filepath.Join(cache, "0002"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Corpus("NoSuchTarget", cache); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Fatalf("Corpus with a string value: err %v, want \"not supported\"", err)
	}
}
