package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"wharf/internal/wharfproc"
)

// The isolation and soak tests (isolation_test.go, soak_test.go) run
// wharf as a child process on KahaDB: its RSS, open files and goroutines
// are the process's own, not the test's.

var wharfBuild struct {
	once sync.Once
	path string
	err  error
}

// wharfBinary builds cmd/wharf once per test binary into a directory
// that outlives the tests that use it (the OS temp directory is cleaned
// by the test's TempDir of the first caller's cleanup otherwise).
func wharfBinary(t *testing.T) string {
	t.Helper()
	wharfBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "wharf-bench-bin-")
		if err != nil {
			wharfBuild.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		wharfBuild.path, wharfBuild.err = wharfproc.Build(ctx, "..", dir)
	})
	if wharfBuild.err != nil {
		t.Fatal(wharfBuild.err)
	}
	return wharfBuild.path
}

// wharfChild is a running `wharf run` on KahaDB with a connector of each
// protocol and the web server, all on loopback port 0.
type wharfChild struct {
	p     *wharfproc.Proc
	store string            // the KahaDB directory
	addrs map[string]string // connector name -> host:port
	web   string            // the web server's host:port
}

// wharfChildConfig is the YAML of startWharfChild: 1 MiB journal files,
// checkpoints every second and unneeded journal files removed every 5 s
// (30 s by default), so that a short soak sees the store shrink; extra is appended
// (destination policies, system usage).
const wharfChildConfig = `shards: 1
scheduler_support: true
data_directory: %q
persistence:
  kahadb:
    directory: %q
    journal_max_file_length: 1mb
    checkpoint_interval: 1s
    cleanup_interval: 5s
transport_connectors:
  - {name: openwire, uri: "tcp://127.0.0.1:0"}
  - {name: stomp, uri: "stomp://127.0.0.1:0"}
  - {name: mqtt, uri: "mqtt://127.0.0.1:0"}
  - {name: amqp, uri: "amqp://127.0.0.1:0"}
http: {host: 127.0.0.1, port: 0, authenticate: false}
%s
`

// startWharfChild starts wharf with extra configuration and stops it
// (SIGTERM, a clean exit asserted) at the end of the test.
func startWharfChild(t *testing.T, extra string) *wharfChild {
	t.Helper()
	bin := wharfBinary(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "kahadb")
	cfg := filepath.Join(dir, "wharf.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, wharfChildConfig, filepath.Join(dir, "data"), store, extra), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := wharfproc.Start(bin, time.Minute, "run", "--log-format", "json", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &wharfChild{p: p, store: store, addrs: map[string]string{}}
	t.Cleanup(func() {
		select {
		case <-p.Exited():
			return
		default:
		}
		if err := p.Stop(30 * time.Second); err != nil {
			t.Errorf("stopping wharf: %v", err)
		}
	})
	for _, line := range p.Lines() {
		var rec struct{ Msg, Connector, Addr string }
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch rec.Msg {
		case "Listening for connections at":
			w.addrs[rec.Connector] = rec.Addr
		case "web server listening":
			w.web = rec.Addr
		}
	}
	for _, c := range []string{"openwire", "stomp", "mqtt", "amqp"} {
		if w.addrs[c] == "" {
			t.Fatalf("wharf started without logging its %s listener; log:\n%s", c, p.Tail(40))
		}
	}
	if w.web == "" {
		t.Fatalf("wharf started without logging its web server; log:\n%s", p.Tail(40))
	}
	return w
}

// target is the bench Target of connector name.
func (w *wharfChild) target(name string) Target {
	p := map[string]Protocol{"openwire": ProtocolOpenWire, "stomp": ProtocolSTOMP, "mqtt": ProtocolMQTT, "amqp": ProtocolAMQP}[name]
	return Target{Protocol: p, Addr: w.addrs[name]}
}

// metrics scrapes /metrics and returns each sample's value by its name
// and labels as written ("wharf_queue_messages{destination=\"A\",type=\"queue\"}").
func (w *wharfChild) metrics() (map[string]float64, error) {
	resp, err := http.Get("http://" + w.web + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out, nil
}

// destMetric is the name of a per-destination sample of /metrics.
func destMetric(name, destination, typ string) string {
	return fmt.Sprintf("%s{destination=%q,type=%q}", name, destination, typ)
}

// storeBytes is the size of the files under dir.
func storeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // a journal file removed while walking
			}
			return err
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n, err
}
