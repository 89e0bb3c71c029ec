package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"wharf/internal/version"
)

// asWharfEnv makes the test binary run main() with the arguments after
// "--": the tests below run the real command (exit status, stdout and
// stderr as a shell sees them) without building another binary.
const asWharfEnv = "WHARF_TEST_AS_WHARF"

func TestMain(m *testing.M) {
	if os.Getenv(asWharfEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"wharf"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// wharfCommand is the wharf command with args, run by the test binary.
func wharfCommand(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), asWharfEnv+"=1")
	return cmd
}

// runWharf runs wharf with args to its end and returns its exit status,
// stdout and stderr.
func runWharf(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	cmd := wharfCommand(ctx, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	}
	t.Fatalf("wharf %v: %v", args, err)
	return 0, "", ""
}

// TestWharfCommandLineHelp: --help of every command prints its usage to
// stdout, nothing to stderr, and exits 0.
func TestWharfCommandLineHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--help"}, "Flags of run:"},
		{[]string{"run", "-h"}, "Flags of run:"},
		{[]string{"kahadb", "--help"}, "wharf kahadb check DIR"},
		{[]string{"bench", "--help"}, "wharf bench [flags]"},
		{[]string{"help"}, "wharf run [flags]"},
		{[]string{"help"}, "wharf dlq list|replay|purge"},
		{[]string{"dstat", "--help"}, "wharf dstat [queues|topics] [flags]"},
		{[]string{"query", "-h"}, "-Q<type>=<name>"},
		{[]string{"browse", "--help"}, "wharf browse QUEUE [--selector S] [--max N]"},
		{[]string{"purge", "--help"}, "wharf purge QUEUE... [--selector S]"},
		{[]string{"dlq", "--help"}, "wharf dlq replay [QUEUE] [--selector S]"},
		{[]string{"dlq", "replay", "--help"}, "wharf dlq replay [QUEUE] [--selector S]"},
		{[]string{"connections", "--help"}, "Client ID, Remote Address, User and\nProtocol"},
		{[]string{"producer", "--help"}, "--transactionBatchSize N"},
		{[]string{"consumer", "--help"}, "--receiveTimeout D"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runWharf(t, tc.args...)
			if code != 0 || !strings.Contains(out, tc.want) || errOut != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 0, the usage (%q) on stdout, nothing on stderr", code, clip(out), errOut, tc.want)
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// TestWharfCommandLineUnknownFlag: an unknown flag or command is one line
// on stderr, the error and where the usage is, and exit status 1; no
// usage is dumped and nothing goes to stdout.
func TestWharfCommandLineUnknownFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--frob"}, "wharf: run: flag provided but not defined: -frob (wharf run --help lists the flags)\n"},
		{[]string{"bench", "--frob"}, "wharf: flag provided but not defined: -frob (wharf bench --help lists the flags)\n"},
		{[]string{"frob"}, "wharf: unknown command \"frob\" (wharf help lists the commands)\n"},
		{[]string{"kahadb"}, "wharf: kahadb: want a subcommand and a directory (wharf kahadb --help lists them)\n"},
		{[]string{"kahadb", "frob", "dir"}, "wharf: kahadb: unknown subcommand \"frob\" (wharf kahadb --help lists them)\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runWharf(t, tc.args...)
			if code != 1 || out != "" || errOut != tc.want {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, clip(out), errOut, tc.want)
			}
		})
	}
}

// TestWharfCommandLineConfigErrors: a misspelt attribute is one edit from
// a known one gets "did you mean", and an unresolved placeholder in a
// required setting is one error, in both configuration forms: each problem
// one line of stderr.
func TestWharfCommandLineConfigErrors(t *testing.T) {
	dir := t.TempDir()
	xmlPath := filepath.Join(dir, "activemq.xml")
	os.WriteFile(xmlPath, []byte(`<broker xmlns="http://activemq.apache.org/schema/core">
  <destinationPolicy><policyMap><policyEntries>
    <policyEntry queue=">" prodcerFlowControl="false"/>
  </policyEntries></policyMap></destinationPolicy>
  <transportConnectors>
    <transportConnector name="openwire" uri="tcp://127.0.0.1:${port}"/>
  </transportConnectors>
</broker>
`), 0o644)
	yamlPath := filepath.Join(dir, "wharf.yaml")
	os.WriteFile(yamlPath, []byte(`default_policy:
  prodcer_flow_control: false
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:${port}"}
`), 0o644)
	for _, tc := range []struct {
		file string
		want []string
	}{
		{xmlPath, []string{
			`wharf: ` + xmlPath + `:3:28: <policyEntry prodcerFlowControl="false">: unknown attribute prodcerFlowControl; did you mean producerFlowControl?`,
			xmlPath + `:6:41: <transportConnector uri="tcp://127.0.0.1:${port}">: unresolved placeholder ${port}`,
		}},
		{yamlPath, []string{
			`wharf: ` + yamlPath + `:2:3: default_policy: unknown key "prodcer_flow_control"; did you mean "producer_flow_control"?`,
			yamlPath + `:4:27: transport_connectors[0].uri "tcp://127.0.0.1:${port}": unresolved placeholder ${port}`,
		}},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			code, out, errOut := runWharf(t, "run", "--config", tc.file)
			want := strings.Join(tc.want, "\n") + "\n"
			if code != 1 || out != "" || errOut != want {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant exit 1, nothing on stdout, stderr:\n%s", code, out, errOut, want)
			}
		})
	}
}

// TestWharfRunStartupLogAndSIGTERM: `wharf run --log-format json` names
// the version, the shard count and the data directory when it has
// started; every line of its log (gnet's included, at debug level) has
// one key per field; SIGTERM stops it with status 0.
func TestWharfRunStartupLogAndSIGTERM(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wharf.yaml")
	os.WriteFile(cfg, fmt.Appendf(nil, `shards: 2
data_directory: %q
transport_connectors:
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
`, filepath.Join(dir, "data")), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := wharfCommand(ctx, "run", "--config", cfg, "--log-format", "json", "--log-level", "debug", "--http=false")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stderr)
	var started map[string]any
	for started == nil && sc.Scan() {
		lines = append(lines, sc.Text())
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec["msg"] == "broker started" {
			started = rec
		}
	}
	if started == nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no \"broker started\" line; log:\n%s", strings.Join(lines, "\n"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wharf after SIGTERM: %v, want exit status 0; log:\n%s", err, strings.Join(lines, "\n"))
	}
	want := map[string]any{
		"version":   version.Broker,
		"shards":    float64(2),
		"data_dir":  filepath.Join(dir, "data"),
		"store_dir": filepath.Join(dir, "data", "kahadb"),
		"store":     "kahaDB",
	}
	for k, v := range want {
		if started[k] != v {
			t.Errorf("broker started: %s = %v, want %v (line %v)", k, started[k], v, started)
		}
	}
	gnet := 0
	for _, line := range lines {
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
		if strings.Contains(line, `"component":"gnet"`) {
			gnet++
		}
	}
	if gnet == 0 {
		t.Errorf("no gnet line at debug level; log:\n%s", strings.Join(lines, "\n"))
	}
}

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

// TestWharfSignalsSecondForcesExit: the first signal stops the broker
// (cancels the start-up or the run); a second, during a stop that hangs,
// exits at once with status 1.
func TestWharfSignalsSecondForcesExit(t *testing.T) {
	sig := make(chan os.Signal, 2)
	done := make(chan struct{})
	ctx, stop := context.WithCancelCause(context.Background())
	exited := make(chan int, 1)
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logBuf, nil))
	returned := make(chan struct{})
	go func() {
		watchSignals(sig, done, stop, log, func(code int) { exited <- code })
		close(returned)
	}()
	sig <- syscall.SIGTERM
	<-ctx.Done()
	if got := context.Cause(ctx).Error(); got != "signal terminated" {
		t.Fatalf("cause after SIGTERM: %q, want \"signal terminated\"", got)
	}
	sig <- syscall.SIGINT
	if code := <-exited; code != 1 {
		t.Fatalf("second signal: exit(%d), want exit(1)", code)
	}
	<-returned
	if !strings.Contains(logBuf.String(), "second signal: exiting without a clean shutdown") {
		t.Fatalf("second signal not logged:\n%s", logBuf.String())
	}
}
