package transport

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// jsonKeys returns the top-level keys of one JSON object in the order
// written, duplicates included (encoding/json keeps only the last).
func jsonKeys(line string) ([]string, error) {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %v %v", tok, err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// TestTransportGnetLogJSONKeysUnique: gnet's own log lines, in the
// broker's JSON log, have one key per field (its text once had a second
// "msg" key next to slog's).
func TestTransportGnetLogJSONKeysUnique(t *testing.T) {
	var buf syncBuffer
	o := quietOptions()
	o.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	l := listen(t, echoFactory, o)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	gnetLines := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		keys, err := jsonKeys(line)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		seen := map[string]bool{}
		for _, k := range keys {
			if seen[k] {
				t.Errorf("log line %q has key %q twice", line, k)
			}
			seen[k] = true
		}
		var rec struct{ Msg, Component, Detail string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Component == "gnet" {
			gnetLines++
			if rec.Msg != "gnet" || rec.Detail == "" {
				t.Errorf("gnet line %q: want msg \"gnet\" and its text in detail", line)
			}
		}
	}
	if gnetLines == 0 {
		t.Fatalf("no gnet line logged at debug level; log:\n%s", buf.String())
	}
}
