package jolokia_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"wharf/engine"
	"wharf/engine/message"
	"wharf/protocols/http/jolokia"
	"wharf/storage/memory"
)

// env is an engine behind the Jolokia handler on a real loopback server,
// mounted at /api/jolokia/ as the HTTP server mounts it. Requests that
// carry the header X-Test-Admin: 1 may write.
type env struct {
	t     *testing.T
	e     *engine.Engine
	url   string        // the agent's base URL, ".../api/jolokia"
	clock *atomic.Int64 // ms, the engine's and the handler's clock
}

// with is the env for subtest t (failures go to t).
func (v *env) with(t *testing.T) *env {
	w := *v
	w.t = t
	return &w
}

func startEnv(t *testing.T, mod func(*jolokia.Options)) *env {
	t.Helper()
	return startEnvEngine(t, nil, mod)
}

// startEnvEngine is startEnv with changed engine options: advisories are
// off unless engMod turns them on, so that the broker totals count only
// what a test sends.
func startEnvEngine(t *testing.T, engMod func(*engine.Options), mod func(*jolokia.Options)) *env {
	t.Helper()
	v := &env{t: t, clock: new(atomic.Int64)}
	v.clock.Store(1_700_000_000_000)
	now := func() time.Time { return time.UnixMilli(v.clock.Load()) }
	eo := engine.Options{
		BrokerName: "localhost", Shards: 2, Store: memory.New(), DisableAdvisories: true, Now: now, TickInterval: time.Hour,
		Limits: engine.Limits{MemoryLimit: 64 << 20, StoreLimit: 1 << 30, TempLimit: 512 << 20},
	}
	if engMod != nil {
		engMod(&eo)
	}
	e, err := engine.New(eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	v.e = e
	opts := jolokia.Options{
		CanWrite: func(r *http.Request) bool { return r.Header.Get("X-Test-Admin") == "1" },
		Now:      now,
		Started:  now(),
	}
	if mod != nil {
		mod(&opts)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/jolokia/", jolokia.New(e, opts))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	v.url = srv.URL + "/api/jolokia"
	return v
}

func (v *env) conn(clientID string) *engine.Conn {
	v.t.Helper()
	c, err := v.e.Connect(engine.Credentials{ClientID: clientID, Protocol: "openwire", Username: "alice",
		Remote: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}})
	if err != nil {
		v.t.Fatal(err)
	}
	v.t.Cleanup(func() { c.Close() })
	return c
}

type waiter struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error
}

func (w *waiter) Complete(_ uint64, err error) {
	w.mu.Lock()
	if err != nil {
		w.err = err
	}
	w.mu.Unlock()
	w.wg.Done()
}

// send sends text messages through a real engine connection and waits
// until they are stored.
func (v *env) send(c *engine.Conn, d message.Destination, bodies ...string) []string {
	v.t.Helper()
	w := &waiter{}
	var ids []string
	for i, b := range bodies {
		m := &message.Message{ID: c.NextMessageID(), Destination: d, Body: []byte(b), BodyType: message.TextBody, Persistent: true, Priority: 4}
		m.Props.Set("n", message.IntValue(int32(i)))
		w.wg.Add(1)
		if err := c.Send(m, "", w, uint64(i)); err != nil {
			v.t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	w.wg.Wait()
	if w.err != nil {
		v.t.Fatal(w.err)
	}
	return ids
}

type sink chan engine.Delivery

func (s sink) Deliver(d engine.Delivery) { s <- d }

func (s sink) recv(t *testing.T) engine.Delivery {
	t.Helper()
	select {
	case d := <-s:
		return d
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery within 5s")
		return engine.Delivery{}
	}
}

// response is a decoded Jolokia response object.
type response map[string]any

func (r response) status() int {
	n, _ := r["status"].(json.Number)
	i, _ := n.Int64()
	return int(i)
}

func (r response) value() any { return r["value"] }

// do sends one HTTP request and decodes the answer.
func (v *env) do(method, path string, body []byte, admin bool) (int, any) {
	v.t.Helper()
	return v.doWith(method, path, body, admin, nil)
}

// doWith is do with more request headers.
func (v *env) doWith(method, path string, body []byte, admin bool, hdr http.Header) (int, any) {
	v.t.Helper()
	req, err := http.NewRequest(method, v.url+path, bytes.NewReader(body))
	if err != nil {
		v.t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	if admin {
		req.Header.Set("X-Test-Admin", "1")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		v.t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		v.t.Fatalf("%s %s: answer is not JSON (%v): %s", method, path, err, raw)
	}
	return resp.StatusCode, out
}

func (v *env) get(path string) response {
	v.t.Helper()
	code, out := v.do(http.MethodGet, path, nil, false)
	if code != http.StatusOK {
		v.t.Fatalf("GET %s: HTTP %d: %v", path, code, out)
	}
	return response(out.(map[string]any))
}

func (v *env) post(body string, admin bool) (int, any) {
	v.t.Helper()
	return v.do(http.MethodPost, "/", []byte(body), admin)
}

// ok asserts a successful response and returns its value.
func (v *env) ok(r response) any {
	v.t.Helper()
	if r.status() != 200 {
		v.t.Fatalf("status %d, want 200: %v", r.status(), r)
	}
	return r.value()
}

func num(t *testing.T, x any) int64 {
	t.Helper()
	n, ok := x.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", x, x)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

func queueBean(name string) string {
	return "org.apache.activemq:type=Broker,brokerName=localhost,destinationType=Queue,destinationName=" + name
}

func canonicalQueue(name string) string {
	return "org.apache.activemq:brokerName=localhost,destinationName=" + name + ",destinationType=Queue,type=Broker"
}
