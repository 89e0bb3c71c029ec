package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWharfCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"help"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "wharf run") {
		t.Fatalf("help: err %v, output %q", err, out.String())
	}
	if err := run([]string{"frobnicate"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), `"frobnicate"`) {
		t.Fatalf("unknown command: %v", err)
	}
	if err := run([]string{"run", "-Dnovalue"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "-Dname=value") {
		t.Fatalf("bad -D: %v", err)
	}
	if err := run([]string{"run", "--log-level", "loud"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "loud") {
		t.Fatalf("bad log level: %v", err)
	}
	cfg := filepath.Join(t.TempDir(), "activemq.xml")
	os.WriteFile(cfg, []byte(`<broker xmlns="http://activemq.apache.org/schema/core">
  <networkBridge/>
</broker>`), 0o644)
	err := run([]string{"run", "--config", cfg}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "activemq.xml:2") || !strings.Contains(err.Error(), "networkBridge") {
		t.Fatalf("unsupported element: %v, want it named with its line", err)
	}
}

func TestWharfKahaDBSubcommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"kahadb", "check", t.TempDir()}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "no journal") {
		t.Fatalf("check of an empty directory: %v", err)
	}
	if err := run([]string{"kahadb", "frob", t.TempDir()}, &out, &errOut); err == nil || !strings.Contains(err.Error(), `"frob"`) {
		t.Fatalf("unknown subcommand: %v", err)
	}
}

func TestWharfBenchCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"bench", "--url", "tcp://127.0.0.1:1", "--count", "10"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error()+errOut.String(), "connect") {
		t.Fatalf("bench against no broker: %v, %s", err, errOut.String())
	}
	if err := run([]string{"bench", "--scenario", "nonsense"}, &out, &errOut); err == nil {
		t.Fatal("an unknown scenario was accepted")
	}
}

// TestWharfSlowAccessTimeDefine: ActiveMQ's system property for its "Slow
// KahaDB access" lines sets the engine's threshold; 0 turns them off, as in
// ActiveMQ, and a value that is not milliseconds is refused.
func TestWharfSlowAccessTimeDefine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		vars    defines
		want    time.Duration
		wantErr bool
	}{
		{"absent: the engine's default", defines{}, 0, false},
		{"milliseconds", defines{slowAccessDefine: "1500"}, 1500 * time.Millisecond, false},
		{"zero turns it off", defines{slowAccessDefine: "0"}, -1, false},
		{"not a number", defines{slowAccessDefine: "fast"}, 0, true},
		{"negative", defines{slowAccessDefine: "-5"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := slowAccessTime(tc.vars)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("slowAccessTime(%v) = %v, %v; want %v, error %v", tc.vars, got, err, tc.want, tc.wantErr)
			}
		})
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"run", "-D" + slowAccessDefine + "=soon"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), slowAccessDefine) {
		t.Fatalf("wharf run with a bad %s: %v, want an error naming it", slowAccessDefine, err)
	}
}
