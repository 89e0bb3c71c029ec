package engine_test

import (
	"strconv"
	"strings"
	"testing"

	"wharf/engine"
)

// TestNextMessageIDStable: the ids NextMessageID carves out of its blocks
// stay what they were when handed out, across many blocks, and each is
// the connection's prefix and the next sequence number.
func TestNextMessageIDStable(t *testing.T) {
	v := start(t, nil)
	c, err := v.e.Connect(engine.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000 // about a hundred blocks
	ids := make([]string, n)
	copies := make([]string, n)
	for i := range ids {
		ids[i] = c.NextMessageID()
		copies[i] = strings.Clone(ids[i])
	}
	prefix := ids[0][:strings.LastIndexByte(ids[0], ':')+1]
	if !strings.HasPrefix(prefix, "ID:") {
		t.Fatalf("first id %q: want ActiveMQ's form ID:...:seq", ids[0])
	}
	first, err := strconv.ParseUint(ids[0][len(prefix):], 10, 64)
	if err != nil {
		t.Fatalf("first id %q: %v", ids[0], err)
	}
	for i, id := range ids {
		if id != copies[i] {
			t.Fatalf("id %d changed after later ids were made: %q, was %q", i, id, copies[i])
		}
		if want := prefix + strconv.FormatUint(first+uint64(i), 10); id != want {
			t.Fatalf("id %d = %q, want %q", i, id, want)
		}
	}
}
