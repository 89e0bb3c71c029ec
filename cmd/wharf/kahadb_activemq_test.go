package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wharf kahadb activemq says what to do with a directory that is not a
// store of several shards (conformance/kahadb_multishard_test.go runs it
// on one and starts ActiveMQ with what it prints).
func TestWharfKahaDBActiveMQ(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"kahadb", "activemq", t.TempDir()}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "not a store of several shard-<i>-of-<n> directories") {
		t.Fatalf("empty directory: %v", err)
	}
	plain := t.TempDir()
	if err := os.WriteFile(filepath.Join(plain, "db-1.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"kahadb", "activemq", plain}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "ActiveMQ opens it as it is, with <kahaDB directory=") {
		t.Fatalf("a single journal: %v", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q for a directory it refused", out.String())
	}
}
