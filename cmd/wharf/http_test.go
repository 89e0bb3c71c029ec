package main

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-stomp/stomp/v3"
)

// runningWharf is a `wharf run` started by startRun.
type runningWharf struct {
	cmd *exec.Cmd
	sc  *bufio.Scanner
	// msgs are the log messages up to "broker started", recs their lines
	// decoded; webAddr is the web server's address, "" when it logged none.
	msgs      []string
	recs      []map[string]any
	webAddr   string
	stompAddr string
}

// startRun runs wharf run with a config of one STOMP connector and the
// web server on port 0, plus args, until it logs "broker started".
func startRun(t *testing.T, args ...string) *runningWharf {
	t.Helper()
	return startRunIn(t, t.TempDir(), "{port: 0}", args...)
}

// startRunHTTP is startRun with http, the YAML of the web server's
// settings, in the configuration. testRealm is written beside it as
// realm.properties, for http: {realm: realm.properties}.
func startRunHTTP(t *testing.T, http string, args ...string) *runningWharf {
	t.Helper()
	return startRunIn(t, t.TempDir(), http, args...)
}

// startRunIn is startRunHTTP with its config and data directory in dir,
// so that a second run recovers what the first stored.
func startRunIn(t *testing.T, dir, http string, args ...string) *runningWharf {
	t.Helper()
	return startRunConf(t, dir, http, "", args...)
}

// startRunConf is startRunIn with more top-level YAML in the
// configuration (security, for one).
func startRunConf(t *testing.T, dir, http, extra string, args ...string) *runningWharf {
	t.Helper()
	cfg := filepath.Join(dir, "wharf.yaml")
	os.WriteFile(filepath.Join(dir, "realm.properties"), []byte(testRealm), 0o644)
	os.WriteFile(cfg, fmt.Appendf(nil, `data_directory: %q
transport_connectors:
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
http: %s
%s
`, filepath.Join(dir, "data"), http, extra), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	w := &runningWharf{cmd: wharfCommand(ctx, append([]string{"run", "--config", cfg, "--log-format", "json"}, args...)...)}
	stderr, err := w.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		w.cmd.Wait()
	})
	w.sc = bufio.NewScanner(stderr)
	for w.sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(w.sc.Bytes(), &rec) != nil {
			continue
		}
		msg, _ := rec["msg"].(string)
		w.msgs = append(w.msgs, msg)
		w.recs = append(w.recs, rec)
		if msg == "web server listening" {
			w.webAddr, _ = rec["addr"].(string)
		}
		if msg == "Listening for connections at" && rec["connector"] == "stomp" {
			w.stompAddr, _ = rec["addr"].(string)
		}
		if msg == "broker started" {
			return w
		}
	}
	t.Fatalf("wharf run ended before \"broker started\"; log %q", w.msgs)
	return nil
}

// stop sends SIGTERM and returns the log messages after it.
func (w *runningWharf) stop(t *testing.T) []string {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for w.sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(w.sc.Bytes(), &rec) == nil {
			msg, _ := rec["msg"].(string)
			rest = append(rest, msg)
		}
	}
	if err := w.cmd.Wait(); err != nil {
		t.Errorf("wharf run after SIGTERM: %v, want exit status 0", err)
	}
	return rest
}

// TestWharfRunHTTP: `wharf run` starts the web server before the broker,
// says /readyz once the broker has started, and stops it last on SIGTERM.
func TestWharfRunHTTP(t *testing.T) {
	w := startRun(t)
	if w.webAddr == "" {
		t.Fatalf("log %q: no web server listening before the broker started", w.msgs)
	}
	resp, err := http.Get("http://" + w.webAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/readyz after \"broker started\": %d, want 200", resp.StatusCode)
	}
	// The web console is served (open on loopback: no realm users).
	resp, err = http.Get("http://" + w.webAddr + "/admin/queues.jsp")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), "<h1>Queues</h1>") {
		t.Errorf("/admin/queues.jsp: %d %.300s, want the console's queue list", resp.StatusCode, page)
	}
	if got := strings.Join(w.stop(t), "|"); !strings.HasSuffix(got, "broker stopped|web server stopped") {
		t.Errorf("stop log %q: want the broker stopped, then the web server", got)
	}
}

// logged returns the lines up to "broker started" whose message is msg.
func (w *runningWharf) logged(msg string) []map[string]any {
	var out []map[string]any
	for _, r := range w.recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// TestWharfRunStartupSummary: `wharf run` logs ActiveMQ's start-up lines
// (the persistence adapter, each connector listening and started, the
// temp store) and a summary on "broker started": every connector with its
// scheme and address, the store, and what recovery found, here the
// persistent messages a first run stored.
func TestWharfRunStartupSummary(t *testing.T) {
	dir := t.TempDir()
	w := startRunIn(t, dir, "{port: 0}")
	conn, err := stomp.Dial("tcp", w.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"/queue/summary.a", "/queue/summary.b", "/queue/summary.b"} {
		if err := conn.Send(q, "text/plain", []byte("kept"), stomp.SendOpt.Receipt, stomp.SendOpt.Header("persistent", "true")); err != nil {
			t.Fatal(err)
		}
	}
	conn.Disconnect()
	w.stop(t)

	w = startRunIn(t, dir, "{port: 0}")
	defer w.stop(t)
	for _, m := range []string{"broker is starting", "Using Persistence Adapter", "PListStore started", "Listening for connections at", "Connector started", "broker started"} {
		if len(w.logged(m)) != 1 {
			t.Errorf("%d lines %q; log %q", len(w.logged(m)), m, w.msgs)
		}
	}
	kahaDir := filepath.Join(dir, "data", "kahadb")
	adapter := "KahaDBPersistenceAdapter[" + kahaDir + "]"
	if got := w.logged("Using Persistence Adapter"); len(got) == 1 && got[0]["adapter"] != adapter {
		t.Errorf("Using Persistence Adapter: %v, want %s", got[0]["adapter"], adapter)
	}
	uri := "stomp://" + w.stompAddr
	if got := w.logged("Listening for connections at"); len(got) == 1 && (got[0]["uri"] != uri || got[0]["connector"] != "stomp") {
		t.Errorf("Listening for connections at: %v, want connector stomp at %s", got[0], uri)
	}
	started := w.recs[len(w.recs)-1]
	want := map[string]any{
		"connectors":               []any{"stomp=" + uri},
		"adapter":                  adapter,
		"messages_recovered":       3.0,
		"durable_subs":             0.0,
		"prepared_xa_transactions": 0.0,
	}
	for k, v := range want {
		if fmt.Sprint(started[k]) != fmt.Sprint(v) {
			t.Errorf("broker started: %s = %v, want %v", k, started[k], v)
		}
	}
	// The two queues, and whatever else the first run created (its
	// advisory topics are in the store too).
	if n, _ := started["destinations"].(float64); n < 2 {
		t.Errorf("broker started: destinations = %v, want at least the 2 queues", started["destinations"])
	}
	if ms, ok := started["recovery_ms"].(float64); !ok || ms < 0 {
		t.Errorf("broker started: recovery_ms = %v, want a duration", started["recovery_ms"])
	}
}

// TestWharfRunHTTPFlag: --http=false starts no web server, and run --help
// says so.
func TestWharfRunHTTPFlag(t *testing.T) {
	w := startRun(t, "--http=false")
	if w.webAddr != "" || slices.Contains(w.msgs, "web server listening") {
		t.Errorf("--http=false: web server at %q; log %q", w.webAddr, w.msgs)
	}
	w.stop(t)
	code, out, _ := runWharf(t, "run", "--help")
	if code != 0 || !strings.Contains(out, "--http=false") {
		t.Errorf("wharf run --help: exit %d, does not document --http=false:\n%s", code, out)
	}
}

// TestWharfRunJolokia: the Jolokia API of a `wharf run` sees a message a
// STOMP client sent (QueueSize) and its exec changes the broker (addQueue,
// purge), on the loopback server without logins.
func TestWharfRunJolokia(t *testing.T) {
	w := startRun(t)
	if w.stompAddr == "" {
		t.Fatalf("log %q: no STOMP listener address", w.msgs)
	}
	conn, err := stomp.Dial("tcp", w.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	if err := conn.Send("/queue/jolo.orders", "text/plain", []byte("one"), stomp.SendOpt.Receipt); err != nil {
		t.Fatal(err)
	}
	api := "http://" + w.webAddr + "/api/jolokia"
	q := "org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,destinationName=jolo.orders"
	jolokia := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(api, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if resp.StatusCode != 200 || out["status"] != 200.0 {
			t.Fatalf("%s: HTTP %d, %v", body, resp.StatusCode, out)
		}
		return out
	}
	if got := jolokia(`{"type":"read","mbean":"` + q + `","attribute":"QueueSize"}`)["value"]; got != 1.0 {
		t.Errorf("QueueSize after one STOMP send: %v, want 1", got)
	}
	jolokia(`{"type":"exec","mbean":"org.apache.activemq:type=Broker,brokerName=localhost","operation":"addQueue","arguments":["jolo.added"]}`)
	queues := fmt.Sprint(jolokia(`{"type":"read","mbean":"org.apache.activemq:type=Broker,brokerName=localhost","attribute":"Queues"}`)["value"])
	if !strings.Contains(queues, "destinationName=jolo.added") {
		t.Errorf("Broker Queues after addQueue: %s, want jolo.added", queues)
	}
	jolokia(`{"type":"exec","mbean":"` + q + `","operation":"purge"}`)
	if got := jolokia(`{"type":"read","mbean":"` + q + `","attribute":"QueueSize"}`)["value"]; got != 0.0 {
		t.Errorf("QueueSize after purge: %v, want 0", got)
	}
	w.stop(t)
}

// TestWharfRunFeedsAndMessages: a `wharf run` serves the console's XML
// feed, with a queue a STOMP client filled, and the REST message API,
// whose POST a STOMP subscriber receives.
func TestWharfRunFeedsAndMessages(t *testing.T) {
	w := startRun(t)
	conn, err := stomp.Dial("tcp", w.stompAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	if err := conn.Send("/queue/feed.orders", "text/plain", []byte("one"), stomp.SendOpt.Receipt); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + w.webAddr + "/admin/xml/queues.jsp")
	if err != nil {
		t.Fatal(err)
	}
	var queues struct {
		Queues []struct {
			Name  string `xml:"name,attr"`
			Stats struct {
				Size int `xml:"size,attr"`
			} `xml:"stats"`
		} `xml:"queue"`
	}
	err = xml.NewDecoder(resp.Body).Decode(&queues)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(queues.Queues) != 1 || queues.Queues[0].Name != "feed.orders" || queues.Queues[0].Stats.Size != 1 {
		t.Errorf("queues.jsp: %d %v %+v, want feed.orders of size 1", resp.StatusCode, err, queues)
	}

	sub, err := conn.Subscribe("/queue/rest.in", stomp.AckAuto)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = http.Post("http://"+w.webAddr+"/api/message/rest.in?type=queue&body=posted", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /api/message: %d", resp.StatusCode)
	}
	select {
	case m := <-sub.C:
		if m.Err != nil || string(m.Body) != "posted" {
			t.Errorf("STOMP got %v %q, want posted", m.Err, m.Body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("STOMP received nothing")
	}
	w.stop(t)
}
