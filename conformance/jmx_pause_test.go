package conformance

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-stomp/stomp/v3"

	"wharf/protocols/http/jolokia"
)

// TestConformanceJMXPauseResume: QueueViewMBean pause and resume through
// the Jolokia API, seen by a STOMP consumer (go-stomp): while the queue is
// paused, sends are accepted and kept but nothing is dispatched — proved
// after a barrier, the consumer's own receipted round trip, which the
// broker answers after any MESSAGE it had written — and after resume
// every message arrives, in order.
func TestConformanceJMXPauseResume(t *testing.T) {
	b := startBroker(t)
	srv := httptest.NewServer(jolokia.New(b.Engine(), jolokia.Options{Prefix: "/", CanWrite: func(*http.Request) bool { return true }}))
	t.Cleanup(srv.Close)
	name := uniq(t) + ".paused"
	bean := "org.apache.activemq:type=Broker,brokerName=conformance,destinationType=Queue,destinationName=" + name
	jolo := func(req map[string]any) map[string]any {
		t.Helper()
		body, _ := json.Marshal(req)
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		if out["status"] != float64(200) {
			t.Fatalf("%v: %v", req, out)
		}
		return out
	}
	read := func(attr string) any {
		return jolo(map[string]any{"type": "read", "mbean": bean, "attribute": attr})["value"]
	}

	jolo(map[string]any{"type": "exec", "mbean": "org.apache.activemq:type=Broker,brokerName=conformance", "operation": "addQueue", "arguments": []any{name}})
	c := dial(t, b.STOMPAddr())
	s := sub(t, c, "/queue/"+name, stomp.AckAuto)
	if p := read("Paused"); p != false {
		t.Fatalf("Paused = %v before pause", p)
	}
	jolo(map[string]any{"type": "exec", "mbean": bean, "operation": "pause"})
	if p := read("Paused"); p != true {
		t.Fatalf("Paused = %v after pause", p)
	}
	p := dial(t, b.STOMPAddr())
	for _, body := range []string{"one", "two", "three"} {
		send(t, p, "/queue/"+name, body) // accepted while paused: receipted
	}
	roundTrip(t, c)
	select {
	case m := <-s.C:
		t.Fatalf("paused queue dispatched %q", m.Body)
	default:
	}
	if n, d := read("QueueSize"), read("DispatchCount"); n != float64(3) || d != float64(0) {
		t.Fatalf("paused queue: QueueSize %v DispatchCount %v, want 3 kept and none dispatched", n, d)
	}
	// The other admin operations still work on a paused queue.
	if got := jolo(map[string]any{"type": "exec", "mbean": bean, "operation": "browse()"})["value"].([]any); len(got) != 3 {
		t.Fatalf("browse of the paused queue: %d messages, want 3", len(got))
	}

	jolo(map[string]any{"type": "exec", "mbean": bean, "operation": "resume"})
	recvBodies(t, s, "one", "two", "three")
	if p := read("Paused"); p != false {
		t.Fatalf("Paused = %v after resume", p)
	}

	// pause names a queue that exists; a missing one is Jolokia's error.
	body, _ := json.Marshal(map[string]any{"type": "exec", "mbean": strings.Replace(bean, name, name+".none", 1), "operation": "pause"})
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	if out["status"] != float64(404) {
		t.Fatalf("pause of a missing queue: %v, want status 404", out)
	}
}
