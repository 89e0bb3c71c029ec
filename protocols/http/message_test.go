package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
	"wharf/security"
	"wharf/storage/memory"
)

// restServer is a web server with the test realm's logins, serving e.
func restServer(t *testing.T, e *engine.Engine) *httpserver.Server {
	t.Helper()
	r, err := security.ParseRealm([]byte(realm + "other: 0ther, admin\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: r.Authenticate})
	s.Ready(e)
	return s
}

// rest makes one request to /api/message with the parameters in the
// query string, or in a form body when form is set, as admin.
type restCall struct {
	method, path string
	params       neturl.Values
	form         bool
	body         string // raw body, sent as text/plain
	user, pass   string
	header       http.Header
}

type restAnswer struct {
	code   int
	header http.Header
	body   string
}

func (c restCall) do(t *testing.T, s *httpserver.Server) restAnswer {
	t.Helper()
	u := url(s, c.path)
	var body io.Reader
	ct := ""
	switch {
	case c.form:
		body, ct = strings.NewReader(c.params.Encode()), "application/x-www-form-urlencoded"
	case c.body != "":
		body, ct = strings.NewReader(c.body), "text/plain"
		fallthrough
	default:
		if len(c.params) > 0 {
			u += "?" + c.params.Encode()
		}
	}
	req, err := http.NewRequest(c.method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	user, pass := c.user, c.pass
	if user == "" {
		user, pass = "admin", "s3cret"
	}
	req.SetBasicAuth(user, pass)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return restAnswer{resp.StatusCode, resp.Header, string(b)}
}

// receiveOne consumes one message of d through the engine.
func receiveOne(t *testing.T, e *engine.Engine, d message.Destination) *message.Message {
	t.Helper()
	c, err := e.Connect(engine.Credentials{Protocol: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(sinkCh, 1)
	sub, err := c.Subscribe(engine.SubSpec{Destination: d, Prefetch: 1, AckMode: engine.AckIndividual}, got)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case dl := <-got:
		acked := make(done, 1)
		if err := c.AckDurable(sub, dl.ID, "", acked, 0); err != nil {
			t.Fatal(err)
		}
		if err := <-acked; err != nil {
			t.Fatal(err)
		}
		return dl.Msg
	case <-time.After(5 * time.Second):
		t.Fatalf("no message on %s", d)
		return nil
	}
}

func TestHTTPMessagePostSendsAsTheServletDoes(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	orders := message.QueueDest("orders")

	// The body and headers as parameters of a form, as curl -d sends them.
	a := restCall{method: "POST", path: "/api/message/orders", form: true, params: neturl.Values{
		"type": {"queue"}, "body": {"<order id='1'/>"}, "JMSPriority": {"7"}, "JMSCorrelationID": {"corr-1"},
		"JMSType": {"order"}, "JMSReplyTo": {"topic://replies"}, "JMSTimeToLive": {"60000"}, "region": {"eu"},
	}}.do(t, s)
	if a.code != 200 || a.body != "Message sent" || !strings.HasPrefix(a.header.Get("messageID"), "ID:") {
		t.Fatalf("POST: %d %q messageID %q, want 200 \"Message sent\" with an id", a.code, a.body, a.header.Get("messageID"))
	}
	before := time.Now().UnixMilli()
	m := receiveOne(t, e, orders)
	if m.ID != a.header.Get("messageID") || string(m.Body) != "<order id='1'/>" || m.BodyType != message.TextBody {
		t.Errorf("message %q %q (%v), want id %q and the body parameter as text", m.ID, m.Body, m.BodyType, a.header.Get("messageID"))
	}
	if !m.Persistent || m.Priority != 7 || m.CorrelationID != "corr-1" || m.Type != "order" || m.ReplyTo != message.TopicDest("replies") {
		t.Errorf("headers %+v, want persistent, priority 7, corr-1, type order, reply to topic://replies", m)
	}
	if m.Expiration < before+50_000 || m.Expiration > before+61_000 {
		t.Errorf("expiration %d, want about %d (60 s to live)", m.Expiration, before+60_000)
	}
	if v, ok := m.Props.Get("region"); !ok || v.Str() != "eu" || len(m.Props) != 1 {
		t.Errorf("properties %v, want region=eu alone", m.Props)
	}

	// The raw body with its content type; the servlet's defaults:
	// persistent, priority 5; JMSDeliveryMode other than persistent.
	for _, tc := range []struct {
		mode       []string
		persistent bool
	}{{nil, true}, {[]string{"PERSISTENT "}, true}, {[]string{"non_persistent"}, false}} {
		p := neturl.Values{"type": {"queue"}}
		if tc.mode != nil {
			p["JMSDeliveryMode"] = tc.mode
		}
		a := restCall{method: "POST", path: "/api/message/orders", params: p, body: "line 1\r\nline 2"}.do(t, s)
		if a.code != 200 {
			t.Fatalf("POST raw body: %d %q", a.code, a.body)
		}
		m := receiveOne(t, e, orders)
		if string(m.Body) != "line 1\r\nline 2" || m.Persistent != tc.persistent || m.Priority != 5 || m.Expiration != 0 {
			t.Errorf("JMSDeliveryMode %v: body %q persistent %v priority %d expiration %d, want the bytes sent, persistent %v, 5, 0",
				tc.mode, m.Body, m.Persistent, m.Priority, m.Expiration, tc.persistent)
		}
	}
}

func TestHTTPMessageDestinationForms(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	for _, tc := range []struct {
		name, path string
		params     neturl.Values
		want       message.Destination
	}{
		{"path slashes are dots", "/api/message/orders/eu", neturl.Values{"type": {"queue"}}, message.QueueDest("orders.eu")},
		{"a topic without a type", "/api/message/news", nil, message.TopicDest("news")},
		{"type is case-blind", "/api/message/news2", neturl.Values{"type": {"Queue"}}, message.QueueDest("news2")},
		{"destination parameter with queue://", "/api/message", neturl.Values{"destination": {"queue://billing"}}, message.QueueDest("billing")},
		{"channel:// is a queue", "/api/message/", neturl.Values{"destination": {"channel://audit"}, "type": {"topic"}}, message.QueueDest("audit")},
		{"topic:// over the type", "/api/message/ignored", neturl.Values{"destination": {"topic://ticks"}, "type": {"queue"}}, message.TopicDest("ticks")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A consumer in place first, so that a topic keeps the message.
			c, err := e.Connect(engine.Credentials{Protocol: "test"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got := make(sinkCh, 1)
			if _, err := c.Subscribe(engine.SubSpec{Destination: tc.want, Prefetch: 1, AckMode: engine.AckAuto}, got); err != nil {
				t.Fatal(err)
			}
			p := neturl.Values{"body": {tc.name}}
			for k, v := range tc.params {
				p[k] = v
			}
			if a := (restCall{method: "POST", path: tc.path, params: p}).do(t, s); a.code != 200 {
				t.Fatalf("POST %s %v: %d %q", tc.path, p, a.code, a.body)
			}
			select {
			case d := <-got:
				if d.Msg.Destination != tc.want || string(d.Msg.Body) != tc.name {
					t.Errorf("got %q on %s, want it on %s", d.Msg.Body, d.Msg.Destination, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("nothing reached %s", tc.want)
			}
		})
	}
}

func TestHTTPMessageGetConsumes(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	send := func(body string, params neturl.Values) string {
		t.Helper()
		p := neturl.Values{"type": {"queue"}, "body": {body}}
		for k, v := range params {
			p[k] = v
		}
		a := restCall{method: "POST", path: "/api/message/work", params: p}.do(t, s)
		if a.code != 200 {
			t.Fatalf("POST: %d %q", a.code, a.body)
		}
		return a.header.Get("messageID")
	}
	// A property may not replace the response's framing headers.
	id := send("<?xml version=\"1.0\"?><job/>", neturl.Values{"step": {"2"}, "content-type": {"text/evil"}, "Content-Length": {"1"}})
	a := restCall{method: "GET", path: "/api/message/work", params: neturl.Values{"type": {"queue"}, "readTimeout": {"2000"}}}.do(t, s)
	if a.code != 200 || a.body != "<job/>" {
		t.Fatalf("GET: %d %q, want 200 with the text less its XML declaration", a.code, a.body)
	}
	for k, want := range map[string]string{
		"destination": "queue://work", "id": id, "step": "2", "Content-Type": "application/xml;charset=UTF-8",
		"Cache-Control": "no-cache, no-store, must-revalidate", "Pragma": "no-cache",
	} {
		if got := a.header.Get(k); got != want {
			t.Errorf("header %s: %q, want %q", k, got, want)
		}
	}
	if st := e.Stats(message.QueueDest("work")); st.QueueSize != 0 || st.DequeueCount != 1 || st.ConsumerCount != 0 {
		t.Errorf("after the GET: size %d, dequeued %d, consumers %d; want 0, 1, 0 (consumed, consumer closed)", st.QueueSize, st.DequeueCount, st.ConsumerCount)
	}

	// A message waiting is there at once for a new consumer: readTimeout=0
	// does not miss it.
	send("ready", nil)
	if a := (restCall{method: "GET", path: "/api/message/work", params: neturl.Values{"type": {"queue"}, "readTimeout": {"0"}}}).do(t, s); a.code != 200 || a.body != "ready" {
		t.Errorf("GET with readTimeout=0 of a waiting message: %d %q", a.code, a.body)
	}

	// Nothing there: 204 once readTimeout passes.
	start := time.Now()
	a = restCall{method: "GET", path: "/api/message/work", params: neturl.Values{"type": {"queue"}, "readTimeout": {"100"}}}.do(t, s)
	if a.code != 204 || a.body != "" || time.Since(start) < 100*time.Millisecond {
		t.Errorf("GET of an empty queue: %d %q after %v, want 204 after 100 ms", a.code, a.body, time.Since(start))
	}

	// DELETE consumes too (MessageServlet.doDelete); ?json=true sets the type.
	send(`{"a":1}`, nil)
	a = restCall{method: "DELETE", path: "/api/message/work", params: neturl.Values{"type": {"queue"}, "readTimeout": {"2000"}, "json": {"true"}}}.do(t, s)
	if a.code != 200 || a.body != `{"a":1}` || a.header.Get("Content-Type") != "application/json;charset=UTF-8" {
		t.Errorf("DELETE: %d %q %q", a.code, a.body, a.header.Get("Content-Type"))
	}

	// A GET that waits is answered by a message sent meanwhile.
	answer := make(chan restAnswer, 1)
	go func() {
		answer <- restCall{method: "GET", path: "/api/message/work", params: neturl.Values{"type": {"queue"}, "readTimeout": {"10000"}}}.do(t, s)
	}()
	eventually(t, func() error {
		if n := e.Stats(message.QueueDest("work")).ConsumerCount; n != 1 {
			return fmt.Errorf("%d consumers", n)
		}
		return nil
	})
	send("late", nil)
	if a := <-answer; a.code != 200 || a.body != "late" || a.header.Get("Content-Type") != "text/plain;charset=UTF-8" {
		t.Errorf("waiting GET: %d %q %q, want 200 late text/plain", a.code, a.body, a.header.Get("Content-Type"))
	}
	if n := e.ConnectionsByProtocol()["http"]; n != 0 {
		t.Errorf("%d http connections left open, want 0", n)
	}
}

func TestHTTPMessageClientIDKeepsItsConsumer(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	ticks := message.TopicDest("ticks")
	get := func(extra neturl.Values) restAnswer {
		p := neturl.Values{"clientId": {"poller"}, "readTimeout": {"0"}}
		for k, v := range extra {
			p[k] = v
		}
		return restCall{method: "GET", path: "/api/message/ticks", params: p}.do(t, s)
	}
	// The first GET subscribes the client to the topic; the consumer
	// stays, so that what is published between polls is kept for it.
	if a := get(nil); a.code != 204 {
		t.Fatalf("first poll: %d %q, want 204", a.code, a.body)
	}
	if n := e.Stats(ticks).ConsumerCount; n != 1 {
		t.Fatalf("consumers of ticks after the poll: %d, want the client's 1", n)
	}
	for i := range 3 {
		if a := (restCall{method: "POST", path: "/api/message/ticks", params: neturl.Values{"body": {fmt.Sprint(i)}}}).do(t, s); a.code != 200 {
			t.Fatalf("POST: %d %q", a.code, a.body)
		}
	}
	for i := range 3 {
		a := get(neturl.Values{"readTimeout": {"2000"}})
		if a.code != 200 || a.body != fmt.Sprint(i) {
			t.Fatalf("poll %d: %d %q, want 200 %q", i, a.code, a.body, fmt.Sprint(i))
		}
	}
	// Another login with the same clientId has a client of its own.
	if a := (restCall{method: "GET", path: "/api/message/ticks", user: "other", pass: "0ther", params: neturl.Values{"clientId": {"poller"}, "readTimeout": {"0"}}}).do(t, s); a.code != 204 {
		t.Fatalf("other login's poll: %d %q", a.code, a.body)
	}
	if n := e.Stats(ticks).ConsumerCount; n != 2 {
		t.Errorf("consumers of ticks: %d, want 2 (one per login)", n)
	}
	// oneShot closes the consumer after the request; unsubscribe closes
	// the client.
	if a := get(neturl.Values{"oneShot": {"true"}}); a.code != 204 {
		t.Fatalf("oneShot poll: %d", a.code)
	}
	if n := e.Stats(ticks).ConsumerCount; n != 1 {
		t.Errorf("consumers after oneShot: %d, want 1", n)
	}
	a := restCall{method: "POST", path: "/api/message/ticks", user: "other", pass: "0ther", params: neturl.Values{"clientId": {"poller"}, "action": {"unsubscribe"}}}.do(t, s)
	if a.code != 200 {
		t.Fatalf("unsubscribe: %d %q", a.code, a.body)
	}
	if n := e.Stats(ticks).ConsumerCount; n != 0 {
		t.Errorf("consumers after unsubscribe: %d, want 0", n)
	}
	if n := e.ConnectionsByProtocol()["http"]; n != 1 {
		t.Errorf("http connections: %d, want the first login's client alone", n)
	}
	// The broker stopping closes the clients.
	s.NotReady()
	if n := e.ConnectionsByProtocol()["http"]; n != 0 {
		t.Errorf("http connections after NotReady: %d, want 0", n)
	}
}

func TestHTTPMessageConcurrentGetOfOneConsumer(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	p := neturl.Values{"clientId": {"c"}, "type": {"queue"}, "readTimeout": {"10000"}}
	first := make(chan restAnswer, 1)
	go func() { first <- restCall{method: "GET", path: "/api/message/q", params: p}.do(t, s) }()
	eventually(t, func() error {
		if n := e.Stats(message.QueueDest("q")).ConsumerCount; n != 1 {
			return fmt.Errorf("%d consumers", n)
		}
		return nil
	})
	// The first GET may not be waiting yet when the second comes: retry
	// until one is refused, then release the first.
	var second restAnswer
	eventually(t, func() error {
		second = restCall{method: "GET", path: "/api/message/q", params: neturl.Values{"clientId": {"c"}, "type": {"queue"}, "readTimeout": {"0"}}}.do(t, s)
		if second.code != 409 {
			return fmt.Errorf("second GET: %d", second.code)
		}
		return nil
	})
	if !strings.Contains(second.body, "concurrent access to consumer") {
		t.Errorf("second GET: %q", second.body)
	}
	if a := (restCall{method: "POST", path: "/api/message/q", params: neturl.Values{"type": {"queue"}, "body": {"x"}}}).do(t, s); a.code != 200 {
		t.Fatal(a.code)
	}
	if a := <-first; a.code != 200 || a.body != "x" {
		t.Errorf("first GET: %d %q", a.code, a.body)
	}
}

func TestHTTPMessageBadInputChangesNothing(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	big := strings.Repeat("x", 100_001)
	for _, tc := range []struct {
		name string
		call restCall
		want int
		says string
	}{
		{"unknown type", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queu"}, "body": {"x"}}}, 400, `unknown type "queu"`},
		{"no destination", restCall{method: "POST", path: "/api/message/", params: neturl.Values{"type": {"queue"}, "body": {"x"}}}, 400, "no destination"},
		{"no destination in scheme", restCall{method: "POST", path: "/api/message", params: neturl.Values{"destination": {"queue://"}, "body": {"x"}}}, 400, "no destination"},
		{"readTimeout not a number", restCall{method: "GET", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "readTimeout": {"soon"}}}, 400, `readTimeout "soon"`},
		{"priority not a number", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}, "JMSPriority": {"high"}}}, 400, "JMSPriority"},
		{"priority out of range", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}, "JMSPriority": {"10"}}}, 400, "JMSPriority"},
		{"time to live not a number", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}, "JMSTimeToLive": {"1h"}}}, 400, "JMSTimeToLive"},
		{"body not UTF-8", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"\xff"}}}, 400, "UTF-8"},
		{"body too large", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}}, body: big}, 413, "over 100000 bytes"},
		{"form too large", restCall{method: "POST", path: "/api/message/bad", form: true, params: neturl.Values{"type": {"queue"}, "body": {big}}}, 413, "over 100000 bytes"},
		{"wildcard send", restCall{method: "POST", path: "/api/message/bad.>", params: neturl.Values{"type": {"queue"}, "body": {"x"}}}, 400, "wildcard"},
		{"bad selector", restCall{method: "GET", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "readTimeout": {"0"}}, header: http.Header{"Selector": {"a ="}}}, 400, "a ="},
		{"wrong password", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}}, user: "admin", pass: "admin"}, 401, ""},
		{"reader may not send", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}}, user: "reader", pass: "r3ad"}, 403, "admin role"},
		{"reader may not consume", restCall{method: "GET", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "readTimeout": {"0"}}, user: "reader", pass: "r3ad"}, 403, "admin role"},
		{"another site's page", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}}, header: http.Header{"Sec-Fetch-Site": {"cross-site"}}}, 403, "another site"},
		{"another origin", restCall{method: "POST", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}}, header: http.Header{"Origin": {"http://evil.example"}}}, 403, "evil.example"},
		{"PUT", restCall{method: "PUT", path: "/api/message/bad", params: neturl.Values{"type": {"queue"}, "body": {"x"}}}, 405, "POST to send"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.call.do(t, s)
			if a.code != tc.want || !strings.Contains(a.body, tc.says) {
				t.Fatalf("%d %q, want %d saying %q", a.code, a.body, tc.want, tc.says)
			}
		})
	}
	// The bad selector's GET made no consumer; nothing else reached the
	// engine at all.
	for _, d := range e.AllStats() {
		if strings.HasPrefix(d.Destination.Name, "bad") && (d.Stats.EnqueueCount != 0 || d.Stats.ConsumerCount != 0) {
			t.Errorf("%s: %d enqueued, %d consumers after refused requests", d.Destination, d.Stats.EnqueueCount, d.Stats.ConsumerCount)
		}
	}
	if n := e.ConnectionsByProtocol()["http"]; n != 0 {
		t.Errorf("%d http connections left open", n)
	}
}

// denyWrites refuses user "ops" writes to queue://secret, as an
// authorization map would.
type denyWrites struct{}

func (denyWrites) Authorize(s *engine.Subject, a engine.Action, d message.Destination) error {
	if s != nil && s.User == "ops" && a == engine.ActionWrite && d == message.QueueDest("secret") {
		return fmt.Errorf("%w: ops may not write to %s", engine.ErrNotAuthorized, d)
	}
	return nil
}

// refuseStranger is a broker authentication plugin that does not know
// user "stranger".
type refuseStranger struct{}

func (refuseStranger) Authenticate(c engine.Credentials) (*engine.Subject, error) {
	if c.Username == "stranger" {
		return nil, fmt.Errorf("%w: no user %s", engine.ErrBadCredentials, c.Username)
	}
	return &engine.Subject{User: c.Username}, nil
}

func TestHTTPMessageBrokerAuthorizationApplies(t *testing.T) {
	b := brokertest.Start(t, memoryFactories(), brokertest.WithEngine(func(o *engine.Options) {
		o.Authorizer, o.Authenticator = denyWrites{}, refuseStranger{}
	}))
	e := b.Engine()
	r, err := security.ParseRealm([]byte("admin: s3cret, admin\nops: 0ps, admin\nstranger: str, admin\n"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: r.Authenticate})
	s.Ready(e)
	p := neturl.Values{"type": {"queue"}, "body": {"x"}}
	a := restCall{method: "POST", path: "/api/message/secret", params: p, user: "ops", pass: "0ps"}.do(t, s)
	if a.code != 403 || !strings.Contains(a.body, "ops may not write") {
		t.Errorf("ops sends to secret: %d %q, want 403 from the broker's authorization", a.code, a.body)
	}
	if st := e.Stats(message.QueueDest("secret")); st.EnqueueCount != 0 {
		t.Errorf("secret took %d messages", st.EnqueueCount)
	}
	if a := (restCall{method: "POST", path: "/api/message/secret", params: p}).do(t, s); a.code != 200 {
		t.Errorf("admin sends to secret: %d %q", a.code, a.body)
	}
	if a := (restCall{method: "POST", path: "/api/message/open", params: p, user: "ops", pass: "0ps"}).do(t, s); a.code != 200 {
		t.Errorf("ops sends elsewhere: %d %q", a.code, a.body)
	}
	// A realm login that the broker's authentication does not accept.
	if a := (restCall{method: "POST", path: "/api/message/open", params: p, user: "stranger", pass: "str"}).do(t, s); a.code != 403 {
		t.Errorf("stranger sends: %d %q, want 403 from the broker's authentication", a.code, a.body)
	}
	if st := e.Stats(message.QueueDest("open")); st.EnqueueCount != 1 {
		t.Errorf("open took %d messages, want ops's 1", st.EnqueueCount)
	}
}

// eventually polls check until it succeeds, for 5 s at most.
func eventually(t *testing.T, check func() error) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// memoryFactories runs brokers on the memory store, without connectors.
func memoryFactories() broker.Factories {
	return broker.Factories{Stores: map[string]broker.StoreFactory{
		config.KindMemory: func(context.Context, *config.Config, *slog.Logger) (engine.Store, error) { return memory.New(), nil },
	}}
}

func TestHTTPMessageIdleClientExpires(t *testing.T) {
	e := startBroker(t)
	s := restServer(t, e)
	httpserver.SetRESTClientIdle(s, 20*time.Millisecond)
	a := restCall{method: "GET", path: "/api/message/q", params: neturl.Values{"type": {"queue"}, "clientId": {"idler"}, "readTimeout": {"0"}}}.do(t, s)
	if a.code != 204 {
		t.Fatalf("GET: %d %q", a.code, a.body)
	}
	// The client's consumer held a message sent meanwhile; closing the
	// idle client gives it back to the queue.
	if a := (restCall{method: "POST", path: "/api/message/q", params: neturl.Values{"type": {"queue"}, "body": {"held"}}}).do(t, s); a.code != 200 {
		t.Fatal(a.code)
	}
	eventually(t, func() error {
		if n := e.ConnectionsByProtocol()["http"]; n != 0 {
			return fmt.Errorf("%d http connections, want the idle client closed", n)
		}
		return nil
	})
	if st := e.Stats(message.QueueDest("q")); st.ConsumerCount != 0 || st.QueueSize != 1 || st.InFlightCount != 0 {
		t.Errorf("after the idle client closed: %+v, want no consumer and the message back on the queue", st)
	}
}
