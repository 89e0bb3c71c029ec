package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"wharf/engine/message"
)

// Wharf tried as a new user would, with AMQP 1.0 clients from other
// ecosystems: Apache Qpid Proton's Python binding (Debian's
// python3-qpid-proton) and the rhea library for Node.js (pinned by
// amqpclients/package-lock.json). `make test` installs both when it can;
// without them these tests skip, saying what to install.
//
// Each script runs four cases against an in-process broker and prints one
// JSON line per case (amqpClientResult). Frame traces for a failing case:
// PN_TRACE_FRM=1 (Proton) or DEBUG='rhea*' (rhea) in go test's environment;
// the script's stderr is in the failure message.

// amqpClientTimeout bounds a whole script run; each wait inside a script is
// bounded by 10 s, and a run that passes takes about a second.
const amqpClientTimeout = 2 * time.Minute

const (
	protonPython      = "/usr/bin/python3"
	protonInstallHint = "apt-get install -y python3-qpid-proton"
	rheaInstallHint   = "apt-get install -y nodejs npm && npm ci --prefix conformance/amqpclients"
)

// amqpClientResult is one result line of an amqpclients script.
type amqpClientResult struct {
	Client   string         `json:"client"`
	Case     string         `json:"case"`
	Passed   bool           `json:"passed"`
	Sent     []string       `json:"sent"`
	Received []string       `json:"received"`
	Error    string         `json:"error"`
	Detail   map[string]any `json:"detail"`
	Millis   int            `json:"ms"`
}

// amqpClientCases are the cases every script runs, with the number of
// message bodies each sends (for request-reply: the replies it expects).
var amqpClientCases = []struct {
	name string
	sent int
}{
	{"queue", 3},
	{"topic", 3},
	{"durable", 3},
	{"request-reply", 3},
}

func TestConformanceAMQPProtonPython(t *testing.T) {
	if _, err := os.Stat(protonPython); err != nil {
		t.Skipf("%s not found (apt-get install -y python3 && %s)", protonPython, protonInstallHint)
	}
	if err := exec.Command(protonPython, "-c", "import proton.reactor").Run(); err != nil {
		t.Skipf("%s cannot import proton.reactor (%s)", protonPython, protonInstallHint)
	}
	runAMQPClient(t, "proton", protonPython, filepath.Join("amqpclients", "proton_client.py"))
}

func TestConformanceAMQPRheaNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node not found (%s)", rheaInstallHint)
	}
	if _, err := os.Stat(filepath.Join("amqpclients", "node_modules", "rhea", "package.json")); err != nil {
		t.Skipf("rhea not installed in conformance/amqpclients/node_modules (%s)", rheaInstallHint)
	}
	runAMQPClient(t, "rhea", node, filepath.Join("amqpclients", "rhea_client.js"))
}

// runAMQPClient runs script with interp against a fresh broker, one subtest
// per case, and checks what the broker kept afterwards.
func runAMQPClient(t *testing.T, client, interp, script string) {
	t.Helper()
	b := amqpBroker(t, nil)
	run := uniq(t)
	ctx, cancel := context.WithTimeout(context.Background(), amqpClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, interp, script, b.AMQPAddr(), run)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("%s killed after %v", script, amqpClientTimeout)
	}

	results := map[string]amqpClientResult{}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		var r amqpClientResult
		if !strings.HasPrefix(line, "{") {
			t.Logf("%s: %s", client, line)
			continue
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("%s printed a result line that is not JSON: %v\n%s", script, err, line)
			continue
		}
		if r.Client != client {
			t.Errorf("result line of client %q, want %q: %s", r.Client, client, line)
		}
		results[r.Case] = r
	}

	failed := 0
	for _, tc := range amqpClientCases {
		r, ok := results[tc.name]
		if !ok || !r.Passed {
			failed++
		}
		t.Run(tc.name, func(t *testing.T) {
			if !ok {
				t.Fatalf("%s printed no result for case %q", script, tc.name)
			}
			if !r.Passed {
				t.Fatalf("%s %s failed after %d ms: %s\nsent %q\nreceived %q\ndetail %v", client, tc.name, r.Millis, r.Error, r.Sent, r.Received, r.Detail)
			}
			if len(r.Sent) != tc.sent {
				t.Errorf("sent %d messages (%q), want %d", len(r.Sent), r.Sent, tc.sent)
			}
			for _, s := range r.Sent {
				// Bodies name the run, so that nothing left by another
				// run can pass for this one's.
				if !strings.Contains(s, run) {
					t.Errorf("sent body %q does not name run %q", s, run)
				}
			}
			if !slices.Equal(r.Received, r.Sent) {
				t.Errorf("received %q, want %q (as sent, in order)", r.Received, r.Sent)
			}
			switch tc.name {
			case "queue":
				q := message.QueueDest(run + ".queue")
				eventually(t, func() bool { return b.Engine().Stats(q).QueueSize == 0 })
			case "durable":
				// The broker's source keeps the asked durability
				// (unsettled-state), as ActiveMQ's does.
				if d, _ := r.Detail["remote_source_durability"].(float64); d != 2 {
					t.Errorf("the broker's source has durable %v, want 2 (unsettled-state)", r.Detail["remote_source_durability"])
				}
				// Closing the link at the end unsubscribed.
				cid := run + "-" + client + "-durable"
				eventually(t, func() bool { return len(b.Engine().DurableSubs(cid)) == 0 })
			case "request-reply":
				// ActiveMQ names a dynamic node temp-queue://<id>.
				if to, _ := r.Detail["reply_to"].(string); !strings.HasPrefix(to, "temp-queue://") {
					t.Errorf("dynamic receiver address %q, want a temp-queue:// name", to)
				}
			}
		})
	}

	var exit *exec.ExitError
	switch {
	case err == nil && failed == 0:
	case errors.As(err, &exit) && exit.ExitCode() == 1 && failed > 0:
		// The script's status for "a case failed", reported above.
		t.Logf("%s stderr:\n%s", script, tail(stderr.String(), 8000))
	default:
		t.Errorf("%s: %v with %d of %d cases failed; stderr:\n%s", script, err, failed, len(amqpClientCases), tail(stderr.String(), 8000))
	}
}

// Two receivers on one topic in one connection with Proton's
// BlockingConnection (amqpclients/proton_blocking.py). With Proton's default
// link names both links are named <container id>-<address>; Wharf, like
// ActiveMQ (whose AMQP transport keys its links by the consumer and
// producer ids it makes, and reads the link name only as a durable
// subscription's name), attaches both (the conform case amqp/link/same-link-name).
// Proton-C 0.37 itself then refuses the broker's answer to the second
// attach, as it does RabbitMQ 3.10's: it finds the first link by name and
// closes with amqp:invalid-field "link name already attached". The case
// checks that the failure is that local one and that the broker refused
// nothing; with distinct names (name=) both receivers get the message.
func TestConformanceAMQPProtonBlockingTwoReceivers(t *testing.T) {
	if err := exec.Command(protonPython, "-c", "import proton.utils").Run(); err != nil {
		t.Skipf("%s cannot import proton.utils (%s)", protonPython, protonInstallHint)
	}
	b := amqpBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), amqpClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, protonPython, filepath.Join("amqpclients", "proton_blocking.py"), b.AMQPAddr(), uniq(t))
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	results := map[string]amqpClientResult{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		var r amqpClientResult
		if !strings.HasPrefix(line, "{") {
			continue
		}
		if jerr := json.Unmarshal([]byte(line), &r); jerr != nil {
			t.Errorf("result line is not JSON: %v\n%s", jerr, line)
			continue
		}
		results[r.Case] = r
	}
	for _, name := range []string{"default-names", "distinct-names"} {
		r, ok := results[name]
		switch {
		case !ok:
			t.Errorf("%s: no result (exit: %v); stderr:\n%s", name, err, tail(stderr.String(), 4000))
		case !r.Passed:
			t.Errorf("%s failed: %s\ndetail %v", name, r.Error, r.Detail)
		default:
			t.Logf("%s: %v", name, r.Detail)
		}
	}
	if err != nil && !t.Failed() {
		t.Errorf("proton_blocking.py: %v; stderr:\n%s", err, tail(stderr.String(), 4000))
	}
}
