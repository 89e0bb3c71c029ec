package console

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
)

func TestUptime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                               "0 seconds",
		time.Second:                     "1 second",
		90 * time.Second:                "1 minute 30 seconds",
		2*time.Hour + 5*time.Second:     "2 hours",
		26*time.Hour + 3*time.Minute:    "1 day 2 hours",
		49*time.Hour + 59*time.Minute:   "2 days 1 hour",
		59*time.Minute + 59*time.Second: "59 minutes 59 seconds",
	} {
		if got := uptime(d); got != want {
			t.Errorf("uptime(%v) = %q, want %q", d, got, want)
		}
	}
}

// Rates come from a reading at least a second old; the reading is
// replaced once it is 10 s old.
func TestRateSampler(t *testing.T) {
	var s rateSampler
	q := message.QueueDest("q")
	t0 := time.Unix(1000, 0)
	if prev, _ := s.rates(t0, map[message.Destination][2]int64{q: {0, 0}}); prev != nil {
		t.Fatal("a rate from the first reading")
	}
	if prev, _ := s.rates(t0.Add(500*time.Millisecond), map[message.Destination][2]int64{q: {5, 0}}); prev != nil {
		t.Fatal("a rate from a reading under a second old")
	}
	prev, secs := s.rates(t0.Add(4*time.Second), map[message.Destination][2]int64{q: {40, 8}})
	if secs != 4 || prev[q] != [2]int64{0, 0} || rate(40-prev[q][0], secs) != "10.0" {
		t.Fatalf("after 4 s: %v over %v s", prev, secs)
	}
	s.rates(t0.Add(10*time.Second), map[message.Destination][2]int64{q: {100, 20}}) // replaces the reading
	prev, secs = s.rates(t0.Add(12*time.Second), map[message.Destination][2]int64{q: {120, 20}})
	if secs != 2 || prev[q] != [2]int64{100, 20} {
		t.Fatalf("after the replacement: %v over %v s", prev, secs)
	}
}

// An action goes back only to one of the console's own pages: a
// redirect field naming another site is ignored.
func TestBackStaysOnTheConsole(t *testing.T) {
	h := &Handler{o: Options{Prefix: "/admin"}}
	for redirect, want := range map[string]string{
		"/admin/queues.jsp?page=2":    "/admin/queues.jsp?page=2",
		"//evil.example/admin/":       "/admin/",
		"https://evil.example/admin/": "/admin/",
		"/admin/\\\\evil.example":     "/admin/",
		"/admin/x?next=http://evil":   "/admin/",
		"/api/jolokia/":               "/admin/",
		"":                            "/admin/",
	} {
		r := httptest.NewRequest("POST", "/admin/purgeDestination.action", strings.NewReader(url.Values{"redirect": {redirect}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.ParseForm()
		if got := h.back(r); got != want {
			t.Errorf("redirect %q: back to %q, want %q", redirect, got, want)
		}
	}
}

// Until the broker is ready, pages and actions answer 503.
func TestNotReady(t *testing.T) {
	h, err := New(Options{Prefix: "/admin", Engine: func() *engine.Engine { return nil }, Login: func(*http.Request) (string, bool) { return "a", true }})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/admin/", "/admin/queues.jsp", "/admin/browse.jsp?JMSDestination=q"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != http.StatusServiceUnavailable {
			t.Errorf("GET %s: %d, want 503", p, w.Code)
		}
	}
	r := httptest.NewRequest("POST", "/admin/purgeDestination.action", strings.NewReader(url.Values{"secret": {h.token("a")}, "JMSDestination": {"q"}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("an action: %d, want 503", w.Code)
	}
}
