package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWharfStopStillAnswering: a broker that accepts the stop operation
// but whose web server still answers when --timeout ends is exit status 1
// with a message saying so; the stop was asked once.
func TestWharfStopStillAnswering(t *testing.T) {
	var stops atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			io.WriteString(w, "ok")
			return
		}
		var req map[string]any
		json.NewDecoder(r.Body).Decode(&req)
		switch req["type"] {
		case "search":
			io.WriteString(w, `{"status":200,"value":["org.apache.activemq:brokerName=localhost,type=Broker"]}`)
		case "exec":
			if req["operation"] == "stop" {
				stops.Add(1)
			}
			io.WriteString(w, `{"status":200,"value":null}`)
		default:
			http.Error(w, "unexpected", 500)
		}
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	err := run([]string{"stop", "--url", srv.URL, "--timeout", "300ms"}, &out, &errOut)
	if err == nil || exitCode(err) != exitFailed || !strings.Contains(err.Error(), "broker localhost accepted the stop but its web server still answers after --timeout 300ms") {
		t.Errorf("stop of a broker that goes on answering: %v (exit %d), want exit 1 saying it still answers", err, exitCode(err))
	}
	if n := stops.Load(); n != 1 || out.Len() != 0 {
		t.Errorf("stop operations %d, stdout %q; want 1 and nothing", n, out.String())
	}
}
