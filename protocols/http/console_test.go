package http_test

import (
	"context"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	neturl "net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
	"wharf/storage/memory"
)

// consoleEnv is a broker (memory store, scheduler on) and a web server
// with three logins: admin/secret (role admin), ops/ops (group admins)
// and viewer/view (role user).
type consoleEnv struct {
	t    testing.TB
	e    *engine.Engine
	s    *httpserver.Server
	c    *http.Client
	base string
}

func startConsole(t testing.TB) *consoleEnv {
	t.Helper()
	f := broker.Factories{Stores: map[string]broker.StoreFactory{
		config.KindMemory: func(context.Context, *config.Config, *slog.Logger) (engine.Store, error) { return memory.New(), nil },
	}}
	b := brokertest.Start(t, f, brokertest.WithConfig(func(c *config.Config) { c.SchedulerSupport = true }))
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: func(user, password string) ([]string, error) {
		switch {
		case user == "admin" && password == "secret":
			return []string{"admin"}, nil
		case user == "ops" && password == "ops":
			return []string{"admins"}, nil
		case user == "viewer" && password == "view":
			return []string{"user"}, nil
		}
		return nil, fmt.Errorf("bad login")
	}})
	s.Ready(b.Engine())
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &consoleEnv{t: t, e: b.Engine(), s: s, c: c, base: "http://" + s.Addr().String()}
}

// get fetches a console page as admin.
func (v *consoleEnv) get(path string) (int, string) {
	v.t.Helper()
	code, _, body := request(v.t, v.c, "GET", v.base+path, "admin", "secret")
	return code, body
}

var tokenRE = regexp.MustCompile(`name="secret" value="([^"]+)"`)

// token reads the CSRF token of a page's forms.
func (v *consoleEnv) token(user, password string) string {
	v.t.Helper()
	_, _, body := request(v.t, v.c, "GET", v.base+"/admin/queues.jsp", user, password)
	m := tokenRE.FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// post submits a console form as user; it returns the status, the
// redirect and the notice the next page shows.
func (v *consoleEnv) post(user, password, action string, form neturl.Values, hdr ...string) (int, string, string) {
	v.t.Helper()
	req, err := http.NewRequest("POST", v.base+"/admin/"+action, strings.NewReader(form.Encode()))
	if err != nil {
		v.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(user, password)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := v.c.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	notice := ""
	for _, ck := range resp.Cookies() {
		if ck.Name == "wharf_console_notice" {
			notice, _ = neturl.QueryUnescape(ck.Value)
		}
	}
	return resp.StatusCode, resp.Header.Get("Location"), notice
}

// admin posts as admin with the right token and fails the test unless
// the action redirects with a notice that is not an error.
func (v *consoleEnv) admin(action string, form neturl.Values) string {
	v.t.Helper()
	form.Set("secret", v.token("admin", "secret"))
	code, _, notice := v.post("admin", "secret", action, form)
	if code != http.StatusSeeOther || !strings.HasPrefix(notice, "ok:") {
		v.t.Fatalf("%s %v: HTTP %d, notice %q", action, form, code, notice)
	}
	return strings.TrimPrefix(notice, "ok:")
}

func (v *consoleEnv) send(d message.Destination, n int, body string) {
	v.t.Helper()
	c, err := v.e.Connect(engine.Credentials{Protocol: "test"})
	if err != nil {
		v.t.Fatal(err)
	}
	defer c.Close()
	for i := range n {
		m := &message.Message{ID: c.NextMessageID(), Destination: d, BodyType: message.TextBody, Body: fmt.Appendf(nil, "%s %d", body, i), Persistent: true, Priority: 4, Timestamp: time.Now().UnixMilli()}
		m.Props.Set("n", message.IntValue(int32(i)))
		sent := make(chan error, 1)
		if err := c.Send(m, "", doneFunc(func(err error) { sent <- err }), 0); err != nil {
			v.t.Fatal(err)
		}
		if err := <-sent; err != nil {
			v.t.Fatal(err)
		}
	}
}

type doneFunc func(error)

func (f doneFunc) Complete(_ uint64, err error) { f(err) }

func (v *consoleEnv) size(name string) int64 {
	v.t.Helper()
	return v.e.Stats(message.QueueDest(name)).QueueSize
}

// dlq puts n messages of queue name on ActiveMQ.DLQ: a consumer rejects
// each as poison.
func (v *consoleEnv) dlq(name string, n int) {
	v.t.Helper()
	v.send(message.QueueDest(name), n, "dead")
	v.poison(name, n)
}

// poison has a consumer of queue name reject n messages as poison, which
// moves them to ActiveMQ.DLQ, and waits until the DLQ holds them.
func (v *consoleEnv) poison(name string, n int) {
	v.t.Helper()
	q := message.QueueDest(name)
	dl := message.QueueDest("ActiveMQ.DLQ")
	before := v.e.Stats(dl).QueueSize
	c, err := v.e.Connect(engine.Credentials{Protocol: "test"})
	if err != nil {
		v.t.Fatal(err)
	}
	defer c.Close()
	got := make(chan engine.Delivery, n)
	sub, err := c.Subscribe(engine.SubSpec{Destination: q, Prefetch: n, AckMode: engine.AckClient}, sinkFunc(func(d engine.Delivery) { got <- d }))
	if err != nil {
		v.t.Fatal(err)
	}
	for range n {
		select {
		case d := <-got:
			if err := c.Nack(sub, d.ID, engine.NackPoison, "test poison"); err != nil {
				v.t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			v.t.Fatal("no delivery to reject")
		}
	}
	// The DLQ's shard takes the moves after the queue's: poll its state
	// (a condition with a deadline).
	deadline := time.Now().Add(10 * time.Second)
	for v.e.Stats(dl).QueueSize < before+int64(n) {
		if time.Now().After(deadline) {
			v.t.Fatalf("ActiveMQ.DLQ holds %d, want %d", v.e.Stats(dl).QueueSize, before+int64(n))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type sinkFunc func(engine.Delivery)

func (f sinkFunc) Deliver(d engine.Delivery) { f(d) }

func TestConsolePagesRender(t *testing.T) {
	v := startConsole(t)
	v.send(message.QueueDest("orders"), 3, "order")
	if err := v.e.AddDestination(message.TopicDest("prices")); err != nil {
		t.Fatal(err)
	}
	id := func() string {
		msgs, err := v.e.Browse(message.QueueDest("orders"), nil, 1)
		if err != nil || len(msgs) == 0 {
			t.Fatal(msgs, err)
		}
		return msgs[0].Msg.ID
	}()
	for _, tc := range []struct{ path, want string }{
		{"/admin/", "Uptime"},
		{"/admin/index.jsp", `id="queue-count">`},
		{"/admin/queues.jsp", ">orders</a>"},
		{"/admin/topics.jsp", "prices"},
		{"/admin/browse.jsp?JMSDestination=orders", "order 0"},
		{"/admin/message.jsp?JMSDestination=orders&id=" + neturl.QueryEscape(id), `<td class="tag-cell">int</td><td>0</td>`},
		{"/admin/send.jsp?JMSDestination=orders", `value="orders"`},
		{"/admin/connections.jsp", "Connections"},
		{"/admin/subscribers.jsp", "No durable subscriptions"},
		{"/admin/scheduled.jsp", "No scheduled jobs"},
		{"/admin/static/console.css", "--accent"},
		{"/admin/static/console.js", "data-confirm"},
	} {
		code, body := v.get(tc.path)
		if code != 200 || !strings.Contains(body, tc.want) {
			t.Errorf("GET %s: HTTP %d, want 200 with %q in:\n%.2000s", tc.path, code, tc.want, body)
		}
	}
	// The browse page's links reach each message (query values escaped
	// once).
	_, body := v.get("/admin/browse.jsp?JMSDestination=orders")
	links := regexp.MustCompile(`href="(/admin/message\.jsp\?[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(links) != 3 {
		t.Fatalf("browse.jsp links to %d messages, want 3", len(links))
	}
	for _, l := range links {
		if code, page := v.get(html.UnescapeString(l[1])); code != 200 || !strings.Contains(page, `id="body"`) {
			t.Errorf("GET %s: HTTP %d", l[1], code)
		}
	}
	// The feeds keep their paths and shape.
	if code, body := v.get("/admin/xml/queues.jsp"); code != 200 || !strings.Contains(body, `<queue name="orders">`) {
		t.Errorf("the XML feed: HTTP %d %.300s", code, body)
	}
	if code, _, _ := request(t, v.c, "GET", v.base+"/", "admin", "secret"); code != http.StatusFound {
		t.Errorf("GET /: HTTP %d, want a redirect to the console", code)
	}
	for _, p := range []string{"/admin/nothing.jsp", "/admin/browse.jsp?JMSDestination=missing", "/admin/message.jsp?JMSDestination=orders&id=nope"} {
		if code, _ := v.get(p); code != http.StatusNotFound {
			t.Errorf("GET %s: HTTP %d, want 404", p, code)
		}
	}
	if code, _, _ := request(t, v.c, "GET", v.base+"/admin/", "", ""); code != http.StatusUnauthorized {
		t.Errorf("no login: HTTP %d, want 401", code)
	}
}

// Names and bodies reach the page as text: a queue named like markup and
// a body of markup are escaped.
func TestConsoleEscapesOutput(t *testing.T) {
	v := startConsole(t)
	evil := `<img src=x onerror=alert(1)>`
	q := message.QueueDest("q" + evil)
	v.send(q, 1, `<script>alert("body")</script>`)
	msgs, _ := v.e.Browse(q, nil, 1)
	for _, p := range []string{"/admin/queues.jsp", "/admin/browse.jsp?JMSDestination=" + neturl.QueryEscape(q.Name), "/admin/message.jsp?JMSDestination=" + neturl.QueryEscape(q.Name) + "&id=" + neturl.QueryEscape(msgs[0].Msg.ID)} {
		code, body := v.get(p)
		if code != 200 {
			t.Fatalf("GET %s: HTTP %d %s", p, code, body)
		}
		if strings.Contains(body, evil) || strings.Contains(body, "<script>alert") {
			t.Errorf("GET %s: markup from the broker's data is not escaped:\n%s", p, body)
		}
		if !strings.Contains(body, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("GET %s: the escaped queue name is missing", p)
		}
	}
	_, h, _ := request(t, v.c, "GET", v.base+"/admin/queues.jsp", "admin", "secret")
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || h.Get("X-Frame-Options") != "DENY" {
		t.Errorf("security headers: CSP %q, X-Frame-Options %q", csp, h.Get("X-Frame-Options"))
	}
}

// A write needs POST, the admin role, a same-site request and the form's
// CSRF token; each refusal is a clear HTTP error and changes nothing.
func TestConsoleWritesRefused(t *testing.T) {
	v := startConsole(t)
	v.send(message.QueueDest("keep"), 2, "x")
	good := v.token("admin", "secret")
	form := func(tok string) neturl.Values {
		return neturl.Values{"JMSDestination": {"keep"}, "secret": {tok}}
	}
	viewerTok := v.token("viewer", "view") // "": a viewer's pages have no forms
	if viewerTok != "" {
		t.Errorf("a viewer's page carries a CSRF token: it shows forms")
	}
	if good == "" || good == v.token("ops", "ops") {
		t.Fatalf("tokens: admin %q, ops %q; want two different ones", good, v.token("ops", "ops"))
	}
	for _, tc := range []struct {
		name, user, password string
		form                 neturl.Values
		hdr                  []string
		code                 int
		text                 string
	}{
		{"no token", "admin", "secret", neturl.Values{"JMSDestination": {"keep"}}, nil, 403, "CSRF token"},
		{"wrong token", "admin", "secret", form("forged"), nil, 403, "CSRF token"},
		{"another admin's token", "admin", "secret", form(v.token("ops", "ops")), nil, 403, "CSRF token"},
		{"another site's page", "admin", "secret", form(good), []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross-site"},
		{"foreign origin", "admin", "secret", form(good), []string{"Origin", "http://evil.example"}, 403, "cross-site"},
		{"not an admin", "viewer", "view", form(good), nil, 403, "admin role"},
		{"bad password", "admin", "nope", form(good), nil, 401, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", v.base+"/admin/purgeDestination.action", strings.NewReader(tc.form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.SetBasicAuth(tc.user, tc.password)
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				req.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			resp, err := v.c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 512)
			n, _ := resp.Body.Read(b)
			resp.Body.Close()
			if resp.StatusCode != tc.code || !strings.Contains(string(b[:n]), tc.text) {
				t.Errorf("HTTP %d %q, want %d mentioning %q", resp.StatusCode, b[:n], tc.code, tc.text)
			}
			if got := v.size("keep"); got != 2 {
				t.Errorf("the queue holds %d after a refused purge, want 2", got)
			}
		})
	}
	if code, _, _ := request(t, v.c, "GET", v.base+"/admin/purgeDestination.action?JMSDestination=keep&secret="+neturl.QueryEscape(good), "admin", "secret"); code != http.StatusMethodNotAllowed {
		t.Errorf("GET of an action: HTTP %d, want 405", code)
	}
	if code, _, _ := request(t, v.c, "GET", v.base+"/admin/browse.jsp?JMSDestination=keep", "viewer", "view"); code != http.StatusForbidden {
		t.Errorf("browse as a viewer: HTTP %d, want 403", code)
	}
	code, _, body := request(t, v.c, "GET", v.base+"/admin/queues.jsp", "viewer", "view")
	if code != 200 || strings.Contains(body, "purgeDestination.action") || !strings.Contains(body, "keep") {
		t.Errorf("queues as a viewer: HTTP %d, want the list without the admin's forms:\n%.1500s", code, body)
	}
	if got := v.size("keep"); got != 2 {
		t.Fatalf("the queue holds %d, want 2", got)
	}
	if n := v.admin("purgeDestination.action", neturl.Values{"JMSDestination": {"keep"}}); !strings.Contains(n, "2 messages") {
		t.Errorf("purge notice %q", n)
	}
	if got := v.size("keep"); got != 0 {
		t.Errorf("the queue holds %d after the purge, want 0", got)
	}
}
