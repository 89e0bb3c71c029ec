package http_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"wharf/engine"
	"wharf/engine/broker"
	"wharf/engine/brokertest"
	"wharf/engine/config"
	"wharf/engine/message"
	httpserver "wharf/protocols/http"
	"wharf/security"
	"wharf/storage/memory"
)

// startServer starts a web server on 127.0.0.1 port 0, closed by
// t.Cleanup.
func startServer(t testing.TB, o httpserver.Options) *httpserver.Server {
	t.Helper()
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.RealmName == "" {
		o.RealmName = "ActiveMQRealm"
	}
	s, err := httpserver.Listen(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

// startBroker starts a broker on the memory store with no connectors.
func startBroker(t testing.TB) *engine.Engine {
	t.Helper()
	f := broker.Factories{Stores: map[string]broker.StoreFactory{
		config.KindMemory: func(context.Context, *config.Config, *slog.Logger) (engine.Store, error) { return memory.New(), nil },
	}}
	return brokertest.Start(t, f).Engine()
}

// request makes one request and returns the status and the body.
func request(t testing.TB, c *http.Client, method, url, user, password string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, password)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func url(s *httpserver.Server, path string) string { return "http://" + s.Addr().String() + path }

func TestHTTPHealthAndReadiness(t *testing.T) {
	s := startServer(t, httpserver.Options{})
	check := func(path string, want int) {
		t.Helper()
		if code, _, body := request(t, http.DefaultClient, "GET", url(s, path), "", ""); code != want {
			t.Errorf("GET %s: %d %q, want %d", path, code, body, want)
		}
	}
	check("/healthz", 200)
	check("/readyz", 503) // the broker has not started
	s.Ready(startBroker(t))
	check("/healthz", 200)
	check("/readyz", 200)
	s.NotReady() // stopping
	check("/readyz", 503)
	check("/healthz", 200)
}

// realm is a jetty-realm.properties with a writer, a reader and a user
// without a role.
const realm = `# user: password, roles
admin: s3cret, admin
reader: r3ad, user
norole: n0ne
hashed: MD5:5f4dcc3b5aa765d61d8327deb882cf99, user
`

func TestHTTPAuthRealm(t *testing.T) {
	r, err := security.ParseRealm([]byte(realm))
	if err != nil {
		t.Fatal(err)
	}
	// The API stands in for the Jolokia handler: reads for every login,
	// writes behind RequireAdmin.
	api := http.NewServeMux()
	api.HandleFunc("GET /api/jolokia/read", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "read by "+httpserver.LoginFrom(r).User)
	})
	api.Handle("POST /api/jolokia/exec", httpserver.RequireAdmin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "done by "+httpserver.LoginFrom(r).User)
	})))
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: r.Authenticate,
		Jolokia: func(*engine.Engine, func()) http.Handler { return api }})

	code, _, _ := request(t, http.DefaultClient, "GET", url(s, "/api/jolokia/read"), "reader", "r3ad")
	if code != 503 {
		t.Errorf("API before the broker is ready: %d, want 503", code)
	}
	s.Ready(startBroker(t))

	cases := []struct {
		name, method, path, user, password string
		want                               int
		body                               string
	}{
		{"no credentials", "GET", "/metrics", "", "", 401, ""},
		{"wrong password", "GET", "/metrics", "admin", "admin", 401, ""},
		{"unknown user", "GET", "/metrics", "nobody", "s3cret", 401, ""},
		{"user without a role", "GET", "/metrics", "norole", "n0ne", 403, ""},
		{"reader reads metrics", "GET", "/metrics", "reader", "r3ad", 200, "wharf_ready 1"},
		{"MD5 password", "GET", "/metrics", "hashed", "password", 200, "wharf_ready 1"},
		{"health without login", "GET", "/healthz", "", "", 200, "ok"},
		{"readiness without login", "GET", "/readyz", "", "", 200, "ready"},
		{"API needs a login", "GET", "/api/jolokia/read", "", "", 401, ""},
		{"reader reads the API", "GET", "/api/jolokia/read", "reader", "r3ad", 200, "read by reader"},
		{"reader may not write", "POST", "/api/jolokia/exec", "reader", "r3ad", 403, "admin role"},
		{"admin writes", "POST", "/api/jolokia/exec", "admin", "s3cret", 200, "done by admin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, h, body := request(t, http.DefaultClient, tc.method, url(s, tc.path), tc.user, tc.password)
			if code != tc.want || !strings.Contains(body, tc.body) {
				t.Fatalf("%s %s as %q: %d %q, want %d with %q", tc.method, tc.path, tc.user, code, body, tc.want, tc.body)
			}
			if code == 401 && h.Get("WWW-Authenticate") != `Basic realm="ActiveMQRealm", charset="UTF-8"` {
				t.Errorf("challenge %q, want Basic with realm ActiveMQRealm", h.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestHTTPRequireAdmin(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "written") })
	s := startServer(t, httpserver.Options{Authenticate: true,
		Auth: func(user, password string) ([]string, error) {
			if password != "pw" {
				return nil, errors.New("bad password")
			}
			return map[string][]string{"amq": {"admins"}, "ops": {"users", "admin"}, "dev": {"users"}}[user], nil
		},
		Jolokia: func(*engine.Engine, func()) http.Handler { return httpserver.RequireAdmin(ok) }})
	s.Ready(startBroker(t))
	for user, want := range map[string]int{"amq": 200, "ops": 200, "dev": 403} {
		if code, _, body := request(t, http.DefaultClient, "POST", url(s, "/api/jolokia/"), user, "pw"); code != want {
			t.Errorf("write as %s: %d %q, want %d", user, code, body, want)
		}
	}
}

func TestHTTPRefusesOpenNonLoopback(t *testing.T) {
	defaultRealm, err := security.ParseRealm([]byte("admin: admin, admin\nuser: user, user\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		o    httpserver.Options
		want error
		says string
	}{
		{"login off", httpserver.Options{Authenticate: false}, httpserver.ErrNoLogin, "needs a login"},
		{"no users", httpserver.Options{Authenticate: true}, httpserver.ErrNoUsers, "needs users"},
		{"admin/admin", httpserver.Options{Authenticate: true, Auth: defaultRealm.Authenticate}, httpserver.ErrDefaultAdmin, "admin password of jetty-realm.properties changed"},
	} {
		for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0"} {
			t.Run(tc.name+" "+addr, func(t *testing.T) {
				o := tc.o
				o.Addr = addr
				s, err := httpserver.Listen(o)
				if err == nil {
					s.Close()
					t.Fatalf("Listen on %s served", addr)
				}
				if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), addr) {
					t.Fatalf("error %q, want %v saying %q and naming %s", err, tc.want, tc.says, addr)
				}
			})
		}
		// The same settings serve on loopback.
		o := tc.o
		o.Addr = "127.0.0.1:0"
		startServer(t, o)
	}
	// The HTTPS listener is checked too.
	o := httpserver.Options{Addr: "127.0.0.1:0", Authenticate: true, Auth: defaultRealm.Authenticate, TLS: &tls.Config{}, TLSAddr: "0.0.0.0:0"}
	if _, err := httpserver.Listen(o); !errors.Is(err, httpserver.ErrDefaultAdmin) {
		t.Errorf("HTTPS on 0.0.0.0 with admin/admin: %v, want ErrDefaultAdmin", err)
	}
}

func TestHTTPSKeystore(t *testing.T) {
	tc, err := security.ServerTLS(&config.SSLContext{
		KeyStore: "../../security/testdata/tls/broker.ks", KeyStorePassword: "password", KeyStoreType: "jks", Protocol: "TLS",
	}, config.TLSOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := security.ParseRealm([]byte(realm))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, httpserver.Options{TLS: tc, TLSAddr: "127.0.0.1:0", Authenticate: true, Auth: r.Authenticate})
	s.Ready(startBroker(t))
	ca, err := os.ReadFile("../../security/testdata/tls/ca.pem")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("ca.pem: no certificate")
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + s.TLSAddr().String()
	if code, _, body := request(t, c, "GET", base+"/readyz", "", ""); code != 200 {
		t.Errorf("HTTPS /readyz: %d %q", code, body)
	}
	if code, _, _ := request(t, c, "GET", base+"/metrics", "admin", "wrong"); code != 401 {
		t.Errorf("HTTPS /metrics with a wrong password: %d, want 401", code)
	}
	if code, _, body := request(t, c, "GET", base+"/metrics", "admin", "s3cret"); code != 200 || !strings.Contains(body, "wharf_ready 1") {
		t.Errorf("HTTPS /metrics as admin: %d", code)
	}
	// A client that does not trust the CA is refused the handshake.
	_, err = (&http.Client{}).Get(base + "/healthz")
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("untrusting client: %v, want an unknown authority error", err)
	}
	// The plain listener still serves beside it.
	if code, _, _ := request(t, http.DefaultClient, "GET", url(s, "/healthz"), "", ""); code != 200 {
		t.Errorf("plain /healthz beside HTTPS: %d", code)
	}
}

// logBuffer is a slog handler's destination that tests read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sendTo sends n persistent text messages to d and waits until the engine
// has taken each.
func sendTo(t testing.TB, c *engine.Conn, d message.Destination, n int) {
	t.Helper()
	for i := range n {
		done := make(done, 1)
		m := &message.Message{Destination: d, Body: []byte("m"), BodyType: message.TextBody, Persistent: true, Priority: 4}
		if err := c.Send(m, "", done, uint64(i)); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("send to %s: %v", d, err)
		}
	}
}

// done is an engine.Completion that hands the result to a channel.
type done chan error

func (d done) Complete(_ uint64, err error) { d <- err }

// fakeEndpoint stands in for a ws.Server: it answers "upgraded at PATH"
// and counts its closes.
type fakeEndpoint struct {
	path   string
	closes *sync.Map // path -> number of closes
}

func (f fakeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "upgraded at "+f.path)
}

func (f fakeEndpoint) Close() error {
	n, _ := f.closes.LoadOrStore(f.path, new(int))
	*n.(*int)++
	return nil
}

// TestServerWebSocketEndpoints: the WebSocket paths answer 503 until the
// broker is ready, are then served by the endpoints built for its engine,
// without the web server's login (the protocol logs in), and NotReady
// closes each endpoint once and makes the paths 503 again; a path that
// is not /name is refused at Listen.
func TestServerWebSocketEndpoints(t *testing.T) {
	r, err := security.ParseRealm([]byte("admin: s3cret, admin\n"))
	if err != nil {
		t.Fatal(err)
	}
	closes := &sync.Map{}
	var built []*engine.Engine
	var mu sync.Mutex
	ep := func(path string) func(*engine.Engine) (httpserver.Endpoint, error) {
		return func(e *engine.Engine) (httpserver.Endpoint, error) {
			mu.Lock()
			built = append(built, e)
			mu.Unlock()
			return fakeEndpoint{path, closes}, nil
		}
	}
	s := startServer(t, httpserver.Options{Authenticate: true, Auth: r.Authenticate,
		WebSocket: map[string]func(*engine.Engine) (httpserver.Endpoint, error){"/stomp": ep("/stomp"), "/mqtt": ep("/mqtt")}})
	for _, p := range []string{"/stomp", "/mqtt"} {
		if code, _, _ := request(t, http.DefaultClient, "GET", url(s, p), "", ""); code != 503 {
			t.Errorf("%s before the broker is ready: %d, want 503", p, code)
		}
	}
	e := startBroker(t)
	s.Ready(e)
	if len(built) != 2 || built[0] != e || built[1] != e {
		t.Errorf("endpoints built for %v, want 2 for the ready engine", built)
	}
	for _, p := range []string{"/stomp", "/mqtt"} {
		if code, _, body := request(t, http.DefaultClient, "GET", url(s, p), "", ""); code != 200 || body != "upgraded at "+p {
			t.Errorf("%s when ready, without a login: %d %q, want the endpoint's answer", p, code, body)
		}
	}
	if code, _, _ := request(t, http.DefaultClient, "GET", url(s, "/stomp/x"), "admin", "s3cret"); code != 404 {
		t.Errorf("/stomp/x: %d, want 404 (the path is exact)", code)
	}
	s.NotReady()
	for _, p := range []string{"/stomp", "/mqtt"} {
		n, _ := closes.Load(p)
		if n == nil || *n.(*int) != 1 {
			t.Errorf("%s closed %v times by NotReady, want 1", p, n)
		}
		if code, _, _ := request(t, http.DefaultClient, "GET", url(s, p), "", ""); code != 503 {
			t.Errorf("%s after NotReady: %d, want 503", p, code)
		}
	}

	_, err = httpserver.Listen(httpserver.Options{Addr: "127.0.0.1:0", WebSocket: map[string]func(*engine.Engine) (httpserver.Endpoint, error){"stomp": ep("stomp")}})
	if err == nil || !strings.Contains(err.Error(), `WebSocket path "stomp": want /name`) {
		t.Errorf("path without /: %v", err)
	}
}

// TestServerStopRequest: the stop function the Jolokia builder gets asks
// for the stop only once the request that called it has been handled:
// during the request StopRequested is still open, after the answer it is
// closed.
func TestServerStopRequest(t *testing.T) {
	var s *httpserver.Server
	during := make(chan bool, 1)
	api := func(_ *engine.Engine, stop func()) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			stop()
			select {
			case <-s.StopRequested():
				during <- true
			default:
				during <- false
			}
			io.WriteString(w, "stopping")
		})
	}
	s = startServer(t, httpserver.Options{Jolokia: api})
	s.Ready(startBroker(t))
	select {
	case <-s.StopRequested():
		t.Fatal("StopRequested closed before any stop")
	default:
	}
	if code, _, body := request(t, http.DefaultClient, "POST", url(s, "/api/jolokia/"), "", ""); code != 200 || body != "stopping" {
		t.Fatalf("stop request: %d %q", code, body)
	}
	if <-during {
		t.Error("StopRequested closed while the stop's request was being handled")
	}
	select {
	case <-s.StopRequested():
	default:
		t.Error("StopRequested still open after the stop's request was answered")
	}
}
